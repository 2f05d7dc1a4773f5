"""Coverage of the 95% intervals of corpus Distinct-n: percentile bootstrap vs delete-one jackknife.

Corpus Distinct-n (distinct n-grams / all n-grams of a system's outputs) is not a mean of item
values, and its expected value depends on the size of the test set (a larger set repeats more
n-grams). The question an interval answers: on another test set of the same size drawn from
the same source, what Distinct-n would the system get? So the simulation

1. builds a large pool of items (a system's outputs for many contexts);
2. estimates the truth, the pool's expected Distinct-n at size N, as the mean over
   ``--truth-draws`` test sets of N items drawn without replacement;
3. draws ``--test-sets`` other test sets of N items and computes each interval on each: the
   percentile bootstrap that ``multiref score --confidence`` used before (1,000 resamples of
   the items, seed 12345, sacrebleu's percentile indexes) and the delete-one jackknife it uses
   now (:func:`multiref.metrics.significance.distinct_jackknife`);
4. prints how often each interval contains the truth (95% is the goal), its mean width, and
   how often it contains the test set's own score.

It does the same for ``distinct_per_utterance`` (a mean over outputs: the percentile bootstrap
is kept for it) as a control. With ``--paired``, it checks the paired tests instead: two
systems drawn from the same source for the same contexts (two seeds of the generator: equally
diverse), how often the paired bootstrap and approximate randomization call them different at
p < 0.05 (5% is the goal), and how often they find a system whose generic replies are half as
frequent (more diverse).

Pools (``--pool``): ``dailydialog``: every response of the DailyDialog training dialogues
(human text, one output per context; needs ``$MULTIREF_DATA/dailydialog/train/dialogues_train.txt``);
``generated``: the same responses as a dialogue model might give them, 5 outputs per context,
each perturbed (words dropped, replaced, swapped) or, with probability 0.3, one of 20 generic
replies ("i don't know ."); ``synthetic``: no data needed, Zipfian sentences over 3,000 words,
3 outputs per context, 0.2 generic.

    python benchmarks/coverage_distinct.py --pool dailydialog --sizes 100 500 2000
    python benchmarks/coverage_distinct.py --pool synthetic --test-sets 100
    python benchmarks/coverage_distinct.py --pool generated --paired --sizes 100 500
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

import numpy as np

GENERIC = ["i don't know .", "i'm not sure .", "yes .", "no .", "thank you .", "what do you mean ?", "really ?",
           "i think so .", "that's great .", "okay .", "me too .", "i see .", "sure .", "why ?", "oh , really ?",
           "i don't think so .", "good idea .", "sounds good .", "what ?", "you're welcome ."]


def dailydialog_responses(path: str) -> list:
    """Every utterance after the first of each dialogue, lowercased, as one-output items."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            turns = [t.strip().lower() for t in line.split("__eou__") if t.strip()]
            out += [[t] for t in turns[1:]]
    return out


def generated(responses: list, per_item: int, generic: float, seed: int) -> list:
    """Model-like outputs: ``per_item`` perturbed copies of each response, some replaced by a generic reply."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_metrics import perturb

    rng = random.Random(seed)
    vocab = sorted({t for r in responses[:5000] for t in r[0].split()})
    return [[rng.choice(GENERIC) if rng.random() < generic else " ".join(perturb(r[0].split(), vocab, rng))
             for _ in range(per_item)] for r in responses]


def synthetic(items: int, seed: int) -> list:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(3000)]
    zipf = [1.0 / (i + 1) for i in range(len(vocab))]
    return [[rng.choice(GENERIC) if rng.random() < 0.2 else " ".join(rng.choices(vocab, zipf, k=rng.randint(3, 15)))
             for _ in range(3)] for _ in range(items)]


def pool_stats(outputs: list, order: int) -> tuple:
    """``(distinct ItemStats, per-utterance ItemStats)`` of the whole pool, through the metrics themselves."""
    from multiref.metrics import Item, get_metric
    from multiref.metrics.significance import metric_stats

    items = [Item(str(i), hyps) for i, hyps in enumerate(outputs)]
    out = []
    for name in ("distinct", "distinct_per_utterance"):
        metric = get_metric(name, order=order)
        out.append(metric_stats(metric, metric.score_items(items), items, {}))
    return tuple(out)


def subset(stats, rows):
    """The :class:`ItemStats` of the items ``rows`` (a test set drawn from the pool)."""
    from multiref.metrics.significance import ItemStats

    inc = stats.incidence[rows] if stats.incidence is not None else None
    return ItemStats(stats.table[rows], stats.finish, inc)


def one_config(stats, size: int, args, rng: np.random.Generator) -> dict:
    """Coverage of each interval for test sets of ``size`` items."""
    from multiref.metrics.significance import DEFAULT_SEED, bootstrap_counts, distinct_jackknife, interval

    n_pool = len(stats.table)
    score = lambda s: float(s.scores(np.ones((1, size)))[0])  # noqa: E731
    truth = float(np.mean([score(subset(stats, rng.choice(n_pool, size, replace=False)))
                           for _ in range(args.truth_draws)]))
    counts = bootstrap_counts(size, args.resamples, DEFAULT_SEED)
    methods = {"percentile bootstrap": lambda s: interval(s.scores(counts))}
    if stats.incidence is not None:
        methods["delete-one jackknife"] = distinct_jackknife
    found = {m: [] for m in methods}
    for _ in range(args.test_sets):
        test = subset(stats, rng.choice(n_pool, size, replace=False))
        value = score(test)
        for m, method in methods.items():
            lo, hi = method(test)
            found[m].append((lo <= truth <= hi, hi - lo, lo <= value <= hi))
    return {"truth": truth, **{m: np.mean(np.array(v, dtype=float), axis=0).tolist() for m, v in found.items()}}


def paired_rates(systems, size: int, args, rng: np.random.Generator) -> dict:
    """Share of test sets where each paired test gives p < 0.05: ``systems`` are the pool's
    distinct :class:`ItemStats` of the baseline, an equally diverse system and a more diverse one."""
    from multiref.metrics.significance import compare, widen

    n_pool = len(systems[0].table)
    if systems[0].incidence is not None:
        columns = max(s.incidence.shape[1] for s in systems)
        systems = [widen(s, columns) for s in systems]
    found = {}
    for test, n in (("bs", args.resamples), ("ar", args.resamples)):
        hits = np.zeros(2)
        for _ in range(args.test_sets):
            rows = rng.choice(n_pool, size, replace=False)
            parts = [subset(s, rows) for s in systems]
            scores = [float(p.scores(np.ones((1, size)))[0]) for p in parts]
            out = compare(parts, scores, test=test, n=n, seed=int(rng.integers(2 ** 31)))
            hits += [out[1]["p_value"] < 0.05, out[2]["p_value"] < 0.05]
        found[test] = (hits / args.test_sets).tolist()
    return found


def paired(responses: list, args) -> None:
    """``--paired``: the false-positive rate and the power of the paired tests on corpus Distinct-n,
    and on ``distinct_per_utterance`` (a mean over outputs) as a control."""
    from multiref.metrics import Item, get_metric
    from multiref.metrics.significance import metric_stats

    metrics = {name: (get_metric(name, order=args.order), {}) for name in ("distinct", "distinct_per_utterance")}
    systems = {name: [] for name in metrics}
    for seed, generic in ((args.seed, 0.3), (args.seed + 1, 0.3), (args.seed + 2, 0.15)):
        items = [Item(str(i), hyps) for i, hyps in enumerate(generated(responses, 5, generic, seed))]
        for name, (metric, vocabulary) in metrics.items():
            systems[name].append(metric_stats(metric, metric.score_items(items), items, vocabulary))
    print(f"paired tests, n = {args.order}, {args.test_sets} test sets per size, {args.resamples} resamples "
          "or trials: share of p < 0.05 for an equally diverse system (goal 5%) and a more diverse one")
    rng = np.random.default_rng(args.seed)
    for size in args.sizes:
        for name, stats in systems.items():
            for test, (same, better) in paired_rates(stats, size, args, rng).items():
                label = "paired bootstrap" if test == "bs" else "approximate randomization"
                print(f"{name:<24} N {size:>5}  {label:<26} equally diverse {same:6.1%}   more diverse {better:6.1%}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", choices=("dailydialog", "generated", "synthetic"), default="synthetic")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 500, 2000], help="test-set sizes N")
    parser.add_argument("--order", type=int, default=2, help="n of Distinct-n (default 2)")
    parser.add_argument("--test-sets", type=int, default=200, help="test sets per size (default 200)")
    parser.add_argument("--truth-draws", type=int, default=2000, help="test sets averaged for the truth")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1,000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--paired", action="store_true", help="the paired tests' error rates (pool: generated)")
    args = parser.parse_args(argv)
    if args.pool == "synthetic":
        outputs = synthetic(50_000, args.seed)
    else:
        path = os.path.join(os.environ.get("MULTIREF_DATA", ""), "dailydialog", "train", "dialogues_train.txt")
        if not os.path.isfile(path):
            print(f"coverage_distinct: {path} not found: set MULTIREF_DATA, or use --pool synthetic", file=sys.stderr)
            return 2
        outputs = dailydialog_responses(path)
        if args.paired:
            paired(outputs, args)
            return 0
        if args.pool == "generated":
            outputs = generated(outputs, 5, 0.3, args.seed)
    start = time.perf_counter()
    pools = pool_stats(outputs, args.order)
    print(f"pool {args.pool}: {len(outputs)} items, {sum(map(len, outputs))} outputs; Distinct-{args.order}; "
          f"{args.test_sets} test sets per size, truth from {args.truth_draws}, {args.resamples} bootstrap resamples")
    print(f"{'metric':<24} {'N':>5} {'truth':>7}  {'interval':<21} {'covers truth':>12} {'mean width':>10} "
          f"{'covers score':>12}")
    rng = np.random.default_rng(args.seed)
    for name, stats in zip(("distinct", "distinct_per_utterance"), pools):
        for size in args.sizes:
            found = one_config(stats, size, args, rng)
            for method, (cover, width, own) in ((m, v) for m, v in found.items() if m != "truth"):
                print(f"{name:<24} {size:>5} {found['truth']:>7.4f}  {method:<21} {cover:>12.1%} {width:>10.4f} "
                      f"{own:>12.1%}")
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
