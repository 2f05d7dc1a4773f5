"""The options of ``multiref score``, declared once.

:class:`ScoreConfig` holds every flag of the command: the inputs (references, systems and how
to read them) at its top level, the metric options (:class:`MetricOptions`, with the BLEU
family's in :class:`BleuOptions`), the statistics (:class:`Statistics`) and the output. Each
field is a :func:`multiref.util.options.option` declaration: flag, default and help in one
place, the defaults read from where they are declared (:mod:`multiref.metrics.defaults`,
:mod:`multiref.util.defaults`, :mod:`multiref.metrics.lsdscc_ties`). The command line adds
the flags from these classes and builds the config from the parsed flags once; a Python
caller builds it directly::

    from multiref.scoring import ScoreConfig, Statistics, score
    outcome = score(ScoreConfig(references="refs.jsonl", hypotheses=("a.jsonl", "b.jsonl"),
                                statistics=Statistics(paired_bs=True, confidence=True)))

:func:`multiref.scoring.score` reads the inputs, metric and statistics fields; ``format``,
``per_item`` and ``output`` are the command line's (what it prints and where it writes).
Standard library only (the command line imports this for ``--help``).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

from multiref.metrics.base import AGGREGATES, MAX_ORDER  # stdlib-only modules
from multiref.metrics.bleu import ALL_SMOOTHINGS, CONVENTIONS, DEFAULT_CONVENTION
from multiref.metrics.defaults import CORRECTIONS, DEFAULT_AR, DEFAULT_BS, DEFAULT_FLAT, DEFAULT_GROUPED, DEFAULT_SEED
from multiref.metrics.lsdscc_ties import DEFAULT_TIES, TIES
from multiref.metrics.meteor import METEOR_IMPLS
from multiref.metrics.tokenizers import TOKENIZER_CHOICES
from multiref.util.defaults import TOKENIZER
from multiref.util.options import check_values, group, number_type, option
from multiref.util.tables import ColumnNames

FORMATS = ("table", "json", "csv", "markdown", "latex", "html")
#: upper bound of --paired-bs-n and --paired-ar-n
MAX_RESAMPLES = 1_000_000
#: the METEOR implementation when none is chosen (NLTK's)
DEFAULT_METEOR = METEOR_IMPLS[0]


def bleu_weights(text: str) -> tuple:
    """The parser of ``--bleu-weights``: at most ``MAX_ORDER`` non-negative finite numbers,
    not all zero (checked as :func:`multiref.metrics.bleu.resolve_weights` does)."""
    parts = text.replace(",", " ").split()
    if len(parts) > MAX_ORDER:
        raise argparse.ArgumentTypeError(f"at most {MAX_ORDER} weights (one per n-gram order), got {len(parts)}")
    try:
        weights = tuple(float(w) for w in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got {text[:40]!r}") from None
    if not weights:
        raise argparse.ArgumentTypeError("no weights given")
    if any(not math.isfinite(w) or w < 0 for w in weights) or not any(weights):
        raise argparse.ArgumentTypeError(f"weights must be non-negative finite numbers, not all zero; got {text!r}")
    return weights


@dataclass(frozen=True)
class BleuOptions:
    """The BLEU family's options (order, weights, smoothing, convention, brevity penalty) and
    METEOR's implementation; None: each metric's own default."""

    order: int | None = option(None, flag="--bleu-order", parse=number_type(int, 1, MAX_ORDER), metavar="N",
                               help=f"BLEU family: max n-gram order, 1 to {MAX_ORDER} (default 4)")
    weights: tuple | None = option(None, flag="--bleu-weights", parse=bleu_weights, metavar="W1,W2,..",
                                   help=f"BLEU family: custom n-gram weights, at most {MAX_ORDER} weights (override "
                                        "the order)")
    smoothing: str | None = option(
        None, flag="--bleu-smoothing", choices=ALL_SMOOTHINGS,
        help="BLEU family smoothing (default: none for bleu, add1 for maxbleu/mds/pds); nltk0..nltk7 and add1 under "
             "--bleu-convention nltk, exp/floor/add-k (sacrebleu's) under sacrebleu")
    convention: str = option(
        DEFAULT_CONVENTION, flag="--bleu-convention", choices=CONVENTIONS,
        help=f"bleu, delta_bleu, self_bleu: whose BLEU formulas (default: {DEFAULT_CONVENTION}, the papers'; "
             "sacrebleu = sacrebleu's corpus_bleu, nlgeval = nlg-eval's pycocoevalcap Bleu); maxbleu/mds/pds keep the public LSDSCC scorer's")
    meteor_impl: str = option(
        DEFAULT_METEOR, flag="--meteor-impl", choices=METEOR_IMPLS,
        help="meteor: nltk (default; NLTK's, needs WordNet) or 1.5 (the METEOR 1.5 jar with its paraphrase table, as "
             "nlg-eval; needs pip install 'multiref-dialog[meteor]')")
    brevity_penalty: bool | None = option(None, flag="--brevity-penalty", negatable=True,
                                          help="BLEU family brevity penalty (default: on for bleu, off for "
                                               "maxbleu/mds/pds)")

    def __post_init__(self):
        if self.weights is not None:
            object.__setattr__(self, "weights", tuple(self.weights))
        check_values(self)


@dataclass(frozen=True)
class MetricOptions:
    """Which metrics, and the options each gets (a metric takes only those its ``__init__``
    accepts and keeps its own defaults for the others, :func:`multiref.scoring.run.metric_options`)."""

    names: tuple = option((), flag="--metric", aliases=("-m",), repeat=True, metavar="NAME",
                          help=f"metric to compute, repeatable (default: {', '.join(DEFAULT_GROUPED)} for grouped "
                               f"references, {', '.join(DEFAULT_FLAT)} otherwise); see `multiref metrics list`")
    tokenizer: str = option(TOKENIZER, flag="--tokenizer", choices=TOKENIZER_CHOICES, metavar="NAME",
                            help=f"tokenizer: %(choices)s (default: {TOKENIZER}, the public LSDSCC scorer's)")
    lowercase: bool = option(False, flag="--lowercase", negatable=True,
                             help="lowercase before tokenizing (default: no)")
    bleu: BleuOptions = group(BleuOptions)
    ties: str = option(DEFAULT_TIES, flag="--ties", choices=TIES,
                       help="maxbleu/mds/pds when an output ties between groups: lsdscc = the public LSDSCC scorer "
                            "(groups by numeric id, 'null' last; its floating-point sums and means), first = the "
                            "first group in file order (groups compared exactly); auto (default, as the library) = "
                            "lsdscc with the public scorer's BLEU (add1, no brevity penalty), else first")
    aggregate: str | None = option(None, flag="--aggregate", choices=AGGREGATES,
                                   help="multi-reference aggregation for the metrics that offer it")
    vectors: str | None = option(None, flag="--vectors", metavar="PATH",
                                 help="word vectors for the embedding metrics (gensim .kv or word2vec)")
    distinct_order: int | None = option(None, flag="--distinct-order", parse=number_type(int, 1, MAX_ORDER),
                                        metavar="N", help="n for distinct/distinct_per_utterance (default 2) and ead "
                                                          f"(default 1), 1 to {MAX_ORDER}")
    ead_vocab_size: int | None = option(None, flag="--ead-vocab-size", parse=number_type(int, 1, 10**12), metavar="V",
                                        help="ead: the vocabulary size V of its expectation (default: the distinct "
                                             "n-grams of the test set's references)")

    def __post_init__(self):
        if not isinstance(self.names, tuple):
            object.__setattr__(self, "names", (self.names,) if isinstance(self.names, str) else tuple(self.names))
        check_values(self)


@dataclass(frozen=True)
class Statistics:
    """Intervals and paired tests over the items (:class:`multiref.metrics.significance.Resampling`)."""

    confidence: bool = option(False, flag="--confidence",
                              help="a 95%% interval per metric and system (percentile bootstrap over the items; "
                                   "corpus Distinct-n: delete-one jackknife)")
    paired_bs: bool = option(False, flag="--paired-bs", exclusive="test",
                             help="p-value of each system against the first one (paired bootstrap over items)")
    paired_ar: bool = option(False, flag="--paired-ar", exclusive="test",
                             help="p-value of each system against the first one (approximate randomization over "
                                  "items)")
    paired_bs_n: int = option(DEFAULT_BS, flag="--paired-bs-n", low=1, high=MAX_RESAMPLES, metavar="N",
                              help=f"bootstrap resamples, for --paired-bs and --confidence (default {DEFAULT_BS:,})")
    paired_ar_n: int = option(DEFAULT_AR, flag="--paired-ar-n", low=1, high=MAX_RESAMPLES, metavar="N",
                              help=f"approximate randomization trials (default {DEFAULT_AR:,})")
    seed: int = option(DEFAULT_SEED, flag="--seed", low=0, high=2 ** 63 - 1,
                       help=f"seed of the resampling (default {DEFAULT_SEED}, sacrebleu's)")
    correction: str = option(CORRECTIONS[0], flag="--correction", choices=CORRECTIONS,
                             help="with --paired-bs/--paired-ar and several systems: holm adjusts each metric's "
                                  "p-values for the number of systems compared with the baseline (Holm 1979; "
                                  f"default: {CORRECTIONS[0]})")
    verbose: bool = option(False, flag="--verbose",
                           help="BLEU and deltaBLEU: n-gram precisions, brevity penalty and lengths")

    def __post_init__(self):
        if self.paired_bs and self.paired_ar:
            raise ValueError("--paired-bs and --paired-ar: choose one test")
        check_values(self)

    @property
    def test(self) -> str | None:
        """``"bs"``, ``"ar"`` or None (no paired test)."""
        return "bs" if self.paired_bs else ("ar" if self.paired_ar else None)

    def resampling(self):
        """The :class:`multiref.metrics.significance.Resampling` of these options."""
        from multiref.metrics.significance import Resampling

        test = self.test
        n = self.paired_bs_n if test == "bs" else (self.paired_ar_n if test == "ar" else None)
        return Resampling(test=test, n=n, confidence=self.confidence, n_confidence=self.paired_bs_n, seed=self.seed,
                          correction=self.correction)


@dataclass(frozen=True)
class ScoreConfig:
    """``multiref score``: the inputs at the top level, then metrics, statistics and output."""

    references: str | None = option(
        None, flag="--references", aliases=("-r",), required=True, metavar="PATH",
        help="LSDSCC grouped JSON {query: {group_id: [refs]}}, JSON lines with id and references/groups, a "
             ".csv/.tsv/.parquet/.jsonl/.json table (a references list, one column per reference, or a response), "
             "or a dataset folder (ours, or any parquet folder)")
    hypotheses: tuple = option(
        (), flag="--hypotheses", aliases=("-H", "-i"), extend=True, metavar="PATH",
        help="one or more systems (the first is the baseline), '-' or nothing for standard input: JSON lines (id or "
             "query, and hypotheses or hypothesis), or plain text with one line per reference item in the "
             "references' order (see --eos); UTF-8, a BOM is accepted")
    eos: str | None = option(None, flag="--eos", metavar="SEP",
                             help="plain text: the separator of several outputs on one line (the public LSDSCC "
                                  "scorer's --eos, e.g. '</s>'); default: one output per line")
    dataset_config: str | None = option(None, flag="--config",
                                        help="dataset folder only: the config to score against (e.g. test_grouped)")
    split: str | None = option(None, flag="--split",
                               help="dataset folder only: the split (default: the only one, else test)")
    max_references: int | None = option(None, flag="--max-references", parse=number_type(int, 1, None), metavar="N",
                                        help="score against each item's first N references, in their stored order "
                                             "(default: all; the signature records maxrefs:N)")
    columns: ColumnNames = group(ColumnNames)
    metrics: MetricOptions = group(MetricOptions)
    format: str = option("table", flag="--format", choices=FORMATS,
                         help="output format (default: table); markdown and latex mark significant differences")
    statistics: Statistics = group(Statistics)
    per_item: str | None = option(None, flag="--per-item", metavar="PATH",
                                  help="write each item's scores (JSON lines, or CSV if PATH ends in .csv); with "
                                       "several systems, one row per system and item")
    output: str | None = option(None, flag="--output", aliases=("-o",), metavar="PATH",
                                help="write the scores here instead of standard output")
    partial: bool = option(False, flag="--partial",
                           help="score only the reference items that have outputs (default: all must have one)")
    quiet: bool = option(False, flag="--quiet", aliases=("-q",), help="nothing on standard error but errors")

    def __post_init__(self):
        if not isinstance(self.hypotheses, tuple):  # one path, or a list of them
            paths = (self.hypotheses,) if isinstance(self.hypotheses, str) else tuple(self.hypotheses)
            object.__setattr__(self, "hypotheses", paths)
        check_values(self)
