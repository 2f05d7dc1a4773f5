"""Random negatives (dailydialog_pp/negatives.py) and hash splits (dailydialog_pp/splits.py); docs/algorithms.md#5-dd."""

from collections import Counter

import pytest

from dailydialog_pp.negatives import NegativeOptions, build_pool, pool_entries, sample_negatives
from dailydialog_pp.splits import SplitOptions, assign_split, hash_fraction


def _pool():
    rows = [{"dialogue_id": f"d{i}", "response": f"response number {i} is long enough",
             "positive_responses": [f"positive {i} also has five words", "ok"]} for i in range(30)]
    opts = NegativeOptions(min_words=5)
    return build_pool(e for r in rows for e in pool_entries(r, opts))


def test_pool_keeps_only_long_enough_responses():
    pool = _pool()
    assert len(pool) == 60 and all(len(t.split()) >= 5 for t, _ in pool)
    assert pool == sorted(pool)


def test_sample_negatives_rules():
    pool = _pool()
    own = ["response number 3 is long enough", "positive 4 also has five words"]
    got = sample_negatives("d3_0", "d3", own, pool, NegativeOptions(count=5, seed=1))
    assert len(got) == 5 and len(set(got)) == 5
    assert not any(t.split()[2 if t.startswith("response") else 1] == "3" for t in got)  # not from own dialogue
    assert own[1] not in got  # never a duplicate of a positive
    # seeded by (seed, context id): same draw again, another seed draws differently
    assert got == sample_negatives("d3_0", "d3", own, pool, NegativeOptions(count=5, seed=1))
    assert got != sample_negatives("d3_0", "d3", own, pool, NegativeOptions(count=5, seed=2))


def test_sample_negatives_small_pool_and_zero():
    pool = [("a b c d e", "d1"), ("f g h i j", "d2")]
    assert sample_negatives("x", "d1", [], pool, NegativeOptions(count=5)) == ["f g h i j"]
    assert sample_negatives("x", "d9", [], pool, NegativeOptions(count=0)) == []
    with pytest.raises(ValueError):
        NegativeOptions(count=-1)


def test_split_is_stable_and_near_80_10_10():
    ids = [f"train_{i}" for i in range(20000)]
    counts = Counter(assign_split(i) for i in ids)
    assert abs(counts["train"] / 20000 - 0.8) < 0.01
    assert abs(counts["validation"] / 20000 - 0.1) < 0.01
    assert [assign_split(i) for i in ids[:50]] == [assign_split(i) for i in ids[:50]]
    assert 0 <= hash_fraction("x") < 1


def test_split_options():
    assert {assign_split(f"d{i}", SplitOptions(0, 0, 1)) for i in range(100)} == {"test"}
    assert assign_split("d1", SplitOptions(salt="a")) in ("train", "validation", "test")
    changed = sum(assign_split(f"d{i}", SplitOptions(salt="a")) != assign_split(f"d{i}", SplitOptions(salt="b"))
                  for i in range(200))
    assert changed > 20  # the salt is used
    with pytest.raises(ValueError, match="sum to 1"):
        SplitOptions(0.5, 0.1, 0.1)
