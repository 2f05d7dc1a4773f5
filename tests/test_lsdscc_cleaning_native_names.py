"""The C twins of the username check, the e-mail rule and the url rule (``lsdscc/corpus/_cleaning_native.c``)
give what the Python rules give (issue 34: with the check run on every text, these were a quarter of
the cleaning's time on realistic bodies).

``native_extension().may_name_user(text)`` stands for :func:`cleaning.may_name_user` (every text of
the C path asks it, :func:`cleaning._without_usernames`); ``native_extension().mail_and_urls(text)``
for :func:`cleaning._mail_and_urls` (``_EMAIL.sub(" email ", text)`` then
``_LSDSCC_URL.sub(_url_token, ...)``), or None where it leaves the text to Python (a character that
re.I matches with an ASCII letter: ``\\u0130 \\u0131 \\u017f \\u212a``). Each is compared with the Python
rule and with the bare regexes on generated text rich in the rules' characters and Unicode edge
cases, on realistic bodies and on the fixtures of tests/test_lsdscc_cleaning_native.py.
"""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsdscc.corpus import cleaning
from lsdscc.synthetic.text import RealisticText
from tests.test_lsdscc_cleaning_native import _PIECES, _fuzz

NATIVE = cleaning.native_extension()
pytestmark = pytest.mark.skipif(NATIVE is None, reason="tests/test_lsdscc_cleaning_native.py names the cause")

#: The characters re.I matches with an ASCII letter (cleaning.native_tables()["case_folds"])
FOLDS = "".join(cleaning.native_tables()["case_folds"])

_USER_PIECES = ["u", "U", "user", "USER", "uSeR", "use", "users", "s", "er", "/", "\\", "\\/", "_", "*", "**", "~",
                ".", ",", "?", ";", "'", '"', " ", "\t", "\n", "\u00a0", "\u3000", "\u2028", "\u200b", "a", "Z", "1",
                "é", "ß", "٣", "²", "ǅ", "\u0345", "ツ", "😂", "-", "@", "&", "#", "!", ">", "(", "[", "]", "^",
                "\U0001d400", "\u2160", "\u00b5", "x", "name"]

_LINK_PIECES = ["a", "b", "x", "Z", "com", "CoM", "co", "uk", "org", "io", "info", "biz", "de", "am", "comx",
                "1", "42", "-", "_", "%", "+", ".", "..", "@", "@@", "://", ":/", ":", "/", "//", "http", "HTTPS",
                "https", "ftp", "FtP", "www.", "WwW.", "ww", "w", "W", " ", "\n", "\t", "<", ">", '"', ")", "]",
                "(", "[", ",", ";", "!", "?", "'", "é", "ß", "٣", "²", "ツ", "😂", "\u00a0", "\u3000", "\u2028",
                "K", "s", "i", "me@x.com", "a.b@c-d.co.uk", "http://x.com/a).", "www.x.org/p?q=1,", "x.com",
                "foo.bar.io/", "e.g.", "u/x", "&amp;"]


def _python_mail_and_urls(text: str) -> str:
    """cleaning._mail_and_urls's Python rules."""
    if "@" in text:
        text = cleaning._email_sub(text)
    return cleaning._url_sub(cleaning._LSDSCC_URL, text) if cleaning._has_url(text) else text


def _regexes(text: str) -> str:
    """The rules as their bare regexes (what the Python functions' fast paths stand for)."""
    return cleaning._LSDSCC_URL.sub(cleaning._url_token, cleaning._EMAIL.sub(" email ", text))


def _same_mail_and_urls(text: str) -> bool:
    """C gives the Python rules' text, or None only where a character of FOLDS is in the text."""
    got = NATIVE.mail_and_urls(text)
    if got is None:
        assert any(c in text for c in FOLDS), repr(text)
        return False
    expected = _python_mail_and_urls(text)
    assert got == expected == _regexes(text), repr(text)
    return True


@pytest.fixture(scope="module")
def bodies() -> list[str]:
    gen = RealisticText(23)
    return [gen.body() for _ in range(6000)]


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(_USER_PIECES), max_size=30).map("".join))
def test_may_name_user_generated(text):
    assert NATIVE.may_name_user(text) is cleaning.may_name_user(text), repr(text)


def test_may_name_user_on_every_character_and_the_fixtures(bodies):
    points = list(range(0x3000)) + random.Random(4).sample(range(0x3000, 0x110000), 20_000)
    for c in map(chr, points):  # (before the u, after it, after user)
        for text in (c + "u/", "u" + c, "user" + c, "x" + c + "U_"):
            assert NATIVE.may_name_user(text) is cleaning.may_name_user(text), (hex(ord(c)), text)
    texts = bodies + _fuzz(5000, 31) + _PIECES + [cleaning.html.unescape(t) for t in _fuzz(2000, 32)]
    named = 0
    for text in texts:
        expected = cleaning.may_name_user(text)
        assert NATIVE.may_name_user(text) is expected, repr(text)
        named += expected
    assert 0.01 * len(texts) < named < 0.5 * len(texts), named  # (both answers are exercised)
    with pytest.raises(TypeError):
        NATIVE.may_name_user(b"u/x")


@settings(max_examples=600, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(_LINK_PIECES), max_size=40).map("".join))
def test_mail_and_urls_generated(text):
    _same_mail_and_urls(text)


@pytest.mark.parametrize("seed", [1, 2])
def test_mail_and_urls_random(seed):
    rng = random.Random(seed)
    texts = ["".join(rng.choice(_LINK_PIECES) for _ in range(rng.randint(0, 60))) for _ in range(8000)]
    decided = sum(map(_same_mail_and_urls, texts))
    changed = sum(_python_mail_and_urls(t) != t for t in texts)
    assert decided > 0.9 * len(texts) and changed > 0.3 * len(texts), (decided, changed)


@pytest.mark.parametrize("text", [
    "xwww.foo.com", "a www.x.com", "xx.yy://a.com", "AT&T http://x.com/a). ok", "me@x.co.uk.", "a.b@c.d.e.fg",
    "a@b.com-x@y.org", "a@b.c0m", "a@b.co1", "x@y.com_", "x@y.comé", "_a@b.com", "-a@b.com", "é.a@b.com",
    "a.b.c.com", "a..b.com", "x.com.", "x.comx.org", "x.com-y", "https:// x.com", "https://", "http://x",
    "ftp://a b", "www.", "www.x", "wwww.x", "x.co.uk/path\"q", "x.COM/A>b", "1.2.io", "-.com", "a-.de/",
    "see foo.biz, or bar.info!", "(http://x.com/a_(b))", "[x](www.y.org)]", "u/x@y.com", "a@b.com.@c.org",
])
def test_mail_and_urls_cases(text):
    assert _same_mail_and_urls(text)


@pytest.mark.parametrize("text", ["\u212a.com x.com", "http://x.\u017fe", "www.\u0130o.it", "a@b.com \u0131"])
def test_mail_and_urls_leaves_re_i_folds_to_python(text):
    """A character re.I matches with an ASCII letter (\u212a is k, \u017f s, \u0130 and \u0131 i)."""
    assert NATIVE.mail_and_urls(text) is None
    assert cleaning._mail_and_urls(text) == _python_mail_and_urls(text)


def test_mail_and_urls_realistic(bodies):
    """Realistic bodies with an e-mail address or a url (about a tenth): C decides for every one."""
    texts = [b for b in bodies if "@" in b or cleaning._has_url(b)]
    assert len(texts) > 300
    assert sum(map(_same_mail_and_urls, texts)) >= 0.99 * len(texts)


def test_mail_and_urls_in_linear_time():
    """Long dotted runs, @ runs and schemes (the Python rules' linear paths): the same text, quickly."""
    for text in ("a." * 40_000 + "com", "a." * 40_000, "a@" * 40_000 + "b.com", "a-" * 40_000 + "@x.io",
                 "http://" * 20_000, "www." * 30_000 + "x", ("x.co " * 20_000), "a.b" * 30_000 + "@c.de"):
        start = time.process_time()
        got = NATIVE.mail_and_urls(text)
        assert time.process_time() - start < 0.5
        assert got == _python_mail_and_urls(text), text[:40]


def test_the_fast_path_asks_c_for_mail_and_urls(bodies, monkeypatch):
    """The corpus's path gives the Python tokens without running the Python e-mail and url rules
    on most realistic bodies that have them (the others take the Python steps, which run them)."""
    texts = [b for b in bodies if "@" in b or cleaning._has_url(b)][:400]
    expected = [cleaning.clean_and_tokenize(t, native=False) for t in texts]

    def no_python(*_):
        raise LookupError("the Python e-mail or url rule ran")

    for name in ("_email_sub", "_url_sub"):
        monkeypatch.setattr(cleaning, name, no_python)
    in_c = 0
    for text, tokens in zip(texts, expected):
        try:
            got = cleaning.clean_and_tokenize(text)
        except LookupError:
            continue
        in_c += 1
        assert got == tokens, repr(text)
    assert in_c > 0.9 * len(texts), in_c


@pytest.mark.parametrize("text", [
    "u/x &amp; y", "&gt; u/name said", "u&#47;x &amp; u/y", "AT&T u/x ''", "u\\/x &amp; \\", "&lt;u/x&gt;",
    "u/x &amp;amp;amp; z", "**u/x** &amp; [a](http://x.com)", "&gt; u/x\n\n    code &amp;", "u/x &#124; y",
    "_u/x_ &quot;q&quot; user/y", "u/x &#10;---\n", "&amp;u/x", "u&amp;/x u/y", "&#117;/x u/y",
])
def test_names_and_entities(text):
    """A text with a username and an entity: decoded, then its names removed, then the C path."""
    for lowercase in (True, False):
        expected = cleaning.clean_and_tokenize(text, lowercase=lowercase, native=False)
        assert cleaning.clean_and_tokenize(text, lowercase=lowercase) == expected, repr(text)


def test_names_and_entities_realistic(bodies):
    """Realistic bodies with a username and an entity (half a percent): C decides for nearly all."""
    texts = [b for b in bodies if "&" in b and NATIVE.may_name_user(b)]
    assert len(texts) > 15
    decided = 0
    for text in texts:
        plain, literal = cleaning._without_usernames(text)
        decided += plain is not None and cleaning._native_plain(plain, True, None, literal) is not None
        assert cleaning.clean_and_tokenize(text) == cleaning.clean_and_tokenize(text, native=False), repr(text)
    assert decided >= 0.6 * len(texts), (decided, len(texts))


def test_the_whole_fast_path_on_link_and_name_text():
    """clean_and_tokenize with the extension and without it, on text rich in urls, e-mails and names."""
    rng = random.Random(7)
    pieces = _LINK_PIECES + _USER_PIECES + ["&gt;", "&#47;", "&amp;amp;", "&#117;", "&quot;", "**", "''", "\\_",
                                            "[a](http://x.com)", "\n- ", "\n    ", "\n---\n", "`", "|"]
    for _ in range(6000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        assert cleaning.clean_and_tokenize(text) == cleaning.clean_and_tokenize(text, native=False), repr(text)
