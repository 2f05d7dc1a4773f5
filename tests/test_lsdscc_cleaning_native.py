"""The C half of the lsdscc fast path (``lsdscc/corpus/_cleaning_native.c``) gives the tokens of
the Python steps it replaces (issue 22: cleaning realistic bodies was half of the corpus build).

``native_extension().tail(text, lowercase)`` stands for :func:`cleaning.lsdscc_tail` (emoticons,
emoji, elongated words, laughter, lowercasing, the ``lsdscc`` character rules and the Treebank rules
left for them); ``native_extension().plain(text, lowercase)`` for the whole
``clean_and_tokenize(text, lowercase=lowercase)`` (the ``lsdscc`` fast path) on a text the markup, e-mail and url steps leave as it is. Each returns None where it leaves
the text to Python; these tests compare them with the Python steps wherever they decide, on
realistic, random and hostile text, and check that they decide for nearly every real text.
"""

from __future__ import annotations

import random

import pytest

from lsdscc.synthetic.text import RealisticText
from lsdscc.corpus import cleaning, emoticons
from lsdscc.corpus.emoticons import emoticon_table

NATIVE = cleaning.native_extension()

_PIECES = list("ab xyz*_~[]()!?<>@.,:;/-\"' \n\t#^|`=%+$&\\¯0123456789aAhHlLoOeEcCnNtTgGmMwWkK") + [
    "(ツ)", "¯\\_(ツ)_/¯", "```", "\u200b", "\u3000", "\x1c", "\x85", "\u00a0", "\u2028", "\r\n", "\x0b",
    "haha", "ahah", "HaHa", "haah", "ahha", "aha", "hah", "hhhh", "Ahaha", "éaha", "_haha_", "haha2", "ßhaha",
    "hahaha!", "AHAHAH", "hehehe", "HeHeH", "heheh", "hehe2", "lololol", "LOLOL", "lolo", "lolol!", "xlolol",
    "aaa", "ooooo", "OOOo", "zzzzz", "ééé", "aaaAAA", "!!!", "????", "....", "!!??!!", "--", "---", "–", "—",
    "😂", "❤️", "\u2764", "\u2639", "\ufe0f", "🤷\u200d♂️", "\U0001F600\U0001F600", "千と", "ツ", "Ｗｏｗ",
    ":)", ":D", " xD ", ":'(", ":-(", "D:", "<3", "XD.", ";)", "=)", "8D", "^_^", "T_T", "O_O", ":/",
    "&gt;", "&amp;", "**", "__", "~~", '"q"', '("', '["', "{\"", "<\"", '"', "“", "”", "„", "‘", "’", "´",
    "…", "''", "``", "1st", "90s", "９", "٣", "²", "r/x", "u/y", "a@b.com", "http://x.com/a", "www.x.org",
    "x.COM", "e.g.", ".io ", ".it.", ".ca", ".am", "\u0130", "\u0131", "\u017f", "\u212a", "ΣΑΣ", "ÉCOLE",
    "cannot", "CanNot", "gimme", "gonna", "Gotta", "lemme", "wanna", "wanna!", "wanna-", "x-gimme-y",
    "cannots", "gonna.", ",,", ",:", ":,", "::", "1,2", "a,b", "- ", "= ", "+ ", "# ", "1. ", "2) ", "    ",
    "\n- ", "\n1. ", "\n    ", "\n# ", "\n===", "\n---", "• ", "[a](b)", "![i](x.png)", "[r][1]",
    "\n[1]: http://x", "[x](/r/y)", "**b**", "*i*", "_i_", "~~s~~", "`c`", "^(s)", "^s", "&#39;", "&quot;",
    "&amp;amp;", "&lt;3", "&gt; ", "\n&gt;", "&#x200B;", "***", "___", "\n***\n", "](", "[[", "]]",
]


def _fuzz(n: int, seed: int, longest: int = 40) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_PIECES) for _ in range(rng.randint(0, longest))) for _ in range(n)]


_head = cleaning.lsdscc_head  # the Python steps before the tail: markup, e-mails, urls


def _python_fast(text: str, lowercase: bool) -> list[str]:
    return cleaning.clean_and_tokenize(text, lowercase=lowercase, native=False)


def _fast(text: str, lowercase: bool) -> list[str]:
    return cleaning.clean_and_tokenize(text, lowercase=lowercase)


@pytest.fixture(scope="module")
def bodies() -> list[str]:
    gen = RealisticText(11)
    return [gen.body() for _ in range(5000)]


def test_the_extension_is_built():
    # `pip install -e .` (the Makefile's set-up) compiles it; without a C compiler the Python
    # steps run and this test names the cause.
    assert NATIVE is not None, "lsdscc/corpus/_cleaning_native.c is not built: run `pip install -e .` with a C compiler"


def _check(texts, lowercase: bool) -> tuple[int, int]:
    """Every text where tail() or plain() decides: the Python tokens. Returns how many each decided."""
    tails = plains = 0
    for text in texts:
        head = _head(text)
        tokens = NATIVE.tail(head, lowercase)
        if tokens is not None:
            tails += 1
            assert tokens == cleaning.lsdscc_tail(head, lowercase), repr(head)
        tokens = NATIVE.plain(text, lowercase)
        if isinstance(tokens, list) and not cleaning.may_name_user(text):  # (others never reach plain())
            plains += 1
            assert tokens == _python_fast(text, lowercase), repr(text)
    return tails, plains


@pytest.mark.parametrize("lowercase", [True, False])
def test_realistic_bodies(bodies, lowercase):
    tails, plains = _check(bodies, lowercase)
    # (measured: the tail decides for 99% of the bodies, plain() for about half: the others
    # have markup, links or e-mail addresses)
    assert tails >= 0.97 * len(bodies) and plains >= 0.35 * len(bodies), (tails, plains)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_and_hostile_text(seed):
    texts = _fuzz(6000, seed) + _fuzz(300, seed + 100, longest=400)
    tails, plains = _check(texts, lowercase=seed != 2)
    assert tails > 0.5 * len(texts) and plains > 0.05 * len(texts), (tails, plains)


def test_the_whole_fast_path_with_and_without_the_extension(bodies):
    # (_native_plain: strip_markup's entity, link, emphasis, code and superscript rules, then plain())
    for text in bodies + _fuzz(4000, 9) + _fuzz(500, 10, longest=200):
        assert _fast(text, True) == _python_fast(text, True), repr(text)


@pytest.mark.parametrize("text", [
    "great movie :-) but :( at the end", "xD that ending", "D: no", "love it <3", "ok :'( .", "1:) a:)",
    "so good 😂😂", "❤️ this", "HAHAHA yes", "ahahah!", "hahaX haha2 _haha_", "hehehe", "heheh.", "lololol ok",
    "cooool movieee!!!!", "what???", "wait....", "the 90s and ٣ apples", "“quoted” – and — dashes", '"start',
    'he said "no" (and "yes") ["x"]', "a,,b x::y 1,2 a:,b", "Cannot gonna wanna! wanna go x-gimme-y LEMME",
    "ÉCOLE ΣΑΣ Straße", "don't won't I'm", "it''s ``quoted''", "a.b.c e.g. i.e.", "r/movies and u/name",
    "line one\nline two\n\nline three", "   padded   ", "", " ", "\n",
])
def test_each_rule_in_c(text):
    """Texts that exercise each rule the C code implements are decided in C, not left to Python."""
    for lowercase in (True, False):
        head = _head(text)
        assert NATIVE.tail(head, lowercase) == cleaning.lsdscc_tail(head, lowercase), repr(text)


@pytest.mark.parametrize("text", ["It's a plain comment, with 2 sentences.", "“Quoted” — and so on!!", "ok :)"])
def test_plain_text_is_decided_without_python(text):
    assert NATIVE.plain(text, True) == _python_fast(text, True)


@pytest.mark.parametrize("text", ["see [this](http://x.com)", "**bold**", "&amp;", "a@b.com", "x.com", "www.x",
                                  "- item", "1. item", "# head", "    code", "> quote", "a\tb", "a\u200bb",
                                  "it''s", "1) item", "\n===", "http://x"])
def test_plain_leaves_markup_urls_and_mail_to_python(text):
    assert isinstance(NATIVE.plain(text, True), int)


@pytest.mark.parametrize("text", ["¯\\_(ツ)_/¯", "a (ツ) b"])
def test_what_c_leaves_to_python(text):
    """The shrug rule stays in Python."""
    assert NATIVE.tail(text, True) is None
    assert _fast(text, True) == _python_fast(text, True)


@pytest.mark.parametrize("text", ["¯\\_(ツ)_/¯", "a (ツ) b", "so ¯\\\\_(ツ)_/¯ :) 😂 haaaa", "(ツ(ツ)) x", "__(ツ)__ ok",
                                  "**¯\\_(ツ)_/¯** [l](http://x.com/(ツ))", "a(ツ)b ツ ( ツ )"])
def test_the_shrug_is_substituted_before_the_c_tail(text, monkeypatch):
    """A text holding a shrug after markup, e-mails and urls (1% of realistic bodies) has the
    shrug rule run in Python, then the C tail decides the rest: the Python tail never runs,
    and the tokens are the Python steps' (with and without counting)."""
    from collections import Counter

    assert NATIVE.tail(emoticons.substitute_shrug(_head(text)), True) is not None
    expected = _python_fast(text, True)

    def no_python_tail(*_):
        raise AssertionError("the Python tail ran")

    monkeypatch.setattr(cleaning, "lsdscc_tail", no_python_tail)
    assert cleaning._lsdscc_fast(text, True) == expected
    words = Counter()
    assert cleaning._lsdscc_fast(text, True, words) == " ".join(expected)
    assert words == Counter(expected) and list(words) == list(Counter(expected))
    assert emoticons.substitute_shrug(emoticons.substitute_shrug(text)) == emoticons.substitute_shrug(text)


@pytest.mark.parametrize("text", ["g\u0130mme", "g\u0131mme", "G\u0131MME now", "can\u0130not", "lemme \u0131t",
                                  "see foo.u\u212a now", "mi\u017fs.u\u017f", "x.b\u0130z", "a.\u212ao"])
def test_characters_re_i_matches_with_ascii_letters(text):
    """The characters outside ASCII that re.I matches with an ASCII letter (a dotted or dotless
    i, long s, the Kelvin sign) in the contractions and domain endings: C folds them as re.I does
    (the Kelvin sign and long s in a domain ending gave ``foo uk`` in C and ``url`` in Python)."""
    for lowercase in (True, False):
        assert NATIVE.tail(_head(text), lowercase) == cleaning.lsdscc_tail(_head(text), lowercase)
        assert _fast(text, lowercase) == _python_fast(text, lowercase), repr(text)


@pytest.mark.parametrize("lowercase", [True, False])
def test_every_character(lowercase):
    """Every code point, alone and in words (the C lowercasing and character classes)."""
    for start in range(0, 0x110000, 4096):
        chars = [chr(c) for c in range(start, start + 4096)]
        for text in (" ".join(chars), "A" + "".join(chars[:300]) + "Σ b", "".join(chars[300:900])):
            assert NATIVE.tail(text, lowercase) == cleaning.lsdscc_tail(text, lowercase), hex(start)


def test_long_texts():
    rng = random.Random(5)
    for size in (10_000, 200_000):
        text = "".join(rng.choice(_PIECES) for _ in range(size // 3))
        assert NATIVE.tail(_head(text), True) in (None, cleaning.lsdscc_tail(_head(text), True))
    runs = ["a" * 100_000, "!" * 100_000, "9" * 100_000, "\"" * 50_000, ":)" * 50_000, "ha" * 50_000, "–" * 50_000]
    for text in runs:
        assert NATIVE.tail(text, True) == cleaning.lsdscc_tail(text, True)


def test_configure_checks_the_table():
    table = emoticon_table()
    tables = cleaning.native_tables()

    def configure(**changed):
        NATIVE.configure({**tables, **changed})

    with pytest.raises(TypeError):
        NATIVE.configure([])
    with pytest.raises(TypeError):
        configure(faces=[])
    with pytest.raises(ValueError):
        configure(faces={"": "x"})
    for face in ("é:", ":h", "L:"):
        with pytest.raises(ValueError):
            configure(faces={face: "x"})
    with pytest.raises(ValueError):
        configure(emoji={"😂": "x" * 40})
    for word in ("Happy", "haha", "cool!", "zzz", ""):  # (the scan before the replacement must stay true)
        with pytest.raises(ValueError):
            configure(emoji={"😂": word})
    bad = {"tlds": ("COM",), "contractions": (("can", "not"),), "pad": "-", "wide": {"x": '"'},
           "undecided": ("(:)",), "triggers": (("&", 3),), "case_folds": {"K": "K"}, "face_followers": "é",
           "line_rules": (("#", False, False, None, 2),), "digits": "Digits", "stand_ins": ("a", "b"),
           "open_quote_after": "a", "punct_runs": "x", "laugh_guards": ((("h",),), (), ()),
           "laugh_words": ("haha", "Hehe", "lol")}
    for name, value in list(bad.items()) + [("laugh_guards", ((("kiki",),), (), ())), ("laugh_guards", ((),)),
                                            ("stand_ins", ("\ue0fe",)), ("laugh_words", ("haha", "hehe")),
                                            ("laugh_words", ("haha", "", "lol")), ("laugh_words", ("hä", "he", "lol"))]:
        with pytest.raises((TypeError, ValueError)):
            configure(**{name: value})
    without = dict(tables)
    del without["tlds"]
    with pytest.raises(TypeError):
        NATIVE.configure(without)
    NATIVE.configure(tables)  # (a failed call leaves the table as it was)
    assert NATIVE.tail("ok :)", True) == cleaning.lsdscc_tail("ok :)", True) == ["ok", table[":)"]]


@pytest.mark.parametrize("native", [True, False], ids=["with-c", "python-only"])
def test_clean_and_count(bodies, native):
    """The corpus's step: the joined tokens, each counted (in C: interned tokens, no list)."""
    from collections import Counter

    texts = bodies[:2000] + _fuzz(3000, 21) + ["", "   ", "cannot gonna", "é É ΣΑΣ 😂"]
    words, expected = Counter(), Counter()
    for text in texts:
        tokens = cleaning.clean_and_tokenize(text, native=native)
        assert cleaning.clean_and_count(text, words, native=native) == " ".join(tokens), repr(text)
        expected.update(tokens)
    assert words == expected and list(words) == list(expected)  # (the same counts, in the same order)
    for convention in ("treebank",):  # (the other conventions count in Python)
        other = Counter()
        assert cleaning.clean_and_count("It's 90s :)", other, convention=convention, native=native) == " ".join(
            cleaning.clean_and_tokenize("It's 90s :)", convention=convention, native=native))


def test_counts_must_be_a_dict():
    with pytest.raises(TypeError):
        NATIVE.plain("a b", True, 0, [])
    with pytest.raises(TypeError):
        NATIVE.tail("a b", True, "x")


def test_apply_vocabulary_in_c(bodies):
    """Vocabulary.apply_text in C: the text itself where every token stays, else the rewrites;
    two vocabularies in turn (each token's answer is kept per vocabulary)."""
    from collections import Counter

    from lsdscc.corpus.vocab import build_vocabulary

    counts = Counter()
    texts = [cleaning.clean_and_count(b, counts) for b in bodies]
    texts += ["", " ", "a  b", " a", "a ", "the\tmovie", "é the", "the movie", "ΣΑΣ the", "x" * 50, "千 the 😂",
              "the\u3000movie", "é\u2028x"]
    vocabularies = [build_vocabulary(counts, vocab_size=size, rare_max_count=2, piece_min_count=5, min_split_length=6)
                    for size in (5000, 300)]
    for _ in range(2):
        for vocabulary, least in zip(vocabularies, (500, 50)):
            same = 0
            for text in texts:
                got = NATIVE.apply_vocabulary(text, vocabulary.unchanged, vocabulary.rewrites)
                assert got == " ".join(vocabulary.apply(text.split())), repr(text)
                same += got is text
            assert same > least, same  # (texts that come back as they are)
    with pytest.raises(TypeError):
        NATIVE.apply_vocabulary("a", set(), {})
    # interned tokens (counted above) are rewritten from their slots: rewrites of several
    # tokens, empty ones left out, a rewrite that is not a str refused
    assert NATIVE.apply_vocabulary("the movie the", frozenset({"the"}), {"movie": "mo vie"}) == "the mo vie the"
    assert NATIVE.apply_vocabulary("the movie the", frozenset(), {"the": "", "movie": "x"}) == "x"
    assert NATIVE.apply_vocabulary("the movie", frozenset(), {"the": "", "movie": ""}) == ""
    with pytest.raises(TypeError):
        NATIVE.apply_vocabulary("the movie", frozenset(), {"the": 1, "movie": "m"})


def test_apply_vocabulary_past_one_batch_of_tokens(bodies):
    """A one-byte text's tokens are looked up 32 at a time: an unknown word, a token to rewrite or
    a double space in a later batch than the first still gives the Python answer (the text itself
    only where every token stays)."""
    from collections import Counter

    from lsdscc.corpus.vocab import build_vocabulary

    counts = Counter()
    for body in bodies:
        cleaning.clean_and_count(body, counts)
    vocabulary = build_vocabulary(counts, vocab_size=300, rare_max_count=2, piece_min_count=5, min_split_length=6)
    kept = sorted(vocabulary.unchanged)[:40]
    rare = next(t for t in counts if t.isascii() and t not in vocabulary.unchanged)
    for size in (31, 32, 33, 64, 65, 100):
        words = [kept[i % len(kept)] for i in range(size)]
        cases = [" ".join(words)] + [" ".join(words[:at] + [rare] + words[at:]) for at in (0, 31, 32, 33, size)]
        cases += [" ".join(words[:at]) + "  " + " ".join(words[at:]) for at in (1, 32, 33, size - 1)]
        cases += [" ".join(words[:at] + ["qqzxunseen"] + words[at:]) for at in (5, 40) if at <= size]
        for text in cases:
            got = NATIVE.apply_vocabulary(text, vocabulary.unchanged, vocabulary.rewrites)
            assert got == " ".join(vocabulary.apply(text.split())), repr(text)
            assert (got is text) == (text == " ".join(text.split()) and vocabulary.unchanged.issuperset(text.split()))


def test_counting_when_the_token_table_is_full(bodies):
    """Past the table's limit, new tokens are counted at once, after the text's pending ones:
    the same counts in the same order as Counter.update."""
    from collections import Counter

    before, interned = NATIVE.intern_limit()
    try:
        NATIVE.intern_limit(interned + 5)
        names = [f"zq{chr(97 + i % 26)}{chr(97 + i // 26)}" for i in range(50)]  # (new tokens)
        texts = [f"{n} the {n} x{n} the a" for n in names] + bodies[:200]
        words, expected = Counter(), Counter()
        for text in texts:
            assert cleaning.clean_and_count(text, words) == " ".join(cleaning.clean_and_tokenize(text))
            expected.update(cleaning.clean_and_tokenize(text))
        assert words == expected and list(words) == list(expected)
        assert NATIVE.intern_limit()[1] == interned + 5
    finally:
        NATIVE.intern_limit(before)


def _letters(i: int) -> str:  # (no letter three times in a row: no elongation to shorten)
    return "".join(chr(97 + i // 25 ** k % 25) + "z" for k in range(4))


def test_counting_while_the_token_table_grows():
    """One text with more new tokens than the token table has room for: the table grows while
    the text is counted (its pending counts are flushed first, the slots fetched ahead are then
    those of the old table). Tokens of up to 24 ASCII characters are found in their slot, longer
    ones, ones of two and four bytes a character (outside the BMP too) by their str, and
    apply_vocabulary finds each of them in a str of every width. The Python steps' tokens and
    Counter.update's counts, in its order."""
    from collections import Counter

    interned = NATIVE.intern_limit()[1]
    new = max(9000, interned + 10)  # (at least as many again: the table grows at half full)
    assert new < 200_000
    shapes = ["qz{}", "qz{}" + "xy" * 7, "qz{}" + "xy" * 7 + "x", "qz{}ж", "qz{}𝔞", "𝔞qz{}"]  # (24, 25 characters)
    names = [shapes[i % len(shapes)].format(_letters(i)) for i in range(new)]
    text = " ".join(names[i] + " the " + names[i // 2] for i in range(new))
    words = Counter()
    tokens = cleaning.clean_and_tokenize(text, native=False)
    assert cleaning.clean_and_count(text, words) == " ".join(tokens)
    expected = Counter(tokens)
    assert words == expected and list(words) == list(expected)
    assert NATIVE.intern_limit()[1] >= interned + new
    assert set(tokens) == set(names) | {"the"}
    for name in names[:60] + names[-60:]:
        for wide in ("", "ж", "𝔞"):  # (the text as a str of one, two and four bytes a character)
            line = f"{name} the {wide}".strip()
            assert NATIVE.apply_vocabulary(line, frozenset({name, "the", wide}), {}) is line
            rewrites = {name: "n", "the": "the", wide: wide}
            assert NATIVE.apply_vocabulary(line, frozenset({"the", wide}), rewrites) == f"n the {wide}".strip()
