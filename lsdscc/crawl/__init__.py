"""The Reddit crawler: crawling threads and the files it writes."""
