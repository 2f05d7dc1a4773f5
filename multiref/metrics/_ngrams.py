"""N-gram counting shared by the BLEU family (docs/algorithms.md sections 3, 6 and 8).

Pure functions over token lists; counts are plain dicts keyed by token tuples, one dict
per order (index 0 holds unigrams). These are the building blocks that let MaxBLEU count
each reference group once per query and each hypothesis once, instead of once per pair.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from typing import Sequence


def ngram_counts(tokens: Sequence[str], max_order: int) -> tuple:
    """Counts of every n-gram of ``tokens`` for n = 1..max_order.

    Returns a tuple of ``max_order`` dicts ``{ngram tuple: count}`` (``Counter`` objects);
    the dict for an order longer than the sentence is empty.
    """
    tokens = tuple(tokens)
    # zip of shifted copies yields the n-gram tuples; Counter counts them in C
    return tuple(Counter(zip(*[tokens[i:] for i in range(n)])) for n in range(1, max_order + 1))


def max_ref_counts(references: Sequence[Sequence[str]], max_order: int) -> tuple:
    """For each order, the maximum count of each n-gram in any single reference.

    This is BLEU's clipping table (Papineni et al. 2002; NLTK's ``modified_precision``).
    Returns a tuple of ``max_order`` dicts.
    """
    table = tuple({} for _ in range(max_order))
    for ref in references:
        for merged, counts in zip(table, ngram_counts(ref, max_order)):
            for gram, c in counts.items():
                if c > merged.get(gram, 0):
                    merged[gram] = c
    return table


def clipped_matches(hyp_counts: dict, ref_max: dict) -> int:
    """Sum over the hypothesis n-grams of ``min(count in hyp, max count in any reference)``."""
    total = 0
    for gram in hyp_counts.keys() & ref_max.keys():  # set intersection in C: only shared n-grams
        c, m = hyp_counts[gram], ref_max[gram]
        total += c if c < m else m
    return total


def closest_ref_length(ref_lengths: Sequence[int], hyp_len: int) -> int:
    """The reference length closest to ``hyp_len``; ties go to the shorter (as NLTK)."""
    if len(ref_lengths) == 1:  # one reference length: nothing to choose (the common case in groups)
        return ref_lengths[0]
    if not ref_lengths:
        raise ValueError("closest_ref_length: no references")
    return min(ref_lengths, key=lambda r: (abs(r - hyp_len), r))


def closest_sorted_length(ascending: Sequence[int], hyp_len: int) -> int:
    """:func:`closest_ref_length` of distinct reference lengths given in ascending order (a
    reference group's): the two neighbours of ``hyp_len`` found by bisection; ties go to the shorter."""
    i = bisect_left(ascending, hyp_len)
    if i == len(ascending):
        if not ascending:
            raise ValueError("closest_ref_length: no references")
        return ascending[-1]
    if i and hyp_len - ascending[i - 1] <= ascending[i] - hyp_len:
        return ascending[i - 1]
    return ascending[i]
