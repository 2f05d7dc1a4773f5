"""The public LSDSCC scorer's tie behaviour, for ``ties="lsdscc"`` of MaxBLEU/MDS/PDS.

The public scorer (github.com/neural-dialogue-metrics/LSDSCC: ``ReferenceSet.from_json``,
``BleuAligner``, ``compute_score_on_hypothesis_set`` and ``compute_score_on_corpus``, read
for its behaviour; docs/algorithms.md#3-lsdscc-metrics) differs from :mod:`multiref.metrics.lsdscc`'s
default only where two groups tie: its group order, its floating-point sums and its means.
Each piece is here, tested on hand-made ties in ``tests/test_lsdscc_metrics.py``.
"""

from __future__ import annotations

import math
from typing import Sequence

TIES = ("auto", "first", "lsdscc")
#: the one default of the tie rule, for ``get_metric``, ``multiref score --ties`` and the evaluate module
DEFAULT_TIES = "auto"


def auto_ties(smoothing: str = "add1", brevity_penalty: bool = False, weights=None) -> str:
    """``ties="auto"`` (the default everywhere): ``lsdscc`` with the public scorer's BLEU (add1,
    no brevity penalty, uniform weights: the metrics' defaults), else ``first``. It depends on
    the options only, so the same data gives the same numbers whatever reads it (the groups'
    order then comes from the items' ``group_ids``, file order without them)."""
    public_bleu = smoothing == "add1" and not brevity_penalty and weights is None
    return "lsdscc" if public_bleu else "first"


def public_group_order(group_ids: Sequence[str]) -> list:
    """Indices of ``group_ids`` in the public LSDSCC scorer's group order.

    Groups sort by ``int(id)``; an id that is not an integer gets the next number after
    ``len(group_ids) - 1``, in file order; equal keys keep file order (a stable sort). For
    ids ``"1", "2", "null"`` the order is 1, 2, null.
    """
    keys, next_key = [], len(group_ids) - 1
    for gid in group_ids:
        try:
            keys.append(int(gid))
        except (TypeError, ValueError):
            next_key += 1
            keys.append(next_key)
    return sorted(range(len(group_ids)), key=keys.__getitem__)


def public_scorer(weights: Sequence[float]):
    """The public scorer's BLEU (add-one precisions, no brevity penalty), summed left to right."""
    log, exp = math.log, math.exp
    indexed = tuple(enumerate(weights))

    def score(matches, hyp_len, ref_len):
        total = 0
        for i, w in indexed:
            total += w * log((matches[i] + 1.0) / (max(0, hyp_len - i) + 1.0))
        return exp(total)
    return score


def check_public_bleu(smoothing: str, brevity_penalty: bool) -> None:
    if smoothing != "add1" or brevity_penalty:
        raise ValueError("lsdscc: ties='lsdscc' reproduces the public scorer, whose BLEU has add1 smoothing and no "
                         f"brevity penalty (got smoothing={smoothing!r}, brevity_penalty={brevity_penalty}); "
                         "use ties='first' with other BLEU options")


def sequential_mean(values: Sequence[float]) -> float:
    """Left-to-right sum divided by the count: ``numpy.mean(rows, axis=0)`` of the public
    scorer, whatever Python's own ``sum`` does (a unit test checks it against numpy)."""
    total = 0.0
    for v in values:
        total += v
    return total / len(values)
