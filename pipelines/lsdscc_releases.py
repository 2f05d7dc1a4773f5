"""Steps of the LSDSCC corpus job for real releases: time range, schema and file provenance.

- :class:`TimeRange`: keeps the threads whose submission is in ``--since`` / ``--until``
  (the rule and why: :mod:`lsdscc.eras`); every post of another thread counts as
  ``dropped-out-of-range``. Added to the graph only when a bound is given.
- :class:`MergeSchema`: the reader's per-bundle ``(months, fields)`` tallies -> one
  ``{"months", "fields_by_era"}`` (:func:`lsdscc.eras.merge_schema`).
- :func:`sorted_files`: the reader's per-file summaries (:class:`lsdscc.provenance.FileTally`)
  in file-name order.
"""

from __future__ import annotations

import apache_beam as beam

from lsdscc import eras
from multiref.beam_writer import COUNTS, CountingDoFn

NAMESPACE = "lsdscc"


class KeepThreadsInRange(CountingDoFn):
    """``(link_id, posts)`` -> the same when the thread is in range (counts the others' posts)."""

    namespace = NAMESPACE

    def __init__(self, since: int | None, until: int | None):
        self.since, self.until = since, until

    def process(self, element):
        _, posts = element
        when = eras.thread_time(posts)
        if when is not None and eras.in_range(when, self.since, self.until):
            yield element
        else:
            self.count("dropped-out-of-range", len(posts))
            self.count("threads-out-of-range")


class TimeRange(beam.PTransform):
    """TimeRange: resolved threads -> ``{"threads": those in range, "counts"}``."""

    def __init__(self, since: int | None, until: int | None):
        super().__init__()
        self.since, self.until = since, until

    def expand(self, resolved):
        out = resolved | "KeepThreadsInRange" >> beam.ParDo(
            KeepThreadsInRange(self.since, self.until)).with_outputs(COUNTS, main="threads")
        return {"threads": out.threads, "counts": out[COUNTS]}


class MergeSchema(beam.CombineFn):
    """``(months, fields)`` tallies -> ``{"months": {YYYY-MM: n}, "fields_by_era": {era: [..]}}``."""

    def create_accumulator(self):
        return []

    def add_input(self, acc, element):
        acc.append(element)
        return [tuple(eras.merge_schema(acc).values())]

    def merge_accumulators(self, accs):
        return [tuple(eras.merge_schema([part for acc in accs for part in acc]).values())]

    def extract_output(self, acc):
        return eras.merge_schema(acc)


def sorted_files(summaries) -> list:
    """File summaries sorted by name (then digest): the order the card lists them in."""
    return sorted(summaries, key=lambda s: (s["name"], s["sha256"]))
