"""The ``lsdscc`` score tokenizer: ``multiref score --tokenizer lsdscc`` tokenizes hypotheses
and references with the corpus's text convention, and says so in the metric signature."""

from __future__ import annotations

import json

import pytest

from lsdscc.corpus.cleaning import clean_and_tokenize
from multiref_cli import main
from multiref.metrics.tokenizers import TOKENIZER_NAMES, get_tokenizer

# Raw system outputs and their forms in the released convention (worked by hand).
RAW = ["I didn't like the ending.", "It's 10/10, the 90s' best!!!", "Nope... <unk> <unk> it\u2019s fine"]
TOKENIZED = ["i didn t like the ending", "it s digits digits , the digitss best ! !", "nope <unk> <unk> it s fine"]


def test_registered_and_applies_the_corpus_convention():
    assert "lsdscc" in TOKENIZER_NAMES
    tok = get_tokenizer("lsdscc")
    assert [tok(t) for t in RAW] == [t.split() for t in TOKENIZED]
    assert tok("I didn't like it.") == clean_and_tokenize("I didn't like it.", convention="lsdscc")


def test_keeps_the_unknown_word_token():
    # markdown stripping alone would read <unk> as an HTML tag and drop it
    assert clean_and_tokenize("a <unk> b") == ["a", "b"]
    assert get_tokenizer("lsdscc")("<unk> a <unk>b <unk>") == ["<unk>", "a", "<unk>", "b", "<unk>"]


def test_released_style_text_is_unchanged():
    text = "i didn t see the `` digits '' cut , it s digitss stuff ? !"
    assert get_tokenizer("lsdscc")(text) == text.split()


def _write(folder, hyps):
    folder.mkdir()
    refs = {"what did you think ?": {"1": [TOKENIZED[0], "i liked it a lot"], "2": [TOKENIZED[1]]},
            "anything else ?": {"1": [TOKENIZED[2]]}}
    (folder / "refs.json").write_text(json.dumps(refs))
    lines = [{"query": "what did you think ?", "hypotheses": hyps[:2]}, {"query": "anything else ?", "hypotheses": hyps[2:]}]
    (folder / "hyps.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return str(folder / "refs.json"), str(folder / "hyps.jsonl")


def _score(capsys, refs, hyps, tokenizer):
    code = main(["score", "-r", refs, "-H", hyps, "--tokenizer", tokenizer, "--format", "json", "-q"])
    assert code == 0
    return json.loads(capsys.readouterr().out)


def test_score_cli_tokenizes_like_the_corpus_and_records_it(tmp_path, capsys):
    raw = _score(capsys, *_write(tmp_path / "raw", RAW), "lsdscc")
    done = _score(capsys, *_write(tmp_path / "done", TOKENIZED), "whitespace")
    plain = _score(capsys, *_write(tmp_path / "plain", RAW), "whitespace")
    for metric in ("maxbleu", "mds", "pds"):
        assert raw[metric]["score"] == pytest.approx(done[metric]["score"]), metric
        assert "|tok:lsdscc|" in raw[metric]["signature"]
    assert raw["maxbleu"]["score"] > plain["maxbleu"]["score"]  # raw text misses the references' forms
