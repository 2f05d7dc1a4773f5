"""``multiref dailydialog ...``: build the multi-reference DailyDialog and DailyDialog++ datasets.

``multiref dailydialog build --output FOLDER [--dailydialog DIR] [--multiref-references FILE]
[--ddpp DIR] [options] [-- BEAM_OPTIONS]``. With no input it runs on the bundled sample
(dailydialog_pp/sample). Beam options (``--runner``, ``--direct_num_workers``, ...) go after
``--``. Only the standard library is imported here; the pipeline is imported by the handler.
"""

from __future__ import annotations

import argparse

from multiref.cli import group


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


def add_build_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``build`` (also used by ``pipelines.dailydialog.run``)."""
    inputs = parser.add_argument_group("inputs (none given: the bundled sample)")
    inputs.add_argument("--dailydialog", metavar="DIR",
                        help="the DailyDialog release folder (train/ validation/ test/ with dialogues_*.txt)")
    inputs.add_argument("--multiref-references", metavar="FILE",
                        help="multireftest.json of the multi-reference test set (JSON lines)")
    inputs.add_argument("--ddpp", metavar="DIR",
                        help="DailyDialog++ folder (dev.json, test.json, data_positives.json, train.json if you have it)")
    parser.add_argument("--output", required=True, metavar="FOLDER", help="dataset folder to write")
    text = parser.add_argument_group("text normalization of DailyDialog text (recorded in the card)")
    text.add_argument("--curly-quotes", action="store_true", help="map curly quotes to ASCII ' and \"")
    text.add_argument("--detokenize", action="store_true",
                      help="remove spaces before punctuation and re-join split contractions")
    text.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=False,
                      help="lowercase DailyDialog text (default: no, the release's case)")
    mr = parser.add_argument_group("multiref config")
    mr.add_argument("--multiref-splits", nargs="+", default=["test"], choices=["train", "validation", "test"],
                    help="DailyDialog splits cut into multiref contexts (default: test; only test has extra references)")
    mr.add_argument("--first-reference", choices=["dailydialog", "released"], default="dailydialog",
                    help="references[0]: the original next turn as DailyDialog writes it (default, with the text "
                         "options) or as the release writes it (responses[0]: lowercased, PTB-tokenized)")
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
    parser.add_argument("beam_args", nargs=argparse.REMAINDER,
                        help="Apache Beam options: any option this command does not know, or everything after -- (e.g. --runner DataflowRunner --project P)")


def check_inputs(args) -> None:
    """Check the given releases by shape before the pipeline starts (UserError naming the file)."""
    from dailydialog_pp import readers

    if args.dailydialog:
        readers.check_dailydialog_shape(args.dailydialog)
    if args.multiref_references:
        readers.check_multiref_shape(args.multiref_references)
    if args.ddpp:
        readers.check_ddpp_shape(args.ddpp)


def _build(args) -> int:
    from pipelines.dailydialog import build

    from multiref.io import require_writable

    check_inputs(args)
    require_writable(args.output, "--output")
    beam_args = list(args.beam_args or [])
    if beam_args and beam_args[0] == "--":
        beam_args = beam_args[1:]
    from multiref import progress

    with progress.step("dailydialog build"):
        build(args, beam_args)
    return 0


def register(parser: argparse.ArgumentParser) -> None:
    sub = group(parser)
    p = sub.add_parser("build", help="build the multiref and dailydialog_pp configs with Apache Beam",
                       description="Build the multi-reference DailyDialog (config multiref) and DailyDialog++ "
                                   "(config dailydialog_pp) datasets with Apache Beam.")
    add_build_arguments(p)
    p.set_defaults(func=_build)
