"""``multiref dailydialog ...``: build the multi-reference DailyDialog and DailyDialog++ datasets.

``multiref dailydialog build --output FOLDER [--dailydialog DIR] [--multiref-references FILE]
[--ddpp DIR] [options] [-- BEAM_OPTIONS]``. With no input it runs on the bundled sample
(dailydialog_pp/sample). Beam options (``--runner``, ``--direct_num_workers``, ...) go after
``--``. Only the standard library is imported here; the pipeline is imported by the handler.
"""

from __future__ import annotations

import argparse

from multiref.cli import group


def add_build_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``build`` (declared with the pipeline, in :mod:`pipelines.dailydialog_options`)
    and the Beam pass-through."""
    from pipelines.dailydialog_options import add_build_arguments as add_pipeline_arguments

    add_pipeline_arguments(parser, output_required=True)
    parser.add_argument("beam_args", nargs=argparse.REMAINDER,
                        help="Apache Beam options: any option this command does not know, or everything after -- "
                        "(e.g. --runner DataflowRunner --project P)")


def check_inputs(args) -> None:
    """Check the given releases by shape before the pipeline starts (UserError naming the file)."""
    from dailydialog_pp import readers

    if args.dailydialog:
        readers.check_dailydialog_shape(args.dailydialog)
    if args.multiref_references:
        readers.check_multiref_shape(args.multiref_references)
    if args.ddpp:
        readers.check_ddpp_shape(args.ddpp)


def _build(args) -> int:
    from pipelines.dailydialog import build

    from multiref.io import require_writable

    check_inputs(args)
    require_writable(args.output, "--output")
    beam_args = list(args.beam_args or [])
    if beam_args and beam_args[0] == "--":
        beam_args = beam_args[1:]
    # ---- publish: build into a staging folder beside --output, swap it in whole (multiref.publish);
    # the job's summary is held back and printed once the folder is published, naming it
    import contextlib
    import io
    import os

    from multiref import progress, publish, published

    target = os.path.abspath(args.output)
    printed = io.StringIO()
    with publish.publishing(target, command="multiref dailydialog build") as pub:
        args.output = pub.staging
        try:
            with contextlib.redirect_stdout(printed), progress.step("dailydialog build"):
                stats = build(args, beam_args)
        finally:
            args.output = target
        if "configs" in stats:
            published.check_dataset(pub.staging)
        else:  # a remote runner: nothing to publish here
            pub.abandon()
    print(printed.getvalue().replace(pub.staging, target), end="")
    return 0


def register(parser: argparse.ArgumentParser) -> None:
    sub = group(parser)
    p = sub.add_parser("build", help="build the multiref and dailydialog_pp configs with Apache Beam",
                       description="Build the multi-reference DailyDialog (config multiref) and DailyDialog++ "
                                   "(config dailydialog_pp) datasets with Apache Beam.")
    add_build_arguments(p)
    p.set_defaults(func=_build)
