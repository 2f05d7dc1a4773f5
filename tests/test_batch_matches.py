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


@pytest.mark.parametrize("per_pass", [100_000, 7])
def test_clipped_matches_with_hypotheses_in_any_item_order(per_pass, monkeypatch):
    """Hypotheses need not come item by item (``hyp_item`` as a numpy array, items interleaved and
    repeated); references too short for the order, repeated n-grams and tokens no reference has;
    in one pass or in passes of 7 hypotheses."""
    import numpy as np

    from multiref.metrics import _batch_matches

    monkeypatch.setattr(_batch_matches, "PASS_HYPOTHESES", per_pass)

    items = _items(5, 80) + [Item(id="short", hypotheses=["a a a b", "a b a b a b"], groups=[["a"], ["a a b", ""]])]
    groups = [[[r.split() for r in g] for g in item.groups] for item in items]
    side = reference_side(groups, 4)
    pairs = [(i, h.split()) for i, item in enumerate(items) for h in item.hypotheses]
    random.Random(2).shuffle(pairs)
    got = clipped_matches(side, [h for _, h in pairs], np.array([i for i, _ in pairs])).tolist()
    for row, (i, hyp) in enumerate(pairs):
        vocab, base, maxima, _ = lsdscc._reference_tables(groups[i], 4)
        expected = lsdscc._matches_sets([hyp], vocab, base, maxima, 4)[0]
        assert got[row] == expected + [[0] * 4] * (side["groups"] - len(expected)), (items[i].id, hyp)


def test_clipped_matches_when_no_reference_is_long_enough():
    items = [Item(id=str(i), hypotheses=["x y x y", "y"], groups=[["x"], ["y x", "y y"]]) for i in range(3)]
    side = reference_side([[[r.split() for r in g] for g in item.groups] for item in items], 4)
    got = clipped_matches(side, [h.split() for item in items for h in item.hypotheses], [0, 0, 1, 1, 2, 2])
    # "x y x y": x 2 clipped to 1 in both groups, y 2 (group 2: "y y"); bigram "y x" once
    assert got.tolist() == [[[1, 0, 0, 0], [3, 1, 0, 0]], [[0, 0, 0, 0], [1, 0, 0, 0]]] * 3


@pytest.mark.parametrize("per_pass", [100_000, 97])
def test_many_hypotheses_per_item_are_aligned_at_once(per_pass, monkeypatch):
    """With 40 hypotheses per item (the benchmark's kind of input: tens per query), the whole test set
    goes through :func:`lsdscc._batch_alignment`, with the same alignment as item by item; also
    tokenized and matched in passes of 97 hypotheses (a pass ends inside an item)."""
    from multiref.metrics import _batch_matches

    monkeypatch.setattr(_batch_matches, "PASS_HYPOTHESES", per_pass)
    rng = random.Random(9)
    items = []
    for item in _items(13, 70):
        words = [w for g in item.groups for r in g for w in r.split()] + ["zz"]
        hyps = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 8))) for _ in range(40)]
        items.append(Item(id=item.id, hypotheses=hyps, references=item.references, groups=item.groups))
    for smoothing, brevity_penalty in (("nltk1", True), ("add1", False)):
        metric = MaxBLEU(smoothing=smoothing, brevity_penalty=brevity_penalty, ties="first")
        assert lsdscc._batchable(metric, items)
        assert lsdscc._batch_alignment(metric, items) == [metric.alignment(item) for item in items]


@pytest.mark.parametrize("brevity_penalty", [False, True])
@pytest.mark.parametrize("smoothing", ["add1", "none", "nltk1", "nltk5"])
def test_batch_alignment_equals_item_by_item(smoothing, brevity_penalty):
    items = _items(7)
    for cls in (MaxBLEU, MDS, PDS):
        metric = cls(smoothing=smoothing, brevity_penalty=brevity_penalty, ties="first")
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


def test_batch_alignment_with_the_public_scorers_ties_equals_item_by_item():
    """ties="lsdscc" (the default with the public scorer's BLEU): the groups in the public order of
    their ids ("null" after the numbers), the public scorer's float sums; the same alignment, bit for
    bit, as item by item. Words drawn from the groups make ties frequent."""
    rng = random.Random(3)
    items = []
    for item in _items(11, 70):
        words = [w for g in item.groups for r in g for w in r.split()]
        hyps = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 5))) for _ in range(6)]
        ids = rng.sample(["1", "2", "3", "null", "7"], len(item.groups))
        items.append(Item(item.id, hyps, groups=item.groups, group_ids=ids if rng.random() < 0.8 else None))
    metric = MaxBLEU()
    assert metric.ties == "lsdscc" and lsdscc._batchable(metric, items)
    expected = [metric.alignment(item) for item in items]
    assert lsdscc._batch_alignment(metric, items) == expected
    assert any(a != b for a, b in zip(expected, MaxBLEU(ties="first").test_set_alignment(items)))  # order matters


def test_small_or_malformed_test_sets_take_the_item_path():
    items = _items(3)
    assert not lsdscc._batchable(MaxBLEU(ties="first"), items[:10]) and not bleu_module._batchable(items[:10])
    ids = [Item(i.id, i.hypotheses, groups=i.groups, group_ids=["1", "x"][:len(i.groups)]) for i in items]
    assert not lsdscc._batchable(MaxBLEU(ties="lsdscc"), ids)  # fewer ids than groups: the item path says so
    broken = items[:-1] + [Item(id="x", hypotheses=[], references=["a"], groups=[["a"]])]
    assert not lsdscc._batchable(MaxBLEU(ties="first"), broken) and not bleu_module._batchable(broken)
    not_text = items[:-1] + [Item(id="y", hypotheses=["a"], references=["a", 3], groups=[["a"], [3]])]
    assert not lsdscc._batchable(MaxBLEU(ties="first"), not_text) and not bleu_module._batchable(not_text)
    with pytest.raises(ValueError, match="no hypotheses"):
        MaxBLEU(ties="first").score_items(broken)


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
