"""Clipped n-gram matches of a whole test set at once (numpy), for BLEU and MaxBLEU/MDS/PDS.

The per-query paths (:mod:`multiref.metrics._ngrams`, :func:`multiref.metrics.lsdscc.align_tokenized`)
count one query at a time in Python; scoring 10 systems on 6,740 queries makes that loop the
cost of a run. Here the reference side of a test set is counted once (:func:`reference_side`,
kept across systems scored on the same references) and every hypothesis of a system is
matched against it in a few array operations (:func:`clipped_matches`). Exact integer
arithmetic: the matches are the same integers as the per-query paths give.

Codes: tokens become ids 0..V-1 (reference tokens only; any other token is -1 and matches
nothing); the n-grams of order n are numbered by their rank among the distinct reference
n-grams of that order (``uniq[n]``, the sorted ``prev_code * M + token_id`` keys).
"""

from __future__ import annotations

from itertools import chain, repeat

import numpy as np


def _positions(sequences, token_id) -> tuple:
    """``(ids, owner)``: the token ids of all sequences end to end and the sequence of each."""
    lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
    ids = np.fromiter(map(token_id, chain.from_iterable(sequences), repeat(-1)), dtype=np.int64,
                      count=int(lengths.sum()))  # map in C: no Python frame per token
    return ids, np.repeat(np.arange(len(sequences), dtype=np.int64), lengths)


def _next_codes(prev, ids, owner, n, mult):
    """Raw keys ``prev * mult + token`` of the n-grams (order ``n`` >= 2) starting at each position,
    and whether each is a real n-gram (inside one sequence, every token known)."""
    size = len(ids) - n + 1
    if size <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    head, tail = prev[:size], ids[n - 1:]
    ok = (owner[:size] == owner[n - 1:]) & (head >= 0) & (tail >= 0)
    return head * mult + tail, ok


def reference_side(groups_per_item, k: int) -> dict:
    """Count the tokenized reference groups of a test set once.

    ``groups_per_item[i][g]`` is the list of tokenized references (token lists) of group g of
    item i (every group non-empty). Returns a dict: ``vocab`` (token -> id), ``mult``, ``uniq``
    (per order >= 2 the sorted raw keys of the reference n-grams), ``tables`` (per order:
    ``(keys, groups, maxima)`` sorted by ``key = item * width + code``, ``maxima`` the largest
    count of the n-gram in one reference of the group), ``width`` per order and ``lengths``
    (:func:`group_lengths`).
    """
    vocab: dict = {}
    refs, ref_item, ref_group = [], [], []
    for i, groups in enumerate(groups_per_item):
        for g, group in enumerate(groups):
            for ref in group:
                refs.append(ref)
                ref_item.append(i)
                ref_group.append(g)
                for tok in ref:
                    if tok not in vocab:
                        vocab[tok] = len(vocab)
    ids, owner = _positions(refs, vocab.get)
    ref_item, ref_group = np.asarray(ref_item, dtype=np.int64), np.asarray(ref_group, dtype=np.int64)
    mult = max(len(ids), len(vocab)) + 1
    side = {"vocab": vocab, "mult": mult, "uniq": [None], "tables": [], "width": [], "items": len(groups_per_item),
            "groups": max((len(g) for g in groups_per_item), default=0)}
    codes, ok = ids, np.ones(len(ids), dtype=bool)
    for n in range(1, k + 1):
        if n > 1:
            raw, ok = _next_codes(codes, ids, owner, n, mult)
            uniq, codes = np.unique(raw, return_inverse=True)
            side["uniq"].append(uniq)
        width = (len(vocab) if n == 1 else len(side["uniq"][-1])) + 1
        side["width"].append(width)
        side["tables"].append(_group_maxima(codes[ok], owner[:len(codes)][ok], ref_item, ref_group, width))
    side["lengths"] = group_lengths(refs, ref_item, ref_group, len(groups_per_item), side["groups"])
    return side


#: the padding of :func:`group_lengths`: farther from any hypothesis length than every real length
NO_LENGTH = 1 << 40


def group_lengths(refs, ref_item, ref_group, n_items: int, n_groups: int) -> np.ndarray:
    """``(items, groups, L)`` int64: the distinct reference lengths of each group, ascending, padded
    with :data:`NO_LENGTH` (so the first closest length is the shorter on ties, as NLTK's)."""
    length = np.fromiter(map(len, refs), dtype=np.int64, count=len(refs))
    cell = ref_item * max(n_groups, 1) + ref_group
    pairs = np.unique(np.stack([cell, length], axis=1), axis=0)  # sorted by cell, then length
    width = int(np.bincount(pairs[:, 0]).max()) if len(pairs) else 1
    start = np.searchsorted(pairs[:, 0], pairs[:, 0], "left")
    out = np.full((n_items * max(n_groups, 1), width), NO_LENGTH, dtype=np.int64)
    out[pairs[:, 0], np.arange(len(pairs)) - start] = pairs[:, 1]
    return out.reshape(n_items, max(n_groups, 1), width)


def closest_lengths(side: dict, hyp_lengths: np.ndarray, hyp_item: np.ndarray) -> np.ndarray:
    """``(hypotheses, groups)``: per hypothesis and group of its item, the group's reference length
    closest to the hypothesis's, the shorter on ties (:func:`multiref.metrics._ngrams.closest_ref_length`);
    :data:`NO_LENGTH` for groups the item lacks."""
    table = side["lengths"]
    out = np.empty((len(hyp_lengths), table.shape[1]), dtype=np.int64)
    step = max(1, 2_000_000 // (table.shape[1] * table.shape[2]))  # bounds the (hypotheses, groups, L) block
    for lo in range(0, len(hyp_lengths), step):
        lengths = table[hyp_item[lo:lo + step]]
        pick = np.abs(lengths - hyp_lengths[lo:lo + step, None, None]).argmin(axis=2)
        out[lo:lo + step] = np.take_along_axis(lengths, pick[..., None], axis=2)[..., 0]
    return out


def _group_maxima(codes, ref_of, ref_item, ref_group, width) -> tuple:
    """``(keys, groups, maxima)`` of one order: per (item, group, n-gram) the maximum count in
    one reference of the group, sorted by ``key = item * width + code``."""
    per_ref, counts = np.unique(ref_of * width + codes, return_counts=True)
    ref, code = np.divmod(per_ref, width)
    n_groups = int(ref_group.max()) + 1 if len(ref_group) else 1
    group_key = (ref_item[ref] * n_groups + ref_group[ref]) * width + code
    order = np.lexsort((counts, group_key))  # by key, the largest count last
    group_key, counts = group_key[order], counts[order]
    last = np.ones(len(group_key), dtype=bool)
    last[:-1] = group_key[1:] != group_key[:-1]
    group_key, counts = group_key[last], counts[last]
    item_group, code = np.divmod(group_key, width)
    item, group = np.divmod(item_group, n_groups)
    keys = item * width + code  # sorted: group_key is sorted by (item, group, code); re-sort by (item, code)
    order = np.argsort(keys, kind="stable")
    return keys[order], group[order], counts[order]


def clipped_matches(side: dict, hypotheses, hyp_item) -> np.ndarray:
    """Clipped matches ``[hypothesis, group, order]`` (int64) of tokenized hypotheses against
    the reference side; ``hyp_item[h]`` is the item of hypothesis h. Groups an item lacks are 0."""
    n_hyps, n_groups, k = len(hypotheses), side["groups"], len(side["width"])
    result = np.zeros((n_hyps * n_groups, k), dtype=np.int64)
    ids, owner = _positions(hypotheses, side["vocab"].get)
    hyp_item = np.asarray(hyp_item, dtype=np.int64)
    codes, ok = ids, ids >= 0
    for n in range(1, k + 1):
        if n > 1:
            raw, ok = _next_codes(codes, ids, owner, n, side["mult"])
            uniq = side["uniq"][n - 1]
            pos = np.minimum(np.searchsorted(uniq, raw), max(len(uniq) - 1, 0))
            ok &= (uniq[pos] == raw) if len(uniq) else False
            codes = np.where(ok, pos, -1)
        width = side["width"][n - 1]
        entries, counts = np.unique(owner[:len(codes)][ok] * width + codes[ok], return_counts=True)
        hyp, code = np.divmod(entries, width)
        keys, groups, maxima = side["tables"][n - 1]
        wanted = hyp_item[hyp] * width + code
        lo, hi = np.searchsorted(keys, wanted, "left"), np.searchsorted(keys, wanted, "right")
        span = hi - lo
        entry = np.repeat(np.arange(len(wanted)), span)
        index = lo[entry] + np.arange(len(entry)) - np.repeat(np.cumsum(span) - span, span)
        clipped = np.minimum(counts[entry], maxima[index])
        result[:, n - 1] = np.bincount(hyp[entry] * n_groups + groups[index], weights=clipped,
                                       minlength=n_hyps * n_groups).astype(np.int64)  # exact: small integers
    return result.reshape(n_hyps, n_groups, k)


def cached_side(memo: list, config: tuple, sources: list, freeze, build):
    """The reference side of a test set, from ``memo`` (a one-entry list kept by the caller) when
    the same references come again (the next system of a run), else ``build()`` (then stored).

    ``sources``: per item its references; ``freeze(source)`` a hashable copy. The contents are
    compared, not the objects, so a list changed in place between two calls is counted afresh.
    """
    key = tuple(map(freeze, sources))
    if memo and memo[0][0] == config and memo[0][1] == key:
        return memo[0][2]
    side = build()
    memo[:] = [(config, key, side)]
    return side
