"""Time the full DailyDialog build (multiref + dailydialog_pp) on the real releases, against a
plain single-process baseline run in the same process.

Usage: python benchmarks/bench_dailydialog.py [DATA_DIR] [--no-baseline]
DATA_DIR (default $MULTIREF_DATA) holds dailydialog/, multiref-dailydialog/multireftest.json and
dailydialog-plusplus/ (13,118 dialogues). Without real data, times the bundled sample instead.
Target: under 60 seconds on a 2-core machine.

Baseline: the same pure functions of dailydialog_pp (readers -> parse -> multiref contexts;
dedup -> chunk -> released join -> split -> random negatives) in one plain Python loop, with no
Beam and no parquet. It must produce the pipeline's row counts per (config, split) (asserted);
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
    """The build of ``pipelines.dailydialog.run(argv)`` as a plain loop; returns
    ``{config: {split: rows}}`` (rows are built in memory, not written)."""
    import argparse

    from pipelines.dailydialog_options import add_build_arguments
    from dailydialog_pp.contexts import (cluster_duplicates, ddpp_contexts, multiref_contexts, multiref_matches,
                                         near_duplicate_block, pick_released)
    from dailydialog_pp.negatives import build_pool, pool_entries, sample_negatives
    from dailydialog_pp.normalize import collapse_spaces, dialogue_key
    from dailydialog_pp.readers import RejectedRecord, parse_ddpp, parse_dialogue, parse_multiref
    from dailydialog_pp.schema import DDPP, MULTIREF
    from dailydialog_pp.splits import assign_split
    from pipelines.dailydialog import natural_key, options_from_args, read_sources

    parser = argparse.ArgumentParser()
    add_build_arguments(parser)
    args, _ = parser.parse_known_args(argv)
    options = options_from_args(args)
    if options.corruptions:
        raise SystemExit("bench_dailydialog baseline: --corruptions is not covered")
    source = read_sources(args)

    dialogues = []
    for raw in source["dailydialog"]():
        try:
            dialogues.append(parse_dialogue(raw))
        except RejectedRecord:
            pass
    out: dict = defaultdict(list)

    # MultiRef-DD (ALGORITHMS.md section 4)
    released = defaultdict(list)
    if source["multiref"] is not None:
        for position, raw in source["multiref"]():
            try:
                record = parse_multiref(raw, position)
            except RejectedRecord:
                continue
            released[("test", record.index)].append(record)
    first = options.multiref_first_reference == "released"
    for d in dialogues:
        if d.split not in options.multiref_splits:
            continue
        candidates = sorted(released.get((d.split, d.index), ()), key=lambda r: r.line)
        chosen = candidates[0] if candidates else None
        if chosen is not None and not multiref_matches(d, chosen):
            chosen = None
        for row in multiref_contexts(d, chosen, options.text, first):
            row["split"] = d.split
            out[(MULTIREF, d.split)].append(row)

    # DD++ (section 5)
    blocks = defaultdict(list)
    for d in dialogues:
        key = dialogue_key(d.turns) if options.near_duplicates is None else near_duplicate_block(d)
        blocks[key].append(d)
    kept = []
    for group in blocks.values():
        if options.dedup:
            kept += [k for k, _ in cluster_duplicates(group, options.near_duplicates)]
        else:
            kept += group
    contexts = defaultdict(list)
    for d in kept:
        for row in ddpp_contexts(d, options.chunks, options.text):
            contexts[dialogue_key(row.pop("raw_context"))].append(row)
    ddpp_released = defaultdict(list)
    if source["ddpp"] is not None:
        for raw in source["ddpp"]():
            try:
                record = parse_ddpp(raw)
            except RejectedRecord:
                continue
            ddpp_released[dialogue_key(record.context)].append(record)
    rows = []
    for key, group in contexts.items():
        candidates = ddpp_released.get(key)
        chosen = pick_released(candidates) if candidates else None
        for row in sorted(group, key=lambda r: natural_key(r["id"])):
            if chosen is not None:
                row["positive_responses"] = [s for s in map(collapse_spaces, chosen.positive_responses) if s]
                row["adversarial_negative_responses"] = [
                    s for s in map(collapse_spaces, chosen.adversarial_negative_responses) if s]
                row["source"] = chosen.source
                row["released_random"] = [s for s in map(collapse_spaces, chosen.random_negative_responses) if s]
            else:
                row["positive_responses"] = [row["response"]]
                row["adversarial_negative_responses"] = []
                row["source"] = "dailydialog"
            row["split"] = assign_split(row["dialogue_id"], options.splits)
            rows.append(row)
    pool = build_pool(e for row in rows for e in pool_entries(row, options.negatives))
    for row in rows:
        rel = row.pop("released_random", None)
        if options.negatives.keep_released and rel:
            row["random_negative_responses"] = rel
        else:
            row["random_negative_responses"] = sample_negatives(
                row["id"], row["dialogue_id"], row["positive_responses"], pool, options.negatives)
        out[(DDPP, row["split"])].append(row)
    counts: dict = {MULTIREF: {}, DDPP: {}}
    for (config, split), split_rows in out.items():
        split_rows.sort(key=lambda r: natural_key(r["id"]))  # as the parquet writer orders them
        counts[config][split] = len(split_rows)
    return counts


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    run_baseline = "--no-baseline" not in argv
    argv = [a for a in argv if a != "--no-baseline"]
    root = argv[0] if argv else os.environ.get("MULTIREF_DATA")
    from pipelines.dailydialog import run

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
