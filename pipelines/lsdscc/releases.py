"""Steps of the LSDSCC corpus job for real releases: time range, schema and file provenance.

- :class:`TimeRange`: keeps the threads whose submission is in ``--since`` / ``--until``
  (the rule and why: :mod:`lsdscc.corpus.eras`); every post of another thread counts as
  ``dropped-out-of-range``. Added to the graph only when a bound is given.
- :class:`SchemaTallying`: the reader's tally of records by month and fields by era.
- :class:`MergeSchema`: the reader's per-bundle ``(months, fields)`` tallies -> one
  ``{"months", "fields_by_era"}`` (:func:`lsdscc.corpus.eras.merge_schema`).
- :func:`sorted_files`: the reader's per-file summaries (:class:`lsdscc.corpus.provenance.FileTally`)
  in file-name order.
"""

from __future__ import annotations

import apache_beam as beam

from lsdscc.corpus import eras
from multiref.beam.writer import COUNTS, CountingDoFn

NAMESPACE = "lsdscc"
FILES, SCHEMA = "files", "schema"  # Read's outputs: per-file provenance; records by month and fields by era


class SchemaTallying(beam.DoFn):
    """Mixed into the reading DoFn: :meth:`tally_schema` counts a record by month and era
    (:class:`lsdscc.corpus.eras.SchemaTally`) and its file's first/last time; the bundle's tally
    leaves on the ``schema`` output when the bundle finishes."""

    def start_bundle(self):
        super().start_bundle()
        self.schema = eras.SchemaTally()

    def tally_schema(self, record: dict, file_tally=None, created=None) -> None:
        """``created``: the record's ``created_utc`` when the caller has it (a kept post's)."""
        if created is None:
            created = eras.record_created(record)
        self.schema.add(eras.unwrapped(record), created)
        if file_tally is not None:
            file_tally.saw(created)

    def finish_bundle(self):
        from apache_beam.transforms.window import GlobalWindows

        if self.schema:
            schema, self.schema = self.schema.as_data(), eras.SchemaTally()
            yield beam.pvalue.TaggedOutput(SCHEMA, GlobalWindows.windowed_value(schema))
        yield from super().finish_bundle() or ()


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
