"""``multiref augment``'s options (light: no JVM or gensim here).

:func:`add_augment_arguments` adds the flags (the command's parser calls it);
:func:`configs_from_args` turns parsed flags into the frozen configs the driver
(:mod:`pipelines.augment`) takes: Lucene's and Doc2Vec's are the LSDSCC test-set stage's own
(:class:`lsdscc.testset.retrieval.RetrievalConfig`, :class:`lsdscc.testset.doc2vec.Doc2VecConfig`).
"""

from __future__ import annotations

import argparse


def add_augment_arguments(parser: argparse.ArgumentParser) -> None:
    """The inputs, the output and the method's options (each recorded in the card)."""
    io = parser.add_argument_group("inputs and output (dataset folders with dataset_meta.json)")
    for name, what in (("corpus", "the training corpus the candidates come from"),
                       ("test", "the test set to grow")):
        io.add_argument(f"--{name}", required=True, metavar="FOLDER", help=f"dataset folder of {what}")
        io.add_argument(f"--{name}-config", required=True, metavar="NAME",
                        help="its config: a context (or query) column and a response column"
                             + (" (or a references list)" if name == "test" else ""))
        io.add_argument(f"--{name}-split", required=True, metavar="NAME", help="its split")
    io.add_argument("--output", required=True, metavar="FOLDER",
                    help="dataset folder to write (test_candidates, test_auto); replaced whole")
    g = parser.add_argument_group("method (LSDSCC's test set, docs/algorithms.md section 2)")
    g.add_argument("--top-k", type=int, default=100, metavar="K",
                   help="similar corpus contexts retrieved per test context (default: %(default)s, the paper's)")
    g.add_argument("--threshold", type=float, default=0.9, metavar="T",
                   help="keep retrieved contexts with Doc2Vec cosine >= T (default: %(default)s, the paper's)")
    g.add_argument("--max-candidates", type=int, default=15, metavar="M",
                   help="candidate references per test context at most (default: %(default)s, the paper's)")
    g.add_argument("--seed", type=int, default=1, metavar="S", help="seed of Doc2Vec (default: %(default)s)")
    g.add_argument("--similarity", choices=("tfidf", "bm25"), default="tfidf",
                   help="Lucene similarity: tfidf = ClassicSimilarity, the paper's (default: %(default)s)")
    g.add_argument("--bm25-k1", type=float, default=1.2, help="BM25 k1, with --similarity bm25 (default: %(default)s)")
    g.add_argument("--bm25-b", type=float, default=0.75, help="BM25 b, with --similarity bm25 (default: %(default)s)")
    g.add_argument("--context-turns", type=int, default=1, metavar="N",
                   help="match the last N turns of a context (0: all; default: %(default)s, the answered turn, "
                        "as LSDSCC's single-turn queries)")
    g.add_argument("--lucene-analyzer", choices=("english", "plain", "whitespace"), default="english",
                   help="english: Porter stemming + stop words (Anserini's default); plain: neither; "
                        "whitespace: split on spaces (default: %(default)s)")
    g.add_argument("--jvm-heap", default="2g", help="maximum JVM heap, e.g. 2g or 512m (default: %(default)s)")
    g.add_argument("--doc2vec-epochs", type=int, default=10, help="(default: %(default)s)")
    g.add_argument("--doc2vec-vector-size", type=int, default=100, help="(default: %(default)s)")
    g.add_argument("--doc2vec-workers", type=int, default=1,
                   help="training threads; 1 is reproducible, more is faster but not bit-reproducible "
                        "(default: %(default)s)")


def configs_from_args(args) -> tuple:
    """``(AugmentConfig, RetrievalConfig, Doc2VecConfig)`` from parsed arguments (UserError
    for a bad value)."""
    from lsdscc.testset.augment import AugmentConfig
    from lsdscc.testset.doc2vec import Doc2VecConfig
    from lsdscc.testset.retrieval import RetrievalConfig
    from multiref.util.errors import UserError

    if args.top_k < 1:
        raise UserError(f"--top-k must be at least 1, got {args.top_k}")
    retrieval = RetrievalConfig(similarity=args.similarity, k1=args.bm25_k1, b=args.bm25_b, depth=args.top_k,
                                analyzer=args.lucene_analyzer, heap=args.jvm_heap)
    d2v = Doc2VecConfig(vector_size=args.doc2vec_vector_size, epochs=args.doc2vec_epochs,
                        workers=args.doc2vec_workers, seed=args.seed, threshold=args.threshold)
    return AugmentConfig(max_candidates=args.max_candidates, context_turns=args.context_turns), retrieval, d2v
