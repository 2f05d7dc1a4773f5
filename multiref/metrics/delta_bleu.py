"""deltaBLEU: BLEU with references weighted in [-1, 1] (Galley et al. 2015; docs/algorithms.md
sections 6 and 8).

For each order n and each n-gram g of the hypothesis:

- credit(g) = w*(g) x min(count of g in the hypothesis, max count of g in any reference),
  where w*(g) is the largest weight among the references that contain g (0 if none does);
- the precision denominator is max_j w_j (the item's largest reference weight) times the
  hypothesis n-gram count (``max(1, count)`` as in NLTK; raw counts for ``add1``);
- the brevity penalty uses the closest reference length (all references);
- a negative matched total (per order, after summing over segments) clips to 0;
- an item without a positive weight is an error (``ValueError``).

The precision/smoothing/geometric-mean step is BLEU's (:meth:`multiref.metrics.bleu.BLEU.score_stats`,
under the metric's ``convention``), so with every weight 1 deltaBLEU equals multi-reference BLEU
exactly, for every smoothing (under ``sacrebleu``: when every item has as many references, as
deltaBLEU pads no reference stream).
"""

from __future__ import annotations

import math
from typing import Sequence

from multiref.metrics._ngrams import closest_ref_length, ngram_counts
from multiref.metrics.base import Item, Score
from multiref.metrics.bleu import BLEU, BleuStats, bleu_from_stats, sum_stats


def weighted_ref_table(references: Sequence[Sequence[str]], weights: Sequence[float], max_order: int, *,
                       ref_counts: Sequence[tuple] | None = None, only: tuple | None = None):
    """Per order, ``{ngram: (max count in any reference, largest weight of a reference containing it)}``.

    ``ref_counts``: the references' ``ngram_counts`` if already made (else counted here).
    ``only``: a hypothesis's ``ngram_counts``; the table then holds just its n-grams, the
    only ones :func:`delta_stats` looks up (same result, less work per hypothesis).
    Returns ``(tables, ref_lengths, max_weight)``. Raises ValueError on bad weights.
    """
    weights = validate_weights(weights, len(references))
    if ref_counts is None:
        ref_counts = [ngram_counts(ref, max_order) for ref in references]
    tables = tuple({} for _ in range(max_order))
    for counts_by_order, w in zip(ref_counts, weights):
        for i, (table, counts) in enumerate(zip(tables, counts_by_order)):
            grams = counts.keys() if only is None else only[i].keys() & counts.keys()
            for gram in grams:
                c = counts[gram]
                old = table.get(gram)
                table[gram] = (c, w) if old is None else (max(old[0], c), max(old[1], w))
    return tables, tuple(len(r) for r in references), max(weights)


def validate_weights(weights: Sequence[float], n_refs: int) -> tuple:
    """Weights as floats: one per reference, each in [-1, 1], at least one positive."""
    if n_refs == 0:
        raise ValueError("delta_bleu: no references")
    try:
        weights = tuple(float(w) for w in weights)
    except (TypeError, ValueError):
        raise ValueError(f"delta_bleu: weights must be numbers, got {weights!r}") from None
    if len(weights) != n_refs:
        raise ValueError(f"delta_bleu: {len(weights)} weights for {n_refs} references")
    for w in weights:
        if not math.isfinite(w) or not -1.0 <= w <= 1.0:
            raise ValueError(f"delta_bleu: reference weight {w!r} is outside [-1, 1]")
    if max(weights) <= 0:
        raise ValueError("delta_bleu: an item needs at least one reference with a positive weight")
    return weights


def delta_stats(hyp_counts: tuple, hyp_len: int, tables: tuple, ref_lengths: Sequence[int], max_weight: float) -> BleuStats:
    """Weighted :class:`BleuStats` of one hypothesis (matched totals not yet clipped at 0)."""
    matches = []
    for counts, table in zip(hyp_counts, tables):
        total = 0.0
        for gram, c in counts.items():
            entry = table.get(gram)
            if entry is not None:
                total += entry[1] * min(c, entry[0])
        matches.append(total)
    raw = [max(0, hyp_len - n) for n in range(len(hyp_counts))]
    totals = tuple(max_weight * t for t in raw)
    denominators = tuple(max_weight * (t if t > 0 else 1) for t in raw)
    p5 = (matches[4], denominators[4]) if len(matches) >= 5 else None
    return BleuStats(tuple(matches), denominators, totals, hyp_len, closest_ref_length(ref_lengths, hyp_len),
                     hyp_len, p5)


def clip_negative(stats: BleuStats) -> BleuStats:
    """Clip negative matched totals (and the order-5 extra) to 0."""
    p5 = stats.last_p5
    if p5 is not None and p5[0] < 0:
        p5 = (0.0, p5[1])
    return stats._replace(matches=tuple(m if m > 0 else 0.0 for m in stats.matches), last_p5=p5)


class DeltaBLEU(BLEU):
    """deltaBLEU (``delta_bleu``): BLEU options (order, weights, smoothing, brevity_penalty,
    tokenizer, lowercase); reference weights come per call or from ``Item.weights``
    (default: all 1, which gives plain multi-reference BLEU)."""

    name = "delta_bleu"
    version = "1"
    aggregates = ("standard",)
    default_aggregate = "standard"

    def _stats(self, hyp: list, refs: list, weights) -> BleuStats:
        if weights is None:
            weights = [1.0] * len(refs)
        hyp_counts = ngram_counts(hyp, self.stat_order)
        tables, lengths, max_w = weighted_ref_table(refs, weights, self.stat_order, only=hyp_counts)
        return delta_stats(hyp_counts, len(hyp), tables, lengths, max_w)

    def sentence_score(self, hypothesis: str, references: Sequence[str], weights: Sequence[float] | None = None) -> float:
        """deltaBLEU of one hypothesis against weighted references (weights default to 1)."""
        if not references:
            raise ValueError(f"{self.name}: an item has no references")
        return self.tokenized_sentence_score(self.tokenize(hypothesis), [self.tokenize(r) for r in references], weights)

    def tokenized_sentence_score(self, hyp: list, refs: list, weights: Sequence[float] | None = None) -> float:
        stats = self._stats(hyp, refs, weights)
        return self.score_stats(clip_negative(stats))

    def multi_score(self, hypothesis: list, references: list) -> float:
        return self.tokenized_sentence_score(hypothesis, references)

    def _item_segments(self, item: Item) -> list:
        if not item.hypotheses:
            raise ValueError(f"{self.name}: item {item.id!r} has no hypotheses")
        refs = [self.tokenize(r) for r in item.references]
        weights = item.weights if item.weights is not None else [1.0] * len(refs)
        try:
            tables, lengths, max_w = weighted_ref_table(refs, weights, self.stat_order)
        except ValueError as exc:
            raise ValueError(f"{exc} (item {item.id!r})") from None
        segs = []
        for h in item.hypotheses:
            toks = self.tokenize(h)
            segs.append(delta_stats(ngram_counts(toks, self.stat_order), len(toks), tables, lengths, max_w))
        return segs

    def _score(self, stats: BleuStats) -> float:
        return self.score_stats(clip_negative(stats))

    def item_score(self, item: Item) -> float:
        values = [self._score(s) for s in self._item_segments(item)]
        return sum(values) / len(values)

    def score_items(self, items: Sequence[Item]) -> Score:
        """Corpus deltaBLEU over every hypothesis of every item (sums, then clipping);
        ``per_item``: mean sentence deltaBLEU per item."""
        if not items:
            raise ValueError(f"{self.name}: no items to score")
        self._set_nrefs(items)
        segments, per_item, item_stats = [], [], []
        for item in items:
            segs = self._item_segments(item)
            segments.extend(segs)
            per_item.append(sum(self._score(s) for s in segs) / len(segs))
            item_stats.append(sum_stats(segs))
        value = self._score(sum_stats(segments))
        extra = {"items": len(items), "segments": len(segments), "sentence_mean": sum(per_item) / len(per_item)}
        return Score(self.name, float(value), self.signature, per_item, extra, item_stats)

    def resampling_stats(self, score: Score, items: Sequence[Item], vocabulary: dict | None = None):
        """Each item's summed weighted :class:`BleuStats`; negative matched totals clip to 0 after summing."""
        from multiref.metrics.resampling import bleu_item_stats

        return bleu_item_stats(self, score.item_stats, sum_stats(score.item_stats), (BleuStats, bleu_from_stats),
                               clip=True)
