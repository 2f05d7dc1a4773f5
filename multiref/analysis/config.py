"""The options of the four ``multiref analyze`` commands, declared once.

Each command's options are a frozen dataclass (:class:`CorrelationConfig`,
:class:`RefcountConfig`, :class:`DiscriminationConfig`, :class:`RegressionConfig`) whose
fields are :func:`multiref.util.options.option` declarations: the flag, the default and the
help text in one place. The command line adds the flags from these classes
(``add_arguments``) and builds the config from the parsed flags once (``from_args``); a
Python caller builds the config directly, e.g.
``CorrelationConfig(ratings=RatingsOptions(ratings="ratings.csv"), statistics=CorrelationStatistics(bootstrap=0))``,
and passes it to :mod:`multiref.analysis.commands`.

The metric defaults are a paper's (:mod:`multiref.analysis.paper_defaults`):
:func:`metric_options` makes the metric-options class of one paper, so Gupta et al.'s and
Sai et al.'s defaults are each written once, in that module. Standard library only (the
command line imports this for ``--help``).
"""

from __future__ import annotations

from dataclasses import dataclass

from multiref.analysis.paper_defaults import GUPTA_2019, SAI_2020, SUGIYAMA
from multiref.metrics.bleu import ALL_SMOOTHINGS, CONVENTIONS  # stdlib-only module
from multiref.metrics.meteor import METEOR_IMPLS
from multiref.metrics.tokenizers import TOKENIZER_CHOICES
from multiref.util.defaults import SEED
from multiref.util.options import group, option

#: defaults of the statistics, which the library's options (CorrelationOptions, RefcountOptions,
#: DiscriminationOptions) read from here too
BOOTSTRAP = 1000  # resamples of the bootstrap intervals (correlation, refcount)
CONFIDENCE = 0.95
PERMUTATIONS = 1000  # rounds of the paired permutation test (correlation)
ORDERS = 10  # random reference orders (refcount)


def _positive_int(text: str) -> int:
    from multiref.util.options import number_type

    return number_type(int, 1, None)(text)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def metric_options(paper) -> type:
    """The metric-options class whose defaults are ``paper``'s (a
    :class:`multiref.analysis.paper_defaults.PaperDefaults`); the help names it."""

    @dataclass(frozen=True)
    class MetricOptions:
        metric: tuple = option(paper.metrics, flag="--metric", repeat=True, metavar="SPEC",
                               help="metric NAME or NAME:key=value,... (repeatable; list values with '/': "
                                    "bleu:weights=0.5/0.5); bleu1..bleu4 = bleu with order 1..4; "
                                    f"default: {' '.join(paper.metrics)}")
        tokenizer: str = option(paper.tokenizer, flag="--tokenizer", choices=TOKENIZER_CHOICES, metavar="NAME",
                                help=f"tokenizer for every metric: %(choices)s (default: {paper.tokenizer}, "
                                     f"as {paper.paper})")
        lowercase: bool = option(paper.lowercase, flag="--lowercase", negatable=True,
                                 help=f"lowercase before tokenizing (default: {_yes(paper.lowercase)}, "
                                      f"as {paper.paper})")
        bleu_smoothing: str = option(paper.bleu_smoothing, flag="--bleu-smoothing", choices=ALL_SMOOTHINGS,
                                     help="smoothing of every BLEU-family metric whose spec sets none (nltk0..nltk7 "
                                          "= NLTK's SmoothingFunction().method0..7; default: "
                                          f"{paper.bleu_smoothing}, as {paper.paper}; exp/floor/add-k: sacrebleu's, "
                                          "with --bleu-convention sacrebleu)")
        bleu_convention: str = option("nltk", flag="--bleu-convention", choices=CONVENTIONS,
                                      help="whose BLEU formulas for bleu, delta_bleu, self_bleu (default: nltk, the "
                                           "papers'; sacrebleu, nlgeval = pycocoevalcap's Bleu)")
        meteor_impl: str = option("nltk", flag="--meteor-impl", choices=METEOR_IMPLS,
                                  help="meteor: nltk (default) or 1.5 (the METEOR 1.5 jar, as nlg-eval; "
                                       "pip install 'multiref-dialog[meteor]')")
        rouge_beta: float = option(paper.rouge_beta, flag="--rouge-beta", metavar="BETA",
                                   help="ROUGE-L F-measure beta, the same in every column and aggregation "
                                        f"(default: {paper.rouge_beta:g}, nlg-eval's, as {paper.paper})")
        vectors: str | None = option(None, flag="--vectors", metavar="PATH",
                                     help="word vectors for the embedding metrics (.kv, .bin or word2vec text)")
        train_vectors_from: str | None = option(
            None, flag="--train-vectors-from", metavar="PATH",
            help="train seeded word2vec vectors on this DailyDialog dialogues file (e.g. "
                 "dailydialog/train/dialogues_train.txt) for the embedding metrics; saved as OUTPUT_DIR/word2vec.kv")
        vector_seed: int = option(13, flag="--vector-seed", help="seed of the word2vec training (default: 13)")

    MetricOptions.paper = paper
    MetricOptions.__qualname__ = MetricOptions.__name__ = f"MetricOptions_{paper.paper.split()[0]}"
    return MetricOptions


GuptaMetrics = metric_options(GUPTA_2019)
SaiMetrics = metric_options(SAI_2020)


def _metrics_title(paper) -> str:
    return f"metrics (defaults: {paper.paper}, {paper.study})"


@dataclass(frozen=True)
class OutputOptions:
    """Where the reports go; ``format`` is what the command line prints."""

    output_dir: str | None = option(None, flag="--output", metavar="DIR",
                                    help="write the JSON report, the Markdown report and PNG plots into this folder")
    format: str = option("table", flag="--format", choices=("table", "json"), help="what to print (default: table)")


@dataclass(frozen=True)
class RatingsOptions:
    """The rated responses (defaults: multirefeval's mturk_rating_processed_output.csv)."""

    ratings: str | None = option(None, flag="--ratings", required=True, metavar="FILE",
                                 help="CSV/TSV or JSON lines file of rated responses")
    response_column: str = option("response", flag="--response-column", help=None)
    rating_column: str = option("human_average_rating", flag="--rating-column", help=None)
    system_column: str = option("model", flag="--system-column", help=None)
    reference_column: str = option("prevgt", flag="--reference-column",
                                   help="the single original reference (default: prevgt)")
    references_column: str = option("all_references", flag="--references-column", show_default=False,
                                     help="the other references, joined by --references-separator or a JSON list "
                                          "('' for none)")
    references_separator: str = option("\\t", flag="--references-separator",
                                       help="separator of --references-column (default: \\t)")
    id_column: str = option("context_id", flag="--id-column",
                            help="context id, used by --multiref-references (default: context_id)")
    multiref_test: str | None = option(None, flag="--multiref-references", metavar="PATH",
                                       help="multireftest.json or a dataset folder with the multiref config: add the "
                                            "5 references of each context (joined by context id)")
    exclude_system: tuple = option((), flag="--exclude-system", repeat=True, metavar="NAME",
                                   help="leave out this system")
    max_references: int | None = option(None, flag="--max-references", metavar="N", parse=_positive_int,
                                        help="each response's first N references, in their stored order (the single "
                                             "one first; default: all; the report's options and signatures record "
                                             "maxrefs:N)")
    aggregate: str = option("auto", flag="--aggregate", choices=("auto", "max", "mean", "standard"),
                            help="multi-reference aggregation: auto (default) = the metric's standard form if it has "
                                 "one (BLEU's clipped counts: BLEU-2 Spearman 0.205 against Gupta et al. 2019's "
                                 "0.208; their scorer's max over references gives 0.195), else max")


_RATINGS_TITLE = "ratings (defaults fit multirefeval's mturk_rating_processed_output.csv)"


@dataclass(frozen=True)
class CorrelationStatistics:
    bootstrap: int = option(BOOTSTRAP, flag="--bootstrap", metavar="N",
                            help=f"bootstrap resamples for confidence intervals (0: none; default: {BOOTSTRAP})")
    confidence: float = option(CONFIDENCE, flag="--confidence", help=f"confidence level (default: {CONFIDENCE})")
    seed: int = option(SEED, flag="--seed", help=f"bootstrap and permutation seed (default: {SEED})")
    permutations: int = option(PERMUTATIONS, flag="--permutations", metavar="N",
                               help="rounds of the paired permutation test comparing two correlations "
                                    f"(0: none; default: {PERMUTATIONS})")


@dataclass(frozen=True)
class CorrelationConfig:
    """``multiref analyze correlation``."""

    ratings: RatingsOptions = group(RatingsOptions, title=_RATINGS_TITLE)
    metrics: GuptaMetrics = group(GuptaMetrics, title=_metrics_title(GUPTA_2019))
    statistics: CorrelationStatistics = group(CorrelationStatistics, title="statistics")
    output: OutputOptions = group(OutputOptions, title="output")


@dataclass(frozen=True)
class RefcountConfig:
    """``multiref analyze refcount``."""

    ratings: RatingsOptions = group(RatingsOptions, title=_RATINGS_TITLE)
    metrics: GuptaMetrics = group(GuptaMetrics, title=_metrics_title(GUPTA_2019))
    orders: int = option(ORDERS, flag="--orders", help=f"random reference orders to average over (default: {ORDERS})")
    seed: int = option(SEED, flag="--seed", help=f"seed of the orders and the bootstrap (default: {SEED})")
    bootstrap: int = option(BOOTSTRAP, flag="--bootstrap", metavar="N",
                            help="bootstrap resamples of the responses for the bands around the curves "
                                 f"(0: none; default: {BOOTSTRAP})")
    confidence: float = option(CONFIDENCE, flag="--confidence",
                               help=f"confidence level of the bands (default: {CONFIDENCE})")
    output: OutputOptions = group(OutputOptions, title="output")


@dataclass(frozen=True)
class DiscriminationData:
    test: str | None = option(None, flag="--test", required=True, metavar="PATH",
                              help="DD++ JSON lines file, or a dataset folder")
    validation: str | None = option(None, flag="--validation", metavar="PATH",
                                    help="DD++ JSON lines file or dataset folder to choose the threshold on "
                                         "(default: the test split)")
    dataset_config: str = option("dailydialog_pp", flag="--config",
                                 help="config of a dataset folder (default: dailydialog_pp)")
    aggregation: tuple = option((), flag="--aggregate", repeat=True, choices=("single", "mean", "max", "standard"),
                                help="aggregations to report (repeatable; default: all four)")


@dataclass(frozen=True)
class ThresholdGrid:
    """The accuracy threshold search (DD++: 0 to 1 in steps of 0.01)."""

    start: float = option(0.0, flag="--threshold-start", help=None)
    stop: float = option(1.0, flag="--threshold-stop", help=None)
    step: float = option(0.01, flag="--threshold-step", help=None)


@dataclass(frozen=True)
class DiscriminationConfig:
    """``multiref analyze discrimination``."""

    data: DiscriminationData = group(DiscriminationData, title="data")
    metrics: SaiMetrics = group(SaiMetrics, title=_metrics_title(SAI_2020))
    thresholds: ThresholdGrid = group(ThresholdGrid, title="threshold search (DD++: 0 to 1 in steps of 0.01)")
    confidence: float = option(CONFIDENCE, flag="--confidence",
                               help="confidence level of the intervals on accuracy (Wilson) and point-biserial r "
                                    f"(Fisher-z) (default: {CONFIDENCE})")
    output: OutputOptions = group(OutputOptions, title="output")


@dataclass(frozen=True)
class ScoredReferences:
    data: str | None = option(None, flag="--ratings", required=True, metavar="FILE",
                              help="JSON lines or CSV: one scored reference per row (input, reference, method, score)")
    input_column: str = option("input", flag="--input-column", help=None)
    reference_column: str = option("reference", flag="--reference-column", help=None)
    method_column: str = option("method", flag="--method-column", help=None)
    score_column: str = option("score", flag="--score-column", help=None)
    judgments: str | None = option(None, flag="--pairwise-ratings", metavar="FILE",
                                   help="pairwise judgments (JSON lines/CSV: input, winner, loser); scores become "
                                        "winning rates")


@dataclass(frozen=True)
class RegressionModel:
    """Sugiyama et al.'s evaluator (defaults: :data:`multiref.analysis.paper_defaults.SUGIYAMA`)."""

    similarity: tuple = option(SUGIYAMA.similarity, flag="--similarity", repeat=True,
                               choices=("bleu", "ribes", "wer", "wer2"),
                               help="similarity feature(s): bleu (NIST geometric smoothing), ribes, wer (1-NL), "
                                    f"wer2 (1-2NL); repeatable (default: {' '.join(SUGIYAMA.similarity)}, "
                                    f"as {SUGIYAMA.paper})")
    tokenizer: str = option(SUGIYAMA.tokenizer, flag="--tokenizer", choices=TOKENIZER_CHOICES, metavar="NAME",
                            help=f"tokenizer: %(choices)s (default: {SUGIYAMA.tokenizer})")
    lowercase: bool = option(SUGIYAMA.lowercase, flag="--lowercase", negatable=True,
                             help=f"lowercase before tokenizing (default: {_yes(SUGIYAMA.lowercase)})")
    top_m: int = option(SUGIYAMA.top_m, flag="--top-m", help=f"M of AM and WS (default: {SUGIYAMA.top_m}, "
                                                             f"as {SUGIYAMA.paper})")
    svr_c: float = option(SUGIYAMA.svr_c, flag="--svr-c",
                          help=f"C of the RBF SVR (default: {SUGIYAMA.svr_c:g}, as {SUGIYAMA.paper})")


@dataclass(frozen=True)
class RegressionConfig:
    """``multiref analyze regression``."""

    data: ScoredReferences = group(ScoredReferences, title="data")
    model: RegressionModel = group(RegressionModel, title="model")
    output: OutputOptions = group(OutputOptions, title="output")
