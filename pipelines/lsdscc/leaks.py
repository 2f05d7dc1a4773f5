"""Leak removal of the LSDSCC test-set stage as a Beam pipeline (docs/algorithms.md#test-set-step-5-no-leakage).

The elements are the row groups of the corpus's parquet files; each DoFn reads its own row
group (``ClassifyLeaks``, then ``DropLeakedConversations`` with the removed pair ids as a
side input), with one counter per reason.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Mapping, Sequence

import apache_beam as beam

from lsdscc.testset import assemble as ts

NAMESPACE = "lsdscc_testset"


def _read_row_group(path: str, row_group: int, columns: Sequence[str]):
    import pyarrow.parquet as pq

    return pq.ParquetFile(path).read_row_group(row_group, columns=list(columns))


class ClassifyLeaksFn(beam.DoFn):
    """(split, file_index, path, row_group) of single_turn -> (split, file_index, row_group,
    [[row_offset, reason], ...] of the removed rows); their pair ids go to output "removed"."""

    def __init__(self, used: Mapping):
        self._used = used
        self._counters = {r: beam.metrics.Metrics.counter(NAMESPACE, f"removed-{r}") for r in ts.LEAK_REASONS}
        self._kept = beam.metrics.Metrics.counter(NAMESPACE, "kept-single_turn")

    def process(self, element):
        split, file_index, path, row_group = element
        part = _read_row_group(path, row_group, ["id", "query_id", "query"])
        reasons = ts.leak_reasons_batch(part.column("id"), part.column("query_id"), part.column("query"), self._used)
        removed = [[i, r] for i, r in enumerate(reasons) if r is not None]
        for _, reason in removed:
            self._counters[reason].inc()
        self._kept.inc(len(reasons) - len(removed))
        yield split, file_index, row_group, removed
        if removed:
            ids = part.column("id")
            yield beam.pvalue.TaggedOutput("removed", [ids[i].as_py() for i, _ in removed])


class ConversationLeaksFn(beam.DoFn):
    """(split, file_index, path, row_group) of multi_turn -> (split, file_index, row_group,
    [row_offset, ...] of the conversations that leak)."""

    def __init__(self, test_query_ids: set):
        self._test_query_ids = test_query_ids
        self._dropped = beam.metrics.Metrics.counter(NAMESPACE, "removed-test_conversation")
        self._kept = beam.metrics.Metrics.counter(NAMESPACE, "kept-multi_turn")

    def process(self, element, removed_lists):
        split, file_index, path, row_group = element
        removed = set()
        for ids in removed_lists:
            removed.update(ids)
        chains = _read_row_group(path, row_group, ["comment_ids"]).column("comment_ids").to_pylist()
        leaking = [i for i, c in enumerate(chains) if ts.conversation_leaks(c, removed, self._test_query_ids)]
        self._dropped.inc(len(leaking))
        self._kept.inc(len(chains) - len(leaking))
        yield split, file_index, row_group, leaking


def _row_groups(files: Mapping) -> list:
    """``(split, file_index, path, row_group)`` work items: small, so the graph stays small."""
    import pyarrow.parquet as pq

    return [(split, i, path, g) for split, paths in sorted(files.items()) for i, path in enumerate(paths)
            for g in range(pq.ParquetFile(path).num_row_groups)]


def _offsets(files: Mapping) -> dict:
    """``{(split, file_index, row_group): first row}`` in the concatenation of a split's files."""
    import pyarrow.parquet as pq

    out = {}
    for split, paths in files.items():
        start = 0
        for i, path in enumerate(paths):
            meta = pq.ParquetFile(path).metadata
            for g in range(meta.num_row_groups):
                out[(split, i, g)] = start
                start += meta.row_group(g).num_rows
    return out


def classify_leaks(single: Mapping, multi: Mapping, used: Mapping, beam_args: Sequence[str] = ()) -> tuple:
    """Run the leak-removal pipeline over parquet files: ``{split: [paths]}`` of single_turn
    and multi_turn. Each DoFn reads its own row group (docs/algorithms.md#test-set-step-5-no-leakage).

    Returns ``(single_reasons, multi_leaks, counters)``: per split, ``{row: reason}`` of the
    removed single-turn rows and the set of leaking conversation rows (row numbers in the
    concatenation of the split's files, in order), and the Beam counters.
    """
    from pipelines.beam.runner import counters, pipeline_options, run_pipeline

    with tempfile.TemporaryDirectory(prefix="lsdscc-testset-") as tmp:
        pipeline = beam.Pipeline(options=pipeline_options(list(beam_args)))
        classified = (
            pipeline
            | "SingleTurnRowGroups" >> beam.Create(_row_groups(single))
            | "ClassifyLeaks" >> beam.ParDo(ClassifyLeaksFn(used)).with_outputs("removed", main="reasons")
        )
        conversations = (
            pipeline
            | "MultiTurnRowGroups" >> beam.Create(_row_groups(multi))
            | "DropLeakedConversations" >> beam.ParDo(
                ConversationLeaksFn(set(used["query_ids"])), beam.pvalue.AsList(classified.removed))
        )
        for label, pcoll in (("single", classified.reasons), ("multi", conversations)):
            (pcoll | f"Json{label}" >> beam.Map(json.dumps)
             | f"Write{label}" >> beam.io.WriteToText(os.path.join(tmp, label), shard_name_template=""))
        result = run_pipeline(pipeline)
        found = {}
        for label, files in (("single", single), ("multi", multi)):
            offsets = _offsets(files)
            marks: dict = {split: {} for split in files}
            with open(os.path.join(tmp, label), encoding="utf-8") as fh:
                for line in fh:
                    split, file_index, row_group, rows = json.loads(line)
                    first = offsets[(split, file_index, row_group)]
                    if label == "single":  # [row offset, reason] of each removed pair
                        marks[split].update((first + offset, reason) for offset, reason in rows)
                    else:  # row offsets of the leaking conversations
                        marks[split].update((first + offset, True) for offset in rows)
            found[label] = marks
        return found["single"], found["multi"], counters(result)
