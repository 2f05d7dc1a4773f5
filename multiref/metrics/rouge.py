"""ROUGE-L: longest-common-subsequence F-measure (docs/algorithms.md sections 4 and 8).

For one hypothesis ``y`` and one reference ``r`` (token lists)::

    P = LCS(y, r) / |y|      R = LCS(y, r) / |r|      F = (1 + b^2) P R / (R + b^2 P)

Multi-reference forms (option ``aggregate``):

- ``max`` (default): the best F over references, with ``b = 1`` by default. For one reference
  this is the ``rougeL`` F-measure of Google's ``rouge-score`` package (``_score_lcs``),
  which the tests check on random token sequences.
- ``mean``: the mean F over references (``b = 1`` by default).
- ``standard``: the form of nlg-eval / pycocoevalcap's ``Rouge.calc_score``, also used by
  multirefeval: ``P = max_r P_r``, ``R = max_r R_r`` (the two maxima may come from different
  references), then F with ``b = 1.2`` by default.

``beta`` overrides the default of the chosen form and is always recorded in the signature.
An empty hypothesis or reference scores 0 against it.
"""

from __future__ import annotations

from typing import Sequence

from multiref.metrics.base import Metric
from multiref.util.defaults import TOKENIZER

#: default F-measure beta per aggregation: rouge-score's F1 for the per-reference forms,
#: nlg-eval's 1.2 for its own multi-reference form.
DEFAULT_BETA = {"max": 1.0, "mean": 1.0, "standard": 1.2}


def lcs_length(a: Sequence, b: Sequence) -> int:
    """Length of the longest common subsequence of token sequences ``a`` and ``b``.

    Bit-parallel algorithm (Allison & Dix 1986; Hyyro 2004): one machine-word-style big-int
    update per token of ``b``, so O(|a| * |b| / 64) word operations instead of a Python-level
    O(|a| * |b|) table. Gives the same number as the dynamic-programming table of rouge-score's
    ``_lcs_table`` (checked in tests/test_rouge.py).
    """
    if not a or not b:
        return 0
    if len(b) > len(a):  # keep the bit vector over the longer sequence: fewer Python iterations
        a, b = b, a
    masks: dict = {}
    for i, token in enumerate(a):
        masks[token] = masks.get(token, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for token in b:
        m = masks.get(token)
        if m:
            u = v & m
            v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


def f_measure(precision: float, recall: float, beta: float) -> float:
    """``(1 + b^2) P R / (R + b^2 P)``; 0 when P or R is 0."""
    if precision <= 0.0 or recall <= 0.0:
        return 0.0
    b2 = beta * beta
    return (1.0 + b2) * precision * recall / (recall + b2 * precision)


def lcs_precision_recall(hypothesis: Sequence, reference: Sequence) -> tuple:
    """``(P, R)`` of ROUGE-L for one tokenized pair; ``(0, 0)`` if either side is empty."""
    if not hypothesis or not reference:
        return 0.0, 0.0
    lcs = lcs_length(hypothesis, reference)
    return lcs / len(hypothesis), lcs / len(reference)


def rouge_l(hypothesis: Sequence, reference: Sequence, beta: float = 1.0) -> float:
    """ROUGE-L F of one tokenized hypothesis against one tokenized reference."""
    p, r = lcs_precision_recall(hypothesis, reference)
    return f_measure(p, r, beta)


def rouge_l_multi(hypothesis: Sequence, references: Sequence[Sequence], beta: float = 1.2) -> float:
    """nlg-eval / multirefeval multi-reference ROUGE-L: F of (max_r P_r, max_r R_r)."""
    best_p = best_r = 0.0
    for reference in references:
        p, r = lcs_precision_recall(hypothesis, reference)
        best_p, best_r = max(best_p, p), max(best_r, r)
    return f_measure(best_p, best_r, beta)


class RougeL(Metric):
    """ROUGE-L (name ``rouge_l``).

    Options: ``tokenizer``, ``lowercase``, ``aggregate`` (``max`` | ``mean`` | ``standard``),
    ``beta`` (default 1.0 for max/mean, 1.2 for standard).
    """

    name = "rouge_l"
    version = "1"
    aggregates = ("max", "mean", "standard")
    default_aggregate = "max"

    def __init__(self, tokenizer: str = TOKENIZER, lowercase: bool = False, aggregate: str | None = None,
                 beta: float | None = None):
        super().__init__(tokenizer=tokenizer, lowercase=lowercase, aggregate=aggregate)
        if beta is None:
            beta = DEFAULT_BETA[self.aggregate]
        try:
            beta = float(beta)
        except (TypeError, ValueError):
            raise ValueError(f"rouge_l: beta must be a positive number, got {beta!r}") from None
        if not 0 < beta < float("inf"):  # beta = inf made every score NaN
            raise ValueError(f"rouge_l: beta must be a positive finite number, got {beta!r}")
        self.beta = beta

    def signature_fields(self) -> list:
        return super().signature_fields() + [("beta", f"{self.beta:g}")]

    def pair_score(self, hypothesis: list, reference: list) -> float:
        return rouge_l(hypothesis, reference, self.beta)

    def multi_score(self, hypothesis: list, references: list) -> float:
        return rouge_l_multi(hypothesis, references, self.beta)
