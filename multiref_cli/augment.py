"""``multiref augment``: grow candidate references for a test set from a training corpus.

``multiref augment --corpus PATH [--corpus-config NAME --corpus-split NAME] --test PATH
[--test-config NAME --test-split NAME] --output FOLDER [--top-k K --threshold T
--max-candidates M --seed S]`` (PATH: a dataset folder or a table file) (LSDSCC's method, docs/algorithms.md section 2). Only the standard
library at module level; the options are declared with the driver
(:mod:`pipelines.augment.options`), and the handler makes one call,
:func:`pipelines.augment.job.augment`, which publishes the output folder whole.
"""

from __future__ import annotations

import argparse
import json


def _augment(args) -> int:
    """The configs and sources from the parsed flags, one call (:func:`pipelines.augment.job.augment`), its counts."""
    from multiref.util.options import from_args
    from multiref.util.tables import ColumnNames
    from pipelines.augment.job import augment
    from pipelines.augment.options import AugmentInputs, configs_from_args

    configs = configs_from_args(args)  # its mistakes first, then the sources'
    inputs = from_args(AugmentInputs, args)
    counts = augment(*inputs.sources(from_args(ColumnNames, args)), inputs.output, *configs)
    counts.pop("seconds", None)
    print(json.dumps(counts, indent=2, sort_keys=True))
    return 0


def register(parser: argparse.ArgumentParser) -> None:
    """``multiref augment`` (a leaf command)."""
    from pipelines.augment.options import add_augment_arguments

    add_augment_arguments(parser)
    parser.set_defaults(func=_augment)
