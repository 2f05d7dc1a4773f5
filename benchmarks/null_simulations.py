"""Null simulations of the paired tests and coverage of the 95% intervals, per metric.

Two systems drawn from the same distribution (the same generator, two seeds, on the same
items) differ only by chance: a sound test calls them different at p < 0.05 in about 5% of
test sets. The simulation

1. builds a pool of ``--pool`` items (synthetic, no data needed: Zipfian words over 3,000 types
   plus 20 topic words per item; 2-4 reference groups of 1-3 references each, each reference a
   noisy variant of its group's sentence; every reference a deltaBLEU weight in {1, 0.6, 0.2,
   -0.4}, the first 1) and two systems' outputs for every item (2 outputs per item: with probability 0.2 one
   of 20 generic replies, else a reference of a random group with each word replaced with
   probability 0.5);
2. scores each metric once on the pool and keeps its per-item statistics
   (``Metric.resampling_stats``; a test set of N items is a subset of their rows, exactly the
   score of those items);
3. draws ``--sims`` test sets of ``--size`` items and runs, on each, the paired bootstrap and
   approximate randomization (``--resamples`` each, a new seed per test set) as
   :func:`multiref.metrics.significance.compare` runs them for ``multiref score --paired-bs`` /
   ``--paired-ar`` (corpus Distinct-n included, whose paired bootstrap the command refuses), and
   the 95% interval of ``--confidence`` (percentile bootstrap; corpus Distinct-n: the delete-one
   jackknife);
4. prints per metric the share of test sets with p < 0.05 for each test (goal 5%) and how often
   the interval holds the truth, the expected score of a test set of N items from the pool (the
   mean over ``--truth-draws`` test sets), goal 95%.

The Monte Carlo error of a rate r over S test sets is sqrt(r (1 - r) / S): about 1 point for
5% at S = 500. docs/scoring.md quotes this script's table.

    python benchmarks/null_simulations.py                       # 500 test sets of 50 items
    python benchmarks/null_simulations.py --size 200 --sims 300
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

METRICS = ("bleu", "maxbleu", "mds", "pds", "rouge_l", "distinct", "distinct_per_utterance", "delta_bleu")
GENERIC = ["i don't know .", "i'm not sure .", "yes .", "no .", "thank you .", "what do you mean ?", "really ?",
           "i think so .", "that's great .", "okay .", "me too .", "i see .", "sure .", "why ?", "oh , really ?",
           "i don't think so .", "good idea .", "sounds good .", "what ?", "you're welcome ."]
WEIGHTS = (1.0, 0.6, 0.2, -0.4)


class Words:
    """Zipfian draws over ``size`` word types."""

    def __init__(self, rng: np.random.Generator, size: int = 3000, skew: float = 1.1):
        self.rng = rng
        self.types = np.array([f"w{i}" for i in range(size)])
        p = 1.0 / np.arange(1, size + 1) ** skew
        self.p = p / p.sum()

    def draw(self, k: int) -> list:
        return self.types[self.rng.choice(len(self.types), size=k, p=self.p)].tolist()


def _noisy(rng, words: Words, tokens: list, p: float) -> list:
    swap = rng.random(len(tokens)) < p
    fresh = words.draw(int(swap.sum()))
    it = iter(fresh)
    return [next(it) if s else t for t, s in zip(tokens, swap)]


def reference_pool(size: int, seed: int) -> list:
    """``(groups, weights)`` per item."""
    rng = np.random.default_rng(seed)
    words = Words(rng)
    pool = []
    for _ in range(size):
        topic = words.types[rng.choice(len(words.types), 20)].tolist()
        groups = []
        for _ in range(int(rng.integers(2, 5))):
            length = int(rng.integers(5, 13))
            base = [topic[int(rng.integers(20))] if rng.random() < 0.5 else w for w in words.draw(length)]
            groups.append([" ".join(_noisy(rng, words, base, 0.3)) for _ in range(int(rng.integers(1, 4)))])
        weights = [float(WEIGHTS[int(rng.integers(len(WEIGHTS)))]) for g in groups for _ in g]
        weights[0] = 1.0  # deltaBLEU needs a positive weight in every item
        pool.append((groups, weights))
    return pool


def system_outputs(pool: list, seed: int, outputs: int = 2, generic: float = 0.2, noise: float = 0.5) -> list:
    """One system's outputs for every item of ``pool`` (see the module docstring)."""
    rng = np.random.default_rng(seed)
    words = Words(rng)
    out = []
    for groups, _ in pool:
        hyps = []
        for _ in range(outputs):
            if rng.random() < generic:
                hyps.append(GENERIC[int(rng.integers(len(GENERIC)))])
            else:
                group = groups[int(rng.integers(len(groups)))]
                ref = group[int(rng.integers(len(group)))].split()
                hyps.append(" ".join(_noisy(rng, words, ref, noise)))
        out.append(hyps)
    return out


def pool_stats(pool: list, systems: list) -> dict:
    """``{metric: [ItemStats of each system on the whole pool]}`` (columns widened to one vocabulary)."""
    from multiref.metrics import Item, get_metric
    from multiref.metrics.significance import widen

    found = {}
    for name in METRICS:
        metric = get_metric(name)
        vocabulary: dict = {}
        stats = []
        for outputs in systems:
            items = [Item(str(i), hyps, groups=groups, weights=weights)
                     for i, (hyps, (groups, weights)) in enumerate(zip(outputs, pool))]
            stats.append(metric.resampling_stats(metric.score_items(items), items, vocabulary))
        found[name] = [widen(s, len(vocabulary) + 1) for s in stats]
    return found


def subset(stats, rows):
    from multiref.metrics.significance import ItemStats

    return ItemStats(stats.table[rows], stats.finish, stats.incidence[rows] if stats.incidence is not None else None)


def truths(stats: dict, size: int, draws: int, rng: np.random.Generator) -> dict:
    """Per metric, the expected score of system 0 on a test set of ``size`` pool items (the mean
    over ``draws`` test sets; each a 0/1 row of item weights)."""
    n_pool = len(next(iter(stats.values()))[0].table)
    weights = np.zeros((draws, n_pool))
    for row in weights:
        row[rng.choice(n_pool, size, replace=False)] = 1.0
    return {name: float(np.nanmean(s[0].scores(weights))) for name, s in stats.items()}


def simulate(stats: dict, truth: dict, args, rng: np.random.Generator) -> dict:
    """Per metric: ``[bs p < 0.05, ar p < 0.05, interval holds the truth]`` rates over ``args.sims`` test sets."""
    from multiref.metrics.significance import compare

    n_pool = len(next(iter(stats.values()))[0].table)
    hits = {name: np.zeros(3) for name in stats}
    for _ in range(args.sims):
        rows = rng.choice(n_pool, args.size, replace=False)
        seed = int(rng.integers(2 ** 31))
        draws: dict = {}
        for name, systems in stats.items():
            parts = [subset(s, rows) for s in systems]
            scores = [float(p.scores(np.ones((1, args.size)))[0]) for p in parts]
            bs = compare(parts, scores, test="bs", n=args.resamples, seed=seed, confidence=True, draws=draws)
            ar = compare(parts, scores, test="ar", n=args.resamples, seed=seed, draws=draws)
            lo, hi = bs[0]["ci"]
            hits[name] += [bs[1]["p_value"] < 0.05, ar[1]["p_value"] < 0.05, lo <= truth[name] <= hi]
    return {name: (h / args.sims).tolist() for name, h in hits.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=50, help="items per test set N (default 50)")
    parser.add_argument("--sims", type=int, default=500, help="test sets (null simulations) per metric (default 500)")
    parser.add_argument("--resamples", type=int, default=1000,
                        help="bootstrap resamples and randomization trials per test (default 1,000)")
    parser.add_argument("--pool", type=int, default=3000, help="items in the pool (default 3,000)")
    parser.add_argument("--truth-draws", type=int, default=4000, help="test sets averaged for the truth")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    start = time.perf_counter()
    pool = reference_pool(args.pool, args.seed)
    systems = [system_outputs(pool, args.seed + 1), system_outputs(pool, args.seed + 2)]
    stats = pool_stats(pool, systems)
    rng = np.random.default_rng(args.seed)
    truth = truths(stats, args.size, args.truth_draws, rng)
    rates = simulate(stats, truth, args, rng)
    print(f"null simulations: {args.sims} test sets of N = {args.size} items from a pool of {args.pool}, two systems "
          f"from the same generator, {args.resamples} resamples/trials per test; share of p < 0.05 (goal 5%) and "
          "coverage of the 95% interval (goal 95%)")
    print()
    print("| metric | paired bootstrap p < 0.05 | approximate randomization p < 0.05 | 95% interval coverage |")
    print("|---|---|---|---|")
    for name, (bs, ar, covered) in rates.items():
        method = "jackknife" if stats[name][0].interval_method == "jackknife" else "percentile"
        print(f"| {name} | {bs:.1%} | {ar:.1%} | {covered:.1%} ({method}) |")
    print()
    print(f"whole run {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
