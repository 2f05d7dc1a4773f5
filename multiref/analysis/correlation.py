"""Metric against human ratings: one reference against all (ALGORITHMS.md section 4).

For every rated response and every metric, the response is scored against the single
original reference (``single``) and against all its references (``multi``, with the metric's
standard multi-reference form when it has one, else the max over references; option
``aggregate``). Pearson, Spearman and Kendall (tau-b) with p-values are reported at the
response level and at the system level (means per system), with seeded percentile bootstrap
intervals when ``bootstrap > 0``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from multiref.analysis import stats
from multiref.analysis.ratings import RatedResponse
from multiref.analysis.scoring import MetricScorer

SETTINGS = ("single", "multi")


@dataclass(frozen=True)
class CorrelationOptions:
    """Options that change the numbers (recorded in the report)."""

    aggregate: str = "auto"  # for "multi": auto (standard if the metric has it, else max) | max | mean | standard
    bootstrap: int = 1000
    seed: int = 12345
    confidence: float = 0.95


def score_rows(scorer: MetricScorer, rows: Sequence[RatedResponse], aggregate: str = "auto") -> dict:
    """``{"single": [...], "multi": [...], "aggregation": name}``: one score per row."""
    how = scorer.multi_aggregation(aggregate)
    single = [scorer.aggregate(r.response, [r.reference], "single") for r in rows]
    multi = [scorer.aggregate(r.response, list(r.references), how) for r in rows]
    return {"single": single, "multi": multi, "aggregation": how}


def correlate(scores: Sequence[float], ratings: Sequence[float], systems: Sequence[str],
              options: CorrelationOptions = CorrelationOptions()) -> dict:
    """Response- and system-level correlations of ``scores`` with ``ratings``.

    Returns ``{"pearson": {"value", "p"[, "ci"]}, "spearman": ..., "kendall": ...,
    "system_level": {same three, plus "systems": {name: {"metric", "human"}}}}``.
    """
    out = stats.correlations(scores, ratings)
    metric_means = stats.system_means(scores, systems)
    human_means = stats.system_means(ratings, systems)
    names = list(metric_means)
    system = stats.correlations([metric_means[s] for s in names], [human_means[s] for s in names])
    if options.bootstrap > 0:
        cis = stats.bootstrap_correlations(scores, ratings, options.bootstrap, options.seed, options.confidence)
        for kind, ci in cis.items():
            out[kind]["ci"] = ci
        if len(names) >= 3:
            cis = stats.bootstrap_system_correlations(scores, ratings, systems, options.bootstrap, options.seed,
                                                      options.confidence)
            for kind, ci in cis.items():
                system[kind]["ci"] = ci
    system["systems"] = {s: {"metric": metric_means[s], "human": human_means[s]} for s in names}
    out["system_level"] = system
    return out


def analyze_correlation(scorers: Sequence[MetricScorer], rows: Sequence[RatedResponse],
                        options: CorrelationOptions = CorrelationOptions()) -> tuple:
    """Run the analysis for every scorer.

    Returns ``(results, scores)``: ``results[label] = {"single": correlate(...), "multi":
    correlate(...), "signature", "multi_aggregation"}`` and ``scores[label]`` the per-row
    scores (for plots).
    """
    ratings = [r.rating for r in rows]
    systems = [r.system for r in rows]
    results, all_scores = {}, {}
    for scorer in scorers:
        scored = score_rows(scorer, rows, options.aggregate)
        all_scores[scorer.label] = scored
        entry = {setting: correlate(scored[setting], ratings, systems, options) for setting in SETTINGS}
        entry["signature"] = scorer.signature
        entry["multi_aggregation"] = scored["aggregation"]
        if scored["aggregation"] == "standard":
            entry["multi_signature"] = scorer.standard_signature
        results[scorer.label] = entry
    return results, all_scores


def public_json(results: dict) -> dict:
    """The ``--format json`` shape: ``{metric: {"single"|"multi": {pearson, spearman, kendall, system_level}}}``."""
    return {label: {setting: entry[setting] for setting in SETTINGS} for label, entry in results.items()}
