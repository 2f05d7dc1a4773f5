"""Word vectors for the embedding metrics when the user supplies none (docs/algorithms.md sections 4, 8).

:func:`train_dailydialog_vectors` trains a seeded gensim Word2Vec on the utterances of a
DailyDialog ``dialogues_*.txt`` file (one dialogue per line, utterances separated by
``__eou__``), tokenized the way the metric will tokenize (default: whitespace, lowercased),
and saves the KeyedVectors. With ``workers=1``, a fixed ``seed`` and a hash function that does
not depend on ``PYTHONHASHSEED``, the same file and options give the same vectors.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass

from multiref.util.errors import UserError
from multiref.util.defaults import TOKENIZER


@dataclass(frozen=True)
class VectorConfig:
    """Word2Vec options (recorded in the analysis report)."""

    vector_size: int = 100
    window: int = 5
    min_count: int = 2
    epochs: int = 5
    sg: int = 0
    seed: int = 13
    tokenizer: str = TOKENIZER
    lowercase: bool = True

    def to_dict(self) -> dict:
        return asdict(self)


def stable_hash(text: str) -> int:
    """A hash of a string that is the same in every process (gensim's default is ``hash``)."""
    return int.from_bytes(hashlib.md5(text.encode("utf-8")).digest()[:4], "little")


def read_dailydialog_utterances(path: str, tokenizer: str = TOKENIZER, lowercase: bool = True) -> list:
    """Tokenized utterances of a DailyDialog dialogues file (``__eou__``-separated)."""
    from multiref.metrics.tokenizers import get_tokenizer

    if not os.path.isfile(path):
        raise UserError(f"DailyDialog dialogues file not found: {path}")
    tokenize = get_tokenizer(tokenizer, lowercase)
    sentences = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            for utterance in line.split("__eou__"):
                tokens = tokenize(utterance.strip())
                if tokens:
                    sentences.append(tokens)
    if not sentences:
        raise UserError(f"{path}: no utterances found (expected DailyDialog lines with __eou__)")
    return sentences


def train_vectors(sentences: list, config: VectorConfig = VectorConfig()):
    """Train seeded Word2Vec (``workers=1``) on tokenized sentences; return its KeyedVectors."""
    from gensim.models import Word2Vec

    model = Word2Vec(
        sentences=sentences,
        vector_size=config.vector_size,
        window=config.window,
        min_count=config.min_count,
        epochs=config.epochs,
        sg=config.sg,
        seed=config.seed,
        workers=1,
        hashfxn=stable_hash,
    )
    return model.wv


def train_dailydialog_vectors(path: str, output: str | None = None, config: VectorConfig = VectorConfig()):
    """Train vectors on a DailyDialog dialogues file; save them to ``output`` (.kv) if given.

    Returns the gensim ``KeyedVectors``, ready for ``vectors=`` of the embedding metrics.
    """
    vectors = train_vectors(read_dailydialog_utterances(path, config.tokenizer, config.lowercase), config)
    if output:
        os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
        vectors.save(output)
    return vectors


def load_vectors(path: str):
    """Load KeyedVectors: gensim ``.kv``, word2vec ``.bin`` (binary) or word2vec text."""
    from gensim.models import KeyedVectors

    if not os.path.isfile(path):
        raise UserError(f"vectors file not found: {path}")
    try:
        if path.endswith(".kv"):
            return KeyedVectors.load(path)
        return KeyedVectors.load_word2vec_format(path, binary=path.endswith(".bin"))
    except (ValueError, OSError, EOFError) as exc:
        raise UserError(f"{path}: cannot read word vectors ({exc})") from None
