"""``multiref lsdscc build``: the LSDSCC corpus (pipelines/lsdscc_corpus.py), then its test set.

Standard library only at module level (``multiref --help`` stays fast). Unknown flags are
Beam's (``--runner``, ``--direct_num_workers``, ``--project``, ``--region``,
``--temp_location``, ``--setup_file``, ...) and pass straight through.

Examples::

    multiref lsdscc build                                  # the bundled sample -> out/lsdscc
    multiref lsdscc build --input 'dumps/R[CS]_2017-*.zst' --output out/lsdscc-2017 \\
        --direct_num_workers 2 --direct_running_mode multi_processing
    multiref lsdscc build --input 'gs://B/reddit/R[CS]_2017-*.zst' --output gs://B/lsdscc \\
        --skip-testset --runner DataflowRunner --project P --region us-central1 \\
        --temp_location gs://B/tmp --setup_file ./setup.py
"""

from __future__ import annotations

import argparse
import sys


def register(parser: argparse.ArgumentParser) -> None:
    """Add the build options and the test-set stage's."""
    from pipelines.lsdscc_options import add_corpus_arguments
    from pipelines.testset_options import add_testset_arguments

    parser.epilog = "Any other --flag is passed to Apache Beam (e.g. --runner DataflowRunner --project P ...)."
    add_corpus_arguments(parser)
    parser.add_argument("--skip-testset", action="store_true", help="build only the corpus, not the test set")
    add_testset_arguments(parser)
    parser.add_argument("beam_args", nargs="*", metavar="-- BEAM_ARGS",
                        help="Apache Beam options: any option this command does not know, or everything after -- (e.g. --runner DataflowRunner --project P)")
    parser.set_defaults(func=handle)


def format_counts(summary: dict) -> str:
    """The final counts as printed at the end of a build."""
    splits = summary.get("splits", {})
    counts = summary.get("counts", {})
    stats = summary.get("stats", {})
    lines = [f"LSDSCC corpus written to {summary['output']}"]
    for config in sorted(splits):
        parts = ", ".join(f"{s} {n:,}" for s, n in sorted(splits[config].items()))
        lines.append(f"  {config}: {parts}")
    read = counts.get("records-read", 0)
    rejected = sum(v for k, v in counts.items() if k.startswith("rejected-"))
    lines.append(f"  records read: {read:,}; rejected: {rejected:,} (see rejected/rejected.jsonl)")
    drops = {k: v for k, v in sorted(counts.items()) if k.startswith(("dropped-", "rejected-", "multi-turn-dropped-"))}
    if drops:
        lines.append("  dropped: " + ", ".join(f"{k} {v:,}" for k, v in drops.items()))
    strata = stats.get("responses_per_query", {}).get("strata")
    if strata:
        lines.append(f"  queries by response number: <3 {strata['lt3']:,}, 3-5 {strata['3to5']:,}, >5 {strata['gt5']:,}")
    return "\n".join(lines)


def format_testset_counts(counts: dict) -> str:
    """The test-set stage's counts as one line (its timings as the total only)."""
    counts = dict(counts)
    seconds = counts.pop("seconds", {}) or {}

    def value(v):
        return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v).lower()

    line = "test set: " + ", ".join(f"{k} {value(v)}" for k, v in sorted(counts.items()))
    total = seconds.get("total") if isinstance(seconds, dict) else None
    return line + (f" ({total:.1f} s)" if total is not None else "")


def _dry_run(beam_args) -> bool:
    from apache_beam.options.pipeline_options import PipelineOptions, TestOptions

    return bool(PipelineOptions(list(beam_args)).view_as(TestOptions).dry_run)


def handle(args) -> int:
    """Build into a staging folder beside ``--output``; publish it whole (multiref.output.publish)."""
    from pipelines.lsdscc_corpus import run_parsed

    from multiref.util.errors import UserError

    beam_args = list(args.beam_args or [])
    if beam_args and not beam_args[0].startswith("-"):
        raise UserError(f"unexpected argument {beam_args[0]!r} (Beam options start with --)")
    # ---- publish: everything below writes into pub.staging; the target changes only at the swap
    from multiref.output import publish, published

    from lsdscc.annotation import roundtrip as annotation

    target = args.output
    if "://" in target and not args.skip_testset:
        raise UserError(f"the test-set stage needs a local corpus folder, not {target}: build with --skip-testset, "
                        "copy the folder locally and run `multiref lsdscc testset --dataset FOLDER`")
    if "://" in target and _dry_run(beam_args):  # builds the job graph only: no lock, nothing written
        run_parsed(args, beam_args)
        print("dry run: the pipeline was built, nothing was run")
        return 0
    testset_counts = None
    from lsdscc.corpus.sources import default_inputs

    inputs = list(args.input or default_inputs())
    with publish.publishing(target, command="multiref lsdscc build", inputs=inputs) as pub:
        args.output = pub.staging
        try:
            summary = run_parsed(args, beam_args)
        finally:
            args.output = target
        if summary.get("dry_run"):
            pub.abandon()
            print("dry run: the pipeline was built, nothing was run")
            return 0
        if "://" not in target:
            published.check_dataset(pub.staging, required=[("single_turn", "train")])
            if not args.skip_testset:
                from multiref_cli.lsdscc_testset import TESTSET_CACHE, run_testset_stage

                pub.bring(TESTSET_CACHE)
                from multiref.util import progress

                if not progress.quiet():
                    print("[lsdscc] building the multi-reference test set", file=sys.stderr, flush=True)
                testset_counts = run_testset_stage(pub.staging, args)
            summary["splits"] = published.check_dataset(pub.staging, required=[("single_turn", "train")])
            pub.notes.append(annotation.carry_over(pub.previous, pub.staging, pub.target))
    # ---- published
    print(format_counts(dict(summary, output=target)))
    truncated = summary["counts"].get("rejected-truncated-file", 0)
    if truncated:
        print(f"warning: {truncated} input file(s) were truncated; see rejected/rejected.jsonl", file=sys.stderr)
    corrupt = summary["counts"].get("rejected-corrupt-file", 0)
    if corrupt:
        print(f"warning: {corrupt} input file(s) could not be decoded to the end (corrupt data; the lines before "
              "it were kept); see rejected/rejected.jsonl", file=sys.stderr)
    if testset_counts:
        print(format_testset_counts(testset_counts))
    return 0
