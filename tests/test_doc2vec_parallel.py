"""The deterministic data-parallel Doc2Vec prototype (lsdscc/testset/doc2vec_parallel.py): real
gensim, real worker processes, a small generated corpus."""

import hashlib
import random

import numpy as np
import pytest

from lsdscc.testset import doc2vec_parallel
from lsdscc.testset.doc2vec import Doc2VecConfig

CONFIG = Doc2VecConfig(vector_size=16, epochs=3, min_count=1)


def _sentences(path, lines=600, seed=0):
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(300)]
    with open(path, "w", encoding="utf-8") as fh:
        for _ in range(lines):
            fh.write(" ".join(rng.choices(words, k=rng.randint(2, 12))) + "\n")
    return str(path)


def _digest(model):
    digest = hashlib.sha256()
    for array in (model.dv.vectors, model.wv.vectors, model.syn1neg):
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def _initial(path):
    from gensim.models.doc2vec import Doc2Vec

    model = Doc2Vec(vector_size=CONFIG.vector_size, epochs=CONFIG.epochs, window=CONFIG.window,
                    min_count=CONFIG.min_count, workers=1, dm=CONFIG.dm, seed=CONFIG.seed)
    model.build_vocab(corpus_file=path)
    return model


def test_two_runs_give_the_same_bytes_and_train_every_document(tmp_path):
    path = _sentences(tmp_path / "sentences.txt")
    first = doc2vec_parallel.train_file(path, CONFIG, 2, str(tmp_path), rounds=2)
    again = doc2vec_parallel.train_file(path, CONFIG, 2, str(tmp_path), rounds=2)
    assert _digest(first) == _digest(again)
    initial = _initial(path)
    assert first.dv.vectors.shape == initial.dv.vectors.shape == (600, 16)
    moved = np.abs(first.dv.vectors - initial.dv.vectors).max(axis=1)
    assert (moved > 0).all()  # every document, in either shard, was trained
    assert not np.array_equal(first.wv.vectors, initial.wv.vectors)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sentences.txt"]  # shards and initial model removed


def test_the_number_of_processes_changes_the_model(tmp_path):
    path = _sentences(tmp_path / "sentences.txt")
    two = doc2vec_parallel.train_file(path, CONFIG, 2, str(tmp_path))
    three = doc2vec_parallel.train_file(path, CONFIG, 3, str(tmp_path))
    assert _digest(two) != _digest(three)


@pytest.mark.parametrize("kwargs", [{"combine": "median"}, {"rounds": 0}])
def test_bad_arguments_are_value_errors(tmp_path, kwargs):
    path = _sentences(tmp_path / "sentences.txt", lines=10)
    with pytest.raises(ValueError):
        doc2vec_parallel.train_file(path, CONFIG, 2, str(tmp_path), **kwargs)


def test_too_few_sentences_for_the_shards_is_a_value_error(tmp_path):
    path = _sentences(tmp_path / "sentences.txt", lines=3)
    with pytest.raises(ValueError, match="cannot fill"):
        doc2vec_parallel.train_file(path, CONFIG, 2, str(tmp_path), rounds=2)
