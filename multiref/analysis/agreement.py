"""Agreement between annotators: Fleiss' kappa, Krippendorff's alpha, the adjusted Rand index.

- :func:`fleiss_kappa`: Fleiss (1971), "Measuring nominal scale agreement among many raters",
  Psychological Bulletin 76(5), eq. 1-9: every item rated by the same number of raters.
- :func:`krippendorff_alpha`: Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability"
  (coincidence matrices, section C "nominal data, any number of observers, missing data" and
  the interval metric ``(c - k)^2``); missing ratings are NaN.
- :func:`adjusted_rand_index`: Hubert & Arabie (1985), "Comparing partitions", Journal of
  Classification 2: the Rand index corrected for chance (equal to scikit-learn's
  ``adjusted_rand_score``).

Each returns None where the statistic is undefined (no disagreement is possible: every rating
in one category, or fewer than two pairable ratings) instead of dividing by zero.
"""

from __future__ import annotations

from typing import Sequence

ALPHA_LEVELS = ("nominal", "interval")


def fleiss_kappa(table) -> float | None:
    """Fleiss' kappa of an ``(items x categories)`` table of counts (how many raters put item
    i in category j); every row must sum to the same number of raters n >= 2.

    ``P_i = (sum_j n_ij^2 - n) / (n (n - 1))``, ``p_j = sum_i n_ij / (N n)``,
    ``kappa = (mean P_i - sum_j p_j^2) / (1 - sum_j p_j^2)`` (Fleiss 1971). None when
    ``sum_j p_j^2 = 1`` (all ratings in one category). Raises ValueError on a table that is
    not 2-D, has negative counts or unequal row sums.
    """
    import numpy as np

    t = np.asarray(table, dtype=float)
    if t.ndim != 2 or t.shape[0] == 0 or t.shape[1] == 0:
        raise ValueError(f"fleiss_kappa: need an (items x categories) table, got shape {t.shape}")
    if (t < 0).any():
        raise ValueError("fleiss_kappa: negative counts")
    raters = t.sum(axis=1)
    n = raters[0]
    if not np.allclose(raters, n):
        raise ValueError(f"fleiss_kappa: every item needs the same number of ratings, got {sorted(set(raters))[:3]}")
    if n < 2:
        raise ValueError(f"fleiss_kappa: needs at least 2 ratings per item, got {n:g}")
    p_item = ((t * t).sum(axis=1) - n) / (n * (n - 1))
    p_cat = t.sum(axis=0) / t.sum()
    chance = float((p_cat * p_cat).sum())
    if chance >= 1 - 1e-12:
        return None
    return (float(p_item.mean()) - chance) / (1 - chance)


def _value_counts(ratings):
    """``(levels, counts)``: the distinct levels and an ``(units x levels)`` count matrix
    of the ``(coders x units)`` ratings (NaN = missing)."""
    import numpy as np

    r = np.asarray(ratings, dtype=float)
    if r.ndim != 2:
        raise ValueError(f"krippendorff_alpha: need a (coders x units) table, got shape {r.shape}")
    levels = np.unique(r[~np.isnan(r)])
    counts = np.stack([(r == v).sum(axis=0) for v in levels], axis=1) if levels.size else np.zeros((r.shape[1], 0))
    return levels, counts.astype(float)


def krippendorff_alpha(ratings, level: str = "nominal") -> float | None:
    """Krippendorff's alpha of ``ratings``: ``(coders x units)`` numbers, NaN (or None) where
    a coder did not rate a unit; ``level`` is ``nominal`` or ``interval``.

    Units with fewer than two ratings are not pairable and are left out. Coincidences
    ``o_ck = sum_u n_uc n_uk / (m_u - 1)`` (minus the diagonal self-pairs), ``n_c = sum_k
    o_ck``, ``alpha = 1 - (n - 1) sum o_ck d_ck / sum n_c n_k d_ck`` with ``d_ck`` 0/1
    (nominal) or ``(c - k)^2`` (interval) (Krippendorff 2011). None when no two pairable
    values differ.
    """
    import numpy as np

    if level not in ALPHA_LEVELS:
        raise ValueError(f"krippendorff_alpha: level must be one of {', '.join(ALPHA_LEVELS)}, got {level!r}")
    rows = [[np.nan if v is None else v for v in row] for row in ratings]
    levels, counts = _value_counts(rows)
    m = counts.sum(axis=1)
    counts, m = counts[m >= 2], m[m >= 2]
    if levels.size < 2 or counts.shape[0] == 0:
        return None
    pairs = counts[:, :, None] * counts[:, None, :]
    pairs[:, np.arange(levels.size), np.arange(levels.size)] -= counts
    coincidence = (pairs / (m - 1)[:, None, None]).sum(axis=0)
    n_c = coincidence.sum(axis=1)
    total = n_c.sum()
    if level == "nominal":
        delta = 1.0 - np.eye(levels.size)
    else:
        delta = (levels[:, None] - levels[None, :]) ** 2
    expected = float((np.outer(n_c, n_c) * delta).sum())
    if expected <= 0:
        return None
    return 1.0 - (total - 1) * float((coincidence * delta).sum()) / expected


def _label_codes(labels: Sequence):
    """Each label's group number (0, 1, ... in first-occurrence order), labels compared by
    equality as a dict compares keys (``1`` and ``1.0`` are one group, ``1`` and ``"1"`` two)."""
    import numpy as np

    codes: dict = {}
    return np.fromiter((codes.setdefault(x, len(codes)) for x in labels), dtype=np.int64, count=len(labels))


def adjusted_rand_index(labels_a: Sequence, labels_b: Sequence) -> float:
    """Adjusted Rand index of two groupings of the same items (Hubert & Arabie 1985).

    ``labels_a[i]`` and ``labels_b[i]`` name item i's group in each grouping (any hashable
    labels, compared by equality: ``1`` and ``1.0`` name one group). 1 for identical groupings, about 0 for chance agreement. As scikit-learn, two
    groupings that are both one group, or both all singletons, give 1. Raises ValueError on
    unequal lengths.
    """
    import numpy as np

    if len(labels_a) != len(labels_b):
        raise ValueError(f"adjusted_rand_index: {len(labels_a)} labels against {len(labels_b)}")
    n = len(labels_a)
    ia, ib = _label_codes(labels_a), _label_codes(labels_b)
    table = np.zeros((ia.max(initial=-1) + 1, ib.max(initial=-1) + 1))
    np.add.at(table, (ia, ib), 1)

    def pairs(x):
        return float((x * (x - 1) / 2).sum())

    index, rows, cols, total = pairs(table), pairs(table.sum(axis=1)), pairs(table.sum(axis=0)), n * (n - 1) / 2
    expected = rows * cols / total if total else 0.0
    top = (rows + cols) / 2
    if top == expected:  # both one group, or both singletons (or fewer than 2 items)
        return 1.0
    return (index - expected) / (top - expected)
