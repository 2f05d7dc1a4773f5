"""Time the ``multiref analyze`` commands on the real files (issue #6).

Usage: python benchmarks/bench_analysis.py [DATA_DIR]
DATA_DIR (default $MULTIREF_DATA) holds multiref-dailydialog/ (MTurk ratings, multireftest.json),
dailydialog-plusplus/ (dev.json, test.json) and dailydialog/train/dialogues_train.txt.
Without real data, times the bundled test data instead. Each command runs in-process, once.
Target: every command under 60 seconds on a 2-core machine.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def commands(data: str | None, out: str) -> dict:
    if data:
        ratings = os.path.join(data, "multiref-dailydialog", "mturk_rating_processed_output.csv")
        multiref = os.path.join(data, "multiref-dailydialog", "multireftest.json")
        dev = os.path.join(data, "dailydialog-plusplus", "dev.json")
        test = os.path.join(data, "dailydialog-plusplus", "test.json")
        dialogues = os.path.join(data, "dailydialog", "train", "dialogues_train.txt")
    else:
        base = os.path.join(ROOT, "tests", "data", "analysis")
        ratings, multiref = os.path.join(base, "ratings.csv"), os.path.join(base, "multireftest.jsonl")
        dev, test = os.path.join(base, "ddpp_dev.jsonl"), os.path.join(base, "ddpp_test.jsonl")
        dialogues = os.path.join(base, "dialogues_sample.txt")
    metrics = []
    for m in ("bleu1", "bleu2", "bleu3", "bleu4", "rouge_l", "embedding_average", "vector_extrema", "greedy_matching"):
        metrics += ["--metric", m]
    return {
        "correlation (8 metrics, word2vec training, 1000 bootstrap)": [
            "analyze", "correlation", "--ratings", ratings, "--train-vectors-from", dialogues, *metrics,
            "--output-dir", os.path.join(out, "correlation")],
        "refcount (5 metrics, 5 references, 10 orders)": [
            "analyze", "refcount", "--ratings", ratings, "--multiref-test", multiref,
            "--output-dir", os.path.join(out, "refcount")],
        "discrimination (default 6 metrics, dev + test)": [
            "analyze", "discrimination", "--validation", dev, "--test", test,
            "--output-dir", os.path.join(out, "discrimination")],
    }


def main() -> int:
    from multiref.cli import main as cli

    data = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("MULTIREF_DATA")
    with tempfile.TemporaryDirectory() as out:
        for name, argv in commands(data, out).items():
            start, cpu = time.perf_counter(), time.process_time()
            with contextlib.redirect_stdout(io.StringIO()):
                code = cli(argv)
            print(f"{name}: {time.perf_counter() - start:.1f} s wall, {time.process_time() - cpu:.1f} s CPU"
                  f" (exit {code})")
            if code:
                return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
