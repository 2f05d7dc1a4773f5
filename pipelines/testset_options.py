"""The LSDSCC test-set stage's options and entry point (light: no Beam, JVM or gensim here).

- :func:`add_testset_arguments` adds the retrieval / Doc2Vec / sampling flags (the
  ``multiref lsdscc build`` and ``multiref lsdscc testset`` commands call it on their parsers);
  :class:`TestsetOptions` is the same flags as Beam pipeline options, created on first use;
- :func:`configs_from_args` turns parsed flags into the stage's frozen configs;
- the stage itself, and its entry point ``run_testset_stage``, are in
  :mod:`pipelines.lsdscc_testset`.
"""

from __future__ import annotations

import argparse

from pipelines.lsdscc_options import add_once


def add_testset_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the test-set options (each recorded in the ``test_candidates`` card)."""
    g = parser.add_argument_group("test set (ALGORITHMS.md section 2)")
    add = lambda *names, **kw: add_once(g, *names, **kw)  # noqa: E731
    add("--similarity", choices=("tfidf", "bm25"), default="tfidf",
        help="Lucene similarity for finding similar queries: tfidf = ClassicSimilarity, the paper's (default: %(default)s)")
    add("--bm25-k1", type=float, default=1.2, help="BM25 k1, with --similarity bm25 (default: %(default)s)")
    add("--bm25-b", type=float, default=0.75, help="BM25 b, with --similarity bm25 (default: %(default)s)")
    add("--retrieval-depth", type=int, default=100, help="similar queries retrieved per query (default: %(default)s)")
    add("--lucene-analyzer", choices=("english", "plain", "whitespace"), default="english",
        help="english: Porter stemming + stop words (Anserini's default); plain: neither; "
        "whitespace: split on spaces (default: %(default)s)")
    add("--lucene-threads", type=int, default=2, help="threads for Lucene indexing (default: %(default)s)")
    add("--jvm-heap", default="2g", help="maximum JVM heap, e.g. 2g or 512m (default: %(default)s)")
    add("--doc2vec-vector-size", type=int, default=100, help="(default: %(default)s)")
    add("--doc2vec-epochs", type=int, default=10, help="(default: %(default)s)")
    add("--doc2vec-window", type=int, default=5, help="(default: %(default)s)")
    add("--doc2vec-min-count", type=int, default=2, help="(default: %(default)s)")
    add("--doc2vec-dm", type=int, choices=(0, 1), default=1, help="1: PV-DM, 0: PV-DBOW (default: %(default)s)")
    add("--doc2vec-workers", type=int, default=1,
        help="training threads; 1 is reproducible, more is faster but not bit-reproducible (default: %(default)s)")
    add("--doc2vec-threshold", type=float, default=0.9,
        help="keep similar queries with Doc2Vec cosine >= this (default: %(default)s)")
    add("--per-stratum", type=int, default=100, help="queries sampled per response-number stratum (default: %(default)s)")
    add("--max-stratum-share", type=float, default=0.5,
        help="at most this share of a stratum's queries is sampled, so a small corpus keeps training "
        "rows (default: %(default)s)")
    add("--strata-bounds", type=int, nargs=2, metavar=("LOW", "HIGH"), default=[3, 5],
        help="strata: fewer than LOW, LOW to HIGH, more than HIGH responses (default: 3 5)")
    add("--references-per-query", type=int, default=15, help="candidate references per query (default: %(default)s)")
    add("--testset-seed", type=int, default=1, help="seed of the sampling and of Doc2Vec (default: %(default)s)")
    add("--drop-short", action="store_true",
        help="drop queries that cannot reach --references-per-query candidates (default: keep and count them)")


def configs_from_args(args) -> tuple:
    """``(RetrievalConfig, Doc2VecConfig, SamplingConfig)`` from parsed arguments."""
    from lsdscc.testset.doc2vec import Doc2VecConfig
    from lsdscc.testset.retrieval import RetrievalConfig
    from lsdscc.testset.assemble import SamplingConfig

    retrieval = RetrievalConfig(similarity=args.similarity, k1=args.bm25_k1, b=args.bm25_b, depth=args.retrieval_depth,
                                analyzer=args.lucene_analyzer, threads=args.lucene_threads, heap=args.jvm_heap)
    d2v = Doc2VecConfig(vector_size=args.doc2vec_vector_size, epochs=args.doc2vec_epochs, window=args.doc2vec_window,
                        min_count=args.doc2vec_min_count, workers=args.doc2vec_workers, dm=args.doc2vec_dm,
                        seed=args.testset_seed, threshold=args.doc2vec_threshold)
    sampling = SamplingConfig(per_stratum=args.per_stratum, bounds=tuple(args.strata_bounds),
                              references=args.references_per_query, seed=args.testset_seed, drop_short=args.drop_short,
                              max_share=args.max_stratum_share)
    return retrieval, d2v, sampling


def _add_stage_arguments(parser) -> None:
    add_once(parser, "--dataset", default=None, metavar="FOLDER", help="corpus folder written by `multiref lsdscc build`")
    add_testset_arguments(parser)


def __getattr__(name):
    if name == "TestsetOptions":
        from multiref.output.beam_utils import options_class

        return options_class(__name__, name, _add_stage_arguments,
                             "The test-set stage's flags (and ``--dataset``) as Beam pipeline options.")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
