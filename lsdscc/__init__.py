"""LSDSCC (Xu et al. 2018): the r/movies conversational corpus and its multi-reference test set.

Four subpackages over the shared core (``multiref``); only ``annotation`` imports another one
(``testset``, for the candidates it labels):

- ``corpus``: dump files (``sources``), schema normalization (``records``), steps 1-4
  (``cleaning``, ``emoticons``), steps 5-6 (``vocab``), pairs and conversations (``threads``),
  parquet, stats, plots and card (``outputs``), ``CorpusConfig`` (``config``), the bundled
  sample (``sample_gen``, ``sample/``) and the ``lsdscc`` score tokenizer (``tokenizer``);
  the Beam pipeline in ``pipelines/lsdscc/corpus.py`` wraps them;
- ``crawl``: the praw crawler (``crawler``) and the files it writes (``files``);
- ``testset``: Lucene retrieval (``jvm``, ``retrieval``), Doc2Vec re-ranking (``doc2vec``) and
  the test set's assembly (``assemble``); ``pipelines/lsdscc/testset.py`` drives them;
- ``annotation``: the CSV round trip (``roundtrip``), the annotation web app (``server``,
  ``session``, ``browse``, ``web/``).

Nothing heavy is imported here.
"""
