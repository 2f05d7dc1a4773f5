"""Text cleaning for the LSDSCC corpus: steps 1 to 4 and 6 to 7 of docs/algorithms.md#1-lsdscc-corpus.

Pure functions on strings and token lists; the Beam pipeline (pipelines/lsdscc/corpus.py)
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

Text conventions (:data:`CONVENTIONS`; docs/corpus.md#text-conventions has the measured counts):

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
runs it through a fused fast path (:func:`lsdscc_head` then :func:`lsdscc_tail`, the latter
in C where :func:`native_extension` is built; checked token for token against the step
functions in ``tests/test_lsdscc_conventions.py``).
"""

from __future__ import annotations

import bisect
import functools
import html
import os
import re
from collections import Counter
from collections.abc import Iterable

from lsdscc.corpus.config import CONVENTIONS, DEFAULT_CONVENTION
from lsdscc.corpus.emoticons import SHRUG, emoticon_table, substitute_emoticons, substitute_shrug
from lsdscc.corpus.rule_tables import first_characters, re_case_folds

# --- what is never published: removal markers and usernames (docs/data-safety.md) -----------
#: A text that is only a removal marker: the post was deleted or removed, whatever its era's
#: wording: ``[deleted]``, ``[removed]``, ``[deleted by user]``, ``[removed by reddit]``,
#: ``[ Removed by Reddit ]``, ``[ Removed by Reddit on account of violating the [content
#: policy](/help/contentpolicy). ]``, ``[ Removed by reddit in response to a copyright notice. ]``
#: (any case, any spaces, a link inside): one bracketed phrase starting with deleted or removed.
REMOVAL_MARKER = re.compile(r"\[\s*(?:deleted|removed)\b.{0,300}\]", re.I | re.S)


def is_removal_marker(text: str) -> bool:
    """True when ``text`` (a body, self-text or title) is only a removal marker (:data:`REMOVAL_MARKER`)."""
    text = text.strip()
    return text[:1] == "[" and text[-1:] == "]" and REMOVAL_MARKER.fullmatch(text) is not None


#: A username, in every form a text can give one: ``u/Name``, ``/u/Name``, ``/user/Name``, any
#: case, a JSON-escaped slash (``u\/Name``), markdown emphasis around it (``_u/Name_``,
#: ``**u/Name**``: taken with it) and markdown escapes in it (``u/some\_name``). It starts
#: where no letter or digit stands before it
#: (``_`` may: markdown). The corpus removes it before and after markup and entities
#: (:func:`remove_usernames`); dead letters replace it with ``<user>`` (lsdscc.corpus.records).
USERNAME = re.compile(r"(?<![^\W_])[*_~]{0,3}/?[uU](?:[sS][eE][rR])?\\?/(?:[A-Za-z0-9_-]|\\_)+[*_~]{0,3}")
#: Where a username may stand, or appear once markup and entities are gone: ``u`` or ``user``
#: (any case) starting a word (no letter or digit before it), followed by ``_`` or a character
#: that is neither a word character, a space nor one of ``. , ? ; ' "`` (which no markup rule
#: removes). A text without it holds no username after any cleaning step, so the C fast path
#: (which has no username rule) may clean it; every other text takes the Python steps
#: (:func:`_lsdscc_fast`). Two patterns with a literal first character (re scans for it) and the
#: word start checked per match: a tenth of the time of one pattern with a lookbehind.
_USER_NEXT = r"(?:[sS][eE][rR])?(?:[^\w\s.,?;'\"]|_)"
_USER_TRIGGERS = (re.compile("u" + _USER_NEXT), re.compile("U" + _USER_NEXT))
_INSIDE_WORD = re.compile(r"[^\W_]")


def may_name_user(text: str) -> bool:
    """False when no cleaning step can leave a username in ``text`` (:data:`_USER_TRIGGERS`)."""
    for trigger in _USER_TRIGGERS:
        for found in trigger.finditer(text):
            start = found.start()
            if start == 0 or not _INSIDE_WORD.match(text, start - 1):
                return True
    return False


def remove_usernames(text: str) -> str:
    """``text`` with every :data:`USERNAME` replaced by a space."""
    return USERNAME.sub(" ", text) if may_name_user(text) else text


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
# Possessive spaces: giving spaces back to the next [ \t]* never changes a match, and the
# tries took time quadratic in a run of spaces. The pipe's leading spaces are taken only from
# the start of a run (a later start of the run is tried only after the run start failed).
_TABLE_RULE = re.compile(r"^[ \t]*+\|?[ \t]*+:?-{2,}:?[ \t]*+(?:\|[ \t]*+:?-{2,}:?[ \t]*+)*\|?[ \t]*+$", re.M)
_TABLE_PIPE = re.compile(r"(?:(?<![ \t])[ \t]++)?\|[ \t]*+")
_BULLET = re.compile(r"^[ \t]*(?:[-*+•]|\d{1,3}[.)])[ \t]+", re.M)
# (\*\*{0,2} is \*{1,3}, tried in the same order; starting with literals, re scans for them)
_EMPHASIS = re.compile(r"(\*\*{0,2}|__{0,2}|~~)(?=\S)(.+?)(?<=\S)\1")
_INLINE_CODE = re.compile(r"`+([^`]*)`+")
_SUPERSCRIPT = re.compile(r"\^\(([^)]*)\)|\^(?=\w)")
_BACKSLASH_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!>~|^])")
_PROTECT = 0xE000  # private-use code points stand in for backslash-escaped characters
_UNPROTECT = {_PROTECT + ord(c): c for c in "\\`*_{}[]()#+-.!>~|^"}
_SPACES = re.compile(r"[ \t\r\f\v\u00a0\u200b]{2,}|[\t\r\f\v\u00a0\u200b]")  # a lone " " stays as it is
# _SPACES, then every newline with the whitespace around it, in one pass (strip_markup). The
# newline rule starts only where a whitespace run starts: re reaches a later start of a run
# only after the newline rule failed at an earlier one (no newline in the rest of the run),
# so the lookbehind changes nothing but the time on long runs without a newline (" \u3000").
# (It follows the first character, so that re still scans for first characters.)
_WHITESPACE = re.compile(r"[\s\u200b](?<![\s\u200b].)(?:(?<=\n)|[\s\u200b]*\n)[\s\u200b]*"
                         r"|[ \t\r\f\v\u00a0\u200b]{2,}|[\t\r\f\v\u00a0\u200b]")


class _LineRule:
    """A line rule (a ``re.M`` pattern that starts with ``^``, ``$`` only at its end) as two
    patterns re can scan for: one matched at the text's start, one starting with a literal
    newline for every other line (re tries a ``^`` rule at every position of the text).
    ``sub(text)`` equals ``rule.sub("", text)`` when the rule cannot match a newline (its
    matches are the lines' own, each removed and its newline kept): the constructor refuses
    the obvious ways to match one; tests/test_lsdscc_cleaning_speed.py checks the rules used."""

    def __init__(self, rule: re.Pattern):
        body = rule.pattern
        newline = any(part in body for part in ("\n", "\\n", "\\s", "\\S", "\\D", "\\W", "[^", "(?s"))
        if not (rule.flags & re.M and not rule.flags & re.S and body.startswith("^") and not newline
                and "$" not in body[:-1] and "^" not in body[1:]):
            raise ValueError(f"not a single-line rule: {body!r}")
        body = body[1:-1] + r"(?=\n|\Z)" if body.endswith("$") else body[1:]
        flags = rule.flags & ~re.M
        self.first, self.rest = re.compile(body, flags), re.compile("\n" + body, flags)

    def match(self, text: str):
        return self.first.match(text)

    def sub(self, text: str) -> str:
        first = self.first.match(text)
        if first:
            text = text[first.end():]
        return self.rest.sub("\n", text) if "\n" in text else text


_SETEXT_LINES, _HRULE_LINES, _BULLET_LINES = _LineRule(_SETEXT), _LineRule(_HRULE), _LineRule(_BULLET)


# --- the markdown rules in linear time on hostile text --------------------------------------
# Several rules scan from every opener to its closer, and re retries from each opener when
# the closer is missing: 40,000 characters of " *a", "[a](", ">!", "^(" or "<" took 10-60 s.
# With few openers (the normal case) the regexes run as they are; with many, the functions
# below return exactly what the regex's sub returns, in linear time: a failed attempt is not
# repeated where its outcome is already known (tests/test_lsdscc_cleaning_linear.py checks
# them against the regexes on random and Reddit-shaped text).
_FEW_OPENERS = 16


def _sub_before_last(pattern: re.Pattern, repl, text: str, closer: str) -> str:
    """``pattern.sub(repl, text)`` for a lazy ``opener.*?closer`` pattern, in linear time.

    Every match ends with ``closer``, and an opener followed by a ``closer`` always matches, so
    the matches are those of the text up to the last ``closer``; the rest (where re would
    scan to the end from every opener) is kept as it is.
    """
    end = text.rfind(closer)
    if end < 0:
        return text
    end += len(closer)
    return pattern.sub(repl, text[:end]) + text[end:]


class _Runs:
    """End of the maximal run of ``char_class`` characters from a position (amortized O(1)).

    Positions are asked in increasing order; a position inside the run found last reuses its end.
    """

    def __init__(self, text: str, char_class: str):
        self.text, self.run, self.start, self.end = text, re.compile(char_class + "*+"), -1, -1

    def end_from(self, i: int) -> int:
        if not self.start <= i <= self.end:
            self.start, self.end = i, self.run.match(self.text, i).end()
        return self.end


_EMPHASIS_DELIMITER = re.compile(r"[*_~]")


def _emphasised(match: re.Match) -> str:
    """The emphasised text (``\\2``; a function is faster than re's template expansion)."""
    return match.group(2)


def _emphasis_closers(text: str, delimiter: str) -> list[int]:
    """Positions where ``(?<=\\S)`` + ``delimiter`` matches (where ``delimiter`` can close)."""
    return [m.start() for m in re.finditer(r"(?<=\S)(?=" + re.escape(delimiter) + ")", text)]


def _emphasis_subn(text: str) -> tuple[str, int]:
    """``_EMPHASIS.subn(r"\\2", text)``, in linear time when the text has many delimiters.

    From each delimiter run (``***`` to ``*``, ``___`` to ``_``, ``~~``; longest first, as
    re's backtracking tries them) the match ends at the first closer on the same line: a
    binary search in that delimiter's closer positions instead of a scan to the line's end.
    """
    if text.count("*") + text.count("_") + text.count("~") <= _FEW_OPENERS:
        return _EMPHASIS.subn(_emphasised, text)
    closers: dict[str, list[int]] = {}
    out, found, pos, size, newline = [], 0, 0, len(text), -1
    for start in _EMPHASIS_DELIMITER.finditer(text):
        p = start.start()
        if p < pos:
            continue
        char = text[p]
        run = 1
        while run < 3 and p + run < size and text[p + run] == char:
            run += 1
        lengths = (2,) if char == "~" and run >= 2 else () if char == "~" else range(run, 0, -1)
        for length in lengths:
            a = p + length  # the emphasised text starts here: (?=\S), and .+? keeps to the line
            if a >= size or text[a].isspace():
                continue
            if newline < a:
                newline = text.find("\n", a) % (size + 1)  # -1 (no newline) -> the end
            delimiter = char * length
            if delimiter not in closers:
                closers[delimiter] = _emphasis_closers(text, delimiter)
            ends = closers[delimiter]
            i = bisect.bisect_left(ends, a + 1)
            if i < len(ends) and ends[i] < newline:
                out += (text[pos:p], text[a:ends[i]])
                pos, found = ends[i] + length, found + 1
                break
    out.append(text[pos:])
    return "".join(out), found


def _bracket_sub(text: str, opener: str, tail, replace, min_label: int = 0) -> str:
    """The sub of ``opener [^\\]]* ] tail`` patterns (links, images), in linear time.

    re scans from every opener to the first ``]`` after it; openers before the same ``]``
    share the outcome of ``tail(q)`` (the rest of the pattern from that ``]`` at ``q``), so
    it is computed once per ``]``. ``replace(label, tail_result)`` gives the replacement;
    ``tail(q)`` gives ``(end, result)`` or None; a label shorter than ``min_label`` fails.
    """
    out, pos, close, outcome = [], 0, -1, {}
    i = text.find(opener)
    while i >= 0:
        label = i + len(opener)
        if close < label:
            close = text.find("]", label)
            if close < 0:
                break
        if close not in outcome:
            outcome[close] = tail(close)
        if outcome[close] is not None and close - label >= min_label:
            end, result = outcome[close]
            out += (text[pos:i], replace(text[label:close], result))
            pos = end
            i = text.find(opener, pos)
        else:
            i = text.find(opener, i + 1)
    out.append(text[pos:])
    return "".join(out)


_IMAGE_END = re.compile(r"(?:\s+\"[^\"]*\")?\)")
_LINK_END = re.compile(r">?(?:\s+\"[^\"]*\")?\s*\)")
_LINK_TITLE_ONLY = re.compile(r"\"[^\"]*\"\s*\)")
_SPACE_RUN = re.compile(r"\s*+")


def _image_sub(text: str) -> str:
    """``_IMAGE.sub(r"\\1", text)``, in linear time when the text has many ``[``."""
    if text.count("[") <= _FEW_OPENERS:
        return _IMAGE.sub(r"\1", text)
    urls, ends = _Runs(text, r"[^)\s]"), {}

    def tail(q):  # ](url "title"): the url keeps all it can (giving back never helps)
        if not text.startswith("](", q):
            return None
        e = urls.end_from(q + 2)
        if e not in ends:
            ends[e] = _IMAGE_END.match(text, e)
        return None if ends[e] is None else (ends[e].end(), None)

    return _bracket_sub(text, "![", tail, lambda label, _: label)


def _link_url(m: re.Match) -> str:
    return m.group(1) if m.group(1).strip() else m.group(2)


def _link_sub(text: str) -> str:
    """``_LINK.sub(_link_url, text)``, in linear time when the text has many ``[``.

    After ``](`` and its spaces, the url keeps all it can and the rest of the pattern is
    tried once per url end; if it fails, re gives the spaces back to a ``"title"``.
    """
    if text.count("[") <= _FEW_OPENERS:
        return _LINK.sub(_link_url, text)
    urls, ends = _Runs(text, r"[^)\s>]"), {}

    def tail(q):
        if not text.startswith("](", q):
            return None
        j = _SPACE_RUN.match(text, q + 2).end()
        e = urls.end_from(j)
        if e not in ends:
            ends[e] = _LINK_END.match(text, e)
        if ends[e] is not None:
            return ends[e].end(), text[j + text.startswith("<", j):e]
        if j > q + 2 and text.startswith('"', j):
            title = _LINK_TITLE_ONLY.match(text, j)
            if title:
                return title.end(), ""
        return None

    return _bracket_sub(text, "[", tail, lambda label, url: label if label.strip() else url)


_REF_LINK_END = re.compile(r"\]\[[^\]]*\]")


def _ref_link_sub(text: str) -> str:
    """``_REF_LINK.sub(r"\\1", text)``, in linear time when the text has many ``[``."""
    if text.count("[") <= _FEW_OPENERS:
        return _REF_LINK.sub(r"\1", text)

    def tail(q):
        m = _REF_LINK_END.match(text, q)
        return None if m is None else (m.end(), None)

    return _bracket_sub(text, "[", tail, lambda label, _: label, min_label=1)


# Rules anchored at a line start that begin with \s*, which crosses newlines: re tries each
# line start of a long run of blank lines and scans to the run's end each time. All line
# starts of one run reach the same place, so the rest of the rule is tried once per run.
_FENCE_REST = re.compile(r"(```|~~~).*$", re.M)
_REF_DEF_REST = re.compile(r"\]:\s*\S+.*$", re.M)


def _line_rule_sub(text: str, rest) -> str:
    """Deletes each match of ``^\\s*`` + ``rest`` (re.M): ``rest(r)`` is the match end or None."""
    spaces, outcome, out, pos, p = _Runs(text, r"\s"), {}, [], 0, 0
    while p <= len(text):
        r = spaces.end_from(p)
        if r not in outcome:
            outcome[r] = rest(r)
        if outcome[r] is not None:
            out.append(text[pos:p])
            pos = p = outcome[r]
        newline = text.find("\n", p)
        if newline < 0:
            break
        p = newline + 1
    out.append(text[pos:])
    return "".join(out)


def _code_fence_sub(text: str) -> str:
    """``_CODE_FENCE.sub("", text)``, in linear time when the text has many lines."""
    if text.count("\n") <= _FEW_OPENERS:
        return _CODE_FENCE.sub("", text)

    def rest(r):
        m = _FENCE_REST.match(text, r)
        return None if m is None else m.end()

    return _line_rule_sub(text, rest)


def _ref_link_def_sub(text: str) -> str:
    """``_REF_LINK_DEF.sub("", text)``, in linear time when the text has many lines.

    ``[label]: url``: the label runs to the first ``]``, whose rest is tried once.
    """
    if text.count("\n") <= _FEW_OPENERS:
        return _REF_LINK_DEF.sub("", text)
    close, tails = -1, {}

    def rest(r):
        nonlocal close
        if not text.startswith("[", r):
            return None
        if close <= r:
            close = text.find("]", r + 1) % (len(text) + 1)  # no "]": the end
        if close == len(text) or close < r + 2:  # no "]", or an empty label
            return None
        if close not in tails:
            m = _REF_DEF_REST.match(text, close)
            tails[close] = None if m is None else m.end()
        return tails[close]

    return _line_rule_sub(text, rest)


def _superscript_sub(text: str) -> str:
    """``_SUPERSCRIPT.sub(...)``, in linear time: ``^(...)`` needs a ``)``, so after the last
    one only the bare-caret rule (``^word`` -> ``word``) can match."""
    end = text.rfind(")") + 1
    head = _SUPERSCRIPT.sub(_superscript_text, text[:end]) if end else ""
    return head + _CARET.sub("", text[end:])


def _superscript_text(m: re.Match) -> str:
    return m.group(1) or ""


_CARET = re.compile(r"\^(?=\w)")
_AUTOLINK_SCHEME = re.compile(r"(?:https?|ftp)://")
_AUTOLINK_SCHEME_AFTER_OPENER = re.compile(r"<(?:https?|ftp)://")


def _autolink_sub(text: str) -> str:
    """``_AUTOLINK.sub(r" \\1 ", text)``, in linear time when the text has many ``<``.

    Both alternatives are runs of one character class closed by ``>`` (and ``@``): each
    run's end is found once, and where the address rule fails from one ``<`` it fails from
    every ``<`` up to the end of that run, where only ``<http://...>`` is looked for.
    """
    if text.count("<") <= _FEW_OPENERS:
        return _AUTOLINK.sub(r" \1 ", text)
    urls, names, domains = _Runs(text, r"[^>\s]"), _Runs(text, r"[^>\s@]"), _Runs(text, r"[^>\s@]")
    out, pos = [], 0
    i = text.find("<")
    while i >= 0:
        end = -1
        scheme = _AUTOLINK_SCHEME.match(text, i + 1)
        if scheme:
            e = urls.end_from(scheme.end())
            if e > scheme.end() and text.startswith(">", e):
                end = e
        at = names.end_from(i + 1)
        if end < 0 and at > i + 1 and text.startswith("@", at):
            e = domains.end_from(at + 1)
            if e > at + 1 and text.startswith(">", e):
                end = e
        if end >= 0:
            out += (text[pos:i], " ", text[i + 1:end], " ")
            pos = end + 1
            i = text.find("<", pos)
            continue
        nxt = _AUTOLINK_SCHEME_AFTER_OPENER.search(text, i + 1, at)
        i = nxt.start() if nxt else text.find("<", max(at, i + 1))
    out.append(text[pos:])
    return "".join(out)

# strip_markup's rules that _native_plain also runs (alone, before the C steps), one function each
def _quotes_and_spoilers(text: str) -> str:
    return _QUOTE.sub("", _sub_before_last(_SPOILER, r"\1", text, "!<"))


def _links(text: str) -> str:
    return _ref_link_sub(_ref_link_def_sub(_link_sub(_image_sub(text))))


def _tags(text: str) -> str:
    return _HTML_TAG.sub(" ", _autolink_sub(text))


def _emphasis(text: str) -> str:
    text, found = _emphasis_subn(text)
    if found and ("*" in text or "_" in text or "~~" in text):  # nested emphasis: ***a*** or **_a_**
        text = _emphasis_subn(text)[0]
    return text


def _protected(match: re.Match) -> str:
    """The stand-in of a backslash-escaped character (:data:`_BACKSLASH_ESCAPE`)."""
    return chr(_PROTECT + ord(match.group(1)))


def strip_markup(text: str) -> str:
    """Step 1: markdown and HTML to plain text; paragraphs become single spaces; usernames
    (:data:`USERNAME`) go, before and after the markup rules.

    >>> strip_markup("&gt; quoted\\n\\n**Great** [movie](http://imdb.com) &amp; ~~bad~~ cast")
    'quoted Great movie & bad cast'
    """
    if "&" in text:
        text = html.unescape(html.unescape(text))
    text = remove_usernames(text)
    has = text.__contains__
    escaped = has("\\")
    if escaped:  # protect \* \_ ... from the markdown rules; restored at the end
        text = _BACKSLASH_ESCAPE.sub(_protected, text)
    if has("<"):
        text = _sub_before_last(_HTML_COMMENT, " ", text, "-->")
    multiline = has("\n")
    if multiline and (has("```") or has("~~~")):
        text = _code_fence_sub(text)
    if text.startswith(("    ", "\t")) or "\n    " in text or "\n\t" in text:
        text = _INDENTED_CODE.sub("", text)
    if multiline and (has("-") or has("=")):
        text = _SETEXT_LINES.sub(text)
    if has(">"):
        text = _quotes_and_spoilers(text)
    if has("]"):
        text = _links(text)
    if has("<"):
        text = _tags(text)
    if has("#"):
        text = _HEADER.sub("", text)
    if (has("*") or has("-") or has("_")) and (multiline or _HRULE_LINES.match(text)):
        text = _HRULE_LINES.sub(text)
    if has("|"):
        text = _TABLE_RULE.sub("", text)
        text = _TABLE_PIPE.sub(" ", text)
    if multiline or _BULLET_LINES.match(text):
        text = _BULLET_LINES.sub(text)
    if has("*") or has("_") or has("~~"):
        text = _emphasis(text)
    if has("`"):
        text = _INLINE_CODE.sub(r"\1", text)
    if has("^"):
        text = _superscript_sub(text)
    if escaped:
        text = text.translate(_UNPROTECT)
    text = remove_usernames(text)  # one that markup made (u**/**name, ^(u)/name)
    if "  " in text or not text.isprintable():  # else every space is already a single " "
        return _collapse_whitespace(text)
    return text.strip()


_SPACE_RUN_ONLY = re.compile("  +")


def _collapse_whitespace(text: str) -> str:
    r"""``_WHITESPACE.sub(" ", text).strip()``; when the only whitespace is ``" "`` and ``\n``
    (then every whitespace run becomes one space: a run with a newline by the first rule, two
    or more spaces by the second), the newlines become spaces and each run of spaces one
    space, ends stripped (``" ".join(text.split())`` without making the list).
    ``isprintable`` is false for every other whitespace character (``\s`` is
    ``str.isspace``; the only printable one is the space) and for ``\u200b``, which take the
    regex."""
    spaced = text.replace("\n", " ")
    if spaced.isprintable():
        return (_SPACE_RUN_ONLY.sub(" ", spaced) if "  " in spaced else spaced).strip(" ")
    return _WHITESPACE.sub(" ", text).strip()


# --- step 2: urls, e-mails, numbers -------------------------------------------------------
#: The domain endings a bare domain needs to be a url (``foo.biz``); the C half takes them from here.
TLDS = ("com", "org", "net", "edu", "gov", "io", "co", "uk", "de", "fr", "tv", "me", "ly", "gl", "be", "it", "us",
        "ca", "au", "info", "biz", "gg", "am")
_TLDS = "(?:" + "|".join(TLDS) + ")"
_WEB_URL = r"(?:\b(?:https?|ftp)://|\bwww\.)[^\s<>\"]+|\b(?:[a-z0-9-]+\.)+" + _TLDS + r"\b(?:/[^\s<>\"]*)?"
_URL = re.compile(_WEB_URL + r"|(?<![\w/])/?r/[A-Za-z0-9_]+", re.I)  # treebank: r/name is a url
_LSDSCC_URL = re.compile(_WEB_URL, re.I)  # lsdscc: r/movies stays text (-> ``r movies``)
_DOT_TLD = re.compile(r"\." + _TLDS + r"\b", re.I)


def _has_url(text: str) -> bool:
    """False only when ``_LSDSCC_URL`` cannot match: each match has ``://``, ``www.`` or ``.tld``."""
    return "://" in text or _DOT_TLD.search(text) is not None or (
        ("w." in text or "W." in text) and "www." in text.lower())  # (only W lowercases to w)
_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
_NUMBER = re.compile(r"(?<![A-Za-z0-9<:])[$£€#]?\d+(?:[.,:]\d+)*(?:st|nd|rd|th|s|k|m|am|pm|p)?(?![A-Za-z0-9])", re.I)
_URL_TRAILING = re.compile(r"[.,;:!?)\]]+$")


def _url_token(match: re.Match) -> str:
    trailing = _URL_TRAILING.search(match.group(0))
    return " url " + (trailing.group(0) if trailing else "")



# urls and e-mail addresses: re tries a domain or an address from every word start of a long
# run like "a.a.a.a..." and scans to the run's end each time. Where it fails at one start, it
# fails at every later start of the same run (the same run end decides), so the scanners skip
# the run. Runs shorter than 64 characters (all normal text) keep the regexes.
_URL_LEAD = re.compile(r"(?:\b(?:https?|ftp)://|\bwww\.)[^\s<>\"]+", re.I)
_URL_LEAD_TREEBANK = re.compile(_URL_LEAD.pattern + r"|(?<![\w/])/?r/[A-Za-z0-9_]+", re.I)
_DOMAIN = re.compile(r"\b(?:[a-z0-9-]+\.)+" + _TLDS + r"\b(?:/[^\s<>\"]*)?", re.I)
_DOMAIN_START = re.compile(r"\b[a-z0-9-]", re.I)
_DOMAIN_SPAN = re.compile(r"[a-z0-9-]*+(?:\.[a-z0-9-]++)*+", re.I)
# (what [a-z] matches under re.I, spelled out: the flag makes the search 3x slower)
_LONG_DOMAIN_RUN = re.compile("[A-Za-z0-9.\u0130\u0131\u017f\u212a-]{64}")


def _separators(text: str) -> int:
    """How many ``.``, ``-``, ``%``, ``+``: a run with many word starts has many of them."""
    return text.count(".") + text.count("-") + text.count("%") + text.count("+")


def _domain_search(text: str, pos: int):
    """``_DOMAIN.search(text, pos)``, skipping the rest of a dotted run where a start failed."""
    start = _DOMAIN_START.search(text, pos)
    while start:
        s = start.start()
        found = _DOMAIN.match(text, s)
        if found:
            return found
        start = _DOMAIN_START.search(text, max(_DOMAIN_SPAN.match(text, s).end(), s + 1))
    return None


def _url_sub(pattern: re.Pattern, text: str) -> str:
    """``pattern.sub(_url_token, text)`` for ``_URL`` or ``_LSDSCC_URL``, in linear time.

    Their alternatives are a scheme or ``www.`` (and ``r/name``), tried first, then a domain;
    the leftmost match wins, and at one start the scheme/``www.`` one.
    """
    if _separators(text) < _FEW_OPENERS or not _LONG_DOMAIN_RUN.search(text):
        return _url_sub_from_anchors(text) if pattern is _LSDSCC_URL else pattern.sub(_url_token, text)
    lead_pattern = _URL_LEAD_TREEBANK if pattern is _URL else _URL_LEAD
    out, pos = [], 0
    lead, domain = lead_pattern.search(text), _domain_search(text, 0)
    while lead or domain:
        if lead and lead.start() < pos:
            lead = lead_pattern.search(text, pos)
        if domain and domain.start() < pos:
            domain = _domain_search(text, pos)
        found = lead if lead and (not domain or lead.start() <= domain.start()) else domain
        if found is None:
            break
        out += (text[pos:found.start()], _url_token(found))
        pos = found.end()
    out.append(text[pos:])
    return "".join(out)


_WWW = re.compile(r"www\.", re.I)
#: What [a-z0-9-] and \. match under re.I (the run a domain can start in).
_DOMAIN_RUN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-\u0130\u0131\u017f\u212a")


class _UrlAnchors:
    """Where the next ``_LSDSCC_URL`` match can start, from ``pos`` on (positions asked in
    increasing order; each anchor is searched again only once the text before ``pos`` holds it).
    A match holds ``://`` at most 5 characters after its start (``https``), or starts at
    ``www.``, or is a domain: a run of domain characters from its start to a ``.tld``, so it
    starts no earlier than the run that holds the first ``.tld`` from ``pos``."""

    def __init__(self, text: str):
        self.text, self.scheme = text, text.find("://")
        self.lower = text.lower() if text.isascii() else None  # (then as long as the text)
        self.www, self.tld = self._www(0), _DOT_TLD.search(text)

    def _www(self, pos: int) -> int:
        if self.lower is not None:
            return self.lower.find("www.", pos)
        found = _WWW.search(self.text, pos)
        return found.start() if found else -1

    def bound(self, pos: int) -> int:
        """No match starts in ``text[pos:bound]``; -1: none starts after ``pos``."""
        text, bounds = self.text, []
        if 0 <= self.scheme < pos:
            self.scheme = text.find("://", pos)
        if self.scheme >= 0:
            bounds.append(max(pos, self.scheme - 5))
        if 0 <= self.www < pos:
            self.www = self._www(pos)
        if self.www >= 0:
            bounds.append(self.www)
        if self.tld and self.tld.start() < pos:
            self.tld = _DOT_TLD.search(text, pos)
        if self.tld:
            start = self.tld.start()
            while start > pos and text[start - 1] in _DOMAIN_RUN_CHARS:
                start -= 1
            bounds.append(start)
        return min(bounds) if bounds else -1


def _url_sub_from_anchors(text: str) -> str:
    """``_LSDSCC_URL.sub(_url_token, text)``, each search started where a match can start
    (:class:`_UrlAnchors`) instead of trying the domain rule at every word."""
    anchors, out, pos = _UrlAnchors(text), [], 0
    while (start := anchors.bound(pos)) >= 0:
        found = _LSDSCC_URL.search(text, start)
        if found is None:
            break
        out += (text[pos:found.start()], _url_token(found))
        pos = found.end()
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


_EMAIL_START = re.compile(r"\b[A-Za-z0-9._%+-]")
_EMAIL_LOCAL = re.compile(r"[A-Za-z0-9._%+-]*+")
_LONG_EMAIL_RUN = re.compile(r"[A-Za-z0-9._%+-]{64}")


def _email_sub(text: str) -> str:
    """``_EMAIL.sub(" email ", text)``, in linear time: an address that fails from one start
    fails from every later start before the same ``@`` (the local part ends at the same place)."""
    if _separators(text) < _FEW_OPENERS or not _LONG_EMAIL_RUN.search(text):
        return _EMAIL.sub(" email ", text)
    out, pos = [], 0
    start = _EMAIL_START.search(text)
    while start:
        s = start.start()
        found = _EMAIL.match(text, s)
        if found:
            out += (text[pos:s], " email ")
            pos = found.end()
            start = _EMAIL_START.search(text, pos)
        else:
            start = _EMAIL_START.search(text, max(_EMAIL_LOCAL.match(text, s).end(), s + 1))
    out.append(text[pos:])
    return "".join(out)


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
        text = _email_sub(text)
    if lsdscc:
        if _has_url(text):
            text = _url_sub(_LSDSCC_URL, text)
    else:
        if "." in text or "/" in text:
            text = _url_sub(_URL, text)
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
# Faster forms of two of them (same output; tests/test_lsdscc_cleaning_speed.py checks them):
# - a _LAUGH_HA match is a whole word (it starts and ends at \b and holds only a/h, word
#   characters); this finds the whole a/h words of 4 or more letters from a leading class
#   (re scans for a/h instead of trying \b everywhere) and keeps those _LAUGH_HA matches;
# - _REPEAT per letter: each letter with a run of 3+ has its runs shortened by a literal pattern.
_AH_WORD = re.compile(r"[ah](?<!\w.)[ah]{3,}\b", re.I)
_LETTER_RUN = {c: re.compile(c * 3 + "+") for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"}


#: The laughter passes' guards on the lowercased text, one per pass (_AH_WORD, _LAUGH_HE,
#: _LAUGH_LOL): a pass runs where the text holds a string of each of its groups. A _LAUGH_HA
#: match holds "hah" or "aha", and its ``(?:ha|ah){2,}`` one of the four of the second group;
#: a _LAUGH_HE match "hehe", a _LAUGH_LOL match "lolol". (The C half takes them from here.)
LAUGH_GUARDS = ((("hah", "aha"), ("haha", "ahah", "haah", "ahha")), (("hehe",),), (("lolol",),))
#: What each laughter pass (_AH_WORD with _LAUGH_HA, _LAUGH_HE, _LAUGH_LOL) writes for a match:
#: short lowercase ASCII words. (The C half takes them from here.)
LAUGH_WORDS = ("haha", "hehe", "lol")


def _laughs(lower: str, groups) -> bool:
    """Whether ``lower`` holds a string of each of ``groups`` (a pass of :data:`LAUGH_GUARDS`)."""
    return all(any(map(lower.__contains__, group)) for group in groups)


def _may_laugh(lower: str) -> bool:
    """False when no word of ``lower`` (a lowercased text) can match ``_LAUGH_HA`` (``_AH_WORD.sub``
    then changes nothing)."""
    return _laughs(lower, LAUGH_GUARDS[0][1:])


def _laugh_ha(match: re.Match) -> str:
    return LAUGH_WORDS[0] if _LAUGH_HA.fullmatch(match.group(0)) else match.group(0)


def _shorten_repeats(text: str, first: re.Match) -> str:
    r"""``_REPEAT.sub(r"\1\1", text)``, given the first ``_TRIPLE`` match: runs of different
    letters are apart, so each letter's runs are shortened on their own, letter by letter in
    the order of their first run (none is left before the last one found)."""
    while first:
        letter = first.group(1)
        text = _LETTER_RUN[letter].sub(letter + letter, text)
        first = _TRIPLE.search(text, first.start() + 2)
    return text


def shorten_elongated(text: str) -> str:
    """Step 4: letters repeated 3+ times keep two; laughter becomes ``haha``/``hehe``/``lol``.

    >>> shorten_elongated("cooool movie ahahaha lololol!!!!!!")
    'cool movie haha lol!!!'
    """
    first = _TRIPLE.search(text)
    if first:
        text = _shorten_repeats(text, first)
    lower = text.lower()
    ha, he, lol = LAUGH_GUARDS
    if _laughs(lower, ha):
        text = _AH_WORD.sub(_laugh_ha, text)
    if _laughs(lower, he):
        text = _LAUGH_HE.sub(LAUGH_WORDS[1], text)
    if _laughs(lower, lol):
        text = _LAUGH_LOL.sub(LAUGH_WORDS[2], text)
    if "!!!!" in text or "????" in text or "...." in text:
        text = _REPEAT_PUNCT.sub(r"\1\1\1", text)
    return text


def clean_text(text: str, convention: str = "treebank") -> str:
    """Steps 1-4 of docs/algorithms.md#1-lsdscc-corpus on one body/title; returns plain text."""
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
def nltk_tokenizer(name: str, fast: bool = True):
    """The ``tokenize`` of NLTK's ``treebank`` or ``nltk`` word tokenizer (one per name, cached),
    its patterns run by the stdlib ``re`` (:func:`stdlib_regex_tokenizer`) unless ``fast`` is
    False (the unmodified NLTK tokenizer, the reference :func:`tokenize` is checked against)."""
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
_DIGIT_RUN = re.compile(r"\d\d*")  # = \d+; starting with a class, re scans for its characters
#: lsdscc: the characters whose runs of 3 or more keep two, and the word every digit run becomes
PUNCT_RUNS, DIGITS = "!?", "digits"
_PUNCT_RUN = re.compile("([" + re.escape(PUNCT_RUNS) + r"])\1{2,}")
_PUNCT_TRIPLES = tuple(c * 3 for c in PUNCT_RUNS)
# treebank: a period (or a run: "wait..") ending a word is split off everywhere, as NLTK's
# Treebank tokenizer does only at the end of the text: "weekend. so" -> "weekend . so".
_GLUED_PERIOD = re.compile(r"(?<=[^\s.])(\.+)(?=[\]\)}>\"']*(?:\s|$))")
_OPEN, _CLOSE = "\ue0fe", "\ue0ff"  # stand-ins for ``, '' already in the text (kept as quote tokens)
_QUOTE_TOKENS = {_OPEN: "``", _CLOSE: "''"}
#: lsdscc: characters that become spaces (the released text has none of them outside the
#: quote tokens), curly double quotes that count as ``"``, and long dashes as ``--``.
TO_SPACE = "'`\u2018\u2019\u00b4./\\\u2026*~|<>{}"
_TO_SPACE = re.compile("[" + re.escape(TO_SPACE) + "]")
WIDE = (("\u201c", '"'), ("\u201d", '"'), ("\u201e", '"'), ("\u2013", "--"), ("\u2014", "--"))
#: _TO_SPACE on ASCII text as a bytes table (bytes.translate is 4x faster than the sub).
_TO_SPACE_ASCII = bytes(32 if _TO_SPACE.match(chr(i)) else i for i in range(256))


def lsdscc_characters(text: str) -> str:
    """The character rules of the ``lsdscc`` convention, applied before tokenizing.

    Quote tokens already in the text (`````` ``, ``''``) are kept; every digit run becomes
    ``digits`` (even inside a word); ``!``/``?`` runs keep two; apostrophes, backticks,
    periods, slashes, backslashes and ``* ~ | < > { }`` become spaces. No lowercasing.

    >>> lsdscc_characters("I didn't pay $12.50 in the 90s!!!! and/or r/movies")
    'I didn t pay $digits digits in the digitss!! and or r movies'
    """
    text = _DIGIT_RUN.sub(DIGITS, _protect_quotes(text))
    if any(map(text.__contains__, _PUNCT_TRIPLES)):
        text = _PUNCT_RUN.sub(r"\1\1", text)
    if text.isascii():
        return text.encode("ascii").translate(_TO_SPACE_ASCII).decode("ascii")
    for wide, ascii_ in WIDE:
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
        return nltk_tokenizer(tokenizer)(text)
    text = lsdscc_characters(text)
    tokens = nltk_tokenizer(tokenizer)(text)
    if _OPEN in text or _CLOSE in text:
        tokens = [_QUOTE_TOKENS.get(t, t) for t in tokens]
    return tokens


def clean_and_tokenize(text: str, tokenizer: str = "treebank", lowercase: bool = True,
                       convention: str = DEFAULT_CONVENTION, native: bool = True) -> list[str]:
    """Steps 1-4, then tokenization: the per-text work done before the vocabulary is counted.

    ``convention`` names the text convention (:data:`CONVENTIONS`; default ``lsdscc``, the
    released LSDSCC text). ``lsdscc`` with the ``treebank`` tokenizer takes the fused fast
    path; every other combination runs the step functions one after the other. ``native=False``
    runs the fast path's Python steps only (:func:`lsdscc_head`, :func:`lsdscc_tail`), as where
    the C half is not built or :data:`NO_C_EXTENSION` is set: the same tokens, slower.
    """
    if check_convention(convention) == "lsdscc" and tokenizer == "treebank":
        return _lsdscc_fast(text, lowercase, None, native)
    return tokenize(clean_text(text, convention), tokenizer, lowercase, convention)


def clean_and_count(text: str, words: Counter, tokenizer: str = "treebank", lowercase: bool = True,
                    convention: str = DEFAULT_CONVENTION, native: bool = True) -> str:
    """``" ".join(clean_and_tokenize(text, ...))``, each token counted into ``words``: the
    corpus's per-post step (steps 1-4, tokenization, the first pass of step 5)."""
    if check_convention(convention) == "lsdscc" and tokenizer == "treebank":
        return _lsdscc_fast(text, lowercase, words, native)
    tokens = clean_and_tokenize(text, tokenizer, lowercase, convention, native)
    if _native is not None:  # (the counts the C half defers for words go in first: their order)
        _native.flush_counts()
    words.update(tokens)
    return " ".join(tokens)


def clean_and_count_all(texts: Iterable[str], words: Counter, tokenizer: str = "treebank", lowercase: bool = True,
                        convention: str = DEFAULT_CONVENTION, native: bool = True) -> list[str]:
    """``[clean_and_count(text, words, ...) for text in texts]``, the C half counting the tokens of
    all the texts into ``words`` once, at the end (``defer_counts``): the same counts, inserted in
    the same order (a text's new tokens in the order they come, the texts in theirs). On an error,
    the texts before it are counted, as they are by ``clean_and_count``."""
    if _native is None or not native:
        return [clean_and_count(text, words, tokenizer, lowercase, convention, native) for text in texts]
    _native.defer_counts(words)
    try:
        return [clean_and_count(text, words, tokenizer, lowercase, convention) for text in texts]
    finally:
        _native.defer_counts(None)


# --- the fused fast path of clean_and_tokenize(convention="lsdscc", tokenizer="treebank") ---
#: NLTK's opening-quote rule on lsdscc text: a " after one of these opens a quote (``)
OPEN_QUOTE_AFTER = " ([{<"
_OPEN_QUOTE = re.compile('"(?<=[' + re.escape(OPEN_QUOTE_AFTER) + ']")')  # " first, so re scans for it
_COLON_COMMA = re.compile(r"([:,])([^\d]|$)")
#: The characters NLTK's Treebank rules pad with spaces on lsdscc text (and , : where they do not touch)
PAD = ";@#$%&?!()[]{}<>"
_PAD = re.compile("([" + re.escape(PAD) + "])")
_PAD_WITH_COLON_COMMA = re.compile("([,:" + re.escape(PAD) + "])")
#: NLTK's CONTRACTIONS2 that can fire without apostrophes, split in two (``gonna`` -> ``gon na``,
#: case kept, re.I): where a word ends, and (the second table) where a space or the text's end follows.
CONTRACTIONS = (("can", "not"), ("gim", "me"), ("gon", "na"), ("got", "ta"), ("lem", "me"))
CONTRACTIONS_BEFORE_SPACE = (("wan", "na"),)
_CONTRACTION = re.compile(  # (one pass; a group pair per contraction, in the tables' order)
    r"(?i)\b(?:" + "|".join(f"({a})({b})" for a, b in CONTRACTIONS) + r")\b"
    + "".join(rf"|\b({a})({b})(?=\s|$)" for a, b in CONTRACTIONS_BEFORE_SPACE))
_CONTRACTION_SPLIT = " {} {} ".format(*("".join(f"\\{2 * k + part}" for k in range(_CONTRACTION.groups // 2))
                                        for part in (1, 2)))
#: A string each contraction holds (its letters from the third on): where none is, no pass.
_CONTRACTION_GUARDS = tuple(sorted({(a + b)[2:] for a, b in CONTRACTIONS + CONTRACTIONS_BEFORE_SPACE}))


#: Why ``native_extension().plain`` refused a text (the int it returns is an or of these;
#: _cleaning_native.c has the same numbers).
REFUSED_ENTITIES, REFUSED_FOLLOWED, REFUSED_OTHER, REFUSED_LINKS = 1, 2, 4, 8
#: What makes ``plain`` refuse a text, by cause: the guards of strip_markup's rules (a
#: rule runs only where its trigger is in the text), _protect_quotes's pairs, the e-mail and url
#: guards (a ``.tld`` of :data:`TLDS` too). REFUSED_ENTITIES: decoded first (:func:`_without_usernames`);
#: REFUSED_FOLLOWED: the rules of :func:`_followed_markup`, the same; REFUSED_OTHER: the Python
#: steps; REFUSED_LINKS: e-mails and urls (:func:`_mail_and_urls`). C matches them ignoring
#: ASCII case (refusing more is only slower).
#: A new rule's guard goes here (tests/test_lsdscc_cleaning_tables.py reads the guards of these
#: functions: each is a trigger, a line rule's or whitespace's).
NATIVE_TRIGGERS = (
    (REFUSED_ENTITIES, ("&",)),
    (REFUSED_FOLLOWED, ("<", ">", "]", "*", "_", "~~", "`", "^")),
    (REFUSED_OTHER, ("\\", "|", "```", "~~~", "''", "``")),
    (REFUSED_LINKS, ("@", "://", "www.")),
)
#: strip_markup's line rules: where a line starts with one of the characters its match can start
#: with (derived from the pattern), ``_native.plain`` asks the rule itself.
NATIVE_LINE_RULES = ((_INDENTED_CODE, REFUSED_OTHER), (_SETEXT, REFUSED_OTHER), (_HRULE, REFUSED_OTHER),
                     (_HEADER, REFUSED_FOLLOWED), (_BULLET, REFUSED_FOLLOWED))
#: Set (to anything but "" or "0") to run the Python steps only, as where the C half was not built.
NO_C_EXTENSION = "MULTIREF_NO_C_EXTENSION"


def native_tables() -> dict:
    """Every table and trigger the C half uses, from their Python definitions (``configure()``)."""
    from lsdscc.corpus import emoticons

    table = emoticon_table()
    line_rules = []
    for rule, cause in NATIVE_LINE_RULES:
        first = first_characters(rule)
        line_rules.append(("".join(sorted(first.chars)), first.digits, first.anything, rule.match, cause))
    return {
        "faces": {f: w for f, w in table.items() if f.isascii()},
        "emoji": {f: w for f, w in table.items() if not f.isascii()},
        "face_followers": emoticons.FACE_FOLLOWERS, "undecided": (emoticons.SHRUG,),
        "case_folds": re_case_folds(), "tlds": TLDS,
        "contractions": tuple((a, b, 0) for a, b in CONTRACTIONS)
        + tuple((a, b, 1) for a, b in CONTRACTIONS_BEFORE_SPACE),
        "to_space": TO_SPACE, "wide": dict(WIDE), "pad": PAD, "punct_runs": PUNCT_RUNS, "digits": DIGITS,
        "stand_ins": (_OPEN, _CLOSE), "open_quote_after": OPEN_QUOTE_AFTER, "laugh_guards": LAUGH_GUARDS,
        "laugh_words": LAUGH_WORDS,
        "triggers": tuple((t, cause) for cause, triggers in NATIVE_TRIGGERS for t in triggers),
        "line_rules": tuple(line_rules),
    }


def _load_native():
    """The C half of the fast path (``lsdscc/corpus/_cleaning_native.c``, built by ``pip install``)
    configured with :func:`native_tables`, or None where it was not built or :data:`NO_C_EXTENSION`
    is set (the Python steps then run: the same tokens, slower)."""
    if os.environ.get(NO_C_EXTENSION, "") not in ("", "0"):
        return None
    try:
        from lsdscc.corpus import _cleaning_native
    except ImportError:
        return None
    _cleaning_native.configure(native_tables())
    return _cleaning_native


_native = _load_native()


def native_extension():
    """The C half of the fast path, configured (``lsdscc/corpus/_cleaning_native.c``: ``tail``
    gives :func:`lsdscc_tail`'s tokens, ``plain`` those of the whole path or a ``REFUSED_*`` cause,
    ``configure`` takes :func:`native_tables`), or None where it was not built or
    :data:`NO_C_EXTENSION` is set (``clean_and_tokenize(..., native=False)`` runs as it then does)."""
    return _native


def _native_plain(text: str, lowercase: bool, counts: Counter | None = None, literal: int = 0) -> list[str] | str | None:
    """The tokens of :func:`_lsdscc_fast` from ``_native.plain``, or None. Where ``plain``
    refuses a text only for the markup rules it cannot follow (quotes, links, tags, headers,
    lists, emphasis, inline code, superscripts...), e-mail addresses or urls, these run here
    first, as strip_markup and :func:`_lsdscc_fast` run them (their twins, in their order; the
    rules that would run before or between them are other causes, which ``plain`` tells apart),
    and ``plain`` tries the result, taking what is left of them as text. ``literal``: the causes
    already dealt with (REFUSED_ENTITIES: :func:`_without_usernames` decoded the entities, and an
    & left after decoding stays an &, as in strip_markup; a text with an & and without it is
    refused, and the Python steps decide)."""
    if SHRUG in text:
        return _native_shrug(text, lowercase, counts, literal)
    result = _native.plain(text, lowercase, literal, counts)  # (None: a text it leaves to Python)
    for cause, rules in _NATIVE_STEPS:
        if result.__class__ is not int or result & (REFUSED_OTHER | REFUSED_ENTITIES):
            break
        literal |= cause  # (from here on, what is left of this cause's characters stays as it is)
        if result & cause:
            text = rules(text)
            result = _native.plain(text, lowercase, literal, counts)
    return None if result is None or result.__class__ is int else result


#: The stand-ins of the escapes :func:`_native_shrug` takes (a shrug's arm: ``¯\\_(ツ)`` or
#: ``¯\\\\_(ツ)``, ``¯\\_(ツ)`` once displayed).
_PROTECTED_BACKSLASH, _PROTECTED_UNDERSCORE = chr(_PROTECT + ord("\\")), chr(_PROTECT + ord("_"))


def _native_shrug(text: str, lowercase: bool, counts: Counter | None, literal: int) -> list[str] | str | None:
    """:func:`_native_plain` for a text holding a shrug (:data:`SHRUG`), which ``plain`` leaves to
    Python (its rule is the tail's first) and whose arm's backslashes (markdown escapes) it
    refuses: strip_markup's steps in its order. The escapes become their stand-ins
    (:data:`_BACKSLASH_ESCAPE`), the markup rules run (:func:`_followed_markup`), the stand-ins are
    restored, e-mails and urls replaced, the shrug substituted, and ``plain`` takes the rest.
    None where ``plain`` refuses the text (the escapes of ``\\`` and ``_`` left out, as ``_`` and
    nothing) for another cause than those of the rules run here (another escape, code blocks,
    tables...), or refuses what they leave: the Python steps then run."""
    escaped = "\\" in text
    if escaped:
        text = _BACKSLASH_ESCAPE.sub(_protected, text)
    # (the probe: those escapes as _ and nothing; any other stand-in is a character plain refuses.
    # str.replace, not translate: that takes 50 us on an 800-character text outside ASCII)
    probe = text.replace(_PROTECTED_BACKSLASH, "").replace(_PROTECTED_UNDERSCORE, "_") if escaped else text
    if "\\" in probe:
        return None
    causes = _native.plain(probe, lowercase, literal, None)  # (None: no refusal, the shrug left to Python)
    if causes is not None and (causes.__class__ is not int or causes & REFUSED_OTHER):
        return None
    text = _followed_markup(text)
    if escaped:  # (strip_markup's translate(_UNPROTECT): no other stand-in is left, the probe said)
        text = text.replace(_PROTECTED_BACKSLASH, "\\").replace(_PROTECTED_UNDERSCORE, "_")
    text = substitute_shrug(_mail_and_urls(text))
    result = _native.plain(text, lowercase, literal | REFUSED_ENTITIES | REFUSED_FOLLOWED | REFUSED_LINKS, counts)
    return None if result is None or result.__class__ is int else result


def _entities(text: str) -> str:
    return html.unescape(html.unescape(text))


def _mail_and_urls(text: str) -> str:
    done = _native.mail_and_urls(text) if _native is not None else None  # (C: None where it leaves the text here)
    if done is not None:
        return done
    if "@" in text:
        text = _email_sub(text)
    return _url_sub(_LSDSCC_URL, text) if _has_url(text) else text


def _followed_head(text: str) -> str:
    """The rules of :func:`_followed_markup` up to the list bullets: HTML comments, indented code,
    setext lines, quotes and spoilers, links, tags, headers, horizontal rules, bullets
    (``_native.followed_head`` does the same in C). ``_native.plain`` refuses a text whose own
    lines are code, setext lines or rules, but removing a comment can make the first two and
    removing a quote marker, link, tag or header a rule (``\n>___``), so they run here at
    strip_markup's place. (Code fences, tables and escapes need ```` ``` ````, ``~~~``, ``|`` or a
    backslash, which ``plain`` refuses and no rule makes: each keeps or removes characters, or
    puts in a space.)"""
    multiline = "\n" in text  # (strip_markup's: setext lines only where the text had a newline)
    if "<" in text:
        text = _sub_before_last(_HTML_COMMENT, " ", text, "-->")
    if text.startswith(("    ", "\t")) or "\n    " in text or "\n\t" in text:
        text = _INDENTED_CODE.sub("", text)
    if multiline and ("-" in text or "=" in text):
        text = _SETEXT_LINES.sub(text)
    if ">" in text:
        text = _quotes_and_spoilers(text)
    if "]" in text:
        text = _links(text)
    if "<" in text:
        text = _tags(text)
    if "#" in text:
        text = _HEADER.sub("", text)
    if "*" in text or "-" in text or "_" in text:
        text = _HRULE_LINES.sub(text)
    return _BULLET_LINES.sub(text)


def _followed_markup(text: str) -> str:
    """strip_markup's rules but escapes, code blocks, setext lines, rules and tables (which
    ``_native.plain`` refuses), in its order, as their C twins (the same str as the Python
    rules, :func:`_followed_head`, ``_emphasis``..., for every text)."""
    head = None if _native is None else _native.followed_head(text)  # (the C twin, or None: Python's)
    text = _followed_head(text) if head is None else head
    if "*" in text or "_" in text or "~~" in text:
        text = _native.emphasis(text)  # (_emphasis in C)
    if "`" in text:
        text = _native.inline_code(text)  # (_INLINE_CODE.sub(r"\1", text) in C)
    if "^" in text:
        text = _native.superscript(text)  # (_superscript_sub in C)
    return text


#: What _native_plain runs for each cause ``plain`` gives, in strip_markup's and _lsdscc_fast's order.
_NATIVE_STEPS = ((REFUSED_FOLLOWED, _followed_markup), (REFUSED_LINKS, _mail_and_urls))


def _lsdscc_fast(text: str, lowercase: bool, counts: Counter | None = None, native: bool = True) -> list[str] | str:
    """``tokenize(clean_text(text, "lsdscc"), "treebank", lowercase, "lsdscc")``, fused.

    The same steps with guards that skip a pass when its trigger characters are absent, and
    NLTK's Treebank rules reduced to those that can still fire on ``lsdscc`` text (no
    periods, apostrophes or digits are left): the opening-quote rule, one padding pass for
    the single-character tokens (NLTK's ``,``/``:`` rule differs from plain padding only
    when two of them touch: ``a,,b`` -> ``a , ,b``), ``"`` -> ``''``, ``--``, and one pass
    for ``gonna``-style words.

    With ``counts`` (a Counter): the tokens' text joined with single spaces, each token
    counted into it (the corpus's step; in C without a list of tokens). ``native=False``: the
    Python steps only, as where the C half is not built.
    """
    native = native and _native is not None
    plain, literal = _without_usernames(text) if native else (None, 0)
    if plain is not None:
        result = _native_plain(plain, lowercase, counts, literal)
        if result is not None:
            return result
    text = lsdscc_head(text)
    if native:  # (the C tail leaves a shrug to Python: its rule, the tail's first, runs here)
        result = _native.tail(substitute_shrug(text), lowercase, counts)
        if result is not None:
            return result
    tokens = lsdscc_tail(text, lowercase)
    if counts is None:
        return tokens
    if native:  # (the counts the C half defers for counts go in first: their order)
        _native.flush_counts()
    counts.update(tokens)
    return " ".join(tokens)


def lsdscc_head(text: str) -> str:
    """The Python steps of the fast path before :func:`lsdscc_tail`: ``''``/```` `` ```` kept as quote
    tokens, markup stripped (step 1), e-mail addresses and urls replaced (the ``lsdscc`` url rule:
    ``r/name`` stays text). ``lsdscc_tail(lsdscc_head(text), lowercase)`` is
    ``clean_and_tokenize(text, lowercase=lowercase, native=False)``."""
    text = strip_markup(_protect_quotes(text))
    if "@" in text:
        text = _email_sub(text)
    if _has_url(text):
        text = _url_sub(_LSDSCC_URL, text)
    return text


def _without_usernames(text: str) -> tuple[str | None, int]:
    """``text`` as the C steps, which have no username rule, may clean it, with the causes it dealt
    with (``literal`` of ``_native.plain``): its entities decoded first where it has an ``&`` (then
    REFUSED_ENTITIES), its usernames removed, as strip_markup does both, where no username is
    left then (no cleaning step can then make one); else ``(None, 0)`` (the Python steps decide).
    Only the C path calls it: it asks :func:`may_name_user`'s C twin. (Decoding here spares
    ``plain`` a look at the encoded text: what it refuses there for REFUSED_OTHER, decoding
    keeps, as no entity holds those characters.)"""
    literal = 0
    if "&" in text:
        text, literal = _entities(text), REFUSED_ENTITIES
    may_name = _native.may_name_user
    if not may_name(text):
        return text, literal
    text = USERNAME.sub(" ", text)
    return (None, 0) if may_name(text) else (text, literal)


def lsdscc_tail(text: str, lowercase: bool) -> list[str]:
    """The rest of the fast path after :func:`lsdscc_head` (markup, e-mails and urls): emoticons,
    elongated words, lowercasing, the ``lsdscc`` character rules and the Treebank rules left for
    them. ``lsdscc/corpus/_cleaning_native.c`` does the same in C (``native_extension().tail``;
    None where it leaves a text to this function)."""
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
    if any(map(lower.__contains__, _CONTRACTION_GUARDS)):
        text = _CONTRACTION.sub(_CONTRACTION_SPLIT, text)
    return text.split()
