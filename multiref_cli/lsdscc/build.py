"""``multiref lsdscc build``: the LSDSCC corpus (pipelines/lsdscc/corpus.py), then its test set.

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
    from pipelines.lsdscc.options import add_corpus_arguments
    from multiref.util.options import add_arguments
    from pipelines.lsdscc.testset_options import BuildStages, add_testset_arguments

    parser.epilog = "Any other --flag is passed to Apache Beam (e.g. --runner DataflowRunner --project P ...)."
    add_corpus_arguments(parser)
    add_arguments(parser, BuildStages)
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


def format_warnings(counts: dict) -> list:
    """The warnings printed on stderr after a build: input files cut short, undecodable or unsupported."""
    lines = []
    truncated = counts.get("rejected-truncated-file", 0)
    if truncated:
        lines.append(f"warning: {truncated} input file(s) were truncated; see rejected/rejected.jsonl")
    corrupt = counts.get("rejected-corrupt-file", 0)
    if corrupt:
        lines.append(f"warning: {corrupt} input file(s) could not be decoded to the end (corrupt data; the lines "
                     "before it were kept); see rejected/rejected.jsonl")
    unsupported = counts.get("rejected-unsupported-compression", 0)
    if unsupported:
        lines.append(f"warning: {unsupported} input file(s) are compressed in a format the reader does not decode "
                     "(xz, bzip2, 7z, zip) and were not read; see rejected/rejected.jsonl for the command that "
                     "converts each")
    return lines


def handle(args) -> int:
    """Parse, build and publish (:func:`pipelines.lsdscc.corpus.build`), print the summary."""
    from multiref.util.errors import UserError
    from pipelines.lsdscc.corpus import build
    from pipelines.lsdscc.options import corpus_from_args
    from multiref.util.options import from_args
    from pipelines.lsdscc.testset_options import BuildStages, testset_job

    beam_args = list(args.beam_args or [])
    if beam_args and not beam_args[0].startswith("-"):
        raise UserError(f"unexpected argument {beam_args[0]!r} (Beam options start with --)")
    job, corpus = corpus_from_args(args)  # the configs, built once from the parsed flags
    testset = None if from_args(BuildStages, args).skip_testset else testset_job(args, beam_args)
    summary = build(job, corpus, beam_args, testset=testset, command="multiref lsdscc build")
    if summary.get("dry_run"):
        print("dry run: the pipeline was built, nothing was run")
        return 0
    print(format_counts(summary))
    for line in format_warnings(summary["counts"]):
        print(line, file=sys.stderr)
    if summary.get("testset"):
        print(format_testset_counts(summary["testset"]))
    return 0
