"""Synthetic corruptions of positive responses, to probe metrics (docs/algorithms.md#5-dd).

"Reverse the word order, shuffle it, keep only nouns, drop punctuation, drop stop words,
replace words by synonyms." Each corruption maps one response to one string of tokens
joined by spaces (tokens from :func:`tokenize`: words, contractions and punctuation apart).

- ``reverse``: tokens in reverse order.
- ``shuffle``: tokens shuffled with ``random.Random(f"{seed}:{key}")`` (key = row id and
  response number), so reruns agree.
- ``drop_punctuation``: tokens with no letter or digit removed.
- ``drop_stopwords``: tokens in the shipped list ``data/stopwords_en.txt`` (lowercased) removed
  (NLTK's stopwords corpus is not assumed to be installed).
- ``nouns``: only tokens that NLTK's perceptron tagger tags NN* kept.
- ``synonyms``: each noun, verb, adjective or adverb replaced by the first WordNet lemma of
  its first synset (of the tagged part of speech) that differs from the word; others kept.

``nouns`` and ``synonyms`` need NLTK data (``averaged_perceptron_tagger_eng``, and
``wordnet`` for synonyms) from the directories in NLTK_DATA; without it they raise a
UserError naming NLTK_DATA.
"""

from __future__ import annotations

import functools
import os
import random
import re

from multiref.util.errors import UserError

CORRUPTIONS = ("reverse", "shuffle", "drop_punctuation", "drop_stopwords", "nouns", "synonyms")
NEEDS_NLTK = {"nouns": ("taggers/averaged_perceptron_tagger_eng",),
              "synonyms": ("taggers/averaged_perceptron_tagger_eng", "corpora/wordnet")}
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:['\u2019][A-Za-z]+)*|[^\sA-Za-z0-9]")
_HAS_ALNUM = re.compile(r"[A-Za-z0-9]")


def tokenize(text: str) -> list[str]:
    """Words (with an attached contraction: don't, I'll), numbers and single punctuation marks."""
    return _TOKEN.findall(text)


@functools.lru_cache(maxsize=1)
def stopwords() -> frozenset:
    """The shipped English stop-word list."""
    path = os.path.join(os.path.dirname(__file__), "data", "stopwords_en.txt")
    with open(path, encoding="utf-8") as fh:
        return frozenset(w.strip() for w in fh if w.strip() and not w.startswith("#"))


def check_nltk_data(names) -> None:
    """Raise UserError naming NLTK_DATA if a corruption in ``names`` lacks its NLTK data."""
    needed = sorted({res for n in names for res in NEEDS_NLTK.get(n, ())})
    if not needed:
        return
    import nltk

    missing = []
    for resource in needed:
        try:
            nltk.data.find(resource)
        except LookupError:
            try:
                nltk.data.find(resource + ".zip")
            except LookupError:
                missing.append(resource)
    if missing:
        wanted = ", ".join(n for n in names if n in NEEDS_NLTK)
        raise UserError(
            f"corruption {wanted} needs NLTK data {', '.join(missing)}: none found in NLTK_DATA="
            f"{os.environ.get('NLTK_DATA', '(unset)')} or NLTK's default folders; install it with "
            f"python -m nltk.downloader -d DIR averaged_perceptron_tagger_eng wordnet and set NLTK_DATA=DIR")


def _reverse(tokens, key, seed):
    return tokens[::-1]


def _shuffle(tokens, key, seed):
    tokens = list(tokens)
    random.Random(f"{seed}:{key}").shuffle(tokens)
    return tokens


def _drop_punctuation(tokens, key, seed):
    return [t for t in tokens if _HAS_ALNUM.search(t)]


def _drop_stopwords(tokens, key, seed):
    stop = stopwords()
    return [t for t in tokens if t.lower().replace("\u2019", "'") not in stop]


def _tag(tokens):
    import nltk

    return nltk.pos_tag(tokens)


def _nouns(tokens, key, seed):
    return [w for w, tag in _tag(tokens) if tag.startswith("NN")]


_WN_POS = {"N": "n", "V": "v", "J": "a", "R": "r"}


@functools.lru_cache(maxsize=65536)
def _synonym(word: str, pos: str) -> str:
    from nltk.corpus import wordnet

    for synset in wordnet.synsets(word, pos=pos)[:1]:
        for lemma in synset.lemma_names():
            candidate = lemma.replace("_", " ")
            if candidate.lower() != word.lower():
                return candidate
    return word


def _synonyms(tokens, key, seed):
    out = []
    for word, tag in _tag(tokens):
        pos = _WN_POS.get(tag[:1])
        out.append(_synonym(word, pos) if pos and _HAS_ALNUM.search(word) else word)
    return out


_FUNCTIONS = {"reverse": _reverse, "shuffle": _shuffle, "drop_punctuation": _drop_punctuation,
              "drop_stopwords": _drop_stopwords, "nouns": _nouns, "synonyms": _synonyms}


def corrupt(text: str, name: str, *, key: str = "", seed: int = 0) -> str:
    """Apply corruption ``name`` to ``text``; ``key`` and ``seed`` seed ``shuffle``."""
    if name not in _FUNCTIONS:
        raise ValueError(f"unknown corruption {name!r}; choose from {', '.join(CORRUPTIONS)}")
    return " ".join(_FUNCTIONS[name](tokenize(text), key, seed))
