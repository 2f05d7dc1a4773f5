"""The ``lsdscc`` score tokenizer: ``multiref score --tokenizer lsdscc`` tokenizes hypotheses
and references with the corpus's text convention, and says so in the metric signature. It is
a plug-in of the metrics' tokenizer registry (the core imports no dataset package): registered
explicitly (as the CLI does) or found as an installed ``multiref.metrics.tokenizers`` entry point."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from lsdscc.corpus import tokenizer as lsdscc_tokenizer
from lsdscc.corpus.cleaning import clean_and_tokenize
from multiref.metrics.tokenizers import TOKENIZER_NAMES, get_tokenizer, register_tokenizer, tokenizer_names
from multiref_cli import main
from tests.helpers import REPO_DIR

lsdscc_tokenizer.register()

# Raw system outputs and their forms in the released convention (worked by hand).
RAW = ["I didn't like the ending.", "It's 10/10, the 90s' best!!!", "Nope... <unk> <unk> it\u2019s fine"]
TOKENIZED = ["i didn t like the ending", "it s digits digits , the digitss best ! !", "nope <unk> <unk> it s fine"]


def test_registered_and_applies_the_corpus_convention():
    assert "lsdscc" in tokenizer_names() and "lsdscc" not in TOKENIZER_NAMES  # a plug-in, not built in
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


def test_registry_takes_plugins_by_name():
    register_tokenizer("test-reversed", lambda: lambda text: text.split()[::-1])
    assert get_tokenizer("test-reversed", lowercase=True)("A b c") == ["c", "b", "a"]
    assert "test-reversed" in tokenizer_names()
    lsdscc_tokenizer.register()  # the same factory again: nothing happens
    with pytest.raises(ValueError, match="built in"):
        register_tokenizer("whitespace", lambda: str.split)
    with pytest.raises(ValueError, match="already registered"):
        register_tokenizer("lsdscc", lambda: str.split)
    with pytest.raises(ValueError, match=r"unknown tokenizer 'nosuch'; choose one of: whitespace, .*lsdscc"):
        get_tokenizer("nosuch")


def test_found_as_the_entry_point_setup_py_declares(tmp_path):
    """An installed package's entry point (a real dist-info on the path, with setup.py's line),
    in a process that never registers the plug-in: ``lsdscc`` is loaded by name."""
    setup = (REPO_DIR / "setup.py").read_text(encoding="utf-8")
    line = re.search(r'"multiref\.metrics\.tokenizers": \["(lsdscc=[\w.:]+)"\]', setup).group(1)
    info = tmp_path / "multiref_plugin_test-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: multiref-plugin-test\nVersion: 0\n")
    (info / "entry_points.txt").write_text(f"[multiref.metrics.tokenizers]\n{line}\n")
    code = ("import sys; from multiref.metrics.tokenizers import get_tokenizer, tokenizer_names; "
            "assert 'lsdscc.corpus.tokenizer' not in sys.modules; "
            "print('lsdscc' in tokenizer_names(), get_tokenizer('lsdscc')(\"I didn't <unk> 10/10.\"))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(REPO_DIR)]))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True ['i', 'didn', 't', '<unk>', 'digits', 'digits']"
