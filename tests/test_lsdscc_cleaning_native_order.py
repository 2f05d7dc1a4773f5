"""The C path runs strip_markup's rules in strip_markup's order, also where one rule's removal
makes another's trigger.

``_native.plain`` refuses a text whose own lines are indented code, setext lines or horizontal
rules (the Python steps then run), but removing an HTML comment can make the first two
(``<!---->==`` is `` ==``) and removing a quote marker, header, tag or link a rule (``\\n>___`` is
``\\n___``): ``cleaning._followed_head`` and its C twin ``followed_head`` run them at
strip_markup's place (before this, ``clean_and_tokenize("\\n>___")`` gave ``['_']`` with the
extension and ``[]`` without it). Here ``clean_and_tokenize(native=True)`` is compared with
``native=False`` on lines built from those pieces, and the three C line rules with their regexes.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsdscc.corpus import cleaning
from lsdscc.synthetic.text import RealisticText
from tests.test_lsdscc_cleaning_native_followed_head import same_patterns, same_rules

NATIVE = cleaning.native_extension()
pytestmark = pytest.mark.skipif(NATIVE is None, reason="tests/test_lsdscc_cleaning_native.py fails on it")

c = cleaning
#: The C twin's name, the regex's sub (the reference) and the function _followed_head calls.
RULES = {
    "indented_code": (lambda t: c._INDENTED_CODE.sub("", t), lambda t: c._INDENTED_CODE.sub("", t)),
    "setext": (lambda t: c._SETEXT.sub("", t), c._SETEXT_LINES.sub),
    "hrule": (lambda t: c._HRULE.sub("", t), c._HRULE_LINES.sub),
}
#: The patterns lsdscc/corpus/_cleaning_native.c follows (it quotes them).
PATTERNS = {
    "_INDENTED_CODE": (r"^(?: {4}|\t)", c.re.M),
    "_SETEXT": (r"^[ \t]*(?:=+|-+)[ \t]*$", c.re.M),
    "_HRULE": (r"^[ \t]*(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$", c.re.M),
}

#: What goes before a line's rest: markup whose removal leaves the rest at the line's start.
HEADS = ["", ">", "> ", ">>", " >", "&gt;", "#", "# ", "##", "<b>", "</i>", "<br/>", "<!---->", "<!-- x -->", "[](u)",
         "[a](u)", "![](u)", "[a][b]", "<http://x>", "- ", "* ", "1. ", "    ", "   ", "\t", " ", ">!", "!<"]
#: The rest: rule and setext characters, emphasis, words, Unicode blanks.
RESTS = ["___", "***", "---", "- - -", "* * *", "_ _ _", "==", "=", "--", "-", "***a***", "__a__", "_a_", "~~a~~",
         "a", "a b", "*", "_", "**", "__", "[a]:", "[a]: b", "==]", "#", ">", "x*", "\u00a0", "\u3000", "  ", "*_*"]
lines = st.tuples(st.sampled_from(HEADS), st.sampled_from(HEADS), st.lists(st.sampled_from(RESTS), max_size=3))
texts = st.lists(lines.map(lambda p: p[0] + p[1] + "".join(p[2])), min_size=1, max_size=5).map("\n".join)
#: Single characters of the same rules and Unicode edge cases, for the line rules alone.
ALPHABET = list(" \t\n\r*-_=>#<ab\u00a0\u3000\u2028\x0b\x85\x1c") + ["<!---->", "<b>", "[a](b)", "\n>", "\n#"]
chars = st.lists(st.sampled_from(ALPHABET), max_size=30).map("".join)


def _same_tokens(text: str) -> None:
    assert cleaning.clean_and_tokenize(text) == cleaning.clean_and_tokenize(text, native=False), text


def _same_rules(text: str) -> None:
    same_rules(RULES, text)


def test_the_patterns_are_those_the_c_code_follows():
    same_patterns(PATTERNS)


@pytest.mark.parametrize("text", [
    "\n>___", "\n&gt;___", "> ***", "# ---", "<b>* * *", "[](u)___\na", "<!---->==\na", "[a]:\n<!---->==",
    "a\n<!---->   - b", "\n<!---->    x", "<!-- \n -->---", ">!a\n<!---->==\n!<", "[x\n<!---->==\n](u)",
])
def test_markup_that_makes_a_line_rule(text):
    _same_tokens(text)
    _same_rules(text)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_c_path_equals_python_on_lines_of_markup(text):
    _same_tokens(text)


@settings(max_examples=400, deadline=None)
@given(chars)
def test_line_rules_equal_their_regexes(text):
    _same_rules(text)
    _same_tokens(text)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=20), st.sampled_from(RESTS))
def test_line_rules_on_any_code_point(text, rest):
    _same_rules(text + "\n" + rest + text[::-1] + "\n" + rest)


def test_realistic_bodies_take_the_c_path():
    gen = RealisticText(47)
    bodies = [gen.body() for _ in range(1500)]
    handled = 0
    for text in bodies:
        _same_tokens(text)
        _same_rules(text)
        plain, literal = cleaning._without_usernames(text)
        handled += plain is not None and cleaning._native_plain(plain, True, None, literal) is not None
    assert handled > 0.9 * len(bodies), handled  # (the C path is not refusing them all)
