"""The LSDSCC corpus job's options: flags, the Beam options class, the resolved config.

Importing this module stays light (no Beam): the ``multiref`` CLI calls
:func:`add_corpus_arguments` on its own parser. :class:`LsdsccCorpusOptions` is the same
flags as a Beam ``PipelineOptions`` subclass (Beam's own idiom, as in its wordcount
example); it is created on first use (``from pipelines.lsdscc_options import
LsdsccCorpusOptions``), since it needs Beam.
"""

from __future__ import annotations

import argparse
import math
import os
import sys

from lsdscc.corpus.config import CorpusConfig

MAX_AUTO_SHARDS = 4096
COMPRESSION_RATIO = 6
AUTO_SHARD_MB = 32  # --num-shards auto: one shard per 32 MB of estimated uncompressed input


def add_once(parser, *names, **kwargs) -> None:
    """``parser.add_argument`` unless one of ``names`` is already there: Beam parses every
    ``PipelineOptions`` subclass with one parser, and several jobs share ``--output``."""
    if any(n in getattr(parser, "_option_string_actions", {}) for n in names):
        return
    parser.add_argument(*names, **kwargs)


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
    """The corpus job's own flags (Beam's flags are left to Beam)."""
    d = CorpusConfig()
    add = lambda *names, **kw: add_once(parser, *names, **kw)  # noqa: E731
    add("--input", action="append", default=None, metavar="PATH_OR_GLOB",
        help="dump file, folder or glob (repeatable); default: the bundled sample")
    add("--output", default="out/lsdscc", metavar="FOLDER", help="dataset folder (default: out/lsdscc)")
    add("--subreddit", action="append", default=None, metavar="NAME",
        help="keep this subreddit (repeatable; default: movies)")
    add("--vocab-size", type=int, default=d.vocab_size, help=f"kept vocabulary (default {d.vocab_size:,})")
    add("--max-query-tokens", type=int, default=d.max_query_tokens,
        help=f"drop pairs with longer queries (default {d.max_query_tokens})")
    add("--max-response-tokens", type=int, default=d.max_response_tokens,
        help=f"drop pairs with longer responses (default {d.max_response_tokens})")
    add("--validation-fraction", type=float, default=d.validation_fraction,
        help=f"share of threads in validation, by hash of the thread id (default {d.validation_fraction})")
    add("--lowercase", action=argparse.BooleanOptionalAction, default=d.lowercase,
        help="lowercase the text, as the public LSDSCC set is (default: yes; --no-lowercase keeps the case)")
    add("--tokenizer", choices=("treebank", "nltk"), default=d.tokenizer,
        help="NLTK tokenizer: TreebankWordTokenizer or NLTKWordTokenizer (default treebank)")
    add("--text-convention", choices=d.text_conventions, default=d.text_convention,
        help="text convention: lsdscc (the released LSDSCC text: didn t, no . or /, digits) or "
        f"treebank (did n't, standalone numbers); default {d.text_convention}")
    add("--min-turns", type=int, default=d.min_turns, help=f"shortest multi-turn conversation (default {d.min_turns})")
    add("--rare-max-count", type=int, default=d.rare_max_count,
        help=f"tokens seen at most this often may be split into frequent words (default {d.rare_max_count})")
    add("--piece-min-count", type=int, default=d.piece_min_count,
        help=f"each piece of a split must be seen this often (default {d.piece_min_count})")
    add("--num-shards", default="auto", metavar="N|auto",
        help="parquet files per split (does not change the rows); auto (default): one per "
        f"{AUTO_SHARD_MB} MB of estimated uncompressed input, at least 1, at most {MAX_AUTO_SHARDS}")
    add("--bucket-mb", type=float, default=None, action=_Deprecated, help=argparse.SUPPRESS)


def __getattr__(name):
    if name == "LsdsccCorpusOptions":
        from multiref.output.beam_utils import options_class

        return options_class(__name__, name, add_corpus_arguments, "The corpus job's flags as Beam pipeline options.")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def parse_num_shards(value) -> int | None:
    """``--num-shards``: None for ``auto``, else a positive integer (UserError otherwise)."""
    from multiref.util.errors import UserError

    text = str(value).strip().lower()
    if text == "auto":
        return None
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise UserError(f"--num-shards must be 'auto' or a positive integer, got {value!r}")
    return n


def config_from_values(values, num_shards: int = 1) -> CorpusConfig:
    """The CorpusConfig of parsed flags (an argparse Namespace or the options view)."""
    from multiref.util.errors import UserError

    try:
        return CorpusConfig(
            subreddits=tuple(values.subreddit or ("movies",)),
            lowercase=values.lowercase,
            tokenizer=values.tokenizer,
            text_convention=values.text_convention,
            vocab_size=values.vocab_size,
            max_query_tokens=values.max_query_tokens,
            max_response_tokens=values.max_response_tokens,
            rare_max_count=values.rare_max_count,
            piece_min_count=values.piece_min_count,
            validation_fraction=values.validation_fraction,
            min_turns=values.min_turns,
            num_shards=num_shards,
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None


def estimated_input_bytes(inputs, list_remote: bool = True) -> int:
    """Uncompressed size estimate of the input files (.zst/.gz/.bz2/.xz count 6x their size).

    Remote paths and globs are listed with Beam's FileSystems; with ``list_remote=False``
    (a dry run, which must not touch the network) they count as empty.
    """
    total = 0
    remote = [i for i in inputs if "://" in i]
    sizes = {}
    if remote and list_remote:
        from apache_beam.io.filesystems import FileSystems

        for result in FileSystems.match(remote):
            for m in result.metadata_list:
                sizes[m.path] = m.size_in_bytes
    for path in [i for i in inputs if "://" not in i] + sorted(sizes):
        size = sizes[path] if "://" in path else os.path.getsize(path)
        if path.endswith((".zst", ".gz", ".bz2", ".xz")):
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
