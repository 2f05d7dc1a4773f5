"""The LSDSCC corpus job's steps as composite Beam transforms (docs/algorithms.md#1-lsdscc-corpus).

Each composite is labelled after a step of the paper and is a thin wrapper over pure
functions of the ``lsdscc`` package:

- :class:`Read`: dump files -> kept posts ``(link_id, Post)``, dead letters, counts
  (:func:`lsdscc.corpus.sources.read_items`, :func:`lsdscc.corpus.records.normalize`);
- :class:`Threads`: ``GroupByKey`` on the link id, one record per fullname
  (:func:`lsdscc.corpus.threads.resolve_thread`);
- :class:`Clean`: steps 1-4 and tokenization, once per post (:func:`lsdscc.corpus.threads.clean_thread`),
  the tokens counted as they are made;
- :class:`Vocabulary`: the corpus's word counts (a combiner), steps 5-6 built from them
  (:func:`lsdscc.corpus.vocab.build_vocabulary`) and applied to every thread as a side input
  (both in :mod:`pipelines.lsdscc.vocabulary`);
- :class:`Pairs` and :class:`Conversations`: single-turn pairs and root-to-leaf
  conversations, pruned by length (step 7), packed per thread (each post's text once:
  :func:`lsdscc.corpus.threads.pack_rows`), with each row's content key;
- :class:`~pipelines.lsdscc.dedup.Dedup`: exact duplicates by content key (a grouping of the
  keys alone; the smallest id wins): per thread, a notice of the ids to drop, for the writer;
- :class:`Split`: train/validation by a hash of the thread id.

Writing is :class:`multiref.beam.writer.WriteShards`, which unpacks each shard's rows and
leaves the duplicates out (:func:`~pipelines.lsdscc.dedup.unpack_shard`). What crosses a shuffle is
bytes (posts, packed rows, content keys): Beam's local runner holds a ``GroupByKey``'s values as
decoded Python objects, and a bytes value costs a fraction of the memory of a NamedTuple of
strings. Given a ``spill`` folder (the job's), the groupings and the cleaned threads that wait for
the vocabulary go through files there instead (:mod:`multiref.beam.spill`; a post as the
same bytes, written by the spill's own coder). Between the other steps threads travel as
NamedTuples (``Thread``) declared with ``with_output_types``, encoded by a registered
deterministic coder (:func:`~multiref.beam.writer.register_row_coder`).
Every DoFn counts its drops by reason as data (:class:`multiref.beam.writer.CountingDoFn`).
"""

from __future__ import annotations

from collections import Counter
from typing import Tuple

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindows

from lsdscc.corpus import sources, threads  # noqa: F401  (sources: the reader of Read, patched by tests)
from lsdscc.corpus.outcomes import Kept
from lsdscc.corpus.outputs import finish_shard, rejected_jsonl, summarize_shard  # noqa: F401 (the graph's file hooks)
from lsdscc.corpus.records import DELETED, Post, dead_letter
from lsdscc.corpus.threads import MultiTurnRow, Node, PairLengths, SingleTurnRow, Thread
from multiref.beam.spill import grouping
from multiref.beam.writer import COUNTS, CountingDoFn, TupleRowCoder, register_row_coder
from pipelines.lsdscc.dedup import Dedup, add_content_key, packed, unpack_shard  # noqa: F401 (the graph's step, its hook)
from pipelines.lsdscc.read import NAMESPACE, REJECTED, Read, ReadPosts  # noqa: F401  (Read: the job's first step)
# Clean and Vocabulary, the steps between Threads and Pairs
from pipelines.lsdscc.vocabulary import Clean, CleanThread, CountWords, SumWords, Vocabulary  # noqa: F401

register_row_coder(Post, Node, Thread, SingleTurnRow, MultiTurnRow)


class _Counting(CountingDoFn):
    namespace = NAMESPACE


_POST = TupleRowCoder(Post)  # a post crosses the runner's GroupByKey as these bytes


def _encode_post(link_id, post):
    return link_id, _POST.encode(post)


class ResolveThread(_Counting):
    """``(link_id, posts)`` -> ``(link_id, the thread as a tree)``; posts on a parent
    cycle go to the ``rejected`` output (:func:`lsdscc.corpus.threads.resolve_thread`).
    ``encoded``: the posts come as the bytes of :func:`_encode_post`."""

    def __init__(self, encoded: bool = True):
        self.encoded = encoded

    def process(self, element):
        link_id, posts = element
        posts = [_POST.decode(p) for p in posts] if self.encoded else list(posts)
        if all(post.kind == DELETED for post in posts):  # only tombstones: no thread (counted as dropped)
            return
        resolved, counts, cyclic = threads.resolve_thread(link_id, posts)
        self.count("threads")
        for name, n in counts.items():
            self.count(name, n)
        for post, detail in cyclic:
            record = {"id": post.id, "parent_id": post.parent_id, "link_id": post.link_id, "body": post.text}
            yield beam.pvalue.TaggedOutput(REJECTED, dead_letter(None, None, "parent-cycle", detail, record))
        yield link_id, resolved


class Threads(beam.PTransform):
    """Threads: posts keyed by link id -> ``{"threads": (link_id, posts sorted by id, a tree),
    "rejected": dead letters of parent cycles, "counts"}``. The posts cross the GroupByKey as
    bytes: the local runner holds a GroupByKey's values as decoded objects, and a bytes value
    is a tenth of the memory of a post's NamedTuple of strings. ``spill``: a folder the job
    owns: the grouping goes through spill files there (:class:`~multiref.beam.spill.SpillGroupByKey`),
    which hold each post as the same bytes (its row coder's) without a step to encode it."""

    def __init__(self, spill: str | None = None):
        super().__init__()
        self.spill = spill

    def expand(self, posts):
        encoded = self.spill is None
        if encoded:
            posts = posts | "EncodePost" >> beam.MapTuple(_encode_post).with_output_types(Tuple[str, bytes])
        out = (posts
               | "GroupByLinkId" >> grouping(self.spill)
               | "ResolveThread" >> beam.ParDo(ResolveThread(encoded)).with_outputs(REJECTED, COUNTS, main="threads"))
        return {"threads": out.threads, "rejected": out[REJECTED], "counts": out[COUNTS]}


class _MakeRows(_Counting):
    """A thread's kept rows of one config leave as one packed value ``(link_id, bytes of
    :func:`lsdscc.corpus.threads.pack_rows`)`` on the main output. Each row's ``(content key,
    id, thread_id)`` is appended to its bucket's buffer (:data:`pipelines.lsdscc.dedup.DEDUP_BUCKETS`); the buffers
    leave on ``keys`` as ``(bucket, bytes)`` when the bundle finishes: a few large values
    instead of one small object per row in the Dedup shuffle."""

    def __init__(self, config):
        self.config = config

    def start_bundle(self):
        super().start_bundle()
        self.keys = {}

    def emit(self, rows):
        if not rows:
            return
        yield packed(rows)
        for row in rows:
            add_content_key(self.keys, row)

    def finish_bundle(self):
        keys, self.keys = self.keys, {}
        for bucket in sorted(keys):
            yield beam.pvalue.TaggedOutput("keys", GlobalWindows.windowed_value((bucket, keys.pop(bucket).get())))
        yield from super().finish_bundle()


class MakePairs(_MakeRows):
    """``(link_id, final nodes)`` -> the thread's :class:`~lsdscc.corpus.threads.SingleTurnRow`
    s, packed (:class:`_MakeRows`); the pairs' lengths before pruning leave on the ``lengths``
    output once per bundle."""

    def start_bundle(self):
        super().start_bundle()
        self.query_lengths, self.response_lengths = Counter(), Counter()

    def process(self, element):
        link_id, nodes = element
        rows = []
        for outcome in threads.thread_pairs(link_id, nodes, self.config):
            if isinstance(outcome, Kept):
                rows.append(outcome.value)
            elif isinstance(outcome, PairLengths):
                self.count("pairs-candidate")
                self.query_lengths[outcome.query] += 1
                self.response_lengths[outcome.response] += 1
            else:
                self.count(outcome.reason)
        yield from self.emit(rows)

    def finish_bundle(self):
        if self.query_lengths:
            lengths = (dict(self.query_lengths), dict(self.response_lengths))
            self.query_lengths, self.response_lengths = Counter(), Counter()
            yield beam.pvalue.TaggedOutput("lengths", GlobalWindows.windowed_value(lengths))
        yield from super().finish_bundle()


class SumLengths(beam.CombineFn):
    """Query and response length histograms -> ``{"query": {len: n}, "response": {len: n}}``."""

    def create_accumulator(self):
        return (Counter(), Counter())

    def add_input(self, acc, element):
        acc[0].update(element[0])
        acc[1].update(element[1])
        return acc

    def merge_accumulators(self, accs):
        out = (Counter(), Counter())
        for a in accs:
            self.add_input(out, a)
        return out

    def extract_output(self, acc):
        return {"query": dict(acc[0]), "response": dict(acc[1])}


class Pairs(beam.PTransform):
    """Pairs: threads -> ``{"rows", "keys", "lengths", "counts"}``: single-turn rows (step 7
    applied), packed per thread, and their content keys (:class:`_MakeRows`)."""

    def __init__(self, config):
        super().__init__()
        self.config = config

    def expand(self, final_threads):
        make = beam.ParDo(MakePairs(self.config)).with_output_types(Tuple[str, bytes])
        out = final_threads | "MakePairs" >> make.with_outputs("keys", "lengths", COUNTS, main="rows")
        lengths = out.lengths | "SumLengths" >> beam.CombineGlobally(SumLengths())
        return {"rows": out.rows, "keys": out["keys"], "lengths": lengths, "counts": out[COUNTS]}


class MakeConversations(_MakeRows):
    """``(link_id, final nodes)`` -> the thread's :class:`~lsdscc.corpus.threads.MultiTurnRow` s,
    packed (:class:`_MakeRows`)."""

    def process(self, element):
        link_id, nodes = element
        rows = []
        for outcome in threads.thread_conversations(link_id, nodes, self.config):
            if isinstance(outcome, Kept):
                self.count("multi-turn-candidate")
                rows.append(outcome.value)
            else:
                self.count(outcome.reason)
        yield from self.emit(rows)


class Conversations(beam.PTransform):
    """Conversations: threads -> ``{"rows", "keys", "counts"}`` (root-to-leaf multi-turn rows,
    packed per thread, and their content keys)."""

    def __init__(self, config):
        super().__init__()
        self.config = config

    def expand(self, final_threads):
        make = beam.ParDo(MakeConversations(self.config)).with_output_types(Tuple[str, bytes])
        out = final_threads | "MakeConversations" >> make.with_outputs("keys", COUNTS, main="rows")
        return {"rows": out.rows, "keys": out["keys"], "counts": out[COUNTS]}


class _SplitLane(beam.PTransform):
    def __init__(self, config: str, validation_fraction: float):
        super().__init__()
        self.config = config
        self.validation_fraction = validation_fraction

    def expand(self, rows):
        config, fraction = self.config, self.validation_fraction
        return rows | "HashThreadId" >> beam.MapTuple(
            lambda thread_id, value: (config, threads.split_of(thread_id, fraction), thread_id, value)
        ).with_output_types(Tuple[str, str, str, bytes])


class Split(beam.PTransform):
    """Split: ``{config: (thread_id, packed rows or notice)}`` -> ``{config: (config, split,
    shard key, value)}`` for the writer; the split is a hash of the thread id, which is also
    the shard key (a query's responses share a shard, so ``response_number`` is computed per
    shard; a thread's notice reaches its rows). A config's lane may be a tuple of
    PCollections (:class:`~pipelines.lsdscc.dedup.Dedup`'s rows and notices): each is split."""

    def __init__(self, validation_fraction: float):
        super().__init__()
        self.validation_fraction = validation_fraction

    def expand(self, examples):
        def split(name, lane):
            if not isinstance(lane, tuple):
                return lane | name >> _SplitLane(name, self.validation_fraction)
            return tuple(part | f"{name}/{i}" >> _SplitLane(name, self.validation_fraction)
                         for i, part in enumerate(lane))

        return {name: split(name, lane) for name, lane in sorted(examples.items())}
