"""The LSDSCC test-set stage's options (light: no Beam, JVM or gensim here).

The stage's options are the fields of its three frozen configs, each declared once with its
flag (:func:`multiref.util.options.option`): :class:`lsdscc.testset.retrieval.RetrievalConfig`,
:class:`lsdscc.testset.doc2vec.Doc2VecConfig` and :class:`lsdscc.testset.assemble.SamplingConfig` (one
``--testset-seed`` seeds both Doc2Vec and the sampling).

- :func:`add_testset_arguments` adds their flags (the ``multiref lsdscc build`` and
  ``multiref lsdscc testset`` commands call it on their parsers);
- :func:`testset_job` turns parsed flags into the stage's config, a :class:`TestsetJob`
  (:func:`configs_from_args`: its three configs);
- :class:`StageInput` (``--dataset``) and :class:`BuildStages` (``multiref lsdscc build
  --skip-testset``) are declared the same way;
- the stage itself, and its entry point ``run_testset_stage``, are in
  :mod:`pipelines.lsdscc.testset`.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from lsdscc.testset.doc2vec import Doc2VecConfig
from lsdscc.testset.retrieval import RetrievalConfig
from lsdscc.testset.assemble import SamplingConfig
from multiref.util.options import add_arguments, from_args, option

#: the stage's option classes, in the order --help shows their flags
TESTSET_CONFIGS = (RetrievalConfig, Doc2VecConfig, SamplingConfig)


def add_testset_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the test-set options (each recorded in the ``test_candidates`` card)."""
    add_arguments(parser.add_argument_group("test set (docs/algorithms.md#2-lsdscc-test-set)"), *TESTSET_CONFIGS)


@dataclass(frozen=True)
class TestsetJob:
    """What the test-set stage runs with: its three configs and the Beam flags of the command
    (the stage runs locally: a remote runner's flags are ignored with a note)."""

    __test__ = False  # not a pytest class

    retrieval: RetrievalConfig = RetrievalConfig()
    doc2vec: Doc2VecConfig = Doc2VecConfig()
    sampling: SamplingConfig = SamplingConfig()
    beam_args: tuple = ()


def configs_from_args(parsed) -> tuple:
    """``(RetrievalConfig, Doc2VecConfig, SamplingConfig)`` from parsed flags (UserError
    for a bad value)."""
    return tuple(from_args(cls, parsed) for cls in TESTSET_CONFIGS)


def testset_job(parsed, beam_args=()) -> TestsetJob:
    """The :class:`TestsetJob` of parsed flags and the command's Beam flags ``beam_args``."""
    return TestsetJob(*configs_from_args(parsed), beam_args=tuple(beam_args or ()))


@dataclass(frozen=True)
class BuildStages:
    """Which stages ``multiref lsdscc build`` runs after the corpus."""

    skip_testset: bool = option(False, flag="--skip-testset", help="build only the corpus, not the test set")


@dataclass(frozen=True)
class StageInput:
    """The folder ``python -m pipelines.lsdscc.testset`` works on."""

    dataset: str | None = option(None, flag="--dataset", metavar="FOLDER",
                                 help="corpus folder written by `multiref lsdscc build`")


def add_stage_arguments(parser: argparse.ArgumentParser) -> None:
    """``--dataset`` and the test-set options (``python -m pipelines.lsdscc.testset``)."""
    add_arguments(parser, StageInput)
    add_testset_arguments(parser)
