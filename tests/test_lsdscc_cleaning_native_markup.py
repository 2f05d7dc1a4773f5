"""strip_markup's last three rules in C (``lsdscc/corpus/_cleaning_native.c``): ``emphasis``,
``inline_code`` and ``superscript`` return what :func:`cleaning._emphasis`,
``cleaning._INLINE_CODE.sub(r"\\1", text)`` and :func:`cleaning._superscript_sub` return (issue 34:
``_native_plain`` ran them in Python on the 46% of realistic texts ``plain`` refuses).

The Python rules stay the reference (and the path without the C half); these tests compare the
twins with them on hypothesis-generated text over the rules' characters and Unicode edge cases
(spaces re's ``\\s`` knows, word characters outside ASCII, line separators, private-use
stand-ins), every code point next to each marker, realistic bodies, the linearity tests'
fixtures and long hostile runs (in linear time), and check that the C twins decide every text.
"""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsdscc.corpus import cleaning
from lsdscc.synthetic.text import RealisticText, generate_comments
from tests.test_lsdscc_cleaning_linear import _DENSE, _PIECES, _fuzz

NATIVE = cleaning.native_extension()  # (None where not built: test_lsdscc_cleaning_native names the cause)

#: each twin (the name ``native_extension()`` exports) and the Python rule it stands for
RULES = {
    "emphasis": cleaning._emphasis,
    "inline_code": lambda text: cleaning._INLINE_CODE.sub(r"\1", text),
    "superscript": cleaning._superscript_sub,
}

#: The rules' characters, runs of them, and what \s, \S and \w tell apart outside ASCII: spaces
#: (no-break, ideographic, line and paragraph separators, \x1c-\x1f, \x85), word characters
#: (accented, CJK, Arabic-Indic and superscript digits), non-word ones (a combining accent, an
#: emoji, the private-use stand-ins of escaped characters), \r (which ``.`` crosses) and \n (which it does not).
ALPHABET = list("*_~`^()ab \n\t\r\\!") + [
    "**", "__", "~~", "***", "___", "``", "```", "^(", "\u00a0", "\u3000", "\u2028", "\u2029", "\x1c", "\x1f",
    "\x85", "\u200b", "é", "千", "٣", "²", "ß", "\u0301", "😂", "\ue02a", "\ue05f", "\ud800", "a_b", "*a*", "_a_",
    "~~a~~", "`a`", "^a", "^(a)", "**a**", "***a***", "**_a_**",
]


def _check(texts) -> dict:
    """Each twin equals its rule on every text; how many texts each rule changed."""
    changed = dict.fromkeys(RULES, 0)
    for text in texts:
        for name, rule in RULES.items():
            expected, got = rule(text), getattr(NATIVE, name)(text)
            assert got is not None, (name, text)  # (the twins decide every text)
            assert got == expected, (name, text, got, expected)
            changed[name] += got != text
    return changed


def _regex_emphasis(text: str) -> str:
    """cleaning._emphasis with the regex alone (its scanner is checked against it in
    test_lsdscc_cleaning_linear): a pass, and a second where it matched and a delimiter is left."""
    text, found = cleaning._EMPHASIS.subn(r"\2", text)
    return cleaning._EMPHASIS.sub(r"\2", text) if found and ("*" in text or "_" in text or "~~" in text) else text


def _check_with_regexes(text: str) -> None:
    _check([text])
    assert NATIVE.emphasis(text) == _regex_emphasis(text)
    assert NATIVE.superscript(text) == cleaning._SUPERSCRIPT.sub(lambda m: m.group(1) or "", text)


@settings(derandomize=True, max_examples=1000, deadline=None, database=None)
@given(st.lists(st.sampled_from(ALPHABET), max_size=40).map("".join))
def test_twins_equal_the_rules_on_generated_text(text):
    _check_with_regexes(text)


@settings(derandomize=True, max_examples=300, deadline=None, database=None)
@given(st.text(alphabet=st.sampled_from("*_~`^() a\n\u3000é"), min_size=50, max_size=400))
def test_twins_equal_the_rules_on_dense_markup(text):
    """Many openers: the Python rules take their linear scanners (more than 16 delimiters)."""
    _check_with_regexes(text)


def test_every_code_point_next_to_each_marker():
    """\\s after an opener and before a closer (emphasis), \\w after a caret (superscripts): every
    code point, one a line (the C twins' only character classes; inline code has none)."""
    for start in range(0, 0x110000, 8192):
        text = "".join(f"*{chr(c)}*^{chr(c)}\n" for c in range(start, min(start + 8192, 0x110000)))
        assert NATIVE.emphasis(text) == cleaning._emphasis(text), hex(start)
        assert NATIVE.superscript(text) == cleaning._superscript_sub(text), hex(start)


def test_realistic_bodies():
    gen = RealisticText(34)
    bodies = [gen.body() for _ in range(3000)] + generate_comments(2000, seed=34)
    changed = _check(bodies)
    # (the generator writes emphasis, code and superscripts into some bodies: each rule fires)
    assert changed["emphasis"] > 0.05 * len(bodies) and changed["inline_code"] > 30 and changed["superscript"] > 100, changed


def test_the_linearity_tests_fixtures():
    texts = _fuzz(6000, seed=41) + _fuzz(2000, seed=42, longest=120) + _fuzz(2000, seed=43, pieces=_DENSE, longest=80)
    _check(texts)
    cases = ["***a***", "**_a_**", "*a **b** c*", "* a*", "*a *", "~a~ ~~a~~", "___a___ __a_", "**\n**", "a_b_c",
             "snake_case_name", "__init__", "_a_b_", "*a*b*", "****a****", "~~~a~~~", "^(a) ^b ^(c", "^(^(x)",
             "^^a", "^)", "^", "a^", "``", "`", "a ``", "``a", "`a``b`", "```a```", "`a\nb`", "é*é*é", "千_千_",
             "_é_", "**\u00a0a**", "**a\u00a0**", "*a\r*", "*a\u2028*", "^é", "^\u0301", "^٣", "^²"]
    _check(cases + [c * 30 for c in cases])


#: Units that, repeated, make a regex retry from every opener (test_lsdscc_cleaning_linear's PATHOLOGICAL
#: for these rules, and code spans).
HOSTILE = {"emphasis-star": " *a", "emphasis-underscore": " _a", "strike": "~~a ", "nested": "***a",
           "superscript": "^(", "caret": "^a", "backticks": "`a ", "backtick-runs": "``a"}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_runs_in_linear_time(name):
    """40,000 characters (records.MAX_TEXT_CHARS) of each unit, with and without a closer or a
    newline at the end: the twins take milliseconds (a scan from every opener took seconds)."""
    unit = HOSTILE[name]
    for head, tail in [("", ""), ("", ")"), ("", "*"), ("", "_"), ("", "\n"), ("", "`"), ("é", "*"), ("千", "_"),
                       ("😂", "`")]:  # (a str of one, two and four bytes a character: C reads each in place)
        text = head + (unit * (40_000 // len(unit)))[: 40_000 - len(tail) - len(head)] + tail
        for twin, rule in RULES.items():
            start = time.perf_counter()
            got = getattr(NATIVE, twin)(text)
            took = time.perf_counter() - start
            assert took < 0.25, f"{twin} on {name}: {took:.2f} s"
            assert got == rule(text), (twin, name, tail)


@pytest.mark.parametrize("name", sorted(set(HOSTILE) - {"backtick-runs"}))  # (`` is a quote: Python's)
def test_hostile_runs_through_the_whole_c_path(name):
    """The same runs through clean_and_tokenize, where plain() leaves them to these rules alone
    (so _native_plain runs the twins): bounded time, the Python steps' tokens."""
    text = (HOSTILE[name] * (40_000 // len(HOSTILE[name])))[:40_000]
    assert NATIVE.plain(text, True) == cleaning.REFUSED_FOLLOWED, name
    start = time.perf_counter()
    tokens = cleaning.clean_and_tokenize(text)
    assert time.perf_counter() - start < 2.0, name
    assert tokens == cleaning.clean_and_tokenize(text, native=False)


def test_the_c_path_reaches_the_twins(monkeypatch):
    """A text ``plain`` refuses for these rules alone goes through the twins (not the Python
    rules) to the same tokens as the Python steps; a backslash escape is left to Python."""
    texts = ["**bold** and *it* and ~~gone~~ and `code` and ^(tiny) ^sup", "snake_case and __init__ ok",
             "***a*** **_b_** `x`"]
    for text in texts:
        assert NATIVE.plain(text, True) == cleaning.REFUSED_FOLLOWED
    expected = [cleaning.clean_and_tokenize(t, native=False) for t in texts]

    def python_rule_ran(*_):
        raise AssertionError("a Python rule ran")

    monkeypatch.setattr(cleaning, "_emphasis", python_rule_ran)
    monkeypatch.setattr(cleaning, "_superscript_sub", python_rule_ran)
    monkeypatch.setattr(cleaning, "_INLINE_CODE", None)
    assert [cleaning._native_plain(t, True) for t in texts] == expected
    assert NATIVE.plain("\\*a\\* x", True) & cleaning.REFUSED_OTHER  # (escapes: strip_markup in Python)


def test_with_and_without_the_extension():
    """The whole fast path, with the twins and with the Python steps only, on markup-heavy text."""
    rng = random.Random(44)
    texts = ["".join(rng.choice(ALPHABET + _PIECES + ["movie ", "the ", "great "]) for _ in range(rng.randint(0, 60)))
             for _ in range(3000)]
    for text in texts:
        assert cleaning.clean_and_tokenize(text) == cleaning.clean_and_tokenize(text, native=False), repr(text)


def test_twins_take_a_str():
    for twin in RULES:
        with pytest.raises(TypeError):
            getattr(NATIVE, twin)(b"*a*")
        assert getattr(NATIVE, twin)("") == ""
