"""Statistics for evaluating metrics: correlations with p-values, seeded bootstrap intervals,
point-biserial correlation and the threshold search of DD++ (ALGORITHMS.md sections 4, 5, 8).

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
    """Point-biserial correlation of scores with 0/1 labels (= Pearson, ALGORITHMS.md 8)."""
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


def _rowwise_kendall(X, Y):
    """Kendall tau-b of each row pair; pairwise for short rows, scipy per row otherwise."""
    import numpy as np
    from scipy import stats

    n = X.shape[1]
    if n <= 60:
        i, j = np.triu_indices(n, k=1)
        dx = np.sign(X[:, i] - X[:, j])
        dy = np.sign(Y[:, i] - Y[:, j])
        concordance = (dx * dy).sum(axis=1)
        den = np.sqrt((dx != 0).sum(axis=1) * (dy != 0).sum(axis=1).astype(float))
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = concordance / den
        tau[den == 0] = np.nan
        return tau
    out = np.empty(X.shape[0])
    for b in range(X.shape[0]):
        if np.all(X[b] == X[b, 0]) or np.all(Y[b] == Y[b, 0]):
            out[b] = np.nan
        else:
            out[b] = stats.kendalltau(X[b], Y[b])[0]
    return out


def _rowwise_correlations(X, Y) -> dict:
    """``{kind: array}`` of the three correlations of each row of X with the row of Y."""
    from scipy import stats

    return {"pearson": _rowwise_pearson(X, Y),
            "spearman": _rowwise_pearson(stats.rankdata(X, axis=1), stats.rankdata(Y, axis=1)),
            "kendall": _rowwise_kendall(X, Y)}


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


def _intervals(values: dict, confidence: float) -> dict:
    import numpy as np

    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    low_q, high_q = 50 * (1 - confidence), 50 * (1 + confidence)
    out = {}
    for name, arr in values.items():
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
    return _intervals(_rowwise_correlations(xa[idx], ya[idx]), confidence)


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
    return _intervals(_rowwise_correlations(mx, my), confidence)


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
