"""The faster forms of cleaning rules give the output of the rules they replace (issue 22).

Realistic comment bodies (``lsdscc/synthetic/text.py``: real Reddit lengths, markdown,
links, emoji) made cleaning a third of the corpus build; these passes were rewritten:

- the whitespace pass at the end of ``strip_markup``: a split and join when the only whitespace
  is spaces and newlines (``_collapse_whitespace``);
- the nested-emphasis pass: skipped when no delimiter is left;
- ``_OPEN_QUOTE``, ``_DIGIT_RUN`` and ``_EMPHASIS``: the same patterns starting with what re can scan for;
- laughter and letter runs in ``shorten_elongated`` (``_AH_WORD`` + ``_laugh_ha``, ``_shorten_repeats``);
- the emoji pass: from the first character that can start an emoji, no ``max()`` of the text;
- the last pass of ``lsdscc_characters`` on ASCII text: a bytes table;
- ``Vocabulary.apply``: one comprehension.

Each is compared with the reference (the old pattern or loop, kept here or in the module) on
tens of thousands of realistic, random and hostile strings.
"""

from __future__ import annotations

import random
import re
import sys
from types import MappingProxyType

import pytest

from lsdscc.synthetic.text import RealisticText
from lsdscc.corpus import cleaning
from lsdscc.corpus.emoticons import _SHRUG, _emoticon_regex, emoticon_table, substitute_emoticons
from lsdscc.corpus.vocab import Vocabulary

_PIECES = list("ab xyz*_~[]()!<>@.:/-\"' \n\t#^|`=%+\\¯0123456789aAhH") + [
    "(ツ)", "```", "\u200b", "\u3000", "\x1c", "\x85", "\u00a0", "\u2028", "\u2003", "\r\n", "\x0b", "\x0c",
    "haha", "ahah", "HaHa", "haah", "ahha", "aha", "hah", "hhhh", "Ahaha", "éaha", "_haha_", "haha2", "ßhaha",
    "aaa", "ooooo", "OOOo", "lololol", "hehehe", "zzzzz", "ééé", "aaaAAA", "😂", "❤️", "\u2764", "\u2639",
    "\ufe0f", "🤷\u200d♂️", "🤷", "\u200d", ":)", ":D", " xD ", "&gt;", "&amp;", "**", "__", "~~", "***a***",
    "**_a_**", "\n\n", "  ", '"q"', '("', '["', "{\"", "<\"", '"', "1st", "９", "٣", "²", "r/x", "u/y",
    "a@b.com", "http://x.com/a", "www.x.org", "千と", "ツ", "\u2639\ufe0f\u2639", "\U0001F937\u200d\u2642", "\U0001F600\U0001F600",
]


def _fuzz(n: int, seed: int, longest: int = 50) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_PIECES) for _ in range(rng.randint(0, longest))) for _ in range(n)]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """Realistic bodies, the same with markup stripped and lowercased, and random hostile strings."""
    gen = RealisticText(3)
    bodies = [gen.body() for _ in range(6000)]
    cleaned = [cleaning.clean_text(b, "lsdscc").lower() for b in bodies[:2000]]
    return bodies + cleaned + _fuzz(20000, seed=41) + _fuzz(3000, seed=42, longest=300)


def test_the_premises_of_the_whitespace_split():
    """``\\s`` is ``str.isspace`` and the space is the only printable whitespace character."""
    every = [chr(c) for c in range(sys.maxunicode + 1)]
    space = re.compile(r"\s")
    assert [c for c in every if bool(space.match(c)) != c.isspace()] == []
    assert [c for c in every if c.isspace() and c.isprintable()] == [" "]
    assert not "\u200b".isprintable()


def test_collapse_whitespace_equals_the_regex(texts):
    for text in texts:
        assert cleaning._collapse_whitespace(text) == cleaning._WHITESPACE.sub(" ", text).strip(), repr(text)


def test_no_delimiter_no_emphasis(texts):
    """The nested-emphasis pass is skipped only where it cannot change anything."""
    for text in texts:
        plain = text.replace("*", "").replace("_", "").replace("~~", "")
        assert cleaning._emphasis_subn(plain) == (plain, 0)
        assert cleaning._EMPHASIS.subn(r"\2", plain) == (plain, 0)


def test_emphasis_pattern_equals_the_old_one(texts):
    old = re.compile(r"(\*{1,3}|_{1,3}|~~)(?=\S)(.+?)(?<=\S)\1")
    for text in texts + ["***a***", "**_a_**", "*a**", "____a__", "~~a~~~", "* a*", "*a *b*"]:
        assert cleaning._EMPHASIS.subn(cleaning._emphasised, text) == old.subn(r"\2", text), repr(text)


@pytest.mark.parametrize("old, new, repl", [
    (r'(?<=[ (\[{<])"', cleaning._OPEN_QUOTE, "Q"),
    (r"\d+", cleaning._DIGIT_RUN, "digits"),
])
def test_rescanned_patterns_equal_the_old_ones(texts, old, new, repl):
    old = re.compile(old)
    for text in texts:
        assert new.sub(repl, text) == old.sub(repl, text), repr(text)


def test_ascii_table_equals_the_to_space_regex(texts):
    to_space = re.compile("[" + re.escape(cleaning.TO_SPACE) + "]")  # the rule as the table declares it
    assert [chr(i) for i in range(128) if cleaning._TO_SPACE_ASCII[i] != i] == [
        chr(i) for i in range(128) if to_space.match(chr(i))]
    for text in [t for t in texts if t.isascii()] + ["".join(map(chr, range(128)))]:
        assert text.encode("ascii").translate(cleaning._TO_SPACE_ASCII).decode("ascii") == to_space.sub(" ", text)
        assert cleaning.lsdscc_characters(text) == to_space.sub(" ", _old_characters_head(text)), repr(text)


def _old_characters_head(text: str) -> str:
    """``lsdscc_characters`` before its last pass (ASCII text: no wide characters to replace)."""
    text = re.sub(r"\d+", cleaning.DIGITS, cleaning._protect_quotes(text))
    runs = "([" + re.escape(cleaning.PUNCT_RUNS) + r"])\1{2,}"  # the rule as its table declares it
    return re.sub(runs, r"\1\1", text) if "!!!" in text or "???" in text else text


def test_laughter_words_equal_the_laughter_regex(texts):
    extra = _fuzz(5000, seed=43) + ["ha" * n + "a" * m for n in range(5) for m in range(3)]
    for text in texts + extra:
        assert cleaning._AH_WORD.sub(cleaning._laugh_ha, text) == cleaning._LAUGH_HA.sub("haha", text), repr(text)


def test_letter_runs_equal_the_repeat_regex(texts):
    for text in texts + ["aaabbbaaaccc", "xAAAaaaX", "ooo ooo ooo", "a" * 1000]:
        first = cleaning._TRIPLE.search(text)
        expected = cleaning._REPEAT.sub(r"\1\1", text)
        assert (cleaning._shorten_repeats(text, first) if first else text) == expected, repr(text)


def test_emoji_pass_equals_the_ungated_one(texts):
    faces, emoji, _, word = _emoticon_regex()
    everyone = list(emoticon_table())
    for text in texts + [a + " " + b for a, b in zip(everyone, reversed(everyone))]:
        shrugged = _SHRUG.sub(" shrug ", text) if "(ツ)" in text else text
        assert substitute_emoticons(text) == emoji.sub(word, faces.sub(word, shrugged)), repr(text)


def _apply_reference(vocabulary: Vocabulary, tokens) -> list[str]:
    """``Vocabulary.apply`` as it was: one token at a time."""
    out = []
    for token in tokens:
        pieces = vocabulary.splits.get(token)
        for piece in pieces if pieces is not None else (token,):
            if piece.isascii():
                out.append(piece if piece in vocabulary.kept else vocabulary.unk_token)
    return out


@pytest.mark.parametrize("proxy", [False, True])
def test_vocabulary_apply_equals_the_loop(texts, proxy):
    rng = random.Random(7)
    tokens = [t for text in texts[:3000] for t in cleaning.clean_and_tokenize(text)] + ["é", "naïve", "<unk>"]
    kinds = sorted(set(tokens))
    splits = {w: tuple(rng.sample(kinds, rng.randint(1, 3))) for w in rng.sample(kinds, len(kinds) // 20)}
    splits["abab"] = ("ab", "é", "ab")
    kept = frozenset(k for k in rng.sample(kinds, len(kinds) // 2) if k.isascii())  # as build_vocabulary keeps
    vocabulary = Vocabulary(splits=MappingProxyType(splits) if proxy else splits, kept=kept, unk_token="<unk>",
                            counts={})
    for start in range(0, len(tokens), 37):
        chunk = tokens[start:start + rng.randint(0, 80)] + (["abab"] if start % 3 == 0 else [])
        expected = _apply_reference(vocabulary, chunk)
        assert vocabulary.apply(chunk) == expected
        assert vocabulary.apply(iter(chunk)) == expected
        assert vocabulary.apply(tuple(chunk)) == expected
        text = " ".join(chunk)
        assert vocabulary.apply_text(text) == " ".join(expected)
        # any whitespace between the tokens: the same as splitting first
        spaced = "\t " + "  \n".join(chunk) + " \u3000"
        assert vocabulary.apply_text(spaced) == " ".join(expected)


def test_unchanged_tokens_are_those_apply_keeps():
    # apply_text's shortcut: a token in Vocabulary.unchanged maps to itself; any other does
    # not, but the unknown-word token (left to the token loop, which gives it back).
    splits = {"abab": ("ab", "ab"), "kept": ("ke", "pt"), "gone": ("é",)}
    vocabulary = Vocabulary(splits=splits, kept=frozenset({"ab", "ke", "pt", "kept", "word", "x"}),
                            unk_token="<unk>", counts={})
    assert vocabulary.unchanged == {"ab", "ke", "pt", "word", "x"}
    for token in ["ab", "abab", "kept", "gone", "word", "x", "other", "é", "<unk>", "ke"]:
        assert (vocabulary.apply([token]) == [token]) == (token in vocabulary.unchanged or token == "<unk>"), token
    assert vocabulary.apply_text("") == "" and vocabulary.apply_text("word x") == "word x"
    assert vocabulary.apply_text("word abab é other") == "word ab ab <unk>"


_LINE_PIECES = ["- ", "* ", "+ ", "• ", "•\t", "1. ", "123) ", "1234. ", "12.", "---", "***", "_ _ _", "===", "-", "*",
                "_", "=", " ", "\t", "a", "b c", "\n", "\n\n", "\r", "> ", "#", "\u3000", "é"]


@pytest.mark.parametrize("name", ["_SETEXT", "_HRULE", "_BULLET"])
def test_line_rules_equal_their_multiline_patterns(texts, name):
    # strip_markup runs these three ^-anchored rules as a start-of-text pattern and a
    # newline-led one (re scans for the newline instead of trying every position).
    rng = random.Random(11)
    lines = ["".join(rng.choice(_LINE_PIECES) for _ in range(rng.randint(0, 12))) for _ in range(20000)]
    rule, lines_rule = getattr(cleaning, name), getattr(cleaning, name + "_LINES")
    for text in texts + lines:
        assert lines_rule.sub(text) == rule.sub("", text), repr(text)
        assert bool(lines_rule.match(text)) == bool(rule.match(text)), repr(text)


def test_a_line_rule_refuses_a_pattern_it_cannot_split():
    for pattern in (re.compile(r"^a$", 0), re.compile(r"a^", re.M), re.compile(r"^a\nb", re.M),
                    re.compile(r"^a$|^b", re.M)):
        with pytest.raises(ValueError):
            cleaning._LineRule(pattern)


def test_laughter_guard_skips_only_texts_the_pass_leaves_alone(texts):
    extra = _fuzz(5000, seed=44) + ["haah", "HaAh", "ahha!", "hahh", "ahhh", "aahh", "hhaa", "Ahah", "x haah y"]
    for text in texts + extra:
        lower = text.lower()
        if not cleaning._may_laugh(lower):
            assert cleaning._AH_WORD.sub(cleaning._laugh_ha, text) == text, repr(text)
    assert cleaning.shorten_elongated("x haah y") == "x haah y"  # no hah/aha: the old guard skips it too
    assert cleaning.shorten_elongated("haah aha") == "haha aha"


def test_url_guard_equals_the_lowered_test(texts):
    extra = _fuzz(5000, seed=45) + ["WWW.x", "wWw.", "www", "w.w.w.", "İwww.", "ｗｗｗ.", "x.COM", "ftp://"]
    for text in texts + extra:
        old = "://" in text or cleaning._DOT_TLD.search(text) is not None or "www." in text.lower()
        assert cleaning._has_url(text) == old, repr(text)
