"""Word-embedding metrics: Embedding Average, Vector Extrema, Greedy Matching (docs/algorithms.md
sections 4 and 8), with user-supplied word vectors.

Definitions (for token lists; words without a vector are skipped):

- **Embedding Average** (``embedding_average``): sentence vector = sum of the word vectors
  divided by its norm; score = cosine of the two sentence vectors.
- **Vector Extrema** (``vector_extrema``): sentence vector = per dimension, the value of
  largest absolute size among the words, keeping its sign (on a tie between +v and -v the
  positive value wins, as in nlg-eval's ``extrema_score``); score = cosine.
- **Greedy Matching** (``greedy_matching``): for each hypothesis word, the best cosine with any
  reference word, averaged over hypothesis words; the same from the reference side; score =
  the mean of the two directions.

A sentence with no word that has a vector scores 0 against anything; such hypotheses and
references are counted in ``Score.extra`` (``hypotheses_without_vectors``,
``references_without_vectors``). A zero sentence vector also gives cosine 0.

Multi-reference (option ``aggregate``): ``max`` over references (default, section 4) or ``mean``.

Vectors (option ``vectors``): a path to gensim ``KeyedVectors`` saved with ``.save()``
(``.kv``), a word2vec text file (``.txt``/``.vec``, optionally ``.gz``) or binary file
(``.bin``), or a ``KeyedVectors`` object. ``vectors_format`` (``kv`` | ``word2vec_text`` |
``word2vec_binary`` | ``glove_text``: text without the header line) overrides the choice by
extension. gensim is imported only when a file is loaded. The signature records the file's
basename, the dimension and the vocabulary size.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Sequence

from multiref.util.errors import UserError
from multiref.metrics.base import Item, Metric, Score
from multiref.util.defaults import TOKENIZER

VECTOR_FORMATS = ("kv", "word2vec_text", "word2vec_binary", "glove_text")
_EXTENSIONS = {".kv": "kv", ".txt": "word2vec_text", ".vec": "word2vec_text", ".bin": "word2vec_binary"}
_SENTENCE_CACHE_SIZE = 200_000
#: the largest vector dimension a word2vec header may claim (common vectors have 50 to 1,000)
MAX_DIMENSION = 100_000
#: fewest bytes one stored value takes: a digit and a separator (text), a float32 (binary)
_BYTES_PER_VALUE = {"word2vec_text": 2, "word2vec_binary": 4}
_GZIP_MAX_RATIO = 1032  # deflate's largest expansion: a .gz file holds at most this many times its size

# loaded files, shared by the three metrics: (realpath, format, mtime, size) -> KeyedVectors
_LOADED: dict = {}


def vectors_format_for(path: str) -> str:
    """The vectors format implied by a file name's extension (``.gz`` is looked through)."""
    name = os.path.basename(str(path)).lower()
    if name.endswith(".gz"):
        name = name[:-3]
    ext = os.path.splitext(name)[1]
    if ext not in _EXTENSIONS:
        raise UserError(
            f"{path}: cannot tell the word-vector format from the extension {ext or '(none)'!r}; "
            f"use .kv, .txt, .vec or .bin, or set vectors_format to one of: {', '.join(VECTOR_FORMATS)}"
        )
    return _EXTENSIONS[ext]


def load_vectors(path, vectors_format: str | None = None):
    """Load gensim ``KeyedVectors`` from ``path`` (format by extension unless given).

    Raises :class:`UserError` naming the path when it is missing or unreadable.
    Loaded files are cached per process (keyed by real path, format, mtime and size).
    """
    path = os.fspath(path)
    if vectors_format is not None and vectors_format not in VECTOR_FORMATS:
        raise ValueError(f"unknown vectors_format {vectors_format!r}; choose one of: {', '.join(VECTOR_FORMATS)}")
    if not os.path.isfile(path):
        raise UserError(f"{path}: word-vector file not found")
    fmt = vectors_format or vectors_format_for(path)
    stat = os.stat(path)
    if fmt in _BYTES_PER_VALUE:
        check_header(path, fmt, stat.st_size)
    key = (os.path.realpath(path), fmt, stat.st_mtime_ns, stat.st_size)
    if key in _LOADED:
        return _LOADED[key]
    from gensim.models import KeyedVectors

    try:
        if fmt == "kv":
            kv = KeyedVectors.load(path, mmap="r")
        else:
            kv = KeyedVectors.load_word2vec_format(
                path, binary=(fmt == "word2vec_binary"), no_header=(fmt == "glove_text"), unicode_errors="replace"
            )
    except Exception as exc:  # gensim raises many kinds (ValueError, UnpicklingError, EOFError...)
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"{path}: cannot read word vectors as {fmt}: {first}") from exc
    if not hasattr(kv, "key_to_index"):
        raise UserError(f"{path}: not a gensim KeyedVectors file (got {type(kv).__name__})")
    _LOADED[key] = kv
    return kv


def check_header(path: str, fmt: str, size: int) -> tuple:
    """``(count, dimension)`` of a word2vec file's header line, after checking that the file
    can hold that many values (gensim allocates them before reading: a two-line file claiming
    2e9 words took a minute and 16 GB) and that the dimension is at most :data:`MAX_DIMENSION`.
    UserError naming the file otherwise."""
    import gzip

    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as fh:
            line = fh.readline(200)
    except (OSError, EOFError) as exc:
        raise UserError(f"{path}: cannot read word vectors as {fmt}: {exc}") from None
    parts = line.split()
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise UserError(f"{path}: cannot read word vectors as {fmt}: the first line must be the header '<count> <dimensions>', "
                        f"got {line[:40].decode('ascii', 'replace')!r}")
    count, dimension = int(parts[0]), int(parts[1])
    if dimension > MAX_DIMENSION:
        raise UserError(f"{path}: cannot read word vectors as {fmt}: the header's {dimension} dimensions is over "
                        f"the limit of {MAX_DIMENSION}")
    capacity = size * (_GZIP_MAX_RATIO if path.endswith(".gz") else 1)
    if count < 1 or dimension < 1 or count * dimension * _BYTES_PER_VALUE[fmt] > capacity:
        raise UserError(f"{path}: cannot read word vectors as {fmt}: the header claims {count} vectors of {dimension} dimensions, "
                        f"which a file of {size} bytes cannot hold")
    return count, dimension


# -- pure functions on numpy arrays (rows = word vectors of one sentence) -----------------
def _unit(vector):
    import numpy as np

    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def _dots(unit_vector, unit_vectors: list) -> list:
    """Cosines of a unit (or zero) vector with several unit (or zero) vectors."""
    import numpy as np

    return [float(x) for x in np.stack(unit_vectors) @ unit_vector]


def average_vector(word_vectors):
    """Sum of the word vectors divided by its norm (the zero vector stays zero)."""
    import numpy as np

    total = word_vectors.sum(axis=0)
    norm = float(np.linalg.norm(total))
    return total / norm if norm > 0 else total


def extrema_vector(word_vectors):
    """Per dimension, the value of largest absolute size (sign kept; +v wins a tie with -v)."""
    import numpy as np

    maxes = word_vectors.max(axis=0)
    mins = word_vectors.min(axis=0)
    return np.where(np.abs(mins) > np.abs(maxes), mins, maxes)


def unit_rows(word_vectors):
    """Each row divided by its norm (zero rows stay zero, so their cosines are 0)."""
    import numpy as np

    norms = np.linalg.norm(word_vectors, axis=1, keepdims=True)
    return np.divide(word_vectors, norms, out=np.zeros_like(word_vectors), where=norms > 0)


def greedy_matching(hyp_unit, ref_unit) -> float:
    """Mean of the two directions' mean best cosine, from unit-row matrices."""
    sims = hyp_unit @ ref_unit.T
    return float((sims.max(axis=1).mean() + sims.max(axis=0).mean()) / 2.0)


def greedy_matching_many(hyp_unit, ref_units: list) -> list:
    """:func:`greedy_matching` of one hypothesis against several references, one matrix product."""
    import numpy as np

    if len(ref_units) == 1:
        return [greedy_matching(hyp_unit, ref_units[0])]
    sims = hyp_unit @ np.concatenate(ref_units).T            # |hyp| x sum |ref|
    lengths = np.array([len(r) for r in ref_units])
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    hyp_side = np.maximum.reduceat(sims, starts, axis=1).mean(axis=0)   # per reference
    ref_side = np.add.reduceat(sims.max(axis=0), starts) / lengths
    return [float(x) for x in (hyp_side + ref_side) / 2.0]


class _EmbeddingMetric(Metric):
    """Shared option handling, vector lookup and sentence-vector caching."""

    version = "1"
    aggregates = ("max", "mean")
    default_aggregate = "max"

    def __init__(self, vectors=None, vectors_format: str | None = None, tokenizer: str = TOKENIZER,
                 lowercase: bool = False, aggregate: str | None = None):
        super().__init__(tokenizer=tokenizer, lowercase=lowercase, aggregate=aggregate)
        if vectors is None or (isinstance(vectors, str) and not vectors):
            raise ValueError(
                f"{self.name}: word vectors are required: pass --vectors PATH (gensim KeyedVectors .kv, "
                "word2vec text .txt/.vec or binary .bin) or vectors=<KeyedVectors>"
            )
        if isinstance(vectors, (str, os.PathLike)):
            self.kv = load_vectors(vectors, vectors_format)
            self.vectors_name = os.path.basename(os.fspath(vectors))
        elif hasattr(vectors, "key_to_index") and hasattr(vectors, "vectors"):
            if vectors_format is not None:
                raise ValueError(f"{self.name}: vectors_format applies to a file, not to a KeyedVectors object")
            self.kv = vectors
            self.vectors_name = "object"
        else:
            raise TypeError(f"{self.name}: vectors must be a path or a gensim KeyedVectors, got {type(vectors).__name__}")
        self.dimension = int(self.kv.vector_size)
        self.vocab_size = len(self.kv.key_to_index)
        self._cache: dict = {}
        self._counts = {"hypotheses_without_vectors": 0, "references_without_vectors": 0}

    def signature_fields(self) -> list:
        return super().signature_fields() + [
            ("vectors", self.vectors_name), ("dim", self.dimension), ("vocab", self.vocab_size)
        ]

    # -- sentence representations (cached by token tuple) --------------------------------
    def _word_matrix(self, tokens):
        """float64 matrix of the vectors of the tokens that have one, or None."""
        import numpy as np

        index = self.kv.key_to_index
        rows = [index[t] for t in tokens if t in index]
        if not rows:
            return None
        return np.asarray(self.kv.vectors[rows], dtype=np.float64)

    def _represent(self, matrix):
        """The metric's sentence representation of a word matrix."""
        raise NotImplementedError

    def sentence_repr(self, tokens):
        """Cached representation of a token list; None when no token has a vector."""
        key = tuple(tokens)
        if key in self._cache:
            return self._cache[key]
        matrix = self._word_matrix(tokens)
        value = None if matrix is None else self._represent(matrix)
        if len(self._cache) >= _SENTENCE_CACHE_SIZE:
            self._cache.clear()
        self._cache[key] = value
        return value

    def pair_score(self, hypothesis: list, reference: list) -> float:
        h, r = self.sentence_repr(hypothesis), self.sentence_repr(reference)
        if h is None or r is None:
            return 0.0
        return self._compare_many(h, [r])[0]

    def _compare_many(self, hyp_repr, ref_reprs: list) -> list:
        """Scores of one hypothesis representation against several (all not None)."""
        raise NotImplementedError

    def tokenized_sentence_score(self, hyp: list, refs: list) -> float:
        """All references in one numpy call; then max or mean (a sentence without vectors: 0)."""
        if not refs:
            raise ValueError(f"{self.name}: no references")
        values = [0.0] * len(refs)
        h = self.sentence_repr(hyp)
        if h is not None:
            reprs = [self.sentence_repr(r) for r in refs]
            present = [i for i, r in enumerate(reprs) if r is not None]
            if present:
                for i, v in zip(present, self._compare_many(h, [reprs[i] for i in present])):
                    values[i] = v
        return float(max(values)) if self.aggregate == "max" else float(sum(values) / len(values))

    # -- counting sentences without vectors -------------------------------------------------
    def item_score(self, item: Item) -> float | None:
        if not item.hypotheses:
            raise ValueError(f"{self.name}: item {item.id!r} has no hypotheses")
        refs = [self.tokenize(r) for r in item.references]
        if not refs:
            raise ValueError(f"{self.name}: item {item.id!r} has no references")
        hyps = [self.tokenize(h) for h in item.hypotheses]
        self._counts["hypotheses_without_vectors"] += sum(self.sentence_repr(h) is None for h in hyps)
        self._counts["references_without_vectors"] += sum(self.sentence_repr(r) is None for r in refs)
        values = [self.tokenized_sentence_score(h, refs) for h in hyps]
        return sum(values) / len(values)

    def score_items(self, items: Sequence[Item]) -> Score:
        for key in self._counts:
            self._counts[key] = 0
        result = super().score_items(items)
        return dataclasses.replace(result, extra={**result.extra, **self._counts})

    def __getstate__(self):  # keep pickles (Beam) small: the cache is rebuilt on the worker
        state = dict(self.__dict__)
        state["_cache"] = {}
        return state


class EmbeddingAverage(_EmbeddingMetric):
    """Embedding Average (``embedding_average``). Options: ``vectors``, ``vectors_format``,
    ``tokenizer``, ``lowercase``, ``aggregate`` (max | mean)."""

    name = "embedding_average"

    def _represent(self, matrix):
        return _unit(average_vector(matrix))

    def _compare_many(self, hyp_repr, ref_reprs: list) -> list:
        return _dots(hyp_repr, ref_reprs)


class VectorExtrema(_EmbeddingMetric):
    """Vector Extrema (``vector_extrema``). Options as :class:`EmbeddingAverage`."""

    name = "vector_extrema"

    def _represent(self, matrix):
        return _unit(extrema_vector(matrix))

    def _compare_many(self, hyp_repr, ref_reprs: list) -> list:
        return _dots(hyp_repr, ref_reprs)


class GreedyMatching(_EmbeddingMetric):
    """Greedy Matching (``greedy_matching``). Options as :class:`EmbeddingAverage`."""

    name = "greedy_matching"

    def _represent(self, matrix):
        return unit_rows(matrix)

    def _compare_many(self, hyp_repr, ref_reprs: list) -> list:
        return greedy_matching_many(hyp_repr, ref_reprs)
