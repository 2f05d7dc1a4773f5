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


# -- ties="first": groups compared exactly --------------------------------------------------------

#: two BLEU floats closer than this (relative) are compared exactly by :func:`exact_compare`
NEAR = 1e-9
#: smoothings whose precisions are rationals of the counts (the others fall back to the floats)
EXACT_SMOOTHINGS = ("add1", "none", "nltk1")
#: decimal digits of the logarithms when the terms do not cancel as rationals
_DIGITS = 80


def near(a: float, b: float) -> bool:
    """Whether two BLEU floats are close enough that their order must be decided exactly."""
    return abs(a - b) <= NEAR * max(abs(a), abs(b))


def _exact_terms(hyp_len: int, matches, ref_len: int | None, weights, smoothing: str):
    """``(brevity exponent, {weight: product of precisions})`` of a BLEU value as exact rationals
    (``BLEU = exp(e) * prod p_n ** w_n``), or None when the value is exactly 0."""
    from fractions import Fraction

    if smoothing != "add1" and not matches[0]:
        return None
    products: dict = {}
    for n, w in enumerate(weights):
        if w == 0:
            continue
        t = hyp_len - n
        if smoothing == "add1":
            p = Fraction(matches[n] + 1, max(0, t) + 1)
        elif matches[n]:
            p = Fraction(matches[n], t if t > 0 else 1)
        elif smoothing == "none":
            return None
        else:  # nltk1: epsilon 0.1 over the n-gram count
            p = Fraction(1, 10) / (t if t > 0 else 1)
        products[w] = products.get(w, Fraction(1)) * p
    exponent = Fraction(0)
    if ref_len is not None:  # the brevity penalty: exp(1 - r/c) when c <= r
        if hyp_len == 0:
            return None
        if hyp_len <= ref_len:
            exponent = 1 - Fraction(ref_len, hyp_len)
    return exponent, products


def _log_value(terms) -> "Decimal":
    from decimal import Decimal

    exponent, products = terms
    total = Decimal(exponent.numerator) / Decimal(exponent.denominator)
    for w, p in products.items():
        total += Decimal(w) * (Decimal(p.numerator).ln() - Decimal(p.denominator).ln())
    return total


def exact_compare(a: tuple, b: tuple, weights, smoothing: str, brevity_penalty: bool) -> int | None:
    """-1, 0 or 1 as BLEU ``a`` is below, equal to or above BLEU ``b`` in exact arithmetic; each
    is ``(hyp_len, clipped matches, closest reference length)``. The precisions are rationals;
    with equal brevity exponents and one weight for every order (uniform weights: the metrics'
    default) BLEU is ordered by the product of the precisions, compared as rationals; otherwise
    by ``e + sum w_n log p_n`` to 80 digits (a difference below 1e-60 is a tie: the weights are
    binary fractions, and BLEU values of different counts that agree that far are equal). None
    for a smoothing whose precisions are not rationals of the counts (the floats decide)."""
    from decimal import localcontext

    if smoothing not in EXACT_SMOOTHINGS:
        return None
    terms = [_exact_terms(h, m, r if brevity_penalty else None, weights, smoothing) for h, m, r in (a, b)]
    if terms[0] is None or terms[1] is None:
        return (terms[0] is not None) - (terms[1] is not None)
    (ea, pa), (eb, pb) = terms
    if ea == eb and pa == pb:
        return 0
    if ea == eb and len(pa) == 1 and pa.keys() == pb.keys():
        (x,), (y,) = pa.values(), pb.values()
        return (x > y) - (x < y)
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        diff = _log_value(terms[0]) - _log_value(terms[1])
        return 0 if abs(diff) < ctx.create_decimal("1e-60") else (1 if diff > 0 else -1)
