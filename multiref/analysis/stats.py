"""Statistics for evaluating metrics: correlations with p-values, seeded bootstrap intervals,
point-biserial correlation and the threshold search of DD++ (docs/algorithms.md sections 4, 5, 8).

The reference implementation is ``scipy.stats`` (``pearsonr``, ``spearmanr``, ``kendalltau``
with its default tau-b): the functions here call it and only add the handling of degenerate
input (fewer than 3 points, or a constant side), which gives ``None`` instead of NaN so the
JSON reports stay valid.
"""

from __future__ import annotations

import math
from typing import Sequence

CORRELATIONS = ("pearson", "spearman", "kendall")


def _clean(value) -> float | None:
    value = float(value)
    return None if math.isnan(value) else value


def _degenerate(x: Sequence[float], y: Sequence[float]) -> bool:
    return len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2


def correlation(x: Sequence[float], y: Sequence[float], kind: str = "pearson") -> dict:
    """One correlation of ``x`` with ``y``: ``{"value": r, "p": p_value}``.

    ``kind`` is ``pearson``, ``spearman`` or ``kendall`` (tau-b). With fewer than 3 points or
    a constant side, both are ``None``. Raises ``ValueError`` on unequal lengths or an
    unknown kind.
    """
    if len(x) != len(y):
        raise ValueError(f"correlation: {len(x)} values against {len(y)}")
    if kind not in CORRELATIONS:
        raise ValueError(f"unknown correlation {kind!r}; choose one of: {', '.join(CORRELATIONS)}")
    x = [float(v) for v in x]
    y = [float(v) for v in y]
    if _degenerate(x, y):
        return {"value": None, "p": None}
    from scipy import stats

    func = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[kind]
    result = func(x, y)
    return {"value": _clean(result[0]), "p": _clean(result[1])}


def correlations(x: Sequence[float], y: Sequence[float]) -> dict:
    """Pearson, Spearman and Kendall of ``x`` with ``y``: ``{kind: {"value", "p"}}``."""
    return {kind: correlation(x, y, kind) for kind in CORRELATIONS}


def point_biserial(scores: Sequence[float], labels: Sequence[int]) -> dict:
    """Point-biserial correlation of scores with 0/1 labels (= Pearson, docs/algorithms.md#8-metric-definitions)."""
    bad = {v for v in labels if v not in (0, 1, True, False)}
    if bad:
        raise ValueError(f"point_biserial: labels must be 0 or 1, got {sorted(bad)[:3]}")
    return correlation(scores, [int(v) for v in labels], "pearson")


def _rowwise_pearson(X, Y):
    """Pearson r of each row of X with the same row of Y (NaN for a constant row)."""
    import numpy as np

    xc = X - X.mean(axis=1, keepdims=True)
    yc = Y - Y.mean(axis=1, keepdims=True)
    den = np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc * yc).sum(axis=1) / den
    r[~(den > 1e-15)] = np.nan
    return np.clip(r, -1.0, 1.0)


def _pairwise_kendall(X, Y):
    """Kendall tau-b of each row pair from the signs of all pairwise differences."""
    import numpy as np

    i, j = np.triu_indices(X.shape[1], k=1)
    dx = np.sign(X[:, i] - X[:, j])
    dy = np.sign(Y[:, i] - Y[:, j])
    concordance = (dx * dy).sum(axis=1)
    den = np.sqrt((dx != 0).sum(axis=1) * (dy != 0).sum(axis=1).astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = concordance / den
    tau[den == 0] = np.nan
    return tau


def _rowwise_kendall(X, Y):
    """Kendall tau-b of each row pair; pairwise (in blocks of rows) for rows of up to 200 items,
    scipy per row otherwise."""
    import numpy as np
    from scipy import stats

    n = X.shape[1]
    if n <= 200:
        block = max(1, 2_000_000 // max(1, n * (n - 1) // 2))
        return np.concatenate([_pairwise_kendall(X[k:k + block], Y[k:k + block]) for k in range(0, X.shape[0], block)]
                              or [np.empty(0)])
    out = np.empty(X.shape[0])
    for b in range(X.shape[0]):
        if np.all(X[b] == X[b, 0]) or np.all(Y[b] == Y[b, 0]):
            out[b] = np.nan
        else:
            out[b] = stats.kendalltau(X[b], Y[b])[0]
    return out


def rowwise_correlations(X, Y, kendall: bool = True) -> dict:
    """``{kind: array}`` of the three correlations of each row of X with the row of Y
    (without ``kendall``, only Pearson and Spearman)."""
    from scipy import stats

    out = {"pearson": _rowwise_pearson(X, Y),
           "spearman": _rowwise_pearson(stats.rankdata(X, axis=1), stats.rankdata(Y, axis=1))}
    if kendall:
        out["kendall"] = _rowwise_kendall(X, Y)
    return out


def resample_counts(resamples, n_rows: int):
    """The ``(B, n_rows)`` matrix of how often each row is drawn in each resample of
    :func:`resample_indices`' index matrix ``resamples``."""
    import numpy as np

    counts = np.zeros((resamples.shape[0], n_rows))
    np.add.at(counts, (np.arange(resamples.shape[0])[:, None], resamples), 1.0)
    return counts


class Resampled:
    """One variable's side of the correlations of many bootstrap resamples, from the counts
    ``W`` (:func:`resample_counts`) instead of the resampled rows: equal, up to rounding, to
    :func:`rowwise_correlations` of ``values[resamples]``, in ``O(B n)`` work plus one
    ``(B, n) @ (n, n)`` product for Kendall's tau. With the rows' distinct values sorted and
    ``m_g`` the draws of value g in a resample, its average rank is ``sum_{h<g} m_h + (m_g + 1) / 2``
    and its tied pairs ``sum_g C(m_g, 2)``; Kendall's concordance is ``sum_{a<b} w_a w_b
    sign(x_a - x_b) sign(y_a - y_b)`` (pairs of draws of one row are ties, as in the rows).
    ``like``: another :class:`Resampled` of the same counts, whose transposed copy is shared."""

    def __init__(self, values, counts, like: "Resampled | None" = None):
        import numpy as np

        self.x = np.asarray(values, dtype=float)
        self.w = counts
        self.wt = like.wt if like is not None else np.ascontiguousarray(counts.T)  # (n, B): rows gather fast
        self.w32 = like.w32 if like is not None else counts.astype(np.float32)  # counts and signs: exact
        order = np.argsort(self.x, kind="stable")
        ordered = self.x[order]
        new = np.r_[True, ordered[1:] != ordered[:-1]]
        group = np.empty(len(self.x), dtype=int)
        group[order] = np.cumsum(new) - 1
        drawn = np.add.reduceat(self.wt[order], np.flatnonzero(new), axis=0)  # (groups, B)
        rank = np.cumsum(drawn, axis=0) - (drawn - 1) / 2
        self.ranks = rank[group]  # (n, B)
        self.rank_squares = (drawn * rank * rank).sum(axis=0)
        total = self.wt.sum(axis=0)
        self.total = total
        self.untied = total * (total - 1) / 2 - (drawn * (drawn - 1) / 2).sum(axis=0)
        centred = self.x - self.x.mean()
        self.centred = centred
        self.sums = centred @ self.wt
        self.squares = (centred * centred) @ self.wt
        self.sign = np.sign(self.x[:, None] - self.x[None, :]).astype(np.float32)

    @staticmethod
    def _r(cov, xx, yy):
        import numpy as np

        den = np.sqrt(np.maximum(xx, 0) * np.maximum(yy, 0))
        with np.errstate(invalid="ignore", divide="ignore"):
            r = cov / den
        r[~(den > 1e-12)] = np.nan
        return np.clip(r, -1.0, 1.0)

    def correlations(self, other: "Resampled") -> dict:
        """``{kind: (B,) array}`` as :func:`rowwise_correlations` gives them."""
        import numpy as np

        n = self.total
        cov = (self.centred * other.centred) @ self.wt - self.sums * other.sums / n
        pearson = self._r(cov, self.squares - self.sums ** 2 / n, other.squares - other.sums ** 2 / n)
        mean_rank = (n + 1) / 2  # the ranks of N draws sum to N (N + 1) / 2
        cov = (self.wt * self.ranks * other.ranks).sum(axis=0) - n * mean_rank * mean_rank
        spearman = self._r(cov, self.rank_squares - n * mean_rank ** 2, other.rank_squares - n * mean_rank ** 2)
        concordance = ((self.w32 @ (self.sign * other.sign)) * self.w32).sum(axis=1, dtype=float) / 2
        den = np.sqrt(self.untied * other.untied)
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = concordance / den
        tau[~(den > 0)] = np.nan
        return {"pearson": pearson, "spearman": spearman, "kendall": np.clip(tau, -1.0, 1.0)}


def _pair_sums(a, b, swap, pair_value):
    """For each row s of the 0/1 matrix ``swap``: ``sum_{i<j} pair_value(x_i, x_j)`` where
    ``x = where(s, b, a)``, as a quadratic form in s (so no row is built).

    ``pair_value(u, v)`` gives the ``(n, n)`` matrix of the pair function for value vectors u
    (item i) and v (item j). A pair's value is ``F00 + s_i (F10 - F00) + s_j (F01 - F00) +
    s_i s_j (F11 - F10 - F01 + F00)`` with ``Fxy`` the value when i takes side x and j side y.
    """
    import numpy as np

    upper = np.triu(np.ones((len(a), len(a))), k=1)
    f00, f01 = pair_value(a, a) * upper, pair_value(a, b) * upper
    f10, f11 = pair_value(b, a) * upper, pair_value(b, b) * upper
    linear = (f10 - f00).sum(axis=1) + (f01 - f00).sum(axis=0)
    s = swap.astype(float)
    return f00.sum() + s @ linear + ((s @ (f11 - f10 - f01 + f00)) * s).sum(axis=1)


def _swapped_kendall(a, b, h, swap):
    """Kendall tau-b of ``where(swap_row, b, a)`` with ``h`` for every row of ``swap``, then of
    ``a`` itself first (the row order of :func:`permutation_test`); O(n^2) memory, so rows of
    more than 3000 items go to :func:`_rowwise_kendall`."""
    import numpy as np

    swap = np.vstack([np.zeros((1, len(a)), dtype=bool), swap])
    if len(a) > 3000:
        return _rowwise_kendall(np.where(swap, b, a), np.broadcast_to(h, swap.shape))
    sh = np.sign(h[:, None] - h[None, :])
    concordance = _pair_sums(a, b, swap, lambda u, v: np.sign(u[:, None] - v[None, :]) * sh)
    untied_x = _pair_sums(a, b, swap, lambda u, v: (u[:, None] != v[None, :]).astype(float))
    untied_h = float(np.triu(sh != 0, k=1).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = concordance / np.sqrt(untied_x * untied_h)
    tau[~(untied_x * untied_h > 0)] = np.nan
    return np.clip(tau, -1.0, 1.0)


def resample_indices(n_rows: int, resamples: int, seed: int, strata: Sequence | None = None):
    """A ``(resamples, n_rows)`` matrix of row indices drawn with replacement (numpy PCG64(seed)).

    With ``strata`` (one label per row) each stratum is resampled within itself and its
    columns are contiguous, in sorted label order; returns ``(matrix, [(label, columns)])``.
    """
    import numpy as np

    rng = np.random.Generator(np.random.PCG64(seed))
    if strata is None:
        return rng.integers(0, n_rows, (resamples, n_rows)), [(None, slice(0, n_rows))]
    members: dict = {}
    for i, label in enumerate(strata):
        members.setdefault(label, []).append(i)
    blocks, spans, start = [], [], 0
    for label in sorted(members, key=str):
        rows = np.asarray(members[label])
        blocks.append(rows[rng.integers(0, len(rows), (resamples, len(rows)))])
        spans.append((label, slice(start, start + len(rows))))
        start += len(rows)
    return np.concatenate(blocks, axis=1), spans


def _intervals(samples: dict, confidence: float) -> dict:
    import numpy as np

    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    low_q, high_q = 50 * (1 - confidence), 50 * (1 + confidence)
    out = {}
    for name, arr in samples.items():
        arr = np.asarray(arr, dtype=float)
        arr = arr[~np.isnan(arr)]
        out[name] = None if arr.size == 0 else [float(np.percentile(arr, low_q)), float(np.percentile(arr, high_q))]
    return out


def bootstrap_correlations(x, y, resamples: int, seed: int, confidence: float = 0.95) -> dict:
    """Seeded percentile bootstrap intervals ``{kind: [low, high]}`` of the three correlations.

    Rows are resampled with replacement ``resamples`` times; the interval is the
    ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` percentiles of the defined values
    (``None`` if no resample gives one). The same seed gives the same intervals.
    """
    import numpy as np

    if resamples <= 0:
        return {}
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    idx, _ = resample_indices(len(xa), resamples, seed)
    return _intervals(rowwise_correlations(xa[idx], ya[idx]), confidence)


def system_means(values: Sequence[float], systems: Sequence[str]) -> dict:
    """Mean of ``values`` per system label, as ``{system: mean}`` in sorted system order."""
    sums: dict = {}
    for v, s in zip(values, systems):
        total, count = sums.get(s, (0.0, 0))
        sums[s] = (total + float(v), count + 1)
    return {s: sums[s][0] / sums[s][1] for s in sorted(sums)}


def bootstrap_system_correlations(x, y, systems, resamples: int, seed: int, confidence: float = 0.95) -> dict:
    """Bootstrap intervals of the system-level correlations (means per system of x and y).

    Rows are resampled within each system (so every system keeps its size), then the
    system means are correlated.
    """
    import numpy as np

    if resamples <= 0:
        return {}
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    idx, spans = resample_indices(len(xa), resamples, seed, strata=list(systems))
    mx = np.stack([xa[idx[:, cols]].mean(axis=1) for _, cols in spans], axis=1)
    my = np.stack([ya[idx[:, cols]].mean(axis=1) for _, cols in spans], axis=1)
    return _intervals(rowwise_correlations(mx, my), confidence)


def threshold_grid(start: float = 0.0, stop: float = 1.0, step: float = 0.01) -> list:
    """The thresholds ``start, start + step, ..., stop`` (DD++: 0 to 1 in steps of 0.01)."""
    if step <= 0 or stop < start:
        raise ValueError(f"bad threshold grid: start={start} stop={stop} step={step}")
    count = int(round((stop - start) / step))
    return [round(start + i * step, 10) for i in range(count + 1)]


def accuracy_at(scores: Sequence[float], labels: Sequence[int], threshold: float) -> float:
    """Share of candidates classified right when ``score >= threshold`` means positive."""
    if not scores:
        raise ValueError("accuracy_at: no scores")
    right = sum(1 for s, y in zip(scores, labels) if (s >= threshold) == bool(y))
    return right / len(scores)


def best_threshold(scores: Sequence[float], labels: Sequence[int], grid: Sequence[float] | None = None) -> tuple:
    """The threshold of ``grid`` with the highest accuracy on (scores, labels) (DD++ section 5).

    Returns ``(threshold, accuracy)``; ties go to the smallest threshold. The default grid is
    0 to 1 in steps of 0.01.
    """
    import numpy as np

    grid = threshold_grid() if grid is None else list(grid)
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=bool)
    if s.size == 0:
        raise ValueError("best_threshold: no scores")
    best = (grid[0], -1.0)
    for t in grid:
        acc = float(np.mean((s >= t) == y))
        if acc > best[1] + 1e-12:
            best = (t, acc)
    return best


# -- intervals and tests for correlations --------------------------------------------------

def fisher_interval(r, n: int, confidence: float = 0.95) -> list | None:
    """Fisher-z interval ``[low, high]`` of a Pearson correlation ``r`` from ``n`` pairs.

    Source: Fisher (1921); ``tanh(atanh(r) -+ z / sqrt(n - 3))`` with ``z`` the normal
    quantile of ``(1 + confidence) / 2`` (as R's ``cor.test``). ``None`` when ``r`` is None or
    ``n < 4``; ``|r| = 1`` gives ``[r, r]``.
    """
    from scipy import stats as sps

    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if r is None or n < 4:
        return None
    r = float(r)
    if abs(r) >= 1:
        return [r, r]
    half = sps.norm.ppf(0.5 + confidence / 2) / math.sqrt(n - 3)
    z = math.atanh(r)
    return [math.tanh(z - half), math.tanh(z + half)]


def williams_test(r12: float, r13: float, r23: float, n: int) -> tuple:
    """Williams' test of ``r12 = r13`` for two dependent correlations sharing variable 1.

    Variable 1 is the human score, 2 and 3 the two metrics; ``r23`` is the correlation of the
    metrics with each other and ``n`` the number of items. Returns ``(t, p)``: Williams' t in
    the form of Steiger (1980, "Tests for comparing elements of a correlation matrix",
    Psychological Bulletin 87, eq. 7) with ``n - 3`` degrees of freedom and a two-sided p,
    as R's ``psych::r.test(n, r12, r13, r23)`` (its example: n=103, .4, .5, .1 gives
    t=-0.89, p=0.37) and Graham & Baldwin (2014) for MT metrics::

        t = (r12 - r13) sqrt((n - 1)(1 + r23)) / sqrt(2 (n - 1)/(n - 3) |R| + rbar^2 (1 - r23)^3)

    with ``|R| = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23`` and ``rbar = (r12 + r13) / 2``.
    Raises ValueError when ``n < 4``, a correlation is outside [-1, 1], or the three cannot be
    correlations of one data set (``|R| < 0``).
    """
    from scipy import stats as sps

    if n < 4:
        raise ValueError(f"williams_test: needs at least 4 items, got {n}")
    for name, r in (("r12", r12), ("r13", r13), ("r23", r23)):
        if r is None or not -1 <= r <= 1:
            raise ValueError(f"williams_test: {name} must be a correlation in [-1, 1], got {r}")
    det = 1 - r12 * r12 - r13 * r13 - r23 * r23 + 2 * r12 * r13 * r23
    if det < -1e-9:
        raise ValueError(f"williams_test: r12={r12}, r13={r13}, r23={r23} are not the correlations of one data set")
    if r12 == r13:
        return 0.0, 1.0
    rbar = (r12 + r13) / 2
    den = 2 * (n - 1) / (n - 3) * max(det, 0.0) + rbar * rbar * (1 - r23) ** 3
    if den <= 0:  # r23 = 1 and |R| = 0: the metrics are one variable, yet r12 != r13
        return math.copysign(math.inf, r12 - r13), 0.0
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(den)
    return t, float(2 * sps.t.sf(abs(t), n - 3))


def _standardize(values):
    """``values`` (1-D) centred and scaled to unit variance; None when constant."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    sd = v.std()
    return None if not sd > 1e-15 else (v - v.mean()) / sd


def _group_means(X, systems):
    """Column means of X (``(rows, items)``) per system label: ``(rows, systems)`` in sorted label order."""
    import numpy as np

    names = sorted(set(systems), key=str)
    member = np.array([[s == name for name in names] for s in systems], dtype=float)
    return (X @ member) / member.sum(axis=0)


def permutation_test(a, b, human, permutations: int, seed: int, systems=None) -> dict:
    """Paired permutation test of ``corr(a, human) = corr(b, human)`` for the three correlations.

    ``a`` and ``b`` are two metrics' scores of the same items, ``human`` their human scores. In
    each of ``permutations`` seeded rounds (numpy PCG64(seed)) every item's two scores are
    swapped with probability 1/2 (approximate randomization, Noreen 1989; the form Deutsch et
    al. 2021 use for summarization metrics, and sacrebleu's paired test for MT). So that the
    two metrics share a scale, what is swapped is standardized: z-scores for Pearson, z-scores
    of the ranks for Spearman (then Pearson with the human ranks, so the observed statistic is
    the difference of Spearman's rho) and Kendall (whose tau they do not change). With
    ``systems`` (system level) all rows of a system swap together and the correlations are
    computed on the means per system of the z-scores, so with k systems no p is below
    ``2 / 2^k`` (swapping single rows would test a far stronger null and give tiny p-values on
    5 systems). Returns ``{kind: {"difference": corr(a) - corr(b), "p": p}}`` with the
    two-sided ``p = (1 + #{|d*| >= |d|}) / (1 + permutations)``; both None when a side is
    constant or undefined.
    """
    import numpy as np

    h = np.asarray(human, dtype=float)
    if len(h) != len(a) or len(a) != len(b):
        raise ValueError(f"permutation_test: {len(a)}, {len(b)} and {len(h)} values")
    if _standardize(a) is None or _standardize(b) is None or permutations <= 0:
        return {kind: {"difference": None, "p": None} for kind in CORRELATIONS}
    rng = np.random.Generator(np.random.PCG64(seed))
    if systems is None:
        swap = rng.random((permutations, len(h))) < 0.5
        ca, cb = _response_level_null(a, b, h, swap)
    else:  # a system's rows swap together: the unit of the system level is the system
        codes = {name: i for i, name in enumerate(sorted(set(systems), key=str))}
        swap = (rng.random((permutations, len(codes))) < 0.5)[:, [codes[s] for s in systems]]
        ca, cb = _system_level_null(_standardize(a), _standardize(b), h, swap, systems)
    out = {}
    for kind in CORRELATIONS:
        d = ca[kind] - cb[kind]  # row 0: the observed difference
        if np.isnan(d[0]):
            out[kind] = {"difference": None, "p": None}
            continue
        null = d[1:][~np.isnan(d[1:])]
        extreme = int(np.sum(np.abs(null) >= abs(d[0]) - 1e-12))
        out[kind] = {"difference": float(d[0]), "p": (1 + extreme) / (1 + null.size)}
    return out


def _response_level_null(a, b, h, swap) -> tuple:
    """The three correlations with ``h`` of the observed and of each swapped ``a`` and ``b``."""
    import numpy as np
    from scipy import stats as sps

    za, zb = _standardize(a), _standardize(b)
    ra, rb = _standardize(sps.rankdata(a)), _standardize(sps.rankdata(b))
    rh = sps.rankdata(h)
    shape = (len(swap) + 1, len(h))
    out = []
    for (x, y), (rx, ry) in (((za, zb), (ra, rb)), ((zb, za), (rb, ra))):
        out.append({"pearson": _rowwise_pearson(np.vstack([x, np.where(swap, y, x)]), np.broadcast_to(h, shape)),
                    "spearman": _rowwise_pearson(np.vstack([rx, np.where(swap, ry, rx)]), np.broadcast_to(rh, shape)),
                    "kendall": _swapped_kendall(rx, ry, h, swap)})
    return tuple(out)


def _system_level_null(za, zb, h, swap, systems) -> tuple:
    """As :func:`_response_level_null` on the means per system of the (swapped) z-scores."""
    import numpy as np

    pa = _group_means(np.vstack([za, np.where(swap, zb, za)]), systems)
    pb = _group_means(np.vstack([zb, np.where(swap, za, zb)]), systems)
    hh = np.broadcast_to(_group_means(h[None, :], systems), pa.shape)
    return rowwise_correlations(pa, hh), rowwise_correlations(pb, hh)


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> list | None:
    """Wilson score interval ``[low, high]`` of a proportion (Wilson 1927; Agresti & Coull 1998):
    ``(p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)``. It treats the trials as
    independent. None when ``trials`` is 0."""
    from scipy import stats as sps

    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if trials <= 0:
        return None
    z = sps.norm.ppf(0.5 + confidence / 2)
    p, n = successes / trials, trials
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return [max(0.0, (centre - half) / (1 + z * z / n)), min(1.0, (centre + half) / (1 + z * z / n))]
