"""Embedding Average, Vector Extrema, Greedy Matching (docs/algorithms.md#8-metric-definitions).

Golden values are worked by hand from the definitions with the tiny 2-d vectors below.
"""

import math
import pickle

import numpy as np
import pytest

from multiref.util.errors import UserError
from multiref.metrics import Item, get_metric
from multiref.metrics.embedding import (extrema_vector, greedy_matching, greedy_matching_many, load_vectors,
                                        unit_rows, vectors_format_for)

# a = (1, 0), b = (0, 1), c = (1, 1), d = (-2, 1)
WORDS = {"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [1.0, 1.0], "d": [-2.0, 1.0]}
S2, S5, S10 = math.sqrt(2), math.sqrt(5), math.sqrt(10)


@pytest.fixture(scope="module")
def kv():
    from gensim.models import KeyedVectors

    vectors = KeyedVectors(vector_size=2)
    vectors.add_vectors(list(WORDS), np.array(list(WORDS.values()), dtype=np.float32))
    return vectors


# Hand-worked values.
# hyp "a d", ref "b c":
#   average: hyp sum (-1, 1), ref sum (1, 2): cos = (-1 + 2) / (sqrt2 * sqrt5) = 1/sqrt10
#   extrema: hyp dim0 {1, -2} -> -2, dim1 {0, 1} -> 1 => (-2, 1); ref dim0 {0, 1} -> 1,
#            dim1 {1, 1} -> 1 => (1, 1): cos = (-2 + 1) / (sqrt5 * sqrt2) = -1/sqrt10
#   greedy:  cos(a,b) = 0, cos(a,c) = 1/sqrt2, cos(d,b) = 1/sqrt5, cos(d,c) = -1/sqrt10
#            hyp side: a -> 1/sqrt2, d -> 1/sqrt5; ref side: b -> 1/sqrt5, c -> 1/sqrt2
#            => (1/sqrt2 + 1/sqrt5) / 2
# hyp "a d", ref "c" (asymmetric greedy):
#   average: (-1, 1) . (1, 1) = 0 -> 0
#   extrema: (-2, 1) . (1, 1) = -1 -> -1 / (sqrt5 * sqrt2)
#   greedy:  hyp side (1/sqrt2 + -1/sqrt10) / 2; ref side c -> max(1/sqrt2, -1/sqrt10) = 1/sqrt2
# hyp "a zzz d" equals hyp "a d" (zzz has no vector and is skipped).
CASES = [
    ("embedding_average", "a d", ["b c"], 1 / S10),
    ("vector_extrema", "a d", ["b c"], -1 / S10),
    ("greedy_matching", "a d", ["b c"], (1 / S2 + 1 / S5) / 2),
    ("embedding_average", "a d", ["c"], 0.0),
    ("vector_extrema", "a d", ["c"], -1 / S10),
    ("greedy_matching", "a d", ["c"], ((1 / S2 - 1 / S10) / 2 + 1 / S2) / 2),
    ("embedding_average", "a zzz d", ["b c"], 1 / S10),
    ("vector_extrema", "a zzz d", ["b c"], -1 / S10),
    ("greedy_matching", "a zzz d", ["b c"], (1 / S2 + 1 / S5) / 2),
    # identical sentences score 1
    ("embedding_average", "c d", ["c d"], 1.0),
    ("vector_extrema", "c d", ["c d"], 1.0),
    ("greedy_matching", "c d", ["c d"], 1.0),
    # no vectors on one side -> 0
    ("embedding_average", "zzz", ["a"], 0.0),
    ("vector_extrema", "a", ["zzz yyy"], 0.0),
    ("greedy_matching", "", ["a"], 0.0),
    # multi-reference, max (default): hyp "a" vs refs "b" (cos 0), "c" (1/sqrt2), "a" (1)
    ("embedding_average", "a", ["b", "c"], 1 / S2),
    ("greedy_matching", "a", ["b", "a"], 1.0),
]


@pytest.mark.parametrize("name, hyp, refs, expected", CASES)
def test_hand_worked_values(kv, name, hyp, refs, expected):
    assert get_metric(name, vectors=kv).sentence_score(hyp, refs) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("name", ["embedding_average", "vector_extrema", "greedy_matching"])
def test_mean_aggregate(kv, name):
    # hyp "a" vs refs "a" (1) and "b" (0 for all three metrics: orthogonal) -> mean 0.5, max 1
    assert get_metric(name, vectors=kv, aggregate="mean").sentence_score("a", ["a", "b"]) == pytest.approx(0.5)
    assert get_metric(name, vectors=kv).sentence_score("a", ["a", "b"]) == pytest.approx(1.0)


@pytest.mark.parametrize("name, expected", [
    # hyp "a d" vs "b c", "zzz" (no vectors: 0), "c" -- values from CASES above, averaged
    ("greedy_matching", ((1 / S2 + 1 / S5) / 2 + 0 + ((1 / S2 - 1 / S10) / 2 + 1 / S2) / 2) / 3),
    ("embedding_average", (1 / S10 + 0 + 0) / 3),
    ("vector_extrema", (-1 / S10 + 0 - 1 / S10) / 3),
])
def test_mean_over_references_of_mixed_lengths(kv, name, expected):
    metric = get_metric(name, vectors=kv, aggregate="mean")
    assert metric.sentence_score("a d", ["b c", "zzz", "c"]) == pytest.approx(expected, abs=1e-6)


def test_greedy_batched_equals_pairwise():
    rng = np.random.default_rng(7)
    hyp = unit_rows(rng.standard_normal((4, 5)))
    refs = [unit_rows(rng.standard_normal((n, 5))) for n in (1, 3, 6, 2)]
    assert greedy_matching_many(hyp, refs) == pytest.approx([greedy_matching(hyp, r) for r in refs], abs=1e-12)


def test_extrema_tie_keeps_positive():
    # dim0 values {1, -1}: equal size, positive wins (nlg-eval's np.where(|min| > max, min, max))
    assert extrema_vector(np.array([[1.0, 0.5], [-1.0, -2.0]])).tolist() == [1.0, -2.0]


def test_sentences_without_vectors_are_counted(kv):
    metric = get_metric("embedding_average", vectors=kv)
    items = [
        Item("1", ["a d"], ["b c"]),
        Item("2", ["zzz"], ["a", "yyy"]),   # hypothesis and one reference without vectors
        Item("3", ["a"], ["a"]),
    ]
    result = metric.score_items(items)
    assert result.per_item == [pytest.approx(1 / S10), 0.0, pytest.approx(1.0)]
    assert result.score == pytest.approx((1 / S10 + 1.0) / 3)
    assert result.extra["hypotheses_without_vectors"] == 1
    assert result.extra["references_without_vectors"] == 1
    # counts restart on the next call
    assert metric.score_items(items[:1]).extra["hypotheses_without_vectors"] == 0


def test_lowercase_option_reaches_lookup(kv):
    assert get_metric("embedding_average", vectors=kv).sentence_score("A", ["a"]) == 0.0
    assert get_metric("embedding_average", vectors=kv, lowercase=True).sentence_score("A", ["a"]) == pytest.approx(1.0)


def test_three_file_formats_give_same_scores(kv, tmp_path):
    kv.save(str(tmp_path / "tiny.kv"))
    kv.save_word2vec_format(str(tmp_path / "tiny.txt"), binary=False)
    kv.save_word2vec_format(str(tmp_path / "tiny.bin"), binary=True)
    (tmp_path / "tiny.vectors").write_bytes((tmp_path / "tiny.txt").read_bytes())
    expected = 1 / S10
    for name in ["tiny.kv", "tiny.txt", "tiny.bin"]:
        metric = get_metric("embedding_average", vectors=str(tmp_path / name))
        assert metric.sentence_score("a d", ["b c"]) == pytest.approx(expected, abs=1e-6)
        assert f"|vectors:{name}|dim:2|vocab:4|" in metric.signature
    override = get_metric("embedding_average", vectors=str(tmp_path / "tiny.vectors"), vectors_format="word2vec_text")
    assert override.sentence_score("a d", ["b c"]) == pytest.approx(expected, abs=1e-6)


def test_glove_text_without_header(tmp_path):
    path = tmp_path / "glove.txt"
    path.write_text("a 1 0\nb 0 1\nc 1 1\n", encoding="utf-8")
    metric = get_metric("greedy_matching", vectors=str(path), vectors_format="glove_text")
    assert metric.sentence_score("a", ["c"]) == pytest.approx(1 / S2, abs=1e-6)
    assert "|vocab:3|" in metric.signature


def test_format_by_extension():
    assert vectors_format_for("x/w.kv") == "kv"
    assert vectors_format_for("w.vec.gz") == "word2vec_text"
    assert vectors_format_for("W.BIN") == "word2vec_binary"
    with pytest.raises(UserError, match="vectors_format"):
        vectors_format_for("w.model")


def test_missing_file_names_path(tmp_path):
    missing = tmp_path / "nope.kv"
    with pytest.raises(UserError, match="nope.kv: word-vector file not found"):
        get_metric("vector_extrema", vectors=str(missing))


def test_unreadable_file_is_user_error(tmp_path):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"not a word2vec file at all")
    with pytest.raises(UserError, match="bad.bin: cannot read word vectors"):
        load_vectors(bad)


@pytest.mark.parametrize("name", ["embedding_average", "vector_extrema", "greedy_matching"])
def test_vectors_required(name):
    with pytest.raises(ValueError, match="--vectors"):
        get_metric(name)


def test_bad_options(kv):
    with pytest.raises(ValueError, match="vectors_format"):
        get_metric("embedding_average", vectors="x.kv", vectors_format="fasttext")
    with pytest.raises(ValueError, match="aggregate"):
        get_metric("embedding_average", vectors=kv, aggregate="standard")
    with pytest.raises(ValueError, match="vectors must be a path or a gensim KeyedVectors"):
        get_metric("embedding_average", vectors=42)


def test_signatures_differ(kv):
    sigs = {
        get_metric("embedding_average", vectors=kv).signature,
        get_metric("embedding_average", vectors=kv, aggregate="mean").signature,
        get_metric("vector_extrema", vectors=kv).signature,
        get_metric("greedy_matching", vectors=kv, lowercase=True).signature,
    }
    assert len(sigs) == 4
    assert "vectors:object|dim:2|vocab:4" in get_metric("greedy_matching", vectors=kv).signature


def test_pickle_round_trip(kv):
    metric = get_metric("greedy_matching", vectors=kv)
    metric.sentence_score("a d", ["b c"])
    clone = pickle.loads(pickle.dumps(metric))
    assert clone._cache == {}
    assert clone.sentence_score("a d", ["b c"]) == pytest.approx((1 / S2 + 1 / S5) / 2, abs=1e-6)
