"""Deterministic dataset writing and counting for every Beam job of this project.

Modelled on TensorFlow Datasets' Beam writer: each example carries a stable key; a sha1 of
the key picks its shard (:func:`multiref.output.hfdata.shard_index`); a ``GroupByKey`` on
``(config, split, shard)`` gathers a shard; the shard's rows are sorted and written as one
parquet file (:func:`multiref.output.hfdata.parquet_bytes`, the project's writer settings) through
``apache_beam.io.filesystems.FileSystems`` under a temporary name, then renamed. So the
files are byte-identical whatever the runner (local, multi-process, portable, Dataflow) and
however the work was split into bundles. Every expected shard is written, an empty one as a
valid empty table (schema, no row group).

Counts travel as data, not as Beam metrics: a :class:`CountingDoFn` tallies per bundle and
emits the tally on its ``counts`` output; :class:`SumCounts` adds the tallies up. The result
is the same on every runner (metrics are best-effort on some). The tallies also go to Beam
counters, for a runner's monitoring page.

- :class:`WriteShards`: ``(config, split, shard_key, row)`` -> parquet shards; outputs one
  :class:`ShardSummary` per shard.
- :class:`TupleRowCoder` (:func:`register_row_coder`): a deterministic coder for a job's
  NamedTuple rows, as compact as a plain tuple (Beam's default coder pickles the type of a
  NamedTuple with every element).
- :func:`write_file`: one whole file through FileSystems, temporary name then rename
  (:func:`write_card`: a folder's ``dataset_meta.json`` and README card, the same way);
  :func:`read_file`, :func:`matching`, :func:`parquet_data_bytes`: reading back, local or remote.
"""

from __future__ import annotations

import functools
import os
import uuid
from collections import Counter
from typing import Callable, Mapping, NamedTuple, Sequence

import apache_beam as beam
from apache_beam import typehints
from apache_beam.coders import coder_impl
from apache_beam.coders.coders import FastCoder
from apache_beam.io.filesystems import CompressionTypes, FileSystems
from apache_beam.transforms.window import GlobalWindows

from multiref.output import hfdata
from multiref.beam.spill import SpillGroupByKey
from multiref.util.location import Location

COUNTS = "counts"


def join(folder: str, *parts: str) -> str:
    """A path under ``folder``, local or remote (``gs://...``)."""
    return FileSystems.join(folder, *parts) if parts else folder


def write_file(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` (local or remote) under a temporary name beside it, then
    rename: a reader never sees a half-written file. The temporary name starts with a dot so
    no ``<split>-*.parquet`` pattern matches it."""
    folder, name = FileSystems.split(path)
    short = name.encode("utf-8")[:200].decode("utf-8", "ignore")  # a 255-byte name stays legal with the prefix
    tmp = FileSystems.join(folder, f".tmp-{uuid.uuid4().hex}-{short}")
    with FileSystems.create(tmp, compression_type=CompressionTypes.UNCOMPRESSED) as fh:
        fh.write(data)
    FileSystems.rename([tmp], [path])  # replaces an existing file (os.rename locally; copy + delete on GCS)


def read_file(path: str) -> bytes | None:
    """The bytes of ``path`` (local or remote), or None when there is no such file."""
    if not FileSystems.exists(path):
        return None
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as fh:
        return fh.read()


def matching(pattern: str) -> list:
    """The paths (local or remote) matching glob ``pattern``, sorted."""
    return sorted(m.path for m in FileSystems.match([pattern])[0].metadata_list)


def parquet_data_bytes(paths) -> int:
    """Uncompressed size of the parquet data in ``paths`` (local or remote), from the footers:
    the ``num_bytes`` a dataset card states for a split."""
    import pyarrow.parquet as pq

    total = 0
    for path in paths:
        with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as fh:
            md = pq.ParquetFile(fh).metadata
            total += sum(md.row_group(i).total_byte_size for i in range(md.num_row_groups))
    return total


def write_card(folder: str, meta) -> None:
    """A dataset folder's ``dataset_meta.json`` and README card from ``meta``
    (:mod:`multiref.output.hfdata`'s format), written like every other file (:func:`write_file`)."""
    title = Location(folder).name
    write_file(join(folder, hfdata.META_FILE), hfdata.meta_text(meta).encode("utf-8"))
    write_file(join(folder, "README.md"), hfdata.card_text(meta, title).encode("utf-8"))


class _TupleRowImpl(coder_impl.StreamCoderImpl):
    """A row as the plain tuple of its fields in Beam's compiled primitive encoding (a field
    holding a list of rows as a tuple of tuples); decoding makes the row types again."""

    def __init__(self, row_type, row_lists):
        primitives = beam.coders.FastPrimitivesCoder().get_impl()
        self._encode, self._decode = primitives.encode_to_stream, primitives.decode_from_stream
        self._new = functools.partial(tuple.__new__, row_type)  # what _make does, without its checks
        self._row_lists = {i: functools.partial(tuple.__new__, t) for i, t in row_lists.items()}

    def encode_to_stream(self, value, stream, nested):
        if self._row_lists:
            value = list(value)
            for i in self._row_lists:
                value[i] = tuple(map(tuple, value[i]))
        self._encode(tuple(value), stream, nested)

    def decode_from_stream(self, stream, nested):
        fields = self._decode(stream, nested)
        if self._row_lists:
            fields = list(fields)
            for i, new in self._row_lists.items():
                fields[i] = list(map(new, fields[i]))
        return self._new(fields)


def _is_row_type(hint) -> bool:
    return isinstance(hint, type) and issubclass(hint, tuple) and hasattr(hint, "_fields")


def _check_field(hint, row_type) -> type | None:
    """None for a field :class:`TupleRowCoder` encodes as a primitive (``str``, ``int``,
    ``X | None``, ``list[X]``), the row type of a ``list[RowType]`` field; else TypeError."""
    import types
    import typing

    args = typing.get_args(hint)
    if hint in (str, int):
        return None
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        if all(a in (str, int, type(None)) for a in args):
            return None
    elif typing.get_origin(hint) is list and len(args) == 1:
        if args[0] in (str, int):
            return None
        if _is_row_type(args[0]) and all(_check_field(h, args[0]) is None
                                         for h in typing.get_type_hints(args[0]).values()):
            return args[0]
    raise TypeError(f"{row_type.__name__}: no deterministic row encoding for a field of type {hint!r}")


class TupleRowCoder(FastCoder):
    """A NamedTuple row type's coder: the plain tuple of its fields in Beam's compiled
    primitive encoding, decoded back into the row type (Beam's default coder pickles the
    type with every NamedTuple). Fields are annotated ``str``, ``int``, ``X | None``,
    ``list[str]`` or ``list[RowType]`` (a list of rows goes as one tuple of tuples: one call
    per element, however many rows it holds); any other annotation is a TypeError, so the
    encoding is deterministic and rows can be keys and accumulators too."""

    def __init__(self, row_type):
        import typing

        self.row_type = row_type
        hints = typing.get_type_hints(row_type)
        fields = [_check_field(hints[name], row_type) for name in row_type._fields]
        self._row_lists = {i: t for i, t in enumerate(fields) if t is not None}

    def _create_impl(self):
        return _TupleRowImpl(self.row_type, self._row_lists)

    def is_deterministic(self) -> bool:
        return True

    def to_type_hint(self):
        return self.row_type

    @classmethod
    def from_type_hint(cls, typehint, registry):
        return cls(typehint)

    def __eq__(self, other):
        return type(self) is type(other) and self.row_type is other.row_type

    def __hash__(self):
        return hash((type(self), self.row_type))


def register_row_coder(*row_types) -> None:
    """Register :class:`TupleRowCoder` for each NamedTuple ``row_types``: a PCollection whose
    element type (``with_output_types``) names one is then encoded compactly."""
    for row_type in row_types:
        beam.coders.registry.register_coder(row_type, TupleRowCoder)


class CountingDoFn(beam.DoFn):
    """A DoFn that counts with ``self.count(name, n)``; the bundle's tally leaves on the
    ``counts`` output (a dict) when the bundle finishes, and goes to Beam counters in
    ``namespace``. Subclasses that override start/finish_bundle call super()."""

    namespace = "multiref"

    def start_bundle(self):
        self.tally = Counter()

    def count(self, name: str, n: int = 1) -> None:
        self.tally[name] += n

    def finish_bundle(self):
        if not self.tally:
            return
        from apache_beam.metrics import Metrics

        for name, n in sorted(self.tally.items()):
            Metrics.counter(self.namespace, name).inc(n)
        tally, self.tally = dict(self.tally), Counter()
        yield beam.pvalue.TaggedOutput(COUNTS, GlobalWindows.windowed_value(tally))


class SumCounts(beam.CombineFn):
    """Adds up count dicts (``{name: n}``); the output's keys are sorted."""

    def create_accumulator(self):
        return Counter()

    def add_input(self, acc, element):
        acc.update(element)
        return acc

    def merge_accumulators(self, accs):
        out = Counter()
        for a in accs:
            out.update(a)
        return out

    def extract_output(self, acc):
        return dict(sorted(acc.items()))


# ------------------------------------------------------------------------------ writing
class ShardSummary(NamedTuple):
    config: str
    split: str
    shard: int
    rows: int
    extra: object  # what the job's ``summarize`` hook returned, or None


class _ShardOf(beam.DoFn):
    def __init__(self, num_shards: int):
        self.num_shards = num_shards

    def setup(self):
        self.shards = {}  # key -> shard: the rows of one key (a thread, say) often come in runs

    def process(self, element):
        config, split, key, row = element
        shard = self.shards.get(key)
        if shard is None:
            if len(self.shards) >= 100_000:
                self.shards.clear()
            shard = self.shards[key] = hfdata.shard_index(key, self.num_shards)
        yield (config, split, shard), row


class _WriteShard(beam.DoFn):
    def __init__(self, folder, schemas, num_shards, sort_key, finish, summarize, unpack=None):
        self.folder = folder
        self.schemas = schemas
        self.num_shards = num_shards
        self.sort_key = sort_key
        self.finish = finish
        self.summarize = summarize
        self.unpack = unpack

    def process(self, element):
        (config, split, shard), rows = element
        if self.unpack is not None:
            rows = self.unpack(config, rows)
        yield self.write(config, split, shard, sorted(rows, key=self.sort_key))

    def write(self, config, split, shard, rows) -> ShardSummary:
        if self.finish is not None:
            rows = self.finish(config, rows)
        name = f"{split}-{shard:05d}-of-{self.num_shards:05d}.parquet"
        write_file(join(self.folder, config, name), hfdata.parquet_bytes(rows, self.schemas[config]))
        extra = self.summarize(config, rows) if self.summarize is not None else None
        return ShardSummary(config, split, shard, len(rows), extra)


class _WriteEmptyShards(_WriteShard):
    """Every expected shard that received no row (``written``: the summaries of the others),
    written as a valid empty table. A side input, not a Flatten of markers into the
    GroupByKey: the local runner materializes every multi-input Flatten, which would copy
    each row once more."""

    def __init__(self, every, *args):
        super().__init__(*args)
        self.every = every

    def process(self, _, written):
        done = {(config, split, shard) for config, split, shard, *_ in written}
        for config, split, shard in self.every:
            if (config, split, shard) not in done:
                yield self.write(config, split, shard, [])


def _first_field(row):
    return row["id"] if isinstance(row, dict) else row[0]


class WriteShards(beam.PTransform):
    """Write ``(config, split, shard_key, row)`` elements as parquet shards under ``folder``:
    ``<config>/<split>-NNNNN-of-MMMMM.parquet``.

    - ``schemas``: config -> pyarrow schema; rows are dicts keyed by its field names or
      tuples in its field order;
    - ``splits``: every ``(config, split)`` to write (each gets all ``num_shards`` files,
      empty ones as a valid empty table);
    - ``sort_key``: orders the rows of a shard (default: the ``id`` field / first field; it
      must be a total order, so the bytes never depend on arrival order);
    - ``finish(config, sorted_rows) -> rows``: an optional last step per shard (e.g. adding
      a column computed over the shard);
    - ``summarize(config, rows)``: optional extra value for the shard's :class:`ShardSummary`;
    - ``unpack(config, values) -> rows``: an optional first step per shard, when the elements
      carry packed values (several rows as one compact value, say) rather than rows;
    - ``spill``: a folder the job owns and removes (:func:`multiref.beam.spill.spill_folder`):
      the rows are grouped by shard through spill files there
      (:class:`~multiref.beam.spill.SpillGroupByKey`) instead of the runner's memory.

    Rows that must share a file (a thread's rows, say) share a ``shard_key``.
    """

    def __init__(self, folder: str, schemas: Mapping, splits: Sequence[tuple], num_shards: int,
                 sort_key: Callable = _first_field, finish: Callable | None = None,
                 summarize: Callable | None = None, unpack: Callable | None = None, spill: str | None = None):
        super().__init__()
        self.folder = folder
        self.schemas = dict(schemas)
        self.splits = sorted(set(tuple(s) for s in splits))
        self.num_shards = num_shards
        self.sort_key = sort_key
        self.finish = finish
        self.summarize = summarize
        self.unpack = unpack
        self.spill = spill

    def expand(self, examples):
        """``examples``: one PCollection, or ``{name: PCollection}`` (one GroupByShard per lane:
        no Flatten before the grouping, which the local runner would materialize); a lane may
        be a tuple of PCollections, each sharded on its own and grouped together."""
        args = (self.folder, self.schemas, self.num_shards, self.sort_key, self.finish, self.summarize, self.unpack)
        if isinstance(examples, dict):
            lanes = [lane | name >> _WriteLane(self.num_shards, args, self.spill)
                     for name, lane in sorted(examples.items())]
            written = tuple(lanes) | "Written" >> beam.Flatten()
            pipeline = lanes[0].pipeline
        else:
            written = _WriteLane(self.num_shards, args, self.spill).expand(examples)
            pipeline = written.pipeline
        every = [(c, s, i) for c, s in self.splits for i in range(self.num_shards)]
        empty = (pipeline
                 | "EveryShard" >> beam.Create([None], reshuffle=False)
                 | "WriteEmptyShards" >> beam.ParDo(_WriteEmptyShards(every, *args), beam.pvalue.AsList(written)))
        return (written, empty) | "AllShards" >> beam.Flatten()


class _WriteLane(beam.PTransform):
    def __init__(self, num_shards, args, spill=None):
        super().__init__()
        self.num_shards = num_shards
        self.args = args
        self.spill = spill

    def expand(self, examples):
        parts = list(examples) if isinstance(examples, (tuple, list)) else [examples]
        sharded = tuple(part | f"ShardOf{i if len(parts) > 1 else ''}" >> self.shard_of(part.element_type)
                        for i, part in enumerate(parts))
        if self.spill is not None:  # each part spilled on its own: no Flatten of the rows
            grouped = sharded | "GroupByShard" >> SpillGroupByKey(self.spill)
        else:
            flat = sharded[0] if len(sharded) == 1 else sharded | "AllParts" >> beam.Flatten()
            grouped = flat | "GroupByShard" >> beam.GroupByKey()
        return grouped | "WriteShard" >> beam.ParDo(_WriteShard(*self.args))

    def shard_of(self, hint):
        shard_of = beam.ParDo(_ShardOf(self.num_shards))
        if isinstance(hint, typehints.typehints.TupleConstraint) and len(hint.tuple_types) == 4:  # keep the row's coder
            shard_of = shard_of.with_output_types(typehints.Tuple[typehints.Tuple[str, str, int], hint.tuple_types[3]])
        return shard_of
