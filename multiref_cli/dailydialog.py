"""``multiref dailydialog ...``: build the multi-reference DailyDialog and DailyDialog++ datasets.

``multiref dailydialog build --output FOLDER [--dailydialog DIR] [--multiref-references FILE]
[--ddpp DIR] [options] [-- BEAM_OPTIONS]``. With no input it runs on the bundled sample
(dailydialog_pp/sample). Beam options (``--runner``, ``--direct_num_workers``, ...) go after
``--``. Only the standard library is imported here; the pipeline is imported by the handler,
which parses, builds the job's configs once (:func:`pipelines.dailydialog.options.job_from_args`), makes one call (:func:`pipelines.dailydialog.job.build_published`) and prints its summary.
"""

from __future__ import annotations

import argparse

from multiref_cli.common import group


def add_build_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``build`` (declared with the pipeline, in :mod:`pipelines.dailydialog.options`)
    and the Beam pass-through."""
    from pipelines.dailydialog.options import add_build_arguments as add_pipeline_arguments

    add_pipeline_arguments(parser, output_required=True)
    parser.add_argument("beam_args", nargs=argparse.REMAINDER,
                        help="Apache Beam options: any option this command does not know, or everything after -- "
                        "(e.g. --runner DataflowRunner --project P)")


def format_summary(summary: dict) -> str:
    """The build's summary as printed: rows per config and split, dead letters by reason,
    the folder written."""
    if summary.get("dry_run"):
        return "dry run: the pipeline was built, nothing was run"
    lines = [f"{config}: " + ", ".join(f"{s} {n:,}" for s, n in sorted(splits.items()))
             for config, splits in sorted(summary["configs"].items(), key=lambda kv: (kv[0] != "multiref", kv[0]))]
    letters = summary.get("dead_letters")
    if letters:
        lines.append("dead letters (rejected/): " + ", ".join(f"{k} {v:,}" for k, v in sorted(letters.items())))
    lines.append(f"wrote {summary['output']}")
    return "\n".join(lines)


def _build(args) -> int:
    from pipelines.dailydialog.job import build_published
    from pipelines.dailydialog.options import job_from_args

    from multiref.util import progress

    beam_args = list(args.beam_args or [])
    if beam_args and beam_args[0] == "--":
        beam_args = beam_args[1:]
    with progress.step("dailydialog build"):
        summary = build_published(*job_from_args(args), beam_args)
    print(format_summary(summary))
    return 0


def register(parser: argparse.ArgumentParser) -> None:
    sub = group(parser)
    p = sub.add_parser("build", help="build the multiref and dailydialog_pp configs with Apache Beam",
                       description="Build the multi-reference DailyDialog (config multiref) and DailyDialog++ "
                                   "(config dailydialog_pp) datasets with Apache Beam.")
    add_build_arguments(p)
    p.set_defaults(func=_build)
