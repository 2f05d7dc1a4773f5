"""The DailyDialog job's options: flags, the Beam options class, the frozen BuildOptions.

Light to import (no Beam): the ``multiref dailydialog build`` command calls
:func:`add_build_arguments` on its parser; :class:`DailyDialogOptions` (the same flags as a
Beam ``PipelineOptions`` subclass) is created on first use.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from multiref.util.errors import UserError
from pipelines.lsdscc_options import add_once


def _nonneg_int(value: str) -> int:
    n = int(value)
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {value}")
    return n


def _pos_int(value: str) -> int:
    n = int(value)
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return n


def add_build_arguments(parser, *, output_required: bool = False) -> None:
    """The options of ``dailydialog build`` (``output_required``: the CLI's ``--output`` is
    required; Beam's options classes cannot require a flag, so :func:`pipelines.dailydialog.run`
    checks it)."""
    inputs = parser.add_argument_group("inputs (none given: the bundled sample)")
    inputs.add_argument("--dailydialog", metavar="DIR",
                        help="the DailyDialog release folder (train/ validation/ test/ with dialogues_*.txt)")
    inputs.add_argument("--multiref-references", metavar="FILE",
                        help="multireftest.json of the multi-reference test set (JSON lines)")
    inputs.add_argument("--ddpp", metavar="DIR",
                        help="DailyDialog++ folder (dev.json, test.json, data_positives.json, train.json if you have it)")
    add_once(parser, "--output", required=output_required, default=None, metavar="FOLDER", help="dataset folder to write")
    text = parser.add_argument_group("text normalization of DailyDialog text (recorded in the card)")
    text.add_argument("--curly-quotes", action="store_true", help="map curly quotes to ASCII ' and \"")
    text.add_argument("--detokenize", action="store_true",
                      help="remove spaces before punctuation and re-join split contractions")
    text.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=False,
                      help="lowercase DailyDialog text (default: no, the release's case)")
    mr = parser.add_argument_group("multiref config")
    mr.add_argument("--multiref-splits", nargs="+", default=["test"], choices=["train", "validation", "test"],
                    help="DailyDialog splits cut into multiref contexts (default: test; only test has extra references)")
    mr.add_argument("--first-reference", choices=["dailydialog", "released"], default="released",
                    help="references[0]: the original next turn as Gupta et al. 2019 release it (default: "
                         "multireftest.json responses[0], lowercased and PTB-tokenized like the 4 other "
                         "references, as their scorer reads it) or as DailyDialog writes it (dailydialog: cased, "
                         "with the text options); without --multiref-references it is always DailyDialog's")
    dd = parser.add_argument_group("dailydialog_pp config")
    dd.add_argument("--long-dialogue", type=_pos_int, default=8,
                    help="dialogues with at least this many turns are cut into chunks (default 8)")
    dd.add_argument("--chunk-length", type=_pos_int, default=4, help="turns per chunk (default 4)")
    dd.add_argument("--min-chunk", type=_pos_int, default=3, help="fewest turns of a final chunk (default 3)")
    dd.add_argument("--max-chunk", type=_pos_int, default=5,
                    help="a short tail is merged into the last chunk up to this many turns (default 5)")
    dd.add_argument("--no-dedup", action="store_true", help="keep duplicate dialogues")
    dd.add_argument("--near-duplicates", type=float, metavar="RATIO",
                    help="also remove edited copies: same first and last utterance and a difflib similarity "
                         ">= RATIO (e.g. 0.9: 11,498 dialogues kept on the real release instead of 11,927)")
    dd.add_argument("--split-fractions", nargs=3, type=float, default=[0.8, 0.1, 0.1],
                    metavar=("TRAIN", "VALIDATION", "TEST"), help="split fractions by dialogue hash (default 0.8 0.1 0.1)")
    dd.add_argument("--split-salt", default="dailydialog_pp", help="salt of the split hash")
    dd.add_argument("--random-negatives", type=_nonneg_int, default=5, help="random negatives per context (default 5)")
    dd.add_argument("--negative-min-words", type=_pos_int, default=5,
                    help="shortest random negative, in words (default 5)")
    dd.add_argument("--released-random-negatives", action="store_true",
                    help="contexts matched to released dev/test (or train) contexts keep the released random negatives")
    dd.add_argument("--seed", type=int, default=0, help="seed of random negatives and shuffles (default 0)")
    dd.add_argument("--corruptions", nargs="+", default=[], metavar="NAME",
                    choices=["reverse", "shuffle", "drop_punctuation", "drop_stopwords", "nouns", "synonyms"],
                    help="add config dailydialog_pp_corrupted with these corruptions of the positives "
                         "(nouns and synonyms need NLTK data in NLTK_DATA)")


@dataclass(frozen=True)
class BuildOptions:
    """Every option that changes the data (recorded in the dataset card)."""

    text: object
    chunks: object
    splits: object
    negatives: object
    multiref_splits: tuple = ("test",)
    multiref_first_reference: str = "released"
    dedup: bool = True
    near_duplicates: float | None = None
    corruptions: tuple = ()
    seed: int = 0

    def card(self) -> dict:
        return {
            "text": self.text.as_dict(),
            "chunks": self.chunks.as_dict(),
            "splits": self.splits.as_dict(),
            "random_negatives": self.negatives.as_dict(),
            "multiref_splits": list(self.multiref_splits),
            "multiref_first_reference": self.multiref_first_reference,
            "dedup": self.dedup,
            "near_duplicates": self.near_duplicates,
            "corruptions": list(self.corruptions),
            "seed": self.seed,
        }


def options_from_args(args) -> BuildOptions:
    """BuildOptions from parsed arguments; bad values become a UserError."""
    from dailydialog_pp.contexts import ChunkOptions
    from dailydialog_pp.negatives import NegativeOptions
    from dailydialog_pp.normalize import TextOptions
    from dailydialog_pp.splits import SplitOptions

    try:
        train, validation, test = args.split_fractions
        return BuildOptions(
            text=TextOptions(args.curly_quotes, args.detokenize, args.lowercase),
            chunks=ChunkOptions(args.long_dialogue, args.chunk_length, args.min_chunk, args.max_chunk),
            splits=SplitOptions(train, validation, test, args.split_salt),
            negatives=NegativeOptions(args.random_negatives, args.negative_min_words, args.seed,
                                      args.released_random_negatives),
            multiref_splits=tuple(sorted(set(args.multiref_splits))),
            multiref_first_reference=args.first_reference,
            dedup=not args.no_dedup,
            near_duplicates=_ratio(args.near_duplicates),
            corruptions=tuple(dict.fromkeys(args.corruptions)),
            seed=args.seed,
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _ratio(value):
    if value is None:
        return None
    if not 0 < value <= 1:
        raise ValueError(f"--near-duplicates must be in (0, 1], got {value:g}")
    return float(value)


def __getattr__(name):
    if name == "DailyDialogOptions":
        from multiref.output.beam_utils import options_class

        return options_class(__name__, name, add_build_arguments, "The DailyDialog job's flags as Beam pipeline options.")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
