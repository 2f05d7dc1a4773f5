"""One call scores one or more systems: :func:`score` takes a
:class:`multiref.scoring.config.ScoreConfig` and returns a :class:`ScoreOutcome`.

It loads the references and the systems, builds the metrics (each gets only the options its
``__init__`` accepts), scores every system, and with ``--confidence``/``--paired-bs``/
``--paired-ar`` resamples every metric over the items. Per system and metric the outcome
holds the score, the 95% interval, the p-value against the first system, the complete
signature (the metric's, ``maxrefs:N`` and ``items:covered/total`` when they apply, and the
statistics' test, resamples, correction, interval and seed from
:meth:`multiref.metrics.significance.Resampling.suffix`), the per-item scores and, with
``verbose``, BLEU's details. The notes and warnings are data (:class:`Message`), also handed
to ``on_message`` as they arise (the command line prints them then).
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field
from typing import Callable, NamedTuple


class Message(NamedTuple):
    """A note (``"note"``: worth knowing), a warning about the inputs (``"warning"``) or a
    timing (``"log"``), as one line of text."""

    kind: str
    text: str


@dataclass
class SystemResult:
    """One system's results: ``metrics[name]`` = ``{"score", "ci", "p_value", "signature"}``
    (``ci``: ``[low, high]`` or None; ``p_value`` against the first system, None for it and
    without a test) plus ``"details"`` with ``verbose`` for BLEU-like metrics; ``per_item[name]``:
    each item's score, in the order of ``item_ids``."""

    name: str
    metrics: dict = field(default_factory=dict)
    per_item: dict = field(default_factory=dict)
    item_ids: list = field(default_factory=list)


@dataclass
class ScoreOutcome:
    """What :func:`score` returns. ``systems``: one :class:`SystemResult` per system, the first
    the baseline; ``resampling``: the run's :class:`multiref.metrics.significance.Resampling`;
    ``statistics``: whether intervals or a test were computed; ``jackknifed``: the metrics whose
    interval is the delete-one jackknife; ``messages``: notes, warnings and timings in order.
    The raw material of the formats: ``references`` (the reference set), ``inputs`` (``(name,
    pairs, items)`` per system), ``scores[s][m]`` (each metric's
    :class:`multiref.metrics.Score`)."""

    systems: list
    resampling: object
    statistics: bool
    jackknifed: tuple
    messages: list
    references: object
    inputs: list
    scores: list


class _Messages(list):
    def __init__(self, on_message: Callable | None):
        super().__init__()
        self.on_message = on_message

    def add(self, kind: str, text: str) -> None:
        message = Message(kind, text)
        self.append(message)
        if self.on_message is not None:
            self.on_message(message)


def metric_options(name: str, metrics) -> tuple:
    """``(options, skipped)``: the options of ``metrics`` (a
    :class:`multiref.scoring.config.MetricOptions`) that metric ``name`` accepts, and notes on
    the ignored ones."""
    from multiref.metrics import accepted_options, metric_class
    from multiref.metrics.bleu import DEFAULT_CONVENTION

    names = accepted_options(name)
    bleu, bleu_family = metrics.bleu, "smoothing" in names
    counted = name.startswith("distinct") or name == "ead"
    candidates = {
        "tokenizer": metrics.tokenizer, "lowercase": metrics.lowercase, "smoothing": bleu.smoothing,
        "weights": bleu.weights, "brevity_penalty": bleu.brevity_penalty, "vectors": metrics.vectors,
        "convention": bleu.convention, "impl": bleu.meteor_impl,
        "order": bleu.order if bleu_family else (metrics.distinct_order if counted else None),
        "vocab_size": metrics.ead_vocab_size,
    }
    options = {k: v for k, v in candidates.items() if v is not None and k in names}
    if "ties" in names:
        options["ties"] = metrics.ties
    skipped = []
    if bleu_family and "convention" not in names and bleu.convention != DEFAULT_CONVENTION:
        skipped.append(f"{name} keeps the public LSDSCC scorer's BLEU (--bleu-convention applies to bleu, "
                       "delta_bleu and self_bleu)")
    if metrics.aggregate is not None and "aggregate" in names:
        allowed = getattr(metric_class(name), "aggregates", ())  # not a recall wrapper: those take no aggregate
        if metrics.aggregate in allowed:
            options["aggregate"] = metrics.aggregate
        else:
            skipped.append(f"{name} does not take --aggregate {metrics.aggregate} (it uses {', '.join(allowed)})")
    return options, skipped


def build_metrics(names, metrics, messages: _Messages) -> list:
    """The metric objects of ``names`` with the options of ``metrics``; a UserError naming
    ``--metric NAME`` when one cannot be made."""
    from multiref.metrics import get_metric
    from multiref.util.errors import UserError

    out = []
    for name in names:
        try:
            options, skipped = metric_options(name, metrics)
            for note in skipped:
                messages.add("note", f"note: {note}")
            out.append(get_metric(name, **options))
        except UserError:
            raise
        except (ValueError, TypeError, ImportError) as exc:
            raise UserError(f"--metric {name}: {exc}") from None
    return out


def score_systems(systems, metrics, messages: _Messages) -> list:
    """``scores[s][m]``: metric m's Score on system s (a ValueError/TypeError becomes a UserError)."""
    from multiref.util import progress
    from multiref.util.errors import UserError

    out = []
    with progress.task("scoring", total=len(systems) * len(metrics), unit="scores") as bar:
        for name, _, items in systems:
            row = []
            for metric in metrics:
                t0 = time.perf_counter()
                try:
                    row.append(metric.score_items(items))
                except UserError:
                    raise
                except (ValueError, TypeError) as exc:
                    message = str(exc)
                    raise UserError(message if message.startswith(metric.name) else f"{metric.name}: {message}") from None
                bar.update()
                messages.add("log", f"{name}: {metric.name} done in {time.perf_counter() - t0:.2f}s")
            out.append(row)
    return out


def input_warnings(systems, metrics, config) -> list:
    """Warnings about the outputs that matter to the metrics of this run (one line each; the
    empty-and-short count is left out under ``quiet``)."""
    from multiref.scoring.checks import degenerate_warning, style_warnings

    out, explained = [], False
    tokenizer, lowercase = config.metrics.tokenizer, config.metrics.lowercase
    for name, _, items in systems:
        prefix = f"{name}: " if len(systems) > 1 else ""
        warning = None if config.quiet else degenerate_warning(items, metrics, tokenizer, lowercase,
                                                                explain=not explained)
        if warning:
            out.append(prefix + warning)
            explained = True
        if any(m.needs_references for m in metrics):
            out += [prefix + w for w in style_warnings(items, lowercase, tokenizer)]
    return out


def bleu_details(score) -> dict | None:
    """``verbose``: n-gram precisions, brevity penalty and lengths of a corpus BLEU score."""
    stats = getattr(score, "item_stats", None)
    if not stats or not hasattr(stats[0], "matches"):
        return None
    from multiref.metrics.bleu import brevity_penalty_factor, sum_stats

    total = sum_stats(stats)
    nltk = "|conv:" not in score.signature or "|conv:nltk|" in score.signature
    dens = total.denominators if nltk else total.totals  # sacrebleu and nlg-eval divide by the raw n-gram counts
    precisions = [m / d if d else 0.0 for m, d in zip(total.matches, dens)]
    return {"precisions": [round(p, 6) for p in precisions],
            "bp": round(brevity_penalty_factor(total.hyp_len, total.ref_len), 6),
            "hyp_len": total.hyp_len, "ref_len": total.ref_len,
            "ratio": round(total.hyp_len / total.ref_len, 6) if total.ref_len else None}


def signature(result, items, refset) -> str:
    """The metric's signature, plus ``maxrefs:N`` (``max_references``) and ``items:covered/total``
    when only part of the test set is scored."""
    text = result.signature + (f"|maxrefs:{refset.max_references}" if refset.max_references else "")
    if len(items) < len(refset.records):
        return f"{text}|items:{len(items)}/{len(refset.records)}"
    return text


def _results(config, resampling, refset, systems, metrics, scores) -> tuple:
    """``(SystemResult list, jackknifed metric names)`` of the scores, with the statistics when asked."""
    from multiref.scoring.compare import interval_methods, significance

    statistics = resampling.confidence or resampling.test is not None
    found = significance(resampling, systems, metrics, scores, refset) if statistics else None
    methods = interval_methods(metrics) if resampling.confidence else ["percentile"] * len(metrics)
    suffixes = [resampling.suffix(method) for method in methods]
    results = []
    for s, ((name, pairs, items), row) in enumerate(zip(systems, scores)):
        entry = SystemResult(name, item_ids=[ref.id for _hyp, ref in pairs])
        for m, r in enumerate(row):
            ci, p = (found[m][s]["ci"], found[m][s]["p_value"]) if found else (None, None)
            complete = signature(r, items, refset) + (f"|{suffixes[m]}" if suffixes[m] else "")
            entry.metrics[r.name] = {"score": r.score, "ci": list(ci) if ci else None, "p_value": p,
                                     "signature": complete}
            details = bleu_details(r) if config.statistics.verbose else None
            if details:
                entry.metrics[r.name]["details"] = details
            entry.per_item[r.name] = list(r.per_item)
        results.append(entry)
    jackknifed = tuple(dict.fromkeys(m.name for m, method in zip(metrics, methods) if method == "jackknife"))
    return results, jackknifed


def _check_tests(metrics, resampling) -> None:
    """A UserError (one line naming the flag to use) when a metric does not take the test."""
    from multiref.util.errors import UserError

    for metric in metrics:
        try:
            resampling.check(metric)
        except ValueError as exc:
            raise UserError(str(exc)) from None


def score(config, *, stdin=None, on_message: Callable | None = None) -> ScoreOutcome:
    """Score the systems of ``config`` (a :class:`multiref.scoring.config.ScoreConfig`) against
    its references: see the module. ``stdin``: a binary stream for a system named ``-`` (default:
    the process's standard input); ``on_message(Message)``: called with each note, warning and
    timing as it arises. UserError (the inputs' or options' fault) with one line naming it."""
    from multiref.metrics.defaults import DEFAULT_FLAT, DEFAULT_GROUPED
    from multiref.scoring.inputs import references, systems as load_systems

    messages = _Messages(on_message)
    refset = references(config)
    systems = load_systems(config, refset, stdin)
    frozen = gc.get_freeze_count()
    gc.freeze()  # the inputs live to the end: the cyclic collector need not walk them again and again
    try:
        names = list(dict.fromkeys(config.metrics.names or (DEFAULT_GROUPED if refset.grouped else DEFAULT_FLAT)))
        metrics = build_metrics(names, config.metrics, messages)
        resampling = config.statistics.resampling()
        _check_tests(metrics, resampling)
        for name, _, items in systems:
            n_hyps = sum(len(item.hypotheses) for item in items)
            messages.add("log", f"{name}: {len(items)} items, {n_hyps} hypotheses, {len(refset.records)} reference "
                                f"items ({refset.kind})")
        for warning in input_warnings(systems, metrics, config):
            messages.add("warning", warning)
        scores = score_systems(systems, metrics, messages)
        for name, row in zip((s[0] for s in systems), scores):
            for result in row:
                if result.extra.get("note"):
                    messages.add("note", f"{name + ': ' if len(systems) > 1 else ''}{result.name}: null: "
                                         f"{result.extra['note']}")
        results, jackknifed = _results(config, resampling, refset, systems, metrics, scores)
    finally:
        if not frozen:  # a library call leaves the caller's collector as it found it
            gc.unfreeze()
    return ScoreOutcome(results, resampling, resampling.confidence or resampling.test is not None, jackknifed,
                        list(messages), refset, systems, scores)
