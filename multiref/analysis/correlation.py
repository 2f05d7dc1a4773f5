"""Metric against human ratings: one reference against all (docs/algorithms.md#4-multiref-dd).

For every rated response and every metric, the response is scored against the single
original reference (``single``) and against all its references (``multi``, with the metric's
standard multi-reference form when it has one, else the max over references; option
``aggregate``). Pearson, Spearman and Kendall (tau-b) with p-values are reported at the
response level and at the system level (means per system), with seeded percentile bootstrap
intervals when ``bootstrap > 0`` and Fisher-z intervals for Pearson.

Comparisons (:func:`compare_scores`): for each metric, all references against one, and for each
pair of metrics, in each setting, the difference of their correlations with the human ratings,
Williams' test (Pearson and Spearman; :func:`multiref.analysis.stats.williams_test`) and a
paired permutation test (all three; :func:`multiref.analysis.stats.permutation_test`), at the
response and the system level. A system-level statistic on fewer than ``MIN_SYSTEMS`` systems
comes with a warning (:func:`system_warning`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from multiref.analysis import stats
from multiref.analysis.ratings import RatedResponse
from multiref.analysis.scoring import MetricScorer
from multiref.analysis.config import BOOTSTRAP, CONFIDENCE, PERMUTATIONS
from multiref.util.defaults import SEED

SETTINGS = ("single", "multi")


@dataclass(frozen=True)
class CorrelationOptions:
    """Options that change the numbers (recorded in the report)."""

    aggregate: str = "auto"  # for "multi": auto (standard if the metric has it, else max) | max | mean | standard
    bootstrap: int = BOOTSTRAP
    seed: int = SEED
    confidence: float = CONFIDENCE
    permutations: int = PERMUTATIONS


MIN_SYSTEMS = 10  # below this, a system-level correlation gets a warning
WILLIAMS_KINDS = ("pearson", "spearman")  # Williams' t assumes Pearson-like sampling variance: not Kendall's tau

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


def fisher_intervals(result: dict, rows: int, confidence: float) -> dict:
    """``{"response": [low, high], "system": [low, high]}``: Fisher-z intervals of the Pearson
    correlations of a :func:`correlate` result (None where undefined or fewer than 4 points)."""
    systems = len(result["system_level"]["systems"])
    return {"response": stats.fisher_interval(result["pearson"]["value"], rows, confidence),
            "system": stats.fisher_interval(result["system_level"]["pearson"]["value"], systems, confidence)}


def system_warning(systems: int) -> str | None:
    """The warning for system-level statistics on ``systems`` systems (None from MIN_SYSTEMS up)."""
    if systems >= MIN_SYSTEMS:
        return None
    return (f"system-level correlations rest on {systems} systems (fewer than {MIN_SYSTEMS}): their intervals are "
            "wide and their tests weak; read them with care")


def _williams(x, y, human, kind: str) -> dict:
    """Williams' t and p of ``corr(x, human) = corr(y, human)`` (None where undefined)."""
    none = {"williams_t": None, "williams_p": None}
    if kind not in WILLIAMS_KINDS or len(human) < 4:
        return none
    r12 = stats.correlation(x, human, kind)["value"]
    r13 = stats.correlation(y, human, kind)["value"]
    r23 = stats.correlation(x, y, kind)["value"]
    if r12 is None or r13 is None or r23 is None:
        return none
    t, p = stats.williams_test(r12, r13, r23, len(human))
    return {"williams_t": t, "williams_p": p}


def compare_scores(x: Sequence[float], y: Sequence[float], ratings: Sequence[float], systems: Sequence[str],
                   options: CorrelationOptions = CorrelationOptions()) -> dict:
    """Is ``corr(x, ratings)`` different from ``corr(y, ratings)``? ``x`` and ``y`` score the same rows.

    Returns ``{"response": {kind: entry}, "system": {kind: entry}}`` with ``entry = {"difference":
    corr(x) - corr(y), "williams_t", "williams_p", "permutation_p", "n"}`` (``n``: rows or systems).
    System-level Williams uses the means per system; the permutation test swaps whole systems,
    then takes the means (seeded with ``options.seed``; no permutation test when
    ``options.permutations`` is 0).
    """
    names = sorted(set(systems), key=str)
    means = [[m[s] for s in names] for m in (stats.system_means(x, systems), stats.system_means(y, systems),
                                             stats.system_means(ratings, systems))]
    out = {}
    for level, (xs, ys, hs, strata) in {"response": (x, y, ratings, None), "system": (*means, systems)}.items():
        perm = stats.permutation_test(x, y, ratings, options.permutations, options.seed, strata)
        entries = {}
        for kind in stats.CORRELATIONS:
            rx, ry = stats.correlation(xs, hs, kind)["value"], stats.correlation(ys, hs, kind)["value"]
            entries[kind] = {"difference": None if rx is None or ry is None else rx - ry,
                             **_williams(xs, ys, hs, kind), "permutation_p": perm[kind]["p"], "n": len(hs)}
        out[level] = entries
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
        entry["fisher_z"] = {setting: fisher_intervals(entry[setting], len(rows), options.confidence)
                             for setting in SETTINGS}
        entry["multi_vs_single"] = compare_scores(scored["multi"], scored["single"], ratings, systems, options)
        results[scorer.label] = entry
    add_metric_comparisons(results, all_scores, ratings, systems, options)
    return results, all_scores


def add_metric_comparisons(results: dict, scores: dict, ratings, systems, options: CorrelationOptions) -> None:
    """Add ``results[A]["versus"][B] = {setting: compare_scores(A, B)}`` for every pair of
    metrics A before B (in the order given), in both settings."""
    labels = list(results)
    for i, a in enumerate(labels):
        results[a]["versus"] = {b: {setting: compare_scores(scores[a][setting], scores[b][setting], ratings, systems,
                                                            options) for setting in SETTINGS}
                                for b in labels[i + 1:]}


PUBLIC_KEYS = SETTINGS + ("fisher_z", "multi_vs_single", "versus")


def public_json(results: dict) -> dict:
    """The ``--format json`` shape: ``{metric: {"single"|"multi": {pearson, spearman, kendall,
    system_level}, "fisher_z", "multi_vs_single", "versus"}}``."""
    return {label: {key: entry[key] for key in PUBLIC_KEYS if key in entry} for label, entry in results.items()}


def correlation_report(options: dict, data: dict, results: dict) -> dict:
    """The ``correlation.json`` report: ``{"command", "options", "data", "results", "warnings"}``.

    ``warnings`` lists the messages a reader must see (fewer than MIN_SYSTEMS systems).
    """
    warning = system_warning(len(data.get("systems", {})))
    return {"command": "correlation", "options": options, "data": data, "results": results,
            "warnings": [warning] if warning else []}
