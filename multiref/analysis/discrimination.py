"""Can a metric tell relevant responses from irrelevant ones? (DD++, docs/algorithms.md#5-dd)

Input: contexts with ``positive_responses``, ``adversarial_negative_responses`` and
``random_negative_responses`` (DailyDialog++ JSON lines, or a dataset folder's
``dailydialog_pp`` config). Empty strings are dropped and counted.

References of a candidate (the paper: "each against the other 4 positives"):
- positive i: all positives except positive i;
- negative j (of either kind): all positives except positive ``j mod P`` (P positives), so a
  negative is scored against as many positives as a positive is, and each positive is left
  out once per kind, exactly as for the positives.
Aggregations: ``single`` (the first of those references), ``mean``, ``max``, ``standard``
(the metric's own multi-reference form, when it has one).

deltaBLEU (``delta_bleu``): per kind of negative, positive i gets the other positives at +1
and the negatives of that kind except negative ``i mod N`` at -1; negative j gets the
positives except ``j mod P`` at +1 and the other negatives of its kind at -1.

Reported per kind of negative (random, adversarial), on the test split: the point-biserial
correlation (Pearson with the 0/1 label) with its p-value and Fisher-z interval, and the
accuracy (with its Wilson interval, candidates taken as independent) at the threshold
(0 to 1 in steps of 0.01, ``score >= t`` means positive, ties to the smallest t) that is most
accurate on the validation split; without a validation split the threshold is chosen on the
test split itself and the report says so.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from typing import Sequence

from multiref.analysis import stats
from multiref.analysis.config import CONFIDENCE
from multiref.analysis.scoring import AGGREGATIONS, MetricScorer
from multiref.util.errors import UserError, where

NEGATIVE_KINDS = ("random", "adversarial")
FIELDS = {"positive": "positive_responses", "adversarial": "adversarial_negative_responses",
          "random": "random_negative_responses"}


@dataclass(frozen=True)
class Context:
    """One DD++ context with its candidate responses."""

    id: str
    positives: tuple
    adversarial: tuple
    random: tuple

    def negatives(self, kind: str) -> tuple:
        return self.adversarial if kind == "adversarial" else self.random


@dataclass
class Split:
    name: str
    path: str
    contexts: list
    empty_dropped: int = 0
    skipped_contexts: int = 0


def _clean(values, counter: list) -> tuple:
    out = []
    for v in values or ():
        if isinstance(v, str) and v.strip():
            out.append(v)
        else:
            counter[0] += 1
    return tuple(out)


def _context(record: dict, default_id: str, counter: list, path: str, line) -> Context | None:
    missing = [f for f in FIELDS.values() if f not in record]
    if missing:
        raise UserError(f"{where(path, line)}: missing field(s) {', '.join(missing)} (expected the DailyDialog++ layout)")
    positives = _clean(record["positive_responses"], counter)
    ctx = Context(str(record.get("id", default_id)), positives, _clean(record["adversarial_negative_responses"], counter),
                  _clean(record["random_negative_responses"], counter))
    return ctx if len(positives) >= 2 else None


def load_split(path: str, split: str = "test", config: str = "dailydialog_pp", name: str | None = None) -> Split:
    """Read a DD++ JSON lines file, or split ``split`` of a dataset folder's ``config``.

    Contexts with fewer than 2 positives cannot be scored and are counted as skipped.
    """
    counter = [0]
    contexts, skipped = [], 0
    if os.path.isdir(path):
        import pyarrow.parquet as pq

        files = sorted(glob.glob(os.path.join(path, config, f"{split}-*.parquet")))
        if not files:
            raise UserError(f"{path}: no {config}/{split}-*.parquet files (a dataset folder with the {config} config?)")
        for name_ in files:
            data = pq.read_table(name_).to_pylist()
            for i, record in enumerate(data):
                ctx = _context(record, str(i), counter, name_, None)
                if ctx is None:
                    skipped += 1
                else:
                    contexts.append(ctx)
    else:
        from multiref.util.files import read_jsonl

        for line, record in read_jsonl(path, "DailyDialog++ file"):
            ctx = _context(record, str(line), counter, path, line)
            if ctx is None:
                skipped += 1
            else:
                contexts.append(ctx)
    if not contexts:
        raise UserError(f"{path}: no context with at least 2 positive responses")
    return Split(name or split, path, contexts, counter[0], skipped)


def reference_sets(ctx: Context, kind: str) -> list:
    """``[(candidate, label, references)]`` for the positives and the ``kind`` negatives."""
    pos = ctx.positives
    out = [(p, 1, pos[:i] + pos[i + 1:]) for i, p in enumerate(pos)]
    for j, n in enumerate(ctx.negatives(kind)):
        leave = j % len(pos)
        out.append((n, 0, pos[:leave] + pos[leave + 1:]))
    return out


def delta_sets(ctx: Context, kind: str) -> list:
    """``[(candidate, label, references, weights)]`` for deltaBLEU (see the module docstring)."""
    pos, neg = ctx.positives, ctx.negatives(kind)
    out = []
    for i, p in enumerate(pos):
        others = pos[:i] + pos[i + 1:]
        negs = neg[:i % len(neg)] + neg[i % len(neg) + 1:] if neg else ()
        out.append((p, 1, others + negs, (1.0,) * len(others) + (-1.0,) * len(negs)))
    for j, n in enumerate(neg):
        leave = j % len(pos)
        positives = pos[:leave] + pos[leave + 1:]
        negs = neg[:j] + neg[j + 1:]
        out.append((n, 0, positives + negs, (1.0,) * len(positives) + (-1.0,) * len(negs)))
    return out


def score_split(scorer: MetricScorer, split: Split, kind: str, aggregations: Sequence[str] = AGGREGATIONS) -> dict:
    """``{aggregation: {"scores": [...], "labels": [...]}}`` for one kind of negative."""
    out = {how: {"scores": [], "labels": []} for how in aggregations}
    for ctx in split.contexts:
        for candidate, label, refs in reference_sets(ctx, kind):
            for how, value in scorer.aggregates(candidate, refs, aggregations).items():
                if value is None:
                    continue
                out[how]["scores"].append(value)
                out[how]["labels"].append(label)
    return {how: v for how, v in out.items() if v["scores"]}


def score_split_delta(scorer, split: Split, kind: str) -> dict:
    """deltaBLEU scores ``{"delta": {"scores", "labels"}}`` (a :class:`WeightedScorer`)."""
    scores, labels = [], []
    for ctx in split.contexts:
        for candidate, label, refs, weights in delta_sets(ctx, kind):
            scores.append(scorer.score(candidate, refs, weights))
            labels.append(label)
    return {"delta": {"scores": scores, "labels": labels}}


@dataclass(frozen=True)
class DiscriminationOptions:
    threshold_start: float = 0.0
    threshold_stop: float = 1.0
    threshold_step: float = 0.01
    confidence: float = CONFIDENCE


def evaluate(test_scores: dict, validation_scores: dict | None,
             options: DiscriminationOptions = DiscriminationOptions()) -> dict:
    """Point-biserial correlation and thresholded accuracy per aggregation.

    ``*_scores`` are :func:`score_split` results for the same kind of negative.
    """
    grid = stats.threshold_grid(options.threshold_start, options.threshold_stop, options.threshold_step)
    out = {}
    for how, test in test_scores.items():
        entry = {"point_biserial": stats.point_biserial(test["scores"], test["labels"])}
        chosen_on = "validation" if validation_scores and how in validation_scores else "test"
        tune = validation_scores[how] if chosen_on == "validation" else test
        threshold, tune_acc = stats.best_threshold(tune["scores"], tune["labels"], grid)
        accuracy = stats.accuracy_at(test["scores"], test["labels"], threshold)
        pb = entry["point_biserial"]["value"]
        entry.update({
            "threshold": threshold,
            "threshold_chosen_on": chosen_on,
            f"{chosen_on}_accuracy": tune_acc,
            "accuracy": accuracy,
            "accuracy_ci": stats.wilson_interval(round(accuracy * len(test["scores"])), len(test["scores"]),
                                                 options.confidence),
            "point_biserial_ci": stats.fisher_interval(pb, len(test["scores"]), options.confidence),
            "mean_positive": _mean([s for s, y in zip(test["scores"], test["labels"]) if y]),
            "mean_negative": _mean([s for s, y in zip(test["scores"], test["labels"]) if not y]),
            "candidates": len(test["scores"]),
        })
        if chosen_on == "validation":
            entry["validation_point_biserial"] = stats.point_biserial(tune["scores"], tune["labels"])["value"]
        out[how] = entry
    return out


def _mean(values):
    return sum(values) / len(values) if values else None


@dataclass
class DiscriminationResult:
    results: dict = field(default_factory=dict)  # label -> kind -> aggregation -> entry
    test_scores: dict = field(default_factory=dict)  # label -> kind -> aggregation -> {"scores","labels"}
    signatures: dict = field(default_factory=dict)


def analyze_discrimination(scorers: Sequence[MetricScorer], test: Split, validation: Split | None = None,
                           weighted: Sequence = (), aggregations: Sequence[str] = AGGREGATIONS,
                           options: DiscriminationOptions = DiscriminationOptions()) -> DiscriminationResult:
    """Run the analysis for each :class:`MetricScorer` and each weighted (deltaBLEU) scorer."""
    result = DiscriminationResult()
    for scorer in scorers:
        result.signatures[scorer.label] = scorer.signature
        for kind in NEGATIVE_KINDS:
            test_scores = score_split(scorer, test, kind, aggregations)
            val_scores = score_split(scorer, validation, kind, aggregations) if validation else None
            result.results.setdefault(scorer.label, {})[kind] = evaluate(test_scores, val_scores, options)
            result.test_scores.setdefault(scorer.label, {})[kind] = test_scores
    for scorer in weighted:
        label = scorer.label
        result.signatures[label] = scorer.signature
        for kind in NEGATIVE_KINDS:
            test_scores = score_split_delta(scorer, test, kind)
            val_scores = score_split_delta(scorer, validation, kind) if validation else None
            result.results.setdefault(label, {})[kind] = evaluate(test_scores, val_scores, options)
            result.test_scores.setdefault(label, {})[kind] = test_scores
    return result
