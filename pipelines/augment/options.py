"""``multiref augment``'s options (light: no JVM or gensim here), declared once: the test-set
stage's option classes, three fields under augment's own flag names (:data:`RENAMED`).

:class:`AugmentInputs` declares the inputs and the output; :func:`add_augment_arguments` adds
the flags (the command's parser calls it);
:func:`configs_from_args` turns parsed flags into the frozen configs the driver
(:mod:`pipelines.augment.job`) takes: Lucene's and Doc2Vec's are the LSDSCC test-set stage's own
(:class:`lsdscc.testset.retrieval.RetrievalConfig`, :class:`lsdscc.testset.doc2vec.Doc2VecConfig`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from lsdscc.testset.augment import AugmentConfig
from lsdscc.testset.doc2vec import Doc2VecConfig
from lsdscc.testset.retrieval import RetrievalConfig
from multiref.util.options import add_arguments, default_of, from_args, option, type_of
from multiref.util.tables import ColumnNames


#: the fields augment sets under its own flag names (its interface), not the test-set stage's
RENAMED = (("--top-k", "K", RetrievalConfig, "depth", "--retrieval-depth",
            "similar corpus contexts retrieved per test context (the paper's)"),
           ("--threshold", "T", Doc2VecConfig, "threshold", "--doc2vec-threshold",
            "keep retrieved contexts with Doc2Vec cosine >= T (the paper's)"),
           ("--seed", "S", Doc2VecConfig, "seed", "--testset-seed", "seed of Doc2Vec"))


_IO = "inputs and output (a dataset folder, or a .jsonl/.json/.csv/.tsv/.parquet file)"
_TABLE = "a file or dataset folder with a context column (a list of turns or a string) and a response column"


@dataclass(frozen=True)
class AugmentInputs:
    """``multiref augment``'s inputs and output: the corpus the candidates come from and the test
    set to grow (each a dataset folder, with its config and split, or a table file), and the
    dataset folder to write (:meth:`sources` makes the driver's :class:`pipelines.augment.job.Source` s)."""

    corpus: str | None = option(None, flag="--corpus", required=True, metavar="PATH", title=_IO,
                                help=f"the training corpus the candidates come from: {_TABLE}")
    corpus_config: str | None = option(None, flag="--corpus-config", metavar="NAME", title=_IO,
                                       help="folder only: its config (default: the only one)")
    corpus_split: str | None = option(None, flag="--corpus-split", metavar="NAME", title=_IO,
                                      help="folder only: its split (default: the only one, else test)")
    test: str | None = option(None, flag="--test", required=True, metavar="PATH", title=_IO,
                              help=f"the test set to grow: {_TABLE} (or a references list)")
    test_config: str | None = option(None, flag="--test-config", metavar="NAME", title=_IO,
                                     help="folder only: its config (default: the only one)")
    test_split: str | None = option(None, flag="--test-split", metavar="NAME", title=_IO,
                                    help="folder only: its split (default: the only one, else test)")
    output: str | None = option(None, flag="--output", required=True, metavar="FOLDER", title=_IO,
                                help="dataset folder to write (test_candidates, test_auto); replaced whole")

    def sources(self, columns: ColumnNames = ColumnNames()) -> tuple:
        """``(corpus, test)`` :class:`pipelines.augment.job.Source` s, their columns renamed by ``columns``."""
        from pipelines.augment.job import Source

        return (Source(self.corpus, self.corpus_config, self.corpus_split, "corpus", columns),
                Source(self.test, self.test_config, self.test_split, "test", columns))


def add_augment_arguments(parser: argparse.ArgumentParser) -> None:
    """The inputs, the output and the method's options (each recorded in the card): the
    test-set stage's Lucene and Doc2Vec options, three of them under augment's own names."""
    add_arguments(parser, AugmentInputs, ColumnNames)
    g = parser.add_argument_group("method (LSDSCC's test set, docs/algorithms.md section 2)")
    for flag, metavar, cls, name, _stage_flag, text in RENAMED:
        g.add_argument(flag, type=type_of(cls, name), default=default_of(cls, name), metavar=metavar,
                       help=f"{text} (default: %(default)s)")
    add_arguments(g, AugmentConfig, RetrievalConfig, Doc2VecConfig, skip=tuple(r[4] for r in RENAMED))


def configs_from_args(parsed) -> tuple:
    """``(AugmentConfig, RetrievalConfig, Doc2VecConfig)`` from parsed flags (UserError
    for a bad value); the fields of :data:`RENAMED` come from augment's own flags."""
    from multiref.util.errors import UserError

    renamed: dict = {RetrievalConfig: {}, Doc2VecConfig: {}}
    for flag, _metavar, cls, name, _stage_flag, _text in RENAMED:
        renamed[cls][name] = getattr(parsed, flag[2:].replace("-", "_"))
    if renamed[RetrievalConfig]["depth"] < 1:
        raise UserError(f"--top-k must be at least 1, got {renamed[RetrievalConfig]['depth']}")
    return (from_args(AugmentConfig, parsed), from_args(RetrievalConfig, parsed, **renamed[RetrievalConfig]),
            from_args(Doc2VecConfig, parsed, **renamed[Doc2VecConfig]))
