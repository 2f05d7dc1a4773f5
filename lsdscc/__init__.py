"""LSDSCC (Xu et al. 2018): the r/movies conversational corpus and its multi-reference test set.

Corpus modules (pure functions; the Beam pipeline in ``pipelines/lsdscc_corpus.py`` wraps them):
``sources`` (dump files), ``records`` (schema normalization), ``cleaning`` and ``emoticons``
(steps 1-4), ``vocab`` (steps 5-6), ``threads`` (pairs and conversations), ``outputs``
(parquet, stats, plots, card), ``config`` (CorpusConfig), ``sample_gen`` (the bundled sample).
Nothing heavy is imported here.
"""
