"""``multiref lsdscc export-ids`` and ``multiref lsdscc rehydrate``: ids-only releases (lsdscc/corpus/ids.py).

Standard library only at module level. Examples::

    multiref lsdscc export-ids --dataset out/lsdscc --output lsdscc-ids.json
    multiref lsdscc rehydrate --ids lsdscc-ids.json --input dumps/ --output out/lsdscc-rebuilt
"""

from __future__ import annotations

import argparse
import sys


def register_export(parser: argparse.ArgumentParser) -> None:
    from lsdscc.corpus.ids import ExportIdsConfig
    from multiref.util.options import add_arguments

    add_arguments(parser, ExportIdsConfig)
    parser.set_defaults(func=handle_export)


def register_rehydrate(parser: argparse.ArgumentParser) -> None:
    from lsdscc.corpus.ids import RehydrateConfig
    from multiref.util.options import add_arguments

    add_arguments(parser, RehydrateConfig)
    parser.set_defaults(func=handle_rehydrate)


def handle_export(args) -> int:
    """Write the ids file (:func:`lsdscc.corpus.ids.write_ids`), print what it holds."""
    from lsdscc.corpus import ids
    from multiref.util.options import from_args

    config = from_args(ids.ExportIdsConfig, args)
    release = ids.write_ids(config)
    rows = sum(len(f["rows"]) for f in release["files"].values())
    print(f"ids of {rows:,} rows in {len(release['files'])} parquet file(s) written to {config.output} (no text)")
    return 0


def handle_rehydrate(args) -> int:
    """The config from the parsed flags, one call (:func:`pipelines.lsdscc.rehydrate.rehydrate`),
    its warnings and notes on stderr, the rows per config and split on stdout."""
    from lsdscc.corpus.ids import RehydrateConfig
    from multiref.util.options import from_args
    from pipelines.lsdscc.rehydrate import rehydrate

    outcome = rehydrate(from_args(RehydrateConfig, args))
    for line in outcome.warnings:
        print(f"warning: {line}", file=sys.stderr)
    for line in outcome.notes:
        print(f"note: {line}", file=sys.stderr)
    parts = "; ".join(f"{c}: " + ", ".join(f"{s} {n:,}" for s, n in sorted(v.items()))
                      for c, v in sorted(outcome.splits.items()))
    print(f"LSDSCC dataset rebuilt from the ids in {outcome.ids} into {outcome.output} ({parts})")
    return 0
