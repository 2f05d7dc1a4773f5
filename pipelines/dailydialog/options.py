"""The DailyDialog job's options: declared once, as dataclass fields with their flags.

:class:`DailyDialogJob` (inputs and output folder) and :class:`BuildOptions` (every option
that changes the data, recorded in the card; its groups are the option classes of
:mod:`dailydialog_pp`) declare every option; from them come the ``multiref dailydialog
build`` flags (:func:`add_build_arguments`), the job's Beam ``PipelineOptions`` class
(:func:`dailydialog_pipeline_options`, made when the job runs: it needs Beam), the options
of parsed flags (:func:`job_from_args`, :func:`options_from_args`) and the card (:meth:`BuildOptions.card`).
Light to import (no Beam).
"""

from __future__ import annotations

from dataclasses import dataclass

from dailydialog_pp.contexts import ChunkOptions
from dailydialog_pp.corruptions import CORRUPTIONS
from dailydialog_pp.negatives import NegativeOptions
from dailydialog_pp.normalize import TextOptions
from dailydialog_pp.splits import SplitOptions
from multiref.util.errors import UserError
from multiref.util.options import add_arguments, from_args, group, option, recorded

INPUTS = "inputs (none given: the bundled sample)"
TEXT = "text normalization of DailyDialog text (recorded in the card)"
MULTIREF = "multiref config"
DDPP = "dailydialog_pp config"


def _ratio(value):
    """``--near-duplicates``: None, or a ratio in (0, 1] (ValueError otherwise)."""
    if value is None:
        return None
    if not 0 < value <= 1:
        raise ValueError(f"--near-duplicates must be in (0, 1], got {value:g}")
    return float(value)


def _sorted_splits(splits) -> tuple:
    return tuple(sorted(set(splits)))


def _distinct(names) -> tuple:
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class DailyDialogJob:
    """Where the job reads (none given: the bundled sample) and writes; not in the card."""

    dailydialog: str | None = option(None, flag="--dailydialog", metavar="DIR", title=INPUTS,
                                     help="the DailyDialog release folder (train/ validation/ test/ with "
                                          "dialogues_*.txt)")
    multiref_references: str | None = option(None, flag="--multiref-references", metavar="FILE", title=INPUTS,
                                             help="multireftest.json of the multi-reference test set (JSON lines)")
    ddpp: str | None = option(None, flag="--ddpp", metavar="DIR", title=INPUTS,
                              help="DailyDialog++ folder (dev.json, test.json, data_positives.json, train.json if "
                                   "you have it)")
    output: str | None = option(None, flag="--output", metavar="FOLDER", help="dataset folder to write")


@dataclass(frozen=True)
class BuildOptions:
    """Every option that changes the data (recorded in the dataset card)."""

    text: TextOptions = group(TextOptions, TEXT)
    chunks: ChunkOptions = group(ChunkOptions, DDPP)
    splits: SplitOptions = group(SplitOptions, DDPP)
    negatives: NegativeOptions = group(NegativeOptions, DDPP, card="random_negatives")
    multiref_splits: tuple = option(("test",), flag="--multiref-splits", choices=("train", "validation", "test"),
                                    convert=_sorted_splits, title=MULTIREF,
                                    help="DailyDialog splits cut into multiref contexts (default: test; only test "
                                         "has extra references)")
    multiref_first_reference: str = option(
        "released", flag="--first-reference", choices=("dailydialog", "released"), title=MULTIREF,
        help="references[0]: the original next turn as Gupta et al. 2019 release it (default: multireftest.json "
             "responses[0], lowercased and PTB-tokenized like the 4 other references, as their scorer reads it) or "
             "as DailyDialog writes it (dailydialog: cased, with the text options); without "
             "--multiref-references it is always DailyDialog's")
    dedup: bool = option(True, flag="--dedup", title=DDPP,
                         help="remove duplicate dialogues (default: yes; --no-dedup keeps them)")
    near_duplicates: float | None = option(None, flag="--near-duplicates", parse=float, metavar="RATIO",
                                           convert=_ratio, title=DDPP,
                                           help="also remove edited copies: same first and last utterance and a "
                                                "difflib similarity >= RATIO (e.g. 0.9: 11,498 dialogues kept on "
                                                "the real release instead of 11,927)")
    corruptions: tuple = option((), flag="--corruptions", choices=CORRUPTIONS, metavar="NAME", convert=_distinct,
                                title=DDPP, help="add config dailydialog_pp_corrupted with these corruptions of the "
                                                 "positives (nouns and synonyms need NLTK data in NLTK_DATA)")
    seed: int = option(0, flag="--seed", title=DDPP, help="seed of random negatives and shuffles")

    def card(self) -> dict:
        """The options as the card records them (groups as nested dicts, tuples as lists)."""
        return recorded(self)


#: the classes declaring the job's options, in the order --help shows their flags
BUILD_OPTIONS = (DailyDialogJob, BuildOptions)


def add_build_arguments(parser, *, output_required: bool = False) -> None:
    """The options of ``dailydialog build`` (``output_required``: the CLI's ``--output`` is
    required; Beam's options classes cannot require a flag, so :func:`pipelines.dailydialog.job.run`
    checks it)."""
    add_arguments(parser, *BUILD_OPTIONS, required=("--output",) if output_required else ())


def dailydialog_pipeline_options() -> type:
    """The job's flags as a Beam ``PipelineOptions`` subclass (made once, on first call)."""
    from pipelines.beam.runner import pipeline_options_class

    return pipeline_options_class("DailyDialogOptions", add_build_arguments,
                                  "The DailyDialog job's flags as Beam pipeline options.")


def options_from_args(parsed) -> BuildOptions:
    """BuildOptions of the parsed flags (the job's Beam options view, or the command line's);
    bad values become a UserError."""
    try:
        return from_args(BuildOptions, parsed)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def job_from_args(parsed) -> tuple:
    """``(DailyDialogJob, BuildOptions)`` of the parsed flags: the configs the job takes, built once."""
    return from_args(DailyDialogJob, parsed), options_from_args(parsed)
