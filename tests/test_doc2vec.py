"""Doc2Vec re-ranking (lsdscc/testset/doc2vec.py, docs/algorithms.md#test-set-step-2-doc2vec-re-ranking)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from multiref.util.errors import UserError


def fake_model(vectors):
    """An object shaped like a gensim Doc2Vec model: only ``dv.vectors`` is read."""
    return SimpleNamespace(dv=SimpleNamespace(vectors=np.array(vectors, dtype=np.float32)))


# Query texts (tag i = line i) and hand-made 2-d vectors: cosines with "q" are exact.
TEXTS = ["a", "b", "c", "d", "q"]
VECTORS = [
    [1.0, 0.0],  # a: cos with q = 1.0 (same direction)
    [math.cos(math.radians(20)), math.sin(math.radians(20))],  # b: cos 20 deg = 0.939693
    [math.cos(math.radians(30)), math.sin(math.radians(30))],  # c: cos 30 deg = 0.866025
    [0.0, 3.0],  # d: orthogonal, 0.0
    [2.0, 0.0],  # q: the query (length does not matter)
]


@pytest.mark.parametrize(
    "threshold, expected",
    [
        (0.9, [("a", 1.0), ("b", 0.939693)]),  # the paper's threshold: c (0.866) is dropped
        (0.866025, [("a", 1.0), ("b", 0.939693), ("c", 0.866025)]),  # at the threshold: kept
        (0.95, [("a", 1.0)]),
        (1.0, [("a", 1.0)]),
        (-1.0, [("a", 1.0), ("b", 0.939693), ("c", 0.866025), ("d", 0.0)]),
    ],
)
def test_rerank_respects_threshold_and_orders_by_cosine(threshold, expected):
    from lsdscc.testset.doc2vec import QueryVectors

    vectors = QueryVectors(fake_model(VECTORS), TEXTS)
    # Lucene order given deliberately differs from the cosine order
    kept = vectors.rerank("q", ["d", "c", "b", "a"], lambda t: t, threshold)
    assert [(c, round(s, 6)) for c, s in kept] == expected


def test_rerank_ties_keep_lucene_order():
    from lsdscc.testset.doc2vec import QueryVectors

    vectors = QueryVectors(fake_model([[1, 0], [1, 0], [1, 0]]), ["x", "y", "q"])
    assert [c for c, _ in vectors.rerank("q", ["y", "x"], lambda t: t, 0.9)] == ["y", "x"]


SENTENCES = [f"the movie number {i % 7} was {w} and {v}" for i, (w, v) in
             enumerate([(w, v) for w in ("good", "bad", "long", "fun") for v in ("loud", "quiet", "sad")] * 3)]


def _train(tmp_path, name, config, queries, responses):
    from lsdscc.testset import doc2vec

    path = str(tmp_path / f"{name}.txt")
    n = doc2vec.write_sentences(path, queries, responses)
    return doc2vec.train(path, config), n, path


def test_training_file_layout_and_reproducible_training(tmp_path):
    from lsdscc.testset.doc2vec import Doc2VecConfig, QueryVectors

    queries = sorted(set(SENTENCES[:12]))
    responses = SENTENCES[6:] + [""]  # overlap with queries is written once; "" becomes <empty>
    config = Doc2VecConfig(vector_size=16, epochs=5, min_count=1, workers=1, seed=7)
    model_a, n, path = _train(tmp_path, "a", config, queries, responses)
    lines = open(path, encoding="utf-8").read().splitlines()
    assert lines[: len(queries)] == queries  # tag i = query i
    assert "<empty>" in lines and len(lines) == n == len(set(SENTENCES + [""]))
    assert len(model_a.dv) == n
    model_b, _, _ = _train(tmp_path, "b", config, queries, responses)
    np.testing.assert_array_equal(model_a.dv.vectors, model_b.dv.vectors)  # workers=1: reproducible
    model_c, _, _ = _train(tmp_path, "c", Doc2VecConfig(vector_size=16, epochs=5, min_count=1, seed=8), queries, responses)
    assert not np.array_equal(model_a.dv.vectors, model_c.dv.vectors)  # the seed is read

    vectors = QueryVectors(model_a, queries)
    scored = [(q, vectors.cosine(queries[0], q)) for q in queries[1:]]
    threshold = sorted(s for _, s in scored)[len(scored) // 2]  # a threshold that splits them
    kept = vectors.rerank(queries[0], queries[1:], lambda t: t, threshold)
    assert kept and len(kept) < len(scored)
    assert all(s >= threshold for _, s in kept)
    assert {q for q, s in scored if s >= threshold} == {q for q, _ in kept}
    assert [s for _, s in kept] == sorted((s for _, s in kept), reverse=True)


@pytest.mark.parametrize(
    "options, message",
    [({"vector_size": 0}, "vector_size"), ({"epochs": 0}, "epochs"), ({"min_count": 0}, "min_count"),
     ({"dm": 2}, "dm"), ({"threshold": 1.5}, "threshold")],
)
def test_config_errors(options, message):
    from lsdscc.testset.doc2vec import Doc2VecConfig

    with pytest.raises(UserError, match=message):
        Doc2VecConfig(**options)


def test_broken_model_file_is_a_user_error(tmp_path):
    from lsdscc.testset.doc2vec import load

    bad = tmp_path / "doc2vec.model"
    bad.write_bytes(b"not a pickle")
    with pytest.raises(UserError, match="cannot load Doc2Vec model"):
        load(str(bad))


# ---------------------------------------------------------------- training on a seeded sample

QUERIES = sorted({f"query {i} about film {i % 5}" for i in range(40)})
RESPONSES = [f"response {i} says {w}" for i in range(120) for w in ("yes",)] + QUERIES[:3]  # 3 are also queries


def test_small_corpus_is_trained_in_full():
    from lsdscc.testset.doc2vec import Doc2VecConfig, select_training

    training = select_training(QUERIES, RESPONSES, Doc2VecConfig(sample=160), needed=QUERIES[:2])
    assert not training.sampled and training.size == training.documents == 160
    assert list(training.queries) == QUERIES and list(training.responses) == sorted(set(RESPONSES) - set(QUERIES))
    assert training.counts() == {"doc2vec_sampled": False, "doc2vec_trained_sentences": 160,
                                 "doc2vec_corpus_sentences": 160}


def test_sample_is_seeded_order_free_and_keeps_the_compared_queries():
    import random

    from lsdscc.testset.doc2vec import Doc2VecConfig, select_training

    needed = set(QUERIES[5:15])
    config = Doc2VecConfig(sample=50, seed=3)
    training = select_training(QUERIES, RESPONSES, config, needed)
    assert training.sampled and training.size == 50 and training.documents == 160
    assert needed <= set(training.queries)  # every compared query has a trained vector
    assert list(training.queries) == sorted(training.queries) and list(training.responses) == sorted(training.responses)
    assert set(training.queries) - needed and training.responses  # the rest is drawn from queries and responses
    shuffled = RESPONSES[:]
    random.Random(0).shuffle(shuffled)
    assert select_training(QUERIES, shuffled, config, sorted(needed)) == training  # order does not matter
    other = select_training(QUERIES, RESPONSES, Doc2VecConfig(sample=50, seed=4), needed)
    assert other.size == 50 and set(other.responses) != set(training.responses)  # the seed is read
    assert training.digest() != other.digest()
    # more compared queries than the sample size: all of them, nothing else
    crowded = select_training(QUERIES, RESPONSES, Doc2VecConfig(sample=5), QUERIES[:20])
    assert list(crowded.queries) == QUERIES[:20] and not crowded.responses


def test_training_on_a_sample_gives_vectors_for_the_compared_queries(tmp_path):
    from lsdscc.testset.doc2vec import Doc2VecConfig, QueryVectors, select_training, train_set

    config = Doc2VecConfig(vector_size=8, epochs=2, min_count=1, sample=60)
    training = select_training(QUERIES, RESPONSES, config, QUERIES[:4])
    model = train_set(training, config, str(tmp_path))
    assert len(model.dv) == training.size == 60 and not list(tmp_path.iterdir())  # the sentence file is removed
    vectors = QueryVectors(model, training.queries)
    assert -1.0 <= vectors.cosine(QUERIES[0], QUERIES[3]) <= 1.0
    again = train_set(select_training(QUERIES, RESPONSES, config, QUERIES[:4]), config, str(tmp_path))
    np.testing.assert_array_equal(model.dv.vectors, again.dv.vectors)


def test_sample_size_must_be_positive():
    from lsdscc.testset.doc2vec import Doc2VecConfig

    with pytest.raises(UserError, match="sample"):
        Doc2VecConfig(sample=0)
