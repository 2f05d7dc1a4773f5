"""Beam plumbing the dataset packages and the jobs share: the deterministic parquet writer and the
spill files of large groupings (the pure metric library, multiref/metrics, imports none of it)."""
