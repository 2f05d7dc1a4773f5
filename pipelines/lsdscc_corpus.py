"""The LSDSCC corpus pipeline (ALGORITHMS.md section 1) on Apache Beam.

Reddit dump files (Pushshift / Arctic Shift schema; plain, .gz or .zst JSON lines, or a
BigQuery-style JSON array) -> a Hugging Face dataset folder with configs ``single_turn``
and ``multi_turn`` (train + validation), ``rejected/`` dead letters, ``stats.json`` and
plots. The logic is in plain functions of the ``lsdscc`` package; the transforms here only
wrap them, count every drop with a Beam counter named after its reason, and write files.

The build runs as five small Beam pipelines (PHASES) that talk through spill files under
``FOLDER/_work`` (removed at the end), so no phase holds more than one thread bucket in
memory (a bucket = the threads whose id hashes to it; buckets are also the parquet shards):

1. spill: ReadDumps -> Normalize (reject malformed, drop other subreddits, deleted/removed
   bodies, bots) -> append each kept post to its bucket's part files;
2. prepare: per bucket, GroupThreads by link_id -> PrepareThreads (clean steps 1-4 +
   tokenize, once per post) -> CountVocabulary (a combiner) -> BuildVocabulary (steps 5-6);
3. examples: per bucket, MakeExamples (pairs and root-to-leaf conversations, length
   pruning) -> rows + content digests partitioned by digest;
4. dedup: per digest partition, exact duplicates (the smallest id wins);
5. write: per bucket, rows minus duplicates -> sorted rows, response numbers -> one parquet
   shard per (config, split).

``--num-shards auto`` (default) picks one bucket per ``--bucket-mb`` (32) of estimated
uncompressed input (.zst/.gz count 6x), so memory stays flat as the input grows; an explicit
``--num-shards N`` fixes it. The split is a hash of the thread id.

Run locally (the offline FnApiRunner; add ``--direct_num_workers 2
--direct_running_mode multi_processing`` for two processes)::

    python -m pipelines.lsdscc_corpus --input 'dumps/RC_2017-*.zst' --input dumps/RS_2017-01.zst \\
        --output out/lsdscc

or the same through ``multiref lsdscc build``. On Google Cloud Dataflow (input and output
on GCS; workers install this package from setup.py)::

    python -m pipelines.lsdscc_corpus --input 'gs://BUCKET/reddit/R[CS]_2017-*.zst' \\
        --output gs://BUCKET/lsdscc --runner DataflowRunner --project PROJECT \\
        --region us-central1 --temp_location gs://BUCKET/tmp --setup_file ./setup.py
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections import Counter

from lsdscc.config import CorpusConfig

NAMESPACE = "lsdscc"


def build_arg_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The pipeline's own flags (Beam's flags are left to Beam)."""
    d = CorpusConfig()
    p = parser or argparse.ArgumentParser(description=__doc__.splitlines()[0], add_help=True)
    p.add_argument("--input", action="append", default=None, metavar="PATH_OR_GLOB",
                   help="dump file, folder or glob (repeatable); default: the bundled sample")
    p.add_argument("--output", default="out/lsdscc", metavar="FOLDER", help="dataset folder (default: out/lsdscc)")
    p.add_argument("--subreddit", action="append", default=None, metavar="NAME",
                   help="keep this subreddit (repeatable; default: movies)")
    p.add_argument("--vocab-size", type=int, default=d.vocab_size, help=f"kept vocabulary (default {d.vocab_size:,})")
    p.add_argument("--max-query-tokens", type=int, default=d.max_query_tokens,
                   help=f"drop pairs with longer queries (default {d.max_query_tokens})")
    p.add_argument("--max-response-tokens", type=int, default=d.max_response_tokens,
                   help=f"drop pairs with longer responses (default {d.max_response_tokens})")
    p.add_argument("--validation-fraction", type=float, default=d.validation_fraction,
                   help=f"share of threads in validation, by hash of the thread id (default {d.validation_fraction})")
    p.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=d.lowercase,
                   help="lowercase the text, as the public LSDSCC set is (default: yes; --no-lowercase keeps the case)")
    p.add_argument("--tokenizer", choices=("treebank", "nltk"), default=d.tokenizer,
                   help="NLTK tokenizer: TreebankWordTokenizer or NLTKWordTokenizer (default treebank)")
    p.add_argument("--min-turns", type=int, default=d.min_turns, help=f"shortest multi-turn conversation (default {d.min_turns})")
    p.add_argument("--rare-max-count", type=int, default=d.rare_max_count,
                   help=f"tokens seen at most this often may be split into frequent words (default {d.rare_max_count})")
    p.add_argument("--piece-min-count", type=int, default=d.piece_min_count,
                   help=f"each piece of a split must be seen this often (default {d.piece_min_count})")
    p.add_argument("--num-shards", default="auto", metavar="N|auto",
                   help="parquet files per split, which is also the number of thread buckets the build "
                   "works through one at a time (does not change the rows); auto (default): one per "
                   "--bucket-mb of estimated uncompressed input, at least 1, at most 4096")
    p.add_argument("--bucket-mb", type=float, default=DEFAULT_BUCKET_MB, metavar="MB",
                   help=f"with --num-shards auto: uncompressed input per bucket (default {DEFAULT_BUCKET_MB}; "
                   "compressed .zst/.gz files count 6x their size); bounds the build's memory")
    return p


DEFAULT_BUCKET_MB = 32
MAX_AUTO_BUCKETS = 4096
COMPRESSION_RATIO = 6


def _num_shards_arg(value) -> int | None:
    """``--num-shards``: None for ``auto``, else a positive integer (UserError otherwise)."""
    from multiref.errors import UserError

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


def config_from_args(args) -> CorpusConfig:
    from multiref.errors import UserError

    fixed = _num_shards_arg(args.num_shards)
    try:
        return CorpusConfig(
            subreddits=tuple(args.subreddit or ("movies",)),
            lowercase=args.lowercase,
            tokenizer=args.tokenizer,
            vocab_size=args.vocab_size,
            max_query_tokens=args.max_query_tokens,
            max_response_tokens=args.max_response_tokens,
            rare_max_count=args.rare_max_count,
            piece_min_count=args.piece_min_count,
            validation_fraction=args.validation_fraction,
            min_turns=args.min_turns,
            num_shards=fixed or 1,
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None


def estimated_input_bytes(inputs) -> int:
    """Uncompressed size estimate of the input files (.zst/.gz/.bz2/.xz count 6x their size)."""
    total = 0
    remote = [i for i in inputs if "://" in i]
    sizes = {}
    if remote:
        from apache_beam.io.filesystems import FileSystems

        for result in FileSystems.match(remote):
            for m in result.metadata_list:
                sizes[m.path] = m.size_in_bytes
    for path in inputs:
        size = sizes.get(path, 0) if "://" in path else os.path.getsize(path)
        if path.endswith((".zst", ".gz", ".bz2", ".xz")):
            size *= COMPRESSION_RATIO
        total += size
    return total


def resolve_num_shards(value, inputs, bucket_mb: float, source=None) -> int:
    """The number of thread buckets (= parquet shards per split).

    An explicit ``--num-shards N`` wins; ``auto`` gives ceil(estimated input / bucket_mb)
    clamped to [1, 4096] (in-memory records: 1), so a bucket's size stays bounded.
    """
    from multiref.errors import UserError

    fixed = _num_shards_arg(value)
    if fixed is not None:
        return fixed
    if not bucket_mb or bucket_mb <= 0:
        raise UserError(f"--bucket-mb must be positive, got {bucket_mb!r}")
    if source is not None:
        return 1
    estimate = estimated_input_bytes(inputs)
    return max(1, min(MAX_AUTO_BUCKETS, math.ceil(estimate / (bucket_mb * 2**20))))


# ----------------------------------------------------------------------------- transforms
class _Tally:
    """Per-bundle counts, flushed to Beam counters once per bundle (a counter call per
    element costs more than the element's own work in the cheap stages)."""

    def __init__(self):
        self.counts = Counter()

    def __call__(self, name: str, n: int = 1) -> None:
        self.counts[name] += n

    def flush(self) -> None:
        from apache_beam.metrics import Metrics

        for name, n in sorted(self.counts.items()):
            Metrics.counter(NAMESPACE, name).inc(n)
        self.counts.clear()


SINGLE_FIELDS = ("id", "thread_id", "query_id", "response_id", "query", "response", "created_utc")
MULTI_FIELDS = ("id", "thread_id", "comment_ids", "turns", "created_utc")


def _dead_letter(path, line, reason, detail, raw):
    return {"reason": reason, "file": path, "line": line, "detail": detail, "text": raw}


# Spill files under FOLDER/_work: JSON lines, written with orjson when installed; a value
# orjson refuses (a lone surrogate from a "\ud83d" escape in a dump) goes through json, and
# reading falls back the same way, so both give the same values.
def _json_dumps(value) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode("ascii")


try:  # pragma: no cover - depends on the environment
    import orjson as _orjson

    def _encode(value) -> bytes:
        try:
            return _orjson.dumps(value)
        except TypeError:
            return _json_dumps(value)

    def _decode(line):
        try:
            return _orjson.loads(line)
        except ValueError:
            return json.loads(line)
except ImportError:  # pragma: no cover
    _encode = _json_dumps
    _decode = json.loads


def _append(buf: bytearray, value) -> None:
    """Append one JSON line to ``buf`` (a bytearray: orjson's results carry a large
    allocation each, so they are copied into one buffer and dropped at once)."""
    buf += _encode(value)
    buf += b"\n"


def _read_lines(path: str):
    from lsdscc import outputs

    for line in outputs.read_bytes(path).splitlines():
        if line:
            yield _decode(line)


def _work(folder: str, *parts: str) -> str:
    from lsdscc import outputs

    return outputs.join(folder, outputs.WORK, *parts)


def _bucket_dir(kind: str, b: int) -> tuple:
    return (kind, f"b{b:05d}")


def _digest_buckets(num_buckets: int) -> int:
    """Dedup-key partitions: one per 4 thread buckets (key files: threads x digests)."""
    return max(1, math.ceil(num_buckets / 4))


def _make_dofns():
    """DoFn classes, defined on first use so that importing this module stays light.

    Returns a dict: ``ReadAndNormalize`` (records -> posts | rejected) and one DoFn per
    phase (``SpillPosts``, ``PrepareBucket``, ``ExamplesBucket``, ``DedupBucket``,
    ``WriteBucket``).
    """
    import hashlib
    import pickle
    import uuid

    import apache_beam as beam

    from lsdscc import outputs, records, sources, threads

    class Counted(beam.DoFn):
        def start_bundle(self):
            self.count = _Tally()

        def finish_bundle(self):
            self.count.flush()

    class ReadAndNormalize(Counted):
        """A dump file (or an in-memory record) -> (link_id, post tuple) | rejected dicts."""

        def __init__(self, config):
            self.config = config

        def _normalize(self, path, line, record):
            try:
                result = records.normalize(record, self.config)
            except records.Rejected as exc:
                self.count(f"rejected-{exc.reason}")
                yield beam.pvalue.TaggedOutput(
                    "rejected", _dead_letter(path, line, exc.reason, exc.detail, records.redact_record(record))
                )
                return
            if isinstance(result, str):
                self.count(f"dropped-{result}")
                return
            self.count("posts-kept-submissions" if result.kind == "t3" else "posts-kept-comments")
            yield (result.link_id, tuple(result))

        def process(self, element):
            if isinstance(element, tuple):  # injected: (source name, line, record)
                path, line, record = element
                self.count("records-read")
                yield from self._normalize(path, line, record)
                return
            for item in sources.read_items(element):
                if item[0] == "ok":
                    self.count("records-read")
                    yield from self._normalize(element, item[1], item[2])
                else:
                    _, line, reason, detail, raw = item
                    self.count(f"rejected-{reason}")
                    yield beam.pvalue.TaggedOutput(
                        "rejected", _dead_letter(element, line, reason, detail, records.redact(raw))
                    )

    class SpillPosts(ReadAndNormalize):
        """Phase 1: kept posts -> ``_work/posts/b{bucket}/{part}.jsonl`` (bucket = hash of the
        link id); rejected records pass on. Buffers are written every ``flush_bytes`` and at the
        end of each file, with part names derived from the file's path, so a retried file
        overwrites its own parts."""

        def __init__(self, config, folder, flush_bytes=32 * 2**20):
            super().__init__(config)
            self.folder = folder
            self.flush_bytes = flush_bytes

        def start_bundle(self):
            super().start_bundle()
            self.buffers = {}
            self.size = 0
            self.bucket_of = {}
            self.parts = Counter()
            self.prefix = uuid.uuid4().hex  # injected records: a fresh name per bundle

        def _flush(self, prefix):
            if not self.buffers:
                return
            name = f"{prefix}-{self.parts[prefix]:05d}.jsonl"
            for b, lines in sorted(self.buffers.items()):
                outputs.write_bytes(_work(self.folder, *_bucket_dir("posts", b), name), bytes(lines))
            self.parts[prefix] += 1
            self.buffers.clear()
            self.bucket_of.clear()
            self.size = 0

        def process(self, element):
            per_file = not isinstance(element, tuple)
            if per_file:
                self._flush(self.prefix)  # injected records of this bundle, if any
                prefix = hashlib.sha1(element.encode("utf-8")).hexdigest()[:20]
                self.parts[prefix] = 0
            else:
                prefix = self.prefix
            num = self.config.num_shards
            for out in super().process(element):
                if isinstance(out, beam.pvalue.TaggedOutput):
                    yield out
                    continue
                link_id, post = out
                b = self.bucket_of.get(link_id)
                if b is None:
                    b = self.bucket_of[link_id] = threads.shard_of(link_id, num)
                buf = self.buffers.get(b)
                if buf is None:
                    buf = self.buffers[b] = bytearray()
                before = len(buf)
                _append(buf, post)
                self.size += len(buf) - before
                if self.size >= self.flush_bytes:
                    self._flush(prefix)
            if per_file:
                self._flush(prefix)

        def finish_bundle(self):
            self._flush(self.prefix)
            super().finish_bundle()

    class PrepareBucket(Counted):
        """Phase 2: bucket b's posts -> threads (sorted by link id, posts sorted) -> cleaned
        nodes in ``_work/prepared/b{b}.jsonl``; yields the bucket's token counts."""

        def __init__(self, folder, config):
            self.folder = folder
            self.config = config

        def process(self, b):
            by_thread: dict = {}
            for path in outputs.list_files(_work(self.folder, *_bucket_dir("posts", b))):
                for post in _read_lines(path):
                    by_thread.setdefault(post[2], []).append(post)
            token_counts: Counter = Counter()
            out = bytearray()
            for link_id in sorted(by_thread):
                posts = sorted(by_thread.pop(link_id))
                nodes, counts = threads.prepare_thread(link_id, (records.Post(*p) for p in posts), self.config)
                self.count("threads")
                for name, n in counts.items():
                    self.count(name, n)
                for node in nodes:
                    token_counts.update(node.text.split())
                _append(out, [link_id, [tuple(n) for n in nodes]])
            outputs.write_bytes(_work(self.folder, "prepared", f"b{b:05d}.jsonl"), bytes(out))
            yield token_counts

    class ExamplesBucket(Counted):
        """Phase 3: bucket b's threads + the vocabulary -> rows in ``_work/rows/b{b}.jsonl`` and
        dedup keys in ``_work/keys/d{D}/b{b}.jsonl`` (D = digest partition); yields length
        histograms."""

        def __init__(self, folder, config):
            self.folder = folder
            self.config = config

        def setup(self):
            self.vocabulary = pickle.loads(outputs.read_bytes(_work(self.folder, "vocabulary.pickle")))

        def process(self, b):
            config = self.config
            num_d = _digest_buckets(config.num_shards)
            rows, keys = bytearray(), {}
            lengths_q: Counter = Counter()
            lengths_r: Counter = Counter()
            for link_id, nodes in _read_lines(_work(self.folder, "prepared", f"b{b:05d}.jsonl")):
                nodes = tuple(threads.Node(*n) for n in nodes)
                split = threads.split_of(link_id, config.validation_fraction)
                for kind, value in threads.thread_examples(link_id, nodes, self.vocabulary, config):
                    if kind == "drop":
                        self.count(value)
                        continue
                    if kind == "lengths":
                        self.count("pairs-candidate")
                        lengths_q[value[0]] += 1
                        lengths_r[value[1]] += 1
                        continue
                    if kind == "single_turn":
                        row = [value[f] for f in SINGLE_FIELDS]
                    else:
                        self.count("multi-turn-candidate")
                        row = [value[f] for f in MULTI_FIELDS]
                    _append(rows, [kind, split, row])
                    digest = threads.dedup_key(kind, value)
                    d = int.from_bytes(digest[:8], "big") % num_d
                    buf = keys.get(d)
                    if buf is None:
                        buf = keys[d] = bytearray()
                    _append(buf, [digest.hex(), kind, value["id"], b])
            outputs.write_bytes(_work(self.folder, "rows", f"b{b:05d}.jsonl"), bytes(rows))
            del rows
            for d in sorted(keys):
                outputs.write_bytes(_work(self.folder, "keys", f"d{d:05d}", f"b{b:05d}.jsonl"), bytes(keys[d]))
            if lengths_q:
                yield (dict(lengths_q), dict(lengths_r))

    class DedupBucket(Counted):
        """Phase 4: digest partition d -> exact duplicates (every (kind, id) but the smallest
        loses, threads.duplicate_losers) -> ``_work/losers/b{b}/d{d}.jsonl`` per thread bucket."""

        def __init__(self, folder):
            self.folder = folder

        def process(self, d):
            groups: dict = {}
            for path in outputs.list_files(_work(self.folder, "keys", f"d{d:05d}")):
                for digest, kind, row_id, b in _read_lines(path):
                    groups.setdefault(digest, []).append((kind, row_id, b))
            losers: dict = {}
            for entries in groups.values():
                if len(entries) < 2:
                    continue
                entries, lost = threads.duplicate_losers(entries)
                kind = entries[0][0]
                self.count("dropped-duplicate" if kind == "single_turn" else "multi-turn-dropped-duplicate",
                           len(entries) - 1)
                for kind, row_id, b in entries:
                    if (kind, row_id) in lost:
                        losers.setdefault(b, []).append((kind, row_id))
            for b in sorted(losers):
                data = bytearray()
                for x in sorted(set(losers[b])):
                    _append(data, list(x))
                outputs.write_bytes(_work(self.folder, *_bucket_dir("losers", b), f"d{d:05d}.jsonl"), data)
            return []

    class WriteBucket(Counted):
        """Phase 5: bucket b's rows minus duplicates -> parquet shard b of every (config, split)
        that has rows; yields a small summary per file."""

        def __init__(self, folder, config):
            self.folder = folder
            self.config = config

        def process(self, b):
            lost = set()
            for path in outputs.list_files(_work(self.folder, *_bucket_dir("losers", b))):
                lost.update((kind, row_id) for kind, row_id in _read_lines(path))
            groups: dict = {}
            for kind, split, row in _read_lines(_work(self.folder, "rows", f"b{b:05d}.jsonl")):
                groups.setdefault((kind, split), []).append(row)
            for (kind, split) in sorted(groups):
                fields = SINGLE_FIELDS if kind == "single_turn" else MULTI_FIELDS
                rows = [dict(zip(fields, r)) for r in groups.pop((kind, split)) if (kind, r[0]) not in lost]
                if kind == "single_turn":
                    rows = threads.add_response_numbers(rows)
                else:
                    rows.sort(key=lambda r: r["id"])
                name = outputs.shard_name(kind, split, b, self.config.num_shards)
                outputs.write_bytes(outputs.join(self.folder, *name.split("/")), outputs.parquet_bytes(rows, kind))
                self.count(f"kept-{kind.replace('_', '-')}-{split}", len(rows))
                summary = {"config": kind, "split": split, "shard": b, "rows": len(rows)}
                if kind == "single_turn":
                    per_query = {}
                    for r in rows:
                        per_query[r["query_id"]] = r["response_number"]
                    summary["response_numbers"] = dict(Counter(per_query.values()))
                yield summary

    return {
        "ReadAndNormalize": ReadAndNormalize,
        "SpillPosts": SpillPosts,
        "PrepareBucket": PrepareBucket,
        "ExamplesBucket": ExamplesBucket,
        "DedupBucket": DedupBucket,
        "WriteBucket": WriteBucket,
    }


def _make_combiners():
    import apache_beam as beam

    class SumCounters(beam.CombineFn):
        """Sums Counters (the buckets' token counts: the first pass of step 5)."""

        def create_accumulator(self):
            return Counter()

        def add_input(self, acc, element):
            acc.update(element)
            return acc

        def merge_accumulators(self, accs):
            accs = iter(accs)
            out = next(accs)
            for a in accs:
                out.update(a)
            return out

        def extract_output(self, acc):
            return dict(acc)

    class Histograms(beam.CombineFn):
        def create_accumulator(self):
            return (Counter(), Counter())

        def add_input(self, acc, element):
            acc[0].update(element[0])
            acc[1].update(element[1])
            return acc

        def merge_accumulators(self, accs):
            accs = iter(accs)
            out = next(accs)
            for a in accs:
                out[0].update(a[0])
                out[1].update(a[1])
            return out

        def extract_output(self, acc):
            return {"query": dict(acc[0]), "response": dict(acc[1])}

    return SumCounters, Histograms


def _vocabulary(raw_counts, config):
    from lsdscc.vocab import build_vocabulary

    return build_vocabulary(
        raw_counts,
        vocab_size=config.vocab_size,
        rare_max_count=config.rare_max_count,
        piece_min_count=config.piece_min_count,
        min_split_length=config.min_split_length,
        unk_token=config.unk_token,
    )


def _vocab_summary(raw_counts, config, vocab=None):
    from lsdscc.vocab import noise_composition

    vocab = vocab if vocab is not None else _vocabulary(raw_counts, config)
    kept_tokens = sum(c for w, c in vocab.counts.items() if w in vocab.kept)
    all_tokens = sum(vocab.counts.values())
    return {
        "noise": noise_composition(raw_counts, config.long_word_length),
        "split_words": len(vocab.splits),
        "split_examples": dict(sorted(vocab.splits.items(), key=lambda kv: (-raw_counts[kv[0]], kv[0]))[:20]),
        "vocabulary_after_splitting": len(vocab.counts),
        "vocabulary_kept": len(vocab.kept),
        "token_coverage_of_kept_vocabulary": round(kept_tokens / all_tokens, 6) if all_tokens else 0.0,
    }


def _write_json(folder, name):
    def write(value):
        from lsdscc import outputs

        outputs.write_bytes(outputs.join(folder, outputs.WORK, name),
                            json.dumps(value, sort_keys=True, default=str).encode("utf-8"))
        return name

    return write


def _write_vocabulary(folder, config):
    def write(raw_counts):
        import pickle

        from lsdscc import outputs

        vocab = _vocabulary(raw_counts, config)
        outputs.write_bytes(_work(folder, "vocabulary.pickle"), pickle.dumps(vocab, protocol=4))
        _write_json(folder, "vocabulary.json")(_vocab_summary(raw_counts, config, vocab))
        return len(vocab.kept)

    return write


def _write_rejected(folder):
    def write(rows):
        from lsdscc import outputs

        rows = sorted(rows, key=lambda r: (str(r["file"]), r["line"] or 0, r["reason"]))
        data = "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows)
        outputs.write_bytes(outputs.join(folder, "rejected", "rejected.jsonl"), data.encode("utf-8"))
        return len(rows)

    return write


#: The phases of a build, in order: (name, what it does). Each is a small Beam pipeline; they
#: talk through files under FOLDER/_work, so none holds more than one bucket in memory.
PHASES = (
    ("spill", "read, normalize and spill posts to thread buckets"),
    ("prepare", "rebuild threads, clean and tokenize, count the vocabulary"),
    ("examples", "pairs and conversations, length pruning, duplicate keys"),
    ("dedup", "find exact duplicates"),
    ("write", "write the parquet shards"),
)


def build_phase(p, phase: str, folder: str, config: CorpusConfig, inputs=(), source=None):
    """Add phase ``phase``'s transforms (see PHASES) to pipeline ``p``."""
    import apache_beam as beam

    dofns = _make_dofns()
    SumCounters, Histograms = _make_combiners()
    buckets = list(range(config.num_shards))

    def over(items, label):
        return p | f"{label}Buckets" >> beam.Create(items) | f"Spread{label}" >> beam.Reshuffle()

    if phase == "spill":
        if source is not None:
            start = p | "InjectRecords" >> beam.Create([("<memory>", i + 1, r) for i, r in enumerate(source)])
        else:
            start = p | "ListFiles" >> beam.Create(list(inputs)) | "SpreadFiles" >> beam.Reshuffle()
        spilled = start | "ReadNormalizeSpill" >> beam.ParDo(dofns["SpillPosts"](config, folder)).with_outputs(
            "rejected", main="posts")
        (
            spilled.rejected
            | "RejectedToList" >> beam.combiners.ToList()
            | "WriteRejected" >> beam.Map(_write_rejected(folder))
        )
    elif phase == "prepare":
        (
            over(buckets, "Prepare")
            | "PrepareThreads" >> beam.ParDo(dofns["PrepareBucket"](folder, config))
            | "CountVocabulary" >> beam.CombineGlobally(SumCounters())
            | "BuildVocabulary" >> beam.Map(_write_vocabulary(folder, config))
        )
    elif phase == "examples":
        (
            over(buckets, "Examples")
            | "MakeExamples" >> beam.ParDo(dofns["ExamplesBucket"](folder, config))
            | "LengthHistograms" >> beam.CombineGlobally(Histograms())
            | "WriteLengthStats" >> beam.Map(_write_json(folder, "lengths.json"))
        )
    elif phase == "dedup":
        _ = over(list(range(_digest_buckets(config.num_shards))), "Dedup") | "FindDuplicates" >> beam.ParDo(
            dofns["DedupBucket"](folder))
    elif phase == "write":
        (
            over(buckets, "Write")
            | "WriteShards" >> beam.ParDo(dofns["WriteBucket"](folder, config))
            | "ShardSummaries" >> beam.combiners.ToList()
            | "WriteShardStats" >> beam.Map(lambda rows: _write_json(folder, "shards.json")(
                sorted(rows, key=lambda r: (r["config"], r["split"], r["shard"]))))
        )
    else:
        raise ValueError(f"unknown phase {phase!r}")
    return p


def _run_with_gc_tuned(p):
    """Run and wait with a higher gen-0 GC threshold, restored afterwards.

    The phases hold a bucket's posts, threads or rows as many small objects; at Python's
    default threshold (700 allocations) the cyclic collector keeps rescanning them. Nothing
    here makes reference cycles that rely on prompt collection.
    """
    import gc

    old = gc.get_threshold()
    gc.set_threshold(100_000, 50, 1_000)
    try:
        result = p.run()
        result.wait_until_finish()
    finally:
        gc.set_threshold(*old)
    return result


def _log(message: str, quiet: bool) -> None:
    if not quiet:
        print(f"[lsdscc] {message}", file=sys.stderr, flush=True)


def run(argv=None, *, source=None, quiet: bool = False) -> dict:
    """Build the corpus. ``argv``: our flags plus any Beam flags; ``source``: in-memory records.

    Runs the PHASES one after another (each a Beam pipeline with the same options) and sums
    their counters. Returns a summary: ``{"output", "counts", "splits", "stats"}``. Raises
    UserError for a missing input, an empty glob, a bad option or an unwritable output folder.
    """
    args, beam_args = build_arg_parser().parse_known_args(argv)
    return run_parsed(args, beam_args, source=source, quiet=quiet)


def run_parsed(args, beam_args, *, source=None, quiet: bool = False) -> dict:
    """:func:`run` for flags already parsed by :func:`build_arg_parser` (the ``multiref`` CLI)."""
    import dataclasses
    import logging

    import apache_beam as beam

    from lsdscc import outputs, sources
    from multiref.beam_utils import counters, is_local, pipeline_options

    logging.getLogger("apache_beam").setLevel(logging.WARNING)
    beam_args = list(beam_args)
    config = config_from_args(args)
    folder = args.output
    inputs = [] if source is not None else sources.resolve_inputs(args.input or sources.default_inputs())
    config = dataclasses.replace(config, num_shards=resolve_num_shards(args.num_shards, inputs, args.bucket_mb, source))
    outputs.prepare_folder(folder)
    if not is_local(beam_args) and not outputs.is_remote(folder):
        from multiref.errors import UserError

        raise UserError(f"a remote runner needs a remote --output (e.g. gs://BUCKET/lsdscc), got {folder}")
    options = pipeline_options(beam_args)
    from apache_beam.options.pipeline_options import TestOptions

    dry_run = bool(options.view_as(TestOptions).dry_run)
    _log(f"{len(inputs) or 'in-memory'} input file(s), subreddits {list(config.subreddits)}, output {folder}, "
         f"{config.num_shards} thread bucket(s)", quiet)
    _log(f"running the Beam pipeline in {len(PHASES)} phases: " + ", ".join(n for n, _ in PHASES), quiet)
    started = time.time()
    counts: Counter = Counter()
    for i, (phase, what) in enumerate(PHASES, 1):
        t0 = time.time()
        p = beam.Pipeline(options=options)
        build_phase(p, phase, folder, config, inputs, source)
        result = _run_with_gc_tuned(p)
        if dry_run:  # the job graph of the first phase was built; nothing ran
            return {"output": folder, "dry_run": True, "counts": {}, "splits": {}}
        for k, v in counters(result).items():
            if k.startswith(NAMESPACE + "/"):
                counts[k.split("/", 1)[1]] += v
        _log(f"phase {i}/{len(PHASES)} {phase} ({what}): {time.time() - t0:.1f}s", quiet)
    counts = dict(counts)
    _log(f"pipeline done in {time.time() - started:.1f}s; writing stats, plots and the dataset card", quiet)
    summary = finalize(folder, config, counts, [os.path.basename(i) for i in inputs])
    return summary


def finalize(folder: str, config: CorpusConfig, counts: dict, input_names) -> dict:
    """Stats, plots, empty shards for empty splits, dataset card; removes ``_work``."""
    from lsdscc import outputs

    def load(name, default):
        path = outputs.join(folder, outputs.WORK, name)
        try:
            return json.loads(outputs.read_bytes(path))
        except (FileNotFoundError, OSError):
            return default

    shards = load("shards.json", [])
    vocab = load("vocabulary.json", {"noise": {"vocabulary_types": 0, "vocabulary_tokens": 0}})
    lengths = load("lengths.json", {"query": {}, "response": {}})
    splits = {c: {s: 0 for s in outputs.SPLITS} for c in outputs.CONFIGS}
    present = set()
    rpq: Counter = Counter()
    for s in shards:
        splits[s["config"]][s["split"]] += s["rows"]
        present.add((s["config"], s["split"], s["shard"]))
        for k, v in s.get("response_numbers", {}).items():
            rpq[int(k)] += v
    for c in outputs.CONFIGS:
        for s in outputs.SPLITS:
            if s == "validation" and config.validation_fraction == 0:
                continue
            for i in range(config.num_shards):
                if (c, s, i) not in present:  # an empty shard keeps the split loadable
                    path = outputs.join(folder, *outputs.shard_name(c, s, i, config.num_shards).split("/"))
                    outputs.write_bytes(path, outputs.parquet_bytes([], c))
    if not any(k.startswith("rejected-") for k in counts):
        outputs.write_bytes(outputs.join(folder, "rejected", "rejected.jsonl"), b"")
    noise = dict(vocab.get("noise", {}))
    for key in ("over_long", "non_ascii"):
        for suffix in ("types", "tokens", "type_share", "token_share"):
            noise.setdefault(f"{key}_{suffix}", 0)
    q_hist, r_hist = lengths.get("query", {}), lengths.get("response", {})
    stages = outputs.survival(counts)
    stats = {
        "options": config.as_options(),
        "inputs": list(input_names),
        "counts": dict(sorted(counts.items())),
        "splits": splits,
        "vocabulary_noise": noise,
        "vocabulary": {k: v for k, v in vocab.items() if k != "noise"},
        "lengths": {
            "query_histogram": {str(k): v for k, v in sorted(q_hist.items(), key=lambda kv: int(kv[0]))},
            "response_histogram": {str(k): v for k, v in sorted(r_hist.items(), key=lambda kv: int(kv[0]))},
            "query_coverage_at_limit": outputs.coverage(q_hist, config.max_query_tokens),
            "response_coverage_at_limit": outputs.coverage(r_hist, config.max_response_tokens),
        },
        "responses_per_query": {
            "histogram": {str(k): v for k, v in sorted(rpq.items())},
            "queries": sum(rpq.values()),
            "strata": {
                "lt3": sum(v for k, v in rpq.items() if k < 3),
                "3to5": sum(v for k, v in rpq.items() if 3 <= k <= 5),
                "gt5": sum(v for k, v in rpq.items() if k > 5),
            },
        },
        "survival": [{"stage": s, "remaining": n} for s, n in stages],
    }
    outputs.write_bytes(outputs.join(folder, "stats.json"),
                        (json.dumps(stats, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    outputs.plot_all(folder, stats)
    _write_cards(folder, config, counts, splits, stats)
    if not outputs.is_remote(folder):
        import shutil

        shutil.rmtree(os.path.join(folder, outputs.WORK), ignore_errors=True)
    return {"output": folder, "counts": counts, "splits": splits, "stats": stats}


def _write_cards(folder, config, counts, splits, stats):
    from lsdscc import outputs
    from multiref import hfdata

    local = folder
    if outputs.is_remote(folder):
        import tempfile

        local = tempfile.mkdtemp(prefix="lsdscc-card-")
    options = config.as_options()
    shared = {k: v for k, v in counts.items() if not k.startswith(("kept-", "multi-turn"))}
    descriptions = {
        "single_turn": "Single-turn (query, response) pairs: query = the parent post (a submission's title and "
        "body for top-level comments), response = the reply; cleaned, tokenized, lowercased text "
        "(ALGORITHMS.md section 1). `response_number` = responses of the query in the corpus.",
        "multi_turn": f"Root-to-leaf conversations of at least {config.min_turns} turns: the submission, then "
        "each comment down to a leaf; cleaned like `single_turn`.",
    }
    sections = {
        "Statistics": "\n".join(
            [
                f"- raw vocabulary: {stats['vocabulary_noise'].get('vocabulary_types', 0):,} words; over-long "
                f"(> {config.long_word_length} chars): {stats['vocabulary_noise'].get('over_long_types', 0):,}; "
                f"non-ASCII: {stats['vocabulary_noise'].get('non_ascii_types', 0):,}",
                f"- words split into frequent words: {stats['vocabulary'].get('split_words', 0):,}; vocabulary after "
                f"splitting: {stats['vocabulary'].get('vocabulary_after_splitting', 0):,}; kept: "
                f"{stats['vocabulary'].get('vocabulary_kept', 0):,}",
                f"- length coverage before pruning: queries <= {config.max_query_tokens} tokens "
                f"{100 * stats['lengths']['query_coverage_at_limit']:.2f}%, responses <= {config.max_response_tokens} "
                f"{100 * stats['lengths']['response_coverage_at_limit']:.2f}%",
                f"- queries by response number: {stats['responses_per_query']['strata']}",
                "- plots: `plots/*.png`; full numbers: `stats.json`; rejected records: `rejected/rejected.jsonl`",
            ]
        ),
        "Privacy": "No usernames are kept (authors are read only to drop bots); deleted and removed posts are "
        "dropped. Provenance: thread id, comment ids and creation times.",
    }
    for name in outputs.CONFIGS:
        split_rows = {s: n for s, n in splits[name].items() if not (s == "validation" and config.validation_fraction == 0)}
        own = {k: v for k, v in counts.items() if k.startswith(("kept-" + name.replace("_", "-"), "multi-turn" if name == "multi_turn" else "~"))}
        info = hfdata.ConfigInfo(
            name=name,
            description=descriptions[name],
            splits=split_rows,
            features=outputs.schema(name),
            options=options,
            counts=dict(sorted({**shared, **own}.items())),
        )
        hfdata.add_config(
            local, info, title="LSDSCC: r/movies conversations",
            summary="A large-scale domain-specific conversational corpus built from r/movies threads "
            "(Xu et al. 2018), rebuilt with multiref-dialog.",
            sections=sections,
        )
    if local != folder:
        for name in ("README.md", hfdata.META_FILE):
            with open(os.path.join(local, name), "rb") as fh:
                outputs.write_bytes(outputs.join(folder, name), fh.read())


def main(argv=None) -> int:
    from multiref.errors import UserError

    try:
        summary = run(argv)
    except UserError as exc:
        print(f"lsdscc_corpus: error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(summary.get("splits", {}), sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
