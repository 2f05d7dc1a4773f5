"""Time the full DailyDialog build (multiref + dailydialog_pp) on the real releases, against a
plain single-process baseline run in the same process.

Usage: python benchmarks/bench_dailydialog.py [DATA_DIR] [--no-baseline]
DATA_DIR (default $MULTIREF_DATA) holds dailydialog/, multiref-dailydialog/multireftest.json and
dailydialog-plusplus/ (13,118 dialogues). Without real data, times the bundled sample instead.
Target: under 60 seconds on a 2-core machine.

Baseline: the job's own pure steps (dailydialog_pp.steps: parse -> multiref references;
dedup -> contexts -> released responses -> split -> random negatives) in one plain Python loop,
with no Beam and no parquet. It must produce the pipeline's row counts per (config, split) (asserted);
the ratio pipeline/baseline is the cost of Beam (FnApiRunner) and of writing parquet.
Measured on the real release (2 shared cores): pipeline 15.3 s, baseline 4.6 s, ratio 3.3x.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _source_args(root: str | None) -> list[str]:
    if not root:
        return []
    return ["--dailydialog", os.path.join(root, "dailydialog"),
            "--multiref-references", os.path.join(root, "multiref-dailydialog", "multireftest.json"),
            "--ddpp", os.path.join(root, "dailydialog-plusplus")]


def baseline(argv: list[str]) -> dict:
    """The build of ``pipelines.dailydialog.job.run(argv)`` as a plain loop over the job's own
    steps (dailydialog_pp.steps); returns ``{config: {split: rows}}`` (rows are built in
    memory, not written)."""
    import argparse

    from dailydialog_pp import steps
    from dailydialog_pp.negatives import build_pool, pool_entries
    from dailydialog_pp.schema import DDPP, MULTIREF
    from pipelines.dailydialog.job import options_from_args, read_sources
    from pipelines.dailydialog.options import add_build_arguments

    parser = argparse.ArgumentParser()
    add_build_arguments(parser)
    args, _ = parser.parse_known_args(argv)
    options = options_from_args(args)
    if options.corruptions:
        raise SystemExit("bench_dailydialog baseline: --corruptions is not covered")
    source = read_sources(args)

    def kept(outcomes):
        return [row for outcome in outcomes for row in outcome.rows]

    dialogues = kept(map(steps.parse_dialogue_line, source["dailydialog"]()))
    out: dict = defaultdict(list)

    # MultiRef-DD (docs/algorithms.md#4-multiref-dd)
    released = defaultdict(list)
    for key, record in kept(map(steps.parse_multiref_line, source["multiref"]() if source["multiref"] else [])):
        released[key].append(record)
    first = options.multiref_first_reference == "released"
    for d in dialogues:
        if steps.in_splits(d, options.multiref_splits):
            key, _ = steps.index_key(d)
            group = (key, {"dialogue": [d], "released": released.get(key, [])})
            for row in steps.join_references(group, options.text, source["multiref"] is not None, first).rows:
                out[(MULTIREF, row["split"])].append(row)

    # DD++ (section 5)
    blocks = defaultdict(list)
    for key, d in (steps.duplicate_block(d, options.near_duplicates) for d in dialogues):
        blocks[key].append(d)
    unique = kept(steps.dedup_group(item, options.dedup, options.near_duplicates) for item in blocks.items())
    contexts = defaultdict(list)
    for key, row in kept(steps.dialogue_contexts(d, options.chunks, options.text) for d in unique):
        contexts[key].append(row)
    ddpp_released = defaultdict(list)
    for key, record in kept(map(steps.parse_ddpp_line, source["ddpp"]() if source["ddpp"] else [])):
        ddpp_released[key].append(record)
    rows = kept(steps.join_responses((key, {"context": group, "released": ddpp_released.get(key, [])}))
                for key, group in contexts.items())
    rows = kept(steps.add_split(row, options.splits) for row in rows)
    pool = build_pool(e for row in rows for e in pool_entries(row, options.negatives))
    for row in kept(steps.add_negatives(row, pool, options.negatives) for row in rows):
        out[(DDPP, row["split"])].append(row)
    counts: dict = {MULTIREF: {}, DDPP: {}}
    for (config, split), split_rows in out.items():
        split_rows.sort(key=steps.row_sort_key)  # as the parquet writer orders them
        counts[config][split] = len(split_rows)
    return counts


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    run_baseline = "--no-baseline" not in argv
    argv = [a for a in argv if a != "--no-baseline"]
    root = argv[0] if argv else os.environ.get("MULTIREF_DATA")
    from pipelines.dailydialog.job import run

    what = root or "bundled sample"
    with tempfile.TemporaryDirectory() as tmp:
        args = ["--output", os.path.join(tmp, "out")] + _source_args(root)
        start = time.perf_counter()
        stats = run(args)
        seconds = time.perf_counter() - start
    dialogues = sum(v for k, v in stats["counters"].items() if k.startswith("dailydialog/dialogues-"))
    contexts = sum(stats["configs"]["multiref"].values()) + sum(stats["configs"]["dailydialog_pp"].values())
    print(f"bench_dailydialog: {what}: {dialogues:,} dialogues -> {contexts:,} rows in {seconds:.1f} s "
          f"({dialogues / seconds:,.0f} dialogues/s); target < 60 s")
    if not run_baseline:
        return 0
    start = time.perf_counter()
    counts = baseline(["--output", "unused"] + _source_args(root))
    base_seconds = time.perf_counter() - start
    expected = {c: {s: n for s, n in stats["configs"][c].items() if n} for c in ("multiref", "dailydialog_pp")}
    assert counts == expected, f"baseline row counts {counts} != pipeline {expected}"
    print(f"bench_dailydialog: baseline (plain loop over dailydialog_pp functions, no Beam, no parquet): "
          f"{sum(sum(v.values()) for v in counts.values()):,} rows in {base_seconds:.2f} s (row counts agree)")
    print(f"bench_dailydialog: pipeline {seconds:.1f} s vs baseline {base_seconds:.2f} s: "
          f"ratio {seconds / base_seconds:.2f}x (Beam + parquet overhead factor)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
