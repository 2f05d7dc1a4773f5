"""The four ``multiref analyze`` commands as library calls: parsed options in, a report out.

:func:`correlation`, :func:`refcount`, :func:`discrimination` and :func:`regression` each take
the options as parsed (an ``argparse.Namespace`` with the attributes ``multiref analyze``
declares), run the analysis, write the JSON report, the Markdown report and the PNG plots
into ``args.output_dir`` when it is set, and return an :class:`Outcome`: the report, the
terminal table, what ``--format json`` prints, and notes for the user. Nothing is printed
here (the command line prints the outcome); a user's mistake is a UserError.
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


def _specs(args, defaults):
    from multiref.analysis.scoring import parse_metric_spec

    specs = [parse_metric_spec(s) for s in (args.metric or defaults)]
    labels = [s.label for s in specs]
    dupes = sorted({x for x in labels if labels.count(x) > 1})
    if dupes:
        raise UserError(f"--metric given twice: {', '.join(dupes)}")
    return specs


def _common_options(args, specs) -> tuple:
    """Options passed to every metric that accepts them, and a description for the report."""
    common = {"tokenizer": args.tokenizer, "lowercase": args.lowercase, "smoothing": args.bleu_smoothing,
              "convention": getattr(args, "bleu_convention", None), "impl": getattr(args, "meteor_impl", None)}
    info = {}
    if any(s.name in EMBEDDING_METRICS and "vectors" not in s.option_dict for s in specs):
        from multiref.analysis import vectors as vec

        if args.vectors:
            common["vectors"] = vec.load_vectors(args.vectors)
            info = {"vectors": os.path.abspath(args.vectors)}
        elif args.train_vectors_from:
            config = vec.VectorConfig(seed=args.vector_seed, tokenizer=args.tokenizer, lowercase=args.lowercase)
            out = os.path.join(args.output_dir, "word2vec.kv") if args.output_dir else None
            common["vectors"] = vec.train_dailydialog_vectors(args.train_vectors_from, out, config)
            info = {"vectors_trained_on": os.path.abspath(args.train_vectors_from), "word2vec": config.to_dict(),
                    "vocabulary": len(common["vectors"])}
        else:
            raise UserError("embedding metrics need word vectors: give --vectors PATH or --train-vectors-from "
                            "DAILYDIALOG_DIALOGUES_FILE")
    return common, info


def _per_metric(args) -> dict:
    """Options fixed per metric name (ROUGE-L's beta), from the command's paper defaults."""
    if not args.rouge_beta > 0:
        raise UserError(f"--rouge-beta must be positive, got {args.rouge_beta}")
    return {"rouge_l": {"beta": args.rouge_beta}}


def _metric_options_report(args, paper) -> dict:
    return {"paper_defaults": paper.paper, "bleu_smoothing": args.bleu_smoothing, "rouge_beta": args.rouge_beta,
            "bleu_convention": getattr(args, "bleu_convention", "nltk"), "meteor_impl": getattr(args, "meteor_impl", "nltk")}


def _scorers(args, specs, common, token_caches=None):
    from multiref.analysis.scoring import make_scorers

    return make_scorers(specs, common, token_caches, _per_metric(args))


def _check_statistics(args) -> None:
    """--bootstrap, --permutations (where the command has them) and --confidence."""
    for flag in ("bootstrap", "permutations"):
        if getattr(args, flag, 0) < 0:
            raise UserError(f"--{flag} must be 0 or more, got {getattr(args, flag)}")
    if not 0 < args.confidence < 1:
        raise UserError(f"--confidence must be between 0 and 1, got {args.confidence}")


def _rows(args, notes: list):
    """The rated responses ``args`` names; a note in ``notes`` when rows without a rating were left out."""
    from multiref.analysis.ratings import RatingColumns, load_multiref_test, load_ratings

    columns = RatingColumns(response=args.response_column, rating=args.rating_column, system=args.system_column,
                            reference=args.reference_column, references=args.references_column or None,
                            references_separator=_separator(args.references_separator), id=args.id_column)
    join = load_multiref_test(args.multiref_test) if args.multiref_test else None
    rows, stats = load_ratings(args.ratings, columns, join=join, exclude_systems=args.exclude_system)
    if args.max_references:  # each response's first N references, in their stored order
        rows = [replace(r, references=r.references[:args.max_references]) for r in rows]
    if stats.blank_ratings_dropped and not getattr(args, "quiet", False):
        notes.append(f"note: {stats.blank_ratings_dropped} row(s) without a rating left out "
                     f"(first at {stats.first_blank_rating})")
    return rows, stats


def _ratings_options(args) -> dict:
    return {"ratings": os.path.abspath(args.ratings), "multiref_test": args.multiref_test and os.path.abspath(args.multiref_test),
            "exclude_system": args.exclude_system, "aggregate": args.aggregate, "tokenizer": args.tokenizer,
            "lowercase": args.lowercase, "reference_column": args.reference_column,
            "references_column": args.references_column, "max_references": args.max_references}


def _signature(args, scorer) -> str:
    """A metric's signature, with ``maxrefs:N`` under ``--max-references``."""
    return scorer.signature + (f"|maxrefs:{args.max_references}" if args.max_references else "")


def _warnings(report: dict) -> list:
    return [f"warning: {message}" for message in report.get("warnings", ())]


# -- the commands --------------------------------------------------------------------------

def correlation(args) -> Outcome:
    """``analyze correlation``: metric scores against human ratings, with the single original
    reference and with all of them (:func:`multiref.analysis.correlation.analyze_correlation`)."""
    from multiref.analysis.correlation import CorrelationOptions, analyze_correlation, correlation_report, public_json
    from multiref.analysis.paper_defaults import GUPTA_2019
    from multiref.analysis.ratings import ratings_summary
    from multiref.analysis.report_text import correlation_tables
    from multiref.util import progress

    _check_statistics(args)
    notes: list = []
    specs = _specs(args, GUPTA_2019.metrics)
    rows, load_stats = _rows(args, notes)
    common, vector_info = _common_options(args, specs)
    options = CorrelationOptions(aggregate=args.aggregate, bootstrap=args.bootstrap, seed=args.seed,
                                 confidence=args.confidence, permutations=args.permutations)
    with progress.step(f"correlation: {len(specs)} metrics x {len(rows):,} responses, {args.bootstrap} resamples, "
                       f"{args.permutations} permutations"):
        results, scores = analyze_correlation(_scorers(args, specs, common), rows, options)
    for entry in results.values() if args.max_references else ():
        for key in ("signature", "multi_signature"):
            if entry.get(key):
                entry[key] += f"|maxrefs:{args.max_references}"
    report = correlation_report({**_ratings_options(args), **_metric_options_report(args, GUPTA_2019),
                                 "bootstrap": args.bootstrap, "seed": args.seed, "confidence": args.confidence,
                                 "permutations": args.permutations, **vector_info},
                                {**load_stats.to_dict(), **ratings_summary(rows)}, results)
    notes += _warnings(report)
    if args.output_dir:
        _write_correlation(args.output_dir, report, results, scores, rows)
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


def refcount(args) -> Outcome:
    """``analyze refcount``: correlation as the number of references grows
    (:func:`multiref.analysis.refcount.refcount_curve`), averaged over seeded orders."""
    from multiref.analysis import reports
    from multiref.analysis.paper_defaults import GUPTA_2019
    from multiref.analysis.ratings import ratings_summary
    from multiref.analysis.refcount import RefcountOptions, refcount_curve
    from multiref.analysis.report_text import refcount_markdown, refcount_table
    from multiref.util import progress

    if args.orders < 1:
        raise UserError(f"--orders must be at least 1, got {args.orders}")
    _check_statistics(args)
    notes: list = []
    specs = _specs(args, GUPTA_2019.metrics)
    rows, load_stats = _rows(args, notes)
    common, vector_info = _common_options(args, specs)
    options = RefcountOptions(orders=args.orders, seed=args.seed, aggregate=args.aggregate, bootstrap=args.bootstrap,
                              confidence=args.confidence)
    curves, signatures = {}, {}
    points = len(specs) * max(len(r.references) for r in rows)
    with progress.task(f"refcount: {len(specs)} metrics x {args.orders} orders, {args.bootstrap} resamples",
                       total=points, unit="curve points") as bar:
        for scorer in _scorers(args, specs, common):
            curves[scorer.label] = refcount_curve(scorer, rows, options, on_point=bar.update)
            signatures[scorer.label] = _signature(args, scorer)
    report = {"command": "refcount", "options": {**_ratings_options(args), **_metric_options_report(args, GUPTA_2019),
                                                 "orders": args.orders, "seed": args.seed,
                                                 "bootstrap": args.bootstrap, "confidence": args.confidence,
                                                 **vector_info},
              "data": {**load_stats.to_dict(), **ratings_summary(rows)}, "signatures": signatures, "curves": curves}
    if args.output_dir:
        for kind in ("pearson", "spearman", "kendall"):
            reports.curve_plot(os.path.join(args.output_dir, f"plots/refcount_{kind}.png"), curves, kind)
        reports.write_json(os.path.join(args.output_dir, "refcount.json"), report)
        reports.write_text(os.path.join(args.output_dir, "refcount.md"), refcount_markdown(report))
    return Outcome(report, refcount_table(report), curves, notes)


def discrimination(args) -> Outcome:
    """``analyze discrimination``: DailyDialog++ positives against random and adversarial
    negatives (:func:`multiref.analysis.discrimination.analyze_discrimination`)."""
    from multiref.analysis.discrimination import DiscriminationOptions, analyze_discrimination, load_split
    from multiref.analysis.paper_defaults import SAI_2020
    from multiref.analysis.report_text import discrimination_tables
    from multiref.analysis.scoring import AGGREGATIONS, make_weighted_scorer
    from multiref.util import progress

    if args.threshold_step <= 0 or args.threshold_stop < args.threshold_start:
        raise UserError(f"bad threshold grid: --threshold-start {args.threshold_start} --threshold-stop "
                        f"{args.threshold_stop} --threshold-step {args.threshold_step}")
    specs = _specs(args, SAI_2020.metrics)
    plain = [s for s in specs if s.name != "delta_bleu"]
    test = load_split(args.test, "test", args.config, name="test")  # inputs first: vectors may take a while
    validation = load_split(args.validation, "validation", args.config, name="validation") if args.validation else None
    common, vector_info = _common_options(args, specs)
    token_caches: dict = {}
    delta = [make_weighted_scorer(s, common, token_caches, _per_metric(args)) for s in specs if s.name == "delta_bleu"]
    aggregations = tuple(a for a in AGGREGATIONS if a in (args.aggregation or AGGREGATIONS))
    _check_statistics(args)
    options = DiscriminationOptions(args.threshold_start, args.threshold_stop, args.threshold_step, args.confidence)
    with progress.step(f"discrimination: {len(specs)} metrics, {len(test.contexts):,} test contexts"):
        result = analyze_discrimination(_scorers(args, plain, common, token_caches), test, validation, delta,
                                        aggregations, options)
    splits = {s.name: {"path": os.path.abspath(s.path), "contexts": len(s.contexts), "empty_responses_dropped":
                       s.empty_dropped, "contexts_skipped_fewer_than_2_positives": s.skipped_contexts}
              for s in (validation, test) if s is not None}
    report = {"command": "discrimination",
              "options": {"tokenizer": args.tokenizer, "lowercase": args.lowercase, **_metric_options_report(args, SAI_2020),
                          "aggregations": list(aggregations),
                          "threshold_grid": [args.threshold_start, args.threshold_stop, args.threshold_step],
                          "confidence": args.confidence,
                          "config": args.config, **vector_info},
              "data": splits, "signatures": result.signatures, "results": result.results}
    if args.output_dir:
        _write_discrimination(args.output_dir, report, result.test_scores)
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


def regression(args) -> Outcome:
    """``analyze regression``: leave-one-out evaluation of Sugiyama's AM, WS and SVR
    evaluators (:func:`multiref.analysis.regression.leave_one_out`), one per similarity."""
    from multiref.analysis import regression as reg
    from multiref.analysis import reports
    from multiref.analysis.paper_defaults import SUGIYAMA
    from multiref.analysis.report_text import regression_markdown, regression_table
    from multiref.util import progress

    if args.top_m < 1 or args.svr_c <= 0:
        raise UserError(f"--top-m must be at least 1 and --svr-c positive (got {args.top_m}, {args.svr_c})")
    data = reg.load_scored_references(args.data, reg.ScoredColumns(
        input=args.input_column, reference=args.reference_column, method=args.method_column, score=args.score_column),
        judgments=args.judgments)
    similarities = args.similarity or list(SUGIYAMA.similarity)
    results = {}
    for name in progress.iterate(similarities, "regression: leave-one-out", unit="similarities"):
        config = reg.RegressionConfig(similarity=name, tokenizer=args.tokenizer, lowercase=args.lowercase,
                                      top_m=args.top_m, svr_c=args.svr_c)
        results[name] = reg.leave_one_out(data, config)
    report = {"command": "regression", "options": {"paper_defaults": SUGIYAMA.paper, "data": os.path.abspath(args.data),
                                                   "judgments": args.judgments,
                                                   "tokenizer": args.tokenizer, "lowercase": args.lowercase,
                                                   "top_m": args.top_m, "svr_c": args.svr_c},
              "data": reg.summary(data), "results": {k: v["correlations"] for k, v in results.items()}}
    if args.output_dir:
        human, methods = [r.score for r in data], [r.method for r in data]
        for name, result in results.items():  # leave-one-out prediction against the human score
            reports.scatter_plot(os.path.join(args.output_dir, f"plots/regression_{reports.safe_name(name)}.png"),
                                 f"{name} estimate", human, methods, result["predictions"])
        reports.write_json(os.path.join(args.output_dir, "regression.json"), report)
        reports.write_text(os.path.join(args.output_dir, "regression.md"), regression_markdown(report))
    return Outcome(report, regression_table(report), report["results"])
