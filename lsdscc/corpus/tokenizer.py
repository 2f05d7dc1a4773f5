"""The ``lsdscc`` score tokenizer: the corpus's ``lsdscc`` text convention
(:mod:`lsdscc.corpus.cleaning`, docs/corpus.md#text-conventions), so that hypotheses and references
meet the corpus's vocabulary: markdown, urls, emoticons, lowercase, ``didn t``, no ``.`` or
``/``, ``digits``. ``<unk>`` is kept as a token.

A plug-in of :mod:`multiref.metrics.tokenizers` (the core does not import the dataset
packages): setup.py declares :func:`lsdscc_tokenizer` as the entry point ``lsdscc`` of the
group ``multiref.metrics.tokenizers``, and :func:`register` registers it explicitly (the ``multiref``
command calls it, so a checkout that is not installed has it too).
"""

from __future__ import annotations

UNK = "<unk>"  # the corpus's unknown-word token (lsdscc.corpus.config.CorpusConfig.unk_token)


def tokenize(text: str) -> list:
    """``text`` cleaned and tokenized with the ``lsdscc`` convention; ``<unk>`` stays a token."""
    from lsdscc.corpus.cleaning import clean_and_tokenize

    if UNK not in text:
        return clean_and_tokenize(text, convention="lsdscc")
    tokens = []
    for i, piece in enumerate(text.split(UNK)):  # a model trained on the corpus writes <unk>
        tokens += ([UNK] if i else []) + clean_and_tokenize(piece, convention="lsdscc")
    return tokens


def lsdscc_tokenizer():
    """The tokenizer factory of the plug-in: returns :func:`tokenize`."""
    return tokenize


def register() -> None:
    """Register ``lsdscc`` with :func:`multiref.metrics.tokenizers.register_tokenizer` (idempotent)."""
    from multiref.metrics.tokenizers import register_tokenizer

    register_tokenizer("lsdscc", lsdscc_tokenizer)
