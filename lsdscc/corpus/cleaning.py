"""Text cleaning for the LSDSCC corpus: steps 1 to 4 and 6 to 7 of ALGORITHMS.md section 1.

Pure functions on strings and token lists; the Beam pipeline (pipelines/lsdscc_corpus.py)
only wraps them. Order, as in the paper:

1. :func:`strip_markup` - markdown and HTML go, ``[word](url)`` becomes ``word``, entities
   are unescaped, quote markers, emphasis, headers, code, tables and list bullets go.
2. :func:`normalize_entities` - urls, e-mail addresses and numbers become ``url``,
   ``email``, ``digits``.
3. :func:`replace_emoticons` - emoticons and emoji become their emotion word
   (table in :mod:`lsdscc.corpus.emoticons`).
4. :func:`shorten_elongated` - ``cooool`` -> ``cool``, ``ahahaha`` -> ``haha``.

:func:`clean_text` runs 1-4; :func:`tokenize` lowercases (optionally) and runs an NLTK
tokenizer. Step 5 (splitting rare run-together words, non-ASCII removal) and step 6
(vocabulary truncation) need corpus counts and live in :mod:`lsdscc.corpus.vocab`.

Text conventions (:data:`CONVENTIONS`; README "Text conventions" has the measured counts):

- ``lsdscc`` (:data:`DEFAULT_CONVENTION`, the text of the released LSDSCC test set):
  lowercase; every digit run becomes ``digits``, even inside a word (``90s`` ->
  ``digitss``); apostrophes, periods, slashes and a few markdown leftovers become spaces
  (``didn't`` -> ``didn t``, ``r/movies`` -> ``r movies``); ``!``/``?`` runs keep two;
  Treebank quotes, punctuation and ``gon na``-style splits. Subreddit names are not urls.
- ``treebank`` (the behaviour before conventions were named): numbers are replaced only
  where they stand alone, ``r/name`` is a url, clitics are split (``do n't``), and NLTK's
  tokenizer keeps ``.``, ``/`` and ``'``; a period ending a word is split off everywhere,
  not only at the end of the text.

The step functions keep their historical default (``treebank``);
:func:`clean_and_tokenize`, the corpus's per-text entry point, defaults to ``lsdscc`` and
runs it through a fused fast path (:func:`_lsdscc_fast`, checked token for token against
the step functions in ``tests/test_lsdscc_conventions.py``).
"""

from __future__ import annotations

import functools
import html
import re

from lsdscc.corpus.config import CONVENTIONS, DEFAULT_CONVENTION
from lsdscc.corpus.emoticons import substitute_emoticons

DELETED_BODIES = frozenset({"[deleted]", "[removed]", "[deleted by user]", "[removed by reddit]"})


def check_convention(name: str) -> str:
    """``name`` if it is a text convention (:data:`CONVENTIONS`), else ValueError naming the choices."""
    if name not in CONVENTIONS:
        raise ValueError(f"unknown text convention {name!r}; choose one of: {', '.join(CONVENTIONS)}")
    return name


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
_SPACES = re.compile(r"[ \t\r\f\v\u00a0\u200b]{2,}|[\t\r\f\v\u00a0\u200b]")  # a lone " " stays as it is
# _SPACES, then every newline with the whitespace around it, in one pass (strip_markup)
_WHITESPACE = re.compile(r"[\s\u200b]*\n[\s\u200b]*|[ \t\r\f\v\u00a0\u200b]{2,}|[\t\r\f\v\u00a0\u200b]")


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
    multiline = has("\n")
    if multiline and (has("```") or has("~~~")):
        text = _CODE_FENCE.sub("", text)
    if text.startswith(("    ", "\t")) or "\n    " in text or "\n\t" in text:
        text = _INDENTED_CODE.sub("", text)
    if multiline and (has("-") or has("=")):
        text = _SETEXT.sub("", text)
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
    if (has("*") or has("-") or has("_")) and (multiline or _HRULE.match(text)):
        text = _HRULE.sub("", text)
    if has("|"):
        text = _TABLE_RULE.sub("", text)
        text = _TABLE_PIPE.sub(" ", text)
    if multiline or _BULLET.match(text):
        text = _BULLET.sub("", text)
    if has("*") or has("_") or has("~~"):
        text, found = _EMPHASIS.subn(r"\2", text)
        if found:  # nested emphasis: ***a*** or **_a_**
            text = _EMPHASIS.sub(r"\2", text)
    if has("`"):
        text = _INLINE_CODE.sub(r"\1", text)
    if has("^"):
        text = _SUPERSCRIPT.sub(lambda m: m.group(1) or "", text)
    if escaped:
        text = text.translate(_UNPROTECT)
    if "  " in text or not text.isprintable():  # else every space is already a single " "
        text = _WHITESPACE.sub(" ", text)
    return text.strip()


# --- step 2: urls, e-mails, numbers -------------------------------------------------------
_TLDS = r"(?:com|org|net|edu|gov|io|co|uk|de|fr|tv|me|ly|gl|be|it|us|ca|au|info|biz|gg|am)"
_WEB_URL = r"(?:\b(?:https?|ftp)://|\bwww\.)[^\s<>\"]+|\b(?:[a-z0-9-]+\.)+" + _TLDS + r"\b(?:/[^\s<>\"]*)?"
_URL = re.compile(_WEB_URL + r"|(?<![\w/])/?r/[A-Za-z0-9_]+", re.I)  # treebank: r/name is a url
_LSDSCC_URL = re.compile(_WEB_URL, re.I)  # lsdscc: r/movies stays text (-> ``r movies``)
_DOT_TLD = re.compile(r"\." + _TLDS + r"\b", re.I)


def _has_url(text: str) -> bool:
    """False only when ``_LSDSCC_URL`` cannot match: each match has ``://``, ``www.`` or ``.tld``."""
    return "://" in text or _DOT_TLD.search(text) is not None or "www." in text.lower()
_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
_NUMBER = re.compile(r"(?<![A-Za-z0-9<:])[$£€#]?\d+(?:[.,:]\d+)*(?:st|nd|rd|th|s|k|m|am|pm|p)?(?![A-Za-z0-9])", re.I)
_URL_TRAILING = re.compile(r"[.,;:!?)\]]+$")


def _url_token(match: re.Match) -> str:
    trailing = _URL_TRAILING.search(match.group(0))
    return " url " + (trailing.group(0) if trailing else "")


def normalize_entities(text: str, convention: str = "treebank") -> str:
    """Step 2: every url, e-mail address and number becomes ``url``, ``email``, ``digits``.

    ``lsdscc`` leaves numbers to :func:`tokenize` (every digit run, even inside a word) and
    ``r/name`` as text, as in the released LSDSCC text.

    >>> normalize_entities("see https://imdb.com/t/1. mail me@x.org, 8/10 in 2019")
    'see url . mail email , digits / digits in digits'
    >>> normalize_entities("on r/movies: https://imdb.com/t/1. 8/10", "lsdscc")
    'on r/movies: url . 8/10'
    """
    lsdscc = check_convention(convention) == "lsdscc"
    if "@" in text:
        text = _EMAIL.sub(" email ", text)
    if lsdscc:
        if _has_url(text):
            text = _LSDSCC_URL.sub(_url_token, text)
    else:
        if "." in text or "/" in text:
            text = _URL.sub(_url_token, text)
        text = _NUMBER.sub(" digits ", text)
    return _SPACES.sub(" ", text).strip()


# --- step 3: emoticons --------------------------------------------------------------------
def replace_emoticons(text: str) -> str:
    """Step 3: emoticons (standalone) and emoji (anywhere) become their emotion word.

    >>> replace_emoticons("great movie :-) but 9:30 is late :(")
    'great movie happy but 9:30 is late sad'
    """
    return _SPACES.sub(" ", substitute_emoticons(text)).strip()


# --- step 4: elongated words --------------------------------------------------------------
_LAUGH_HA = re.compile(r"\b[ah]?(?:ha|ah){2,}[ah]?\b", re.I)
_LAUGH_HE = re.compile(r"\b(?:he){2,}h?\b", re.I)
_LAUGH_LOL = re.compile(r"\bl(?:ol){2,}\b", re.I)
_REPEAT = re.compile(r"([A-Za-z])\1{2,}")
_TRIPLE = re.compile(r"([A-Za-z])\1\1")  # a search for it is 3x faster than the _REPEAT pass
_REPEAT_PUNCT = re.compile(r"([!?.])\1{3,}")


def shorten_elongated(text: str) -> str:
    """Step 4: letters repeated 3+ times keep two; laughter becomes ``haha``/``hehe``/``lol``.

    >>> shorten_elongated("cooool movie ahahaha lololol!!!!!!")
    'cool movie haha lol!!!'
    """
    if _TRIPLE.search(text):
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


def clean_text(text: str, convention: str = "treebank") -> str:
    """Steps 1-4 of ALGORITHMS.md section 1 on one body/title; returns plain text."""
    lsdscc = check_convention(convention) == "lsdscc"
    if lsdscc:  # quote tokens in the text survive markdown stripping (see _protect_quotes)
        text = _protect_quotes(text)
    text = shorten_elongated(replace_emoticons(normalize_entities(strip_markup(text), convention)))
    if lsdscc and (_OPEN in text or _CLOSE in text):
        text = text.replace(_OPEN, "``").replace(_CLOSE, "''")
    return text


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


# --- text conventions at the token level ----------------------------------------------
_DIGIT_RUN = re.compile(r"\d+")
_PUNCT_RUN = re.compile(r"([!?])\1{2,}")
# treebank: a period (or a run: "wait..") ending a word is split off everywhere, as NLTK's
# Treebank tokenizer does only at the end of the text: "weekend. so" -> "weekend . so".
_GLUED_PERIOD = re.compile(r"(?<=[^\s.])(\.+)(?=[\]\)}>\"']*(?:\s|$))")
_OPEN, _CLOSE = "\ue0fe", "\ue0ff"  # stand-ins for ``, '' already in the text (kept as quote tokens)
_QUOTE_TOKENS = {_OPEN: "``", _CLOSE: "''"}
#: lsdscc: characters that become spaces (the released text has none of them outside the
#: quote tokens), curly double quotes that count as ``"``, and long dashes as ``--``.
_TO_SPACE = re.compile("['`\u2018\u2019\u00b4./\\\\\u2026*~|<>{}]")
_WIDE = (("\u201c", '"'), ("\u201d", '"'), ("\u201e", '"'), ("\u2013", "--"), ("\u2014", "--"))


def lsdscc_characters(text: str) -> str:
    """The character rules of the ``lsdscc`` convention, applied before tokenizing.

    Quote tokens already in the text (`````` ``, ``''``) are kept; every digit run becomes
    ``digits`` (even inside a word); ``!``/``?`` runs keep two; apostrophes, backticks,
    periods, slashes, backslashes and ``* ~ | < > { }`` become spaces. No lowercasing.

    >>> lsdscc_characters("I didn't pay $12.50 in the 90s!!!! and/or r/movies")
    'I didn t pay $digits digits in the digitss!! and or r movies'
    """
    text = _DIGIT_RUN.sub("digits", _protect_quotes(text))
    if "!!!" in text or "???" in text:
        text = _PUNCT_RUN.sub(r"\1\1", text)
    if not text.isascii():
        for wide, ascii_ in _WIDE:
            if wide in text:
                text = text.replace(wide, ascii_)
    return _TO_SPACE.sub(" ", text)


def _protect_quotes(text: str) -> str:
    """`````` `` and ``''`` already in the text (tokenized text) stay quote tokens (lsdscc)."""
    if "''" in text:
        text = text.replace("''", f" {_CLOSE} ")
    if "``" in text:  # before markdown stripping, which would read `` as an empty code span
        text = text.replace("``", f" {_OPEN} ")
    return text


def tokenize(text: str, tokenizer: str = "treebank", lowercase: bool = True, convention: str = "treebank") -> list[str]:
    """Lowercase (optionally), apply ``convention``'s token rules and run an NLTK tokenizer."""
    if lowercase:
        text = text.lower()
    if check_convention(convention) == "treebank":
        if "." in text:
            text = _GLUED_PERIOD.sub(r" \1", text)
        return _tokenizer(tokenizer)(text)
    text = lsdscc_characters(text)
    tokens = _tokenizer(tokenizer)(text)
    if _OPEN in text or _CLOSE in text:
        tokens = [_QUOTE_TOKENS.get(t, t) for t in tokens]
    return tokens


def clean_and_tokenize(text: str, tokenizer: str = "treebank", lowercase: bool = True,
                       convention: str = DEFAULT_CONVENTION) -> list[str]:
    """Steps 1-4, then tokenization: the per-text work done before the vocabulary is counted.

    ``convention`` names the text convention (:data:`CONVENTIONS`; default ``lsdscc``, the
    released LSDSCC text). ``lsdscc`` with the ``treebank`` tokenizer takes the fused fast
    path; every other combination runs the step functions one after the other.
    """
    if check_convention(convention) == "lsdscc" and tokenizer == "treebank":
        return _lsdscc_fast(text, lowercase)
    return tokenize(clean_text(text, convention), tokenizer, lowercase, convention)


# --- the fused fast path of clean_and_tokenize(convention="lsdscc", tokenizer="treebank") ---
_OPEN_QUOTE = re.compile(r'(?<=[ (\[{<])"')
_COLON_COMMA = re.compile(r"([:,])([^\d]|$)")
_PAD = re.compile(r"([;@#$%&?!()\[\]{}<>])")
_PAD_WITH_COLON_COMMA = re.compile(r"([,:;@#$%&?!()\[\]{}<>])")
_CONTRACTION = re.compile(
    r"(?i)\b(?:(can)(not)|(gim)(me)|(gon)(na)|(got)(ta)|(lem)(me))\b|\b(wan)(na)(?=\s|$)"
)  # NLTK's CONTRACTIONS2 that can fire without apostrophes, in one pass
_CONTRACTION_SPLIT = r" \1\3\5\7\9\11 \2\4\6\8\10\12 "


def _lsdscc_fast(text: str, lowercase: bool) -> list[str]:
    """``tokenize(clean_text(text, "lsdscc"), "treebank", lowercase, "lsdscc")``, fused.

    The same steps with guards that skip a pass when its trigger characters are absent, and
    NLTK's Treebank rules reduced to those that can still fire on ``lsdscc`` text (no
    periods, apostrophes or digits are left): the opening-quote rule, one padding pass for
    the single-character tokens (NLTK's ``,``/``:`` rule differs from plain padding only
    when two of them touch: ``a,,b`` -> ``a , ,b``), ``"`` -> ``''``, ``--``, and one pass
    for ``gonna``-style words.
    """
    text = strip_markup(_protect_quotes(text))
    if "@" in text:
        text = _EMAIL.sub(" email ", text)
    if _has_url(text):
        text = _LSDSCC_URL.sub(_url_token, text)
    text = shorten_elongated(substitute_emoticons(text))
    if lowercase:
        text = text.lower()
    text = lsdscc_characters(text)
    quotes = '"' in text
    if quotes:
        if text[0] == '"':
            text = f" {_OPEN} " + text[1:]
        text = _OPEN_QUOTE.sub(_OPEN, text)
    if ",," in text or ",:" in text or ":," in text or "::" in text:
        text = " ".join(_PAD.split(_COLON_COMMA.sub(r" \1 \2", text)))
    else:
        text = " ".join(_PAD_WITH_COLON_COMMA.split(text))  # split keeps the (captured) separators
    if quotes:
        text = text.replace('"', " '' ")
    if _OPEN in text or _CLOSE in text:
        text = text.replace(_OPEN, " `` ").replace(_CLOSE, " '' ")
    if "--" in text:
        text = text.replace("--", " -- ")
    lower = text if lowercase else text.lower()
    if "nnot" in lower or "mme" in lower or "nna" in lower or "tta" in lower:
        text = _CONTRACTION.sub(_CONTRACTION_SPLIT, text)
    return text.split()
