"""``multiref lsdscc testset`` and ``multiref lsdscc annotate export|import`` (ALGORITHMS.md s.2).

Only the standard library at module level: the stage (Beam, the JVM, gensim) is imported by
the handlers.

- :func:`add_testset_arguments` adds the retrieval / Doc2Vec / sampling options (used by
  both ``build`` and ``testset``);
- :func:`run_testset_stage` runs the stage on a corpus folder and returns its counts;
- :func:`register_testset` and :func:`register_annotate` add the subcommands.
"""

from __future__ import annotations

import argparse
import json
import sys

from multiref.cli import group


def add_testset_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the test-set options (each recorded in the ``test_candidates`` card)."""
    g = parser.add_argument_group("test set (ALGORITHMS.md section 2)")
    g.add_argument("--similarity", choices=("tfidf", "bm25"), default="tfidf",
                   help="Lucene similarity for finding similar queries: tfidf = ClassicSimilarity, the paper's (default: %(default)s)")
    g.add_argument("--bm25-k1", type=float, default=1.2, help="BM25 k1, with --similarity bm25 (default: %(default)s)")
    g.add_argument("--bm25-b", type=float, default=0.75, help="BM25 b, with --similarity bm25 (default: %(default)s)")
    g.add_argument("--retrieval-depth", type=int, default=100, help="similar queries retrieved per query (default: %(default)s)")
    g.add_argument("--lucene-analyzer", choices=("english", "plain", "whitespace"), default="english",
                   help="english: Porter stemming + stop words (Anserini's default); plain: neither; "
                        "whitespace: split on spaces (default: %(default)s)")
    g.add_argument("--lucene-threads", type=int, default=2, help="threads for Lucene indexing (default: %(default)s)")
    g.add_argument("--jvm-heap", default="2g", help="maximum JVM heap, e.g. 2g or 512m (default: %(default)s)")
    g.add_argument("--doc2vec-vector-size", type=int, default=100, help="(default: %(default)s)")
    g.add_argument("--doc2vec-epochs", type=int, default=10, help="(default: %(default)s)")
    g.add_argument("--doc2vec-window", type=int, default=5, help="(default: %(default)s)")
    g.add_argument("--doc2vec-min-count", type=int, default=2, help="(default: %(default)s)")
    g.add_argument("--doc2vec-dm", type=int, choices=(0, 1), default=1, help="1: PV-DM, 0: PV-DBOW (default: %(default)s)")
    g.add_argument("--doc2vec-workers", type=int, default=1,
                   help="training threads; 1 is reproducible, more is faster but not bit-reproducible (default: %(default)s)")
    g.add_argument("--doc2vec-threshold", type=float, default=0.9,
                   help="keep similar queries with Doc2Vec cosine >= this (default: %(default)s)")
    g.add_argument("--per-stratum", type=int, default=100, help="queries sampled per response-number stratum (default: %(default)s)")
    g.add_argument("--strata-bounds", type=int, nargs=2, metavar=("LOW", "HIGH"), default=[3, 5],
                   help="strata: fewer than LOW, LOW to HIGH, more than HIGH responses (default: 3 5)")
    g.add_argument("--references-per-query", type=int, default=15, help="candidate references per query (default: %(default)s)")
    g.add_argument("--testset-seed", type=int, default=1, help="seed of the sampling and of Doc2Vec (default: %(default)s)")
    g.add_argument("--drop-short", action="store_true",
                   help="drop queries that cannot reach --references-per-query candidates (default: keep and count them)")


def configs_from_args(args) -> tuple:
    """``(RetrievalConfig, Doc2VecConfig, SamplingConfig)`` from parsed arguments."""
    from lsdscc.doc2vec import Doc2VecConfig
    from lsdscc.retrieval import RetrievalConfig
    from lsdscc.testset import SamplingConfig

    retrieval = RetrievalConfig(similarity=args.similarity, k1=args.bm25_k1, b=args.bm25_b, depth=args.retrieval_depth,
                                analyzer=args.lucene_analyzer, threads=args.lucene_threads, heap=args.jvm_heap)
    d2v = Doc2VecConfig(vector_size=args.doc2vec_vector_size, epochs=args.doc2vec_epochs, window=args.doc2vec_window,
                        min_count=args.doc2vec_min_count, workers=args.doc2vec_workers, dm=args.doc2vec_dm,
                        seed=args.testset_seed, threshold=args.doc2vec_threshold)
    sampling = SamplingConfig(per_stratum=args.per_stratum, bounds=tuple(args.strata_bounds),
                              references=args.references_per_query, seed=args.testset_seed, drop_short=args.drop_short)
    return retrieval, d2v, sampling


def check_corpus(folder: str) -> None:
    """UserError if the single_turn corpus in ``folder`` has no pairs.

    Checked from the parquet footers before the JVM or Doc2Vec start. A corpus whose
    test set was built before keeps its full copy under artifacts/corpus-full.
    """
    import glob
    import os

    from multiref.errors import UserError

    files = []
    for base in (os.path.join(folder, "artifacts", "corpus-full"), folder):
        files = sorted(glob.glob(os.path.join(base, "single_turn", "*.parquet")))
        if files:
            break
    if not files:
        return  # the stage names what is missing
    import pyarrow.parquet as pq

    try:
        rows = sum(pq.read_metadata(name).num_rows for name in files)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a damaged file
        from multiref.cli import one_line

        raise UserError(f"{folder}: unreadable parquet file in single_turn/ ({one_line(exc)})") from None
    if rows == 0:
        raise UserError(f"{folder}: the single_turn corpus has no pairs, so there is nothing to build a test set "
                        "from (build the corpus from more input)")


def run_testset_stage(dataset_folder: str, args) -> dict:
    """Run the test-set stage on a corpus folder; return its counts (also in the card)."""
    from multiref.beam_utils import is_local
    from multiref.errors import UserError

    from pipelines.lsdscc_testset import run_stage

    if "://" in dataset_folder:
        raise UserError(f"the test-set stage needs a local corpus folder, not {dataset_folder}: copy it locally and run "
                        "`multiref lsdscc testset --dataset FOLDER` (or build with --skip-testset)")
    retrieval, d2v, sampling = configs_from_args(args)
    check_corpus(dataset_folder)
    beam_args = list(getattr(args, "beam_args", None) or [])
    if not is_local(beam_args):
        print("[lsdscc testset] the test-set stage runs locally (the JVM and Doc2Vec run on this machine); "
              "ignoring the remote runner options", file=sys.stderr)
        beam_args = []
    counts = run_stage(dataset_folder, retrieval, d2v, sampling, beam_args=beam_args)
    counts.pop("beam_counters", None)
    return counts


def _testset(args) -> int:
    counts = run_testset_stage(args.dataset, args)
    counts.pop("seconds", None)
    print(json.dumps(counts, indent=2, sort_keys=True))
    return 0


def register_testset(parser: argparse.ArgumentParser) -> None:
    """``multiref lsdscc testset --dataset FOLDER [options]``."""
    parser.add_argument("--dataset", required=True, metavar="FOLDER", help="corpus folder written by `multiref lsdscc build`")
    add_testset_arguments(parser)
    parser.set_defaults(func=_testset)


def _export(args) -> int:
    from lsdscc import annotation

    n = annotation.export(args.dataset, args.output, overlap_threshold=args.overlap_threshold)
    print(f"wrote {n} rows to {args.output} and {annotation.jsonl_twin(args.output)}", file=sys.stderr)
    return 0


def _import(args) -> int:
    import os

    from lsdscc import annotation
    from multiref.errors import UserError

    if os.path.exists(args.output) and not os.path.isdir(args.output):
        raise UserError(f"--output {args.output}: exists and is a file; expected a folder for test.group.json")

    counts = annotation.import_annotations(args.dataset, args.annotations, args.output, tie=args.tie)
    print(json.dumps(counts, indent=2, sort_keys=True))
    return 0


def register_annotate(parser: argparse.ArgumentParser) -> None:
    """``multiref lsdscc annotate export|import``."""
    sub = group(parser)
    ex = sub.add_parser("export", help="write the candidates as a CSV (and JSON lines) for annotators",
                        description="Write one row per query-reference with empty `relevant` and `group` columns "
                                    "and a `proposed_group` from word overlap.")
    ex.add_argument("--dataset", required=True, metavar="FOLDER", help="folder with the test_candidates config")
    ex.add_argument("--output", required=True, metavar="FILE.csv", help="CSV to write (FILE.jsonl is written too)")
    ex.add_argument("--overlap-threshold", type=float, default=0.2,
                    help="Jaccard overlap of non-stop-word sets that links two references into one proposed group "
                         "(default: %(default)s)")
    ex.set_defaults(func=_export)
    im = sub.add_parser("import", help="merge annotators' CSV files into the grouped test set",
                        description="Majority vote on relevance, group reconciliation; writes test.group.json "
                                    "(public LSDSCC format) and the test_grouped config.")
    im.add_argument("--dataset", required=True, metavar="FOLDER", help="folder with the test_candidates config")
    im.add_argument("--annotations", required=True, nargs="+", metavar="FILE.csv", help="one CSV per annotator")
    im.add_argument("--output", required=True, metavar="FOLDER", help="where test.group.json and test.queries.txt go")
    im.add_argument("--tie", choices=("relevant", "irrelevant"), default="irrelevant",
                    help="relevance when the annotators' votes tie (default: %(default)s)")
    im.set_defaults(func=_import)
