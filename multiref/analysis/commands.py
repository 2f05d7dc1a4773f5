"""The four ``multiref analyze`` commands as library calls: a config in, a report out.

:func:`correlation`, :func:`refcount`, :func:`discrimination` and :func:`regression` each take
the command's config (:mod:`multiref.analysis.config`: the options ``multiref analyze``
declares, as a frozen dataclass), refuse an output folder that is an input or lies in a dataset
folder, run the analysis, write the JSON report, the Markdown report
and the PNG plots into ``config.output.output_dir`` when it is set, and return an
:class:`Outcome`: the report, the terminal table, what ``--format json`` prints, and notes for
the user. Nothing is printed here (the command line prints the outcome); a user's mistake is
a UserError.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from multiref.util.errors import UserError

EMBEDDING_METRICS = ("embedding_average", "vector_extrema", "greedy_matching")


@dataclass
class Outcome:
    """What an analysis returns: the full ``report`` (as written to report.json), the terminal
    ``text``, the ``payload`` printed by ``--format json``, and ``notes`` (``"note: ..."`` or
    ``"warning: ..."`` lines for stderr)."""

    report: dict
    text: str
    payload: object
    notes: list = field(default_factory=list)


def _separator(text: str) -> str:
    return text.encode("utf-8").decode("unicode_escape") if "\\" in text else text


def _specs(metrics):
    """The metric specs of ``metrics`` (a ``MetricOptions``; no --metric given: the paper's)."""
    from multiref.analysis.scoring import parse_metric_spec

    specs = [parse_metric_spec(s) for s in (metrics.metric or metrics.paper.metrics)]
    labels = [s.label for s in specs]
    dupes = sorted({x for x in labels if labels.count(x) > 1})
    if dupes:
        raise UserError(f"--metric given twice: {', '.join(dupes)}")
    return specs


def _common_options(metrics, output_dir, specs) -> tuple:
    """Options passed to every metric that accepts them, and a description for the report."""
    common = {"tokenizer": metrics.tokenizer, "lowercase": metrics.lowercase, "smoothing": metrics.bleu_smoothing,
              "convention": metrics.bleu_convention, "impl": metrics.meteor_impl}
    info = {}
    if any(s.name in EMBEDDING_METRICS and "vectors" not in s.option_dict for s in specs):
        from multiref.analysis import vectors as vec

        if metrics.vectors:
            common["vectors"] = vec.load_vectors(metrics.vectors)
            info = {"vectors": os.path.abspath(metrics.vectors)}
        elif metrics.train_vectors_from:
            training = vec.VectorConfig(seed=metrics.vector_seed, tokenizer=metrics.tokenizer,
                                        lowercase=metrics.lowercase)
            out = os.path.join(output_dir, "word2vec.kv") if output_dir else None
            common["vectors"] = vec.train_dailydialog_vectors(metrics.train_vectors_from, out, training)
            info = {"vectors_trained_on": os.path.abspath(metrics.train_vectors_from), "word2vec": training.to_dict(),
                    "vocabulary": len(common["vectors"])}
        else:
            raise UserError("embedding metrics need word vectors: give --vectors PATH or --train-vectors-from "
                            "DAILYDIALOG_DIALOGUES_FILE")
    return common, info


def _per_metric(metrics) -> dict:
    """Options fixed per metric name (ROUGE-L's beta), from the command's paper defaults."""
    if not metrics.rouge_beta > 0:
        raise UserError(f"--rouge-beta must be positive, got {metrics.rouge_beta}")
    return {"rouge_l": {"beta": metrics.rouge_beta}}


def _metric_options_report(metrics) -> dict:
    return {"paper_defaults": metrics.paper.paper, "bleu_smoothing": metrics.bleu_smoothing,
            "rouge_beta": metrics.rouge_beta, "bleu_convention": metrics.bleu_convention,
            "meteor_impl": metrics.meteor_impl}


def _scorers(metrics, specs, common, token_caches=None):
    from multiref.analysis.scoring import make_scorers

    return make_scorers(specs, common, token_caches, _per_metric(metrics))


def _check_statistics(confidence: float, **counts) -> None:
    """``counts`` (--bootstrap, --permutations: where the command has them) and --confidence."""
    for flag, count in counts.items():
        if count < 0:
            raise UserError(f"--{flag} must be 0 or more, got {count}")
    if not 0 < confidence < 1:
        raise UserError(f"--confidence must be between 0 and 1, got {confidence}")


def _rows(rated, notes: list):
    """The rated responses ``rated`` (a RatingsOptions) names; a ``note: ...`` in ``notes`` when rows
    without a rating were left out."""
    from multiref.analysis.ratings import RatingColumns, load_multiref_test, load_ratings

    if not rated.ratings:
        raise UserError("no ratings file given (--ratings)")
    columns = RatingColumns(response=rated.response_column, rating=rated.rating_column, system=rated.system_column,
                            reference=rated.reference_column, references=rated.references_column or None,
                            references_separator=_separator(rated.references_separator), id=rated.id_column)
    join = load_multiref_test(rated.multiref_test) if rated.multiref_test else None
    rows, stats = load_ratings(rated.ratings, columns, join=join, exclude_systems=list(rated.exclude_system))
    if rated.max_references:  # each response's first N references, in their stored order
        rows = [replace(r, references=r.references[:rated.max_references]) for r in rows]
    if stats.blank_ratings_dropped:
        notes.append(f"note: {stats.blank_ratings_dropped} row(s) without a rating left out "
                     f"(first at {stats.first_blank_rating})")
    return rows, stats


def _ratings_options(rated, metrics) -> dict:
    return {"ratings": os.path.abspath(rated.ratings),
            "multiref_test": rated.multiref_test and os.path.abspath(rated.multiref_test),
            "exclude_system": list(rated.exclude_system), "aggregate": rated.aggregate, "tokenizer": metrics.tokenizer,
            "lowercase": metrics.lowercase, "reference_column": rated.reference_column,
            "references_column": rated.references_column, "max_references": rated.max_references}


def _signature(rated, scorer) -> str:
    """A metric's signature, with ``maxrefs:N`` under ``--max-references``."""
    return scorer.signature + (f"|maxrefs:{rated.max_references}" if rated.max_references else "")


def _warnings(report: dict) -> list:
    return [f"warning: {message}" for message in report.get("warnings", ())]


# -- the commands --------------------------------------------------------------------------

def _input_paths(config) -> list:
    """Every path the analysis reads: the fields of ``config`` (and of its groups) declared with
    a ``FILE`` or ``PATH`` metavar."""
    from multiref.util.options import options_of

    paths = []
    for f, opt in options_of(type(config)):
        value = getattr(config, f.name)
        if opt.group is not None:
            paths += _input_paths(value)
        elif opt.metavar in ("FILE", "PATH") and value:
            paths.append(value)
    return paths


def _check_output(config) -> None:
    """Before any work: the output folder (``--output``) is no input and lies in no dataset
    folder (:func:`multiref.output.file_output.check_output_folder`)."""
    from multiref.output.file_output import check_output_folder

    check_output_folder(config.output.output_dir, "--output", _input_paths(config))


def correlation(config) -> Outcome:
    """``analyze correlation`` (a :class:`multiref.analysis.config.CorrelationConfig`): metric scores
    against human ratings, with the single original reference and with all of them
    (:func:`multiref.analysis.correlation.analyze_correlation`)."""
    from multiref.analysis.correlation import CorrelationOptions, analyze_correlation, correlation_report, public_json
    from multiref.analysis.ratings import ratings_summary
    from multiref.analysis.report_text import correlation_tables
    from multiref.util import progress

    _check_output(config)
    stats, metrics, output_dir = config.statistics, config.metrics, config.output.output_dir
    _check_statistics(stats.confidence, bootstrap=stats.bootstrap, permutations=stats.permutations)
    notes: list = []
    specs = _specs(metrics)
    rows, load_stats = _rows(config.ratings, notes)
    common, vector_info = _common_options(metrics, output_dir, specs)
    options = CorrelationOptions(aggregate=config.ratings.aggregate, bootstrap=stats.bootstrap, seed=stats.seed,
                                 confidence=stats.confidence, permutations=stats.permutations)
    with progress.step(f"correlation: {len(specs)} metrics x {len(rows):,} responses, {stats.bootstrap} resamples, "
                       f"{stats.permutations} permutations"):
        results, scores = analyze_correlation(_scorers(metrics, specs, common), rows, options)
    for entry in results.values() if config.ratings.max_references else ():
        for key in ("signature", "multi_signature"):
            if entry.get(key):
                entry[key] += f"|maxrefs:{config.ratings.max_references}"
    report = correlation_report({**_ratings_options(config.ratings, metrics), **_metric_options_report(metrics),
                                 "bootstrap": stats.bootstrap, "seed": stats.seed, "confidence": stats.confidence,
                                 "permutations": stats.permutations, **vector_info},
                                {**load_stats.to_dict(), **ratings_summary(rows)}, results)
    notes += _warnings(report)
    if output_dir:
        _write_correlation(output_dir, report, results, scores, rows)
    return Outcome(report, correlation_tables(report), public_json(results), notes)


def _write_correlation(output_dir: str, report: dict, results: dict, scores: dict, rows) -> None:
    """correlation.json, correlation.md and a scatter plot per metric in ``output_dir``."""
    from multiref.analysis import reports
    from multiref.analysis.report_text import correlation_markdown, scatter_title

    plots = {}
    ratings, systems = [r.rating for r in rows], [r.system for r in rows]
    for label, scored in scores.items():
        name = f"plots/scatter_{reports.safe_name(label)}.png"
        entry = results[label]
        reports.scatter_plot(os.path.join(output_dir, name), label, ratings, systems,
                             {scatter_title("single reference", entry["single"]): scored["single"],
                              scatter_title(f"all references ({scored['aggregation']})", entry["multi"]):
                              scored["multi"]})
        plots[label] = name
    reports.write_json(os.path.join(output_dir, "correlation.json"), report)
    reports.write_text(os.path.join(output_dir, "correlation.md"), correlation_markdown(report, plots))


def refcount(config) -> Outcome:
    """``analyze refcount`` (a :class:`multiref.analysis.config.RefcountConfig`): correlation as the
    number of references grows (:func:`multiref.analysis.refcount.refcount_curve`), averaged over
    seeded orders."""
    from multiref.analysis import reports
    from multiref.analysis.ratings import ratings_summary
    from multiref.analysis.refcount import RefcountOptions, refcount_curve
    from multiref.analysis.report_text import refcount_markdown, refcount_table
    from multiref.util import progress

    _check_output(config)
    if config.orders < 1:
        raise UserError(f"--orders must be at least 1, got {config.orders}")
    _check_statistics(config.confidence, bootstrap=config.bootstrap)
    notes: list = []
    metrics, output_dir = config.metrics, config.output.output_dir
    specs = _specs(metrics)
    rows, load_stats = _rows(config.ratings, notes)
    common, vector_info = _common_options(metrics, output_dir, specs)
    options = RefcountOptions(orders=config.orders, seed=config.seed, aggregate=config.ratings.aggregate,
                              bootstrap=config.bootstrap, confidence=config.confidence)
    curves, signatures = {}, {}
    points = len(specs) * max(len(r.references) for r in rows)
    with progress.task(f"refcount: {len(specs)} metrics x {config.orders} orders, {config.bootstrap} resamples",
                       total=points, unit="curve points") as bar:
        for scorer in _scorers(metrics, specs, common):
            curves[scorer.label] = refcount_curve(scorer, rows, options, on_point=bar.update)
            signatures[scorer.label] = _signature(config.ratings, scorer)
    report = {"command": "refcount", "options": {**_ratings_options(config.ratings, metrics),
                                                 **_metric_options_report(metrics),
                                                 "orders": config.orders, "seed": config.seed,
                                                 "bootstrap": config.bootstrap, "confidence": config.confidence,
                                                 **vector_info},
              "data": {**load_stats.to_dict(), **ratings_summary(rows)}, "signatures": signatures, "curves": curves}
    if output_dir:
        for kind in ("pearson", "spearman", "kendall"):
            reports.curve_plot(os.path.join(output_dir, f"plots/refcount_{kind}.png"), curves, kind)
        reports.write_json(os.path.join(output_dir, "refcount.json"), report)
        reports.write_text(os.path.join(output_dir, "refcount.md"), refcount_markdown(report))
    return Outcome(report, refcount_table(report), curves, notes)


def discrimination(config) -> Outcome:
    """``analyze discrimination`` (a :class:`multiref.analysis.config.DiscriminationConfig`):
    DailyDialog++ positives against random and adversarial negatives
    (:func:`multiref.analysis.discrimination.analyze_discrimination`)."""
    from multiref.analysis.discrimination import DiscriminationOptions, analyze_discrimination, load_split
    from multiref.analysis.report_text import discrimination_tables
    from multiref.analysis.scoring import AGGREGATIONS, make_weighted_scorer
    from multiref.util import progress

    _check_output(config)
    data, metrics, grid, output_dir = config.data, config.metrics, config.thresholds, config.output.output_dir
    if grid.step <= 0 or grid.stop < grid.start:
        raise UserError(f"bad threshold grid: --threshold-start {grid.start} --threshold-stop "
                        f"{grid.stop} --threshold-step {grid.step}")
    if not data.test:
        raise UserError("no test split given (--test)")
    specs = _specs(metrics)
    plain = [s for s in specs if s.name != "delta_bleu"]
    test = load_split(data.test, "test", data.dataset_config, name="test")  # inputs first: vectors may take a while
    validation = load_split(data.validation, "validation", data.dataset_config, name="validation") \
        if data.validation else None
    common, vector_info = _common_options(metrics, output_dir, specs)
    token_caches: dict = {}
    delta = [make_weighted_scorer(s, common, token_caches, _per_metric(metrics)) for s in specs
             if s.name == "delta_bleu"]
    aggregations = tuple(a for a in AGGREGATIONS if a in (data.aggregation or AGGREGATIONS))
    _check_statistics(config.confidence)
    options = DiscriminationOptions(grid.start, grid.stop, grid.step, config.confidence)
    with progress.step(f"discrimination: {len(specs)} metrics, {len(test.contexts):,} test contexts"):
        result = analyze_discrimination(_scorers(metrics, plain, common, token_caches), test, validation, delta,
                                        aggregations, options)
    splits = {s.name: {"path": os.path.abspath(s.path), "contexts": len(s.contexts), "empty_responses_dropped":
                       s.empty_dropped, "contexts_skipped_fewer_than_2_positives": s.skipped_contexts}
              for s in (validation, test) if s is not None}
    report = {"command": "discrimination",
              "options": {"tokenizer": metrics.tokenizer, "lowercase": metrics.lowercase,
                          **_metric_options_report(metrics), "aggregations": list(aggregations),
                          "threshold_grid": [grid.start, grid.stop, grid.step], "confidence": config.confidence,
                          "config": data.dataset_config, **vector_info},
              "data": splits, "signatures": result.signatures, "results": result.results}
    if output_dir:
        _write_discrimination(output_dir, report, result.test_scores)
    return Outcome(report, discrimination_tables(report), result.results)


def _write_discrimination(output_dir: str, report: dict, test_scores: dict) -> None:
    """discrimination.json, discrimination.md and a box plot per metric in ``output_dir``."""
    from multiref.analysis import reports
    from multiref.analysis.report_text import discrimination_markdown

    plots = {}
    for label, kinds in test_scores.items():
        groups = {}
        for how in next(iter(kinds.values())):
            data = kinds["random"][how]
            boxes = {"positive": [s for s, y in zip(data["scores"], data["labels"]) if y],
                     "random": [s for s, y in zip(data["scores"], data["labels"]) if not y]}
            adv = kinds["adversarial"][how]
            boxes["adversarial"] = [s for s, y in zip(adv["scores"], adv["labels"]) if not y]
            groups[how] = boxes
        name = f"plots/box_{reports.safe_name(label)}.png"
        reports.box_plot(os.path.join(output_dir, name), label, groups)
        plots[label] = name
    reports.write_json(os.path.join(output_dir, "discrimination.json"), report)
    reports.write_text(os.path.join(output_dir, "discrimination.md"), discrimination_markdown(report, plots))


def regression(config) -> Outcome:
    """``analyze regression`` (a :class:`multiref.analysis.config.RegressionConfig`): leave-one-out
    evaluation of Sugiyama's AM, WS and SVR evaluators
    (:func:`multiref.analysis.regression.leave_one_out`), one per similarity."""
    from multiref.analysis import regression as reg
    from multiref.analysis import reports
    from multiref.analysis.paper_defaults import SUGIYAMA
    from multiref.analysis.report_text import regression_markdown, regression_table
    from multiref.util import progress

    _check_output(config)
    data, model, output_dir = config.data, config.model, config.output.output_dir
    if model.top_m < 1 or model.svr_c <= 0:
        raise UserError(f"--top-m must be at least 1 and --svr-c positive (got {model.top_m}, {model.svr_c})")
    if not data.data:
        raise UserError("no scored references given (--ratings)")
    rated = reg.load_scored_references(data.data, reg.ScoredColumns(
        input=data.input_column, reference=data.reference_column, method=data.method_column, score=data.score_column),
        judgments=data.judgments)
    results = {}
    for name in progress.iterate(list(model.similarity), "regression: leave-one-out", unit="similarities"):
        evaluator = reg.RegressionConfig(similarity=name, tokenizer=model.tokenizer, lowercase=model.lowercase,
                                         top_m=model.top_m, svr_c=model.svr_c)
        results[name] = reg.leave_one_out(rated, evaluator)
    report = {"command": "regression", "options": {"paper_defaults": SUGIYAMA.paper, "data": os.path.abspath(data.data),
                                                   "judgments": data.judgments,
                                                   "tokenizer": model.tokenizer, "lowercase": model.lowercase,
                                                   "top_m": model.top_m, "svr_c": model.svr_c},
              "data": reg.summary(rated), "results": {k: v["correlations"] for k, v in results.items()}}
    if output_dir:
        human, methods = [r.score for r in rated], [r.method for r in rated]
        for name, result in results.items():  # leave-one-out prediction against the human score
            reports.scatter_plot(os.path.join(output_dir, f"plots/regression_{reports.safe_name(name)}.png"),
                                 f"{name} estimate", human, methods, result["predictions"])
        reports.write_json(os.path.join(output_dir, "regression.json"), report)
        reports.write_text(os.path.join(output_dir, "regression.md"), regression_markdown(report))
    return Outcome(report, regression_table(report), report["results"])
