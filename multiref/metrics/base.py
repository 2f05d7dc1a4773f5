"""The interface every metric implements, in the manner of sacrebleu's ``Metric``.

Data model:

- An :class:`Item` is one query (or context) of a test set: its ``hypotheses`` (a system's
  outputs for it; most systems give one, diversity metrics use several), its ``references``
  (a flat list) and, for LSDSCC, its reference ``groups`` (``references`` is then the groups
  flattened, in order) with their ``group_ids``. ``weights`` (one per reference, in [-1, 1])
  are for deltaBLEU.
- :meth:`Metric.item_score` scores one item; :meth:`Metric.score_items` aggregates over a
  test set (the mean of item scores, unless the metric has a corpus form: corpus BLEU, the
  corpus Distinct ratio) and returns a :class:`Score` with the signature and per-item values.
- Pairwise metrics (BLEU, ROUGE-L, METEOR, embeddings) implement :meth:`Metric.pair_score`
  (one hypothesis, one reference, both tokenized) and optionally :meth:`Metric.multi_score`
  (their own multi-reference formula). :meth:`Metric.sentence_score` applies the
  ``aggregate`` option: ``max`` (best reference, docs/algorithms.md#4-multiref-dd), ``mean``, or
  ``standard`` (the metric's own multi-reference form). An item's score is the mean over its
  hypotheses.

Every option that changes a number must appear in :meth:`Metric.signature`: subclasses add
fields by overriding :meth:`Metric.signature_fields`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Sequence

from multiref import __version__
from multiref.metrics.tokenizers import get_tokenizer
from multiref.util.defaults import TOKENIZER

AGGREGATES = ("max", "mean", "standard")
#: the largest n-gram order any metric takes (BLEU family, Distinct-n): the papers use 1 to 4,
#: and the work grows with the order (``order=100000`` ran for minutes)
MAX_ORDER = 10


def check_order(name: str, order) -> int:
    """``order`` if it is an integer from 1 to :data:`MAX_ORDER`, else ValueError naming ``name``."""
    if isinstance(order, bool) or not isinstance(order, int) or not 1 <= order <= MAX_ORDER:
        raise ValueError(f"{name}: order must be an integer from 1 to {MAX_ORDER}, got {order!r}")
    return order


@dataclass(frozen=True)
class Item:
    """One query/context of a test set. ``groups`` and ``weights`` are optional."""

    id: str
    hypotheses: Sequence[str]
    references: Sequence[str] = ()
    groups: Sequence[Sequence[str]] | None = None
    weights: Sequence[float] | None = None
    group_ids: Sequence[str] | None = None  # the groups' ids as the references name them (LSDSCC tie order)

    def __post_init__(self):
        if self.groups is not None and not self.references:
            object.__setattr__(self, "references", tuple(r for g in self.groups for r in g))


@dataclass(frozen=True)
class Score:
    """A test-set score: the number, the signature that says how it was computed, and details."""

    name: str
    score: float
    signature: str
    per_item: Sequence[float | None] = ()
    extra: dict = field(default_factory=dict)
    #: per-item sufficient statistics for resampling when the score is not a mean of
    #: ``per_item`` (corpus BLEU: summed ``BleuStats``; corpus Distinct: n-gram sets), see
    #: :mod:`multiref.metrics.significance`; None for means of item scores
    item_stats: Sequence | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        return {"score": self.score, "signature": self.signature, **({"extra": self.extra} if self.extra else {})}

    def __str__(self) -> str:
        value = "null" if self.score is None else f"{self.score:.4f}"
        return f"{self.name} = {value}  ({self.signature})"


class Metric:
    """Base class. Subclasses set ``name`` and implement pair_score or item_score."""

    name: ClassVar[str] = "metric"
    version: ClassVar[str] = "1"
    #: aggregations this metric accepts; ``standard`` only where it has its own multi-ref form
    aggregates: ClassVar[tuple] = ("max", "mean")
    default_aggregate: ClassVar[str] = "max"
    #: whether the metric needs references (Distinct does not)
    needs_references: ClassVar[bool] = True
    #: the paired tests whose false-positive rate holds for this metric (``bs`` paired bootstrap,
    #: ``ar`` approximate randomization; corpus Distinct-n takes ``ar`` only, docs/scoring.md)
    paired_tests: ClassVar[tuple] = ("bs", "ar")
    #: how :mod:`multiref.metrics.significance` computes the 95% interval: ``percentile``
    #: (bootstrap) or ``jackknife`` (corpus Distinct-n)
    interval_method: ClassVar[str] = "percentile"

    def __init__(self, tokenizer: str = TOKENIZER, lowercase: bool = False, aggregate: str | None = None):
        self.tokenizer_name = tokenizer
        self.lowercase = bool(lowercase)
        self._tokenize = get_tokenizer(tokenizer, lowercase)  # ValueError on an unknown name
        aggregate = aggregate or self.default_aggregate
        if aggregate not in self.aggregates:
            raise ValueError(
                f"metric {self.name!r} does not take aggregate={aggregate!r}; choose one of: {', '.join(self.aggregates)}"
            )
        self.aggregate = aggregate
        self._nrefs: str | None = None  # set by score_items: references per item, or "var"

    # -- tokenization -------------------------------------------------------------------
    def tokenize(self, text: str) -> list:
        if not isinstance(text, str):
            raise TypeError(f"{self.name}: expected a string, got {type(text).__name__}")
        return self._tokenize(text)

    # -- signature ----------------------------------------------------------------------
    def signature_fields(self) -> list:
        """``(key, value)`` pairs; subclasses extend with their own options."""
        fields = [("tok", self.tokenizer_name), ("lc", "yes" if self.lowercase else "no")]
        if len(self.aggregates) > 1 or self.aggregate != "max":
            fields.append(("agg", self.aggregate))
        return fields

    @property
    def signature(self) -> str:
        parts = [self.name] + [f"{k}:{v}" for k, v in self.signature_fields()]
        if self._nrefs is not None:
            parts.append(f"nrefs:{self._nrefs}")
        parts.append(f"version:{self.version}-multiref{__version__}")
        return "|".join(parts)

    # -- pairwise metrics ---------------------------------------------------------------
    def pair_score(self, hypothesis: list, reference: list) -> float:
        """Score one tokenized hypothesis against one tokenized reference."""
        raise NotImplementedError(f"{self.name} is not a pairwise metric")

    def multi_score(self, hypothesis: list, references: list) -> float:
        """The metric's own multi-reference form (``aggregate='standard'``)."""
        raise NotImplementedError(f"{self.name} has no standard multi-reference form")

    def sentence_score(self, hypothesis: str, references: Sequence[str]) -> float:
        """Score one hypothesis string against its reference strings, aggregated per option."""
        if self.needs_references and not references:
            raise ValueError(f"{self.name}: an item has no references")
        hyp = self.tokenize(hypothesis)
        refs = [self.tokenize(r) for r in references]
        return self.tokenized_sentence_score(hyp, refs)

    def tokenized_sentence_score(self, hyp: list, refs: list) -> float:
        if self.aggregate == "standard":
            return float(self.multi_score(hyp, refs))
        values = [self.pair_score(hyp, r) for r in refs]
        return float(max(values)) if self.aggregate == "max" else float(sum(values) / len(values))

    # -- items and test sets ------------------------------------------------------------
    def tokenized_item(self, item: Item) -> tuple:
        """``(hypotheses, references)`` of ``item``, tokenized; ValueError when either is missing."""
        if not item.hypotheses:
            raise ValueError(f"{self.name}: item {item.id!r} has no hypotheses")
        refs = [self.tokenize(r) for r in item.references]
        if self.needs_references and not refs:
            raise ValueError(f"{self.name}: item {item.id!r} has no references")
        return [self.tokenize(h) for h in item.hypotheses], refs

    def item_score(self, item: Item) -> float | None:
        """Score one item: the mean of ``sentence_score`` over its hypotheses."""
        hyps, refs = self.tokenized_item(item)
        values = [self.tokenized_sentence_score(h, refs) for h in hyps]
        return sum(values) / len(values)

    def _set_nrefs(self, items: Sequence[Item]) -> None:
        """Record the number of references per item (or ``var``) for the signature."""
        if self.needs_references and items:
            counts = {len(item.references) for item in items}
            self._nrefs = str(counts.pop()) if len(counts) == 1 else "var"

    def score_items(self, items: Sequence[Item]) -> Score:
        """Score a test set: the mean over items of :meth:`item_score` (None values skipped)."""
        self._set_nrefs(items)
        per_item = [self.item_score(item) for item in items]
        valid = [v for v in per_item if v is not None]
        value = sum(valid) / len(valid) if valid else 0.0
        extra = {"items": len(items)}
        if len(valid) != len(per_item):
            extra["items_without_score"] = len(per_item) - len(valid)
        return Score(self.name, float(value), self.signature, per_item, extra)

    def resampling_stats(self, score: Score, items: Sequence[Item], vocabulary: dict | None = None):
        """The per-item sufficient statistics of ``score`` (from ``self.score_items(items)``) and
        the step that finishes them into scores (:class:`multiref.metrics.resampling.ItemStats`),
        for resampling the items. The default: a mean of ``score.per_item`` (None: no score);
        metrics with a corpus form (BLEU, corpus Distinct-n) or another mean override it.
        ``vocabulary``: shared by the systems compared (corpus Distinct-n's n-gram columns)."""
        from multiref.metrics.resampling import mean_stats

        return mean_stats(score.per_item)

    # convenience for the common one-hypothesis case
    def corpus_score(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> Score:
        if len(hypotheses) != len(references):
            raise ValueError(f"{self.name}: {len(hypotheses)} hypotheses but {len(references)} reference lists")
        items = [Item(id=str(i), hypotheses=[h], references=list(r)) for i, (h, r) in enumerate(zip(hypotheses, references))]
        return self.score_items(items)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.signature}>"
