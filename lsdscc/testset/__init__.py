"""The LSDSCC multi-reference test set: retrieval (JVM, Lucene), Doc2Vec, assembly."""
