"""The LSDSCC corpus job's first step, :class:`Read` (docs/algorithms.md section 1): dump files,
or injected records, -> kept posts ``(link_id, Post)``, dead letters, counts, and each input
file's digest and schema tallies (:func:`lsdscc.corpus.sources.read_items`,
:func:`lsdscc.corpus.records.normalize`, :mod:`lsdscc.corpus.provenance`).

With ``parts > 1`` (``--workers``) every file becomes that many :class:`FilePart` elements
behind a Reshuffle, so the runner deals them out to its workers (Beam's local runner gives
its ``n`` workers the shuffled elements in turn: part ``k`` of every file to worker
``k % n``) and the parsing, the costliest step, runs on all of them; the parts' file
summaries are merged by path (:func:`lsdscc.corpus.provenance.merge_summaries`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Tuple

import apache_beam as beam

from lsdscc.corpus import parquet_source, provenance, sources
from lsdscc.corpus.outcomes import Dropped, Kept
from lsdscc.corpus.records import Post, dead_letter, normalize
from multiref.beam.writer import COUNTS, CountingDoFn
from multiref.util.location import is_remote
from pipelines.lsdscc.releases import FILES, SCHEMA, SchemaTallying

NAMESPACE = "lsdscc"
REJECTED = "rejected"


@dataclass(frozen=True)
class FilePart:
    """Part ``part`` of ``parts`` of one input file: what one worker reads of it
    (:func:`lsdscc.corpus.sources.read_items`)."""

    path: str
    part: int = 0
    parts: int = 1


def file_parts(path: str, parts: int) -> list:
    """``path`` as ``parts`` :class:`FilePart` elements, in part order; a local file that is
    not a regular file (a FIFO, ``/dev/fd/N``) can be read only once: one part."""
    if not is_remote(path) and not os.path.isfile(path):
        parts = 1
    return [FilePart(path, k, parts) for k in range(parts)]


#: The GC thresholds the corpus job runs with (``gc.set_threshold``): gen-0 collections every
#: 100,000 allocations instead of Python's 700 (the steps hold many small tuples).
GC_THRESHOLD = (100_000, 50, 1_000)


def tune_gc() -> None:
    """Raise this process's gen-0 GC threshold to :data:`GC_THRESHOLD` unless it is already
    higher: the driver does it for its own run, and a worker process (``--workers``, Beam's
    multi-processing or portable workers) does it here, as it starts reading. Without it
    the collector keeps rescanning the many small tuples the steps hold (at 300,000
    comments on two workers: 42 s of CPU instead of 36 s)."""
    import gc

    if gc.get_threshold()[0] < GC_THRESHOLD[0]:
        gc.set_threshold(*GC_THRESHOLD)


class ReadPosts(SchemaTallying, CountingDoFn):
    """A dump file (a path, or a :class:`FilePart`), or an injected ``(source name, line,
    record)`` -> ``(link_id, Post)``; malformed records go to the ``rejected`` output, and
    each file part's provenance (:meth:`lsdscc.corpus.provenance.FileTally.summary`, keyed by
    the path) to ``files``."""

    namespace = NAMESPACE

    def __init__(self, config, verify=None):
        self.config = config
        self.verify = verify  # --verify-hashes: (hashes, the hashes file's path), see provenance.digest_problem

    def setup(self):
        super().setup()
        tune_gc()

    def read_items(self, path, tap=None, part=0, parts=1):
        """The items of the file's ``part`` of ``parts``; lines of other subreddits are
        skipped before parsing; part 0's progress shows when progress is on
        (``--progress``); ``tap`` sees the stored bytes as they are read
        (:mod:`lsdscc.corpus.provenance`)."""
        if parquet_source.is_parquet(path):  # projection, subreddit and --until pushed into the reader
            return parquet_source.read_items(path, tuple(self.config.subreddits), self.config.until, tap=tap,
                                             part=part, parts=parts)
        label = f"reading {os.path.basename(path)}" if part == 0 else None
        shares = {"part": part, "parts": parts} if parts > 1 else {}  # a whole file: the plain call
        return sources.read_items(path, subreddits=tuple(self.config.subreddits), progress_label=label, tap=tap,
                                  **shares)

    def _normalize(self, path, line, record, offset=None, file_tally=None):
        """One parsed record -> ``(link_id, post)``, a tagged dead letter, or None (dropped);
        counted, except as ``records-read`` (the caller's count). A deleted or removed post
        goes on as its tombstone, ``(link_id, tombstone)``: its thread leaves out every copy."""
        outcome = normalize(record, self.config)
        if type(outcome) is Kept:
            post = outcome.value
            self.tally_schema(record, file_tally, post.created_utc)  # wanted subreddits' records, by month and era
            self.count("posts-kept-comments" if post.kind == "t1" else "posts-kept-submissions")
            return post.link_id, post
        if type(outcome) is Dropped:
            if outcome.reason != "other-subreddit":
                self.tally_schema(record, file_tally)
            self.count(f"dropped-{outcome.reason}")
            return None if outcome.tombstone is None else (outcome.tombstone.link_id, outcome.tombstone)
        self.count(f"rejected-{outcome.reason}")
        return beam.pvalue.TaggedOutput(REJECTED, dead_letter(path, line, outcome.reason, outcome.detail, record, offset))

    def process(self, element):
        if isinstance(element, tuple):
            self.count("records-read")
            out = self._normalize(*element)
            if out is not None:
                yield out
            return
        part = element if isinstance(element, FilePart) else FilePart(element)
        element = part.path
        tally = provenance.FileTally(element)  # digest, size and times, while reading (no second pass)
        tap = tally.tap if part.part == 0 else None  # part 0 hashes the file; the others only count
        parsed = 0  # "ok" items, counted as read once the part is done
        for item in self.read_items(element, tap=tap, part=part.part, parts=part.parts):
            if item[0] == "ok":  # ("ok", line, record, offset)
                parsed += 1
                out = self._normalize(element, *item[1:4], file_tally=tally)
                if out is not None:
                    yield out
                continue
            if item[0] != "rejected" or item[2] not in ("truncated-file", "corrupt-file", "unsupported-compression",
                                                        "bad-parquet-schema"):
                tally.records += item[1] if item[0] == "skipped" else 1
            if item[0] == "skipped":  # lines of other subreddits (or Parquet rows out of range), before parsing
                self.count("records-read", item[1])
                self.count(f"dropped-{item[2] if len(item) > 2 else 'other-subreddit'}", item[1])
            else:
                _, line, reason, detail, raw, *offset = item
                offset = offset[0] if offset else None
                self.count(f"rejected-{reason}")
                yield beam.pvalue.TaggedOutput(REJECTED, dead_letter(element, line, reason, detail, raw, offset))
        tally.records += parsed
        if parsed:
            self.count("records-read", parsed)
        yield beam.pvalue.TaggedOutput(FILES, (element, self._summary(tally, part)))

    def _summary(self, tally, part):
        """The part's file summary: part 0's has the digest (and, with ``--verify-hashes``, the
        ``hash_problem`` of a file whose digest is not the listed one)."""
        if part.part != 0:
            return dict(tally.summary(), bytes=None, sha256=None)
        summary = tally.summary()
        if self.verify is not None:
            problem = provenance.digest_problem(part.path, summary["sha256"], *self.verify)
            if problem is not None:
                summary["hash_problem"] = problem
        return summary


class Read(beam.PTransform):
    """Read: input files (or in-memory records) -> ``{"posts", "rejected", "counts"}``."""

    def __init__(self, config, inputs=(), source=None, parts: int = 1, verify=None):
        super().__init__()
        self.verify = verify
        self.config = config
        self.inputs = list(inputs)
        self.source = source
        self.parts = parts

    def expand(self, pbegin):
        if self.source is not None:
            items = [("<memory>", i + 1, r) for i, r in enumerate(self.source)]
            start = pbegin | "InjectRecords" >> beam.Create(items)
        else:
            parts = self.parts
            start = (self._files(pbegin) | "SplitFiles" >> beam.FlatMap(file_parts, parts)
                     | "SpreadFiles" >> beam.Reshuffle())
        read = beam.ParDo(ReadPosts(self.config, self.verify)).with_output_types(Tuple[str, Post])
        out = start | "ReadAndNormalize" >> read.with_outputs(REJECTED, COUNTS, FILES, SCHEMA, main="posts")
        files = (out[FILES] | "MergeFileParts" >> beam.CombinePerKey(provenance.merge_summaries)
                 | "FileSummaries" >> beam.Values())
        return {"posts": out.posts, "rejected": out[REJECTED], "counts": out[COUNTS],
                "files": files, "schema": out[SCHEMA]}

    def _files(self, pbegin):
        """The input files: local ones as resolved before the job; remote paths and globs
        (``gs://...``) matched by the job itself (:func:`lsdscc.corpus.sources.match_remote`), so
        building the graph (``--dry_run``) never lists a bucket."""
        local = [i for i in self.inputs if not is_remote(i)]
        remote = [i for i in self.inputs if is_remote(i)]
        if not remote:
            return pbegin | "ListFiles" >> beam.Create(local)
        matched = (pbegin | "ListRemotePatterns" >> beam.Create(remote)
                   | "MatchRemote" >> beam.FlatMap(sources.match_remote)
                   | "DropRepeatedMatches" >> beam.Distinct())
        if not local:
            return matched
        return (matched, pbegin | "ListFiles" >> beam.Create(local)) | "AllFiles" >> beam.Flatten()
