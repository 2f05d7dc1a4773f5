"""Distinct-n, Self-BLEU and recall (docs/algorithms.md sections 4 and 8)."""

import math

import pytest
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from multiref.metrics import Item, get_metric
from multiref.metrics.diversity import distinct_counts, distinct_utterance, ngrams

# Hand-counted example.
#   item 1: "a b a b" -> bigrams ab, ba, ab (3);  "a b c" -> ab, bc (2)
#   item 2: "c d"     -> cd (1)
# corpus bigrams: 6 in total, distinct {ab, ba, bc, cd} = 4  -> 4/6
# per item: item 1 5 bigrams, distinct {ab, ba, bc} = 3 -> 3/5; item 2: 1/1
# unigrams: 9 tokens, distinct {a, b, c, d} = 4 -> 4/9
# per utterance, bigrams over tokens: 2/4, 2/3, 1/2 -> mean 5/9
# per utterance, bigrams over bigrams: 2/3, 2/2, 1/1 -> mean 8/9
ITEMS = [Item("1", ["a b a b", "a b c"]), Item("2", ["c d"])]


def test_distinct_corpus_form():
    result = get_metric("distinct").score_items(ITEMS)
    assert result.score == pytest.approx(4 / 6)
    assert result.per_item == [pytest.approx(3 / 5), pytest.approx(1.0)]
    assert result.extra == {"items": 2, "distinct_ngrams": 4, "total_ngrams": 6}
    assert get_metric("distinct", order=1).score_items(ITEMS).score == pytest.approx(4 / 9)
    # the corpus form is not the mean of item ratios ((3/5 + 1)/2 = 0.8)
    assert result.score != pytest.approx(sum(result.per_item) / 2)


@pytest.mark.parametrize("options, expected", [
    ({}, 5 / 9),
    ({"denominator": "tokens"}, 5 / 9),
    ({"denominator": "ngrams"}, 8 / 9),
    ({"order": 1}, (2 / 4 + 3 / 3 + 2 / 2) / 3),
])
def test_distinct_per_utterance(options, expected):
    result = get_metric("distinct_per_utterance", **options).score_items(ITEMS)
    assert result.score == pytest.approx(expected)
    assert result.extra["utterances"] == 3


def test_distinct_degenerate():
    assert get_metric("distinct").score_items([Item("1", ["a", ""])]).score == 0.0  # no bigram at all
    assert distinct_utterance([], 2) == 0.0
    assert distinct_utterance(["a"], 2, "ngrams") == 0.0
    assert distinct_utterance(["a"], 2, "tokens") == 0.0
    assert ngrams(["a", "b", "c"], 2) == [("a", "b"), ("b", "c")]
    assert distinct_counts([["x", "x", "x"]], 1) == (1, 3)
    assert get_metric("distinct").sentence_score("a b a b", []) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="no hypotheses"):
        get_metric("distinct").score_items([Item("1", [])])


@pytest.mark.parametrize("name", ["distinct", "distinct_per_utterance"])
@pytest.mark.parametrize("order", [0, -1, 1.5, True])
def test_distinct_bad_order(name, order):
    with pytest.raises(ValueError, match="order"):
        get_metric(name, order=order)


# Self-BLEU golden values: NLTK 3.10's sentence_bleu(other hypotheses, hypothesis, ...) for
# each hypothesis of the item, averaged (Texygen's Self-BLEU), computed here by hand.
SB_HYPS = ["the cat sat on the mat", "the cat is on the mat", "a dog sat on a log", "the dog is on the mat"]
NLTK_SMOOTH = SmoothingFunction()


def _nltk_self_bleu(hyps, weights, smoothing_function=None):
    toks = [h.split() for h in hyps]
    values = [sentence_bleu(toks[:i] + toks[i + 1:], t, weights=weights, smoothing_function=smoothing_function)
              for i, t in enumerate(toks)]
    return sum(values) / len(values)


@pytest.mark.parametrize("options, weights, smoothing_function", [
    ({"order": 2}, (0.5, 0.5), None),
    ({"order": 4, "smoothing": "nltk1"}, (0.25,) * 4, NLTK_SMOOTH.method1),
    ({"order": 3, "smoothing": "nltk3"}, (1 / 3,) * 3, NLTK_SMOOTH.method3),
    ({"order": 1}, (1.0,), None),
])
def test_self_bleu_matches_nltk(options, weights, smoothing_function):
    metric = get_metric("self_bleu", **options)
    items = [Item("q1", SB_HYPS), Item("q2", SB_HYPS[:2]), Item("q3", ["lonely"])]
    result = metric.score_items(items)
    first = _nltk_self_bleu(SB_HYPS, weights, smoothing_function)
    second = _nltk_self_bleu(SB_HYPS[:2], weights, smoothing_function)
    assert result.per_item[0] == pytest.approx(first, abs=1e-9)
    assert result.per_item[1] == pytest.approx(second, abs=1e-9)
    assert result.per_item[2] is None
    assert result.score == pytest.approx((first + second) / 2, abs=1e-9)
    assert result.extra["items_with_fewer_than_2_hypotheses"] == 1
    assert result.extra["items_without_score"] == 1


def test_self_bleu_identical_outputs_score_one_and_sentence_form():
    assert get_metric("self_bleu").score_items([Item("q", ["a b c d", "a b c d"])]).score == pytest.approx(1.0)
    # sentence form: one output against the others given as references
    expected = sentence_bleu([["the", "cat", "is", "on", "the", "mat"]], "the cat sat on the mat".split(),
                             weights=(0.5, 0.5))
    assert get_metric("self_bleu", order=2).sentence_score("the cat sat on the mat", ["the cat is on the mat"]) \
        == pytest.approx(expected, abs=1e-12)
    with pytest.raises(ValueError, match="other hypothesis"):
        get_metric("self_bleu").sentence_score("a b", [])
    with pytest.raises(ValueError, match="aggregate"):  # Self-BLEU's form is fixed
        get_metric("self_bleu", aggregate="max")


# Recall (docs/algorithms.md#4-multiref-dd), hand-worked.
#   references r1 = "a b c d", r2 = "x y"; hypotheses y1 = "a b", y2 = "x y z"
# ROUGE-L F (beta 1): y1/r1: LCS 2, P 1, R 1/2 -> 2/3; y2/r1: 0; y1/r2: 0;
#                     y2/r2: LCS 2, P 2/3, R 1 -> 0.8.   recall = (2/3 + 0.8) / 2
# BLEU-1: y1/r1: p1 = 1, BP = exp(1 - 4/2) = e^-1; y2/r2: p1 = 2/3, BP = 1 (c = 3 > r = 2)
#                     recall = (e^-1 + 2/3) / 2
RECALL_ITEM = Item("q", hypotheses=["a b", "x y z"], references=["a b c d", "x y"])


@pytest.mark.parametrize("name, options, expected", [
    ("recall_rouge_l", {}, (2 / 3 + 0.8) / 2),
    ("recall_bleu", {"order": 1}, (math.exp(-1) + 2 / 3) / 2),
    ("recall_bleu", {"base": "rouge_l"}, (2 / 3 + 0.8) / 2),
])
def test_recall_hand_worked(name, options, expected):
    result = get_metric(name, **options).score_items([RECALL_ITEM])
    assert result.score == pytest.approx(expected, abs=1e-12)


def test_recall_bleu_matches_nltk_pairwise():
    # BLEU-2 with NLTK method1: recall = mean over refs of max over hyps of sentence_bleu([r], y)
    hyps = [h.split() for h in SB_HYPS[:3]]
    refs = [r.split() for r in ["the cat sat on a mat", "a dog is on the log", "nothing here"]]
    expected = sum(max(sentence_bleu([r], y, weights=(0.5, 0.5), smoothing_function=NLTK_SMOOTH.method1)
                       for y in hyps) for r in refs) / len(refs)
    metric = get_metric("recall_bleu", order=2, smoothing="nltk1")
    item = Item("q", hypotheses=SB_HYPS[:3], references=["the cat sat on a mat", "a dog is on the log", "nothing here"])
    assert metric.item_score(item) == pytest.approx(expected, abs=1e-9)


def test_recall_names_and_signatures():
    rouge = get_metric("recall_rouge_l")
    assert rouge.name == "recall_rouge_l"
    assert rouge.signature.startswith("recall_rouge_l|tok:whitespace|lc:no|beta:1|version:")
    bleu = get_metric("recall_bleu", order=2, smoothing="nltk1")
    assert bleu.signature.startswith("recall_bleu|tok:whitespace|lc:no|order:2|smooth:nltk1|bp:yes|conv:nltk|version:")
    sigs = {rouge.signature, bleu.signature, get_metric("recall_bleu").signature,
            get_metric("recall_rouge_l", beta=2).signature, get_metric("recall_bleu", lowercase=True).signature}
    assert len(sigs) == 5


def test_recall_option_errors():
    with pytest.raises(ValueError, match="rouge_l does not take option.*order"):
        get_metric("recall_rouge_l", order=2)
    with pytest.raises(ValueError, match="pairwise"):
        get_metric("recall_bleu", base="distinct")
    with pytest.raises(ValueError, match="unknown metric"):
        get_metric("recall_bleu", base="nope")
    with pytest.raises(ValueError, match="no aggregate option"):
        get_metric("recall_rouge_l", aggregate="max")


def test_signatures_differ_when_options_differ():
    sigs = [
        get_metric("distinct").signature,
        get_metric("distinct", order=1).signature,
        get_metric("distinct_per_utterance").signature,
        get_metric("distinct_per_utterance", denominator="ngrams").signature,
        get_metric("self_bleu").signature,
        get_metric("self_bleu", order=2).signature,
        get_metric("self_bleu", smoothing="nltk1").signature,
        get_metric("self_bleu", brevity_penalty=False).signature,
    ]
    assert len(set(sigs)) == len(sigs)
    assert get_metric("distinct").signature.startswith("distinct|tok:whitespace|lc:no|agg:corpus|order:2|")
    assert get_metric("self_bleu").signature.startswith(
        "self_bleu|tok:whitespace|lc:no|agg:standard|order:4|smooth:none|bp:yes|")
