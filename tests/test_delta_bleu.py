"""deltaBLEU (docs/algorithms.md sections 6 and 8): equals BLEU with unit weights (required),
hand-computed weighted examples, clipping of negative totals, errors."""

from __future__ import annotations

import math
import random

import pytest

from multiref.metrics import Item, get_metric
from multiref.metrics.bleu import BLEU, SMOOTHINGS

VOCAB = "a b c d e f".split()


def _cases(seed, count=150):
    rng = random.Random(seed)
    sent = lambda lo, hi: " ".join(rng.choice(VOCAB) for _ in range(rng.randint(lo, hi)))  # noqa: E731
    return [(sent(0, 12), [sent(1, 12) for _ in range(rng.randint(1, 4))]) for _ in range(count)]


@pytest.mark.parametrize("bp", [True, False])
@pytest.mark.parametrize("order", [1, 2, 4])
@pytest.mark.parametrize("smoothing", SMOOTHINGS)
def test_unit_weights_equal_bleu_exactly(smoothing, order, bp):
    delta = get_metric("delta_bleu", order=order, smoothing=smoothing, brevity_penalty=bp)
    bleu = BLEU(order=order, smoothing=smoothing, brevity_penalty=bp)
    for hyp, refs in _cases(seed=order * 10 + bp):
        assert delta.sentence_score(hyp, refs, weights=[1.0] * len(refs)) == bleu.sentence_score(hyp, refs)
        assert delta.sentence_score(hyp, refs) == bleu.sentence_score(hyp, refs)


@pytest.mark.parametrize("smoothing", SMOOTHINGS)
def test_unit_weights_corpus_equals_corpus_bleu_exactly(smoothing):
    cases = _cases(seed=99, count=40)
    items = [Item(str(i), [h], refs, weights=[1] * len(refs)) for i, (h, refs) in enumerate(cases)]
    delta = get_metric("delta_bleu", smoothing=smoothing).score_items(items)
    bleu = BLEU(smoothing=smoothing).score_items(items)
    assert delta.score == bleu.score
    assert list(delta.per_item) == list(bleu.per_item)


@pytest.mark.parametrize(
    "hyp, refs, weights, options, expected",
    [
        # unigrams: 'a' in both refs -> w* = 1.0, credit 1; 'b' only in ref 1 -> 0.5.
        # p1 = 1.5 / (max w 1.0 x 2) = 0.75; bigram 'a b' only in ref 1 -> p2 = 0.5 / 1.
        ("a b", ["a b", "a c"], [0.5, 1.0], {"order": 2, "brevity_penalty": False}, math.sqrt(0.75 * 0.5)),
        # the same with order 1
        ("a b", ["a b", "a c"], [0.5, 1.0], {"order": 1, "brevity_penalty": False}, 0.75),
        # a negative reference containing the n-grams: credit -0.5 each -> total -1 -> clipped to 0
        ("x y", ["x y", "z"], [-0.5, 1.0], {"order": 1, "brevity_penalty": False}, 0.0),
        # the best reference containing 'x' has weight 0.8 (not the negative one): p1 = (0.8 + 0) / (0.8 x 2)
        ("x y", ["x", "x q", "y"], [0.8, -1.0, -0.2], {"order": 1, "brevity_penalty": False}, (0.8 - 0.2) / 1.6),
        # all weights 0.5 scale numerator and denominator alike: plain BLEU-1 = 2/3
        ("a b z", ["a b c"], [0.5], {"order": 1}, 2 / 3),
        # clipping by the max count in any single reference: 'a' x3 vs refs with 2 and 1 'a'
        ("a a a", ["a a", "a"], [1.0, 1.0], {"order": 1, "brevity_penalty": False}, 2 / 3),
        # brevity penalty from the closest reference (length 4, hyp 2): exp(1 - 4/2)
        ("a b", ["a b c d", "a b c d e f g h"], [1.0, 0.3], {"order": 1}, math.exp(1 - 2)),
    ],
)
def test_weighted_golden(hyp, refs, weights, options, expected):
    metric = get_metric("delta_bleu", **options)
    assert metric.sentence_score(hyp, refs, weights=weights) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_item_weights_are_used_by_score_items():
    metric = get_metric("delta_bleu", order=1, brevity_penalty=False)
    items = [Item("q1", ["a b"], ["a b", "a c"], weights=[0.5, 1.0]), Item("q2", ["a"], ["a"], weights=[1.0])]
    result = metric.score_items(items)
    assert result.per_item == [pytest.approx(0.75), 1.0]
    # corpus: numerators 1.5 + 1, denominators 2 + 1
    assert result.score == pytest.approx(2.5 / 3)
    assert result.signature.startswith("delta_bleu|tok:whitespace|lc:no|agg:standard|order:1|smooth:none|bp:no|conv:nltk|nrefs:var")


@pytest.mark.parametrize(
    "refs, weights",
    [(["a", "b"], [-0.5, 0.0]), (["a"], [1.5]), (["a", "b"], [1.0]), (["a"], ["x"]), ([], [])],
)
def test_bad_weights_raise_value_error(refs, weights):
    with pytest.raises(ValueError):
        get_metric("delta_bleu").sentence_score("a", refs, weights=weights)


def test_item_without_positive_weight_is_an_error_naming_the_item():
    with pytest.raises(ValueError, match="q7"):
        get_metric("delta_bleu").score_items([Item("q7", ["a"], ["a"], weights=[-1.0])])


def test_only_standard_aggregate():
    with pytest.raises(ValueError):
        get_metric("delta_bleu", aggregate="max")
