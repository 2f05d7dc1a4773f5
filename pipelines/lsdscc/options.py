"""The LSDSCC corpus job's options: declared once, as dataclass fields with their flags.

:class:`CorpusJob` (where the job reads and writes) and :class:`lsdscc.corpus.config.CorpusConfig`
(what the card records) declare every option; from them come the ``multiref lsdscc build``
flags (:func:`add_corpus_arguments`), the job's Beam ``PipelineOptions`` class
(:func:`corpus_pipeline_options`, made when a job runs: it needs Beam) and the config of
parsed flags (:func:`corpus_from_args`, built once by the command). Importing this module stays light (no Beam).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from dataclasses import dataclass

from lsdscc.corpus import parquet_source
from lsdscc.corpus.config import CorpusConfig
from multiref.util.location import is_remote
from multiref.util.options import add_arguments, from_args, option

MAX_AUTO_SHARDS = 4096
MAX_SHARDS = 10_000  # an explicit --num-shards N (10,000,000 took 6.2 GB in 60 s before the first record)
COMPRESSION_RATIO = 6
AUTO_SHARD_MB = 32  # --num-shards auto: one shard per 32 MB of estimated uncompressed input
AUTO_WORKERS_MB = 100  # --workers auto: several local workers from this estimated uncompressed input on
MAX_AUTO_WORKERS = 4  # ... one per core, at most this many (each decompresses every input file whole)
MAX_WORKERS = 64  # an explicit --workers N: at most this many local processes
#: --workers auto: memory of one more local worker, WORKER_MEMORY_BASE bytes plus WORKER_MEMORY_FACTOR
#: times the estimated uncompressed input, so that auto never picks more workers than the available
#: memory holds. Measured with the spill files (summed RSS of the process tree, two workers minus one
#: process): 0.29-0.32 GB per worker at 300k-1M generated comments, estimated at 332 MB-1.1 GB, both
#: kinds of text; the rule asks about twice that (before the spill a worker held about 2.5x its input)
WORKER_MEMORY_BASE = 512 << 20
WORKER_MEMORY_FACTOR = 0.25


def hashes_file(text: str) -> str:
    """``--verify-hashes``'s argparse type: a folder is a usage error saying so (exit 2)."""
    if not is_remote(text) and os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text} is a directory; give the hashes file (hashes.txt)")
    return text


@dataclass(frozen=True)
class CorpusJob:
    """The corpus job's options that are not the data's (so not in the card, which records
    :class:`CorpusConfig` with the number of shards resolved)."""

    input: tuple = option((), flag="--input", repeat=True, metavar="PATH_OR_GLOB",
                          help="dump file, folder or glob (repeatable), or Parquet shards laid out as "
                               "data/comments/YYYY/MM/*.parquet (local or hf://datasets/...); default: the bundled "
                               "sample")
    output: str = option("out/lsdscc", flag="--output", metavar="FOLDER", help="dataset folder")
    num_shards: str = option("auto", flag="--num-shards", metavar="N|auto",
                             help=f"parquet files per split, 1 to {MAX_SHARDS:,} (does not change the rows); auto "
                                  "(default): one per "
                                  f"{AUTO_SHARD_MB} MB of estimated uncompressed input, at least 1, at most "
                                  f"{MAX_AUTO_SHARDS}")
    workers: str = option("auto", flag="--workers", metavar="N|auto",
                          help="worker processes of the local runner (Beam's multi-processing mode), each reading "
                               "its part of every input file; same output bytes. auto (default): one per core, "
                               f"at most {MAX_AUTO_WORKERS}, when the input is estimated at {AUTO_WORKERS_MB} MB "
                               "or more uncompressed and the available memory holds them (each needs about "
                               f"{WORKER_MEMORY_BASE >> 20} MB plus {WORKER_MEMORY_FACTOR:g}x the uncompressed "
                               "input), else 1. Other runners keep "
                               "their own workers")
    verify_hashes: str | None = option(None, flag="--verify-hashes", metavar="FILE", parse=hashes_file,
                                       help="check every input file against FILE (Arctic Shift's hashes.txt: "
                                            "'<sha256>  <path>' lines, the longest tail of the input's path wins) "
                                            "while it is read; a mismatch stops the build, nothing is published")


#: the classes declaring the corpus job's options, in the order --help shows their flags
CORPUS_OPTIONS = (CorpusJob, CorpusConfig)


class _Deprecated(argparse.Action):
    """Accepts a flag that no longer does anything, with a one-line note on stderr."""

    noted = False

    def __call__(self, parser, namespace, values, option_string=None):
        if not _Deprecated.noted:  # Beam parses the flags several times: say it once
            _Deprecated.noted = True
            print(f"note: {option_string} is deprecated and ignored (shards no longer bound memory; "
                  "use --num-shards)", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_corpus_arguments(parser) -> None:
    """The corpus job's own flags (Beam's flags are left to Beam): those of :class:`CorpusJob`
    and :class:`CorpusConfig`, and the deprecated ``--bucket-mb``."""
    add_arguments(parser, *CORPUS_OPTIONS)
    if "--bucket-mb" not in parser._option_string_actions:  # Beam parses every job's flags with one parser
        parser.add_argument("--bucket-mb", type=float, default=None, action=_Deprecated, help=argparse.SUPPRESS)


def corpus_pipeline_options() -> type:
    """The corpus job's flags as a Beam ``PipelineOptions`` subclass (made once, on first call)."""
    from pipelines.beam.runner import pipeline_options_class

    return pipeline_options_class("LsdsccCorpusOptions", add_corpus_arguments,
                                  "The corpus job's flags as Beam pipeline options.")


def parse_num_shards(value) -> int | None:
    """``--num-shards``: None for ``auto``, else a positive integer (UserError otherwise)."""
    from multiref.util.options import count_or_auto

    return count_or_auto(value, "--num-shards", MAX_SHARDS)


def resolve_workers(value, inputs, source=None, local: bool = True) -> int:
    """Local worker processes: an explicit ``--workers N`` (N >= 1) wins; ``auto`` gives one
    per core, at most :data:`MAX_AUTO_WORKERS`, when the runner is local and the inputs are
    estimated at :data:`AUTO_WORKERS_MB` MB or more uncompressed (below that, starting the
    workers costs more than they save), else 1. UserError for anything else."""
    from multiref.util.options import count_or_auto

    fixed = count_or_auto(value, "--workers", MAX_WORKERS)
    if fixed is not None:
        return fixed
    if not local or source is not None:
        return 1
    estimate = estimated_input_bytes([i for i in inputs if not is_remote(i)])
    if estimate < AUTO_WORKERS_MB * 2**20:
        return 1
    wanted = max(1, min(MAX_AUTO_WORKERS, os.cpu_count() or 1))
    available = available_memory()
    if available is None:
        return wanted
    return max(1, min(wanted, int(0.8 * available // (WORKER_MEMORY_BASE + WORKER_MEMORY_FACTOR * estimate))))


def available_memory() -> int | None:
    """Bytes of memory available to new processes (Linux ``MemAvailable``), None when unknown."""
    from multiref.util.files import meminfo

    return meminfo("MemAvailable")


def config_from_values(parsed, num_shards: int = 1) -> CorpusConfig:
    """The CorpusConfig of parsed flags (the command line's, or the job's Beam options view)."""
    from multiref.util.errors import UserError

    try:
        return from_args(CorpusConfig, parsed, num_shards=num_shards)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def corpus_from_args(parsed) -> tuple:
    """``(CorpusJob, CorpusConfig)`` of parsed flags: the configs the corpus job takes (the
    config's ``num_shards`` is resolved from ``CorpusJob.num_shards`` when the job runs)."""
    return from_args(CorpusJob, parsed), config_from_values(parsed)


def estimated_input_bytes(inputs, list_remote: bool = True) -> int:
    """Uncompressed size estimate of the input files (.zst/.gz/.bz2/.xz/.parquet count 6x their size).

    Remote paths and globs are listed with Beam's FileSystems; with ``list_remote=False``
    (a dry run, which must not touch the network) they count as empty.
    """
    total = 0
    remote = [i for i in inputs if is_remote(i) and not parquet_source.is_hf(i)]
    sizes = parquet_source.hf_sizes([i for i in inputs if parquet_source.is_hf(i)]) if list_remote else {}
    if remote and list_remote:
        from apache_beam.io.filesystems import FileSystems

        for result in FileSystems.match(remote):
            for m in result.metadata_list:
                sizes[m.path] = m.size_in_bytes
    for path in [i for i in inputs if not is_remote(i)] + sorted(sizes):
        size = sizes[path] if is_remote(path) else os.path.getsize(path)
        if path.endswith((".zst", ".gz", ".bz2", ".xz", ".parquet")):
            size *= COMPRESSION_RATIO
        total += size
    return total


def resolve_num_shards(value, inputs, source=None, list_remote: bool = True) -> int:
    """Parquet shards per split: an explicit ``--num-shards N`` wins; ``auto`` gives
    ceil(estimated input / 32 MB) clamped to [1, 4096] (in-memory records: 1);
    ``list_remote``: see :func:`estimated_input_bytes`."""
    fixed = parse_num_shards(value)
    if fixed is not None:
        return fixed
    if source is not None:
        return 1
    estimate = estimated_input_bytes(inputs, list_remote)
    return max(1, min(MAX_AUTO_SHARDS, math.ceil(estimate / (AUTO_SHARD_MB * 2**20))))
