"""The LSDSCC corpus: dump sources, records, cleaning, vocabulary, threads, outputs."""
