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
  ``(#{|a_t - b_t| > |sys - base|} + 1) / (n + 1)``;
- one deliberate difference: when the observed difference is exactly zero (the system is
  the baseline, or scores the same), p is 1.0, not sacrebleu's ``1 / (n + 1)`` from its
  strict-greater count: a system cannot differ significantly from a copy of itself;
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

from multiref.util.defaults import SEED as DEFAULT_SEED
DEFAULT_BS = 1000
DEFAULT_AR = 10000
#: resamples per block of a matrix product (bounds memory: block x items x 8 bytes)
BLOCK = 250


@dataclass
class ItemStats:
    """Per-item sufficient statistics of one metric for one system.

    ``table`` (items x d) is additive; ``finish`` turns summed rows (b x d), plus a last
    column of distinct counts when ``incidence`` is set, into b scores (NaN: no score);
    ``incidence`` is a sparse (items x n-grams) 0/1 matrix for corpus Distinct-n.
    """

    table: np.ndarray
    finish: Callable
    incidence: object = None

    @property
    def interval_method(self) -> str:
        """``"jackknife"`` for corpus Distinct-n (:func:`distinct_jackknife`), else ``"percentile"``."""
        return "jackknife" if self.incidence is not None else "percentile"

    def scores(self, weights: np.ndarray) -> np.ndarray:
        """Scores of the pseudo-test-sets whose item multiplicities are the rows of ``weights``."""
        return pseudo_scores([(weights, self)])


def pseudo_scores(parts: Sequence[tuple]) -> np.ndarray:
    """Scores of pseudo-systems built from ``(weights (b x items), ItemStats)`` parts: the
    statistics of part k weighted by its rows, summed over parts (all parts share ``finish``)."""
    sums = sum(w @ s.table for w, s in parts)
    first = parts[0][1]
    if first.incidence is not None:
        sums = np.column_stack([sums, distinct_present(parts)])
    return first.finish(sums)


def distinct_present(parts: Sequence[tuple]) -> np.ndarray:
    """Per row, the number of n-gram columns some item with a positive weight holds.

    With one part (the bootstrap), an n-gram held by a single item is present exactly when that
    item is drawn: those are counted per item with one matrix-vector product, and only the
    n-grams several items share go through the sparse product."""
    if len(parts) == 1:
        return _distinct_present_one(*parts[0])
    return _distinct_present_sparse(parts)


def _distinct_present_one(weights: np.ndarray, stats: ItemStats) -> np.ndarray:
    inc = stats.incidence
    degree = np.bincount(inc.indices, minlength=inc.shape[1])
    rows = np.repeat(np.arange(inc.shape[0]), np.diff(inc.indptr))
    alone = degree[inc.indices] == 1
    per_item = np.bincount(rows[alone], minlength=inc.shape[0]).astype(float)
    out = (weights > 0).astype(float) @ per_item  # (a boolean matrix would not use BLAS)
    shared = np.flatnonzero(degree > 1)
    if len(shared):
        out = out + _distinct_present_sparse([(weights, ItemStats(stats.table, stats.finish, inc[:, shared]))])
    return out


def _distinct_present_sparse(parts: Sequence[tuple]) -> np.ndarray:
    incs = [s.incidence for _, s in parts]
    used = np.unique(np.concatenate([inc.indices for inc in incs]))
    incs = [inc[:, used].T.tocsr() for inc in incs]  # (n-grams x items)
    rows = parts[0][0].shape[0]
    out = np.empty(rows)
    for lo in range(0, rows, BLOCK):
        acc = None
        for (w, _), inc in zip(parts, incs):
            block = inc @ np.ascontiguousarray((w[lo:lo + BLOCK] > 0).T, dtype=np.float32)
            acc = block if acc is None else acc + block
        out[lo:lo + BLOCK] = (acc > 0).sum(axis=0)
    return out


# -- building the statistics --------------------------------------------------------------


def mean_stats(values: Sequence, counts: Sequence | None = None) -> ItemStats:
    """Statistics of a mean of item values (None = no score); ``counts`` weights each item's
    value (e.g. its number of outputs, for a mean over outputs)."""
    valid = np.array([v is not None and not (isinstance(v, float) and math.isnan(v)) for v in values])
    vals = np.array([float(v) if ok else 0.0 for v, ok in zip(values, valid)])
    weight = np.asarray(counts, dtype=float) if counts is not None else np.ones(len(vals))
    weight = np.where(valid, weight, 0.0)
    return ItemStats(np.column_stack([vals * weight, weight]), _ratio)


def _ratio(sums: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sums[:, 1] > 0, sums[:, 0] / np.where(sums[:, 1] > 0, sums[:, 1], 1), np.nan)


def bleu_table(item_stats: Sequence) -> np.ndarray:
    """``BleuStats`` per item (summed over its outputs) as rows: matches, denominators, totals
    (one column per counted order), hypothesis length, closest reference length."""
    return np.array([(*s.matches, *s.denominators, *s.totals, s.hyp_len, s.ref_len) for s in item_stats],
                    dtype=float)


def bleu_finish(weights: Sequence[float], smoothing: str, brevity_penalty: bool, k_stats: int,
                clip: bool = False, last=None) -> Callable:
    """``f(sums) -> scores`` for corpus BLEU (deltaBLEU with ``clip``: negative matches to 0).

    ``k_stats``: orders counted per row; ``last``: the test set's summed ``BleuStats`` (its
    last-segment fields serve NLTK methods 5-7 in the per-row fallback)."""
    w = np.asarray(weights, dtype=float)
    k = len(w)

    def finish(sums):
        m = sums[:, :k]
        if clip:
            m = np.maximum(m, 0.0)
        den, tot = sums[:, k_stats:k_stats + k], sums[:, 2 * k_stats:2 * k_stats + k]
        hyp, ref = sums[:, 3 * k_stats], sums[:, 3 * k_stats + 1]
        if smoothing not in ("none", "nltk1", "add1"):
            return _bleu_rows(sums, weights, smoothing, brevity_penalty, k_stats, clip, last)
        with np.errstate(divide="ignore", invalid="ignore"):
            if smoothing == "add1":
                p = (m + 1.0) / (tot + 1.0)
            elif smoothing == "nltk1":
                p = np.where(m == 0, 0.1, m) / den
            else:
                p = m / den
            logs = np.where(w > 0, w * np.log(np.where(p > 0, p, 1.0)), 0.0).sum(axis=1)
            score = np.exp(logs)
            if smoothing == "none":
                score = np.where(((m == 0) & (w > 0)).any(axis=1), 0.0, score)
            if smoothing != "add1":
                score = np.where(m[:, 0] == 0, 0.0, score)
            if brevity_penalty:
                bp = np.where(hyp > ref, 1.0, np.where(hyp == 0, 0.0, np.exp(1 - ref / np.where(hyp > 0, hyp, 1))))
                score = bp * score
        return score

    return finish


def _bleu_rows(sums, weights, smoothing, brevity_penalty, k_stats, clip, last) -> np.ndarray:
    from multiref.metrics.bleu import BleuStats, bleu_from_stats

    out = np.empty(len(sums))
    for i, row in enumerate(sums):
        m = tuple(max(x, 0.0) if clip else x for x in row[:k_stats])
        st = BleuStats(m, tuple(row[k_stats:2 * k_stats]), tuple(row[2 * k_stats:3 * k_stats]),
                       row[3 * k_stats], row[3 * k_stats + 1], last.last_hyp_len if last else row[3 * k_stats],
                       last.last_p5 if last else None)
        out[i] = bleu_from_stats(st, weights, smoothing, brevity_penalty)
    return out


def distinct_stats(item_grams: Sequence[tuple], vocabulary: dict) -> ItemStats:
    """Corpus Distinct-n: ``item_grams`` is ``(distinct n-grams, n-gram total)`` per item;
    ``vocabulary`` (n-gram -> column) is shared by the systems compared, so their incidence
    matrices have the same columns."""
    from scipy import sparse

    indptr, indices, totals = [0], [], []
    for grams, total in item_grams:
        indices.extend(vocabulary.setdefault(g, len(vocabulary)) for g in grams)
        indptr.append(len(indices))
        totals.append(float(total))
    n = len(item_grams)
    data = np.ones(len(indices), dtype=np.float32)
    incidence = sparse.csr_matrix((data, np.asarray(indices, dtype=np.int64), np.asarray(indptr)),
                                  shape=(n, max(1, len(vocabulary) + 1)))
    return ItemStats(np.asarray(totals).reshape(n, 1), _distinct_ratio, incidence)


def widen(stats: ItemStats, columns: int) -> ItemStats:
    """The same statistics with an incidence matrix of ``columns`` columns (a grown vocabulary)."""
    if stats.incidence is None or stats.incidence.shape[1] >= columns:
        return stats
    inc = stats.incidence
    inc = type(inc)((inc.data, inc.indices, inc.indptr), shape=(inc.shape[0], columns))
    return ItemStats(stats.table, stats.finish, inc)


#: the normal quantile of a two-sided 95% interval
Z95 = 1.959963984540054


def distinct_jackknife(stats: ItemStats) -> tuple | None:
    """95% delete-one jackknife interval of corpus Distinct-n: ``score +- 1.96 SE``, clipped to [0, 1].

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
    score = _distinct_ratio(np.array([[total, distinct]]))[0]
    loo = _distinct_ratio(np.column_stack([total - totals, distinct - alone]))
    se = math.sqrt((n - 1) / n * float(np.sum((loo - loo.mean()) ** 2)))
    return max(0.0, score - Z95 * se), min(1.0, score + Z95 * se)


def _distinct_ratio(sums: np.ndarray) -> np.ndarray:
    total, distinct = sums[:, 0], sums[:, 1]
    return np.where(total > 0, distinct / np.where(total > 0, total, 1), 0.0)


def interval_method(metric) -> str:
    """How :func:`compare` computes ``metric``'s 95% interval: ``"jackknife"`` for corpus
    Distinct-n (``distinct``: not a mean of item values, see :func:`distinct_jackknife`), else
    ``"percentile"`` (the percentile bootstrap, as sacrebleu)."""
    return "jackknife" if getattr(metric, "name", "") == "distinct" else "percentile"


def metric_stats(metric, score, items, vocabulary: dict | None = None) -> ItemStats:
    """The :class:`ItemStats` of ``metric``'s result ``score`` on ``items`` (the result must come
    from ``metric.score_items(items)``)."""
    kind = getattr(score, "item_stats", None)
    if kind is not None and getattr(metric, "name", "") == "distinct":
        return distinct_stats(kind, vocabulary if vocabulary is not None else {})
    if kind is not None:
        from multiref.metrics.bleu import sum_stats

        table = bleu_table(kind)
        k_stats = len(kind[0].matches)
        return ItemStats(table, bleu_finish(metric.weights, metric.smoothing, metric.brevity_penalty, k_stats,
                                            clip=metric.name == "delta_bleu", last=sum_stats(kind)))
    if getattr(metric, "name", "") == "distinct_per_utterance":
        return mean_stats(score.per_item, [len(item.hypotheses) for item in items])
    return mean_stats(score.per_item)


# -- the tests ------------------------------------------------------------------------------


def bootstrap_counts(n_items: int, n: int, seed: int | None = DEFAULT_SEED) -> np.ndarray:
    """``(n, n_items)`` multiplicities of each item in ``n`` bootstrap resamples, from
    sacrebleu's draw ``default_rng(seed).choice(n_items, (n, n_items))``."""
    if n_items < 1 or n < 1:
        raise ValueError(f"bootstrap: need at least one item and one resample, got {n_items} and {n}")
    idxs = np.random.default_rng(seed).choice(n_items, size=(n, n_items), replace=True)
    flat = (np.arange(n)[:, None] * n_items + idxs).ravel()
    return np.bincount(flat, minlength=n * n_items).reshape(n, n_items).astype(float)


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


def p_value(null_stats: np.ndarray, observed: float) -> float | None:
    """``(#{null_stats > observed} + 1) / (n + 1)``; 1.0 when ``observed`` is 0; None with NaNs."""
    if observed is None or math.isnan(observed) or np.isnan(null_stats).any():
        return None
    if observed == 0:
        return 1.0
    return (int(np.sum(null_stats > observed)) + 1) / (len(null_stats) + 1)


def _observed(base_score, sys_score) -> float:
    if base_score is None or sys_score is None:
        return float("nan")
    return abs(float(sys_score) - float(base_score))


def paired_bootstrap(base: ItemStats, system: ItemStats, base_score, sys_score, counts: np.ndarray,
                     base_scores: np.ndarray | None = None) -> tuple:
    """``(p, system's bootstrap scores)``: sacrebleu's paired bootstrap on shared resamples ``counts``.
    ``base_scores``: the baseline's scores on ``counts``, when already computed."""
    sys_b = system.scores(counts)
    base_b = base.scores(counts) if base_scores is None else base_scores
    diffs = np.abs(sys_b - base_b)
    return p_value(diffs - diffs.mean(), _observed(base_score, sys_score)), sys_b


def paired_randomization(base: ItemStats, system: ItemStats, base_score, sys_score, swaps: np.ndarray) -> float:
    """sacrebleu's paired approximate randomization: p for ``|sys - base|`` over the ``swaps``."""
    diffs = np.empty(len(swaps))
    for lo in range(0, len(swaps), BLOCK):
        sel = swaps[lo:lo + BLOCK].astype(float)
        a = pseudo_scores([(sel, base), (1.0 - sel, system)])
        b = pseudo_scores([(1.0 - sel, base), (sel, system)])
        diffs[lo:lo + BLOCK] = np.abs(a - b)
    return p_value(diffs, _observed(base_score, sys_score))


# -- several systems at once ------------------------------------------------------------------

TESTS = ("bs", "ar")


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
    counts = _draw(draws, ("bs", n_items, bs_n, seed), lambda: bootstrap_counts(n_items, bs_n, seed)) if need_bs else None
    base_scores = stats[0].scores(counts) if need_bs else None
    if confidence:
        out[0]["ci"] = distinct_jackknife(stats[0]) if jackknife else interval(base_scores)
    swaps = _draw(draws, ("ar", n_items, n or DEFAULT_AR, seed),
                  lambda: ar_swaps(n_items, n or DEFAULT_AR, seed)) if test == "ar" else None
    if tick:
        tick()
    for i in range(1, len(stats)):
        sys_scores = None
        if test == "bs":
            out[i]["p_value"], sys_scores = paired_bootstrap(stats[0], stats[i], scores[0], scores[i], counts,
                                                             base_scores)
        elif test == "ar":
            out[i]["p_value"] = paired_randomization(stats[0], stats[i], scores[0], scores[i], swaps)
        if jackknife:
            out[i]["ci"] = distinct_jackknife(stats[i])
        elif confidence:
            out[i]["ci"] = interval(sys_scores if sys_scores is not None else stats[i].scores(counts))
        if tick:
            tick()
    return out


def _draw(cache: dict, key: tuple, make: Callable):
    if key not in cache:
        cache[key] = make()
    return cache[key]


def compare_systems(metric, systems: Sequence[Sequence], **options) -> list:
    """Score each system (a list of :class:`multiref.metrics.Item`, the same items in the same
    order for every system; the first is the baseline) with ``metric`` and compare them:
    one ``{"score", "ci", "p_value", "signature"}`` per system. ``options``: as :func:`compare`.

    Example: ``compare_systems(get_metric("maxbleu"), [base_items, new_items], test="bs")``.
    """
    results = [metric.score_items(items) for items in systems]
    vocabulary: dict = {}
    stats = [metric_stats(metric, r, items, vocabulary) for r, items in zip(results, systems)]
    stats = [widen(s, len(vocabulary) + 1) for s in stats]
    found = compare(stats, [r.score for r in results], **options)
    return [{"score": r.score, **f, "signature": r.signature} for r, f in zip(results, found)]
