"""The LSDSCC corpus job's first step, :class:`Read` (docs/algorithms.md section 1): dump files,
or injected records, -> kept posts ``(link_id, Post)``, dead letters, counts, and each input
file's digest and schema tallies (:func:`lsdscc.corpus.sources.read_items`,
:func:`lsdscc.corpus.records.normalize`, :mod:`lsdscc.corpus.provenance`)."""

from __future__ import annotations

import os
from typing import Tuple

import apache_beam as beam

from lsdscc.corpus import provenance, sources
from lsdscc.corpus.outcomes import Dropped, Kept
from lsdscc.corpus.records import Post, dead_letter, normalize
from multiref.output.beam_writer import COUNTS, CountingDoFn
from pipelines.lsdscc_releases import FILES, SCHEMA, SchemaTallying

NAMESPACE = "lsdscc"
REJECTED = "rejected"


class ReadPosts(SchemaTallying, CountingDoFn):
    """A dump file, or an injected ``(source name, line, record)`` -> ``(link_id, Post)``;
    malformed records go to the ``rejected`` output."""

    namespace = NAMESPACE

    def __init__(self, config):
        self.config = config

    def read_items(self, path, tap=None):
        """The file's items; lines of other subreddits are skipped before parsing; the
        progress label shows only when progress is on (``--progress``); ``tap`` sees the
        stored bytes as they are read (:mod:`lsdscc.corpus.provenance`)."""
        return sources.read_items(path, subreddits=tuple(self.config.subreddits),
                                  progress_label=f"reading {os.path.basename(path)}", tap=tap)

    def _normalize(self, path, line, record, offset=None, file_tally=None):
        self.count("records-read")
        outcome = normalize(record, self.config)
        if isinstance(outcome, Kept) or (isinstance(outcome, Dropped) and outcome.reason != "other-subreddit"):
            self.tally_schema(record, file_tally)  # records of the wanted subreddits, by month and era
        if isinstance(outcome, Kept):
            post = outcome.value
            self.count("posts-kept-submissions" if post.kind == "t3" else "posts-kept-comments")
            yield post.link_id, post
        elif isinstance(outcome, Dropped):
            self.count(f"dropped-{outcome.reason}")
        else:
            self.count(f"rejected-{outcome.reason}")
            letter = dead_letter(path, line, outcome.reason, outcome.detail, record, offset)
            yield beam.pvalue.TaggedOutput(REJECTED, letter)

    def process(self, element):
        if isinstance(element, tuple):
            yield from self._normalize(*element)
            return
        tally = provenance.FileTally(element)  # digest, size and times, while reading (no second pass)
        for item in self.read_items(element, tap=tally.tap):
            if item[0] != "rejected" or item[2] not in ("truncated-file", "corrupt-file"):
                tally.records += item[1] if item[0] == "skipped" else 1
            if item[0] == "ok":  # ("ok", line, record, offset)
                yield from self._normalize(element, *item[1:4], file_tally=tally)
            elif item[0] == "skipped":  # lines of other subreddits, dropped before parsing
                self.count("records-read", item[1])
                self.count("dropped-other-subreddit", item[1])
            else:
                _, line, reason, detail, raw, *offset = item
                offset = offset[0] if offset else None
                self.count(f"rejected-{reason}")
                yield beam.pvalue.TaggedOutput(REJECTED, dead_letter(element, line, reason, detail, raw, offset))
        yield beam.pvalue.TaggedOutput(FILES, tally.summary())


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
        read = beam.ParDo(ReadPosts(self.config)).with_output_types(Tuple[str, Post])
        out = start | "ReadAndNormalize" >> read.with_outputs(REJECTED, COUNTS, FILES, SCHEMA, main="posts")
        return {"posts": out.posts, "rejected": out[REJECTED], "counts": out[COUNTS],
                "files": out[FILES], "schema": out[SCHEMA]}

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
