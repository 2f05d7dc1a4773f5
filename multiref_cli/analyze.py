"""``multiref analyze``: evaluate the evaluators (correlation, discrimination, refcount, regression).

The options are declared here; each handler makes one call to :mod:`multiref.analysis.commands`
(which runs the analysis and writes the reports) and prints what it returns. Only the
standard library is imported at module level.

Examples::

    multiref analyze correlation --ratings mturk_rating_processed_output.csv \\
        --metric bleu1 --metric bleu4:smoothing=nltk1 --metric rouge_l --output out/corr
    multiref analyze discrimination --validation dev.json --test test.json --metric bleu2 --metric delta_bleu
    multiref analyze refcount --ratings mturk_rating_processed_output.csv --multiref-references multireftest.json
    multiref analyze regression --ratings scored_references.jsonl --similarity bleu
"""

from __future__ import annotations

import argparse
import sys

from multiref.metrics.defaults import DEFAULT_SEED  # stdlib-only module


def _add_metric_options(p: argparse.ArgumentParser, paper) -> None:
    """Metric options; ``paper`` (a :class:`multiref.analysis.paper_defaults.PaperDefaults`)
    gives every default, and the help names it."""
    from multiref.metrics.bleu import ALL_SMOOTHINGS, CONVENTIONS  # stdlib-only module
    from multiref.metrics.meteor import METEOR_IMPLS
    from multiref_cli.common import tokenizer_choices

    g = p.add_argument_group(f"metrics (defaults: {paper.paper}, {paper.study})")
    g.add_argument("--metric", action="append", metavar="SPEC",
                   help="metric NAME or NAME:key=value,... (repeatable; list values with '/': "
                        "bleu:weights=0.5/0.5); bleu1..bleu4 = bleu with order 1..4; "
                        f"default: {' '.join(paper.metrics)}")
    g.add_argument("--tokenizer", default=paper.tokenizer, choices=tokenizer_choices(), metavar="NAME",
                   help=f"tokenizer for every metric: %(choices)s (default: {paper.tokenizer}, as {paper.paper})")
    g.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=paper.lowercase,
                   help=f"lowercase before tokenizing (default: {'yes' if paper.lowercase else 'no'}, "
                        f"as {paper.paper})")
    g.add_argument("--bleu-smoothing", choices=ALL_SMOOTHINGS, default=paper.bleu_smoothing,
                   help="smoothing of every BLEU-family metric whose spec sets none (nltk0..nltk7 = NLTK's "
                        f"SmoothingFunction().method0..7; default: {paper.bleu_smoothing}, as {paper.paper}; "
                        "exp/floor/add-k: sacrebleu's, with --bleu-convention sacrebleu)")
    g.add_argument("--bleu-convention", choices=CONVENTIONS, default="nltk",
                   help="whose BLEU formulas for bleu, delta_bleu, self_bleu (default: nltk, the papers'; sacrebleu, "
                        "nlgeval = pycocoevalcap's Bleu)")
    g.add_argument("--meteor-impl", choices=METEOR_IMPLS, default="nltk",
                   help="meteor: nltk (default) or 1.5 (the METEOR 1.5 jar, as nlg-eval; "
                        "pip install 'multiref-dialog[meteor]')")
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
    """``multiref analyze correlation|refcount|discrimination|regression``."""
    from multiref_cli.common import group

    sub = group(parser)
    _register_correlation(sub)
    _register_refcount(sub)
    _register_discrimination(sub)
    _register_regression(sub)


def _register_correlation(sub) -> None:
    from multiref.analysis.paper_defaults import GUPTA_2019  # stdlib-only module

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
    g.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"bootstrap and permutation seed (default: {DEFAULT_SEED})")
    g.add_argument("--permutations", type=int, default=1000, metavar="N",
                   help="rounds of the paired permutation test comparing two correlations (0: none; default: 1000)")
    _add_output_options(p)
    p.set_defaults(func=run_correlation)


def _register_refcount(sub) -> None:
    from multiref.analysis.paper_defaults import GUPTA_2019  # stdlib-only module

    p = sub.add_parser("refcount", help="correlation as the number of references grows",
                       description="Correlation of metrics with human ratings for 1..all references, averaged over "
                                   f"seeded random orders of the references. Defaults follow {GUPTA_2019.paper}.")
    _add_ratings_options(p)
    _add_metric_options(p, GUPTA_2019)
    p.add_argument("--orders", type=int, default=10, help="random reference orders to average over (default: 10)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED,
                   help=f"seed of the orders and the bootstrap (default: {DEFAULT_SEED})")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                   help="bootstrap resamples of the responses for the bands around the curves (0: none; default: 1000)")
    p.add_argument("--confidence", type=float, default=0.95, help="confidence level of the bands (default: 0.95)")
    _add_output_options(p)
    p.set_defaults(func=run_refcount)


def _register_discrimination(sub) -> None:
    from multiref.analysis.paper_defaults import SAI_2020  # stdlib-only module

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


def _register_regression(sub) -> None:
    from multiref.analysis.paper_defaults import SUGIYAMA  # stdlib-only module

    p = sub.add_parser("regression", help="Sugiyama's regression evaluator (AM, WS, SVR), leave-one-out",
                       description="Leave-one-out evaluation of the AM, WS and SVR evaluators on references scored "
                                   f"by people (docs/algorithms.md#7-sugiyama-regression). Defaults follow {SUGIYAMA.paper} ({SUGIYAMA.study}).")
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
    from multiref_cli.common import tokenizer_choices

    g.add_argument("--tokenizer", default=SUGIYAMA.tokenizer, choices=tokenizer_choices(), metavar="NAME",
                   help=f"tokenizer: %(choices)s (default: {SUGIYAMA.tokenizer})")
    g.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=SUGIYAMA.lowercase,
                   help=f"lowercase before tokenizing (default: {'yes' if SUGIYAMA.lowercase else 'no'})")
    g.add_argument("--top-m", type=int, default=SUGIYAMA.top_m,
                   help=f"M of AM and WS (default: {SUGIYAMA.top_m}, as {SUGIYAMA.paper})")
    g.add_argument("--svr-c", type=float, default=SUGIYAMA.svr_c,
                   help=f"C of the RBF SVR (default: {SUGIYAMA.svr_c:g}, as {SUGIYAMA.paper})")
    _add_output_options(p)
    p.set_defaults(func=run_regression)


# -- handlers: parse (above), one call (multiref.analysis.commands), print -------------------

def _show(args, outcome) -> int:
    """Print an analysis' notes on stderr and its table (or ``--format json``, its payload)."""
    from multiref.analysis import reports

    for note in outcome.notes:
        print(f"multiref analyze: {note}", file=sys.stderr)
    sys.stdout.write(reports.dumps(outcome.payload) if args.format == "json" else outcome.text)
    return 0


INPUT_FLAGS = ("ratings", "data", "judgments", "multiref_test", "multiref_references", "vectors")


def _check_output(args) -> None:
    """The output folder is no input and lies in no dataset folder (multiref.output.file_output)."""
    from multiref.output.file_output import check_output_folder

    check_output_folder(getattr(args, "output_dir", None), "--output",
                        [getattr(args, name, None) for name in INPUT_FLAGS])


def run_correlation(args) -> int:
    from multiref.analysis import commands

    _check_output(args)
    return _show(args, commands.correlation(args))


def run_refcount(args) -> int:
    from multiref.analysis import commands

    _check_output(args)
    return _show(args, commands.refcount(args))


def run_discrimination(args) -> int:
    from multiref.analysis import commands

    _check_output(args)
    return _show(args, commands.discrimination(args))


def run_regression(args) -> int:
    from multiref.analysis import commands

    _check_output(args)
    return _show(args, commands.regression(args))
