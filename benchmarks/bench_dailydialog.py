"""Time the full DailyDialog build (multiref + dailydialog_pp) on the real releases.

Usage: python benchmarks/bench_dailydialog.py [DATA_DIR]
DATA_DIR (default $MULTIREF_DATA) holds dailydialog/, multiref-dailydialog/multireftest.json and
dailydialog-plusplus/ (13,118 dialogues). Without real data, times the bundled sample instead.
Target: under 60 seconds on a 2-core machine.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    root = argv[0] if argv else os.environ.get("MULTIREF_DATA")
    from pipelines.dailydialog import run

    with tempfile.TemporaryDirectory() as tmp:
        args = ["--output", os.path.join(tmp, "out")]
        what = "bundled sample"
        if root:
            args += ["--dailydialog", os.path.join(root, "dailydialog"),
                     "--multiref-references", os.path.join(root, "multiref-dailydialog", "multireftest.json"),
                     "--ddpp", os.path.join(root, "dailydialog-plusplus")]
            what = root
        start = time.perf_counter()
        stats = run(args)
        seconds = time.perf_counter() - start
    dialogues = sum(v for k, v in stats["counters"].items() if k.startswith("dailydialog/dialogues-"))
    contexts = sum(stats["configs"]["multiref"].values()) + sum(stats["configs"]["dailydialog_pp"].values())
    print(f"bench_dailydialog: {what}: {dialogues:,} dialogues -> {contexts:,} rows in {seconds:.1f} s "
          f"({dialogues / seconds:,.0f} dialogues/s); target < 60 s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
