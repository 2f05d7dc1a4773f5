"""``multiref lsdscc testset`` and ``multiref lsdscc annotate export|import`` (docs/algorithms.md#2-lsdscc-test-set).

Only the standard library at module level: the stage (Beam, the JVM, gensim) is imported by
the handlers.

- the test set's options live with the pipeline, in :mod:`pipelines.lsdscc.testset_options`
  (``add_testset_arguments``, ``StageInput``), the annotation commands' in
  :mod:`lsdscc.annotation.config`; each handler builds its config once; the stage is ``pipelines.lsdscc.testset.run_testset_stage`` and the
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
    from multiref.util.options import from_args
    from pipelines.lsdscc.publish import publish_testset
    from pipelines.lsdscc.testset_options import StageInput

    print(json.dumps(publish_testset(from_args(StageInput, args).dataset, testset_job(args)), indent=2, sort_keys=True))
    return 0


def register_testset(parser: argparse.ArgumentParser) -> None:
    """``multiref lsdscc testset --dataset FOLDER [options]``."""
    from multiref.util.options import add_arguments
    from pipelines.lsdscc.testset_options import StageInput

    add_arguments(parser, StageInput, required=("--dataset",))
    add_testset_arguments(parser)
    parser.set_defaults(func=_testset)


def _export(args) -> int:
    from lsdscc.annotation import roundtrip as annotation
    from lsdscc.annotation.config import ExportConfig
    from multiref.util.options import from_args

    config = from_args(ExportConfig, args)
    n = annotation.export(config.source.dataset, config.output, overlap_threshold=config.proposal.overlap_threshold)
    print(f"wrote {n} rows to {config.output} and {annotation.jsonl_twin(config.output)}", file=sys.stderr)
    return 0


def _import(args) -> int:
    """Merge the annotations and publish (:func:`pipelines.lsdscc.publish.publish_annotations`), print the counts."""
    from lsdscc.annotation.config import ImportConfig
    from multiref.util.options import from_args
    from pipelines.lsdscc.publish import publish_annotations

    config = from_args(ImportConfig, args)
    counts = publish_annotations(config.source.dataset, list(config.annotations), config.output, tie=config.tie,
                                 partial=config.partial)
    print(json.dumps(counts, indent=2, sort_keys=True))
    return 0


def register_annotate(parser: argparse.ArgumentParser) -> None:
    """``multiref lsdscc annotate export|import|serve|browse`` (options: :mod:`lsdscc.annotation.config`)."""
    from lsdscc.annotation.config import ExportConfig, ImportConfig
    from multiref.util.options import add_arguments
    from multiref_cli.lsdscc import annotate as lsdscc_annotate

    sub = group(parser)
    ex = sub.add_parser("export", help="write the candidates as a CSV (and JSON lines) for annotators",
                        description="Write one row per query-reference with empty `relevant` and `group` columns "
                                    "and a `proposed_group` from word overlap.")
    add_arguments(ex, ExportConfig)
    ex.set_defaults(func=_export)
    im = sub.add_parser("import", help="merge annotators' CSV files into the grouped test set",
                        description="Majority vote on relevance, group reconciliation; writes test.group.json "
                                    "(public LSDSCC format) and the test_grouped config.")
    add_arguments(im, ImportConfig)
    im.set_defaults(func=_import)
    lsdscc_annotate.register(sub)
