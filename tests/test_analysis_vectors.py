"""Seeded word2vec vectors trained on DailyDialog-style dialogues, for the embedding metrics."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from multiref.analysis import vectors as vec
from multiref_cli import main
from tests.helpers import REPO_DIR, data_path

DIALOGUES = str(data_path("analysis", "dialogues_sample.txt"))
RATINGS = str(data_path("analysis", "ratings.csv"))
SMALL = vec.VectorConfig(vector_size=8, min_count=1, epochs=3, seed=5)


def test_read_utterances_splits_on_eou():
    sentences = vec.read_dailydialog_utterances(DIALOGUES)
    # 4 dialogues x 4 utterances, repeated 5 times
    assert len(sentences) == 80
    assert sentences[0] == ["do", "you", "want", "to", "get", "dinner", "tonight?"]


def test_training_is_seeded_and_independent_of_hash_seed(tmp_path):
    out = tmp_path / "v.kv"
    wv = vec.train_dailydialog_vectors(DIALOGUES, str(out), SMALL)
    assert out.exists() and "dinner" in wv.key_to_index and wv.vector_size == 8
    again = vec.load_vectors(str(out))
    assert np.array_equal(again["dinner"], wv["dinner"])
    other = vec.train_vectors(vec.read_dailydialog_utterances(DIALOGUES), vec.VectorConfig(vector_size=8, min_count=1,
                                                                                           epochs=3, seed=6))
    assert not np.array_equal(other["dinner"], wv["dinner"])
    # a different PYTHONHASHSEED must not change the vectors (gensim hashes words with hash())
    code = ("from multiref.analysis import vectors as v; import sys;"
            "wv = v.train_dailydialog_vectors(sys.argv[1], None, v.VectorConfig(vector_size=8, min_count=1, epochs=3,"
            " seed=5)); print(repr(wv['dinner'].tolist()))")
    outputs = set()
    for hash_seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        res = subprocess.run([sys.executable, "-c", code, DIALOGUES], env=env, cwd=REPO_DIR, capture_output=True,
                             text=True, check=True)
        outputs.add(res.stdout)
    assert outputs == {repr(wv["dinner"].tolist()) + "\n"}


def test_errors():
    from multiref.util.errors import UserError

    with pytest.raises(UserError, match="not found"):
        vec.read_dailydialog_utterances("/nonexistent/dialogues.txt")
    with pytest.raises(UserError, match="vectors file not found"):
        vec.load_vectors("/nonexistent.kv")


def test_correlation_with_trained_vectors(tmp_path, capsys):
    out = tmp_path / "emb"
    argv = ["analyze", "correlation", "--ratings", RATINGS, "--metric", "embedding_average", "--metric",
            "greedy_matching", "--train-vectors-from", DIALOGUES, "--bootstrap", "0", "--output", str(out),
            "--format", "json"]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed) == {"embedding_average", "greedy_matching"}
    assert printed["embedding_average"]["multi"]["pearson"]["value"] is not None
    assert (out / "word2vec.kv").exists()
    report = json.loads((out / "correlation.json").read_text())
    assert report["options"]["word2vec"]["seed"] == 13 and report["options"]["vocabulary"] > 20
    # the saved vectors, passed back with --vectors, give the same numbers
    assert main(["analyze", "correlation", "--ratings", RATINGS, "--metric", "embedding_average", "--metric",
                 "greedy_matching", "--vectors", str(out / "word2vec.kv"), "--bootstrap", "0", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == printed
