"""The LSDSCC jobs: the corpus (read, threads, clean, vocabulary, dedup, write), the test-set stage
over it, the leak removal and publishing, and their options."""
