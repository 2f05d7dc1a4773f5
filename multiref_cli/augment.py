"""``multiref augment``: grow candidate references for a test set from a training corpus.

``multiref augment --corpus PATH [--corpus-config NAME --corpus-split NAME] --test PATH
[--test-config NAME --test-split NAME] --output FOLDER [--top-k K --threshold T
--max-candidates M --seed S]`` (PATH: a dataset folder or a table file) (LSDSCC's method, docs/algorithms.md section 2). Only the standard
library at module level; the options are declared with the driver
(:mod:`pipelines.augment.options`), and the handler publishes the output folder whole
(:func:`multiref.output.publish.publishing`) around one call of :func:`pipelines.augment.job.run_augment`.
"""

from __future__ import annotations

import argparse
import json


def _augment(args) -> int:
    import os

    from multiref.output import publish, published
    from multiref.util.errors import UserError
    from pipelines.augment.job import run_augment
    from pipelines.augment.options import configs_from_args, sources_from_args

    config, retrieval, d2v = configs_from_args(args)
    corpus, test = sources_from_args(args)
    for source in (corpus, test):
        if os.path.abspath(source.folder) == os.path.abspath(args.output):
            raise UserError(f"--output {args.output} is an input folder; augment writes a new dataset folder")
    with publish.publishing(args.output, command="multiref augment", inputs=[corpus.folder, test.folder]) as pub:
        counts = run_augment(corpus, test, pub.staging, config, retrieval, d2v)
        published.check_dataset(pub.staging, required=[("test_candidates", "test"), ("test_auto", "test")])
    counts.pop("seconds", None)
    print(json.dumps(counts, indent=2, sort_keys=True))
    return 0


def register(parser: argparse.ArgumentParser) -> None:
    """``multiref augment`` (a leaf command)."""
    from pipelines.augment.options import add_augment_arguments

    add_augment_arguments(parser)
    parser.set_defaults(func=_augment)
