"""``multiref lsdscc testset`` and ``multiref lsdscc annotate export|import`` (ALGORITHMS.md s.2).

Only the standard library at module level: the stage (Beam, the JVM, gensim) is imported by
the handlers.

- the options live with the pipeline, in :mod:`pipelines.testset_options`
  (``add_testset_arguments``), and so does the stage (``pipelines.lsdscc_testset.run_testset_stage``);
- :func:`register_testset` and :func:`register_annotate` add the subcommands.
"""

from __future__ import annotations

import argparse
import json
import sys

from multiref_cli import group
from pipelines.testset_options import add_testset_arguments, configs_from_args  # noqa: F401  (re-exported)


def check_corpus(folder: str) -> None:
    """UserError if the single_turn corpus in ``folder`` has no pairs.

    Checked from the parquet footers before the JVM or Doc2Vec start. A corpus whose
    test set was built before keeps its full copy under artifacts/corpus-full.
    """
    import glob
    import os

    from multiref.util.errors import UserError

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
        from multiref_cli import one_line

        raise UserError(f"{folder}: unreadable parquet file in single_turn/ ({one_line(exc)})") from None
    if rows == 0:
        raise UserError(f"{folder}: the single_turn corpus has no pairs, so there is nothing to build a test set "
                        "from (build the corpus from more input)")


def run_testset_stage(dataset_folder: str, args) -> dict:
    """:func:`pipelines.lsdscc_testset.run_testset_stage` (imported here, when used: it needs Beam)."""
    from pipelines.lsdscc_testset import run_testset_stage as run_stage

    check_corpus(dataset_folder)
    return run_stage(dataset_folder, args)


# ---- publish: the files the stage rewrites in place are copied into the staging folder (the
# rest is hard-linked from the dataset); its cache is reused from the dataset or a cut run.
TESTSET_REWRITES = ("README.md", "dataset_meta.json", "test_candidates/*", "artifacts/state.json")
TESTSET_CACHE = ("artifacts/lucene-index-" + "?" * 16, "artifacts/doc2vec-" + "?" * 16)


def _existing_local_dataset(folder: str) -> None:
    import os

    from multiref.util.errors import UserError

    if "://" in folder:
        raise UserError(f"the test-set stage needs a local corpus folder, not {folder}: copy it locally first")
    if not os.path.isdir(folder):
        raise UserError(f"{folder} has no 'single_turn' config: no such folder; build the corpus first with "
                        "`multiref lsdscc build`")


def _testset(args) -> int:
    from multiref.output import publish, published

    from lsdscc.annotation import roundtrip as annotation

    _existing_local_dataset(args.dataset)
    with publish.publishing(args.dataset, command="multiref lsdscc testset", seed=True, copy=TESTSET_REWRITES) as pub:
        pub.bring(TESTSET_CACHE)
        counts = run_testset_stage(pub.staging, args)
        published.check_dataset(pub.staging, required=[("single_turn", "train")])
        pub.notes.append(annotation.carry_over(pub.previous, pub.staging, pub.target))
    counts.pop("seconds", None)
    print(json.dumps(counts, indent=2, sort_keys=True))
    return 0


def register_testset(parser: argparse.ArgumentParser) -> None:
    """``multiref lsdscc testset --dataset FOLDER [options]``."""
    parser.add_argument("--dataset", required=True, metavar="FOLDER", help="corpus folder written by `multiref lsdscc build`")
    add_testset_arguments(parser)
    parser.set_defaults(func=_testset)


def _export(args) -> int:
    from lsdscc.annotation import roundtrip as annotation

    n = annotation.export(args.dataset, args.output, overlap_threshold=args.overlap_threshold)
    print(f"wrote {n} rows to {args.output} and {annotation.jsonl_twin(args.output)}", file=sys.stderr)
    return 0


def _import(args) -> int:
    import os

    from multiref.output import publish, published

    from lsdscc.annotation import roundtrip as annotation
    from multiref.util.errors import UserError

    if os.path.exists(args.output) and not os.path.isdir(args.output):
        raise UserError(f"--output {args.output}: exists and is a file; expected a folder for test.group.json")

    _existing_local_dataset(args.dataset)
    with publish.publishing(args.dataset, command="multiref lsdscc annotate import", seed=True,
                            copy=("README.md", "dataset_meta.json")) as pub:
        output = args.output
        inside = os.path.relpath(os.path.realpath(output), pub.target)  # pub.target is resolved too
        if not inside.startswith(os.pardir):  # --output inside the dataset: published with it
            output = os.path.normpath(os.path.join(pub.staging, inside))
        counts, agreed = annotation.import_round(pub.staging, args.annotations, output, tie=args.tie,
                                                 partial=args.partial)
        published.check_dataset(pub.staging)
    print(json.dumps({**counts, "agreement": agreed}, indent=2, sort_keys=True))
    return 0


def register_annotate(parser: argparse.ArgumentParser) -> None:
    """``multiref lsdscc annotate export|import|serve|browse``."""
    from multiref_cli import lsdscc_annotate

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
    im.add_argument("--partial", action="store_true",
                    help="accept unfinished annotator files: import only the queries every annotator has finished "
                         "(the others are counted as queries_unfinished; default: an unlabelled row is an error)")
    im.set_defaults(func=_import)
    lsdscc_annotate.register(sub)
