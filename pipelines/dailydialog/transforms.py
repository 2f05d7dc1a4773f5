"""The DailyDialog job's steps as composite Beam transforms (docs/algorithms.md sections 4 and 5).

Each composite is labelled after a step of the papers and is a thin wrapper over the pure
functions of :mod:`dailydialog_pp.steps`, which return explicit outcomes (rows kept, dead
letters with their reasons, counts):

- :class:`Read`: the three releases (files read by a worker, or injected records) -> parsed
  dialogues, released references keyed by dialogue index, released DD++ contexts keyed by
  context text;
- :class:`References` (section 4): test dialogues joined with their released references
  (``CoGroupByKey`` on the index), cut after each turn;
- :class:`Pairs`: every dialogue of every split cut after each turn into context-response
  pairs (the ``contexts`` config, a corpus for ``multiref augment``);
- :class:`Dedup` (section 5): duplicate dialogues grouped (``GroupByKey``), one kept;
- :class:`Contexts`: dialogues cut into chunks, one context each;
- :class:`Responses`: contexts joined with the released responses (``CoGroupByKey`` on the text);
- :class:`Split`: train/validation/test by a hash of the dialogue id;
- :class:`Negatives`: random negatives from other dialogues (the pool is a side input);
- :class:`Corrupt`: synthetic corruptions of the positives (with ``--corruptions``);
- :class:`Write`: rows -> parquet shards (:class:`multiref.beam.writer.WriteShards`);
- :class:`WriteRejected`: dead letters, one ``rejected/<reason>.jsonl`` per reason;
- :class:`WriteStats`: the counts (summed by :class:`multiref.beam.writer.SumCounts`) and the
  rows per split -> ``stats.json``.

Every step's counts travel as data (:class:`multiref.beam.writer.CountingDoFn`), so
``stats.json`` is the same on every runner; files are written through FileSystems, local or
``gs://``.
"""

from __future__ import annotations

import json

import apache_beam as beam

from dailydialog_pp import steps
from dailydialog_pp.schema import schema
from dailydialog_pp.steps import NS_DDPP, NS_MULTIREF, NS_PARSE, natural_key  # noqa: F401  (re-exported)
from multiref.beam.writer import COUNTS, CountingDoFn, SumCounts, WriteShards, join, write_file

REJECTED = "rejected"


class ApplyStep(CountingDoFn):
    """``fn(element, *side_inputs, *args) -> Outcome`` (:mod:`dailydialog_pp.steps`): kept rows
    on the main output, dead letters on ``rejected``, counts as data on ``counts``."""

    namespace = "dailydialog"

    def __init__(self, fn, *args):
        self.fn = fn
        self.args = args

    def process(self, element, *side_inputs):
        outcome = self.fn(element, *side_inputs, *self.args)
        for name, n in outcome.counts.items():
            self.count(name, n)
        for letter in outcome.rejected:
            yield beam.pvalue.TaggedOutput(REJECTED, letter)
        yield from outcome.rows


def _apply(fn, *args, side_inputs=()):
    """A ParDo of :class:`ApplyStep` with its ``rows``, ``rejected`` and ``counts`` outputs."""
    return beam.ParDo(ApplyStep(fn, *args), *side_inputs).with_outputs(REJECTED, COUNTS, main="rows")


def _result(out, rows=None) -> dict:
    return {"rows": out.rows if rows is None else rows, "rejected": out[REJECTED], "counts": out[COUNTS]}


class Read(beam.PTransform):
    """Read: ``source`` -> ``{"dialogues", "references", "responses", "rejected", "counts"}``.

    ``source``: ``{"dailydialog": ..., "multiref": ... or None, "ddpp": ... or None}``, each a
    loader (called by a worker: the data is not pickled into the job graph) or a list of
    RawLine records (multireftest.json's numbered by position here)."""

    def __init__(self, source: dict):
        super().__init__()
        self.source = source

    def _records(self, pbegin, label: str, value):
        if callable(value):
            return (pbegin | f"Start{label}" >> beam.Create([value])
                    | f"Read{label}" >> beam.FlatMap(lambda load: load()))
        if label == "Multiref":
            value = list(enumerate(value))
        elif label == "Dialogues":
            value = sorted(value, key=lambda r: (r.extra[0], r.extra[1]) if r.extra else (r.path, r.line))
        return pbegin | f"Read{label}" >> beam.Create(value, reshuffle=False)

    def expand(self, pbegin):
        parsed = {}
        for key, label, fn in (("dailydialog", "Dialogues", steps.parse_dialogue_line),
                               ("multiref", "Multiref", steps.parse_multiref_line),
                               ("ddpp", "DDPP", steps.parse_ddpp_line)):
            if self.source.get(key) is not None:
                parsed[key] = self._records(pbegin, label, self.source[key]) | f"Parse{label}" >> _apply(fn)
        empty = {key: pbegin | f"No{label}" >> beam.Create([])
                 for key, label in (("multiref", "Multiref"), ("ddpp", "DDPP")) if key not in parsed}
        return {
            "dialogues": parsed["dailydialog"].rows,
            "references": parsed["multiref"].rows if "multiref" in parsed else empty["multiref"],
            "responses": parsed["ddpp"].rows if "ddpp" in parsed else empty["ddpp"],
            "rejected": tuple(out[REJECTED] for out in parsed.values()) | "Rejected" >> beam.Flatten(),
            "counts": tuple(out[COUNTS] for out in parsed.values()) | "Counts" >> beam.Flatten(),
        }


class References(beam.PTransform):
    """References (section 4): ``{"dialogues", "released"}`` -> multiref rows ready for the
    writer, dead letters, counts. ``options``: the job's BuildOptions; ``have_release``: a
    multireftest.json was given."""

    def __init__(self, options, have_release: bool):
        super().__init__()
        self.options = options
        self.have_release = have_release

    def expand(self, inputs):
        options = self.options
        dialogues = (inputs["dialogues"]
                     | "KeepSplits" >> beam.Filter(steps.in_splits, options.multiref_splits)
                     | "KeyByIndex" >> beam.Map(steps.index_key))
        out = ({"dialogue": dialogues, "released": inputs["released"]}
               | "JoinByIndex" >> beam.CoGroupByKey()
               | "CutAfterEachTurn" >> _apply(steps.join_references, options.text, self.have_release,
                                              options.multiref_first_reference == "released"))
        return _result(out)


class Pairs(beam.PTransform):
    """Pairs: dialogues -> ``contexts`` rows (context, next turn) of every split, counts."""

    def __init__(self, text_options):
        super().__init__()
        self.text_options = text_options

    def expand(self, dialogues):
        return _result(dialogues | "CutAfterEachTurn" >> _apply(steps.dialogue_pairs, self.text_options))


class Dedup(beam.PTransform):
    """Dedup (section 5): dialogues -> the dialogues kept, a dead letter per duplicate."""

    def __init__(self, dedup: bool, near_ratio):
        super().__init__()
        self.dedup = dedup
        self.near_ratio = near_ratio

    def expand(self, dialogues):
        out = (dialogues
               | "DuplicateKey" >> beam.Map(steps.duplicate_block, self.near_ratio)
               | "GroupDuplicates" >> beam.GroupByKey()
               | "KeepOne" >> _apply(steps.dedup_group, self.dedup, self.near_ratio))
        return _result(out)


class Contexts(beam.PTransform):
    """Contexts (section 5): dialogues -> ``(context key, row)`` per chunk."""

    def __init__(self, chunk_options, text_options):
        super().__init__()
        self.chunk_options = chunk_options
        self.text_options = text_options

    def expand(self, dialogues):
        return _result(dialogues | "CutIntoChunks" >> _apply(
            steps.dialogue_contexts, self.chunk_options, self.text_options))


class Responses(beam.PTransform):
    """Responses (section 5): ``{"contexts", "released"}`` -> rows with the released
    positive and adversarial responses where the context text matches."""

    def expand(self, inputs):
        out = ({"context": inputs["contexts"], "released": inputs["released"]}
               | "JoinByContext" >> beam.CoGroupByKey()
               | "AttachResponses" >> _apply(steps.join_responses))
        return _result(out)


class Split(beam.PTransform):
    """Split (section 5): rows -> rows with their split (a hash of the dialogue id)."""

    def __init__(self, split_options):
        super().__init__()
        self.split_options = split_options

    def expand(self, rows):
        return _result(rows | "HashDialogueId" >> _apply(steps.add_split, self.split_options))


class Negatives(beam.PTransform):
    """Negatives (section 5): rows -> rows with random negatives drawn from the other
    dialogues' responses (the pool, built once, is a side input)."""

    def __init__(self, negative_options):
        super().__init__()
        self.negative_options = negative_options

    def expand(self, rows):
        from dailydialog_pp.negatives import build_pool, pool_entries

        pool = (rows
                | "PoolEntries" >> beam.FlatMap(pool_entries, self.negative_options)
                | "Pool" >> beam.combiners.ToList()
                | "SortPool" >> beam.Map(build_pool))
        return _result(rows | "Draw" >> _apply(steps.add_negatives, self.negative_options,
                                               side_inputs=(beam.pvalue.AsSingleton(pool),)))


class Corrupt(beam.PTransform):
    """Corrupt: dailydialog_pp rows -> dailydialog_pp_corrupted rows, one per corruption."""

    def __init__(self, names, seed: int):
        super().__init__()
        self.names = tuple(names)
        self.seed = seed

    def expand(self, rows):
        return _result(rows | "CorruptPositives" >> _apply(steps.corrupt_row, self.names, self.seed))


class Write(beam.PTransform):
    """Write: ``{config: rows}`` -> one parquet file per (config, split), rows sorted by id;
    outputs a :class:`multiref.beam.writer.ShardSummary` per file. ``splits``: every
    ``(config, split)`` to write (an empty one as a valid empty table)."""

    def __init__(self, folder: str, splits):
        super().__init__()
        self.folder = folder
        self.splits = list(splits)

    def expand(self, lanes):
        keyed = {config: rows | f"Key{config}" >> beam.Map(steps.for_writer, config)
                 for config, rows in sorted(lanes.items())}
        schemas = {config: schema(config) for config in lanes}
        return keyed | "Shards" >> WriteShards(self.folder, schemas, self.splits, 1, sort_key=steps.row_sort_key)


class WriteRejected(beam.PTransform):
    """WriteRejected: dead letters -> ``rejected/<reason>.jsonl``, sorted."""

    def __init__(self, folder: str):
        super().__init__()
        self.folder = folder

    def expand(self, letters):
        folder = self.folder
        return (letters
                | "KeyByReason" >> beam.Map(lambda d: (d["reason"], d))
                | "GroupByReason" >> beam.GroupByKey()
                | "WriteReason" >> beam.MapTuple(lambda reason, group: write_file(
                    join(folder, "rejected", f"{reason}.jsonl"), steps.rejected_jsonl(group))))


def stats_json(base: dict, counts: dict, shards) -> bytes:
    """``stats.json``: ``base`` (inputs, options) with the summed counts (``counters``) and
    the rows written per config and split (``configs``, from the writer's shard summaries)."""
    configs: dict = {}
    for shard in shards:
        split_rows = configs.setdefault(shard[0], {})
        split_rows[shard[1]] = split_rows.get(shard[1], 0) + shard[3]
    stats = dict(base, counters=counts, configs=configs)
    return (json.dumps(stats, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


class WriteStats(beam.PTransform):
    """WriteStats: ``{"counts": count dicts, "shards": ShardSummary}`` -> ``stats.json``
    (``base``: the inputs and options it records)."""

    def __init__(self, folder: str, base: dict):
        super().__init__()
        self.folder = folder
        self.base = base

    def expand(self, inputs):
        folder, base = self.folder, self.base
        counts = inputs["counts"] | "SumCounts" >> beam.CombineGlobally(SumCounts())
        return (inputs["counts"].pipeline
                | "StatsTrigger" >> beam.Create([None])
                | "Stats" >> beam.Map(lambda _, c, s: write_file(join(folder, "stats.json"), stats_json(base, c, s)),
                                      beam.pvalue.AsSingleton(counts), beam.pvalue.AsList(inputs["shards"])))
