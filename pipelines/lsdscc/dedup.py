"""The LSDSCC corpus job's exact-duplicate step, :class:`Dedup` (docs/algorithms.md#1-lsdscc-corpus).

Rows are never grouped, only their content keys: :class:`pipelines.lsdscc.transforms.Pairs` and
``Conversations`` append each row's ``(sha1 content key, id, thread_id)`` to one of
:data:`DEDUP_BUCKETS` per-bundle buffers (:func:`add_content_key`) and send a thread's rows as one
packed value (:func:`packed`); :class:`FindDuplicates` keeps the smallest ``(id, thread_id)`` per
key and sends, per thread, one notice of the ids to drop; the writer meets a thread's rows and
its notice in the thread's shard and leaves the duplicates out (:func:`unpack_shard`).
"""

from __future__ import annotations

from typing import Tuple

import apache_beam as beam
from apache_beam.coders import coder_impl
from apache_beam.transforms.window import GlobalWindows

from lsdscc.corpus import threads
from multiref.beam.spill import grouping
from multiref.beam.writer import COUNTS, CountingDoFn
from pipelines.lsdscc.read import NAMESPACE

_PRIMITIVES = beam.coders.FastPrimitivesCoder()  # packed rows and notices: plain tuples
_KEYS = _PRIMITIVES.get_impl()  # content keys, appended to a bucket's buffer


class _Counting(CountingDoFn):
    namespace = NAMESPACE


#: Content keys are grouped in this many buckets (the first 12 bits of the key).
DEDUP_BUCKETS = 4096


def add_content_key(buffers: dict, row) -> None:
    """Append ``(content key, id, thread_id)`` of ``row`` to its bucket's buffer in ``buffers``
    (bucket -> output stream; ``stream.get()``: the bytes :func:`duplicates` reads)."""
    digest = threads.dedup_key(row)
    bucket = digest[0] << 4 | digest[1] >> 4
    stream = buffers.get(bucket)
    if stream is None:
        stream = buffers[bucket] = coder_impl.create_OutputStream()
    _KEYS.encode_to_stream((digest, row.id, row.thread_id), stream, True)


def packed(rows) -> tuple:
    """A thread's rows of one config as :class:`pipelines.lsdscc.transforms.Pairs` sends them: ``(thread_id, bytes)``."""
    return rows[0].thread_id, _PRIMITIVES.encode(threads.pack_rows(rows[0].thread_id, rows))


def _decoded_keys(buffers):
    for data in buffers:
        stream = coder_impl.create_InputStream(data)
        while stream.size() > 0:
            yield _KEYS.decode_from_stream(stream, True)


def duplicates(buffers) -> tuple:
    """A bucket's buffers of ``(content key, id, thread_id)`` (:func:`add_content_key`) ->
    ``(dropped, notices)``: how many rows are duplicates, and ``(thread_id, id)`` of each of
    them. Of the rows sharing a content key the smallest ``(id, thread_id)`` is kept
    (:func:`lsdscc.corpus.threads.smallest_ref`)."""
    groups: dict = {}
    for digest, row_id, thread_id in _decoded_keys(buffers):
        groups.setdefault(digest, []).append((row_id, thread_id))
    dropped, notices = 0, []
    for refs in groups.values():
        if len(refs) > 1:
            kept = threads.smallest_ref(refs)
            dropped += len(refs) - 1
            notices.extend((thread_id, row_id) for row_id, thread_id in refs if (row_id, thread_id) != kept)
    return dropped, sorted(notices)


class FindDuplicates(_Counting):
    """``(bucket, buffers of content keys)`` -> ``(thread_id, encoded (thread_id, ids))``: the
    ids of a thread's rows dropped as exact duplicates, one notice per thread and bundle, for
    the writer (:func:`unpack_shard`)."""

    def __init__(self, counter: str):
        self.counter = counter

    def start_bundle(self):
        super().start_bundle()
        self.notices = {}

    def process(self, element):
        dropped, notices = duplicates(element[1])
        if dropped:
            self.count(self.counter, dropped)
        for thread_id, row_id in notices:
            self.notices.setdefault(thread_id, []).append(row_id)

    def finish_bundle(self):
        notices, self.notices = self.notices, {}
        for thread_id in sorted(notices):
            notice = _PRIMITIVES.encode((thread_id, tuple(sorted(notices.pop(thread_id)))))
            yield GlobalWindows.windowed_value((thread_id, notice))
        yield from super().finish_bundle()


_DUPLICATE_COUNTERS = {"single_turn": "dropped-duplicate", "multi_turn": "multi-turn-dropped-duplicate"}


class _DedupLane(beam.PTransform):
    def __init__(self, counter: str, spill=None):
        super().__init__()
        self.counter = counter
        self.spill = spill

    def expand(self, lane):
        out = (lane["keys"]
               | "GroupByContent" >> grouping(self.spill)
               | "FindDuplicates" >> beam.ParDo(FindDuplicates(self.counter)).with_output_types(
                   Tuple[str, bytes]).with_outputs(COUNTS, main="notices"))
        return {"rows": (lane["rows"], out.notices), "counts": out[COUNTS]}


class Dedup(beam.PTransform):
    """Dedup: ``{config: {"rows": packed rows, "keys": their content keys}}`` (the outputs of
    ``Pairs`` and ``Conversations``) -> ``{"rows": {config: (the packed rows, per thread with
    duplicates a notice of their ids)}, "counts"}``. Only the content keys are grouped (by
    bucket: :data:`DEDUP_BUCKETS`; through spill files in ``spill`` when given:
    :func:`multiref.beam.spill.grouping`), not the rows; a thread's rows meet its notice
    in the writer's shard (:func:`unpack_shard`), where the duplicates are left out. The rows
    and the notices stay two PCollections (a Flatten would be materialized by the local
    runner); the writer groups them together. Duplicates never cross configs."""

    def __init__(self, spill=None):
        super().__init__()
        self.spill = spill

    def expand(self, examples):
        out = {name: {"rows": lane["rows"], "keys": lane["keys"]}
               | name >> _DedupLane(_DUPLICATE_COUNTERS[name], self.spill)
               for name, lane in sorted(examples.items())}
        counts = tuple(lane["counts"] for lane in out.values()) | "Counts" >> beam.Flatten()
        return {"rows": {name: lane["rows"] for name, lane in out.items()}, "counts": counts}


def unpack_shard(config: str, values) -> list:
    """Writer hook: a shard's packed rows (:func:`lsdscc.corpus.threads.pack_rows`, encoded) and
    duplicate notices (:class:`FindDuplicates`) -> its rows without the duplicates."""
    packed, dropped = [], set()
    for value in map(_PRIMITIVES.decode, values):
        if len(value) == 2:  # a notice: (thread_id, ids)
            dropped.update((value[0], row_id) for row_id in value[1])
        else:
            packed.append(value)
    return [row for p in packed for row in threads.unpack_rows(config, p) if (row.thread_id, row.id) not in dropped]
