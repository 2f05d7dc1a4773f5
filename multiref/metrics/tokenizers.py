"""Tokenizers by name: a small registry in the manner of sacrebleu's.

Every metric takes a tokenizer name and records it in its signature. All tokenizers here
need no downloaded NLTK data. NLTK is imported lazily, on first use of a tokenizer that
needs it.

Names:
- ``whitespace``: ``str.split()``; the right choice for pre-tokenized text such as the
  public LSDSCC test set and the multi-reference DailyDialog responses.
- ``treebank``: NLTK's ``TreebankWordTokenizer`` (Penn Treebank conventions: ``do n't``).
- ``nltk``: NLTK's ``word_tokenize(text, preserve_line=True)`` (Treebank with better
  punctuation handling; no punkt needed with ``preserve_line``).
- ``tweet``: NLTK's ``TweetTokenizer`` (keeps emoticons, hashtags and URLs whole).
- ``13a``: sacrebleu's default tokenizer (mteval-v13a), if sacrebleu is installed.
- ``char``: one token per non-space character.
- ``lsdscc``: the corpus's ``lsdscc`` text convention (``lsdscc.corpus.cleaning``, README "Text
  conventions"): the same cleaning and tokenization the corpus text went through
  (markdown, urls, emoticons, lowercase, ``didn t``, no ``.`` or ``/``, ``digits``), so
  hypotheses and references meet the corpus's vocabulary. ``<unk>`` is kept as a token.

Any of them can be combined with lower-casing (``get_tokenizer(name, lowercase=True)``).
"""

from __future__ import annotations

import functools
from typing import Callable

Tokenizer = Callable[[str], list]

TOKENIZER_NAMES = ("whitespace", "treebank", "nltk", "tweet", "13a", "char", "lsdscc")


def _whitespace(text: str) -> list:
    return text.split()


def _char(text: str) -> list:
    return [c for c in text if not c.isspace()]


def _lsdscc(text: str) -> list:
    from lsdscc.corpus.cleaning import clean_and_tokenize

    if UNK not in text:
        return clean_and_tokenize(text, convention="lsdscc")
    tokens = []
    for i, piece in enumerate(text.split(UNK)):  # a model trained on the corpus writes <unk>
        tokens += ([UNK] if i else []) + clean_and_tokenize(piece, convention="lsdscc")
    return tokens


UNK = "<unk>"  # the corpus's unknown-word token (lsdscc.corpus.config.CorpusConfig.unk_token)


@functools.lru_cache(maxsize=None)
def _build(name: str) -> Tokenizer:
    if name == "whitespace":
        return _whitespace
    if name == "char":
        return _char
    if name == "lsdscc":
        return _lsdscc
    if name == "treebank":
        from nltk.tokenize import TreebankWordTokenizer

        return TreebankWordTokenizer().tokenize
    if name == "nltk":
        from nltk.tokenize import word_tokenize

        return functools.partial(word_tokenize, preserve_line=True)
    if name == "tweet":
        from nltk.tokenize import TweetTokenizer

        return TweetTokenizer().tokenize
    if name == "13a":
        try:
            from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
        except ImportError as exc:  # pragma: no cover - sacrebleu is a declared dependency
            raise ValueError("tokenizer '13a' needs the sacrebleu package") from exc
        tok = Tokenizer13a()
        return lambda text: tok(text).split()
    raise ValueError(f"unknown tokenizer {name!r}; choose one of: {', '.join(TOKENIZER_NAMES)}")


def get_tokenizer(name: str = "whitespace", lowercase: bool = False) -> Tokenizer:
    """Return a function ``str -> list[str]`` for tokenizer ``name``.

    Raises ``ValueError`` naming the choices when ``name`` is unknown.
    """
    base = _build(name)
    if not lowercase:
        return base
    return lambda text: base(text.lower())

