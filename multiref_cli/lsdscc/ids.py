"""``multiref lsdscc export-ids`` and ``multiref lsdscc rehydrate``: ids-only releases (lsdscc/corpus/ids.py).

Standard library only at module level. Examples::

    multiref lsdscc export-ids --dataset out/lsdscc --output lsdscc-ids.json
    multiref lsdscc rehydrate --ids lsdscc-ids.json --input dumps/ --output out/lsdscc-rebuilt
"""

from __future__ import annotations

import argparse
import dataclasses
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


class _FileOptions(argparse.ArgumentParser):
    """A parser of the options an ids file records: its mistakes are the file's (exit 1, naming
    it), never usage text."""

    def __init__(self):
        super().__init__(prog="multiref lsdscc rehydrate", add_help=False)

    def error(self, message):
        from multiref.util.errors import UserError

        raise UserError(message)  # named by _release_options


def _release_options(path: str, release: dict):
    """The corpus flags' values recorded in the ids file ``path``, checked as a build checks
    them (number of shards, option values) before any work; errors name the file."""
    from lsdscc.corpus import ids
    from multiref.util.errors import UserError
    from pipelines.lsdscc.options import add_corpus_arguments, config_from_values, parse_num_shards

    parser = _FileOptions()
    add_corpus_arguments(parser)
    try:
        values = parser.parse_args(ids.build_argv(release["options"]))
        parse_num_shards(values.num_shards)
        config_from_values(values)
    except UserError as exc:
        raise UserError(f"{path}: options: {exc}") from None
    return values


def handle_rehydrate(args) -> int:
    """Rebuild with the release's options from the user's dumps; publish the folder whole."""
    from lsdscc.corpus import ids
    from multiref.output import publish, published
    from pipelines.lsdscc.corpus import finalize, run_parsed
    from multiref.util.options import from_args
    from pipelines.lsdscc.options import corpus_from_args

    config = from_args(ids.RehydrateConfig, args)
    release = ids.read_ids(config.ids)
    job, corpus = corpus_from_args(_release_options(config.ids, release))
    target = config.output
    with publish.publishing(target, command="multiref lsdscc rehydrate", inputs=[*config.input, config.ids]) as pub:
        job = dataclasses.replace(job, input=config.input, output=pub.staging)
        summary = run_parsed(job, corpus, [], quiet=True)
        if summary["stats"]["options"] != release["options"]:
            raise RuntimeError("rehydrate: the rebuilt options differ from the release's")  # our bug: exit 3
        missing, removed = ids.compare(release, pub.staging)
        if removed:
            finalize(pub.staging, quiet=True)  # the card and plots again (stats keep the build's counts)
        splits = published.check_dataset(pub.staging)
    for note in ids.digest_notes(release, summary["stats"].get("files", [])):
        print(f"warning: {note}", file=sys.stderr)
    for rel, lost in missing:
        print(f"warning: {rel}: {len(lost):,} row(s) of the release missing from your dumps: {', '.join(lost)}",
              file=sys.stderr)
    for rel, n in removed:
        what = "a file the release does not hold, removed" if n < 0 else f"{n:,} row(s) not in the release, removed"
        print(f"note: {rel}: {what}", file=sys.stderr)
    parts = "; ".join(f"{c}: " + ", ".join(f"{s} {n:,}" for s, n in sorted(v.items())) for c, v in sorted(splits.items()))
    print(f"LSDSCC dataset rebuilt from the ids in {config.ids} into {target} ({parts})")
    return 0
