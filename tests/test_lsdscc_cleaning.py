"""Cleaning rules of docs/algorithms.md#1-lsdscc-corpus, steps 1-7, with hand-written cases.

Expected values are worked out by hand from the rule text (section 1) unless a comment names
another source.
"""

import pytest

from lsdscc.corpus import cleaning
from lsdscc.corpus.cleaning import clean_text, normalize_entities, replace_emoticons, shorten_elongated, strip_markup, tokenize
from lsdscc.corpus.emoticons import emoticon_table
from lsdscc.corpus.vocab import build_vocabulary, noise_composition, segment


@pytest.mark.parametrize(
    "text, expected",
    [
        ("[Inception](https://imdb.com/title/tt1375666) rocks", "Inception rocks"),
        ("![poster](http://x.org/p.png) nice", "poster nice"),
        ("&gt; quoted line\n\nmy reply", "quoted line my reply"),
        ("&gt;&gt; nested quote", "nested quote"),
        ("Tom &amp; Jerry &lt;3", "Tom & Jerry <3"),
        ("&amp;gt; double escaped", "double escaped"),
        ("**bold** and *italic* and ***both*** and __under__", "bold and italic and both and under"),
        ("~~struck~~ text", "struck text"),
        ("# Header\nbody", "Header body"),
        ("### Small header", "Small header"),
        ("* one\n* two\n- three\n1. four", "one two three four"),
        ("use `inline code` here", "use inline code here"),
        ("```\ncode block\n```\nafter", "code block after"),
        ("| a | b |\n|---|---|\n| c | d |", "a b c d"),
        ("above\n\n---\n\nbelow", "above below"),
        ("<b>bold</b> <i>it</i> <br/> end", "bold it end"),
        ("spoiler: >!he dies!<", "spoiler: he dies"),
        ("tiny ^(superscript) text", "tiny superscript text"),
        ("escaped \\*stars\\*", "escaped *stars*"),
        ("", ""),
    ],
)
def test_strip_markup(text, expected):
    assert strip_markup(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("see https://www.imdb.com/title/tt1375666/", "see url"),
        ("see http://example.com/a?b=c.", "see url ."),
        ("go to www.reddit.com now", "go to url now"),
        ("on imdb.com/title/x and youtube.com", "on url and url"),
        ("r/movies and /r/TrueFilm", "url and url"),
        ("mail bob.smith@example.co.uk please", "mail email please"),
        ("I give it 8/10", "I give it digits / digits"),
        ("in 2019 I paid $12.50 for 3,000 seats", "in digits I paid digits for digits seats"),
        ("the 90s and the 2nd act at 9:30pm", "the digits and the digits act at digits"),
        ("r2d2 and c3po stay", "r2d2 and c3po stay"),
        ("no entities", "no entities"),
    ],
)
def test_normalize_entities(text, expected):
    assert normalize_entities(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("great :)", "great happy"),
        ("great :-) really", "great happy really"),
        ("sad :( and :'(", "sad sad and cry"),
        ("lol XD and :D", "lol laugh and laugh"),
        ("wink ;)", "wink wink"),
        ("love <3 it", "love love it"),
        ("hmm :/ ok", "hmm skeptical ok"),
        ("shrug ¯\\_(ツ)_/¯", "shrug shrug"),
        ("emoji 😂 and ❤️ and 👍", "emoji laugh and love and approve"),
        ("at 9:30 and http://x", "at 9:30 and http://x"),  # not standalone: untouched
        ("a:)b", "a:)b"),
    ],
)
def test_replace_emoticons(text, expected):
    assert replace_emoticons(text) == expected


def test_emoticon_table_is_data_with_one_word_per_face():
    table = emoticon_table()
    assert table[":-)"] == "happy" and table[":("] == "sad" and table["<3"] == "love"
    assert len(table) > 80


@pytest.mark.parametrize(
    "text, expected",
    [
        ("cooool", "cool"),  # the paper's example
        ("ahahaha", "haha"),  # the paper's example
        ("hahahahaha funny", "haha funny"),
        ("hehehe", "hehe"),
        ("lololol", "lol"),
        ("sooooo goooood", "soo good"),
        ("wow!!!!!!", "wow!!!"),
        ("book keeper", "book keeper"),  # doubled letters are normal
        ("aha moment", "aha moment"),
    ],
)
def test_shorten_elongated(text, expected):
    assert shorten_elongated(text) == expected


def test_clean_text_runs_steps_in_order():
    text = "&gt; **Sooooo** good :) see [trailer](https://youtu.be/x) 10/10, mail me@x.com"
    assert clean_text(text) == "Soo good happy see trailer digits / digits , mail email"


@pytest.mark.parametrize("name", ["treebank", "nltk"])
def test_fast_tokenizer_matches_nltk_token_for_token(name):
    # Parity with the unmodified NLTK tokenizer (nltk.redos + regex engine) on varied text.
    texts = [
        'He said "hello" -- then (quietly) left... can\'t won\'t gonna',
        "'quoted' [x] {y} <z> it's 3,000 $4.5 a:b, c; d! e? f.",
        "i don't think so . haha :) wasn't it ?",
        "l'amour, rock'n'roll & co. -- u.s.a. etc...",
    ]
    fast = cleaning.nltk_tokenizer(name, True)
    slow = cleaning.nltk_tokenizer(name, False)
    for text in texts:
        assert fast(text) == slow(text)


def test_tokenize_lowercases_and_splits_contractions():
    assert tokenize("I Don't know.") == ["i", "do", "n't", "know", "."]
    assert tokenize("I Don't know.", lowercase=False) == ["I", "Do", "n't", "know", "."]


def test_segment_uses_corpus_frequencies():
    counts = {"i": 50, "love": 20, "you": 40, "lov": 1, "this": 30, "movie": 25, "is": 60, "amazing": 12}
    total = sum(counts.values())
    assert segment("iloveyou", counts, 10, total) == ["i", "love", "you"]
    assert segment("thismovieisamazing", counts, 10, total) == ["this", "movie", "is", "amazing"]
    assert segment("xyzzy", counts, 10, total) is None
    # pieces must be frequent: "amazing" seen 12 times is not enough at piece_min_count 13
    assert segment("isamazing", counts, 13, total) is None


def test_build_vocabulary_splits_rare_words_drops_non_ascii_and_truncates():
    raw = {"i": 50, "love": 20, "you": 40, "iloveyou": 1, "movie": 30, "café": 3, "zebra": 1, "the": 90}
    vocab = build_vocabulary(raw, vocab_size=5, rare_max_count=2, piece_min_count=10, min_split_length=7)
    assert vocab.splits == {"iloveyou": ("i", "love", "you")}
    # after splitting: i 51, love 21, you 41; non-ASCII gone; top 5 = the i you movie love
    assert vocab.kept == frozenset({"the", "i", "you", "movie", "love"})
    assert vocab.apply(["iloveyou", "café", "zebra", "the"]) == ["i", "love", "you", "<unk>", "the"]


def test_noise_composition_counts_long_and_non_ascii_words():
    raw = {"ok": 10, "supercalifragilisticexpialidocious": 2, "café": 3, "千と千尋": 1}
    noise = noise_composition(raw, long_word_length=20)
    assert noise["vocabulary_types"] == 4 and noise["vocabulary_tokens"] == 16
    assert noise["over_long_types"] == 1 and noise["over_long_tokens"] == 2
    assert noise["non_ascii_types"] == 2 and noise["non_ascii_tokens"] == 4
    assert noise["non_ascii_type_share"] == 0.5 and noise["over_long_token_share"] == 0.125
