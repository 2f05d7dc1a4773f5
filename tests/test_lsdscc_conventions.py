"""Text conventions of the LSDSCC corpus (issue 12 item 1) and the fused fast path (issue 10 item 5).

The ``lsdscc`` expectations are worked out by hand from the rules measured on the released
test set (README "Text conventions": ``didn t``, no ``.`` or ``/``, every digit run
``digits``, Treebank quotes, lowercase); the ``treebank`` ones from NLTK's
TreebankWordTokenizer plus the one rule it adds (a period ending a word is split off).
"""

from __future__ import annotations

import random
import re

import pytest

from lsdscc.synthetic.text import generate_comments
from lsdscc.corpus import cleaning
from lsdscc.corpus.cleaning import CONVENTIONS, DEFAULT_CONVENTION, clean_and_tokenize, clean_text, tokenize
from lsdscc.corpus.config import CorpusConfig
from lsdscc.corpus.emoticons import emoticon_table, substitute_emoticons
from lsdscc.corpus.records import Post
from lsdscc.corpus.threads import prepare_thread

# Characters and fragments that exercise every rule and NLTK quirk (fuzz alphabet).
_PIECES = list("ab cd\"',:;.!?()[]{}<>-$%&@#/\\*~|^_=+`12 \n") + [
    "gonna ", "cannot", "wanna", "gimme", "lemme", "gotta", " :) ", " xD ", " <3 ", "http://x.com/a",
    "www.y.org", "me@x.org", "``", "''", "--", "...", "\u2019", "\u201c", "\u201d", "\u2014", "\u2026",
    " r/movies", "Don't", "HAHAHA", "soooo", "!!!!", "???", "&amp;", "&gt;", "**", "[a](http://b.com)",
    "\t", "\u00a0", "\U0001F602", "\u00e9", "T.T", "3,000", "9:30",
]


def _fuzz(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 25))) for _ in range(n)]


@pytest.fixture(scope="module")
def comments():
    return generate_comments(1500, seed=21)


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("I didn't like it.", "i didn t like it"),
        ("I've seen it 3 times, it's the 90s' best.", "i ve seen it digits times , it s the digitss best"),
        ("The 2nd act, 3D and 4K in 1080p", "the digitsnd act , digitsd and digitsk in digitsp"),
        ("I paid $12.50 for 3,000 seats at 9:30pm", "i paid $ digits digits for digits , digits seats at digits : digitspm"),
        ("8/10 and/or r/movies", "digits digits and or r movies"),
        ('He said "no." then "yes"!', "he said `` no `` then `` yes '' !"),
        ("Wow!!!! Really??? Ok?!", "wow ! ! really ? ? ok ? !"),
        ("gonna cannot wanna gimme gotta lemme", "gon na can not wan na gim me got ta lem me"),
        ("see https://imdb.com/title/tt1. Mail me@x.org", "see url mail email"),
        ("Great :) <3 xD", "great happy love laugh"),
        ("wait... it\u2019s \u201cfine\u201d \u2014 Mr. Smith (e.g. 100%)", "wait it s `` fine '' -- mr smith ( e g digits % )"),
        ("x-men & sci-fi -- yes; no", "x-men & sci-fi -- yes ; no"),
        ("**Sooooo** goooood hahahaha", "soo good haha"),
        ("[link](http://a.com) and a_b ^ c = d + e # f @ g", "link and a_b ^ c = d + e # f @ g"),
        ("u.s.a. *sigh* ~meh~ a|b {c} d < e > f \\g", "u s a sigh meh a b c d e f g"),
        ("", ""),
    ],
)
def test_lsdscc_convention_gives_the_released_forms(raw, expected):
    assert clean_and_tokenize(raw) == expected.split()
    assert clean_and_tokenize(raw, convention="lsdscc") == expected.split()


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("I Don't know.", "i do n't know ."),
        ("See you this weekend. Then more.", "see you this weekend . then more ."),
        ('It was "great." Wait.. what (really.)', "it was `` great . '' wait .. what ( really . )"),
        ("I give it 8/10 in 2019, r/movies", "i give it digits / digits in digits , url"),
        ("the 90s and the 2nd act", "the digits and the digits act"),
    ],
)
def test_treebank_convention_keeps_the_previous_rules_and_splits_every_final_period(raw, expected):
    assert clean_and_tokenize(raw, convention="treebank") == expected.split()


def test_default_convention_and_unknown_names():
    assert DEFAULT_CONVENTION == "lsdscc" and CONVENTIONS == ("lsdscc", "treebank")
    for call in (lambda: clean_and_tokenize("x", convention="ptb"), lambda: tokenize("x", convention="ptb"),
                 lambda: clean_text("x", convention="ptb")):
        with pytest.raises(ValueError, match="unknown text convention 'ptb'; choose one of: lsdscc, treebank"):
            call()


def test_step_functions_keep_their_historical_default():
    # The step functions default to the treebank rules (tests/test_lsdscc_cleaning.py pins them).
    assert clean_text("8/10 on r/movies") == "digits / digits on url"
    assert clean_text("8/10 on r/movies", "lsdscc") == "8/10 on r/movies"
    assert tokenize("I didn't.") == ["i", "did", "n't", "."]
    assert tokenize("I didn't.", convention="lsdscc") == ["i", "didn", "t"]


def _lsdscc_violations(tokens):
    return [t for t in tokens if ("'" in t and t != "''") or "/" in t or "." in t or re.search(r"\d", t)
            or t != t.lower()]


def test_lsdscc_tokens_have_no_apostrophe_slash_digit_or_period(comments):
    # Property: the released text has none of these (README "Text conventions").
    texts = comments + _fuzz(3000, seed=1)
    bad = {t: _lsdscc_violations(clean_and_tokenize(t)) for t in texts}
    assert {t: v for t, v in bad.items() if v} == {}


def test_treebank_never_leaves_a_sentence_period_glued(comments):
    for text in comments:
        glued = [t for t in clean_and_tokenize(text, convention="treebank") if t.endswith(".") and t.strip(".")]
        assert glued == [], text
    # the previous behaviour glued it (NLTK splits only the text's last period)
    assert "weekend." in cleaning.nltk_tokenizer("treebank")("this weekend. then more.")


@pytest.mark.parametrize("native", [True, False], ids=["with-c", "python-only"])
@pytest.mark.parametrize("lowercase", [True, False])
def test_fast_path_matches_the_step_functions(comments, lowercase, native):
    # the fast path is a fused copy of tokenize(clean_text(...)) with NLTK's Treebank tokenizer;
    # its second half runs in C when the extension is built (lsdscc/corpus/_cleaning_native.c).
    texts = comments + _fuzz(4000, seed=2 + lowercase)
    for text in texts:
        reference = tokenize(clean_text(text, "lsdscc"), "treebank", lowercase, "lsdscc")
        assert clean_and_tokenize(text, lowercase=lowercase, native=native) == reference, repr(text)


def test_nltk_tokenizer_combines_with_the_lsdscc_convention():
    assert clean_and_tokenize("I can't... 8/10!", "nltk") == ["i", "can", "t", "digits", "digits", "!"]


def test_quote_tokens_in_tokenized_text_are_kept():
    # Released text is already tokenized: `` and '' stay what they are (NLTK alone would turn
    # a '' after a space into ``, and markdown stripping would read `` as an empty code span).
    text = "is not `` yay , god ! '' give it a `` quick buck '' factory"
    assert clean_and_tokenize(text) == text.split()


def test_whitespace_pass_equals_spaces_then_newlines():
    # strip_markup's one _WHITESPACE pass replaces the two passes it had before.
    spaces = re.compile(r"[ \t\r\f\v\u00a0\u200b]+")
    newlines = re.compile(r"\s*\n\s*")
    rng = random.Random(4)
    alphabet = [" ", "\t", "\n", "\r", "\u00a0", "\u200b", "\u2003", "\x1c", "a", "b"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert cleaning._WHITESPACE.sub(" ", text) == newlines.sub(" ", spaces.sub(" ", text)), repr(text)


def test_emoticon_tries_equal_the_longest_first_alternation(comments):
    # The straightforward reference: every face in one alternation, longest first.
    table = emoticon_table()
    faces = sorted((f for f in table if f.isascii()), key=len, reverse=True)
    emoji = sorted((f for f in table if not f.isascii()), key=len, reverse=True)
    plain = re.compile(r"(?:(?<=\s)|^)(?:" + "|".join(map(re.escape, faces)) + r")(?=\s|$|[.,!?;])|"
                       + "|".join(map(re.escape, emoji)))
    rng = random.Random(5)
    faces_text = [" ".join(rng.choice(faces + emoji + ["a", ":", "x", "<", "3", ".", "D"]) for _ in range(6))
                  for _ in range(2000)]
    for text in comments + faces_text + _fuzz(2000, seed=6):
        if "(\u30c4)" not in text:
            assert substitute_emoticons(text) == plain.sub(lambda m: f" {table[m.group(0)]} ", text), repr(text)


def test_url_guard_never_skips_a_url(comments):
    for text in comments + _fuzz(3000, seed=7) + ["HTTP://X.Y", "WWW.site", "a.CoM/x", "x.io"]:
        if cleaning._LSDSCC_URL.search(text):
            assert cleaning._has_url(text), text


def test_corpus_config_records_the_convention():
    assert CorpusConfig().text_convention == "lsdscc"
    assert CorpusConfig().as_options()["text_convention"] == "lsdscc"
    assert CorpusConfig(text_convention="treebank").as_options()["text_convention"] == "treebank"
    assert "text_conventions" not in CorpusConfig().as_options()  # the choices are not an option
    with pytest.raises(ValueError, match="text_convention must be one of lsdscc, treebank, got 'ptb'"):
        CorpusConfig(text_convention="ptb")


def test_prepare_thread_applies_the_configured_convention():
    posts = [Post("t3", "t3_s", "t3_s", "", 100, "Seen it?"),
             Post("t1", "t1_c", "t3_s", "t3_s", 101, "I didn't. 8/10")]
    text = {c: dict((n.id, n.text) for n in prepare_thread("t3_s", posts, CorpusConfig(text_convention=c))[0])
            for c in CONVENTIONS}
    assert text["lsdscc"]["t1_c"] == "i didn t digits digits"
    assert text["treebank"]["t1_c"] == "i did n't . digits / digits"


def test_build_flag_reaches_the_config():
    import argparse

    from pipelines.lsdscc.options import add_corpus_arguments, config_from_values

    parser = argparse.ArgumentParser()
    add_corpus_arguments(parser)
    assert config_from_values(parser.parse_args([])).text_convention == "lsdscc"
    assert config_from_values(parser.parse_args(["--text-convention", "treebank"])).text_convention == "treebank"
    with pytest.raises(SystemExit):
        parser.parse_args(["--text-convention", "ptb"])
