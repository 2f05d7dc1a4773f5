"""Cleaning runs in linear time on hostile text, with the output of the regexes (issue 17).

The markdown, url and e-mail rules of ``lsdscc/corpus/cleaning.py`` used to retry a scan to the end
of the text (or line) from every opener: 40,000 characters of `` *a``, ``[a](``, ``>!`` or
``a.`` took 10 s to minutes. Where a text has many openers the rules now run as linear
scanners (``_emphasis_subn``, ``_link_sub``, ...); elsewhere the regexes run as before.

- Differential: each scanner, forced on, against the regex it replaces (the regexes stay in
  ``lsdscc.corpus.cleaning``: they are the reference and the path for normal text), and the whole
  ``clean_and_tokenize`` with every scanner forced on against it with every scanner off, on
  tens of thousands of seeded random and Reddit-shaped strings: identical output.
- Time: each pathological input of 40,000 characters (the cap of ``records.MAX_TEXT_CHARS``)
  cleans in under 2 s (the old code took 10 s to minutes; now about 0.1 s).
"""

from __future__ import annotations

import random
import re
import time

import pytest

from lsdscc.synthetic.text import generate_comments
from lsdscc.corpus import cleaning
from lsdscc.corpus.cleaning import CONVENTIONS, clean_and_tokenize
from lsdscc.corpus.emoticons import _SHRUG

# The regexes as they were before they were made linear (possessive spaces, lookbehinds).
_OLD = {
    "whitespace": (re.compile(r"[\s\u200b]*\n[\s\u200b]*|[ \t\r\f\v\u00a0\u200b]{2,}|[\t\r\f\v\u00a0\u200b]"),
                   cleaning._WHITESPACE, " "),
    "table_rule": (re.compile(r"^[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(?:\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*$", re.M),
                   cleaning._TABLE_RULE, ""),
    "table_pipe": (re.compile(r"[ \t]*\|[ \t]*"), cleaning._TABLE_PIPE, " "),
    "shrug": (re.compile(r"¯?[\\_]*\(ツ\)[\\_]*/?¯?"), _SHRUG, " shrug "),
}

_ALWAYS, _NEVER = re.compile(""), re.compile("(?!)")

# Characters and fragments that open, close or break each rule the scanners replace.
_PIECES = list("ab xyz*_~[]()!<>@.:/-\"' \n\t#^|`=%+\\¯") + [
    "(ツ)", "```", "~~~", "[a]: b", "\n\n", " \n ", "|--", ":--:", "\u200b", "\u3000", "\x1c",
    "http://", "https://", "ftp://", "www.", ".com", ".co", ".uk", ".io", "com", "](", "![", "!<", ">!",
    "-->", "<!--", "^(", "a@b.com", "x.org/p", "r/", "/r/x", "**", "__", "~~", "***", " *a", "[a]",
    "\u00a0", "\u2003", "\u00e9", "K", "  ", "<a@b>", "<http://x>", '"t"', " \"", "[a](b)", "1.",
]
# Text with many openers: the scanners must also agree where the regexes would be slow.
_DENSE = ["*", "_", "~", "[", "]", "(", ")", "<", ">", "!", "@", ".", "a", " ", "\n", '"', "-", ":", "/", "^", "|", "`"]


def _fuzz(n: int, seed: int, pieces=_PIECES, longest: int = 40) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, longest))) for _ in range(n)]


def _reddit_shaped(n: int, seed: int) -> list[str]:
    """Generated comments, each also with fragments of markup spliced into it at random."""
    rng = random.Random(seed)
    out = []
    for text in generate_comments(n, seed=seed):
        cut = rng.randint(0, len(text))
        out.append(text[:cut] + "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 6))) + text[cut:])
    return out


@pytest.fixture(scope="module")
def texts():
    """About 30,000 texts: Reddit-shaped, random over the rules' characters, dense in openers."""
    return (_reddit_shaped(6000, seed=31) + _fuzz(12000, seed=32) + _fuzz(6000, seed=33, longest=120)
            + _fuzz(6000, seed=34, pieces=_DENSE, longest=80))


@pytest.fixture
def scanners_on(monkeypatch):
    """Every scanner runs, whatever the number of openers or the length of runs."""
    monkeypatch.setattr(cleaning, "_FEW_OPENERS", -1)  # also the separator count of the url/e-mail gates
    monkeypatch.setattr(cleaning, "_LONG_DOMAIN_RUN", _ALWAYS)
    monkeypatch.setattr(cleaning, "_LONG_EMAIL_RUN", _ALWAYS)


def _regexes(text: str) -> dict:
    return {
        "emphasis": cleaning._EMPHASIS.subn(r"\2", text),
        "image": cleaning._IMAGE.sub(r"\1", text),
        "link": cleaning._LINK.sub(lambda m: m.group(1) if m.group(1).strip() else m.group(2), text),
        "ref_link": cleaning._REF_LINK.sub(r"\1", text),
        "autolink": cleaning._AUTOLINK.sub(r" \1 ", text),
        "spoiler": cleaning._SPOILER.sub(r"\1", text),
        "comment": cleaning._HTML_COMMENT.sub(" ", text),
        "superscript": cleaning._SUPERSCRIPT.sub(lambda m: m.group(1) or "", text),
        "email": cleaning._EMAIL.sub(" email ", text),
        "url": cleaning._URL.sub(cleaning._url_token, text),
        "lsdscc_url": cleaning._LSDSCC_URL.sub(cleaning._url_token, text),
        "code_fence": cleaning._CODE_FENCE.sub("", text),
        "ref_link_def": cleaning._REF_LINK_DEF.sub("", text),
        **{name: old.sub(repl, text) for name, (old, _, repl) in _OLD.items()},
    }


def _scanners(text: str) -> dict:
    return {
        "emphasis": cleaning._emphasis_subn(text),
        "image": cleaning._image_sub(text),
        "link": cleaning._link_sub(text),
        "ref_link": cleaning._ref_link_sub(text),
        "autolink": cleaning._autolink_sub(text),
        "spoiler": cleaning._sub_before_last(cleaning._SPOILER, r"\1", text, "!<"),
        "comment": cleaning._sub_before_last(cleaning._HTML_COMMENT, " ", text, "-->"),
        "superscript": cleaning._superscript_sub(text),
        "email": cleaning._email_sub(text),
        "url": cleaning._url_sub(cleaning._URL, text),
        "lsdscc_url": cleaning._url_sub(cleaning._LSDSCC_URL, text),
        "code_fence": cleaning._code_fence_sub(text),
        "ref_link_def": cleaning._ref_link_def_sub(text),
        **{name: new.sub(repl, text) for name, (_, new, repl) in _OLD.items()},
    }


def test_each_scanner_equals_its_regex(texts, scanners_on):
    for text in texts:
        expected, got = _regexes(text), _scanners(text)
        for rule in expected:
            assert got[rule] == expected[rule], (rule, text)


def test_hand_picked_cases_equal_the_regexes(scanners_on):
    cases = [
        "[a]( \"t b\")", "[a]( \"t\" x)", "[](<u>)", "[a](<u> \"t\" )", "[[a](b)", "[a][b] [c][]",
        "![a](b \"c\") ![d](e", "<<a@b>", "<<http://x@y@z>", "<http://>", "<@b>", "<a@>",
        "***a***", "**_a_**", "*a **b** c*", "* a*", "*a *", "~a~ ~~a~~", "___a___ __a_", "**\n**",
        "x.com.y.z", "a.co-x.com", "-a.com", "\u00e9-a.com", "r/abc.foo.com", "www.x.com", "WWW.X.CO.UK/p",
        "a.b@c.d.com.e", "x@a.b.c.d.e", ">!a!< >!b", "<!-- a --> <!-- b", "^(a) ^b ^(c", "^(^(x)",
        "a | | b", "|\t|", "(ツ)_(ツ)", "¯\\_(ツ)_/¯_(ツ)", "__\\(ツ)", "\n \n[a]: b\n\n[c]:d", "]\n[a]: b",
        "\n\n```x\n \n~~~", "| a |\n|:--|--:|\n", " \u3000\n\u3000 ",
    ]
    for text in cases + [c * 30 for c in cases]:
        assert _scanners(text) == _regexes(text), text


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_clean_and_tokenize_is_unchanged(texts, convention, monkeypatch):
    # Reference: every scanner off (the regexes, as before this change); then every one on.
    monkeypatch.setattr(cleaning, "_FEW_OPENERS", 10**9)
    monkeypatch.setattr(cleaning, "_LONG_DOMAIN_RUN", _NEVER)
    monkeypatch.setattr(cleaning, "_LONG_EMAIL_RUN", _NEVER)
    sample = texts[::3]
    expected = [clean_and_tokenize(t, convention=convention) for t in sample]
    monkeypatch.setattr(cleaning, "_FEW_OPENERS", -1)
    monkeypatch.setattr(cleaning, "_LONG_DOMAIN_RUN", _ALWAYS)
    monkeypatch.setattr(cleaning, "_LONG_EMAIL_RUN", _ALWAYS)
    for text, tokens in zip(sample, expected):
        assert clean_and_tokenize(text, convention=convention) == tokens, text


#: Units that, repeated to 40,000 characters, made the old rules quadratic: at 10,000 characters
#: they took 0.2-9.5 s (x16 at 40,000: 3 s to 2.5 minutes; tests/../notes give the figures).
PATHOLOGICAL = {
    "emphasis-star": " *a", "emphasis-underscore": " _a", "strike": "~~a ", "link-open": "[a](",
    "link-empty": "[](", "link-url": "[a](b", "image": "![a](", "brackets": "[", "spoiler": ">!",
    "spoiler-word": ">!a ", "superscript": "^(", "autolink": "<", "autolink-word": "<a", "html-comment": "<!--",
    "comment-then-word": "<!-- a ", "dotted-words": "a.", "dotted-digits": "1.", "dotted-pairs": "a.b",
    "hyphens": "a-b.", "ideographic-spaces": "\u3000", "spaces-and-ideographic": " \u3000",
    "tabs-before-pipe": "\t", "blank-lines-before-bracket": "\n\n", "lines-of-brackets": "\n[",
    "blank-lines-fence": "\n \n",
}


def _hostile(unit: str, size: int = 40_000, head: str = "x.com a@b.org --> !< ) ] | (ツ) x```\n") -> str:
    """``unit`` repeated to ``size`` characters after a ``head`` with what the rules' guards
    look for (a closer before all the openers closes none of them)."""
    return head + (unit * (size // len(unit) + 1))[: size - len(head)]


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_pathological_text_cleans_in_bounded_time(name, convention):
    text = _hostile(PATHOLOGICAL[name])
    clean_and_tokenize("warm up", convention=convention)
    start = time.perf_counter()
    clean_and_tokenize(text, convention=convention)
    assert time.perf_counter() - start < 2.0, f"{name}: {time.perf_counter() - start:.1f} s"
