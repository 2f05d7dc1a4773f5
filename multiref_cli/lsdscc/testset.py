"""``multiref lsdscc testset`` and ``multiref lsdscc annotate export|import`` (docs/algorithms.md#2-lsdscc-test-set).

Only the standard library at module level: the stage (Beam, the JVM, gensim) is imported by
the handlers.

- the options live with the pipeline, in :mod:`pipelines.lsdscc.testset_options`
  (``add_testset_arguments``); the stage is ``pipelines.lsdscc.testset.run_testset_stage`` and the
  publishing flows (``testset``, ``annotate import``) are in :mod:`pipelines.lsdscc.publish`;
- :func:`register_testset` and :func:`register_annotate` add the subcommands.
"""

from __future__ import annotations

import argparse
import json
import sys

from multiref_cli.common import group
from pipelines.lsdscc.testset_options import add_testset_arguments, configs_from_args, testset_job  # noqa: F401  (re-exported)


def _testset(args) -> int:
    """Parse, build the test set and publish (:func:`pipelines.lsdscc.publish.publish_testset`), print its counts."""
    from pipelines.lsdscc.publish import publish_testset

    print(json.dumps(publish_testset(args.dataset, testset_job(args)), indent=2, sort_keys=True))
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
    """Merge the annotations and publish (:func:`pipelines.lsdscc.publish.publish_annotations`), print the counts."""
    from pipelines.lsdscc.publish import publish_annotations

    counts = publish_annotations(args.dataset, args.annotations, args.output, tie=args.tie, partial=args.partial)
    print(json.dumps(counts, indent=2, sort_keys=True))
    return 0


def register_annotate(parser: argparse.ArgumentParser) -> None:
    """``multiref lsdscc annotate export|import|serve|browse``."""
    from multiref_cli.lsdscc import annotate as lsdscc_annotate

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
