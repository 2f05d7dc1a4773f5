"""Synthetic corruptions (dailydialog_pp/corruptions.py; docs/algorithms.md#5-dd)."""

import os
import subprocess
import sys

import pytest

from dailydialog_pp.corruptions import CORRUPTIONS, check_nltk_data, corrupt, stopwords, tokenize
from tests.helpers import REPO_DIR

TEXT = "I don't think we should go, it's too late!"

# Expected outputs written by hand from the definitions in the module docstring.
CASES = [
    ("reverse", TEXT, "! late too it's , go should we think don't I"),
    ("drop_punctuation", TEXT, "I don't think we should go it's too late"),
    ("drop_stopwords", TEXT, "don't think go , it's late !"),
    ("drop_stopwords", "The cat sat on the mat .", "cat sat mat ."),
    ("reverse", "", ""),
    ("drop_punctuation", "?!", ""),
]


@pytest.mark.parametrize("name,text,expected", CASES)
def test_corruptions(name, text, expected):
    assert corrupt(text, name) == expected


def test_tokenize_keeps_contractions():
    assert tokenize("I’ll pay $5.") == ["I’ll", "pay", "$", "5", "."]


def test_shuffle_is_seeded_permutation():
    a = corrupt(TEXT, "shuffle", key="row1:0", seed=0)
    assert sorted(a.split()) == sorted(tokenize(TEXT))
    assert a == corrupt(TEXT, "shuffle", key="row1:0", seed=0)
    others = {corrupt(TEXT, "shuffle", key=f"row{i}:0", seed=0) for i in range(10)}
    assert len(others) > 1


def test_unknown_corruption():
    with pytest.raises(ValueError, match="unknown corruption"):
        corrupt("x", "upside_down")


def test_stopword_list_is_shipped():
    words = stopwords()
    assert {"the", "and", "you"} <= words and "cat" not in words
    assert set(CORRUPTIONS) == {"reverse", "shuffle", "drop_punctuation", "drop_stopwords", "nouns", "synonyms"}


def test_check_nltk_data_passes_for_data_free_corruptions():
    check_nltk_data(["reverse", "shuffle", "drop_stopwords"])  # no NLTK data needed: no error


def test_nouns_and_synonyms_need_nltk_data_named_in_the_error(tmp_path):
    # For real: a fresh interpreter whose NLTK_DATA is an empty folder (NLTK reads it at import).
    env = dict(os.environ, NLTK_DATA=str(tmp_path), HOME=str(tmp_path))
    code = ("from dailydialog_pp.corruptions import check_nltk_data\n"
            "from multiref.util.errors import UserError\n"
            "try:\n    check_nltk_data(['nouns', 'synonyms'])\nexcept UserError as e:\n    print('ERR', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=str(REPO_DIR))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ERR ") and "NLTK_DATA=" + str(tmp_path) in out.stdout
    assert "averaged_perceptron_tagger_eng" in out.stdout and "corpora/wordnet" in out.stdout


def test_cli_corruption_error_names_nltk_data(tmp_path):
    env = dict(os.environ, NLTK_DATA=str(tmp_path / "empty"), HOME=str(tmp_path))
    (tmp_path / "empty").mkdir()
    exe = os.path.join(os.path.dirname(sys.executable), "multiref")
    out = subprocess.run([exe, "dailydialog", "build", "--output", str(tmp_path / "out"), "--corruptions", "nouns"],
                         capture_output=True, text=True, env=env, cwd=str(REPO_DIR))
    assert out.returncode == 1
    assert out.stderr.startswith("multiref: error: corruption nouns needs NLTK data") and "NLTK_DATA" in out.stderr



def test_nouns_and_synonyms_logic_with_a_stub_tagger(monkeypatch):
    # NLTK's tagger and WordNet need downloaded data, absent offline: stub them to test our logic.
    from dailydialog_pp import corruptions

    tags = {"The": "DT", "cat": "NN", "sat": "VBD", "on": "IN", "mats": "NNS", "quickly": "RB", ".": "."}
    monkeypatch.setattr(corruptions, "_tag", lambda tokens: [(t, tags[t]) for t in tokens])
    synonyms = {("cat", "n"): "true cat", ("sat", "v"): "sit down", ("quickly", "r"): "rapidly"}
    monkeypatch.setattr(corruptions, "_synonym", lambda word, pos: synonyms.get((word, pos), word))
    text = "The cat sat on mats quickly ."
    assert corrupt(text, "nouns") == "cat mats"
    assert corrupt(text, "synonyms") == "The true cat sit down on mats rapidly ."
