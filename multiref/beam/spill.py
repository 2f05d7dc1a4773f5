"""A ``GroupByKey`` whose values never enter the runner's shuffle: bucketed spill files.

Beam's local runner (FnApiRunner) holds a ``GroupByKey``'s input as decoded Python objects
and, when the consuming step starts, encodes all of it into one stream and copies that into
one ``bytes``: about three times the grouped data at once, and Python keeps its high-water
mark. :class:`SpillGroupByKey` gives the same ``(key, values)`` groups with the bulk bytes in
files instead:

1. ``Spill``: each bundle appends every encoded ``(key, value)`` to one of ``buckets``
   buffers (the bucket is a CRC-32 of the key's deterministic encoding). When the buffers
   pass ``flush_bytes``, and when the bundle finishes, they are written as ONE file
   ``<folder>/<random>.spill`` (the buckets' segments one after another) through
   ``apache_beam.io.filesystems.FileSystems`` (local or ``gs://``), and the bundle emits only
   ``(bucket, (path, offset, length))`` per segment.
2. ``GroupSegments``: a ``GroupByKey`` of those small tuples.
3. ``ReadBuckets``: per bucket, its segments are read, the values grouped by key in memory
   (1/``buckets`` of the data at a time), and each group emitted as ``(key, [values])``, the
   keys in the order of their encoding and each key's values sorted by their encoding. So the
   output does not depend on how the input was split into bundles.

Retries are safe: every file has a fresh random name, and only segments emitted by bundles
the runner committed are read (a failed attempt's files are never named downstream). The
files are removed with their folder by :func:`spill_folder` when the job ends, whether it
succeeded or failed; the composite itself deletes nothing (a retried read needs its files).
Only the global window is supported (the files keep no timestamps or windows).

:class:`SpillReshuffle` is the same without keys: a PCollection materialized in spill files
rather than in the runner's memory (for a step that must wait for a side input computed from
it). :func:`grouping` picks ``GroupByKey`` or the spill. Worth it only on a runner whose
shuffle lives in memory (:func:`pipelines.beam.runner.shuffles_in_memory`).
"""

from __future__ import annotations

import contextlib
import uuid
import zlib
from typing import Iterable, Tuple

import apache_beam as beam
from apache_beam import typehints
from apache_beam.coders import coder_impl
from apache_beam.io.filesystems import CompressionTypes, FileSystems
from apache_beam.transforms.window import GlobalWindows

from multiref.util.location import is_remote

#: Default number of buckets: a bucket is what the reading step holds in memory at once.
BUCKETS = 64
#: Default size of a bundle's buffers (encoded bytes) before they are written to a file.
FLUSH_BYTES = 32 << 20

Segment = Tuple[str, int, int]  # (path, offset, length) of one bucket's records in a spill file


@contextlib.contextmanager
def spill_folder(parent: str, *, remove: bool = True):
    """A fresh folder name ``<parent>/.spill-<random>`` (local or remote) for the spill files of
    one job, removed with everything in it when the block ends, on success or failure (unless
    ``remove`` is False: a runner that only builds or draws the graph touches no file). Nothing
    is created here: the first file written creates the folder."""
    folder = FileSystems.join(parent, f".spill-{uuid.uuid4().hex}")
    try:
        yield folder
    except BaseException:
        if remove:
            with contextlib.suppress(Exception):  # the job's own error is the one to report
                remove_folder(folder)
        raise
    if remove:
        remove_folder(folder)


def remove_folder(folder: str) -> None:
    """Delete the spill ``folder`` (local or remote) and the files in it; nothing when there is none."""
    if not is_remote(folder):
        if FileSystems.exists(folder):
            FileSystems.delete([folder])
        return
    from multiref.output.publish_remote import delete_tree

    delete_tree(folder)  # an object store has no folder to delete: its files


def bucket_of(encoded_key: bytes, buckets: int) -> int:
    """The bucket of a key, from its deterministic encoding: the same in every process."""
    return zlib.crc32(encoded_key) % buckets


class _Spill(beam.DoFn):
    """Phase 1: ``(key, value)`` (``value`` alone when ``key_coder`` is None) ->
    ``(bucket, (path, offset, length))`` for each segment written."""

    def __init__(self, folder: str, buckets: int, flush_bytes: int, key_coder, value_coder):
        self.folder, self.buckets, self.flush_bytes = folder, buckets, flush_bytes
        self.key_coder, self.value_coder = key_coder, value_coder

    def setup(self):
        self.encode_key = None if self.key_coder is None else self.key_coder.get_impl().encode
        self.encode_value = self.value_coder.get_impl().encode

    def start_bundle(self):
        self.streams, self.size = {}, 0

    def process(self, element):
        if self.encode_key is None:
            bucket, encoded_value = 0, self.encode_value(element)
        else:
            encoded_key, encoded_value = self.encode_key(element[0]), self.encode_value(element[1])
            bucket = bucket_of(encoded_key, self.buckets)
        stream = self.streams.get(bucket)
        if stream is None:
            stream = self.streams[bucket] = coder_impl.create_OutputStream()
        if self.encode_key is not None:
            stream.write_var_int64(len(encoded_key))
            stream.write(encoded_key)
            self.size += len(encoded_key)
        stream.write_var_int64(len(encoded_value))
        stream.write(encoded_value)
        self.size += len(encoded_value) + 4
        # (a plain function, not a generator: no generator object per element)
        return self.flush() if self.size >= self.flush_bytes else ()

    def flush(self):
        """Write the buffers as one file; yield its segments, one per bucket (not keyed: the
        file's one segment goes to a bucket chosen by its name)."""
        streams, self.streams, self.size = self.streams, {}, 0
        if not streams:
            return
        name = uuid.uuid4().hex
        path = FileSystems.join(self.folder, f"{name}.spill")
        segments, offset = [], 0
        with FileSystems.create(path, compression_type=CompressionTypes.UNCOMPRESSED) as fh:
            for bucket in sorted(streams):
                data = streams.pop(bucket).get()
                fh.write(data)
                if self.encode_key is None:
                    bucket = bucket_of(name.encode("ascii"), self.buckets)
                segments.append((bucket, (path, offset, len(data))))
                offset += len(data)
        yield from segments

    def finish_bundle(self):
        for element in self.flush():
            yield GlobalWindows.windowed_value(element)


def read_records(data: bytes):
    """The ``(encoded key, encoded value)`` records of one segment's bytes."""
    stream = coder_impl.create_InputStream(data)
    while stream.size() > 0:
        key = stream.read(stream.read_var_int64())
        yield key, stream.read(stream.read_var_int64())


def read_segments(segments: Iterable[Segment]):
    """The bytes of each segment, in the order of (path, offset): each file opened once."""
    by_path: dict = {}
    for path, offset, length in segments:
        by_path.setdefault(path, []).append((offset, length))
    for path in sorted(by_path):
        with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as fh:
            for offset, length in sorted(by_path[path]):
                fh.seek(offset)
                data = fh.read(length)
                if len(data) != length:
                    raise IOError(f"spill file {path}: {len(data)} bytes at {offset}, expected {length}")
                yield data


def grouped(segments: Iterable[Segment]) -> list:
    """One bucket's segments -> ``[(encoded key, [encoded members])]``, keys and each key's
    members sorted by their encoding (so the groups do not depend on the segments' order)."""
    table: dict = {}
    for data in read_segments(segments):
        for key, value in read_records(data):
            members = table.get(key)
            if members is None:
                table[key] = [value]
            else:
                members.append(value)
    groups = sorted(table.items())
    table.clear()
    for _, members in groups:
        members.sort()
    return groups


def read_values(data: bytes):
    """The encoded values of one segment's bytes (records without keys)."""
    stream = coder_impl.create_InputStream(data)
    while stream.size() > 0:
        yield stream.read(stream.read_var_int64())


class _ReadValues(beam.DoFn):
    """Phase 3 of :class:`SpillReshuffle`: ``(bucket, segments)`` -> every value, one at a time."""

    def __init__(self, value_coder):
        self.value_coder = value_coder

    def setup(self):
        self.decode_value = self.value_coder.get_impl().decode

    def process(self, element):
        for data in read_segments(element[1]):
            yield from map(self.decode_value, read_values(data))


class _ReadBucket(beam.DoFn):
    """Phase 3: ``(bucket, segments)`` -> ``(key, [values])`` for every key of the bucket."""

    def __init__(self, key_coder, value_coder):
        self.key_coder, self.value_coder = key_coder, value_coder

    def setup(self):
        self.decode_key = self.key_coder.get_impl().decode
        self.decode_value = self.value_coder.get_impl().decode

    def process(self, element):
        groups = grouped(element[1])
        groups.reverse()  # popped from the end: each group's memory goes as soon as it is emitted
        while groups:
            key, values = groups.pop()
            yield self.decode_key(key), [self.decode_value(v) for v in values]


def _kv_types(pcoll) -> tuple:
    hint = pcoll.element_type
    if isinstance(hint, typehints.typehints.TupleConstraint) and len(hint.tuple_types) == 2:
        return hint.tuple_types
    return typehints.Any, typehints.Any


_SEGMENTS = typehints.Tuple[int, typehints.Tuple[str, int, int]]


class _SpillTransform(beam.PTransform):
    def __init__(self, folder: str, buckets: int = BUCKETS, flush_bytes: int = FLUSH_BYTES):
        super().__init__()
        if not folder:
            raise ValueError(f"{type(self).__name__} needs a folder for its spill files")
        if buckets < 1 or flush_bytes < 1:
            raise ValueError(f"buckets and flush_bytes must be positive, got {buckets} and {flush_bytes}")
        self.folder, self.buckets, self.flush_bytes = folder, buckets, flush_bytes

    def segments(self, inputs, key_coder, value_coder):
        """Each input spilled (phase 1), the segments of all of them grouped by bucket (phase 2)."""
        for pcoll in inputs:
            if not pcoll.windowing.is_default():
                raise ValueError(f"{type(self).__name__} {self.label}: only the global window is supported")
        spill = _Spill(self.folder, self.buckets, self.flush_bytes, key_coder, value_coder)
        parts = [pcoll | f"Spill{i if len(inputs) > 1 else ''}" >> beam.ParDo(spill).with_output_types(_SEGMENTS)
                 for i, pcoll in enumerate(inputs)]
        segments = parts[0] if len(parts) == 1 else tuple(parts) | "AllSegments" >> beam.Flatten()
        return segments | "GroupSegments" >> beam.GroupByKey()


def _inputs(pcolls) -> list:
    return list(pcolls) if isinstance(pcolls, (tuple, list)) else [pcolls]


class SpillGroupByKey(_SpillTransform):
    """``(key, value)`` -> ``(key, [values])``, as ``beam.GroupByKey`` (global window only),
    with the values passing through spill files under ``folder`` instead of the runner's
    shuffle (see the module docstring). The input may be a tuple of PCollections of the same
    element type: each is spilled on its own and their groups meet, without a ``Flatten`` of
    the values (which the local runner would materialize). ``folder``: a folder the job owns
    and removes when it ends (:func:`spill_folder`); ``buckets``: how many parts the reading
    step holds one at a time; ``flush_bytes``: the buffers a bundle fills before it writes a
    file. Keys and values are encoded with the coders of the input's element type
    (``Tuple[K, V]``), the key's made deterministic; the output's element type is
    ``Tuple[K, Iterable[V]]``."""

    def expand(self, pcolls):
        inputs = _inputs(pcolls)
        key_type, value_type = _kv_types(inputs[0])
        if any(_kv_types(pcoll) != (key_type, value_type) for pcoll in inputs):
            raise ValueError(f"SpillGroupByKey {self.label}: the inputs' element types differ")
        key_coder = beam.coders.registry.get_coder(key_type).as_deterministic_coder(self.label)
        value_coder = beam.coders.registry.get_coder(value_type)
        return (self.segments(inputs, key_coder, value_coder)
                | "ReadBuckets" >> beam.ParDo(_ReadBucket(key_coder, value_coder)).with_output_types(
                    typehints.Tuple[key_type, typehints.Iterable[value_type]]))


class SpillReshuffle(_SpillTransform):
    """The same elements, materialized in spill files under ``folder`` instead of the runner's
    memory: a step that needs its whole input computed first (a side input made from it)
    reads them back from disk. Element order is not kept (a PCollection has none)."""

    def expand(self, pcoll):
        value_type = pcoll.element_type
        value_coder = beam.coders.registry.get_coder(value_type)
        return (self.segments([pcoll], None, value_coder)
                | "ReadValues" >> beam.ParDo(_ReadValues(value_coder)).with_output_types(value_type))


def grouping(folder: str | None) -> beam.PTransform:
    """``beam.GroupByKey()`` when ``folder`` is None, else :class:`SpillGroupByKey` spilling there."""
    return beam.GroupByKey() if folder is None else SpillGroupByKey(folder)
