"""Confidence intervals and paired significance tests for every corpus-level metric.

Resampling is over items (queries, contexts), never over the outputs of one item, and works
on per-item *sufficient statistics* (:class:`ItemStats`), so a resample costs a matrix
product, not a rescoring:

- corpus BLEU and deltaBLEU: per item, the clipped matches, denominators and totals of each
  order and the hypothesis and closest-reference lengths (their sums give the corpus score);
- corpus Distinct-n: per item, its n-gram total and the set of its distinct n-grams (a
  sparse item x n-gram incidence matrix; a resample's distinct count is the number of
  n-grams some chosen item holds);
- every metric that averages item scores (MaxBLEU, MDS, PDS, ROUGE-L, METEOR, the embedding
  metrics, Self-BLEU, BLEU with ``aggregate`` max/mean, recall forms): per item, the score
  and 1 (an item without a score, e.g. Self-BLEU with one output, counts 0 and 0);
  ``distinct_per_utterance`` (the mean over outputs): the sum of the item's values and its
  number of outputs.

The tests follow sacrebleu 2.x (``sacrebleu/significance.py``) step for step, with the same
random generator (``numpy.random.default_rng(seed)``, seed 12345 by default) and the same
draws (``rng.choice(N, (n, N))`` for the bootstrap, ``rng.integers(2, (n, N), dtype=bool)``
for approximate randomization), so on the same BLEU statistics the p-values are sacrebleu's:

- paired bootstrap (Koehn 2004, as Moses' ``bootstrap-hypothesis-difference-significance.pl``):
  the same resampled items for baseline and system; ``d_b = |sys_b - base_b|``; p is
  ``(#{d_b - mean(d) > |sys - base|} + 1) / (n + 1)``;
- approximate randomization (Riezler and Maxwell 2005): each item's outputs are swapped
  between the two systems with probability 1/2; p is
  ``(#{|a_t - b_t| >= |sys - base| - tol} + 1) / (n + 1)`` (:func:`p_value_ties`): unlike
  sacrebleu, a trial that ties the observed difference counts as extreme, as Riezler and
  Maxwell count it. Discrete metrics (MDS, PDS) tie constantly, and a system that differs from
  the baseline in one item only ties on every trial (swapping that item only flips the sign):
  sacrebleu's strict count gave it p = 1/(n+1), we give p = 1;
- in the paired bootstrap, one deliberate difference: when the observed difference is exactly
  zero (the system is the baseline, or scores the same), p is 1.0, not sacrebleu's
  ``1 / (n + 1)`` from its strict-greater count: a system cannot differ significantly from a copy
  of itself;
- each metric provides its own statistics (``Metric.resampling_stats``), its interval method
  (``Metric.interval_method``) and the tests that hold for it (``Metric.paired_tests``: corpus
  Distinct-n refuses the paired bootstrap, whose false-positive rate on it is about a third;
  ``benchmarks/null_simulations.py``, docs/scoring.md); :class:`Resampling` holds a run's test,
  resamples, seed and correction, once, and writes them into every signature;
- the 95% interval is the 2.5th and 97.5th percentile of the bootstrap scores, with
  sacrebleu's indexes (``sorted[n // 40]``, ``sorted[n - n // 40 - 1]``), for every metric but
  corpus Distinct-n (:func:`interval_method`).

Corpus Distinct-n is not a mean of item values, and the percentile bootstrap fails for it: a
resample repeats items, a repeated item adds n-grams but no new n-gram types, so every
resampled ratio is lower than the score (on the public LSDSCC test set, the query echoed back
scores 0.8015 and its bootstrap interval was 0.4908-0.5727). Its interval is the delete-one
jackknife instead (:func:`distinct_jackknife`: score +- 1.96 SE from the N leave-one-out scores;
deterministic, centred on the score; ``ci_method:jackknife`` in the CLI's signature). Coverage
of the expected Distinct-2 of test sets of N items drawn from a pool
(``benchmarks/coverage_distinct.py``, 500 test sets per cell; DailyDialog responses, a
model-like generated pool with 5 outputs per context and generic replies, a synthetic pool):

    N       percentile bootstrap (old)   jackknife: DailyDialog / generated / synthetic
    100     0% in every pool             96.2% / 94.2% / 95.6%
    500     0%                           96.4% / 95.0% / 96.6%
    2000    0%                           98.0% / 96.4% / 97.0%

The other metrics are means of item values or ratios of sums over items (corpus BLEU and
deltaBLEU as sacrebleu; ``distinct_per_utterance``, a mean over outputs: 93.4-95.6% coverage
in the same simulation), where the percentile bootstrap holds. The paired tests are much less
affected by repeated items (both systems' resamples repeat the same items, and approximate
randomization draws none); the same script with ``--paired`` measures how often they call two
equally diverse systems different (see docs/scoring.md).

BLEU smoothings ``none``, ``nltk1`` and ``add1`` are vectorised; the others are computed per
resample with :func:`multiref.metrics.bleu.bleu_from_stats` (NLTK's methods 5-7 then use the
last segment of the whole test set for their "last segment" quirks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from multiref.metrics.defaults import CORRECTIONS, DEFAULT_AR, DEFAULT_BS, DEFAULT_SEED, TESTS  # noqa: F401
from multiref.metrics.resampling import (BLOCK, ItemStats, _distinct_ratio, bleu_finish, bleu_table,  # noqa: F401
                                         distinct_present, distinct_stats, mean_stats, pseudo_scores, widen)

#: the normal quantile of a two-sided 95% interval
Z95 = 1.959963984540054


def distinct_jackknife(stats: ItemStats) -> tuple | None:
    """95% delete-one jackknife interval of corpus Distinct-n: ``score +- 1.96 SE``, clipped to [0, 1]
    (EAD, finished by its own ``stats.finish``, clipped at 0 only: it can exceed 1).

    Leaving item i out removes its n-gram total and the n-gram types no other item holds
    (column degree 1 in the incidence matrix), so the N leave-one-out scores cost one pass
    over the matrix; ``SE = sqrt((N - 1) / N * sum((loo_i - mean(loo))^2))``. Deterministic
    and centred on the score. Not the percentile bootstrap: a resample repeats items, a
    repeated item adds n-grams but no new types, so every resampled ratio is too low (see the
    module docstring for the coverage of both). None with fewer than 2 items."""
    inc, totals = stats.incidence, stats.table[:, 0]
    n = inc.shape[0]
    if n < 2:
        return None
    degree = np.bincount(inc.indices, minlength=inc.shape[1])
    rows = np.repeat(np.arange(n), np.diff(inc.indptr))
    alone = np.bincount(rows[degree[inc.indices] == 1], minlength=n)
    distinct, total = float(np.count_nonzero(degree)), float(totals.sum())
    score = stats.finish(np.array([[total, distinct]]))[0]
    loo = stats.finish(np.column_stack([total - totals, distinct - alone]))
    se = math.sqrt((n - 1) / n * float(np.sum((loo - loo.mean()) ** 2)))
    high = score + Z95 * se
    return max(0.0, score - Z95 * se), min(1.0, high) if stats.finish is _distinct_ratio else high


def interval_method(metric) -> str:
    """How :func:`compare` computes ``metric``'s 95% interval, as the metric says
    (``Metric.interval_method``): ``"jackknife"`` for corpus Distinct-n (not a mean of item
    values, see :func:`distinct_jackknife`), else ``"percentile"`` (the percentile bootstrap, as sacrebleu)."""
    return getattr(metric, "interval_method", "percentile")


def metric_stats(metric, score, items, vocabulary: dict | None = None) -> ItemStats:
    """The :class:`ItemStats` of ``metric``'s result ``score`` on ``items`` (the result must come
    from ``metric.score_items(items)``): the metric's own ``resampling_stats``."""
    return metric.resampling_stats(score, items, vocabulary)


# -- the tests ------------------------------------------------------------------------------


def bootstrap_counts(n_items: int, n: int, seed: int | None = DEFAULT_SEED) -> np.ndarray:
    """``(n, n_items)`` multiplicities of each item in ``n`` bootstrap resamples, from
    sacrebleu's draw ``default_rng(seed).choice(n_items, (n, n_items))``."""
    if n_items < 1 or n < 1:
        raise ValueError(f"bootstrap: need at least one item and one resample, got {n_items} and {n}")
    return _counts(np.random.default_rng(seed), n_items, n)


def _counts(rng, n_items: int, n: int) -> np.ndarray:
    idxs = rng.choice(n_items, size=(n, n_items), replace=True)
    flat = (np.arange(n)[:, None] * n_items + idxs).ravel()
    return np.bincount(flat, minlength=n * n_items).reshape(n, n_items).astype(float)


#: bootstrap multiplicities drawn and used at most this many at a time (rows x items; about
#: 8 MB per array): ``--paired-bs-n 1000000`` on 300 items once needed a 2.23 GiB array
DRAW_BATCH = 1 << 20


def bootstrap_scores(stats: Sequence[ItemStats], n: int, seed: int | None = DEFAULT_SEED,
                     draws: dict | None = None) -> list:
    """Each system's scores on the same ``n`` bootstrap resamples of :func:`bootstrap_counts`,
    drawn :data:`DRAW_BATCH` multiplicities at a time from one generator: the rows are the same
    as one draw of all (numpy's stream continues from call to call), memory stays bounded.
    A draw that fits in one batch is kept in ``draws`` for the next metric."""
    n_items = len(stats[0].table)
    rows = max(1, DRAW_BATCH // max(n_items, 1))
    if n <= rows:
        counts = _draw({} if draws is None else draws, ("bs", n_items, n, seed),
                       lambda: bootstrap_counts(n_items, n, seed))
        return [s.scores(counts) for s in stats]
    rng, out = np.random.default_rng(seed), [np.empty(n) for _ in stats]
    for lo in range(0, n, rows):
        counts = _counts(rng, n_items, min(rows, n - lo))
        for scores, s in zip(out, stats):
            scores[lo:lo + len(counts)] = s.scores(counts)
    return out


def ar_swaps(n_items: int, n: int, seed: int | None = DEFAULT_SEED) -> np.ndarray:
    """``(n, n_items)`` booleans, sacrebleu's ``default_rng(seed).integers(2, (n, n_items))``."""
    if n_items < 1 or n < 1:
        raise ValueError(f"randomization: need at least one item and one trial, got {n_items} and {n}")
    return np.random.default_rng(seed).integers(2, size=(n, n_items), dtype=bool)


def interval(scores: np.ndarray) -> tuple | None:
    """95% percentile interval of bootstrap scores (sacrebleu's indexes); None with NaNs."""
    scores = np.sort(np.asarray(scores, dtype=float))
    if not len(scores) or np.isnan(scores).any():
        return None
    lo = len(scores) // 40
    return float(scores[lo]), float(scores[len(scores) - lo - 1])


#: a null statistic within this much of the observed one (relative, plus :data:`ATOL`) counts as
#: extreme in approximate randomization: the same difference summed in another order may differ
#: in the last bits
RTOL = 1e-9
ATOL = 1e-12


def p_value(null_stats: np.ndarray, observed: float) -> float | None:
    """The paired bootstrap's p: ``(#{null_stats > observed} + 1) / (n + 1)`` (sacrebleu's);
    1.0 when ``observed`` is 0; None with NaNs."""
    if observed is None or math.isnan(observed) or np.isnan(null_stats).any():
        return None
    if observed == 0:
        return 1.0
    return (int(np.sum(null_stats > observed)) + 1) / (len(null_stats) + 1)


def p_value_ties(null_stats: np.ndarray, observed: float) -> float | None:
    """Approximate randomization's p: ``(#{null_stats >= observed - tol} + 1) / (n + 1)``, a trial
    as extreme as the observed difference within ``tol = ATOL + RTOL * observed`` counted extreme
    (Riezler and Maxwell 2005; sacrebleu counts ``>`` only). A tie is not evidence against the
    null: an observed difference of 0 gives p = 1, and a system that differs in one item only
    (every swap of that item gives the same ``|difference|``) gives p = 1. None with NaNs."""
    if observed is None or math.isnan(observed) or np.isnan(null_stats).any():
        return None
    tol = ATOL + RTOL * abs(observed)
    return (int(np.sum(null_stats >= observed - tol)) + 1) / (len(null_stats) + 1)


def _observed(base_score, sys_score) -> float:
    if base_score is None or sys_score is None:
        return float("nan")
    return abs(float(sys_score) - float(base_score))


def bootstrap_p(base_b: np.ndarray, sys_b: np.ndarray, base_score, sys_score) -> float | None:
    """The paired bootstrap's p (sacrebleu's) from both systems' scores on the same resamples
    (:func:`bootstrap_scores`)."""
    diffs = np.abs(sys_b - base_b)
    return p_value(diffs - diffs.mean(), _observed(base_score, sys_score))


def paired_randomization(base: ItemStats, system: ItemStats, base_score, sys_score, swaps: np.ndarray) -> float:
    """Paired approximate randomization (sacrebleu's draws): p for ``|sys - base|`` over the
    ``swaps``, ties counted extreme (:func:`p_value_ties`)."""
    diffs = np.empty(len(swaps))
    for lo in range(0, len(swaps), BLOCK):
        sel = swaps[lo:lo + BLOCK].astype(float)
        a = pseudo_scores([(sel, base), (1.0 - sel, system)])
        b = pseudo_scores([(1.0 - sel, base), (sel, system)])
        diffs[lo:lo + BLOCK] = np.abs(a - b)
    return p_value_ties(diffs, _observed(base_score, sys_score))


# -- several systems at once ------------------------------------------------------------------



@dataclass(frozen=True)
class Resampling:
    """The statistics of a run, declared once for the library, the CLI and the evaluate modules.

    ``test``: ``"bs"`` (paired bootstrap), ``"ar"`` (approximate randomization) or None;
    ``n``: its resamples (None: :data:`DEFAULT_BS` / :data:`DEFAULT_AR`); ``confidence``: 95%
    intervals, from the paired bootstrap's resamples with ``test="bs"``, else from
    ``n_confidence`` resamples; ``seed``: numpy's ``default_rng`` seed; ``correction``: ``holm``
    adjusts the p-values of several systems against one baseline (Holm 1979), per metric.
    """

    test: str | None = None
    n: int | None = None
    confidence: bool = False
    n_confidence: int = DEFAULT_BS
    seed: int = DEFAULT_SEED
    correction: str = "none"

    def __post_init__(self):
        if self.test not in (None,) + TESTS:
            raise ValueError(f"significance: unknown test {self.test!r}; choose one of: {', '.join(TESTS)}")
        if self.correction not in CORRECTIONS:
            raise ValueError(f"significance: unknown correction {self.correction!r}; "
                             f"choose one of: {', '.join(CORRECTIONS)}")

    @property
    def resamples(self) -> int | None:
        """The test's resamples (trials), None without a test."""
        if self.test is None:
            return None
        return self.n or (DEFAULT_BS if self.test == "bs" else DEFAULT_AR)

    @property
    def interval_resamples(self) -> int:
        """Bootstrap resamples of the percentile intervals: the test's with ``test="bs"``."""
        return self.resamples if self.test == "bs" else self.n_confidence

    def check(self, metric) -> None:
        """ValueError when ``metric`` does not take this test (``Metric.paired_tests``)."""
        allowed = getattr(metric, "paired_tests", TESTS)
        if self.test is not None and self.test not in allowed:
            raise ValueError(f"{metric.name}: the {_TEST_NAMES[self.test]} is not offered for this metric (its "
                             f"false-positive rate is far above the nominal one, docs/scoring.md); use "
                             f"{' or '.join(_TEST_FLAGS[t] for t in allowed)}")

    def suffix(self, interval: str = "percentile") -> str:
        """The signature fields of the resampling: test, resamples, correction, the interval
        (``ci:95`` and its resamples for a percentile bootstrap, ``ci:95|ci_method:jackknife``
        for corpus Distinct-n: ``interval``, :func:`interval_method`), seed (empty without statistics)."""
        parts = [f"test:{self.test}", f"n:{self.resamples}"] if self.test else []
        if self.test and self.correction != "none":
            parts.append(f"corr:{self.correction}")
        if self.confidence:
            parts += ["ci:95", "ci_method:jackknife"] if interval == "jackknife" else ["ci:95", f"ci_n:{self.interval_resamples}"]
        if parts:
            parts.append(f"seed:{self.seed}")
        return "|".join(parts)


_TEST_NAMES = {"bs": "paired bootstrap", "ar": "approximate randomization"}
#: the command line's flag of each test (named in the error a library user and a CLI user both see)
_TEST_FLAGS = {"bs": "--paired-bs (test='bs')", "ar": "--paired-ar (test='ar')"}


def holm(p_values: Sequence) -> list:
    """Holm's step-down adjustment of the p-values of several comparisons (None: no p-value,
    left out): the i-th smallest of m becomes ``max_{j <= i} min(1, (m - j + 1) p_(j))``."""
    present = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    out = list(p_values)
    running, m = 0.0, len(present)
    for rank, (p, i) in enumerate(present):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def compare(stats: Sequence[ItemStats], scores: Sequence, *, confidence: bool = False, test: str | None = None,
            n: int | None = None, seed: int | None = DEFAULT_SEED, n_confidence: int = DEFAULT_BS,
            draws: dict | None = None, tick: Callable | None = None) -> list:
    """Intervals and p-values of one metric for several systems on the same items.

    ``stats[i]``/``scores[i]``: system i's :class:`ItemStats` (rows in the same item order for
    every system) and its score (None: no score); system 0 is the baseline. ``test``: ``"bs"``
    (paired bootstrap, ``n`` default 1,000) or ``"ar"`` (approximate randomization, default
    10,000) or None; ``confidence``: 95% intervals, bootstrap percentile (the paired bootstrap's
    resamples when ``test="bs"``, else ``n_confidence`` of them) or, for corpus Distinct-n
    (``ItemStats.interval_method``), the delete-one jackknife. ``draws`` caches the random draws across
    metrics; ``tick()`` is called once per system. Returns one ``{"ci": (lo, hi) | None,
    "p_value": p | None}`` per system (the baseline's p-value is None).
    """
    if test not in (None,) + TESTS:
        raise ValueError(f"significance: unknown test {test!r}; choose one of: {', '.join(TESTS)}")
    n_items = len(stats[0].table)
    if any(len(s.table) != n_items for s in stats):
        raise ValueError("significance: the systems do not cover the same items")
    draws = {} if draws is None else draws
    out = [{"ci": None, "p_value": None} for _ in stats]
    jackknife = confidence and stats[0].interval_method == "jackknife"
    need_bs = test == "bs" or (confidence and not jackknife)
    bs_n = (n or DEFAULT_BS) if test == "bs" else n_confidence
    boot = bootstrap_scores(stats, bs_n, seed, draws) if need_bs else None  # in batches: bounded memory
    base_scores = boot[0] if need_bs else None
    if confidence:
        out[0]["ci"] = distinct_jackknife(stats[0]) if jackknife else interval(base_scores)
    swaps = _draw(draws, ("ar", n_items, n or DEFAULT_AR, seed),
                  lambda: ar_swaps(n_items, n or DEFAULT_AR, seed)) if test == "ar" else None
    if tick:
        tick()
    for i in range(1, len(stats)):
        if test == "bs":
            out[i]["p_value"] = bootstrap_p(base_scores, boot[i], scores[0], scores[i])
        elif test == "ar":
            out[i]["p_value"] = paired_randomization(stats[0], stats[i], scores[0], scores[i], swaps)
        if jackknife:
            out[i]["ci"] = distinct_jackknife(stats[i])
        elif confidence:
            out[i]["ci"] = interval(boot[i])
        if tick:
            tick()
    return out


def _draw(cache: dict, key: tuple, make: Callable):
    if key not in cache:
        cache[key] = make()
    return cache[key]


def compare_results(metric, results: Sequence, systems: Sequence[Sequence], config: Resampling,
                    order: Sequence | None = None, draws: dict | None = None, tick: Callable | None = None) -> list:
    """Intervals and p-values of ``metric``'s ``results`` (one ``score_items`` result per system
    of ``systems``, the first the baseline) under ``config``: one ``{"ci", "p_value"}`` per system
    (``p_value`` Holm-adjusted with ``correction="holm"``). ``order[s]``: a row permutation putting
    system s's items in a common order (None: they already are). ValueError when the metric does
    not take the test."""
    config.check(metric)
    vocabulary: dict = {}
    stats = [metric.resampling_stats(r, items, vocabulary) for r, items in zip(results, systems)]
    stats = [widen(s, len(vocabulary) + 1) for s in stats]
    if order is not None:
        stats = [reorder(s, o) for s, o in zip(stats, order)]
    found = compare(stats, [r.score for r in results], confidence=config.confidence, test=config.test,
                    n=config.resamples, seed=config.seed, n_confidence=config.n_confidence, draws=draws, tick=tick)
    if config.correction == "holm":
        for f, p in zip(found, holm([f["p_value"] for f in found])):
            f["p_value"] = p
    return found


def reorder(stats: ItemStats, order) -> ItemStats:
    """The same statistics with the rows (items) in ``order``."""
    inc = stats.incidence[order] if stats.incidence is not None else None
    return ItemStats(stats.table[order], stats.finish, inc)


def compare_systems(metric, systems: Sequence[Sequence], test: str | None = None, n: int | None = None,
                    seed: int = DEFAULT_SEED, confidence: bool = False, n_confidence: int = DEFAULT_BS,
                    correction: str = "none") -> list:
    """Score each system (a list of :class:`multiref.metrics.Item`, the same items in the same
    order for every system; the first is the baseline) with ``metric`` and compare them:
    one ``{"score", "ci", "p_value", "signature"}`` per system, the signature the metric's plus
    the resampling's fields (``test:ar|n:500|seed:99``, :meth:`Resampling.suffix`). Options: as
    :class:`Resampling`.

    Example: ``compare_systems(get_metric("maxbleu"), [base_items, new_items], test="ar")``.
    """
    config = Resampling(test, n, confidence, n_confidence, seed, correction)
    config.check(metric)
    results = [metric.score_items(items) for items in systems]
    found = compare_results(metric, results, systems, config)
    suffix = config.suffix(interval_method(metric))
    return [{"score": r.score, **f, "signature": r.signature + (f"|{suffix}" if suffix else "")}
            for r, f in zip(results, found)]
