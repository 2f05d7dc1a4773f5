"""Corpus-level word statistics: step 5 (split rare run-together words, drop non-ASCII
tokens) and step 6 (vocabulary truncation) of docs/algorithms.md#1-lsdscc-corpus.

Both steps need the corpus's own unigram counts, gathered in a first pass. Splitting is a
word-segmentation dynamic program over the corpus unigram distribution: a rare alphabetic
token (seen at most ``rare_max_count`` times, at least ``min_split_length`` letters) is
replaced by the most probable sequence of frequent corpus words (each seen at least
``piece_min_count`` times) that spells it, if one exists (``iloveyou`` -> ``i love you``).

Because each token's split is a fixed function of the counts, the vocabulary *after*
splitting is computed from the first counts alone (a token's count moves to its pieces);
no second pass over the data is needed. :func:`build_vocabulary` returns a
:class:`Vocabulary` that maps any token list in one call (:meth:`Vocabulary.apply`).
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Mapping

from lsdscc.corpus import cleaning

_SINGLE_LETTER_WORDS = frozenset({"a", "i"})
_MAX_PIECE = 20


def segment(word: str, counts: Mapping[str, int], piece_min_count: int, total: int) -> list[str] | None:
    """Split ``word`` into frequent corpus words maximizing the unigram log-probability.

    Returns the pieces (at least two), or None when no split into frequent words exists.
    A piece must be seen ``piece_min_count`` times and be two letters or more (``a`` and ``i``
    excepted). Ties go to the split with fewer pieces, then to the earlier-found one.

    >>> segment("iloveyou", {"i": 50, "love": 20, "you": 40, "lo": 10, "ve": 10}, 10, 1000)
    ['i', 'love', 'you']
    """
    n = len(word)
    log_total = math.log(total)
    best: list[tuple[float, int, int] | None] = [None] * (n + 1)  # (score, pieces, start)
    best[0] = (0.0, 0, 0)
    for end in range(1, n + 1):
        for start in range(max(0, end - _MAX_PIECE), end):
            prev = best[start]
            if prev is None:
                continue
            piece = word[start:end]
            if len(piece) < 2 and piece not in _SINGLE_LETTER_WORDS:
                continue
            c = counts.get(piece, 0)
            if c < piece_min_count or piece == word:
                continue
            cand = (prev[0] + math.log(c) - log_total, prev[1] + 1, start)
            cur = best[end]
            if cur is None or cand[0] > cur[0] + 1e-12 or (abs(cand[0] - cur[0]) <= 1e-12 and cand[1] < cur[1]):
                best[end] = cand
    if best[n] is None:
        return None
    pieces, end = [], n
    while end > 0:
        start = best[end][2]
        pieces.append(word[start:end])
        end = start
    pieces.reverse()
    return pieces if len(pieces) >= 2 else None


@dataclass(frozen=True)
class Vocabulary:
    """The result of steps 5 and 6: how to rewrite every token.

    ``splits``: rare token -> its pieces; ``kept``: the truncated vocabulary (step 6);
    ``counts``: word counts after splitting and non-ASCII removal, before truncation.
    """

    splits: Mapping[str, tuple]
    kept: frozenset
    unk_token: str
    counts: Mapping[str, int]

    def apply(self, tokens: Iterable[str]) -> list[str]:
        """Split rare run-together tokens, drop non-ASCII tokens, replace OOV with ``<unk>``."""
        kept, splits, unk = self.kept, self.splits, self.unk_token
        tokens = tokens if isinstance(tokens, list) else list(tokens)
        if not splits.keys().isdisjoint(tokens):  # (a C-level test: most texts have no split word)
            tokens = [piece for token in tokens for piece in splits.get(token, (token,))]
        return [token if token in kept else unk for token in tokens if token.isascii()]

    @functools.cached_property
    def unchanged(self) -> frozenset:
        """The tokens :meth:`apply` leaves as they are: kept, and not split (kept words are
        ASCII: :func:`build_vocabulary` keeps only ASCII pieces)."""
        return frozenset(self.kept - self.splits.keys())

    @functools.cached_property
    def rewrites(self) -> "_Rewrites":
        """Each token's :meth:`apply` as text ("" for a dropped token), worked out the first
        time the token is met (at most one entry per word of the corpus)."""
        return _Rewrites(self)

    def apply_text(self, text: str) -> str:
        """``" ".join(self.apply(text.split()))``: a text all of whose tokens are
        :attr:`unchanged` (most texts) takes one C-level set test; any other text maps each
        token through :attr:`rewrites`, also at C level (a token's rewrite does not depend on
        its neighbours, and empty rewrites, the dropped tokens, are left out of the join)."""
        native = cleaning.native_extension()  # (the same in C, lsdscc/corpus/_cleaning_native.c, where it is built)
        if native is not None:
            return native.apply_vocabulary(text, self.unchanged, self.rewrites)
        words = text.split()
        if self.unchanged.issuperset(words):
            return " ".join(words)
        return " ".join(filter(None, map(self.rewrites.__getitem__, words)))


class _Rewrites(dict):
    """token -> ``" ".join(vocabulary.apply([token]))``, filled on first use."""

    def __init__(self, vocabulary: Vocabulary):
        super().__init__()
        self.vocabulary = vocabulary

    def __missing__(self, token: str) -> str:
        text = self[token] = " ".join(self.vocabulary.apply([token]))
        return text


def build_vocabulary(
    raw_counts: Mapping[str, int],
    *,
    vocab_size: int,
    rare_max_count: int,
    piece_min_count: int,
    min_split_length: int,
    unk_token: str = "<unk>",
) -> Vocabulary:
    """Steps 5-6 from the raw token counts: choose splits, drop non-ASCII, truncate.

    The kept vocabulary is the ``vocab_size`` most frequent words after splitting (ties by
    the word itself, so the result is deterministic).
    """
    total = max(1, sum(raw_counts.values()))
    splits: dict[str, tuple] = {}
    for word, count in raw_counts.items():
        if count <= rare_max_count and len(word) >= min_split_length and word.isascii() and word.isalpha():
            pieces = segment(word, raw_counts, piece_min_count, total)
            if pieces:
                splits[word] = tuple(pieces)
    counts: Counter = Counter()
    for word, count in raw_counts.items():
        for piece in splits.get(word, (word,)):
            if piece.isascii():
                counts[piece] += count
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    kept = frozenset(word for word, _ in ranked[:vocab_size])
    return Vocabulary(splits=splits, kept=kept, unk_token=unk_token, counts=dict(counts))


def noise_composition(raw_counts: Mapping[str, int], long_word_length: int) -> dict:
    """Vocabulary noise (the paper's statistics): over-long and non-ASCII words.

    Returns types and tokens of each kind, and their shares of the whole vocabulary.
    """
    types = len(raw_counts)
    tokens = sum(raw_counts.values())
    out = {"vocabulary_types": types, "vocabulary_tokens": tokens}
    kinds = {
        "over_long": lambda w: len(w) > long_word_length,
        "non_ascii": lambda w: not w.isascii(),
    }
    for name, test in kinds.items():
        t = sum(1 for w in raw_counts if test(w))
        n = sum(c for w, c in raw_counts.items() if test(w))
        out[f"{name}_types"] = t
        out[f"{name}_tokens"] = n
        out[f"{name}_type_share"] = round(t / types, 6) if types else 0.0
        out[f"{name}_token_share"] = round(n / tokens, 6) if tokens else 0.0
    return out


def vocabulary_summary(raw_counts: Mapping[str, int], vocabulary: Vocabulary, long_word_length: int) -> dict:
    """What the stats report says about steps 5-6: the raw vocabulary's noise, the words split
    (with the 20 most frequent as examples), the vocabulary after splitting and kept."""
    kept_tokens = sum(c for w, c in vocabulary.counts.items() if w in vocabulary.kept)
    all_tokens = sum(vocabulary.counts.values())
    examples = sorted(vocabulary.splits.items(), key=lambda kv: (-raw_counts[kv[0]], kv[0]))[:20]
    return {
        "noise": noise_composition(raw_counts, long_word_length),
        "split_words": len(vocabulary.splits),
        "split_examples": {word: list(pieces) for word, pieces in examples},
        "vocabulary_after_splitting": len(vocabulary.counts),
        "vocabulary_kept": len(vocabulary.kept),
        "token_coverage_of_kept_vocabulary": round(kept_tokens / all_tokens, 6) if all_tokens else 0.0,
    }
