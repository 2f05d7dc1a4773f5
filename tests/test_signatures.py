"""Every metric's signature names every option that changes its number (issue 2)."""

import pytest

from multiref.metrics import Item, get_metric

ITEMS = [
    Item(id="1", hypotheses=["the cat sat", "a dog ran"], references=["the cat sat down", "a cat sat"]),
    Item(id="2", hypotheses=["hello there"], references=["hello there friend", "hi", "hello"]),
]
GROUPED = [Item(id="q", hypotheses=["the cat sat"], groups=[["the cat sat down"], ["a dog", "the dog"]])]

REFERENCE_METRICS = ["bleu", "delta_bleu", "rouge_l", "recall_bleu", "recall_rouge_l"]


@pytest.mark.parametrize("name", REFERENCE_METRICS)
def test_reference_count_is_in_the_signature(name):
    assert "|nrefs:var|" in get_metric(name).score_items(ITEMS).signature
    assert "|nrefs:2|" in get_metric(name).score_items(ITEMS[:1]).signature


@pytest.mark.parametrize("name", ["maxbleu", "mds", "pds"])
def test_grouped_metrics_record_reference_count(name):
    assert "|nrefs:3|" in get_metric(name).score_items(GROUPED).signature


@pytest.mark.parametrize(
    "name, a, b",
    [
        ("bleu", {}, {"order": 2}),
        ("bleu", {}, {"smoothing": "nltk1"}),
        ("bleu", {}, {"brevity_penalty": False}),
        ("bleu", {}, {"aggregate": "max"}),
        ("bleu", {}, {"tokenizer": "treebank"}),
        ("bleu", {}, {"lowercase": True}),
        ("mds", {}, {"smoothing": "nltk1"}),
        ("rouge_l", {}, {"beta": 1.2}),
        ("distinct", {}, {"order": 1}),
        ("self_bleu", {}, {"order": 2}),
    ],
)
def test_different_options_give_different_signatures(name, a, b):
    assert get_metric(name, **a).signature != get_metric(name, **b).signature
