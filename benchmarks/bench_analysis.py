"""Time the ``multiref analyze`` commands on the real files (issue #6).

Usage: python benchmarks/bench_analysis.py [DATA_DIR] [--no-bleu-baseline]
DATA_DIR (default $MULTIREF_DATA) holds multiref-dailydialog/ (MTurk ratings, multireftest.json),
dailydialog-plusplus/ (dev.json, test.json) and dailydialog/train/dialogues_train.txt.
Without real data, times the bundled test data instead. Each command runs in-process, once.
Target: every command under 60 seconds on a 2-core machine.

BLEU baseline (on by default): the correlation command's BLEU scores (every rating x BLEU-1..4
x single/multi reference, whitespace tokens, lowercased, smoothing ``none``) computed with
multiref's scorers (fresh caches) and, the straightforward way, with NLTK's ``sentence_bleu``
per response and reference set (no caches, default ``method0``), in the same process; prints
both times and the ratio, and asserts the scores agree to 1e-9. (multiref's ``none`` gives 0
when an order has no match, NLTK's method0 a tiny positive number, at most ~1.2e-77 (BLEU-4)
or ~1.5e-154 (BLEU-2): within 1e-9; those cases are counted in the output.)
Measured on the real ratings (500 rows, 4,000 scores): multiref 0.09 s, NLTK 0.59 s, ratio 0.15.
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
            "--output", os.path.join(out, "correlation")],
        "refcount (5 metrics, 5 references, 10 orders)": [
            "analyze", "refcount", "--ratings", ratings, "--multiref-references", multiref,
            "--output", os.path.join(out, "refcount")],
        "discrimination (default 6 metrics, dev + test)": [
            "analyze", "discrimination", "--validation", dev, "--test", test,
            "--output", os.path.join(out, "discrimination")],
    }


def bleu_rows(data: str | None):
    """The rated responses the correlation command scores (its default columns)."""
    from multiref.analysis.ratings import load_ratings

    if data:
        path = os.path.join(data, "multiref-dailydialog", "mturk_rating_processed_output.csv")
    else:
        path = os.path.join(ROOT, "tests", "data", "analysis", "ratings.csv")
    rows, _ = load_ratings(path)
    return rows


def multiref_bleu(rows, orders=(1, 2, 3, 4)) -> dict:
    """``{(order, setting): [score per row]}`` with the correlation command's scorers."""
    from multiref.analysis.correlation import score_rows
    from multiref.analysis.scoring import make_scorers, parse_metric_spec

    specs = [parse_metric_spec(f"bleu{n}") for n in orders]
    out = {}
    for n, scorer in zip(orders, make_scorers(specs, {"tokenizer": "whitespace", "lowercase": True})):
        scored = score_rows(scorer, rows, "auto")
        assert scored["aggregation"] == "standard", scored["aggregation"]
        out[(n, "single")], out[(n, "multi")] = scored["single"], scored["multi"]
    return out


def nltk_bleu(rows, orders=(1, 2, 3, 4)) -> dict:
    """The same scores with ``nltk.translate.bleu_score.sentence_bleu``, recomputed every time."""
    import warnings

    from nltk.translate.bleu_score import sentence_bleu

    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # method0's "0 counts of n-gram overlaps" warning
        for n in orders:
            weights = tuple(1.0 / n for _ in range(n))
            out[(n, "single")] = [sentence_bleu([r.reference.lower().split()], r.response.lower().split(), weights)
                                  for r in rows]
            out[(n, "multi")] = [sentence_bleu([ref.lower().split() for ref in r.references],
                                               r.response.lower().split(), weights) for r in rows]
    return out


def bleu_baseline(data: str | None) -> None:
    import importlib

    for module in ("nltk.translate.bleu_score", "multiref.analysis.correlation", "multiref.metrics.bleu"):
        importlib.import_module(module)  # imports stay outside the timed sections

    rows = bleu_rows(data)
    start = time.perf_counter()
    ours = multiref_bleu(rows)
    ours_seconds = time.perf_counter() - start
    start = time.perf_counter()
    theirs = nltk_bleu(rows)
    nltk_seconds = time.perf_counter() - start
    n_scores = sum(len(v) for v in ours.values())
    worst, tiny = 0.0, 0
    for key, values in ours.items():
        for a, b in zip(values, theirs[key]):
            worst = max(worst, abs(a - b))
            tiny += a == 0.0 and b != 0.0
    assert worst <= 1e-9, f"multiref and NLTK BLEU differ by {worst:g}"
    print(f"correlation BLEU ({len(rows)} ratings x BLEU-1..4 x single/multi = {n_scores:,} scores): "
          f"multiref {ours_seconds:.3f} s vs NLTK sentence_bleu {nltk_seconds:.3f} s: "
          f"ratio multiref/NLTK {ours_seconds / nltk_seconds:.3f} (NLTK {nltk_seconds / ours_seconds:.1f}x slower); "
          f"max |difference| {worst:.1e} ({tiny} scores 0 in multiref, at most 1.2e-77 in NLTK method0)")


def main(argv=None) -> int:
    import argparse

    from multiref_cli import main as cli

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", default=os.environ.get("MULTIREF_DATA"), metavar="DATA_DIR")
    parser.add_argument("--no-bleu-baseline", dest="bleu_baseline", action="store_false",
                        help="skip the multiref vs NLTK BLEU baseline")
    args = parser.parse_args(argv)
    data = args.data
    with tempfile.TemporaryDirectory() as out:
        for name, argv in commands(data, out).items():
            start, cpu = time.perf_counter(), time.process_time()
            with contextlib.redirect_stdout(io.StringIO()):
                code = cli(argv)
            print(f"{name}: {time.perf_counter() - start:.1f} s wall, {time.process_time() - cpu:.1f} s CPU"
                  f" (exit {code})")
            if code:
                return code
    if args.bleu_baseline:
        bleu_baseline(data)
    return 0

if __name__ == "__main__":
    sys.exit(main())
