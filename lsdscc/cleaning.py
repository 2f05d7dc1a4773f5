"""Text cleaning for the LSDSCC corpus: steps 1 to 4 and 6 to 7 of ALGORITHMS.md section 1.

Pure functions on strings and token lists; the Beam pipeline (pipelines/lsdscc_corpus.py)
only wraps them. Order, as in the paper:

1. :func:`strip_markup` - markdown and HTML go, ``[word](url)`` becomes ``word``, entities
   are unescaped, quote markers, emphasis, headers, code, tables and list bullets go.
2. :func:`normalize_entities` - urls, e-mail addresses and numbers become ``url``,
   ``email``, ``digits``.
3. :func:`replace_emoticons` - emoticons and emoji become their emotion word
   (table in :mod:`lsdscc.emoticons`).
4. :func:`shorten_elongated` - ``cooool`` -> ``cool``, ``ahahaha`` -> ``haha``.

:func:`clean_text` runs 1-4; :func:`tokenize` lowercases (optionally) and runs an NLTK
tokenizer. Step 5 (splitting rare run-together words, non-ASCII removal) and step 6
(vocabulary truncation) need corpus counts and live in :mod:`lsdscc.vocab`.
"""

from __future__ import annotations

import functools
import html
import re

from lsdscc.emoticons import emoticon_table

DELETED_BODIES = frozenset({"[deleted]", "[removed]", "[deleted by user]", "[removed by reddit]"})

# --- step 1: markdown and HTML ------------------------------------------------------------
_CODE_FENCE = re.compile(r"^\s*(```|~~~).*$", re.M)
_INDENTED_CODE = re.compile(r"^(?: {4}|\t)", re.M)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_LINK = re.compile(r"\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_REF_LINK_DEF = re.compile(r"^\s*\[[^\]]+\]:\s*\S+.*$", re.M)
_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_AUTOLINK = re.compile(r"<((?:https?|ftp)://[^>\s]+|[^>\s@]+@[^>\s@]+)>")
_SPOILER = re.compile(r">!(.*?)!<", re.S)
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.M)
_HEADER = re.compile(r"^[ \t]*#{1,6}[ \t]*", re.M)
_SETEXT = re.compile(r"^[ \t]*(?:=+|-+)[ \t]*$", re.M)
_HRULE = re.compile(r"^[ \t]*(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$", re.M)
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(?:\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*$", re.M)
_TABLE_PIPE = re.compile(r"[ \t]*\|[ \t]*")
_BULLET = re.compile(r"^[ \t]*(?:[-*+•]|\d{1,3}[.)])[ \t]+", re.M)
_EMPHASIS = re.compile(r"(\*{1,3}|_{1,3}|~~)(?=\S)(.+?)(?<=\S)\1")
_INLINE_CODE = re.compile(r"`+([^`]*)`+")
_SUPERSCRIPT = re.compile(r"\^\(([^)]*)\)|\^(?=\w)")
_BACKSLASH_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!>~|^])")
_PROTECT = 0xE000  # private-use code points stand in for backslash-escaped characters
_UNPROTECT = {_PROTECT + ord(c): c for c in "\\`*_{}[]()#+-.!>~|^"}
_SPACES = re.compile(r"[ \t\r\f\v\u00a0\u200b]+")
_NEWLINES = re.compile(r"\s*\n\s*")


def strip_markup(text: str) -> str:
    """Step 1: markdown and HTML to plain text; paragraphs become single spaces.

    >>> strip_markup("&gt; quoted\\n\\n**Great** [movie](http://imdb.com) &amp; ~~bad~~ cast")
    'quoted Great movie & bad cast'
    """
    if "&" in text:
        text = html.unescape(html.unescape(text))
    has = text.__contains__
    escaped = has("\\")
    if escaped:  # protect \* \_ ... from the markdown rules; restored at the end
        text = _BACKSLASH_ESCAPE.sub(lambda m: chr(_PROTECT + ord(m.group(1))), text)
    if has("<"):
        text = _HTML_COMMENT.sub(" ", text)
    if has("\n"):
        text = _CODE_FENCE.sub("", text)
        text = _INDENTED_CODE.sub("", text)
        text = _SETEXT.sub("", text)
    elif text.startswith(("    ", "\t")):
        text = _INDENTED_CODE.sub("", text)
    if has(">"):
        text = _SPOILER.sub(r"\1", text)
        text = _QUOTE.sub("", text)
    if has("]"):
        text = _IMAGE.sub(r"\1", text)
        text = _LINK.sub(lambda m: m.group(1) if m.group(1).strip() else m.group(2), text)
        text = _REF_LINK_DEF.sub("", text)
        text = _REF_LINK.sub(r"\1", text)
    if has("<"):
        text = _AUTOLINK.sub(r" \1 ", text)
        text = _HTML_TAG.sub(" ", text)
    if has("#"):
        text = _HEADER.sub("", text)
    if has("*") or has("-") or has("_"):
        text = _HRULE.sub("", text)
    if has("|"):
        text = _TABLE_RULE.sub("", text)
        text = _TABLE_PIPE.sub(" ", text)
    text = _BULLET.sub("", text)
    if has("*") or has("_") or has("~"):
        for _ in range(2):  # nested emphasis: ***a*** or **_a_**
            text = _EMPHASIS.sub(r"\2", text)
    if has("`"):
        text = _INLINE_CODE.sub(r"\1", text)
    if has("^"):
        text = _SUPERSCRIPT.sub(lambda m: m.group(1) or "", text)
    if escaped:
        text = text.translate(_UNPROTECT)
    text = _SPACES.sub(" ", text)
    return _NEWLINES.sub(" ", text).strip()


# --- step 2: urls, e-mails, numbers -------------------------------------------------------
_TLDS = r"(?:com|org|net|edu|gov|io|co|uk|de|fr|tv|me|ly|gl|be|it|us|ca|au|info|biz|gg|am)"
_URL = re.compile(
    r"(?:\b(?:https?|ftp)://|\bwww\.)[^\s<>\"]+"
    r"|\b(?:[a-z0-9-]+\.)+" + _TLDS + r"\b(?:/[^\s<>\"]*)?"
    r"|(?<![\w/])/?r/[A-Za-z0-9_]+",
    re.I,
)
_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
_NUMBER = re.compile(r"(?<![A-Za-z0-9<:])[$£€#]?\d+(?:[.,:]\d+)*(?:st|nd|rd|th|s|k|m|am|pm|p)?(?![A-Za-z0-9])", re.I)
_URL_TRAILING = re.compile(r"[.,;:!?)\]]+$")


def _url_token(match: re.Match) -> str:
    trailing = _URL_TRAILING.search(match.group(0))
    return " url " + (trailing.group(0) if trailing else "")


def normalize_entities(text: str) -> str:
    """Step 2: every url, e-mail address and number becomes ``url``, ``email``, ``digits``.

    >>> normalize_entities("see https://imdb.com/t/1. mail me@x.org, 8/10 in 2019")
    'see url . mail email , digits / digits in digits'
    """
    if "@" in text:
        text = _EMAIL.sub(" email ", text)
    if "." in text or "/" in text:
        text = _URL.sub(_url_token, text)
    text = _NUMBER.sub(" digits ", text)
    return _SPACES.sub(" ", text).strip()


# --- step 3: emoticons --------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _emoticon_regex() -> tuple[re.Pattern, dict]:
    table = emoticon_table()
    ascii_faces = sorted((f for f in table if f.isascii()), key=len, reverse=True)
    emoji = sorted((f for f in table if not f.isascii()), key=len, reverse=True)
    standalone = "|".join(re.escape(f) for f in ascii_faces)
    pattern = rf"(?:(?<=\s)|^)(?:{standalone})(?=\s|$|[.,!?;])"
    if emoji:
        pattern += "|" + "|".join(re.escape(f) for f in emoji)
    return re.compile(pattern), table


_SHRUG = re.compile(r"¯?[\\_]*\(ツ\)[\\_]*/?¯?")


def replace_emoticons(text: str) -> str:
    """Step 3: emoticons (standalone) and emoji (anywhere) become their emotion word.

    >>> replace_emoticons("great movie :-) but 9:30 is late :(")
    'great movie happy but 9:30 is late sad'
    """
    regex, table = _emoticon_regex()
    if "(ツ)" in text:
        text = _SHRUG.sub(" shrug ", text)
    return _SPACES.sub(" ", regex.sub(lambda m: f" {table[m.group(0)]} ", text)).strip()


# --- step 4: elongated words --------------------------------------------------------------
_LAUGH_HA = re.compile(r"\b[ah]?(?:ha|ah){2,}[ah]?\b", re.I)
_LAUGH_HE = re.compile(r"\b(?:he){2,}h?\b", re.I)
_LAUGH_LOL = re.compile(r"\bl(?:ol){2,}\b", re.I)
_REPEAT = re.compile(r"([A-Za-z])\1{2,}")
_REPEAT_PUNCT = re.compile(r"([!?.])\1{3,}")


def shorten_elongated(text: str) -> str:
    """Step 4: letters repeated 3+ times keep two; laughter becomes ``haha``/``hehe``/``lol``.

    >>> shorten_elongated("cooool movie ahahaha lololol!!!!!!")
    'cool movie haha lol!!!'
    """
    text = _REPEAT.sub(r"\1\1", text)
    lower = text.lower()
    if "hah" in lower or "aha" in lower:
        text = _LAUGH_HA.sub("haha", text)
    if "hehe" in lower:
        text = _LAUGH_HE.sub("hehe", text)
    if "lolol" in lower:
        text = _LAUGH_LOL.sub("lol", text)
    if "!!!!" in text or "????" in text or "...." in text:
        text = _REPEAT_PUNCT.sub(r"\1\1\1", text)
    return text


def clean_text(text: str) -> str:
    """Steps 1-4 of ALGORITHMS.md section 1 on one body/title; returns plain text."""
    return shorten_elongated(replace_emoticons(normalize_entities(strip_markup(text))))


# --- tokenization (step 7's NLTK tokenizer) ----------------------------------------------
_RE_FLAGS = re.I | re.M | re.S | re.X


def _stdlib_pattern(pattern):
    """An NLTK (``nltk.redos``-wrapped ``regex``) pattern recompiled with the stdlib ``re``."""
    flags = getattr(pattern, "flags", 0) & _RE_FLAGS
    return re.compile(pattern.pattern, flags)


def _convert(value):
    if hasattr(value, "pattern") and hasattr(value, "sub"):
        return _stdlib_pattern(value)
    if isinstance(value, tuple):
        return tuple(_convert(v) for v in value)
    if isinstance(value, list):
        return [_convert(v) for v in value]
    return value


def stdlib_regex_tokenizer(tokenizer):
    """The same NLTK tokenizer with its fixed patterns run by the stdlib ``re`` engine.

    NLTK 3.10 routes every regular expression through ``nltk.redos`` (the ``regex`` engine
    under a per-call timeout, a guard against caller-supplied patterns), which makes the
    Treebank tokenizer about 8x slower. Its own patterns are fixed and linear, so we run
    them with ``re``; ``tests/test_lsdscc_cleaning.py`` checks token-for-token parity with
    the unmodified NLTK tokenizer.
    """
    for name in ("STARTING_QUOTES", "PUNCTUATION", "PARENS_BRACKETS", "CONVERT_PARENTHESES",
                 "DOUBLE_DASHES", "ENDING_QUOTES", "CONTRACTIONS2", "CONTRACTIONS3"):
        if hasattr(tokenizer, name):
            setattr(tokenizer, name, _convert(getattr(tokenizer, name)))
    return tokenizer


@functools.lru_cache(maxsize=None)
def _tokenizer(name: str, fast: bool = True):
    if name == "treebank":
        from nltk.tokenize import TreebankWordTokenizer

        tok = TreebankWordTokenizer()
    elif name == "nltk":
        from nltk.tokenize import NLTKWordTokenizer

        tok = NLTKWordTokenizer()
    else:
        raise ValueError(f"unknown tokenizer {name!r} (treebank or nltk)")
    return (stdlib_regex_tokenizer(tok) if fast else tok).tokenize


def tokenize(text: str, tokenizer: str = "treebank", lowercase: bool = True) -> list[str]:
    """Lowercase (optionally) and tokenize with an NLTK tokenizer that needs no data."""
    if lowercase:
        text = text.lower()
    return _tokenizer(tokenizer)(text)


def clean_and_tokenize(text: str, tokenizer: str = "treebank", lowercase: bool = True) -> list[str]:
    """Steps 1-4, then tokenization: the per-text work done before the vocabulary is counted."""
    return tokenize(clean_text(text), tokenizer, lowercase)


def is_deleted(text) -> bool:
    """True for the placeholder bodies of deleted or removed posts."""
    return isinstance(text, str) and text.strip() in DELETED_BODIES
