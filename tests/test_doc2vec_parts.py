"""--doc2vec-parts (lsdscc/testset/doc2vec_parts.py): independent Doc2Vec parts, real gensim,
real worker processes, small generated corpora."""

import hashlib
import random
from dataclasses import replace

import numpy as np
import pytest

from lsdscc.testset import doc2vec_parts
from lsdscc.testset.doc2vec import Doc2VecConfig, TrainingSet, select_training
from lsdscc.testset.doc2vec_parts import train_vectors, vectors_of
from multiref.util.errors import UserError

CONFIG = Doc2VecConfig(vector_size=16, epochs=5, min_count=1, parts=2)
TOPICS = [[f"a{i}" for i in range(40)], [f"b{i}" for i in range(40)]]


def _corpus(queries=120, responses=300, seed=0):
    """Sentences of two topics with disjoint words: (queries, responses, topic of each query)."""
    rng = random.Random(seed)

    def sentence(topic):
        return " ".join(rng.choices(TOPICS[topic], k=rng.randint(4, 10)))

    texts = {}
    while len(texts) < queries:
        topic = len(texts) % 2
        texts.setdefault(sentence(topic), topic)
    query_texts = sorted(texts)
    return query_texts, [sentence(k % 2) for k in range(responses)], texts


def _digest(found) -> str:
    return hashlib.sha256(np.ascontiguousarray(found.vectors).tobytes()).hexdigest()


def test_the_split_keeps_the_needed_texts_in_every_part_and_the_others_in_one():
    queries, responses, _ = _corpus()
    training = select_training(queries, responses, CONFIG)
    needed = queries[:30]
    parts = doc2vec_parts.split_training(training, needed, 3, seed=1)
    for part in parts:
        assert set(needed) <= set(part.queries)
        assert list(part.queries) == sorted(part.queries) and list(part.responses) == sorted(part.responses)
    others = [t for t in training.queries if t not in needed] + list(training.responses)
    placed = [t for part in parts for t in list(part.queries) + list(part.responses) if t not in needed]
    assert sorted(placed) == sorted(others)  # each other sentence in exactly one part
    assert all(len(part.responses) > 0.2 * len(training.responses) for part in parts)  # a fair share each
    again = doc2vec_parts.split_training(training, needed, 3, seed=1)
    assert [(p.queries, p.responses) for p in parts] == [(p.queries, p.responses) for p in again]
    other_seed = doc2vec_parts.split_training(training, needed, 3, seed=2)
    assert [p.responses for p in parts] != [p.responses for p in other_seed]


def test_the_concatenation_compares_as_the_mean_of_the_parts_cosines():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(5, 7)), rng.normal(size=(5, 9))
    a[4] = 0.0
    joined32 = doc2vec_parts.concatenate([a, b])
    joined = joined32.astype(np.float64)

    def cos(m, i, j):
        return m[i] @ m[j] / np.linalg.norm(m[i]) / np.linalg.norm(m[j])

    assert joined32.shape == (5, 16) and joined32.dtype == np.float32
    assert joined[0] @ joined[1] == pytest.approx((cos(a, 0, 1) + cos(b, 0, 1)) / 2, abs=1e-6)
    assert np.linalg.norm(joined[0]) == pytest.approx(1.0, abs=1e-6)
    assert not joined[4, :7].any()  # a zero part stays zero


def test_same_bytes_in_one_process_or_two_and_on_a_rerun(tmp_path):
    queries, responses, _ = _corpus()
    training = select_training(queries, responses, CONFIG)
    needed = queries[::3]
    two = doc2vec_parts.train(training, CONFIG, str(tmp_path), needed, processes=2)
    one = doc2vec_parts.train(training, CONFIG, str(tmp_path), needed, processes=1)
    again = doc2vec_parts.train(training, CONFIG, str(tmp_path), needed, processes=2)
    assert two.texts == one.texts == tuple(sorted(needed))
    assert two.vectors.shape == (len(needed), 32)
    assert _digest(two) == _digest(one) == _digest(again)
    assert list(tmp_path.iterdir()) == []  # the parts' sentence files are removed
    other = doc2vec_parts.train(training, Doc2VecConfig(vector_size=16, epochs=5, min_count=1, parts=2, seed=2),
                                str(tmp_path), needed, processes=1)
    assert _digest(other) != _digest(one)  # the seed reaches every part


def test_parts_vectors_find_the_same_topic(tmp_path):
    """Quality sanity: the five nearest queries by the parts' vectors mostly share the query's
    topic (chance: half), as by one model's (20 epochs: fewer leave this toy corpus noisy)."""
    queries, responses, topic = _corpus(responses=2000)
    config = replace(CONFIG, epochs=20)
    training = select_training(queries, responses, config)

    def same_topic_share(config):
        vectors = vectors_of(train_vectors(training, config, str(tmp_path), queries), training)
        shares = []
        for q in queries:
            ranked = sorted((t for t in queries if t != q), key=lambda t: -vectors.cosine(q, t))[:5]
            shares.append(sum(topic[t] == topic[q] for t in ranked) / 5)
        return sum(shares) / len(shares)

    one_model, parts = same_topic_share(replace(config, parts=1)), same_topic_share(config)
    assert one_model > 0.7 and parts > 0.7


def test_saved_vectors_load_for_their_texts_only(tmp_path):
    found = doc2vec_parts.PartVectors(("a", "b"), np.arange(6, dtype=np.float32).reshape(2, 3))
    found.save(str(tmp_path / "v.npy"))
    loaded = doc2vec_parts.PartVectors.load(str(tmp_path / "v.npy"), ["a", "b"])
    assert loaded.texts == ("a", "b") and np.array_equal(loaded.vectors, found.vectors)
    assert loaded.query_vectors().cosine("a", "b") == found.query_vectors().cosine("a", "b")
    with pytest.raises(UserError, match="3 texts"):
        doc2vec_parts.PartVectors.load(str(tmp_path / "v.npy"), ["a", "b", "c"])
    (tmp_path / "bad.npy").write_bytes(b"not numpy")
    with pytest.raises(UserError, match="cannot load"):
        doc2vec_parts.PartVectors.load(str(tmp_path / "bad.npy"), ["a"])


def test_parts_options_and_errors():
    assert "parts" not in Doc2VecConfig().model_options()  # one model: card and cache key as before
    assert Doc2VecConfig(parts=3).options()["parts"] == 3
    with pytest.raises(UserError, match="parts must be at least 1"):
        Doc2VecConfig(parts=0)
    with pytest.raises(UserError, match="--doc2vec-workers must be 1"):
        Doc2VecConfig(parts=2, workers=2)
    training = TrainingSet(["q"], ["r"], 2)
    with pytest.raises(ValueError, match="none given"):
        doc2vec_parts.train(training, CONFIG, "/nonexistent", needed=["not a query"])
    assert doc2vec_parts.part_seed(1, 0) != doc2vec_parts.part_seed(1, 1) != doc2vec_parts.part_seed(2, 1)
    assert 1 <= doc2vec_parts.processes_for(8) <= 8 and doc2vec_parts.processes_for(1) == 1
