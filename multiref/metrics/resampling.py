"""Per-item sufficient statistics of the metrics, for resampling the items of a test set
(:mod:`multiref.metrics.significance`): :class:`ItemStats` and the builders each metric's
``resampling_stats`` uses (a mean of item values, corpus BLEU, corpus Distinct-n). Imports no
metric: the metrics import it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

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
                clip: bool = False, last=None, bleu_api: tuple | None = None) -> Callable:
    """``f(sums) -> scores`` for corpus BLEU (deltaBLEU with ``clip``: negative matches to 0).

    ``k_stats``: orders counted per row; ``last``: the test set's summed ``BleuStats`` (its
    last-segment fields serve NLTK methods 5-7 in the per-row fallback); ``bleu_api``: the BLEU
    module's ``(BleuStats, bleu_from_stats)`` for that fallback (passed in: the metrics import this
    module, not the other way round)."""
    w = np.asarray(weights, dtype=float)
    k = len(w)

    def finish(sums):
        m = sums[:, :k]
        if clip:
            m = np.maximum(m, 0.0)
        den, tot = sums[:, k_stats:k_stats + k], sums[:, 2 * k_stats:2 * k_stats + k]
        hyp, ref = sums[:, 3 * k_stats], sums[:, 3 * k_stats + 1]
        if smoothing not in ("none", "nltk1", "add1"):
            return _bleu_rows(sums, weights, smoothing, brevity_penalty, k_stats, clip, last, bleu_api)
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


def _bleu_rows(sums, weights, smoothing, brevity_penalty, k_stats, clip, last, bleu_api) -> np.ndarray:
    BleuStats, bleu_from_stats = bleu_api  # noqa: N806
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


def _distinct_ratio(sums: np.ndarray) -> np.ndarray:
    total, distinct = sums[:, 0], sums[:, 1]
    return np.where(total > 0, distinct / np.where(total > 0, total, 1), 0.0)


def ead_finish(vocab_size: int) -> Callable:
    """Rows of summed ``(n-gram total, distinct n-grams)`` into EAD scores (Liu et al. 2022):
    distinct over ``V * (1 - ((V-1)/V)^total)``, 0 where there are no n-grams."""
    log_keep = math.log1p(-1.0 / vocab_size) if vocab_size > 1 else -math.inf

    def finish(sums: np.ndarray) -> np.ndarray:
        total, distinct = sums[:, 0], sums[:, 1]
        expected = vocab_size * -np.expm1(total * log_keep) if vocab_size > 1 else np.minimum(total, 1.0)
        return np.where(expected > 0, distinct / np.where(expected > 0, expected, 1), 0.0)

    return finish


def bleu_item_stats(metric, item_stats: Sequence, total, bleu_api: tuple, clip: bool = False) -> ItemStats:
    """:class:`ItemStats` of corpus BLEU (deltaBLEU with ``clip``: negative matched totals to 0
    after summing) from each item's summed ``BleuStats``, with ``metric``'s weights, smoothing and
    brevity penalty; ``total``: the test set's summed ``BleuStats``; ``bleu_api``: as :func:`bleu_finish`.
    Under another convention than NLTK's (sacrebleu's, nlg-eval's), each row is scored by the
    metric's own ``score_stats``."""
    k_stats = len(item_stats[0].matches)
    if getattr(metric, "convention", "nltk") != "nltk":
        return ItemStats(bleu_table(item_stats), convention_finish(metric, k_stats, clip, bleu_api[0]))
    return ItemStats(bleu_table(item_stats), bleu_finish(metric.weights, metric.smoothing, metric.brevity_penalty,
                                                         k_stats, clip=clip, last=total, bleu_api=bleu_api))


def convention_finish(metric, k_stats: int, clip: bool, bleu_stats: type) -> Callable:
    """``f(sums) -> scores`` with ``metric.score_stats`` on each row of summed BLEU statistics
    (BLEU under a named convention: sacrebleu's or pycocoevalcap's formulas, row by row);
    ``bleu_stats``: the ``BleuStats`` class."""

    def finish(sums):
        return np.array([metric.score_stats(_row_stats(row, k_stats, clip, bleu_stats)) for row in sums])

    return finish


def _row_stats(row, k_stats: int, clip: bool, bleu_stats: type):
    """One row of summed statistics as ``BleuStats`` (as ``multiref.metrics.bleu._stats_of`` builds
    a segment's, with the row's own denominators and totals)."""
    matches = tuple(max(x, 0.0) if clip else x for x in row[:k_stats])
    hyp_len, ref_len = row[3 * k_stats], row[3 * k_stats + 1]
    fifth = (matches[4], max(0, hyp_len - 4) or 1) if k_stats >= 5 else None
    return bleu_stats(matches, tuple(row[k_stats:2 * k_stats]), tuple(row[2 * k_stats:3 * k_stats]), hyp_len, ref_len,
                      hyp_len, fifth)
