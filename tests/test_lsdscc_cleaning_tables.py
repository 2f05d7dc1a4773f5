"""Each cleaning rule and table in one place (issue 31): the C half of the cleaning
(``lsdscc/corpus/_cleaning_native.c``) takes every table and trigger from Python at
``configure()`` (``cleaning.native_tables()``), so both paths give the same tokens for every
entry of every table, and a build of the corpus with or without the extension writes the same
bytes. ``MULTIREF_NO_C_EXTENSION=1`` forces the Python path.
"""

from __future__ import annotations

import ast
import inspect
import os
import random
import re
import shutil
import subprocess
import sys
import textwrap
from collections import Counter

import pytest

from lsdscc.synthetic.text import RealisticText
from lsdscc.corpus import cleaning, emoticons
from lsdscc.corpus.rule_tables import first_characters, re_case_folds

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NATIVE = cleaning.native_extension()  # (tests/test_lsdscc_cleaning_native.py names the cause where it is not built)


def _python(text: str, lowercase: bool = True) -> list[str]:
    return cleaning.clean_and_tokenize(text, lowercase=lowercase, native=False)


def _fast(text: str, lowercase: bool) -> list[str]:
    return cleaning.clean_and_tokenize(text, lowercase=lowercase)


def _same_in_both(texts) -> int:
    """Each text gives the same tokens (and the same counted text) in C and in Python, lowercased
    or not; returns how many C decided alone (plain() gave tokens, no Python step)."""
    decided = 0
    for text in texts:
        for lowercase in (True, False):
            assert _fast(text, lowercase) == _python(text, lowercase), repr(text)
        words, expected = Counter(), Counter()
        assert cleaning.clean_and_count(text, words) == " ".join(_python(text)), repr(text)
        expected.update(_python(text))
        assert words == expected, repr(text)
        decided += isinstance(NATIVE.plain(text, True), list)
    return decided


def _contexts(entry: str) -> list[str]:
    """An entry alone, between words, glued to words, at line starts, before each face follower."""
    return [entry, f"a {entry} b", f"x{entry}y", f"{entry}{entry}", f"ok\n{entry} b", f"{entry}\n", f"so {entry}.",
            f"({entry})", f"{entry}, {entry}!"] + [f"a {entry}{f} b" for f in emoticons.FACE_FOLLOWERS]


def test_every_domain_ending():
    for tld in cleaning.TLDS:
        for ending in (tld, tld.upper(), tld.title()):
            texts = [f"check out foo.{ending} for tickets", f"foo.{ending}", f"foo.{ending}x ok", f"foo.{ending}/a b",
                     f"x .{ending}", f"foo.{ending}_"]
            _same_in_both(texts)
            assert _fast(texts[0], True) == ["check", "out", "url", "for", "tickets"]
            assert NATIVE.plain(texts[0], True) == cleaning.REFUSED_LINKS  # (C refuses it for the url rule)


def test_every_contraction():
    pairs = cleaning.CONTRACTIONS + cleaning.CONTRACTIONS_BEFORE_SPACE
    for first, second in pairs:
        for word in (first + second, (first + second).upper(), first.title() + second):
            decided = _same_in_both([word, f"{word} it", f"i {word}!", f"{word}s no", f"x{word} y", f"{word}-it",
                                     f"{word}\n", f"{word}."])
            assert decided >= 6, word
            assert _fast(f"{word} it", False)[:2] == [word[:len(first)], word[len(first):]]


def test_every_emoticon_and_emoji():
    table = emoticons.emoticon_table()
    for entry, word in table.items():
        _same_in_both(_contexts(entry))
        # (after the markup steps: some faces hold markup, "^_^" is a superscript first)
        assert NATIVE.tail(f"a {entry} b", True) == cleaning.lsdscc_tail(f"a {entry} b", True) == ["a", word, "b"]


def test_every_character_rule():
    """TO_SPACE, WIDE and PAD characters, the face followers, the characters re.I folds, the
    punctuation whose runs keep two, what opens a quote, the stand-ins of quote tokens."""
    chars = set(cleaning.TO_SPACE) | {c for c, _ in cleaning.WIDE} | set(cleaning.PAD) | set(emoticons.FACE_FOLLOWERS)
    chars |= set(re_case_folds()) | set(cleaning.PUNCT_RUNS) | set(cleaning.OPEN_QUOTE_AFTER) | {"''", "``"}
    chars |= {guard for groups in cleaning.LAUGH_GUARDS for group in groups for guard in group}
    chars |= set(cleaning.LAUGH_WORDS)
    for char in sorted(chars):
        _same_in_both(_contexts(char) + [f"gim{char}me", f"can{char}not", f'{char}"q"', f"{char * 4}x", f"a{char}9b"])
    assert _fast('he said "no" (and "yes")!!!! at 9', True) == [
        "he", "said", "``", "no", "''", "(", "and", "``", "yes", "''", ")", "!", "!", "at", cleaning.DIGITS]


def test_every_trigger_and_line_rule():
    for cause, triggers in cleaning.NATIVE_TRIGGERS:
        for trigger in triggers:
            _same_in_both(_contexts(trigger) + [f"a {trigger}b{trigger} c", f"**a** {trigger}"])
            assert NATIVE.plain(f"a {trigger} b", True) & cause, trigger  # (refused, for its cause among others)
    for rule, cause in cleaning.NATIVE_LINE_RULES:
        first = first_characters(rule)
        starts = sorted(first.chars) + (["1", "٣", "123", "1234"] if first.digits else [])
        for start in starts:
            texts = [f"{start} item", f"{start}{start}{start}", f"ok\n{start} item\nmore", f"ok\n{start}\n",
                     f"{start}. item", f"{start}) item", f"  {start} x", f"{start}\tx"]
            _same_in_both(texts)


def test_a_new_trigger_is_refused_in_c():
    """A trigger added to NATIVE_TRIGGERS (a new rule's, like a username rule's ``u/``) makes C
    refuse the texts that hold it, in either case where it ends in a letter."""
    tables = cleaning.native_tables()
    try:
        NATIVE.configure({**tables, "triggers": tables["triggers"] + (("u/", cleaning.REFUSED_OTHER), ("zq", cleaning.REFUSED_OTHER))})
        for text in ("hi u/someone", "hi U/x", "a zq b", "a ZQ b", "a zQ"):
            assert NATIVE.plain(text, True) == cleaning.REFUSED_OTHER, text
        assert isinstance(NATIVE.plain("hi you", True), list)
    finally:
        NATIVE.configure(tables)
    assert isinstance(NATIVE.plain("hi u/someone", True), list)


#: Laughter each pass replaces (and near misses), in either case, glued to words and punctuation.
LAUGHTER = ["ahahaha", "HAHAHA", "ahah", "haaahaha", "ahahahx", "hehehe", "HeHeh", "heheh!", "lololol", "LOLOL",
            "lolo", "a lolol, hehehe!", "(hahaha)", "hahaha hehe lolol"]


def _laughter_tokens() -> list[list[str]]:
    return [_fast(text, True) for text in LAUGHTER]


def test_a_laughter_word_changed_in_python_changes_both_paths(monkeypatch):
    """The words laughter becomes are cleaning.LAUGH_WORDS, in C too (configure()'s "laugh_words"):
    new words, longer and shorter than the laughter they replace, give the same tokens in both paths."""
    before = _laughter_tokens()
    assert before[0] == ["haha"] and before[5] == ["hehe"] and before[8] == ["lol"]
    words = ("laughing", "hee", "laughingoutloud")
    monkeypatch.setattr(cleaning, "LAUGH_WORDS", words)
    try:
        NATIVE.configure(cleaning.native_tables())
        assert NATIVE.tail("ahahaha hehehe lololol", True) == list(words)
        assert _same_in_both(LAUGHTER + [" ".join(LAUGHTER * 200), "lolol " * 3000]) > 0
        assert _fast("so ahahaha, LOLOL hehehe", True) == ["so", "laughing", ",", "laughingoutloud", "hee"]
    finally:
        monkeypatch.undo()
        NATIVE.configure(cleaning.native_tables())
    assert _laughter_tokens() == before


def test_a_bad_laughter_word_keeps_the_tables():
    """configure() takes three short words of lowercase ASCII letters (what the scan before the
    laughter passes found stays true); a failing call leaves the words it had."""
    tables = cleaning.native_tables()
    try:
        NATIVE.configure({**tables, "laugh_words": ("hoho", "hihi", "lul")})
        for bad in (("haha", "hehe"), ("haha", "hehe", "lol", "xd"), ("haha", "", "lol"), ("haha", "hé", "lol"),
                    ("haha", "Hehe", "lol"), ("haha", "he he", "lol"), ("haha", "he'", "lol"), ("haha", 1, "lol"),
                    ("x" * 40, "hehe", "lol"), ["haha", "hehe", "lol"], "haha"):
            with pytest.raises((TypeError, ValueError), match="laugh_words"):
                NATIVE.configure({**tables, "laugh_words": bad})
            assert NATIVE.tail("ahahaha hehehe lololol", True) == ["hoho", "hihi", "lul"], bad
    finally:
        NATIVE.configure(tables)
    assert NATIVE.tail("ahahaha hehehe lololol", True) == ["haha", "hehe", "lol"]


def _guards(functions) -> set:
    """The strings the guards of ``functions`` look for (``has("x")``, ``"x" in text``)."""
    found = set()
    for function in functions:
        for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(function)))):
            if isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In) and isinstance(node.left, ast.Constant):
                found.add(node.left.value)
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "has" and isinstance(node.args[0], ast.Constant):
                found.add(node.args[0].value)
    return found


def test_guards_of_the_python_steps_are_triggers():
    """Every string a guard of the steps before the tail looks for is one of NATIVE_TRIGGERS, or
    a line rule's (each character one its match can start with, or the newline), whitespace, or a
    shorter form of a trigger; a new rule's trigger must be added there, and C then refuses the
    texts that hold it."""
    triggers = {t for _, ts in cleaning.NATIVE_TRIGGERS for t in ts}
    line_chars = set().union(*(first_characters(r).chars for r, _ in cleaning.NATIVE_LINE_RULES)) | {"\n"}
    found = _guards((cleaning.strip_markup, cleaning._protect_quotes, cleaning._lsdscc_fast, cleaning.lsdscc_head,
                     cleaning._has_url, cleaning._followed_markup, cleaning._followed_head,
                     cleaning._mail_and_urls))
    assert {"&", "<", "|", "@", "://", "www."} <= found  # (the walk finds the guards)
    for guard in found:
        ok = (guard in triggers or set(guard) <= line_chars or not guard.strip(" ")
              or any(guard.lower() in t for t in triggers))
        assert ok, f"{guard!r}: a guard of the Python steps that C does not know (cleaning.NATIVE_TRIGGERS)"


#: The guards of the steps C does as code of its own (tail(), lsdscc/corpus/_cleaning_native.c):
#: the punctuation runs (characters()), NLTK's colon-comma rule (characters()'s touching), the
#: quotes (open_quotes(), pad()), the dashes (pad()). (The laughter passes' are LAUGH_GUARDS.)
C_STEP_GUARDS = {"!!!!", "????", "....", ",,", ",:", ":,", "::", '"', "--"}


def test_guards_of_the_steps_in_c_are_known():
    """A new guard in a step C does itself (a new rule in the tail) fails here: C must learn the
    rule, or refuse its texts (a trigger in NATIVE_TRIGGERS, for a rule moved before the tail)."""
    found = _guards((cleaning.lsdscc_tail, cleaning.shorten_elongated, cleaning._may_laugh,
                     cleaning.lsdscc_characters, emoticons.substitute_emoticons))
    assert {"!!!!", "--", ",,"} <= found
    assert found == C_STEP_GUARDS, found ^ C_STEP_GUARDS


def test_first_characters_are_a_superset():
    """No line rule matches a line starting with a character outside its derived first characters."""
    rng = random.Random(3)
    pool = [chr(c) for c in range(0x3000)] + ["\U0001F600", "\u3000"]
    for rule, _ in cleaning.NATIVE_LINE_RULES:
        first = first_characters(rule)
        for char in pool:
            if char in first.chars or (first.digits and char.isdecimal()):
                continue
            for rest in ("", " x", "  ", "---", "***", ". x", rng.choice(pool) * 3):
                assert rule.match(char + rest) is None and rule.match("x\n" + char + rest, 2) is None, (rule, char)
    with pytest.raises(ValueError):
        first_characters(re.compile(r"^\s*", re.M))


def test_case_folds_are_every_code_point_re_i_folds():
    text = "".join(map(chr, range(128, 0x110000)))
    assert set(re.findall("[a-z]", text, re.I)) == set(re_case_folds())
    assert re_case_folds() == {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}


def _table_heavy(n: int, seed: int) -> list[str]:
    """Bodies made of table entries, triggers and realistic words."""
    rng = random.Random(seed)
    entries = (list(emoticons.emoticon_table()) + [f"foo.{t}" for t in cleaning.TLDS]
               + [a + b for a, b in cleaning.CONTRACTIONS + cleaning.CONTRACTIONS_BEFORE_SPACE]
               + list(cleaning.TO_SPACE + cleaning.PAD) + [c for c, _ in cleaning.WIDE] + list(re_case_folds())
               + [t for _, ts in cleaning.NATIVE_TRIGGERS for t in ts] + ["\n- ", "\n1. ", "\n# ", "\n---\n", "\n    "]
               + list(cleaning.LAUGH_WORDS) + LAUGHTER
               + "the movie was great I think it's gonna win".split())
    return ["".join(rng.choice(entries) + rng.choice(("", " ", " ", "\n")) for _ in range(rng.randint(1, 30)))
            for _ in range(n)]


def test_realistic_and_table_heavy_bodies():
    gen = RealisticText(31)
    realistic = [gen.body() for _ in range(3000)]
    decided = _same_in_both(realistic)
    assert decided > 0.3 * len(realistic), decided  # (plain() alone decides about half of them)
    heavy = _table_heavy(3000, 31)
    _same_in_both(heavy)


def _run(code: str, env: dict, cwd: str = ROOT) -> str:
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, cwd=cwd, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_switch_forces_the_python_path():
    code = "from lsdscc.corpus import cleaning; print(cleaning.native_extension() is None)"
    assert _run(code, {cleaning.NO_C_EXTENSION: "1", "PYTHONPATH": ROOT}).strip() == "True"
    assert _run(code, {cleaning.NO_C_EXTENSION: "0", "PYTHONPATH": ROOT}).strip() == "False"


def test_removing_a_domain_ending_changes_both_paths(tmp_path):
    """The bug of issue 31: "biz" gone from the C table gave ``foo biz`` with the extension and
    ``url`` without. Now there is one table: without "biz" in cleaning.TLDS, both give ``foo biz``."""
    copy = tmp_path / "lsdscc"
    shutil.copytree(os.path.join(ROOT, "lsdscc"), copy, ignore=shutil.ignore_patterns("__pycache__", "sample"))
    source = (copy / "corpus" / "cleaning.py").read_text(encoding="utf-8")
    assert source.count('"info", "biz", ') == 1
    (copy / "corpus" / "cleaning.py").write_text(source.replace('"info", "biz", ', '"info", '), encoding="utf-8")
    code = ("from lsdscc.corpus import cleaning; import lsdscc; "
            "print(lsdscc.__file__, cleaning.native_extension() is None, cleaning.clean_and_tokenize('check out foo.biz for tickets'))")
    for where, tokens in ((ROOT, "'url'"), (str(tmp_path), "'foo', 'biz'")):
        with_c = _run(code, {"PYTHONPATH": os.pathsep.join([where, ROOT])}, cwd=where)
        without = _run(code, {"PYTHONPATH": os.pathsep.join([where, ROOT]), cleaning.NO_C_EXTENSION: "1"}, cwd=where)
        assert with_c.startswith(where) and " False " in with_c and " True " in without
        assert with_c.split(" ", 2)[2] == without.split(" ", 2)[2] == f"['check', 'out', {tokens}, 'for', 'tickets']\n"


_BUILD = """
import json, sys
from multiref.util.measure import output_digests
from lsdscc.corpus import cleaning
from pipelines.lsdscc.corpus import run
folder, out = sys.argv[1], sys.argv[2]
run((["--input", folder] if folder else []) + ["--output", out, "--workers", "1"], quiet=True)
print(json.dumps({"native": cleaning.native_extension() is not None, "files": output_digests(out)}))
"""


def _build(folder: str, out: str, python_only: bool) -> dict:
    import json

    env = {**os.environ, "PYTHONPATH": ROOT, cleaning.NO_C_EXTENSION: "1" if python_only else "0"}
    done = subprocess.run([sys.executable, "-c", _BUILD, folder, out], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("month", ["sample", "realistic"])
def test_builds_with_and_without_the_extension_are_byte_identical(tmp_path, month):
    """The bundled sample, and a generated month of 3,000 realistic comments (lsdscc/synthetic/dumps.py,
    as benchmarks/bench_corpus.py --text realistic), built with and without the C extension: the same parquet, card and stats bytes."""
    folder = ""
    if month == "realistic":
        from lsdscc.synthetic.dumps import write_month

        folder = str(tmp_path / "month")
        write_month(folder, 3000, seed=31, text="realistic")
    with_c = _build(folder, str(tmp_path / "c"), python_only=False)
    without = _build(folder, str(tmp_path / "python"), python_only=True)
    assert with_c["native"] and not without["native"]
    assert any(name.endswith(".parquet") for name in with_c["files"])
    assert with_c["files"] == without["files"]
