"""Correlation with human ratings as the number of references grows (docs/algorithms.md#4-multiref-dd).

For k = 1 .. K (K = the largest number of references of any response), each response is
scored against the first k references of a random order of its references (all of them when
it has fewer than k), and the metric is correlated with the human ratings. This is repeated
for ``orders`` random orders, each seeded from ``seed`` and the order index (numpy PCG64), and
the correlations are averaged (their standard deviation is reported too).

Bootstrap bands (``bootstrap > 0``): the rated responses are resampled with replacement
(numpy PCG64(seed), the same resamples for every k and order); in each resample the
correlation is computed for every order and averaged over the orders; the band is the
percentile interval ``{kind}_ci`` of that mean (the uncertainty of the curve from the sample
of responses, not from the orders).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from multiref.analysis import stats
from multiref.analysis.ratings import RatedResponse
from multiref.analysis.scoring import MetricScorer
from multiref.analysis.config import BOOTSTRAP, CONFIDENCE, ORDERS
from multiref.util.defaults import SEED


@dataclass(frozen=True)
class RefcountOptions:
    orders: int = ORDERS
    seed: int = SEED
    aggregate: str = "auto"
    bootstrap: int = BOOTSTRAP
    confidence: float = CONFIDENCE


def reference_orders(rows: Sequence[RatedResponse], orders: int, seed: int) -> list:
    """``orders`` lists, one permutation of each row's references per order (seeded)."""
    import numpy as np

    out = []
    for k in range(orders):
        rng = np.random.Generator(np.random.PCG64([seed, k]))
        out.append([[r.references[i] for i in rng.permutation(len(r.references))] for r in rows])
    return out


def refcount_curve(scorer: MetricScorer, rows: Sequence[RatedResponse],
                   options: RefcountOptions = RefcountOptions(), on_point=None) -> list:
    """``[{"references": k, "pearson": mean, "pearson_std": sd, ...}, ...]`` for k = 1..K;
    ``on_point()`` is called after each k (progress). A response is scored once per distinct
    multiset of references (every aggregation is blind to the references' order), however many
    orders give it."""
    import numpy as np

    if options.orders < 1:
        raise ValueError(f"orders must be at least 1, got {options.orders}")
    how = scorer.multi_aggregation(options.aggregate)
    ratings = [r.rating for r in rows]
    permuted = reference_orders(rows, options.orders, options.seed)
    most = max(len(r.references) for r in rows)
    resamples = stats.resample_indices(len(rows), options.bootstrap, options.seed)[0] if options.bootstrap > 0 else None
    human = stats.Resampled(ratings, stats.resample_counts(resamples, len(rows))) if resamples is not None else None
    curve, cache = [], {}

    def score(i: int, refs: list) -> float:
        key = (i, tuple(sorted(refs)))
        if key not in cache:
            cache[key] = scorer.aggregate(rows[i].response, refs, how)
        return cache[key]

    for k in range(1, most + 1):
        by_kind: dict = {kind: [] for kind in stats.CORRELATIONS}
        matrix = []
        for order in permuted:
            scores = [score(i, refs[:k]) for i, refs in enumerate(order)]
            matrix.append(scores)
            for kind, result in stats.correlations(scores, ratings).items():
                by_kind[kind].append(np.nan if result["value"] is None else result["value"])
        point = {"references": k, "responses_with_k": sum(1 for r in rows if len(r.references) >= k)}
        for kind, vals in by_kind.items():
            arr = np.asarray(vals, dtype=float)
            ok = arr[~np.isnan(arr)]
            point[kind] = float(ok.mean()) if ok.size else None
            point[f"{kind}_std"] = float(ok.std()) if ok.size else None
        if resamples is not None:
            for kind, ci in band(np.asarray(matrix), ratings, resamples, options.confidence, human).items():
                point[f"{kind}_ci"] = ci
        curve.append(point)
        if on_point is not None:
            on_point()
    return curve


def band(scores, ratings, resamples, confidence: float, counts=None) -> dict:
    """``{kind: [low, high]}``: percentile interval of the mean over orders of the correlation.

    ``scores`` is ``(orders, rows)``; ``resamples`` a ``(B, rows)`` index matrix from
    :func:`multiref.analysis.stats.resample_indices` (``counts``: its
    :func:`~multiref.analysis.stats.resample_counts`, or a
    :class:`~multiref.analysis.stats.Resampled` of the ratings, computed once by the caller).
    The correlations of each resample come from the counts (:class:`~multiref.analysis.stats.Resampled`:
    equal to correlating the resampled rows, a few matrix products instead of a thousand
    Kendall taus). Orders whose correlation is undefined in a resample are left out of that
    resample's mean.
    """
    import numpy as np

    human = counts if isinstance(counts, stats.Resampled) else stats.Resampled(
        ratings, stats.resample_counts(resamples, len(ratings)) if counts is None else counts)
    distinct, which = np.unique(np.asarray(scores, dtype=float), axis=0, return_inverse=True)
    found = [stats.Resampled(order, human.w, like=human).correlations(human) for order in distinct]  # orders giving equal
    per_order = [found[i] for i in np.ravel(which)]  # scores (every order at k = all references) computed once
    means = {}
    for kind in stats.CORRELATIONS:
        stacked = np.vstack([c[kind] for c in per_order])  # (orders, B)
        defined = ~np.isnan(stacked)
        with np.errstate(invalid="ignore", divide="ignore"):
            means[kind] = np.where(defined.any(axis=0), np.nansum(stacked, axis=0) / defined.sum(axis=0), np.nan)
    return stats._intervals(means, confidence)
