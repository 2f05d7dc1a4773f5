"""``multiref analyze``: evaluate the evaluators (correlation, discrimination, refcount, regression).

Only the standard library is imported here; each handler imports what it needs.

Examples::

    multiref analyze correlation --ratings mturk_rating_processed_output.csv \\
        --metric bleu1 --metric bleu4:smoothing=nltk1 --metric rouge_l --output out/corr
    multiref analyze discrimination --validation dev.json --test test.json --metric bleu2 --metric delta_bleu
    multiref analyze refcount --ratings mturk_rating_processed_output.csv --multiref-references multireftest.json
    multiref analyze regression --ratings scored_references.jsonl --similarity bleu
"""

from __future__ import annotations

import argparse
import os
import sys

EMBEDDING_METRICS = ("embedding_average", "vector_extrema", "greedy_matching")


def _separator(text: str) -> str:
    return text.encode("utf-8").decode("unicode_escape") if "\\" in text else text


def _add_metric_options(p: argparse.ArgumentParser, paper) -> None:
    """Metric options; ``paper`` (a :class:`multiref.analysis.paper_defaults.PaperDefaults`)
    gives every default, and the help names it."""
    from multiref.metrics.bleu import SMOOTHINGS  # stdlib-only module
    from multiref_cli import tokenizer_choices

    g = p.add_argument_group(f"metrics (defaults: {paper.paper}, {paper.study})")
    g.add_argument("--metric", action="append", metavar="SPEC",
                   help="metric NAME or NAME:key=value,... (repeatable; list values with '/': "
                        "bleu:weights=0.5/0.5); bleu1..bleu4 = bleu with order 1..4; "
                        f"default: {' '.join(paper.metrics)}")
    g.add_argument("--tokenizer", default=paper.tokenizer, choices=tokenizer_choices(),
                   help=f"tokenizer for every metric (default: {paper.tokenizer}, as {paper.paper})")
    g.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=paper.lowercase,
                   help=f"lowercase before tokenizing (default: {'yes' if paper.lowercase else 'no'}, "
                        f"as {paper.paper})")
    g.add_argument("--bleu-smoothing", choices=SMOOTHINGS, default=paper.bleu_smoothing,
                   help="smoothing of every BLEU-family metric whose spec sets none (nltk0..nltk7 = NLTK's "
                        f"SmoothingFunction().method0..7; default: {paper.bleu_smoothing}, as {paper.paper})")
    g.add_argument("--rouge-beta", type=float, default=paper.rouge_beta, metavar="BETA",
                   help="ROUGE-L F-measure beta, the same in every column and aggregation "
                        f"(default: {paper.rouge_beta:g}, nlg-eval's, as {paper.paper})")
    g.add_argument("--vectors", metavar="PATH", help="word vectors for the embedding metrics (.kv, .bin or word2vec text)")
    g.add_argument("--train-vectors-from", metavar="PATH",
                   help="train seeded word2vec vectors on this DailyDialog dialogues file (e.g. "
                        "dailydialog/train/dialogues_train.txt) for the embedding metrics; saved as "
                        "OUTPUT_DIR/word2vec.kv")
    g.add_argument("--vector-seed", type=int, default=13, help="seed of the word2vec training (default: 13)")


def _add_output_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("output")
    g.add_argument("--output", dest="output_dir", metavar="DIR",
                   help="write the JSON report, the Markdown report and PNG plots into this folder")
    g.add_argument("--format", choices=("table", "json"), default="table", help="what to print (default: table)")


def _add_ratings_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("ratings (defaults fit multirefeval's mturk_rating_processed_output.csv)")
    g.add_argument("--ratings", required=True, metavar="FILE", help="CSV/TSV or JSON lines file of rated responses")
    g.add_argument("--response-column", default="response")
    g.add_argument("--rating-column", default="human_average_rating")
    g.add_argument("--system-column", default="model")
    g.add_argument("--reference-column", default="prevgt", help="the single original reference (default: prevgt)")
    g.add_argument("--references-column", default="all_references",
                   help="the other references, joined by --references-separator or a JSON list ('' for none)")
    g.add_argument("--references-separator", default="\\t", help="separator of --references-column (default: \\t)")
    g.add_argument("--id-column", default="context_id",
                   help="context id, used by --multiref-references (default: context_id)")
    g.add_argument("--multiref-references", dest="multiref_test", metavar="PATH",
                   help="multireftest.json or a dataset folder with the multiref config: add the 5 references of "
                        "each context (joined by context id)")
    g.add_argument("--exclude-system", action="append", default=[], metavar="NAME", help="leave out this system")
    g.add_argument("--aggregate", choices=("auto", "max", "mean", "standard"), default="auto",
                   help="multi-reference aggregation: auto (default) = the metric's standard form if it has one "
                        "(BLEU's clipped counts: BLEU-2 Spearman 0.205 against Gupta et al. 2019's 0.208; their "
                        "scorer's max over references gives 0.195), else max")


def register(parser: argparse.ArgumentParser) -> None:
    from multiref.analysis.paper_defaults import GUPTA_2019, SAI_2020, SUGIYAMA  # stdlib-only module
    from multiref_cli import group

    sub = group(parser)

    p = sub.add_parser("correlation", help="metric scores against human ratings, one reference against all",
                       description="Correlate metric scores with human ratings, with the single original reference "
                                   "and with all references, at the response and system level. Defaults reproduce "
                                   f"{GUPTA_2019.paper} ({GUPTA_2019.study}).")
    _add_ratings_options(p)
    _add_metric_options(p, GUPTA_2019)
    g = p.add_argument_group("statistics")
    g.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                   help="bootstrap resamples for confidence intervals (0: none; default: 1000)")
    g.add_argument("--confidence", type=float, default=0.95, help="confidence level (default: 0.95)")
    g.add_argument("--seed", type=int, default=12345, help="bootstrap and permutation seed (default: 12345)")
    g.add_argument("--permutations", type=int, default=1000, metavar="N",
                   help="rounds of the paired permutation test comparing two correlations (0: none; default: 1000)")
    _add_output_options(p)
    p.set_defaults(func=run_correlation)

    p = sub.add_parser("refcount", help="correlation as the number of references grows",
                       description="Correlation of metrics with human ratings for 1..all references, averaged over "
                                   f"seeded random orders of the references. Defaults follow {GUPTA_2019.paper}.")
    _add_ratings_options(p)
    _add_metric_options(p, GUPTA_2019)
    p.add_argument("--orders", type=int, default=10, help="random reference orders to average over (default: 10)")
    p.add_argument("--seed", type=int, default=12345, help="seed of the orders and the bootstrap (default: 12345)")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                   help="bootstrap resamples of the responses for the bands around the curves (0: none; default: 1000)")
    p.add_argument("--confidence", type=float, default=0.95, help="confidence level of the bands (default: 0.95)")
    _add_output_options(p)
    p.set_defaults(func=run_refcount)

    p = sub.add_parser("discrimination", help="positives against negatives (DailyDialog++)",
                       description="Score DailyDialog++ candidates against the other positives; report the "
                                   "point-biserial correlation with the label and the accuracy at a threshold "
                                   "chosen on the validation split, for random and adversarial negatives. Defaults "
                                   f"follow {SAI_2020.paper} ({SAI_2020.study}). "
                                   "The embedding metrics (e.g. --metric greedy_matching) need word vectors: "
                                   "--vectors PATH, or --train-vectors-from DIALOGUES_FILE as for correlation.")
    g = p.add_argument_group("data")
    g.add_argument("--test", required=True, metavar="PATH", help="DD++ JSON lines file, or a dataset folder")
    g.add_argument("--validation", metavar="PATH",
                   help="DD++ JSON lines file or dataset folder to choose the threshold on (default: the test split)")
    g.add_argument("--config", default="dailydialog_pp", help="config of a dataset folder (default: dailydialog_pp)")
    g.add_argument("--aggregate", dest="aggregation", action="append", choices=("single", "mean", "max", "standard"),
                   help="aggregations to report (repeatable; default: all four)")
    _add_metric_options(p, SAI_2020)
    g = p.add_argument_group("threshold search (DD++: 0 to 1 in steps of 0.01)")
    g.add_argument("--threshold-start", type=float, default=0.0)
    g.add_argument("--threshold-stop", type=float, default=1.0)
    g.add_argument("--threshold-step", type=float, default=0.01)
    p.add_argument("--confidence", type=float, default=0.95,
                   help="confidence level of the intervals on accuracy (Wilson) and point-biserial r (Fisher-z) "
                        "(default: 0.95)")
    _add_output_options(p)
    p.set_defaults(func=run_discrimination)

    p = sub.add_parser("regression", help="Sugiyama's regression evaluator (AM, WS, SVR), leave-one-out",
                       description="Leave-one-out evaluation of the AM, WS and SVR evaluators on references scored "
                                   f"by people (ALGORITHMS.md section 7). Defaults follow {SUGIYAMA.paper} ({SUGIYAMA.study}).")
    g = p.add_argument_group("data")
    g.add_argument("--ratings", dest="data", required=True, metavar="FILE",
                   help="JSON lines or CSV: one scored reference per row (input, reference, method, score)")
    g.add_argument("--input-column", default="input")
    g.add_argument("--reference-column", default="reference")
    g.add_argument("--method-column", default="method")
    g.add_argument("--score-column", default="score")
    g.add_argument("--pairwise-ratings", dest="judgments", metavar="FILE",
                   help="pairwise judgments (JSON lines/CSV: input, winner, loser); scores become winning rates")
    g = p.add_argument_group("model")
    g.add_argument("--similarity", choices=("bleu", "ribes", "wer", "wer2"), action="append",
                   help="similarity feature(s): bleu (NIST geometric smoothing), ribes, wer (1-NL), wer2 (1-2NL); "
                        f"repeatable (default: {' '.join(SUGIYAMA.similarity)}, as {SUGIYAMA.paper})")
    from multiref_cli import tokenizer_choices

    g.add_argument("--tokenizer", default=SUGIYAMA.tokenizer, choices=tokenizer_choices(),
                   help=f"tokenizer (default: {SUGIYAMA.tokenizer})")
    g.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=SUGIYAMA.lowercase,
                   help=f"lowercase before tokenizing (default: {'yes' if SUGIYAMA.lowercase else 'no'})")
    g.add_argument("--top-m", type=int, default=SUGIYAMA.top_m,
                   help=f"M of AM and WS (default: {SUGIYAMA.top_m}, as {SUGIYAMA.paper})")
    g.add_argument("--svr-c", type=float, default=SUGIYAMA.svr_c,
                   help=f"C of the RBF SVR (default: {SUGIYAMA.svr_c:g}, as {SUGIYAMA.paper})")
    _add_output_options(p)
    p.set_defaults(func=run_regression)


# -- shared ------------------------------------------------------------------------------

def _specs(args, defaults):
    from multiref.analysis.scoring import parse_metric_spec

    specs = [parse_metric_spec(s) for s in (args.metric or defaults)]
    labels = [s.label for s in specs]
    dupes = sorted({x for x in labels if labels.count(x) > 1})
    if dupes:
        from multiref.util.errors import UserError

        raise UserError(f"--metric given twice: {', '.join(dupes)}")
    return specs


def _common_options(args, specs) -> tuple:
    """Options passed to every metric that accepts them, and a description for the report."""
    from multiref.util.errors import UserError

    common = {"tokenizer": args.tokenizer, "lowercase": args.lowercase, "smoothing": args.bleu_smoothing}
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
        from multiref.util.errors import UserError

        raise UserError(f"--rouge-beta must be positive, got {args.rouge_beta}")
    return {"rouge_l": {"beta": args.rouge_beta}}


def _metric_options_report(args, paper) -> dict:
    return {"paper_defaults": paper.paper, "bleu_smoothing": args.bleu_smoothing, "rouge_beta": args.rouge_beta}


def _scorers(args, specs, common, token_caches=None):
    from multiref.analysis.scoring import make_scorers

    return make_scorers(specs, common, token_caches, _per_metric(args))


def _check_statistics(args) -> None:
    """--bootstrap, --permutations (where the command has them) and --confidence."""
    from multiref.util.errors import UserError

    for flag in ("bootstrap", "permutations"):
        if getattr(args, flag, 0) < 0:
            raise UserError(f"--{flag} must be 0 or more, got {getattr(args, flag)}")
    if not 0 < args.confidence < 1:
        raise UserError(f"--confidence must be between 0 and 1, got {args.confidence}")


def _warn(report: dict) -> None:
    for message in report.get("warnings", ()):
        print(f"multiref analyze: warning: {message}", file=sys.stderr)


def _emit(args, text: str, payload) -> None:
    from multiref.analysis import reports

    sys.stdout.write(reports.dumps(payload) if args.format == "json" else text)


def _rows(args):
    from multiref.analysis.ratings import RatingColumns, load_multiref_test, load_ratings

    columns = RatingColumns(response=args.response_column, rating=args.rating_column, system=args.system_column,
                            reference=args.reference_column, references=args.references_column or None,
                            references_separator=_separator(args.references_separator), id=args.id_column)
    join = load_multiref_test(args.multiref_test) if args.multiref_test else None
    rows, stats = load_ratings(args.ratings, columns, join=join, exclude_systems=args.exclude_system)
    if stats.blank_ratings_dropped and not getattr(args, "quiet", False):
        print(f"multiref analyze: note: {stats.blank_ratings_dropped} row(s) without a rating left out "
              f"(first at {stats.first_blank_rating})", file=sys.stderr)
    return rows, stats


def _ratings_options(args) -> dict:
    return {"ratings": os.path.abspath(args.ratings), "multiref_test": args.multiref_test and os.path.abspath(args.multiref_test),
            "exclude_system": args.exclude_system, "aggregate": args.aggregate, "tokenizer": args.tokenizer,
            "lowercase": args.lowercase, "reference_column": args.reference_column,
            "references_column": args.references_column}


# -- handlers ------------------------------------------------------------------------------

def run_correlation(args) -> int:
    from multiref.analysis import reports
    from multiref.analysis.paper_defaults import GUPTA_2019
    from multiref.analysis.correlation import CorrelationOptions, analyze_correlation, correlation_report, public_json
    from multiref.analysis.ratings import ratings_summary
    from multiref.analysis.report_text import correlation_markdown, correlation_tables, scatter_title

    _check_statistics(args)
    specs = _specs(args, GUPTA_2019.metrics)
    rows, load_stats = _rows(args)
    common, vector_info = _common_options(args, specs)
    options = CorrelationOptions(aggregate=args.aggregate, bootstrap=args.bootstrap, seed=args.seed,
                                 confidence=args.confidence, permutations=args.permutations)
    from multiref.util import progress

    with progress.step(f"correlation: {len(specs)} metrics x {len(rows):,} responses, {args.bootstrap} resamples, "
                       f"{args.permutations} permutations"):
        results, scores = analyze_correlation(_scorers(args, specs, common), rows, options)
    report = correlation_report({**_ratings_options(args), **_metric_options_report(args, GUPTA_2019),
                                 "bootstrap": args.bootstrap, "seed": args.seed, "confidence": args.confidence,
                                 "permutations": args.permutations, **vector_info},
                                {**load_stats.to_dict(), **ratings_summary(rows)}, results)
    _warn(report)
    if args.output_dir:
        plots = {}
        ratings, systems = [r.rating for r in rows], [r.system for r in rows]
        for label, scored in scores.items():
            name = f"plots/scatter_{reports.safe_name(label)}.png"
            entry = results[label]
            reports.scatter_plot(os.path.join(args.output_dir, name), label, ratings, systems,
                                 {scatter_title("single reference", entry["single"]): scored["single"],
                                  scatter_title(f"all references ({scored['aggregation']})", entry["multi"]):
                                  scored["multi"]})
            plots[label] = name
        reports.write_json(os.path.join(args.output_dir, "correlation.json"), report)
        reports.write_text(os.path.join(args.output_dir, "correlation.md"), correlation_markdown(report, plots))
    _emit(args, correlation_tables(report), public_json(results))
    return 0


def run_refcount(args) -> int:
    from multiref.analysis import reports
    from multiref.analysis.paper_defaults import GUPTA_2019
    from multiref.analysis.ratings import ratings_summary
    from multiref.analysis.refcount import RefcountOptions, refcount_curve
    from multiref.analysis.report_text import refcount_markdown, refcount_table

    if args.orders < 1:
        from multiref.util.errors import UserError

        raise UserError(f"--orders must be at least 1, got {args.orders}")
    _check_statistics(args)
    specs = _specs(args, GUPTA_2019.metrics)
    rows, load_stats = _rows(args)
    common, vector_info = _common_options(args, specs)
    options = RefcountOptions(orders=args.orders, seed=args.seed, aggregate=args.aggregate, bootstrap=args.bootstrap,
                              confidence=args.confidence)
    from multiref.util import progress

    curves, signatures = {}, {}
    for scorer in progress.iterate(_scorers(args, specs, common), f"refcount: {args.orders} orders", unit="metrics"):
        curves[scorer.label] = refcount_curve(scorer, rows, options)
        signatures[scorer.label] = scorer.signature
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
    _emit(args, refcount_table(report), curves)
    return 0


def run_discrimination(args) -> int:
    from multiref.analysis import reports
    from multiref.analysis.discrimination import DiscriminationOptions, analyze_discrimination, load_split
    from multiref.analysis.paper_defaults import SAI_2020
    from multiref.analysis.report_text import discrimination_markdown, discrimination_tables
    from multiref.analysis.scoring import AGGREGATIONS, make_weighted_scorer

    from multiref.util.errors import UserError

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
    from multiref.util import progress

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
        plots = {}
        for label, kinds in result.test_scores.items():
            groups = {}
            for how in next(iter(kinds.values())):
                data = kinds["random"][how]
                boxes = {"positive": [s for s, y in zip(data["scores"], data["labels"]) if y],
                         "random": [s for s, y in zip(data["scores"], data["labels"]) if not y]}
                adv = kinds["adversarial"][how]
                boxes["adversarial"] = [s for s, y in zip(adv["scores"], adv["labels"]) if not y]
                groups[how] = boxes
            name = f"plots/box_{reports.safe_name(label)}.png"
            reports.box_plot(os.path.join(args.output_dir, name), label, groups)
            plots[label] = name
        reports.write_json(os.path.join(args.output_dir, "discrimination.json"), report)
        reports.write_text(os.path.join(args.output_dir, "discrimination.md"), discrimination_markdown(report, plots))
    _emit(args, discrimination_tables(report), result.results)
    return 0


def run_regression(args) -> int:
    from multiref.analysis import regression, reports
    from multiref.analysis.report_text import regression_markdown, regression_table
    from multiref.util.errors import UserError

    if args.top_m < 1 or args.svr_c <= 0:
        raise UserError(f"--top-m must be at least 1 and --svr-c positive (got {args.top_m}, {args.svr_c})")
    data = regression.load_scored_references(args.data, regression.ScoredColumns(
        input=args.input_column, reference=args.reference_column, method=args.method_column, score=args.score_column),
        judgments=args.judgments)
    from multiref.util import progress
    from multiref.analysis.paper_defaults import SUGIYAMA

    similarities = args.similarity or list(SUGIYAMA.similarity)
    results = {}
    for name in progress.iterate(similarities, "regression: leave-one-out", unit="similarities"):
        config = regression.RegressionConfig(similarity=name, tokenizer=args.tokenizer, lowercase=args.lowercase,
                                             top_m=args.top_m, svr_c=args.svr_c)
        results[name] = regression.leave_one_out(data, config)
    report = {"command": "regression", "options": {"paper_defaults": SUGIYAMA.paper, "data": os.path.abspath(args.data),
                                                   "judgments": args.judgments,
                                                   "tokenizer": args.tokenizer, "lowercase": args.lowercase,
                                                   "top_m": args.top_m, "svr_c": args.svr_c},
              "data": regression.summary(data), "results": {k: v["correlations"] for k, v in results.items()}}
    if args.output_dir:
        human, methods = [r.score for r in data], [r.method for r in data]
        for name, result in results.items():  # leave-one-out prediction against the human score
            reports.scatter_plot(os.path.join(args.output_dir, f"plots/regression_{reports.safe_name(name)}.png"),
                                 f"{name} estimate", human, methods, result["predictions"])
        reports.write_json(os.path.join(args.output_dir, "regression.json"), report)
        reports.write_text(os.path.join(args.output_dir, "regression.md"), regression_markdown(report))
    _emit(args, regression_table(report), report["results"])
    return 0
