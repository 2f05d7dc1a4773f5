"""The LSDSCC corpus job's steps as composite Beam transforms (ALGORITHMS.md section 1).

Each composite is labelled after a step of the paper and is a thin wrapper over pure
functions of the ``lsdscc`` package:

- :class:`Read`: dump files -> kept posts ``(link_id, Post tuple)``, dead letters, counts
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

Writing is :class:`multiref.output.beam_writer.WriteShards`. Rows travel as tuples in
:data:`lsdscc.corpus.threads.SINGLE_FIELDS` / :data:`~lsdscc.corpus.threads.MULTI_FIELDS` order. Every
DoFn counts its drops by reason as data (:class:`multiref.output.beam_writer.CountingDoFn`).
"""

from __future__ import annotations

import json
import operator
import os
from collections import Counter

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindows

from lsdscc.corpus import records, sources, threads
from lsdscc.corpus.records import dead_letter
from lsdscc.corpus.threads import MULTI_FIELDS, SINGLE_FIELDS
from multiref.output.beam_writer import COUNTS, CountingDoFn, SumCounts

NAMESPACE = "lsdscc"
_SINGLE_ROW, _MULTI_ROW = operator.itemgetter(*SINGLE_FIELDS), operator.itemgetter(*MULTI_FIELDS)  # dict -> row tuple
REJECTED = "rejected"


class _Counting(CountingDoFn):
    namespace = NAMESPACE


class ReadPosts(_Counting):
    """A dump file, or an injected ``(source name, line, record)`` -> ``(link_id, post tuple)``;
    malformed records go to the ``rejected`` output."""

    def __init__(self, config):
        self.config = config

    def read_items(self, path):
        """The file's items; lines of other subreddits are skipped before parsing; the
        progress label shows only when progress is on (``--progress``)."""
        return sources.read_items(path, subreddits=tuple(self.config.subreddits),
                                  progress_label=f"reading {os.path.basename(path)}")

    def _normalize(self, path, line, record, offset=None):
        self.count("records-read")
        try:
            result = records.normalize(record, self.config)
        except records.Rejected as exc:
            self.count(f"rejected-{exc.reason}")
            letter = dead_letter(path, line, exc.reason, exc.detail, record, offset)
            yield beam.pvalue.TaggedOutput(REJECTED, letter)
            return
        if isinstance(result, str):
            self.count(f"dropped-{result}")
            return
        self.count("posts-kept-submissions" if result.kind == "t3" else "posts-kept-comments")
        yield (result.link_id, tuple(result))

    def process(self, element):
        if isinstance(element, tuple):
            yield from self._normalize(*element)
            return
        for item in self.read_items(element):
            if item[0] == "ok":  # ("ok", line, record, offset); a reader without offsets is fine too
                yield from self._normalize(element, *item[1:4])
            elif item[0] == "skipped":  # lines of other subreddits, dropped before parsing
                self.count("records-read", item[1])
                self.count("dropped-other-subreddit", item[1])
            else:
                _, line, reason, detail, raw, *offset = item
                offset = offset[0] if offset else None
                self.count(f"rejected-{reason}")
                yield beam.pvalue.TaggedOutput(REJECTED, dead_letter(element, line, reason, detail, raw, offset))


class Read(beam.PTransform):
    """Read: input files (or in-memory records) -> ``{"posts", "rejected", "counts"}``."""

    def __init__(self, config, inputs=(), source=None):
        super().__init__()
        self.config = config
        self.inputs = list(inputs)
        self.source = source

    def expand(self, pbegin):
        if self.source is not None:
            items = [("<memory>", i + 1, r) for i, r in enumerate(self.source)]
            start = pbegin | "InjectRecords" >> beam.Create(items)
        else:
            start = self._files(pbegin) | "SpreadFiles" >> beam.Reshuffle()
        out = start | "ReadAndNormalize" >> beam.ParDo(ReadPosts(self.config)).with_outputs(
            REJECTED, COUNTS, main="posts")
        return {"posts": out.posts, "rejected": out[REJECTED], "counts": out[COUNTS]}

    def _files(self, pbegin):
        """The input files: local ones as resolved before the job; remote paths and globs
        (``gs://...``) matched by the job itself (:func:`lsdscc.corpus.sources.match_remote`), so
        building the graph (``--dry_run``) never lists a bucket."""
        local = [i for i in self.inputs if "://" not in i]
        remote = [i for i in self.inputs if "://" in i]
        if not remote:
            return pbegin | "ListFiles" >> beam.Create(local)
        matched = (pbegin | "ListRemotePatterns" >> beam.Create(remote)
                   | "MatchRemote" >> beam.FlatMap(sources.match_remote)
                   | "DropRepeatedMatches" >> beam.Distinct())
        if not local:
            return matched
        return (matched, pbegin | "ListFiles" >> beam.Create(local)) | "AllFiles" >> beam.Flatten()


class ResolveThread(_Counting):
    """``(link_id, posts)`` -> ``(link_id, the thread as a tree)``; posts on a parent cycle go
    to the ``rejected`` output (:func:`lsdscc.corpus.threads.resolve_thread`)."""

    def process(self, element):
        link_id, posts = element
        resolved, counts, cyclic = threads.resolve_thread(link_id, (records.Post(*p) for p in posts))
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
        # Plain tuples cross the stage boundary: Beam's coder pickles a NamedTuple's type with
        # every element (8x the cost of a plain tuple); _apply_vocabulary makes Nodes again.
        return thread_posts | "CleanAndTokenize" >> beam.MapTuple(
            lambda link_id, posts: (link_id, tuple(map(tuple, threads.clean_thread(posts, config)))))


_TEXT = threads.Node._fields.index("text")


class CountWords(SumCounts):
    """The corpus's token counts from ``(link_id, nodes)`` threads (each post counted once)."""

    def add_input(self, acc, thread):
        for node in thread[1]:
            acc.update(node[_TEXT].split())
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
    return thread[0], threads.apply_vocabulary(map(threads.Node._make, thread[1]), vocabulary)


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
        final = cleaned | "SegmentAndTruncate" >> beam.Map(_apply_vocabulary, beam.pvalue.AsSingleton(vocabulary))
        return {"threads": final, "summary": summary}


class MakePairs(_Counting):
    """``(link_id, final nodes)`` -> ``("single_turn", thread_id, row tuple)``; the pairs' lengths
    before pruning leave on the ``lengths`` output once per bundle."""

    def __init__(self, config):
        self.config = config

    def start_bundle(self):
        super().start_bundle()
        self.query_lengths, self.response_lengths = Counter(), Counter()

    def process(self, element):
        link_id, nodes = element
        for kind, value in threads.thread_pairs(link_id, nodes, self.config):
            if kind == "drop":
                self.count(value)
            elif kind == "lengths":
                self.count("pairs-candidate")
                self.query_lengths[value[0]] += 1
                self.response_lengths[value[1]] += 1
            else:
                yield kind, link_id, _SINGLE_ROW(value)

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
        out = final_threads | "MakePairs" >> beam.ParDo(MakePairs(self.config)).with_outputs(
            "lengths", COUNTS, main="rows")
        lengths = out.lengths | "SumLengths" >> beam.CombineGlobally(SumLengths())
        return {"rows": out.rows, "lengths": lengths, "counts": out[COUNTS]}


class MakeConversations(_Counting):
    def __init__(self, config):
        self.config = config

    def process(self, element):
        link_id, nodes = element
        for kind, value in threads.thread_conversations(link_id, nodes, self.config):
            if kind == "drop":
                self.count(value)
            else:
                self.count("multi-turn-candidate")
                yield kind, link_id, _MULTI_ROW(value)


class Conversations(beam.PTransform):
    """Conversations: threads -> ``{"rows", "counts"}`` (root-to-leaf multi-turn rows)."""

    def __init__(self, config):
        super().__init__()
        self.config = config

    def expand(self, final_threads):
        out = final_threads | "MakeConversations" >> beam.ParDo(MakeConversations(self.config)).with_outputs(
            COUNTS, main="rows")
        return {"rows": out.rows, "counts": out[COUNTS]}


class KeepSmallestId(beam.CombineFn):
    """Of the examples sharing a content key, the one with the smallest id (the rule of
    :func:`lsdscc.corpus.threads.duplicate_losers`), and how many there were."""

    def create_accumulator(self):
        return (None, 0)

    def add_input(self, acc, example):
        best, n = acc
        return (example if best is None or example[2][0] < best[2][0] else best, n + 1)

    def merge_accumulators(self, accs):
        best, n = None, 0
        for b, m in accs:
            if b is not None and (best is None or b[2][0] < best[2][0]):
                best = b
            n += m
        return (best, n)

    def extract_output(self, acc):
        return acc


class DropDuplicates(_Counting):
    def process(self, element):
        _, (best, n) = element
        if n > 1:
            self.count("dropped-duplicate" if best[0] == "single_turn" else "multi-turn-dropped-duplicate", n - 1)
        yield best


class _DedupLane(beam.PTransform):
    def expand(self, examples):
        out = (examples
               | "ContentKey" >> beam.Map(lambda e: (threads.dedup_key(e[0], e[2]), e))
               | "KeepSmallestId" >> beam.CombinePerKey(KeepSmallestId())
               | "DropDuplicates" >> beam.ParDo(DropDuplicates()).with_outputs(COUNTS, main="rows"))
        return {"rows": out.rows, "counts": out[COUNTS]}


def _lanes(examples, make):
    """``make`` applied to one PCollection, or to each lane of ``{config: PCollection}``
    (labelled by config): lanes need no Flatten, which the local runner would
    materialize (one more copy of every row)."""
    if not isinstance(examples, dict):
        return make().expand(examples)
    return {name: lane | name >> make() for name, lane in sorted(examples.items())}


class Dedup(beam.PTransform):
    """Dedup: ``(kind, thread_id, row)`` examples -> ``{"rows": the same without exact
    duplicates, "counts"}``. ``examples``: one PCollection, or ``{config: PCollection}`` (then
    ``rows`` is a dict too: duplicates never cross configs, the content key holds the kind)."""

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

    def expand(self, examples):
        fraction = self.validation_fraction
        return examples | "HashThreadId" >> beam.MapTuple(
            lambda kind, thread_id, row: (kind, threads.split_of(thread_id, fraction), thread_id, row))


class Split(beam.PTransform):
    """Split: ``(kind, thread_id, row)`` -> ``(config, split, shard key, row)`` for the writer;
    the split is a hash of the thread id, which is also the shard key (a query's responses
    share a shard, so ``response_number`` is computed per shard). One PCollection, or
    ``{config: PCollection}`` lane by lane."""

    def __init__(self, validation_fraction: float):
        super().__init__()
        self.validation_fraction = validation_fraction

    def expand(self, examples):
        return _lanes(examples, lambda: _SplitLane(self.validation_fraction))


def finish_shard(config, rows):
    """Writer hook: single-turn rows get their ``response_number`` (and stay sorted by id)."""
    return threads.add_response_numbers(rows) if config == "single_turn" else rows


def summarize_shard(config, rows):
    """Writer hook: queries by response number in a single-turn shard."""
    if config != "single_turn":
        return None
    per_query = {r[2]: r[-1] for r in rows}
    return dict(Counter(per_query.values()))


def rejected_jsonl(letters) -> bytes:
    """The dead-letter file: one JSON object a line, sorted by file, line and reason (the
    thread stage's letters, without a file, first). Anything not UTF-8 is escaped."""
    letters = sorted(letters, key=lambda r: (r["file"] or "", r["line"] or 0, r["reason"], r["detail"]))
    text = "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in letters)
    return text.encode("utf-8", "backslashreplace")
