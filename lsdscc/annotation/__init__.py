"""Annotation of the test set: CSV round trip, the web app (server, session, browse)."""
