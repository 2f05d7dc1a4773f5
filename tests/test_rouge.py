"""ROUGE-L (docs/algorithms.md#8-metric-definitions): parity with Google's rouge-score, the nlg-eval form."""

import random

import pytest
from rouge_score import rouge_scorer
from rouge_score.rouge_scorer import _lcs_table, _score_lcs

from multiref.metrics import Item, get_metric
from multiref.metrics.rouge import f_measure, lcs_length, rouge_l, rouge_l_multi

VOCAB = ["the", "a", "cat", "dog", "sat", "on", "mat", "is", "not", "2", "go", "x1"]


def _random_sentences(seed, n):
    rng = random.Random(seed)
    for _ in range(n):
        hyp = [rng.choice(VOCAB) for _ in range(rng.randint(0, 25))]
        ref = [rng.choice(VOCAB) for _ in range(rng.randint(0, 25))]
        yield hyp, ref


@pytest.mark.parametrize("seed", range(5))
def test_lcs_length_matches_rouge_score_dp_table(seed):
    # Reference: rouge_score.rouge_scorer._lcs_table (plain O(nm) DP), bottom-right cell.
    for hyp, ref in _random_sentences(seed, 300):
        expected = _lcs_table(ref, hyp)[-1][-1] if hyp and ref else 0
        assert lcs_length(hyp, ref) == expected
        assert lcs_length(ref, hyp) == expected


@pytest.mark.parametrize("seed", range(5))
def test_single_reference_parity_with_rouge_score(seed):
    # Reference: rouge-score 0.1.2 RougeScorer(["rougeL"]).score(target, prediction).fmeasure.
    # Lowercase alphanumeric words joined by spaces tokenize identically under its tokenizer
    # and our whitespace tokenizer.
    scorer = rouge_scorer.RougeScorer(["rougeL"])
    metric = get_metric("rouge_l")
    for hyp, ref in _random_sentences(seed, 200):
        if not ref:
            continue  # the base class rejects an empty reference list, not an empty reference
        hyp_s, ref_s = " ".join(hyp), " ".join(ref)
        expected = scorer.score(ref_s, hyp_s)["rougeL"].fmeasure
        assert metric.sentence_score(hyp_s, [ref_s]) == pytest.approx(expected, abs=1e-12)
        # and rouge-score's internal token-list entry point
        assert rouge_l(hyp, ref) == pytest.approx(_score_lcs(ref, hyp).fmeasure, abs=1e-12)


# Hand-worked example. hyp = "the cat sat on the mat" (6 tokens)
#   r1 = "the cat sat" (3):                       LCS 3 ("the cat sat"): P = 3/6, R = 3/3
#   r2 = "a cat was on the mat today with friends" (9): LCS 4 ("cat on the mat"): P = 4/6, R = 4/9
# max, b=1:  F(r1) = 2*.5*1/1.5 = 2/3;  F(r2) = 2*(2/3)(4/9)/(2/3+4/9) = 8/15  -> 2/3
# mean, b=1: (2/3 + 8/15)/2 = 3/5
# standard (nlg-eval / pycocoevalcap Rouge.calc_score), b=1.2: P = 2/3, R = 1
#   F = 2.44 * (2/3) * 1 / (1 + 1.44 * 2/3) = 1.626667 / 1.96 = 0.8299320
# standard with beta=1: 2 * (2/3) / (5/3) = 0.8
HYP = "the cat sat on the mat"
REFS = ["the cat sat", "a cat was on the mat today with friends"]


@pytest.mark.parametrize(
    "options, expected",
    [
        ({}, 2 / 3),
        ({"aggregate": "max"}, 2 / 3),
        ({"aggregate": "mean"}, 3 / 5),
        ({"aggregate": "standard"}, 2.44 * (2 / 3) / 1.96),
        ({"aggregate": "standard", "beta": 1.0}, 0.8),
        ({"aggregate": "max", "beta": 1.2}, max(2.44 * 0.5 / (1 + 1.44 * 0.5),
                                                 2.44 * (2 / 3) * (4 / 9) / (4 / 9 + 1.44 * 2 / 3))),
    ],
)
def test_hand_worked_example(options, expected):
    assert get_metric("rouge_l", **options).sentence_score(HYP, REFS) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    "hyp, refs, expected",
    [
        ("", ["a b"], 0.0),
        ("a b", [""], 0.0),
        ("", [""], 0.0),
        ("a b", ["", "a b"], 1.0),
        ("x y", ["a b"], 0.0),
    ],
)
@pytest.mark.parametrize("aggregate", ["max", "mean", "standard"])
def test_empty_and_degenerate(hyp, refs, expected, aggregate):
    metric = get_metric("rouge_l", aggregate=aggregate)
    value = metric.sentence_score(hyp, refs)
    if aggregate == "mean" and expected == 1.0:
        expected = 0.5  # mean of 0 (empty ref) and 1
    assert value == pytest.approx(expected)


def test_functions_and_f_measure():
    assert f_measure(0.0, 1.0, 1.0) == 0.0
    assert f_measure(0.5, 0.5, 3.0) == pytest.approx(0.5)
    assert rouge_l_multi(["a"], []) == 0.0
    assert lcs_length("abcbdab", "bdcaba") == 4  # textbook CLRS example: "bcba"


def test_signature_records_beta_and_aggregate():
    sigs = {
        get_metric("rouge_l").signature,
        get_metric("rouge_l", aggregate="standard").signature,
        get_metric("rouge_l", aggregate="standard", beta=1.0).signature,
        get_metric("rouge_l", beta=2).signature,
    }
    assert len(sigs) == 4
    assert "agg:standard|beta:1.2" in get_metric("rouge_l", aggregate="standard").signature
    assert get_metric("rouge_l", lowercase=True).signature.startswith("rouge_l|tok:whitespace|lc:yes|agg:max|beta:1|")


@pytest.mark.parametrize("beta", [0, -1, "abc"])
def test_bad_beta(beta):
    with pytest.raises(ValueError, match="beta"):
        get_metric("rouge_l", beta=beta)


def test_score_items_is_mean_of_items():
    metric = get_metric("rouge_l")
    items = [Item("1", [HYP], REFS), Item("2", ["a b", "x"], ["a b"])]
    result = metric.score_items(items)
    # item 2: mean over its hypotheses of (1.0, 0.0) = 0.5
    assert result.per_item == [pytest.approx(2 / 3), pytest.approx(0.5)]
    assert result.score == pytest.approx((2 / 3 + 0.5) / 2)
