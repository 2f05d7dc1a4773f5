"""Metric specs and a scorer that works with any metric object (docs/algorithms.md sections 4, 5).

A *metric spec* is how the ``analyze`` commands name a metric: ``NAME`` or
``NAME:key=value,key=value``, e.g. ``bleu``, ``bleu2`` (= ``bleu:order=2``),
``bleu4:smoothing=nltk1``, ``rouge_l:beta=1.2``, ``embedding_average``. ``bleu1``..``bleu4``
and ``rouge-l``/``rougel`` are shorthands. A list value is written with ``/``
(``bleu:weights=0.5/0.5``) or with commas (``bleu:weights=0.5,0.5,smoothing=nltk1``: a part
without ``=`` continues the value before it); ``weights`` is always a list. Common options (tokenizer, lowercase, vectors) are
passed to a metric only when its ``__init__`` accepts them (the rule of docs/analysis.md#metric-specs); options
written in the spec are always passed, and a wrong one is a :class:`UserError`.

A metric here is anything with ``tokenized_sentence_score(hyp_tokens, ref_token_lists)``
(and optionally ``tokenize(text)``; whitespace splitting otherwise), so the statistics can be
tested with small hand-made metrics. :class:`MetricScorer` computes, per hypothesis, the
score against each single reference (from which ``max`` and ``mean`` aggregation follow,
exactly as :meth:`multiref.metrics.base.Metric.tokenized_sentence_score` computes them) and
the metric's own multi-reference form (``standard``) when it has one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from multiref.util.errors import UserError

ALIASES = {
    "bleu1": ("bleu", {"order": 1}),
    "bleu2": ("bleu", {"order": 2}),
    "bleu3": ("bleu", {"order": 3}),
    "bleu4": ("bleu", {"order": 4}),
    "rouge-l": ("rouge_l", {}),
    "rougel": ("rouge_l", {}),
    "deltableu": ("delta_bleu", {}),
}

#: options whose value is always a list (``bleu:weights=0.5/0.5``)
LIST_OPTIONS = ("weights",)

#: the aggregations the discrimination analysis reports (docs/algorithms.md#4-multiref-dd)
AGGREGATIONS = ("single", "mean", "max", "standard")


def _parse_value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "yes"):
        return True
    if low in ("false", "no"):
        return False
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


@dataclass(frozen=True)
class MetricSpec:
    """A metric as named on the command line: ``label`` (as typed), registry ``name``, options."""

    label: str
    name: str
    options: tuple = ()

    @property
    def option_dict(self) -> dict:
        return dict(self.options)


def parse_metric_spec(text: str) -> MetricSpec:
    """Parse ``NAME[:key=value,...]`` into a :class:`MetricSpec` (UserError if malformed)."""
    text = text.strip()
    if not text:
        raise UserError("empty --metric value")
    name, _, rest = text.partition(":")
    name = name.strip().lower()
    base, options = ALIASES.get(name, (name, {}))
    options = dict(options)
    if rest.strip():
        for key, values in _spec_fields(text, rest):
            parsed = [_parse_value(v) for v in values]
            options[key] = tuple(parsed) if len(parsed) > 1 or key in LIST_OPTIONS else parsed[0]
    return MetricSpec(label=text, name=base, options=tuple(sorted(options.items())))


def _spec_fields(text: str, rest: str) -> list:
    """``[(key, [value, ...])]`` from ``key=v1/v2,key2=v,v`` (see the module docstring)."""
    fields: list = []
    for part in rest.split(","):
        key, eq, value = part.partition("=")
        if not eq:
            if not fields or not part.strip():
                raise UserError(f"--metric {text!r}: expected key=value after ':', got {part!r}")
            fields[-1][1].append(part.strip())
            continue
        if not key.strip():
            raise UserError(f"--metric {text!r}: expected key=value after ':', got {part!r}")
        values = [v.strip() for v in value.split("/")]
        if any(not v for v in values) and len(values) > 1:
            raise UserError(f"--metric {text!r}: empty list element in {part!r}")
        fields.append((key.strip(), values))
    return fields


def build_metric(spec: MetricSpec, common: dict | None = None, aggregate: str | None = None,
                 defaults: dict | None = None):
    """Build the metric ``spec`` names, with ``common`` options it accepts and ``aggregate``.

    ``defaults`` maps a metric name to options fixed for that metric (a paper's settings,
    :mod:`multiref.analysis.paper_defaults`); they override ``common``, the spec's own
    options override both. Raises :class:`UserError` for an unknown metric or option.
    """
    from multiref.metrics import accepted_options, get_metric

    try:
        accepted = accepted_options(spec.name)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    except ImportError as exc:
        raise UserError(f"metric {spec.name!r} is not available in this installation ({exc})") from None
    options = {k: v for k, v in (common or {}).items() if v is not None and k in accepted}
    options.update({k: v for k, v in ((defaults or {}).get(spec.name) or {}).items() if v is not None})
    options.update(spec.option_dict)
    if aggregate is not None:
        options["aggregate"] = aggregate
    try:
        return get_metric(spec.name, **options)
    except (ValueError, TypeError, LookupError, OSError) as exc:
        raise UserError(f"metric {spec.label!r}: {exc}") from None


def metric_aggregates(metric) -> tuple:
    """The aggregations a metric object accepts (``("max", "mean")`` if it does not say)."""
    return tuple(getattr(metric, "aggregates", ("max", "mean")))


def shared_token_cache(metric, caches: dict) -> dict:
    """The tokenization cache for ``metric`` in ``caches``: one per (tokenizer, lowercase, convention)
    (the sacrebleu convention strips trailing space first)."""
    name = getattr(metric, "tokenizer_name", None)
    key = (name, getattr(metric, "lowercase", None), getattr(metric, "convention", "nltk") == "sacrebleu") \
        if name is not None else (type(metric).__name__, id(metric))
    return caches.setdefault(key, {})


class BleuStatsCache:
    """BLEU sufficient statistics shared by BLEU metrics that tokenize alike (bleu1..bleu4).

    Statistics of a (hypothesis, references) pair are counted once at ``order`` (the largest
    order any member needs) and truncated to each metric's own order, which gives exactly
    the numbers the metric computes itself (BLEU reads only its first ``order`` statistics,
    and the order-5 extra only with nltk5/nltk7; a unit test checks the parity).
    """

    def __init__(self, order: int):
        self.order = order
        self._counts: dict = {}
        self._tables: dict = {}
        self._stats: dict = {}

    def stats(self, scorer: "MetricScorer", hypothesis: str, references: tuple):
        from multiref.metrics.bleu import bleu_stats, ngram_counts, ref_table

        key = (hypothesis, references)
        value = self._stats.get(key)
        if value is None:
            counts = self._counts.get(hypothesis)
            if counts is None:
                counts = self._counts[hypothesis] = ngram_counts(scorer.tokens(hypothesis), self.order)
            table = self._tables.get(references)
            if table is None:
                table = self._tables[references] = ref_table([scorer.tokens(r) for r in references], self.order)
            value = self._stats[key] = bleu_stats(counts, len(scorer.tokens(hypothesis)), table)
        return value

    @staticmethod
    def truncate(stats, order: int):
        if len(stats.matches) == order:
            return stats
        return stats._replace(matches=stats.matches[:order], denominators=stats.denominators[:order],
                              totals=stats.totals[:order], last_p5=stats.last_p5 if order >= 5 else None)


def _is_plain_bleu(metric) -> bool:
    try:
        from multiref.metrics.bleu import BLEU
    except ImportError:
        return False
    return type(metric) is BLEU and hasattr(metric, "score_stats") and hasattr(metric, "stat_order")


@dataclass
class MetricScorer:
    """Scores hypotheses against references with one metric, caching tokenization and scores.

    ``metric`` gives single-reference scores (its ``tokenized_sentence_score`` with one
    reference); ``standard`` (optional) is the same metric built with
    ``aggregate="standard"`` and gives the metric's own multi-reference form.
    ``label`` names it in reports; ``signature`` is recorded when the metric has one.

    Fast path (same numbers, fewer recounts): a metric with ``hyp_counts(tokens)``,
    ``ref_table(list_of_tokens)`` and ``score_table(counts, length, table)`` (the BLEU family)
    has each sentence counted once.
    """

    label: str
    metric: Any
    standard: Any = None
    token_cache: dict | None = None
    bleu_cache: BleuStatsCache | None = None
    _pairs: dict = field(default_factory=dict, repr=False)
    _standard: dict = field(default_factory=dict, repr=False)
    _counts: dict = field(default_factory=dict, repr=False)
    _tables: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        if self.token_cache is None:
            self.token_cache = {}
        self._fast = all(hasattr(self.metric, a) for a in ("hyp_counts", "ref_table", "score_table"))
        self._fast_standard = self.standard is not None and all(
            hasattr(self.standard, a) for a in ("hyp_counts", "ref_table", "score_table"))

    @property
    def signature(self) -> str:
        return str(getattr(self.metric, "signature", self.label))

    @property
    def standard_signature(self) -> str | None:
        return None if self.standard is None else str(getattr(self.standard, "signature", self.label))

    def tokens(self, text: str) -> list:
        cached = self.token_cache.get(text)
        if cached is None:
            tokenize = getattr(self.metric, "tokenize", None)
            cached = tokenize(text) if tokenize is not None else text.split()
            self.token_cache[text] = cached
        return cached

    def _hyp_counts(self, text: str):
        counts = self._counts.get(text)
        if counts is None:
            counts = self._counts[text] = self.metric.hyp_counts(self.tokens(text))
        return counts

    def _table(self, metric, references: tuple):
        table = self._tables.get(references)
        if table is None:
            table = self._tables[references] = metric.ref_table([self.tokens(r) for r in references])
        return table

    def pair(self, hypothesis: str, reference: str) -> float:
        """Score against one reference (cached by the two strings)."""
        key = (hypothesis, reference)
        value = self._pairs.get(key)
        if value is None:
            if self.bleu_cache is not None:
                stats = self.bleu_cache.stats(self, hypothesis, (reference,))
                value = float(self.metric.score_stats(self.bleu_cache.truncate(stats, self.metric.stat_order)))
            elif self._fast:
                value = float(self.metric.score_table(self._hyp_counts(hypothesis), len(self.tokens(hypothesis)),
                                                      self._table(self.metric, (reference,))))
            else:
                value = float(self.metric.tokenized_sentence_score(self.tokens(hypothesis), [self.tokens(reference)]))
            self._pairs[key] = value
        return value

    def pairs(self, hypothesis: str, references: Sequence[str]) -> list:
        return [self.pair(hypothesis, r) for r in references]

    def aggregates(self, hypothesis: str, references: Sequence[str], hows: Sequence[str]) -> dict:
        """Several aggregations at once (single-reference scores computed once)."""
        values = self.pairs(hypothesis, references) if set(hows) & {"max", "mean"} else None
        out = {}
        for how in hows:
            if how == "single":
                out[how] = self.pair(hypothesis, references[0])
            elif how == "max":
                out[how] = max(values)
            elif how == "mean":
                out[how] = sum(values) / len(values)
            else:
                out[how] = self.aggregate(hypothesis, references, how)
        return out

    def standard_score(self, hypothesis: str, references: Sequence[str]) -> float | None:
        """The metric's own multi-reference form (None if it has none); cached."""
        if self.standard is None:
            return None
        key = (hypothesis, tuple(references))
        value = self._standard.get(key)
        if value is None:
            if self.bleu_cache is not None and _is_plain_bleu(self.standard):
                stats = self.bleu_cache.stats(self, hypothesis, key[1])
                value = float(self.standard.score_stats(self.bleu_cache.truncate(stats, self.standard.stat_order)))
            elif self._fast_standard:
                value = float(self.standard.score_table(self._hyp_counts(hypothesis), len(self.tokens(hypothesis)),
                                                        self._table(self.standard, key[1])))
            else:
                value = float(self.standard.tokenized_sentence_score(self.tokens(hypothesis),
                                                                     [self.tokens(r) for r in references]))
            self._standard[key] = value
        return value

    def aggregate(self, hypothesis: str, references: Sequence[str], how: str) -> float | None:
        """Score with aggregation ``how``: single (first reference), max, mean, standard.

        Returns ``None`` for ``standard`` when the metric has no standard form.
        """
        if not references:
            raise ValueError(f"{self.label}: no references for {hypothesis!r}")
        if how == "single":
            return self.pair(hypothesis, references[0])
        if how == "max":
            return max(self.pairs(hypothesis, references))
        if how == "mean":
            values = self.pairs(hypothesis, references)
            return sum(values) / len(values)
        if how == "standard":
            return self.standard_score(hypothesis, references)
        raise ValueError(f"unknown aggregation {how!r}; choose one of: {', '.join(AGGREGATIONS)}")

    def multi_aggregation(self, requested: str = "auto") -> str:
        """The aggregation used for "all references": ``auto`` = standard if any, else max."""
        if requested == "auto":
            return "standard" if self.standard is not None else "max"
        if requested == "standard" and self.standard is None:
            raise UserError(f"metric {self.label!r} has no standard multi-reference form; use --aggregate max or mean")
        return requested


@dataclass
class WeightedScorer:
    """deltaBLEU-style scoring with reference weights (``tokenized_sentence_score(..., weights=)``)."""

    label: str
    metric: Any
    token_cache: dict | None = None

    def __post_init__(self):
        if self.token_cache is None:
            self.token_cache = {}

    @property
    def signature(self) -> str:
        return str(getattr(self.metric, "signature", self.label))

    def tokens(self, text: str) -> list:
        cached = self.token_cache.get(text)
        if cached is None:
            cached = self.token_cache[text] = self.metric.tokenize(text)
        return cached

    def _counts(self, text: str):
        cache = self.__dict__.setdefault("_count_cache", {})
        counts = cache.get(text)
        if counts is None:
            from multiref.metrics._ngrams import ngram_counts

            counts = cache[text] = ngram_counts(self.tokens(text), self.metric.stat_order)
        return counts

    def _fast_delta(self, hypothesis: str, references: Sequence[str], weights: Sequence[float]) -> float:
        """deltaBLEU from n-gram counts made once per sentence (a unit test checks parity)."""
        from multiref.metrics.bleu import bleu_from_stats
        from multiref.metrics.delta_bleu import clip_negative, delta_stats, weighted_ref_table

        hyp_counts = self._counts(hypothesis)
        tables, lengths, max_w = weighted_ref_table(
            [self.tokens(r) for r in references], weights, self.metric.stat_order,
            ref_counts=[self._counts(r) for r in references], only=hyp_counts)
        stats = delta_stats(hyp_counts, len(self.tokens(hypothesis)), tables, lengths, max_w)
        m = self.metric
        return float(bleu_from_stats(clip_negative(stats), m.weights, m.smoothing, m.brevity_penalty))

    def score(self, hypothesis: str, references: Sequence[str], weights: Sequence[float]) -> float:
        if type(self.metric).__name__ == "DeltaBLEU" and hasattr(self.metric, "stat_order"):
            return self._fast_delta(hypothesis, references, weights)
        if hasattr(self.metric, "tokenize") and hasattr(self.metric, "tokenized_sentence_score"):
            return float(self.metric.tokenized_sentence_score(self.tokens(hypothesis), [self.tokens(r) for r in references],
                                                              weights=list(weights)))
        return float(self.metric.sentence_score(hypothesis, list(references), weights=list(weights)))


def make_scorer(spec: MetricSpec, common: dict | None = None, token_caches: dict | None = None,
                defaults: dict | None = None) -> MetricScorer:
    """A :class:`MetricScorer` for ``spec``; the standard form is built when the metric has one.

    Scorers given the same ``token_caches`` dict share tokenizations (per tokenizer);
    ``defaults``: per-metric options, as in :func:`build_metric` (both forms get them, so
    ROUGE-L has one beta in every column).
    """
    single = build_metric(spec, common, aggregate="max" if "max" in _class_aggregates(spec) else None,
                          defaults=defaults)
    standard = None
    if "standard" in metric_aggregates(single):
        standard = build_metric(spec, common, aggregate="standard", defaults=defaults)
    return MetricScorer(label=spec.label, metric=single, standard=standard,
                        token_cache=shared_token_cache(single, {} if token_caches is None else token_caches))


def make_scorers(specs: Sequence[MetricSpec], common: dict | None = None, token_caches: dict | None = None,
                 defaults: dict | None = None) -> list:
    """Scorers for several specs, sharing tokenizations; plain BLEU metrics that tokenize alike
    also share one statistics cache."""
    token_caches = {} if token_caches is None else token_caches
    scorers = [make_scorer(spec, common, token_caches, defaults) for spec in specs]
    groups: dict = {}
    for scorer in scorers:
        if _is_plain_bleu(scorer.metric) and (scorer.standard is None or _is_plain_bleu(scorer.standard)):
            key = (scorer.metric.tokenizer_name, scorer.metric.lowercase, scorer.metric.convention == "sacrebleu")
            groups.setdefault(key, []).append(scorer)
    for members in groups.values():
        cache = BleuStatsCache(max(m.metric.stat_order for m in members))
        for m in members:
            m.bleu_cache = cache
    return scorers


def make_weighted_scorer(spec: MetricSpec, common: dict | None = None,
                         token_caches: dict | None = None, defaults: dict | None = None) -> WeightedScorer:
    """A :class:`WeightedScorer` for a metric taking reference weights (``delta_bleu``)."""
    metric = build_metric(spec, common, defaults=defaults)
    return WeightedScorer(label=spec.label, metric=metric,
                          token_cache=shared_token_cache(metric, {} if token_caches is None else token_caches))


def _class_aggregates(spec: MetricSpec) -> tuple:
    from multiref.metrics import metric_class

    try:
        return tuple(getattr(metric_class(spec.name), "aggregates", ("max", "mean")))
    except (ValueError, ImportError):
        return ()
