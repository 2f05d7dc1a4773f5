"""The whole-test-set numpy paths (issue 19 item 5) give the per-query paths' numbers exactly."""

import random

import pytest

from multiref.metrics import bleu as bleu_module
from multiref.metrics import lsdscc
from multiref.metrics._batch_matches import clipped_matches, reference_side
from multiref.metrics.base import Item
from multiref.metrics.bleu import BLEU, sentence_scorer
from multiref.metrics.lsdscc import MDS, PDS, MaxBLEU


def _items(seed: int, n: int = 150) -> list:
    """Random items over a small vocabulary (repeated n-grams, unknown tokens, empty hypotheses)."""
    rng = random.Random(seed)
    vocab = list("abcdef")
    items = []
    for i in range(n):
        groups = [[" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 9))) for _ in range(rng.randint(1, 3))]
                  for _ in range(rng.randint(1, 4))]
        hyps = [" ".join(rng.choice(vocab + ["zz"]) for _ in range(rng.randint(0, 9)))
                for _ in range(rng.randint(1, 3))]
        items.append(Item(id=str(i), hypotheses=hyps, references=[r for g in groups for r in g], groups=groups))
    return items


@pytest.mark.parametrize("k", [1, 4, 5])
def test_clipped_matches_equal_the_per_query_sets(k):
    items = _items(k)
    groups = [[[r.split() for r in g] for g in item.groups] for item in items]
    side = reference_side(groups, k)
    hyps = [h.split() for item in items for h in item.hypotheses]
    got = clipped_matches(side, hyps, [i for i, item in enumerate(items) for _ in item.hypotheses]).tolist()
    row = 0
    for item, item_groups in zip(items, groups):
        vocab, base, maxima, _ = lsdscc._reference_tables(item_groups, k)
        for expected in lsdscc._matches_sets([h.split() for h in item.hypotheses], vocab, base, maxima, k):
            assert got[row][:len(expected)] == expected
            assert not any(any(m) for m in got[row][len(expected):])
            row += 1


@pytest.mark.parametrize("brevity_penalty", [False, True])
@pytest.mark.parametrize("smoothing", ["add1", "none", "nltk1", "nltk5"])
def test_batch_alignment_equals_item_by_item(smoothing, brevity_penalty):
    items = _items(7)
    for cls in (MaxBLEU, MDS, PDS):
        metric = cls(smoothing=smoothing, brevity_penalty=brevity_penalty)
        assert lsdscc._batchable(metric, items)
        batch = lsdscc._batch_alignment(metric, items)
        assert batch == [metric.alignment(item) for item in items]
        assert [type(g) for a in batch for g, _ in a] == [int] * sum(len(a) for a in batch)
        score = metric.score_items(items)
        assert score.per_item == [metric.item_score(item) for item in items]


@pytest.mark.parametrize("smoothing", ["none", "add1", "nltk5"])
def test_batch_bleu_stats_equal_item_by_item(smoothing):
    items = _items(11)
    metric = BLEU(smoothing=smoothing)
    assert bleu_module._batchable(items)
    scorer = sentence_scorer(metric.weights, metric.smoothing, metric.brevity_penalty)
    assert bleu_module._batch_item_stats(metric, items, scorer) == metric._item_stats(items, scorer)


def test_small_or_malformed_test_sets_take_the_item_path():
    items = _items(3)
    assert not lsdscc._batchable(MaxBLEU(), items[:10]) and not bleu_module._batchable(items[:10])
    assert not lsdscc._batchable(MaxBLEU(ties="lsdscc"), items)
    broken = items[:-1] + [Item(id="x", hypotheses=[], references=["a"], groups=[["a"]])]
    assert not lsdscc._batchable(MaxBLEU(), broken) and not bleu_module._batchable(broken)
    with pytest.raises(ValueError, match="no hypotheses"):
        MaxBLEU().score_items(broken)


def test_to_items_shares_each_reference_record_across_systems(tmp_path):
    from multiref.metrics.references import load_hypotheses, load_references, match_items, to_items

    refs = tmp_path / "refs.jsonl"
    refs.write_text('{"id": "a", "groups": [["x y"], ["z"]]}\n{"id": "b", "groups": [["u"]]}\n')
    hyps = tmp_path / "hyps.jsonl"
    hyps.write_text('{"id": "b", "hypothesis": "u"}\n{"id": "a", "hypothesis": "x"}\n')
    refset = load_references(str(refs))
    pairs = match_items(refset, load_hypotheses(str(hyps)), str(hyps))
    shared: dict = {}
    first, second = to_items(pairs, shared), to_items(pairs, shared)
    assert first == second == to_items(pairs)
    assert [i.groups for i in first] == [[["u"]], [["x y"], ["z"]]]
    assert all(a.groups is b.groups and a.references is b.references for a, b in zip(first, second))


def test_closest_sorted_length_is_closest_ref_length():
    """The per-query path's bisection gives NLTK's closest reference length (ties: the shorter)."""
    import itertools

    from multiref.metrics._ngrams import closest_ref_length, closest_sorted_length

    for size in range(1, 5):
        for lengths in itertools.combinations(range(0, 9, 1), size):
            for hyp_len in range(0, 12):
                assert closest_sorted_length(lengths, hyp_len) == closest_ref_length(lengths, hyp_len), (lengths, hyp_len)
    with pytest.raises(ValueError):
        closest_sorted_length((), 3)


def test_unique_rows_is_numpy_unique_by_rows():
    import numpy as np

    rng = np.random.default_rng(3)
    for shape, high in (((500, 5), 7), ((300, 2), 2 ** 40), ((50, 3), 1), ((0, 4), 3), ((40, 9), 10 ** 7)):
        rows = rng.integers(0, high, size=shape, dtype=np.int64)
        keys, inverse = lsdscc.unique_rows(rows)
        want_keys, want_inverse = np.unique(rows, axis=0, return_inverse=True)
        assert keys.tolist() == want_keys.tolist() and inverse.tolist() == want_inverse.ravel().tolist()
