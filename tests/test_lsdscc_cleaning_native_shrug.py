"""A text holding a shrug (``¯\\_(ツ)_/¯``, typed ``¯\\\\_(ツ)_/¯`` on Reddit) takes the C path
(``cleaning._native_shrug``) with the tokens of the Python steps.

``plain`` leaves the shrug to Python and refuses the arm's backslashes (markdown escapes);
``_native_shrug`` runs strip_markup's escape rule, the markup rules, the e-mail and url rules and
the shrug rule in the Python order, then ``plain`` takes the rest. Compared here with
``clean_and_tokenize(native=False)`` on hypothesis texts mixing shrugs, other escapes, emphasis
underscores and markup, on every code point beside a shrug, and on realistic bodies (where it
must decide most shrug texts itself, not leave them to Python).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsdscc.corpus import cleaning
from lsdscc.corpus.emoticons import _SHRUG, substitute_shrug
from lsdscc.synthetic.text import RealisticText

NATIVE = cleaning.native_extension()
pytestmark = pytest.mark.skipif(NATIVE is None, reason="tests/test_lsdscc_cleaning_native.py fails on it")

SHRUGS = ["¯\\_(ツ)_/¯", "¯\\\\_(ツ)_/¯", "¯\\\\\\_(ツ)_/¯", "\\_(ツ)_/", "(ツ)", "¯_(ツ)_/¯", "\\\\_(ツ)\\_/¯", "¯\\\\_(ツ)_/¯_"]
PIECES = SHRUGS + ["_", "__", "*", "**", "~~", "\\", "\\\\", "\\*", "\\_", "\\#", "\\>", "a", "b c", " ", "\n", "\n\n",
                   "> ", "# ", "- ", "[a](u)", "](", "[", "]", "^(", "^", ")", "`", "<b>", "<!---->", "u/x", "a@b.com",
                   "http://x.org", "x.com", "&gt;", "&amp;", "|", "```", "''", "\u00a0", "\ue05c", "\ue05f", ":)", "é"]
texts = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)


def _same(text: str) -> None:
    assert cleaning.clean_and_tokenize(text) == cleaning.clean_and_tokenize(text, native=False), text
    assert cleaning.clean_and_tokenize(text, lowercase=False) == cleaning.clean_and_tokenize(
        text, lowercase=False, native=False), text


def _c_decides(text: str) -> bool:
    plain, literal = cleaning._without_usernames(text)
    return plain is not None and cleaning._native_plain(plain, True, None, literal) is not None


@pytest.mark.parametrize("text", [
    "¯\\_(ツ)_/¯", "a ¯\\\\_(ツ)_/¯ _b_", "*¯\\_(ツ)_/¯*", "_¯\\\\_(ツ)_/¯ and _this_", "^(¯\\_(ツ)",
    "[x](¯\\_(ツ)_/¯) y", "http://a.com¯\\\\_(ツ)_/¯", "__¯\\_(ツ)_/¯__ \\*", "> ¯\\\\_(ツ)_/¯\n# ___", "u\\\\/x (ツ)",
    "¯\\\\_(ツ)_/¯ \ue05c", "`¯\\_(ツ)_/¯`", "¯\\_(ツ)_/¯\n---\nb", "a@b.com¯\\_(ツ)_/¯ :)",
])
def test_hand_picked_shrugs(text):
    _same(text)


def test_the_c_path_decides_a_shrug():
    for text in ("I guess ¯\\\\_(ツ)_/¯ whatever", "well ¯\\_(ツ)_/¯ *ok*", "¯\\_(ツ)_/¯ [see](http://x.org)"):
        _same(text)
        assert _c_decides(text), text


@settings(max_examples=700, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_c_path_equals_python_on_shrugs_escapes_and_markup(text):
    _same(text)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=12), st.sampled_from(SHRUGS))
def test_every_code_point_beside_a_shrug(text, shrug):
    _same(text + shrug + text[::-1] + "_" + shrug)


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(["(ツ)", "¯", "\\", "_", " ", "/", "a", "\n", "(", "ツ", ")", "\u3000", "\t"]), max_size=16)
       .map("".join))
def test_substitute_shrug_is_the_regex_sub(text):
    # (substitute_shrug runs the regex on the stretches between spaces that hold the face)
    assert substitute_shrug(text) == _SHRUG.sub(" shrug ", text)


def test_realistic_shrug_texts_take_the_c_path():
    gen = RealisticText(53)
    bodies = [gen.body() for _ in range(6000)]
    shrugs = [t for t in bodies if cleaning.SHRUG in t]
    assert len(shrugs) > 30, len(shrugs)  # (about 1% of realistic bodies)
    decided = 0
    for text in shrugs:
        _same(text)
        decided += _c_decides(text)
    assert decided > 0.9 * len(shrugs), (decided, len(shrugs))
