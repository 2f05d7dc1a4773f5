"""The LSDSCC test-set stage's options (light: no Beam, JVM or gensim here).

The stage's options are the fields of its three frozen configs, each declared once with its
flag (:func:`multiref.util.options.option`): :class:`lsdscc.testset.retrieval.RetrievalConfig`,
:class:`lsdscc.testset.doc2vec.Doc2VecConfig` and :class:`lsdscc.testset.assemble.SamplingConfig` (one
``--testset-seed`` seeds both Doc2Vec and the sampling).

- :func:`add_testset_arguments` adds their flags (the ``multiref lsdscc build`` and
  ``multiref lsdscc testset`` commands call it on their parsers);
- :func:`configs_from_args` turns parsed flags into the configs;
- the stage itself, and its entry point ``run_testset_stage``, are in
  :mod:`pipelines.lsdscc_testset`.
"""

from __future__ import annotations

import argparse

from lsdscc.testset.doc2vec import Doc2VecConfig
from lsdscc.testset.retrieval import RetrievalConfig
from lsdscc.testset.assemble import SamplingConfig
from multiref.util.options import add_arguments, from_args

#: the stage's option classes, in the order --help shows their flags
TESTSET_CONFIGS = (RetrievalConfig, Doc2VecConfig, SamplingConfig)


def add_testset_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the test-set options (each recorded in the ``test_candidates`` card)."""
    add_arguments(parser.add_argument_group("test set (docs/algorithms.md#2-lsdscc-test-set)"), *TESTSET_CONFIGS)


def configs_from_args(args) -> tuple:
    """``(RetrievalConfig, Doc2VecConfig, SamplingConfig)`` from parsed arguments (UserError
    for a bad value)."""
    return tuple(from_args(cls, args) for cls in TESTSET_CONFIGS)


def add_stage_arguments(parser: argparse.ArgumentParser) -> None:
    """``--dataset`` and the test-set options (``python -m pipelines.lsdscc_testset``)."""
    parser.add_argument("--dataset", default=None, metavar="FOLDER",
                        help="corpus folder written by `multiref lsdscc build`")
    add_testset_arguments(parser)
