"""Diversity metrics (docs/algorithms.md sections 4 and 8): Distinct-n (corpus and per-utterance
forms), Self-BLEU, and the referenced recall (coverage) form of any pairwise metric.

- ``distinct`` (:class:`Distinct`, Li et al. 2016): the number of distinct n-grams over the
  total number of n-grams in ALL of a system's outputs (every hypothesis of every item).
  ``per_item`` holds the same ratio over each item's own hypotheses.
- ``distinct_per_utterance`` (:class:`DistinctPerUtterance`): for each output, its distinct
  n-grams over its length (``denominator="tokens"``, default: the sentence-level form of the
  ``distinct-n`` package and of docs/algorithms.md#8-metric-definitions) or over its n-gram count
  (``denominator="ngrams"``), averaged over all outputs. An empty output scores 0.
- ``ead`` (:class:`EAD`, Liu et al. 2022, "Rethinking and Refining the Distinct Metric"):
  Expectation-Adjusted Distinct, the distinct n-grams over the number of distinct n-grams
  expected when C n-grams are drawn uniformly from a vocabulary of V: ``V * (1 - ((V-1)/V)^C)``.
  Distinct-n falls as outputs grow longer whatever their diversity; EAD does not. V is the
  ``vocab_size`` option, or (default) the number of distinct n-grams in the test set's
  references; the signature records it (``vocab:V``, ``vsrc:refs|given``).
- ``self_bleu`` (:class:`SelfBLEU`, Zhu et al. 2018, Texygen): in each item, each hypothesis is
  scored with multi-reference BLEU against the item's OTHER hypotheses; averaged per item,
  then over items. Items with fewer than 2 hypotheses have no score (``None``) and are
  counted in ``Score.extra``. Lower means more diverse. BLEU options pass through.
- ``recall_bleu`` / ``recall_<metric>`` (:class:`RecallBLEU`): for an item with references
  r_1..r_N and hypotheses y_1..y_M, recall = (1/N) sum_j max_i d(y_i, r_j), d being the
  pairwise metric (BLEU by default; ``base="rouge_l"``, ``"meteor"``, an embedding metric...).
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Sequence

from multiref.metrics.base import Item, Metric, Score
from multiref.metrics.base import check_order as _check_order
from multiref.util.defaults import TOKENIZER


def ngrams(tokens: Sequence[str], n: int) -> list:
    """The n-grams of ``tokens`` as tuples, in order (empty when the sentence is shorter)."""
    tokens = tuple(tokens)
    return [tokens[i:i + n] for i in range(len(tokens) - n + 1)]


def distinct_counts(sentences: Sequence[Sequence[str]], n: int) -> tuple:
    """``(distinct n-grams, total n-grams)`` over tokenized ``sentences`` pooled together."""
    seen: set = set()
    total = 0
    for tokens in sentences:
        grams = ngrams(tokens, n)
        total += len(grams)
        seen.update(grams)
    return len(seen), total


def distinct_ratio(sentences: Sequence[Sequence[str]], n: int) -> float:
    """Corpus Distinct-n (Li et al. 2016): distinct n-grams / total n-grams; 0 if there are none."""
    distinct, total = distinct_counts(sentences, n)
    return distinct / total if total else 0.0


def expected_distinct(vocab_size: int, total: float) -> float:
    """Distinct n-grams expected among ``total`` drawn uniformly from ``vocab_size`` (EAD's
    denominator, Liu et al. 2022): ``V * (1 - ((V - 1) / V) ** C)``, computed without
    cancellation (``-expm1(C * log1p(-1 / V))``); 0 when nothing is drawn."""
    import math

    if total <= 0:
        return 0.0
    if vocab_size == 1:
        return 1.0
    return vocab_size * -math.expm1(total * math.log1p(-1.0 / vocab_size))


def ead_ratio(distinct: int, total: int, vocab_size: int) -> float:
    """EAD: distinct n-grams over :func:`expected_distinct`; 0 if there are none."""
    expected = expected_distinct(vocab_size, total)
    return distinct / expected if expected > 0 else 0.0


def distinct_utterance(tokens: Sequence[str], n: int, denominator: str = "tokens") -> float:
    """Distinct-n of one utterance: distinct n-grams over its length or its n-gram count."""
    grams = ngrams(tokens, n)
    size = len(tokens) if denominator == "tokens" else len(grams)
    return len(set(grams)) / size if size else 0.0


class Distinct(Metric):
    """Corpus Distinct-n (``distinct``). Options: ``order`` (n, default 2), ``tokenizer``, ``lowercase``."""

    name = "distinct"
    version = "1"
    aggregates = ("corpus",)
    default_aggregate = "corpus"
    needs_references = False
    #: not a mean of item values: the delete-one jackknife interval, and approximate randomization
    #: only (the paired bootstrap calls equally diverse systems different in about a third of
    #: null simulations: benchmarks/null_simulations.py, docs/scoring.md)
    interval_method = "jackknife"
    paired_tests = ("ar",)

    def __init__(self, order: int = 2, tokenizer: str = TOKENIZER, lowercase: bool = False):
        super().__init__(tokenizer=tokenizer, lowercase=lowercase)
        self.order = _check_order(self.name, order)

    def signature_fields(self) -> list:
        return super().signature_fields() + [("order", self.order)]

    def tokenized_sentence_score(self, hyp: list, refs: list) -> float:
        """One sentence on its own (references are ignored)."""
        return distinct_ratio([hyp], self.order)

    def item_score(self, item: Item) -> float:
        """The corpus ratio over this item's hypotheses (for ``per_item``)."""
        if not item.hypotheses:
            raise ValueError(f"{self.name}: item {item.id!r} has no hypotheses")
        return distinct_ratio([self.tokenize(h) for h in item.hypotheses], self.order)

    def score_items(self, items: Sequence[Item]) -> Score:
        """Distinct n-grams over total n-grams across every hypothesis of every item."""
        tokenized = []
        for item in items:
            if not item.hypotheses:
                raise ValueError(f"{self.name}: item {item.id!r} has no hypotheses")
            tokenized.append([self.tokenize(h) for h in item.hypotheses])
        per_item, item_grams = [], []  # item_grams: (its distinct n-grams, its n-gram total), for resampling
        n = self.order
        for hyps in tokenized:
            seen: set = set()
            total = 0
            for h in hyps:  # the n-grams of ngrams(h, n), built by zipping shifted copies
                total += max(0, len(h) - n + 1)
                seen.update(zip(*[h[i:] for i in range(n)]))
            per_item.append(len(seen) / total if total else 0.0)
            item_grams.append((seen, total))
        distinct = len(set().union(*(seen for seen, _ in item_grams)))
        total = sum(t for _, t in item_grams)
        value = distinct / total if total else 0.0
        extra = {"items": len(items), "distinct_ngrams": distinct, "total_ngrams": total}
        return Score(self.name, float(value), self.signature, per_item, extra, item_grams)

    def resampling_stats(self, score: Score, items: Sequence[Item], vocabulary: dict | None = None):
        """Per item, its n-gram total and its distinct n-grams (columns of ``vocabulary``)."""
        from multiref.metrics.resampling import distinct_stats

        return distinct_stats(score.item_stats, vocabulary if vocabulary is not None else {})


class EAD(Distinct):
    """Expectation-Adjusted Distinct-n (``ead``, Liu et al. 2022). Options: ``order`` (n, default
    1, the paper's), ``vocab_size`` (V; default: the distinct n-grams of the test set's
    references, so the score depends on the test set, not on the system), ``tokenizer``,
    ``lowercase``. Intervals and tests as corpus Distinct-n (jackknife; approximate
    randomization only); unlike Distinct, EAD can exceed 1."""

    name = "ead"
    version = "1"

    def __init__(self, order: int = 1, vocab_size: int | None = None, tokenizer: str = TOKENIZER,
                 lowercase: bool = False):
        super().__init__(order=order, tokenizer=tokenizer, lowercase=lowercase)
        if vocab_size is not None and (isinstance(vocab_size, bool) or not isinstance(vocab_size, int)
                                       or vocab_size < 1):
            raise ValueError(f"{self.name}: vocab_size must be a positive integer, got {vocab_size!r}")
        self.vocab_size = vocab_size
        self._vocab_used = vocab_size

    @property
    def needs_references(self) -> bool:
        return self.vocab_size is None

    def signature_fields(self) -> list:
        fields = super().signature_fields()
        if self._vocab_used is not None:
            fields += [("vocab", self._vocab_used), ("vsrc", "given" if self.vocab_size is not None else "refs")]
        return fields

    def _vocabulary_size(self, items: Sequence[Item]) -> int:
        if self.vocab_size is not None:
            return self.vocab_size
        grams = {g for item in items for r in item.references for g in ngrams(self.tokenize(r), self.order)}
        if not grams:
            raise ValueError(f"{self.name}: no reference n-grams to size the vocabulary; give vocab_size")
        return len(grams)

    def tokenized_sentence_score(self, hyp: list, refs: list) -> float:
        vocab = self.vocab_size or len({g for r in refs for g in ngrams(r, self.order)}) or 1
        grams = ngrams(hyp, self.order)
        return ead_ratio(len(set(grams)), len(grams), vocab)

    def score_items(self, items: Sequence[Item]) -> Score:
        """Distinct n-grams of every hypothesis of every item over their expected number."""
        vocab = self._vocabulary_size(items)
        self._vocab_used = vocab
        base = super().score_items(items)
        distinct, total = base.extra["distinct_ngrams"], base.extra["total_ngrams"]
        per_item = [ead_ratio(len(seen), t, vocab) for seen, t in base.item_stats]
        extra = dict(base.extra, vocab_size=vocab)
        return Score(self.name, float(ead_ratio(distinct, total, vocab)), self.signature, per_item, extra,
                     base.item_stats)

    def resampling_stats(self, score: Score, items: Sequence[Item], vocabulary: dict | None = None):
        """As corpus Distinct-n's, finished into EAD with this score's vocabulary size."""
        from multiref.metrics.resampling import distinct_stats, ead_finish

        stats = distinct_stats(score.item_stats, vocabulary if vocabulary is not None else {})
        return type(stats)(stats.table, ead_finish(score.extra["vocab_size"]), stats.incidence)


class DistinctPerUtterance(Metric):
    """Per-utterance Distinct-n (``distinct_per_utterance``).

    Options: ``order`` (default 2), ``denominator`` (``tokens`` default | ``ngrams``),
    ``tokenizer``, ``lowercase``. The test-set score is the mean over all hypotheses.
    """

    name = "distinct_per_utterance"
    version = "1"
    aggregates = ("utterance_mean",)
    default_aggregate = "utterance_mean"
    needs_references = False
    DENOMINATORS = ("tokens", "ngrams")

    def __init__(self, order: int = 2, denominator: str = "tokens", tokenizer: str = TOKENIZER,
                 lowercase: bool = False):
        super().__init__(tokenizer=tokenizer, lowercase=lowercase)
        self.order = _check_order(self.name, order)
        if denominator not in self.DENOMINATORS:
            raise ValueError(f"{self.name}: denominator must be one of {', '.join(self.DENOMINATORS)}, "
                             f"got {denominator!r}")
        self.denominator = denominator

    def signature_fields(self) -> list:
        return super().signature_fields() + [("order", self.order), ("denom", self.denominator)]

    def tokenized_sentence_score(self, hyp: list, refs: list) -> float:
        return distinct_utterance(hyp, self.order, self.denominator)

    def _item_values(self, item: Item) -> list:
        if not item.hypotheses:
            raise ValueError(f"{self.name}: item {item.id!r} has no hypotheses")
        return [distinct_utterance(self.tokenize(h), self.order, self.denominator) for h in item.hypotheses]

    def item_score(self, item: Item) -> float:
        values = self._item_values(item)
        return sum(values) / len(values)

    def score_items(self, items: Sequence[Item]) -> Score:
        """Mean over every hypothesis of every item; ``per_item`` the mean within each item."""
        per_item, flat = [], []
        for item in items:
            values = self._item_values(item)
            per_item.append(sum(values) / len(values))
            flat.extend(values)
        value = sum(flat) / len(flat) if flat else 0.0
        return Score(self.name, float(value), self.signature, per_item, {"items": len(items), "utterances": len(flat)})

    def resampling_stats(self, score: Score, items: Sequence[Item], vocabulary: dict | None = None):
        """A mean over outputs: each item's mean weighted by its number of outputs."""
        from multiref.metrics.resampling import mean_stats

        return mean_stats(score.per_item, [len(item.hypotheses) for item in items])


def _bleu(**options):
    from multiref.metrics.bleu import BLEU

    return BLEU(**options)


class SelfBLEU(Metric):
    """Self-BLEU (``self_bleu``). Options: those of ``bleu`` (``order``, ``weights``,
    ``smoothing``, ``brevity_penalty``, ``convention``), ``tokenizer``, ``lowercase``. Each hypothesis is scored
    with clipped multi-reference BLEU (``standard``) against the others, as in Texygen; there
    is no ``aggregate`` option.
    """

    name = "self_bleu"
    version = "1"
    aggregates = ("standard",)
    default_aggregate = "standard"
    needs_references = False

    def __init__(self, order: int = 4, weights: Sequence[float] | None = None, smoothing: str = "none",
                 brevity_penalty: bool = True, tokenizer: str = TOKENIZER, lowercase: bool = False,
                 convention: str = "nltk"):
        super().__init__(tokenizer=tokenizer, lowercase=lowercase)
        self.bleu = _bleu(order=order, weights=weights, smoothing=smoothing, brevity_penalty=brevity_penalty,
                          tokenizer=tokenizer, lowercase=lowercase, aggregate="standard", convention=convention)

    def signature_fields(self) -> list:
        return super().signature_fields() + self.bleu.bleu_signature_fields()

    def tokenized_sentence_score(self, hyp: list, refs: list) -> float:
        """BLEU of one output against the other outputs given as ``refs``."""
        if not refs:
            raise ValueError(f"{self.name}: a hypothesis needs at least one other hypothesis to be scored against")
        return self.bleu.tokenized_sentence_score(hyp, refs)

    def item_score(self, item: Item) -> float | None:
        """Mean over the item's hypotheses of BLEU against the others; None with fewer than 2."""
        hyps = [self.bleu.tokenize(h) for h in item.hypotheses]
        if len(hyps) < 2:
            return None
        counts = [self.bleu.hyp_counts(h) for h in hyps]
        values = [self.bleu.score_table(counts[i], len(h), self.bleu.ref_table(hyps[:i] + hyps[i + 1:]))
                  for i, h in enumerate(hyps)]
        return sum(values) / len(values)

    def score_items(self, items: Sequence[Item]) -> Score:
        """Mean over the items with 2 or more hypotheses; ``score`` is None when no item has 2
        (one output per context: Self-BLEU is undefined, not 0.0 "perfectly diverse")."""
        result = super().score_items(items)
        skipped = sum(v is None for v in result.per_item)
        extra = {**result.extra, "items_with_fewer_than_2_hypotheses": skipped}
        if skipped == len(result.per_item):
            extra["note"] = "every item has one output: Self-BLEU needs 2 or more outputs per context"
            return dataclasses.replace(result, score=None, extra=extra)
        return dataclasses.replace(result, extra=extra)


class RecallBLEU(Metric):
    """Referenced recall / coverage (``recall_bleu``, ``recall_<metric>``), docs/algorithms.md#4-multiref-dd.

    ``base`` names the pairwise metric d (default ``bleu``); every other option is passed to
    it (``order``, ``smoothing``... for BLEU; ``beta`` for ROUGE-L; ``alpha``/``beta``/``gamma``
    for METEOR; ``vectors`` for the embedding metrics), and an option the base does not take is
    a ``ValueError``. ``aggregate`` is refused: the recall form fixes how references and
    hypotheses combine. The name and signature show the base and its options, e.g.
    ``recall_rouge_l|tok:whitespace|lc:no|beta:1|version:1.1-multiref...``.
    """

    name = "recall_bleu"
    version = "1"
    aggregates = ("recall",)  # fixed form; not user-selectable (see the class docstring)
    default_aggregate = "recall"

    def __init__(self, base: str = "bleu", tokenizer: str = TOKENIZER, lowercase: bool = False, **options):
        from multiref.metrics import metric_class

        super().__init__(tokenizer=tokenizer, lowercase=lowercase)
        if not isinstance(base, str) or base.startswith("recall_") or base in (
                "distinct", "distinct_per_utterance", "self_bleu"):
            raise ValueError(f"recall: base must be a pairwise metric, got {base!r}")
        cls = metric_class(base)
        if "aggregate" in options:
            raise ValueError(f"recall_{base}: the recall form takes no aggregate option "
                             "(it is the mean over references of the best hypothesis)")
        accepted = inspect.signature(cls.__init__).parameters
        unknown = sorted(k for k in options if k not in accepted or k == "self")
        if unknown:
            raise ValueError(f"recall_{base}: {base} does not take option(s): {', '.join(unknown)}")
        self.base = cls(tokenizer=tokenizer, lowercase=lowercase, **options)
        if type(self.base).pair_score is Metric.pair_score:
            raise ValueError(f"recall: base must be a pairwise metric, got {base!r}")
        self.name = f"recall_{self.base.name}"

    def signature_fields(self) -> list:
        return [(k, v) for k, v in self.base.signature_fields() if k not in ("agg", "nrefs")]

    @property
    def signature(self) -> str:
        sig = super().signature
        return sig.replace(f"version:{self.version}-", f"version:{self.version}.{self.base.version}-", 1)

    def tokenize(self, text: str) -> list:
        return self.base.tokenize(text)

    def recall(self, hyps: Sequence[list], refs: Sequence[list]) -> float:
        """(1/N) sum over references of the best d(hypothesis, reference) over hypotheses."""
        if not refs:
            raise ValueError(f"{self.name}: no references")
        if not hyps:
            raise ValueError(f"{self.name}: no hypotheses")
        base = self.base
        if hasattr(base, "score_table") and hasattr(base, "hyp_counts"):  # BLEU fast path: count once
            counted = [(base.hyp_counts(h), len(h)) for h in hyps]
            total = 0.0
            for r in refs:
                table = base.ref_table([r])
                total += max(base.score_table(c, n, table) for c, n in counted)
            return total / len(refs)
        return sum(max(base.pair_score(h, r) for h in hyps) for r in refs) / len(refs)

    def tokenized_sentence_score(self, hyp: list, refs: list) -> float:
        """One hypothesis: the mean over references of d(hyp, r_j)."""
        return self.recall([hyp], refs)

    def item_score(self, item: Item) -> float:
        hyps, refs = self.tokenized_item(item)
        return self.recall(hyps, refs)
