"""The options of ``multiref lsdscc annotate export|import|serve|browse``, declared once.

Each command's options are a frozen dataclass (:class:`ExportConfig`, :class:`ImportConfig`,
:class:`ServeConfig`, :class:`BrowseConfig`) of :func:`multiref.util.options.option` fields:
flag, default and help in one place. Options two commands share are groups declared once
(:class:`CandidatesInput`, :class:`Proposal`, :class:`ServerOptions`); the defaults the
library's functions take (:data:`OVERLAP_THRESHOLD`, :data:`TIE`) are these. The command line
builds the config from the parsed flags once; a Python caller builds it directly. Standard
library only (the command line imports this for ``--help``).
"""

from __future__ import annotations

from dataclasses import dataclass

from multiref.util.options import group, option

OVERLAP_THRESHOLD = 0.2  # Jaccard overlap that links two references into one proposed group
TIES = ("relevant", "irrelevant")
TIE = "irrelevant"  # relevance when the annotators' votes tie
HOST = "127.0.0.1"
PORT = 8765


@dataclass(frozen=True)
class CandidatesInput:
    """The corpus folder whose ``test_candidates`` config is annotated."""

    dataset: str | None = option(None, flag="--dataset", required=True, metavar="FOLDER",
                                 help="folder with the test_candidates config")


@dataclass(frozen=True)
class Proposal:
    """How the proposed groups are made (``annotate export`` and the ``serve`` page)."""

    overlap_threshold: float = option(OVERLAP_THRESHOLD, flag="--overlap-threshold", parse=float,
                                      help="Jaccard overlap of non-stop-word sets that links two references into "
                                           "one proposed group (default: %(default)s)")


@dataclass(frozen=True)
class ServerOptions:
    """Where the local page is served (``serve`` and ``browse``)."""

    host: str = option(HOST, flag="--host",
                       help="address to listen on; the page has no login, so keep the loopback (default: %(default)s)")
    port: int = option(PORT, flag="--port", low=0, high=65535,
                       help="port, 0 to 65535; 0 picks a free one (default: %(default)s)")
    verbose: bool = option(False, flag="--verbose", help="log every request on stderr")


@dataclass(frozen=True)
class ExportConfig:
    """``annotate export``: the candidates as a CSV (and JSON lines) for annotators."""

    source: CandidatesInput = group(CandidatesInput)
    output: str | None = option(None, flag="--output", required=True, metavar="FILE.csv",
                                help="CSV to write (FILE.jsonl is written too)")
    proposal: Proposal = group(Proposal)


@dataclass(frozen=True)
class ImportConfig:
    """``annotate import``: the annotators' CSV files merged into the grouped test set."""

    source: CandidatesInput = group(CandidatesInput)
    annotations: tuple = option((), flag="--annotations", required=True, metavar="FILE.csv",
                                help="one CSV per annotator")
    output: str | None = option(None, flag="--output", required=True, metavar="FOLDER",
                                help="where test.group.json and test.queries.txt go")
    tie: str = option(TIE, flag="--tie", choices=TIES,
                      help="relevance when the annotators' votes tie (default: %(default)s)")
    partial: bool = option(False, flag="--partial",
                           help="accept unfinished annotator files: import only the queries every annotator has "
                                "finished (the others are counted as queries_unfinished; default: an unlabelled "
                                "row is an error)")


@dataclass(frozen=True)
class ServeConfig:
    """``annotate serve``: the labelling page, saving to the annotator's CSV."""

    source: CandidatesInput = group(CandidatesInput)
    output: str | None = option(None, flag="--output", required=True, metavar="ANNOTATOR.csv",
                                help="this annotator's CSV: created, or resumed when it exists (also a file from "
                                     "`annotate export`)")
    annotator: str = option("", flag="--annotator", metavar="NAME",
                            help="name shown on the page and in the log (default: the CSV's file name)")
    proposal: Proposal = group(Proposal)
    server: ServerOptions = group(ServerOptions)


@dataclass(frozen=True)
class BrowseConfig:
    """``annotate browse``: a read-only page of a test set (``dataset`` or ``references``, one
    of them), with a system's hypotheses and MaxBLEU when ``hypotheses`` is given."""

    dataset: str | None = option(None, flag="--dataset", required=True, exclusive="source", metavar="FOLDER",
                                 help="dataset folder (test_grouped, else test_candidates)")
    references: str | None = option(None, flag="--references", required=True, exclusive="source", metavar="FILE",
                                    help="the public LSDSCC JSON file (test.group.json) or JSON lines")
    dataset_config: str | None = option(None, flag="--config",
                                        help="config of --dataset to show, e.g. test_candidates (default: "
                                             "test_grouped when present)")
    hypotheses: str | None = option(None, flag="--hypotheses", aliases=("-H",), metavar="FILE",
                                    help="system outputs as JSON lines (id or query; hypotheses or hypothesis), as "
                                         "for `multiref score`")
    server: ServerOptions = group(ServerOptions)
