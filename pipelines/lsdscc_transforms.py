"""The LSDSCC corpus job's steps as composite Beam transforms (docs/algorithms.md#1-lsdscc-corpus).

Each composite is labelled after a step of the paper and is a thin wrapper over pure
functions of the ``lsdscc`` package:

- :class:`Read`: dump files -> kept posts ``(link_id, Post)``, dead letters, counts
  (:func:`lsdscc.corpus.sources.read_items`, :func:`lsdscc.corpus.records.normalize`);
- :class:`Threads`: ``GroupByKey`` on the link id, one record per fullname
  (:func:`lsdscc.corpus.threads.resolve_thread`);
- :class:`Clean`: steps 1-4 and tokenization, once per post (:func:`lsdscc.corpus.threads.clean_thread`);
- :class:`Vocabulary`: the corpus's word counts (a combiner), steps 5-6 built from them
  (:func:`lsdscc.corpus.vocab.build_vocabulary`) and applied to every thread as a side input;
- :class:`Pairs` and :class:`Conversations`: single-turn pairs and root-to-leaf
  conversations, pruned by length (step 7);
- :class:`Dedup`: exact duplicates by content key (``CombinePerKey``; the smallest id wins);
- :class:`Split`: train/validation by a hash of the thread id.

Writing is :class:`multiref.output.beam_writer.WriteShards`. Posts, threads and rows travel as
NamedTuples (``Post``, ``Thread``, ``SingleTurnRow``, ``MultiTurnRow``) declared with
``with_output_types``, encoded by a registered deterministic coder (:func:`~multiref.output.beam_writer.register_row_coder`).
Every DoFn counts its drops by reason as data (:class:`multiref.output.beam_writer.CountingDoFn`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Tuple

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindows

from lsdscc.corpus import sources, threads  # noqa: F401  (sources: the reader of Read, patched by tests)
from lsdscc.corpus.outcomes import Kept
from lsdscc.corpus.outputs import finish_shard, rejected_jsonl, summarize_shard  # noqa: F401 (the graph's file hooks)
from lsdscc.corpus.records import Post, dead_letter
from lsdscc.corpus.threads import MultiTurnRow, Node, PairLengths, SingleTurnRow, Thread
from multiref.output.beam_writer import COUNTS, CountingDoFn, SumCounts, register_row_coder
from pipelines.lsdscc_read import NAMESPACE, REJECTED, Read, ReadPosts  # noqa: F401  (Read: the job's first step)

register_row_coder(Post, Node, Thread, SingleTurnRow, MultiTurnRow)


class _Counting(CountingDoFn):
    namespace = NAMESPACE


class ResolveThread(_Counting):
    """``(link_id, posts)`` -> ``(link_id, the thread as a tree)``; posts on a parent cycle go
    to the ``rejected`` output (:func:`lsdscc.corpus.threads.resolve_thread`)."""

    def process(self, element):
        link_id, posts = element
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
    "rejected": dead letters of parent cycles, "counts"}``."""

    def expand(self, posts):
        out = (posts
               | "GroupByLinkId" >> beam.GroupByKey()
               | "ResolveThread" >> beam.ParDo(ResolveThread()).with_outputs(REJECTED, COUNTS, main="threads"))
        return {"threads": out.threads, "rejected": out[REJECTED], "counts": out[COUNTS]}


class Clean(beam.PTransform):
    """Clean: ``(link_id, posts)`` -> ``(link_id, nodes)``, each text cleaned and tokenized once."""

    def __init__(self, config):
        super().__init__()
        self.config = config

    def expand(self, thread_posts):
        config = self.config
        return thread_posts | "CleanAndTokenize" >> beam.MapTuple(
            lambda link_id, posts: Thread(link_id, threads.clean_thread(posts, config))).with_output_types(Thread)


class CountWords(SumCounts):
    """The corpus's token counts from ``(link_id, nodes)`` threads (each post counted once)."""

    def add_input(self, acc, thread):
        for node in thread.nodes:
            acc.update(node.text.split())
        return acc

    def extract_output(self, acc):
        return dict(acc)


def _build_vocabulary(raw_counts, config):
    from lsdscc.corpus.vocab import build_vocabulary

    return build_vocabulary(raw_counts, vocab_size=config.vocab_size, rare_max_count=config.rare_max_count,
                            piece_min_count=config.piece_min_count, min_split_length=config.min_split_length,
                            unk_token=config.unk_token)


def _summarize_vocabulary(raw_counts, config):
    from lsdscc.corpus.vocab import vocabulary_summary

    return vocabulary_summary(raw_counts, _build_vocabulary(raw_counts, config), config.long_word_length)


def _apply_vocabulary(thread, vocabulary):
    return Thread(thread.link_id, threads.apply_vocabulary(thread.nodes, vocabulary))


class Vocabulary(beam.PTransform):
    """Vocabulary: count every token (a combiner), build steps 5-6 from the counts, and apply
    them (slang segmentation, non-ASCII removal, truncation) to every thread through a side
    input. -> ``{"threads": (link_id, final nodes), "summary": stats of the vocabulary}``."""

    def __init__(self, config):
        super().__init__()
        self.config = config

    def expand(self, cleaned):
        config = self.config
        raw = cleaned | "CountWords" >> beam.CombineGlobally(CountWords())
        vocabulary = raw | "BuildVocabulary" >> beam.Map(_build_vocabulary, config)
        summary = raw | "SummarizeVocabulary" >> beam.Map(_summarize_vocabulary, config)
        final = cleaned | "SegmentAndTruncate" >> beam.Map(
            _apply_vocabulary, beam.pvalue.AsSingleton(vocabulary)).with_output_types(Thread)
        return {"threads": final, "summary": summary}


class MakePairs(_Counting):
    """``(link_id, final nodes)`` -> :class:`~lsdscc.corpus.threads.SingleTurnRow`; the pairs'
    lengths before pruning leave on the ``lengths`` output once per bundle."""

    def __init__(self, config):
        self.config = config

    def start_bundle(self):
        super().start_bundle()
        self.query_lengths, self.response_lengths = Counter(), Counter()

    def process(self, element):
        link_id, nodes = element
        for outcome in threads.thread_pairs(link_id, nodes, self.config):
            if isinstance(outcome, Kept):
                yield outcome.value
            elif isinstance(outcome, PairLengths):
                self.count("pairs-candidate")
                self.query_lengths[outcome.query] += 1
                self.response_lengths[outcome.response] += 1
            else:
                self.count(outcome.reason)

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
    """Pairs: threads -> ``{"rows", "lengths", "counts"}`` (single-turn rows, step 7 applied)."""

    def __init__(self, config):
        super().__init__()
        self.config = config

    def expand(self, final_threads):
        make = beam.ParDo(MakePairs(self.config)).with_output_types(SingleTurnRow)
        out = final_threads | "MakePairs" >> make.with_outputs("lengths", COUNTS, main="rows")
        lengths = out.lengths | "SumLengths" >> beam.CombineGlobally(SumLengths())
        return {"rows": out.rows, "lengths": lengths, "counts": out[COUNTS]}


class MakeConversations(_Counting):
    """``(link_id, final nodes)`` -> :class:`~lsdscc.corpus.threads.MultiTurnRow`."""

    def __init__(self, config):
        self.config = config

    def process(self, element):
        link_id, nodes = element
        for outcome in threads.thread_conversations(link_id, nodes, self.config):
            if isinstance(outcome, Kept):
                self.count("multi-turn-candidate")
                yield outcome.value
            else:
                self.count(outcome.reason)


class Conversations(beam.PTransform):
    """Conversations: threads -> ``{"rows", "counts"}`` (root-to-leaf multi-turn rows)."""

    def __init__(self, config):
        super().__init__()
        self.config = config

    def expand(self, final_threads):
        make = beam.ParDo(MakeConversations(self.config)).with_output_types(MultiTurnRow)
        out = final_threads | "MakeConversations" >> make.with_outputs(COUNTS, main="rows")
        return {"rows": out.rows, "counts": out[COUNTS]}


class KeepSmallestId(beam.CombineFn):
    """Of the rows sharing a content key, the one :func:`lsdscc.corpus.threads.smallest_id`
    keeps, and how many there were. ``row_type``: the rows' NamedTuple, for the
    accumulator's coder (None: Beam's default)."""

    def __init__(self, row_type=None):
        self.row_type = row_type

    def create_accumulator(self):
        return (None, 0)

    def add_input(self, acc, row):
        return (threads.smallest_id(acc[0], row), acc[1] + 1)

    def merge_accumulators(self, accs):
        best, n = None, 0
        for b, m in accs:
            best, n = threads.smallest_id(best, b), n + m
        return (best, n)

    def extract_output(self, acc):
        return acc

    def get_accumulator_coder(self):
        if self.row_type is None:
            return super().get_accumulator_coder()
        row = beam.coders.NullableCoder(beam.coders.registry.get_coder(self.row_type))
        return beam.coders.TupleCoder([row, beam.coders.VarIntCoder()])


class DropDuplicates(_Counting):
    """``(content key, (kept row, rows with that key))`` -> the kept row; the others count as
    duplicates."""

    def process(self, element):
        _, (best, n) = element
        if n > 1:
            self.count("dropped-duplicate" if best.config == "single_turn" else "multi-turn-dropped-duplicate", n - 1)
        yield best


def _keyed(row):
    return threads.dedup_key(row), row


class _DedupLane(beam.PTransform):
    def expand(self, rows):
        row_type = _row_type(rows)
        out = (rows
               | "ContentKey" >> beam.Map(_keyed).with_output_types(Tuple[bytes, row_type])
               | "KeepSmallestId" >> beam.CombinePerKey(KeepSmallestId(None if row_type is Any else row_type))
               | "DropDuplicates" >> beam.ParDo(DropDuplicates()).with_output_types(row_type).with_outputs(
                   COUNTS, main="rows"))
        return {"rows": out.rows, "counts": out[COUNTS]}


def _row_type(rows):
    """The NamedTuple type of a PCollection of rows, or ``Any`` when it is not declared."""
    hint = rows.element_type
    return hint if isinstance(hint, type) and issubclass(hint, tuple) else Any


def _lanes(examples, make):
    """``make`` applied to one PCollection, or to each lane of ``{config: PCollection}``
    (labelled by config): lanes need no Flatten, which the local runner would
    materialize (one more copy of every row)."""
    if not isinstance(examples, dict):
        return make().expand(examples)
    return {name: lane | name >> make() for name, lane in sorted(examples.items())}


class Dedup(beam.PTransform):
    """Dedup: rows (:class:`~lsdscc.corpus.threads.SingleTurnRow`, :class:`~lsdscc.corpus.threads.MultiTurnRow`)
    -> ``{"rows": the same without exact duplicates, "counts"}``. ``examples``: one PCollection,
    or ``{config: PCollection}`` (then ``rows`` is a dict too: duplicates never cross configs,
    the content key holds the config)."""

    def expand(self, examples):
        out = _lanes(examples, _DedupLane)
        if not isinstance(examples, dict):
            return out
        counts = tuple(lane["counts"] for lane in out.values()) | "Counts" >> beam.Flatten()
        return {"rows": {name: lane["rows"] for name, lane in out.items()}, "counts": counts}


class _SplitLane(beam.PTransform):
    def __init__(self, validation_fraction: float):
        super().__init__()
        self.validation_fraction = validation_fraction

    def expand(self, rows):
        fraction = self.validation_fraction
        return rows | "HashThreadId" >> beam.Map(
            lambda row: (row.config, threads.split_of(row.thread_id, fraction), row.thread_id, row)
        ).with_output_types(Tuple[str, str, str, _row_type(rows)])


class Split(beam.PTransform):
    """Split: rows -> ``(config, split, shard key, row)`` for the writer;
    the split is a hash of the thread id, which is also the shard key (a query's responses
    share a shard, so ``response_number`` is computed per shard). One PCollection, or
    ``{config: PCollection}`` lane by lane."""

    def __init__(self, validation_fraction: float):
        super().__init__()
        self.validation_fraction = validation_fraction

    def expand(self, examples):
        return _lanes(examples, lambda: _SplitLane(self.validation_fraction))
