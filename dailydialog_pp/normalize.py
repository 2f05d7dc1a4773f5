"""Text normalization and matching keys for DailyDialog and its two derived releases.

Three kinds of function live here (docs/algorithms.md sections 4 and 5):

- :func:`normalize_text` is an *output* option: DailyDialog text is pre-tokenized ("I ’ ll",
  "weed ?"), the multi-reference release lowercases and PTB-tokenizes its references, and
  DailyDialog++ partly de-tokenizes its contexts. :class:`TextOptions` picks the convention;
  the options are recorded in the dataset card.
- :func:`match_key` is the key used to *join* releases to the raw DailyDialog text: lowercase,
  then drop everything but ASCII letters and digits. It ignores curly against straight
  quotes, re-split sentences ("six.We" / "six . We"), split decimals and PTB tokenization, and
  matches all 1,000 multi-reference test dialogues and 3,469/3,472 DD++ dev utterances.
- :func:`dialogue_key` is the *duplicate* key of DD++ ("the same text up to spelling, or
  digits against number words"): ``match_key`` after spelling variants are mapped to one
  form (a small shipped table, ``data/spelling_variants.tsv``: British/American spellings
  and a few informal forms such as okay/ok) and digit runs are spelled out in words
  (``2`` -> ``two``, ``2,000`` -> ``two thousand``, ``6.5`` -> ``six point five``).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass

from multiref.util.options import option, recorded

_CURLY = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2032": "'"})
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,?!;:%)\]}])")
_SPACE_AFTER_OPEN = re.compile(r"([(\[{$])\s+")
# A split contraction: "I ' ll", "don ' t", "Let ' s" (and the PTB form "do n't").
_SPLIT_CONTRACTION = re.compile(r"(\w)\s+(['\u2019])\s+(ll|s|t|re|ve|d|m)\b", re.IGNORECASE)
_PTB_NT = re.compile(r"(\w)\s+(n['\u2019]t)\b", re.IGNORECASE)
_PTB_CLITIC = re.compile(r"(\w)\s+(['\u2019](?:ll|s|re|ve|d|m))\b", re.IGNORECASE)
_NON_ALNUM = re.compile(r"[^0-9a-z]+")
_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class TextOptions:
    """How DailyDialog text is written into the output (recorded in the dataset card).

    curly_quotes: map ’ ‘ “ ” to ASCII ' and " (the multi-reference release's convention).
    detokenize: remove spaces before punctuation and re-join split contractions
      ("weed ?" -> "weed?", "I ’ ll" -> "I’ll"), close to DailyDialog++'s contexts.
    lowercase: lowercase everything (the multi-reference references' convention).
    Whitespace runs are always collapsed to one space and ends stripped.
    """

    curly_quotes: bool = option(False, flag="--curly-quotes", help="map curly quotes to ASCII ' and \"")
    detokenize: bool = option(False, flag="--detokenize",
                              help="remove spaces before punctuation and re-join split contractions")
    lowercase: bool = option(False, flag="--lowercase", negatable=True,
                             help="lowercase DailyDialog text (default: no, the release's case)")

    def as_dict(self) -> dict:
        return recorded(self)


def collapse_spaces(text: str) -> str:
    """Collapse whitespace runs to one space and strip the ends."""
    return _WHITESPACE.sub(" ", text).strip()


def normalize_text(text: str, options: TextOptions = TextOptions()) -> str:
    """Return ``text`` written in the convention ``options`` asks for (see :class:`TextOptions`)."""
    text = collapse_spaces(text)
    if options.curly_quotes:
        text = text.translate(_CURLY)
    if options.detokenize:
        text = _SPLIT_CONTRACTION.sub(r"\1\2\3", text)
        text = _PTB_NT.sub(r"\1\2", text)
        text = _PTB_CLITIC.sub(r"\1\2", text)
        text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
        text = _SPACE_AFTER_OPEN.sub(r"\1", text)
    if options.lowercase:
        text = text.lower()
    return text


def match_key(text: str) -> str:
    """Join key: lowercase ``text`` and keep only ASCII letters and digits."""
    return _NON_ALNUM.sub("", text.lower())


# --- numbers to words (a small converter; num2words is not a dependency) ------------------

_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
         "fifteen sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = ((10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (1000, "thousand"))


def number_words(n: int) -> str:
    """Spell a non-negative integer in English words: 2019 -> 'two thousand nineteen'.

    No 'and' ("one hundred five"), no hyphens ("twenty one"): both vanish under the
    duplicate key anyway. Numbers of 10**15 and more are read digit by digit.
    """
    if n < 0:
        raise ValueError(f"number_words needs a non-negative integer, got {n}")
    if n >= 10**15:
        return " ".join(_ONES[int(d)] for d in str(n))
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens] + ("" if ones == 0 else " " + _ONES[ones])
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return _ONES[hundreds] + " hundred" + ("" if rest == 0 else " " + number_words(rest))
    for value, name in _SCALES:
        if n >= value:
            head, rest = divmod(n, value)
            return number_words(head) + " " + name + ("" if rest == 0 else " " + number_words(rest))
    raise AssertionError("unreachable")  # pragma: no cover


_THOUSANDS_COMMA = re.compile(r"(?<=\d),(?=\d{3}\b)")
_DECIMAL = re.compile(r"(\d+)\s*\.\s*(\d+)")
_DIGITS = re.compile(r"\d+")


def spell_numbers(text: str) -> str:
    """Replace digit runs by number words: '2,000' -> 'two thousand', '6.5' -> 'six point five'."""
    text = _THOUSANDS_COMMA.sub("", text)
    text = _DECIMAL.sub(lambda m: f"{m.group(1)} point {' '.join(m.group(2))}", text)
    return _DIGITS.sub(lambda m: " " + _digit_run_words(m.group(0)) + " ", text)


def _digit_run_words(digits: str) -> str:
    """:func:`number_words` of a digit run, without ``int()`` of a run of more than 15 digits
    (read digit by digit anyway; ``int()`` refuses 4,300 digits and is quadratic before that)."""
    significant = digits.lstrip("0") or "0"
    if len(significant) > 15:
        return " ".join(_ONES[int(d)] for d in significant)
    return number_words(int(significant))


@functools.lru_cache(maxsize=1)
def spelling_variants() -> dict:
    """The shipped spelling table ``data/spelling_variants.tsv``: variant -> canonical word."""
    path = os.path.join(os.path.dirname(__file__), "data", "spelling_variants.tsv")
    table = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            variant, canonical = line.split("\t")
            table[variant] = canonical
    return table


_HAS_DIGIT = re.compile(r"\d")


@functools.lru_cache(maxsize=1 << 18)
def canonical_text(text: str) -> str:
    """One utterance's duplicate key: lowercase, spelling variants mapped, digits spelled out,
    then only ASCII letters and digits kept (so spacing, punctuation and quotes vanish)."""
    text = text.lower()
    if _HAS_DIGIT.search(text):
        text = spell_numbers(text)
    table = spelling_variants()
    return "".join(table.get(w, w) for w in _NON_ALNUM.split(text))


def dialogue_key(turns) -> str:
    """The DD++ duplicate key of a dialogue: its utterances' :func:`canonical_text` joined by '|'."""
    return "|".join(canonical_text(t) for t in turns)
