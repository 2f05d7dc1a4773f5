"""LSDSCC's diversity-oriented metrics: MaxBLEU, MDS and PDS (docs/algorithms.md#3-lsdscc-metrics).

For one query with hypotheses h_1..h_m and reference groups r_1..r_K:

- each hypothesis aligns to the group k maximizing multi-reference BLEU of h against all
  references of group k (ties go to the first group, as ``numpy.argmax``);
- ``maxbleu``: the mean over hypotheses of that maximum, then the mean over queries;
- ``mds``: the share of groups covered, |{aligned k}| / K, averaged over queries;
- ``pds``: the share of references covered, sum of |r_k| over aligned k / sum_j |r_j|.

The BLEU inside the alignment takes BLEU's options (``order``, ``weights``, ``smoothing``,
``brevity_penalty``) and they are part of the signature. **Defaults**: ``smoothing="add1"``,
``brevity_penalty=False``, ``order=4``: the BLEU of the public LSDSCC scorer
(github.com/neural-dialogue-metrics/LSDSCC, ``BleuAligner``: Google's ``compute_bleu`` with
``smooth=True`` and no brevity penalty; docs/algorithms.md#8-metric-definitions). Note that with these
defaults an empty hypothesis scores 1.0 against every group (all add-one precisions are
1/1), exactly as that scorer does.

Ties (option ``ties``, in the signature). ``auto`` (the default of the library, ``multiref
score`` and the evaluate module alike): ``lsdscc`` with the public scorer's BLEU (the defaults
above), ``first`` with any other BLEU options. ``first``: groups in the order the references
give them, the first best group wins, groups compared exactly (:func:`exact_order`: the BLEU
terms as rationals, so two groups whose BLEU is equal in exact arithmetic tie, and the first
wins, whatever the last bit of their floats).
``lsdscc``: the public scorer's behaviour, to the last digit of MDS, PDS and MaxBLEU. It
sorts a query's groups by ``int(group_id)``, ids that are not integers (the public file's
``"null"``) numbered after the others (``len(groups)``, ``len(groups) + 1``, ... in file
order; so ``"null"`` comes last when the ids are ``1..n``); it sums the weighted log
precisions left to right in floating point, so two groups with the same BLEU in exact
arithmetic can differ in the last bit and the larger wins (``numpy.argmax``); a query's
MaxBLEU is ``numpy.mean`` of its hypotheses' values (pairwise summation), and the test-set
means are left-to-right sums divided by the count (``numpy.mean(..., axis=0)`` over
per-query rows). It needs the public scorer's BLEU (``smoothing="add1"``, no brevity
penalty). This is the behaviour of the scorer under Python 3.11 and earlier; from Python
3.12 on, the built-in ``sum`` of floats is compensated, and the public scorer itself breaks
such ties differently there.

Speed (``benchmarks/bench_metrics.py``): a query's references are counted once; n-grams
become integers; the clipped matches of all (hypothesis, group) pairs come from set
intersections or, with 8 or more hypotheses per query, from one numpy pass; the alignment
of a query is cached, so ``maxbleu``, ``mds`` and ``pds`` with the same options share one
computation; a BLEU value is computed once per distinct (hypothesis length, clipped
matches), about a tenth of the pairs, then multiplied by the brevity penalty. The numbers are identical to sentence
BLEU per (hypothesis, group) pair.
A test set of :data:`BATCH_MIN_ITEMS` items or more (either tie rule) with fewer than
:data:`BATCH_MAX_HYPOTHESES` hypotheses per item on average (the benchmark's 50 included) is
aligned at once (:func:`_batch_alignment`: the clipped matches of every pair from
:mod:`multiref.metrics._batch_matches`, n-grams ranked among their own query's reference n-grams,
the references counted once for all systems of a run, the brevity penalty once per (query,
hypothesis length) from each group's closest reference length); the same integers and the same
BLEU values.
"""

from __future__ import annotations

import functools
from collections import Counter
from itertools import chain, repeat
from typing import Sequence

from multiref.metrics._ngrams import closest_sorted_length
from multiref.metrics.base import Item, Metric, Score
from multiref.metrics.bleu import brevity_penalty_factor, sentence_scorer, set_bleu_options, stat_order
from multiref.metrics.lsdscc_ties import (DEFAULT_TIES, EXACT_SMOOTHINGS, NEAR, TIES, auto_ties, check_public_bleu,
                                          exact_compare, near, public_group_order, public_scorer, sequential_mean)
from multiref.metrics.tokenizers import get_tokenizer, tokenize_all
from multiref.util.defaults import TOKENIZER


def _codes(ids: list, base: int, k: int) -> list:
    """Per order n = 1..k, the n-grams of a token-id sequence as base-``base`` integers."""
    out = [ids]
    prev = ids
    for n in range(1, k):
        prev = [x * base + y for x, y in zip(prev, ids[n:])]
        out.append(prev)
    return out


def _reference_tables(groups, k: int):
    """The query's reference side, counted once: ``(vocab, base, maxima, lengths)``.

    ``vocab`` maps each reference token to an id 1..V-1 (0 is any other token), ``base`` = V;
    an n-gram is the base-V integer of its ids. ``maxima[g][n]`` maps each (n+1)-gram code of
    group g to its maximum count in one reference of the group; ``lengths[g]`` are the
    group's reference lengths.
    """
    vocab: dict = {}
    for i, group in enumerate(groups):
        if not group:
            raise ValueError(f"lsdscc: reference group {i} is empty")
        for ref in group:
            for tok in ref:
                if tok not in vocab:
                    vocab[tok] = len(vocab) + 1
    base = len(vocab) + 1
    maxima = []
    for group in groups:
        per_order = [{} for _ in range(k)]
        for ref in group:
            for table, codes in zip(per_order, _codes([vocab[t] for t in ref], base, k)):
                if len(set(codes)) == len(codes):
                    for code in codes:
                        if code not in table:
                            table[code] = 1
                else:
                    for code, c in Counter(codes).items():
                        if c > table.get(code, 0):
                            table[code] = c
        maxima.append(per_order)
    return vocab, base, maxima, [tuple(sorted({len(r) for r in group})) for group in groups]


def _reference_sets(maxima, k: int) -> tuple:
    """``(group_first, group_repeats, repeatable)``: the reference side of :func:`_matches_sets`."""
    group_first = [[frozenset(table) for table in per_order] for per_order in maxima]
    group_repeats = [[frozenset((code, j) for code, c in table.items() for j in range(1, c)) for table in per_order]
                     for per_order in maxima]
    repeatable = [set() for _ in range(k)]  # per order: codes some reference holds twice or more
    for per_order in maxima:
        for n, table in enumerate(per_order):
            repeatable[n].update(code for code, c in table.items() if c > 1)
    return group_first, group_repeats, repeatable


def _matches_sets(hypotheses, vocab, base, maxima, k, reference_sets=None) -> list:
    """Clipped matches ``[hyp][group][order]`` with set intersections (pure Python).

    An n-gram counted c times is the set entries ``code`` and ``(code, j)`` for 1 <= j < c;
    the size of the intersection of two such sets is the sum of the minimum counts.
    """
    group_first, group_repeats, repeatable = reference_sets if reference_sets is not None else _reference_sets(maxima, k)
    token_id = vocab.get
    intersection = set.intersection
    out = []
    for hyp in hypotheses:
        codes = _codes([token_id(t, 0) for t in hyp], base, k)
        first = [set(c) for c in codes]
        repeats = None
        for n, (c, f) in enumerate(zip(codes, first)):
            if len(f) != len(c):  # repeated n-grams matter where some reference repeats them too
                for code in f & repeatable[n]:
                    count = c.count(code)
                    if count > 1:
                        repeats = repeats or [set() for _ in range(k)]
                        repeats[n].update((code, j) for j in range(1, count))
        per_group = []
        for g, g_first in enumerate(group_first):
            matches = list(map(len, map(intersection, first, g_first)))
            if repeats:
                for n, (h2, r2) in enumerate(zip(repeats, group_repeats[g])):
                    if h2:
                        matches[n] += len(h2 & r2)
            per_group.append(matches)
        out.append(per_group)
    return out


def _matches_numpy(hypotheses, vocab, base, maxima, k) -> list:
    """Clipped matches ``[hyp][group][order]`` for all hypotheses of a query at once (numpy).

    Columns are the reference n-grams of the query, order by order; for each (hypothesis h,
    column c) that occurs, ``counts`` is how often h holds n-gram c and ``group_max[c, g]``
    its maximum count in one reference of group g; the matches of order n are
    ``min(count, group_max)`` summed over the entries of order n (a bincount). Exact integer
    arithmetic."""
    import numpy as np

    n_hyps, n_groups = len(hypotheses), len(maxima)
    lengths = np.fromiter((len(h) for h in hypotheses), dtype=np.int64, count=n_hyps)
    token_id = vocab.get
    ids = np.fromiter(map(token_id, chain.from_iterable(hypotheses), repeat(0)), dtype=np.int64,
                      count=int(lengths.sum()))  # map in C: no Python frame per token
    owner = np.repeat(np.arange(n_hyps, dtype=np.int64), lengths)  # hypothesis of each position
    rows, cols, bounds = [], [], [0]
    max_parts = []  # per order: (groups, columns, max counts) of the group_max entries
    codes = ids
    for n in range(k):
        offset = bounds[-1]
        known, part = _order_columns(maxima, n, offset)
        if part is not None:
            max_parts.append(part)
        bounds.append(offset + len(known))
        if n:
            start = max(0, len(owner) - n)
            codes = codes[:-1] * base + ids[n:]
            valid = owner[n:] == owner[:start]  # the n-gram stays inside one hypothesis
            hyp_of, gram_codes = owner[:start][valid], codes[valid]
        else:
            hyp_of, gram_codes = owner, codes
        if not len(known) or not len(gram_codes):
            continue
        pos = np.minimum(np.searchsorted(known, gram_codes), len(known) - 1)
        hit = known[pos] == gram_codes
        rows.append(hyp_of[hit])
        cols.append(pos[hit] + offset)
    width = bounds[-1]
    result = np.zeros(n_hyps * n_groups * k, dtype=np.int64)
    if not width or not rows:
        return result.reshape(n_hyps, n_groups, k).tolist()
    group_max = np.zeros((width, n_groups), dtype=np.int64)
    for groups_of, columns, counts_of in max_parts:
        group_max[columns, groups_of] = counts_of
    # only the (hypothesis, n-gram) entries that occur: their counts, clipped in every group
    entries, counts = np.unique(np.concatenate(rows) * width + np.concatenate(cols), return_counts=True)
    hyp_of, column = np.divmod(entries, width)
    order_of = np.searchsorted(np.asarray(bounds), column, side="right") - 1
    target = (hyp_of * n_groups)[:, None] * k + (np.arange(n_groups) * k)[None, :] + order_of[:, None]
    step = max(1, _MAX_CELLS // n_groups)  # bound the (entries, groups) block
    for lo in range(0, len(entries), step):
        clipped = np.minimum(counts[lo:lo + step, None], group_max[column[lo:lo + step]])
        result += np.bincount(target[lo:lo + step].ravel(), weights=clipped.ravel(),
                              minlength=len(result)).astype(np.int64)  # exact: small integers
    return result.reshape(n_hyps, n_groups, k).tolist()


def _order_columns(maxima, n, offset):
    """The columns of order ``n`` (0-based) for :func:`_matches_numpy`: the sorted distinct
    reference n-gram codes, and ``(groups, columns + offset, max counts)`` of their
    ``group_max`` entries (None when no reference has an n-gram of this order)."""
    import numpy as np

    ref_codes, ref_groups, ref_counts = [], [], []
    for g, per_order in enumerate(maxima):
        table = per_order[n]
        ref_codes += table
        ref_counts += table.values()
        ref_groups += [g] * len(table)
    if not ref_codes:
        return np.zeros(0, dtype=np.int64), None
    known, column = np.unique(np.array(ref_codes, dtype=np.int64), return_inverse=True)
    return known, (ref_groups, column + offset, ref_counts)


#: from this many hypotheses per query on, clipped matches are counted with numpy
NUMPY_MIN_HYPOTHESES = 8
#: hypotheses per numpy pass, and cells per (hypotheses, groups, n-grams) block: bounds memory
_NUMPY_BATCH = 1024
_MAX_CELLS = 2_000_000


def align_tokenized(hypotheses: Sequence[Sequence[str]], groups: Sequence[Sequence[Sequence[str]]],
                    weights: Sequence[float], smoothing: str = "add1", brevity_penalty: bool = False,
                    use_numpy: bool | None = None, ties: str = "first", tables=None) -> list:
    """Align tokenized hypotheses to tokenized reference groups.

    Returns one ``(group_index, bleu)`` pair per hypothesis: the group with the highest
    multi-reference BLEU (the first one on ties) and that BLEU value, equal to
    ``sentence_bleu(hypothesis, group)`` for each group. ``ties="first"``: near-equal floats are
    ordered exactly (:func:`multiref.metrics.lsdscc_ties.exact_compare`), exact ties to the first group.

    How it is fast (same integers, same float formula as pair by pair): the reference side
    of the query is counted once (:func:`_reference_tables`); n-grams become integers
    (base-V codes of token ids); the clipped matches of every (hypothesis, group) pair come
    from set intersections (:func:`_matches_sets`) or, for many hypotheses, one numpy pass
    (:func:`_matches_numpy`; ``use_numpy`` forces either); the BLEU formula is
    :func:`multiref.metrics.bleu.sentence_scorer` (bit-identical to
    :func:`multiref.metrics.bleu.bleu_from_stats`), or with ``ties="lsdscc"`` the public
    scorer's left-to-right sum (see the module docstring; groups must already be in its order).
    """
    if not groups:
        raise ValueError("lsdscc: a query has no reference groups")
    k = stat_order(len(weights), smoothing)
    score = _bleu_scorer(weights, smoothing, brevity_penalty, ties)  # times the brevity penalty below
    # tables: the groups' _reference_tables plus _reference_sets, precounted (groups then need not be tokenized)
    vocab, base, maxima, group_lengths = tables[:4] if tables is not None else _reference_tables(groups, k)
    hypotheses = [list(h) for h in hypotheses]
    all_matches = _all_matches(hypotheses, vocab, base, maxima, k, use_numpy, tables)
    penalties: dict = {}  # hyp_len -> brevity penalty against each group (its closest reference length)
    zero_without_unigrams = smoothing != "add1"  # no unigram match: BLEU 0 before any smoothing
    memo = _values_memo((tuple(weights), smoothing, ties))  # BLEU without the brevity penalty
    exact = ties == "first" and smoothing in EXACT_SMOOTHINGS
    result = []
    for hyp, per_group in zip(hypotheses, all_matches):
        hyp_len = len(hyp)
        if brevity_penalty:
            bps = _group_penalties(penalties, hyp_len, group_lengths)
        best, best_value = 0, -1.0
        for g, matches in enumerate(per_group):
            key = (hyp_len, *matches)
            value = memo.get(key)
            if value is None:
                if zero_without_unigrams and not matches[0]:
                    value = 0.0
                else:
                    value = score(matches, hyp_len, 0)
                memo[key] = value
            if brevity_penalty:  # the same product as sentence BLEU's bp * exp(...)
                value = bps[0][g] * value
            if exact and g and near(value, best_value):
                closest = bps[1] if brevity_penalty else (None,) * len(per_group)
                if exact_compare((hyp_len, matches, closest[g]), (hyp_len, per_group[best], closest[best]), weights,
                                 smoothing, brevity_penalty) > 0:
                    best, best_value = g, value
            elif value > best_value:
                best, best_value = g, value
        result.append((best, best_value))
    if len(memo) > _MEMO_LIMIT:
        memo.clear()
    return result


def _group_penalties(cache: dict, hyp_len: int, group_lengths) -> tuple:
    """``(brevity penalties, closest reference lengths)`` of a hypothesis length against each
    group (its reference lengths ascending), once per length (``cache``)."""
    found = cache.get(hyp_len)
    if found is None:
        closest = [closest_sorted_length(lengths, hyp_len) for lengths in group_lengths]
        found = cache[hyp_len] = ([brevity_penalty_factor(hyp_len, r) for r in closest], closest)
    return found


def _bleu_scorer(weights, smoothing: str, brevity_penalty: bool, ties: str):
    """BLEU from clipped matches without the brevity penalty: the public scorer's sum for
    ``ties="lsdscc"``, else :func:`multiref.metrics.bleu.sentence_scorer` (built once per
    configuration, :func:`_scorer`)."""
    if ties == "lsdscc":
        check_public_bleu(smoothing, brevity_penalty)
        return public_scorer(weights)
    return _scorer(tuple(weights), smoothing)


def _all_matches(hypotheses, vocab, base, maxima, k, use_numpy, tables=None) -> list:
    """Clipped matches ``[hyp][group][order]``: :func:`_matches_numpy` in batches when
    ``use_numpy`` (None: for :data:`NUMPY_MIN_HYPOTHESES` hypotheses or more) and the codes
    fit in int64, else :func:`_matches_sets` (with the query's precounted reference sets,
    ``tables[4]``, made once when ``tables`` is given)."""
    if use_numpy is None:
        use_numpy = len(hypotheses) >= NUMPY_MIN_HYPOTHESES
    if use_numpy and base ** k < 2 ** 62:  # codes must fit in int64
        all_matches = []
        for lo in range(0, len(hypotheses), _NUMPY_BATCH):
            all_matches += _matches_numpy(hypotheses[lo:lo + _NUMPY_BATCH], vocab, base, maxima, k)
        return all_matches
    if tables is not None and tables[4] is None:
        tables[4] = _reference_sets(maxima, k)
    return _matches_sets(hypotheses, vocab, base, maxima, k, tables[4] if tables is not None else None)


#: BLEU values remembered per configuration (entries), beyond which the memo starts afresh
_MEMO_LIMIT = 50_000


@functools.lru_cache(maxsize=8)  # at most 8 configurations x _MEMO_LIMIT entries (tens of MB)
def _values_memo(config: tuple) -> dict:
    """``{(hyp_len, *matches): BLEU without brevity penalty}`` for one BLEU configuration, shared by the
    queries of a run: a value is a pure function of the key (the same integers give the same
    float), and distinct keys are about a tenth of the (hypothesis, group) pairs."""
    return {}


@functools.lru_cache(maxsize=16)
def _scorer(weights: tuple, smoothing: str):
    """:func:`multiref.metrics.bleu.sentence_scorer` without brevity penalty, built once per configuration."""
    return sentence_scorer(weights, smoothing, False)


@functools.lru_cache(maxsize=4096)
def _cached_alignment(config: tuple, hypotheses: tuple, groups: tuple) -> tuple:
    tokenizer, lowercase, weights, smoothing, bp, ties = config
    tok = get_tokenizer(tokenizer, lowercase)
    tables = _cached_tables(tokenizer, lowercase, stat_order(len(weights), smoothing), groups)
    return tuple(align_tokenized([tok(h) for h in hypotheses], groups, weights, smoothing, bp, ties=ties,
                                 tables=tables))


@functools.lru_cache(maxsize=8192)
def _cached_tables(tokenizer: str, lowercase: bool, k: int, groups: tuple) -> list:
    """:func:`_reference_tables` of a query's groups, kept across systems scored in one run (the
    references are counted once, not once per system)."""
    tok = get_tokenizer(tokenizer, lowercase)
    vocab, base, maxima, lengths = _reference_tables([[tok(r) for r in g] for g in groups], k)
    return [vocab, base, maxima, lengths, None]  # [4]: _reference_sets, computed when the set path needs it


#: the last test sets aligned, ``[(config, items list, item ids, alignments)]``: maxbleu, mds and
#: pds with the same options on the same items share one alignment per item
_TEST_SET_MEMO: list = []


def coverage(alignment: Sequence[int], group_sizes: Sequence[int]) -> tuple:
    """``(MDS, PDS)`` of one query from the aligned group indexes and the group sizes."""
    covered = set(alignment)
    total = sum(group_sizes)
    return len(covered) / len(group_sizes), sum(group_sizes[k] for k in covered) / total


#: from this many items on, :meth:`_LsdsccMetric.test_set_alignment` matches a whole test set in numpy
BATCH_MIN_ITEMS = 64
#: ... when the items have fewer hypotheses than this on average: with many hypotheses per query, the
#: per-query path (numpy per query, the query's references counted once, BLEU values shared) catches
#: up. Measured with nltk1 and the brevity penalty on the 299 LSDSCC queries, CPU seconds of maxbleu +
#: mds + pds, batch / per query: 1 hypothesis per item 0.024/0.082, 32: 0.089/0.189, 50
#: (benchmarks/bench_metrics.py): 0.127/0.226, 100: 0.246/0.337, 200: 0.445/0.518, 400: 0.983/0.948
BATCH_MAX_HYPOTHESES = 128
#: the reference side of the last test set matched in batch, ``[(key, side)]`` (kept across systems)
_SIDE_MEMO: list = []


def _batchable(metric, items) -> bool:
    """Whether ``items`` can go through :func:`_batch_alignment`: enough of them, fewer than
    :data:`BATCH_MAX_HYPOTHESES` hypotheses per item on average, every item well formed, its texts
    strings and, with ``ties="lsdscc"``, as many group ids as groups (else the per-item path raises
    the errors)."""
    if len(items) < BATCH_MIN_ITEMS:
        return False
    if metric.ties == "lsdscc" and any(i.group_ids is not None and len(i.group_ids) != len(i.groups or ())
                                       for i in items):
        return False
    if sum(len(item.hypotheses) for item in items) >= BATCH_MAX_HYPOTHESES * len(items):
        return False
    for item in items:
        if not item.hypotheses or not item.groups or not all(item.groups):
            return False
        if not all(map(isinstance, item.hypotheses, repeat(str))):  # checked in C
            return False
        if not all(map(isinstance, chain.from_iterable(item.groups), repeat(str))):
            return False
    return True


def _batch_side(metric, items, k: int) -> dict:
    """The numpy reference side of ``items`` (:func:`multiref.metrics._batch_matches.reference_side`),
    counted once for the systems of a run scored on the same references."""
    from multiref.metrics._batch_matches import cached_side, reference_side

    def tokenized(groups):
        return [tokenize_all(group, metric.tokenizer_name, metric.lowercase) for group in groups]

    return cached_side(_SIDE_MEMO, (metric.tokenizer_name, metric.lowercase, k), [item.groups for item in items],
                       lambda groups: tuple(map(tuple, groups)),
                       lambda: reference_side([tokenized(item.groups) for item in items], k))


def _batch_alignment(metric, items) -> list:
    """:func:`_first_alignment` of ``items``; with ``ties="lsdscc"``, of the items with their groups in
    the public scorer's order (:func:`public_group_order` of their ids), group indexes mapped back to
    the items' own order (the BLEU floats are then the public scorer's: :func:`_key_values`)."""
    if metric.ties != "lsdscc":
        return _first_alignment(metric, items)
    orders = [public_group_order(i.group_ids) if i.group_ids is not None else list(range(len(i.groups)))
              for i in items]
    ordered = [Item(i.id, i.hypotheses, groups=[i.groups[g] for g in order]) for i, order in zip(items, orders)]
    return [tuple((order[g], value) for g, value in aligned)
            for order, aligned in zip(orders, _first_alignment(metric, ordered))]


def _first_alignment(metric, items) -> list:
    """:meth:`_LsdsccMetric.alignment` of every item at once: the clipped matches of all
    (hypothesis, group) pairs from :func:`multiref.metrics._batch_matches.clipped_matches`, the
    BLEU of each distinct (length, matches) key from the same scorer and memo as
    :func:`align_tokenized`, times the brevity penalty when it is on (:func:`_batch_penalties`), the
    first best group by ``numpy.argmax``. Same scores, bit for bit."""
    import numpy as np

    k = stat_order(len(metric.weights), metric.smoothing)
    side = _batch_side(metric, items, k)
    owner = [i for i, item in enumerate(items) for _ in item.hypotheses]
    matches, lengths = _batch_matches(metric, side, items, owner)
    n_hyps, n_groups = matches.shape[:2]
    rows = np.concatenate([np.repeat(lengths, n_groups)[:, None], matches.reshape(-1, k)], axis=1)
    keys, inverse = unique_rows(rows)
    scores = np.array(_key_values(metric, keys.tolist()), dtype=np.float64)[inverse.ravel()].reshape(n_hyps, n_groups)
    if metric.brevity_penalty:  # the same product as align_tokenized's bp * value
        scores *= _batch_penalties(side, lengths, np.asarray(owner, dtype=np.int64))
    sizes = np.repeat(np.fromiter((len(item.groups) for item in items), dtype=np.int64, count=len(items)),
                      [len(item.hypotheses) for item in items])
    scores[np.arange(n_groups)[None, :] >= sizes[:, None]] = -1.0  # groups the item lacks never win
    best = scores.argmax(axis=1)
    if metric.ties == "first" and metric.smoothing in EXACT_SMOOTHINGS:  # near-equal groups ordered exactly
        best = _exact_first(metric, items, scores, best, matches, lengths, owner)
    pairs = list(zip(best.tolist(), scores[np.arange(n_hyps), best].tolist()))
    out, row = [], 0
    for item in items:
        m = len(item.hypotheses)
        out.append(tuple(pairs[row:row + m]))
        row += m
    return out


def _exact_first(metric, items, values, best, matches, lengths, owner: list):
    """``best`` with each hypothesis whose best groups' floats are within
    :data:`multiref.metrics.lsdscc_ties.NEAR` decided by :func:`exact_compare` (the first group on
    an exact tie), as :func:`align_tokenized` decides them."""
    import numpy as np

    top = values[np.arange(len(values)), best]
    close = np.abs(values - top[:, None]) <= NEAR * np.abs(top)[:, None]
    for h in np.flatnonzero(close.sum(axis=1) > 1).tolist():
        hyp_len, item = int(lengths[h]), items[owner[h]]
        closest = [None] * len(item.groups)
        if metric.brevity_penalty:
            closest = [closest_sorted_length(sorted({len(metric.tokenize(r)) for r in group}), hyp_len)
                       for group in item.groups]
        groups = np.flatnonzero(close[h]).tolist()
        chosen = groups[0]
        for g in groups[1:]:
            if exact_compare((hyp_len, matches[h, g].tolist(), closest[g]), (hyp_len, matches[h, chosen].tolist(),
                             closest[chosen]), metric.weights, metric.smoothing, metric.brevity_penalty) > 0:
                chosen = g
        best[h] = chosen
    return best


def _batch_matches(metric, side: dict, items, owner: list) -> tuple:
    """``(matches, lengths)``: the clipped matches ``[hypothesis, group, order]`` of every hypothesis
    of ``items`` (:func:`multiref.metrics._batch_matches.clipped_matches`) and the hypotheses'
    token counts; tokenized one pass of
    :data:`multiref.metrics._batch_matches.PASS_HYPOTHESES` at a time, so that the token lists of
    only one pass are alive at once."""
    import numpy as np

    from multiref.metrics._batch_matches import PASS_HYPOTHESES, clipped_matches

    texts = [h for item in items for h in item.hypotheses]
    matches = np.empty((len(texts), side["groups"], len(side["tables"])), dtype=np.int64)
    lengths = np.empty(len(texts), dtype=np.int64)
    for lo in range(0, len(texts), PASS_HYPOTHESES):
        hyps = tokenize_all(texts[lo:lo + PASS_HYPOTHESES], metric.tokenizer_name, metric.lowercase)
        lengths[lo:lo + len(hyps)] = np.fromiter(map(len, hyps), dtype=np.int64, count=len(hyps))
        matches[lo:lo + len(hyps)] = clipped_matches(side, hyps, owner[lo:lo + len(hyps)])
    return matches, lengths


def _batch_penalties(side: dict, lengths, owner) -> "np.ndarray":
    """``(hypotheses, groups)`` brevity penalties against each group's closest reference length,
    each from :func:`multiref.metrics.bleu.brevity_penalty_factor` once per distinct (hypothesis
    length, reference length), as :func:`align_tokenized` computes them. The closest lengths are
    found once per distinct (item, hypothesis length), not per hypothesis."""
    import numpy as np

    from multiref.metrics._batch_matches import NO_LENGTH, closest_lengths

    radix = int(lengths.max()) + 1 if len(lengths) else 1
    cells, per_hyp = np.unique(owner * radix + lengths, return_inverse=True)
    cell_item, cell_length = np.divmod(cells, radix)
    ref = closest_lengths(side, cell_length, cell_item)
    ref[ref == NO_LENGTH] = 0  # groups the item lacks (never chosen): small keys for unique_rows
    pairs = np.stack([np.broadcast_to(cell_length[:, None], ref.shape).ravel(), ref.ravel()], axis=1)
    keys, inverse = unique_rows(pairs)
    factors = np.array([brevity_penalty_factor(h, r) for h, r in keys.tolist()], dtype=np.float64)
    return factors[inverse.ravel()].reshape(ref.shape)[per_hyp.ravel()]


def unique_rows(rows) -> tuple:
    """``numpy.unique(rows, axis=0, return_inverse=True)`` for rows of non-negative integers, the
    same result: each row read as one mixed-radix int64 (the radix above every value keeps the
    rows' order) when it fits, so the sort is of numbers, not of rows (several times faster)."""
    import numpy as np

    radix = int(rows.max()) + 1 if rows.size else 1
    if rows.size == 0 or rows.min() < 0 or radix ** rows.shape[1] >= 2 ** 62:
        keys, inverse = np.unique(rows, axis=0, return_inverse=True)
        return keys, inverse.ravel()
    code = np.zeros(len(rows), dtype=np.int64)
    for column in rows.T:
        code = code * radix + column
    codes, inverse = np.unique(code, return_inverse=True)
    keys = np.empty((len(codes), rows.shape[1]), dtype=rows.dtype)
    for j in range(rows.shape[1] - 1, -1, -1):
        codes, keys[:, j] = np.divmod(codes, radix)
    return keys, inverse.ravel()


def _key_values(metric, keys: list) -> list:
    """BLEU without brevity penalty of each ``[hyp_len, *matches]`` key, as :func:`align_tokenized`."""
    score = _bleu_scorer(metric.weights, metric.smoothing, False, metric.ties)
    memo = _values_memo((tuple(metric.weights), metric.smoothing, metric.ties))
    zero_without_unigrams = metric.smoothing != "add1"
    out = []
    for hyp_len, *matches in keys:
        key = (hyp_len, *matches)
        value = memo.get(key)
        if value is None:
            value = 0.0 if zero_without_unigrams and not matches[0] else score(matches, hyp_len, 0)
            memo[key] = value
        out.append(value)
    if len(memo) > _MEMO_LIMIT:
        memo.clear()
    return out


class _LsdsccMetric(Metric):
    """Shared options and alignment for MaxBLEU, MDS and PDS."""

    aggregates = ("max",)  # the alignment takes the max over groups; nothing else to choose
    default_aggregate = "max"
    version = "1"

    def __init__(self, order: int = 4, weights: Sequence[float] | None = None, smoothing: str = "add1",
                 brevity_penalty: bool = False, tokenizer: str = TOKENIZER, lowercase: bool = False,
                 aggregate: str | None = None, ties: str = DEFAULT_TIES):
        super().__init__(tokenizer=tokenizer, lowercase=lowercase, aggregate=aggregate)
        set_bleu_options(self, order, weights, smoothing, brevity_penalty)
        if ties not in TIES:
            raise ValueError(f"{self.name}: unknown ties {ties!r}; choose one of: {', '.join(TIES)}")
        if ties == "auto":
            ties = auto_ties(self.smoothing, self.brevity_penalty, weights)
        if ties == "lsdscc":
            check_public_bleu(self.smoothing, self.brevity_penalty)
        self.ties = ties

    def signature_fields(self) -> list:
        fields = super().signature_fields() + [("order", self.order)]
        if self.custom_weights:
            fields.append(("weights", ",".join(f"{w:g}" for w in self.weights)))
        return fields + [("smooth", self.smoothing), ("bp", "yes" if self.brevity_penalty else "no"),
                         ("conv", "lsdscc"), ("ties", self.ties)]

    def alignment(self, item: Item) -> tuple:
        """``(group_index, bleu)`` per hypothesis of ``item`` (which must have ``groups``)."""
        if not item.hypotheses:
            raise ValueError(f"{self.name}: item {item.id!r} has no hypotheses")
        if not item.groups:
            raise ValueError(f"{self.name}: item {item.id!r} has no reference groups "
                             "(MaxBLEU/MDS/PDS need grouped references; use bleu with aggregate=max for flat ones)")
        for h in item.hypotheses:
            if not isinstance(h, str):
                raise TypeError(f"{self.name}: item {item.id!r}: hypotheses must be strings")
        config = (self.tokenizer_name, self.lowercase, self.weights, self.smoothing, self.brevity_penalty, self.ties)
        order = list(range(len(item.groups)))
        if self.ties == "lsdscc" and item.group_ids is not None:
            if len(item.group_ids) != len(item.groups):
                raise ValueError(f"{self.name}: item {item.id!r} has {len(item.group_ids)} group ids for "
                                 f"{len(item.groups)} groups")
            order = public_group_order(item.group_ids)
        groups = tuple(tuple(item.groups[i]) for i in order)
        try:
            aligned = _cached_alignment(config, tuple(item.hypotheses), groups)
        except ValueError as exc:
            raise ValueError(f"{exc} (item {item.id!r})") from None
        return tuple((order[g], value) for g, value in aligned)  # group indexes in the item's own order

    def test_set_alignment(self, items: Sequence[Item]) -> list:
        """:meth:`alignment` of every item; the same items list scored by maxbleu, mds and pds with
        the same options is aligned once (the per-query cache holds only 4,096 queries)."""
        config = (self.tokenizer_name, self.lowercase, self.weights, self.smoothing, self.brevity_penalty, self.ties)
        ids = tuple(map(id, items))
        for memo_config, memo_items, memo_ids, aligned in _TEST_SET_MEMO:
            if memo_config == config and memo_items is items and memo_ids == ids:
                return aligned
        aligned = _batch_alignment(self, items) if _batchable(self, items) else None
        if aligned is None:
            aligned = [self.alignment(item) for item in items]
        _TEST_SET_MEMO[:] = [(config, items, ids, aligned)] + _TEST_SET_MEMO[:1]
        return aligned

    def item_value(self, item: Item, aligned: tuple) -> float:
        """The item's score from its alignment."""
        raise NotImplementedError

    def item_score(self, item: Item) -> float:
        return self.item_value(item, self.alignment(item))

    def pair_score(self, hypothesis, reference):  # pragma: no cover - not pairwise
        raise NotImplementedError(f"{self.name} scores hypothesis sets against reference groups")

    def sentence_score(self, hypothesis: str, references: Sequence[str]) -> float:
        raise NotImplementedError(f"{self.name} needs reference groups: use group_score or score_items")

    def group_score(self, hypotheses: Sequence[str], groups: Sequence[Sequence[str]]) -> float:
        """Score one query: its hypotheses (strings) against its reference groups."""
        return self.item_score(Item(id="query", hypotheses=list(hypotheses), groups=[list(g) for g in groups]))

    def score_items(self, items: Sequence[Item]) -> Score:
        if not items:
            raise ValueError(f"{self.name}: no items to score")
        self._set_nrefs(items)
        per_item = [self.item_value(item, aligned) for item, aligned in zip(items, self.test_set_alignment(items))]
        result = Score(self.name, float(sum(per_item) / len(per_item)), self.signature, per_item, {"items": len(items)})
        if self.ties == "lsdscc":  # the public scorer's mean over queries
            result = Score(result.name, float(sequential_mean(result.per_item)), result.signature, result.per_item,
                           result.extra)
        extra = dict(result.extra)
        extra["groups"] = sum(len(item.groups or ()) for item in items)
        extra["hypotheses"] = sum(len(item.hypotheses) for item in items)
        return Score(result.name, result.score, result.signature, result.per_item, extra)


class MaxBLEU(_LsdsccMetric):
    """``maxbleu``: mean over hypotheses of the best group's multi-reference BLEU, mean over queries."""

    name = "maxbleu"

    def item_value(self, item: Item, aligned: tuple) -> float:
        values = [v for _, v in aligned]
        if self.ties == "lsdscc":  # numpy.mean of the query's values, as the public scorer
            import numpy as np

            return float(np.mean(np.asarray(values, dtype=np.float64)))
        return sum(values) / len(values)


class MDS(_LsdsccMetric):
    """``mds``: share of a query's reference groups that some hypothesis aligns to (mean over queries)."""

    name = "mds"

    def item_value(self, item: Item, aligned: tuple) -> float:
        return coverage([g for g, _ in aligned], [len(g) for g in item.groups])[0]


class PDS(_LsdsccMetric):
    """``pds``: share of a query's references in the aligned groups (mean over queries)."""

    name = "pds"

    def item_value(self, item: Item, aligned: tuple) -> float:
        return coverage([g for g, _ in aligned], [len(g) for g in item.groups])[1]
