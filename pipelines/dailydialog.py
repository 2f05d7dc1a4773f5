"""Build the multi-reference DailyDialog and DailyDialog++ datasets with Apache Beam.

ALGORITHMS.md sections 4 (MultiRef-DD) and 5 (DD++). Input: the DailyDialog release, and
optionally the multi-reference test set (multireftest.json) and the DailyDialog++ files;
with no input, the bundled sample in dailydialog_pp/sample. Output: a Hugging Face dataset
folder with configs ``multiref`` and ``dailydialog_pp`` (plus ``dailydialog_pp_corrupted``
with ``--corruptions``), ``rejected/<reason>.jsonl`` dead letters and ``stats.json``.

Stages (each a pure function of dailydialog_pp, wrapped here):
  parse dialogues (rejects bad label counts) -> multiref: cut after each turn, join the
  released references by dialogue index, verified by match_key -> rows;
  DD++: group by duplicate key, keep one -> chunk -> join released contexts by context key
  -> split by dialogue hash -> random negatives (pool side input) -> rows;
  rows -> one parquet file per (config, split), sorted by id.

Local run::

    multiref dailydialog build --output out/dailydialog --dailydialog DD/ \\
        --multiref-references multireftest.json --ddpp DDPP/
    python -m pipelines.dailydialog --output out/dd            # bundled sample

Dataflow (build the job graph offline with --dry_run=True)::

    python -m pipelines.dailydialog --output out/dd --runner DataflowRunner --project P \\
        --region R --temp_location gs://B/t --setup_file ./setup.py
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys
from dataclasses import dataclass

import dailydialog_pp  # a docstring only: cheap to import
from multiref.errors import UserError

NS_PARSE = "dailydialog"
NS_MULTIREF = "multiref"
NS_DDPP = "dailydialog_pp"
SAMPLE_DIR = os.path.join(os.path.dirname(os.path.abspath(dailydialog_pp.__file__)), "sample")


@dataclass(frozen=True)
class BuildOptions:
    """Every option that changes the data (recorded in the dataset card)."""

    text: object
    chunks: object
    splits: object
    negatives: object
    multiref_splits: tuple = ("test",)
    multiref_first_reference: str = "released"
    dedup: bool = True
    near_duplicates: float | None = None
    corruptions: tuple = ()
    seed: int = 0

    def card(self) -> dict:
        return {
            "text": self.text.as_dict(),
            "chunks": self.chunks.as_dict(),
            "splits": self.splits.as_dict(),
            "random_negatives": self.negatives.as_dict(),
            "multiref_splits": list(self.multiref_splits),
            "multiref_first_reference": self.multiref_first_reference,
            "dedup": self.dedup,
            "near_duplicates": self.near_duplicates,
            "corruptions": list(self.corruptions),
            "seed": self.seed,
        }


def options_from_args(args) -> BuildOptions:
    """BuildOptions from parsed arguments; bad values become a UserError."""
    from dailydialog_pp.contexts import ChunkOptions
    from dailydialog_pp.negatives import NegativeOptions
    from dailydialog_pp.normalize import TextOptions
    from dailydialog_pp.splits import SplitOptions

    try:
        train, validation, test = args.split_fractions
        return BuildOptions(
            text=TextOptions(args.curly_quotes, args.detokenize, args.lowercase),
            chunks=ChunkOptions(args.long_dialogue, args.chunk_length, args.min_chunk, args.max_chunk),
            splits=SplitOptions(train, validation, test, args.split_salt),
            negatives=NegativeOptions(args.random_negatives, args.negative_min_words, args.seed,
                                      args.released_random_negatives),
            multiref_splits=tuple(sorted(set(args.multiref_splits))),
            multiref_first_reference=args.first_reference,
            dedup=not args.no_dedup,
            near_duplicates=_ratio(args.near_duplicates),
            corruptions=tuple(dict.fromkeys(args.corruptions)),
            seed=args.seed,
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _ratio(value):
    if value is None:
        return None
    if not 0 < value <= 1:
        raise ValueError(f"--near-duplicates must be in (0, 1], got {value:g}")
    return float(value)


def read_sources(args) -> dict:
    """Raw lines of the inputs named in ``args`` (the bundled sample when none is given)."""
    from dailydialog_pp import readers

    given = any([args.dailydialog, args.multiref_references, args.ddpp])
    if given and not args.dailydialog:
        raise UserError("--multiref-references and --ddpp need --dailydialog (the dialogues they refer to)")
    if not given:
        dd_dir = SAMPLE_DIR
        mr_path = os.path.join(SAMPLE_DIR, "multireftest.json")
        ddpp_dir = os.path.join(SAMPLE_DIR, "ddpp")
        names = {"dailydialog": "bundled sample", "multiref_references": "bundled sample", "ddpp": "bundled sample"}
    else:
        dd_dir, mr_path, ddpp_dir = args.dailydialog, args.multiref_references, args.ddpp
        names = {"dailydialog": os.path.basename(os.path.normpath(dd_dir)),
                 "multiref_references": os.path.basename(mr_path) if mr_path else None,
                 "ddpp": os.path.basename(os.path.normpath(ddpp_dir)) if ddpp_dir else None}
    readers.check_dailydialog(dd_dir)
    if mr_path:
        readers.check_file(mr_path, "multi-reference file")
    if ddpp_dir:
        readers.check_ddpp(ddpp_dir)
    return {
        "dailydialog": Loader("dailydialog", os.path.abspath(dd_dir)),
        "multiref": Loader("multiref", os.path.abspath(mr_path)) if mr_path else None,
        "ddpp": Loader("ddpp", os.path.abspath(ddpp_dir)) if ddpp_dir else None,
        "inputs": names,
    }


@dataclass(frozen=True)
class Loader:
    """Reads one input inside the pipeline (so the data is not pickled into the job graph)."""

    kind: str
    path: str

    def __call__(self) -> list:
        from dailydialog_pp import readers

        if self.kind == "dailydialog":
            return readers.read_dailydialog(self.path)
        if self.kind == "multiref":
            return list(enumerate(readers.read_multiref(self.path)))
        if self.kind == "ddpp":
            return readers.read_ddpp(self.path)
        raise ValueError(f"unknown input kind {self.kind!r}")


def _read(p, label: str, value):
    """A PCollection of raw records from a Loader (read by a worker) or an injected list."""
    import apache_beam as beam

    if isinstance(value, Loader):
        return p | f"Start{label}" >> beam.Create([value]) | f"Read{label}" >> beam.FlatMap(lambda load: load())
    if label == "Multiref":
        value = list(enumerate(value))
    elif label == "Dialogues":
        value = sorted(value, key=lambda r: (r.extra[0], r.extra[1]) if r.extra else (r.path, r.line))
    return p | f"Read{label}" >> beam.Create(value, reshuffle=False)


# --- pure helpers used by the transforms ---------------------------------------------------

def natural_key(text: str) -> tuple:
    """Sort key that orders '2_10' after '2_9' (numbers compared as numbers)."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", text))


def dead_letter(reason: str, detail: str, file=None, line=None, text=None) -> dict:
    return {"reason": reason, "detail": detail, "file": file, "line": line, "text": text}


def _rel(path):
    return os.path.basename(path) if path else path


def _rejected(rej):
    """A RejectedRecord as a dead letter on the ``rejected`` output (file named by basename)."""
    from apache_beam import pvalue

    letter = rej.dead_letter()
    letter["file"] = _rel(letter["file"])
    return pvalue.TaggedOutput("rejected", letter)


# --- transforms ---------------------------------------------------------------------------

_COUNTERS: dict = {}


def _counter(namespace: str, name: str, n: int = 1):
    """Increment Beam counter ``namespace/name`` (counter objects cached per process)."""
    if not n:
        return
    counter = _COUNTERS.get((namespace, name))
    if counter is None:
        from apache_beam.metrics import Metrics

        counter = _COUNTERS[(namespace, name)] = Metrics.counter(namespace, name)
    counter.inc(n)


def _parse_dialogue(raw):
    from dailydialog_pp.readers import RejectedRecord, parse_dialogue

    try:
        dialogue = parse_dialogue(raw)
    except RejectedRecord as rej:
        _counter(NS_PARSE, rej.reason)
        yield _rejected(rej)
        return
    _counter(NS_PARSE, f"dialogues-{dialogue.split}")
    yield dialogue


def _parse_multiref(item):
    from dailydialog_pp.readers import RejectedRecord, parse_multiref

    position, raw = item
    try:
        record = parse_multiref(raw, position)
    except RejectedRecord as rej:
        _counter(NS_MULTIREF, rej.reason)
        yield _rejected(rej)
        return
    _counter(NS_MULTIREF, "released-dialogues")
    yield ("test", record.index), record


def _parse_ddpp(raw):
    from dailydialog_pp.normalize import dialogue_key
    from dailydialog_pp.readers import RejectedRecord, parse_ddpp

    try:
        record = parse_ddpp(raw)
    except RejectedRecord as rej:
        _counter(NS_DDPP, f"{raw.kind}-{rej.reason}")
        yield _rejected(rej)
        return
    _counter(NS_DDPP, f"released-{record.source}")
    yield dialogue_key(record.context), record


def _join_multiref(item, text_options, have_release, released_first=False):
    """(key, {dialogue: [...], released: [...]}) -> multiref rows and dead letters."""
    from apache_beam import pvalue

    from dailydialog_pp.contexts import empty_references, multiref_contexts, multiref_matches

    _, grouped = item
    dialogues = list(grouped["dialogue"])
    released = sorted(grouped["released"], key=lambda r: r.line)
    for extra in released[1:]:
        _counter(NS_MULTIREF, "duplicate-index")
        yield pvalue.TaggedOutput("rejected", dead_letter(
            "duplicate-index", f"a second line with index {extra.index}", _rel(extra.path), extra.line))
    chosen = released[0] if released else None
    if not dialogues:
        if chosen is not None:
            _counter(NS_MULTIREF, "released-without-dialogue")
            yield pvalue.TaggedOutput("rejected", dead_letter(
                "released-without-dialogue", f"no test dialogue with index {chosen.index}",
                _rel(chosen.path), chosen.line))
        return
    dialogue = dialogues[0]
    if chosen is not None and not multiref_matches(dialogue, chosen):
        _counter(NS_MULTIREF, "text-mismatch")
        yield pvalue.TaggedOutput("rejected", dead_letter(
            "text-mismatch", f"utterances differ from {dialogue.dialogue_id}; kept the original reference only",
            _rel(chosen.path), chosen.line))
        chosen = None
    if chosen is not None:
        _counter(NS_MULTIREF, "joined-dialogues")
        empty = empty_references(chosen)
        if empty:
            _counter(NS_MULTIREF, "empty-reference", empty)
            yield pvalue.TaggedOutput("rejected", dead_letter(
                "empty-reference", f"{empty} empty reference(s) dropped from {dialogue.dialogue_id}",
                _rel(chosen.path), chosen.line))
    elif have_release and dialogue.split == "test":
        _counter(NS_MULTIREF, "dialogues-without-references")
    for row in multiref_contexts(dialogue, chosen, text_options, released_first):
        _counter(NS_MULTIREF, f"contexts-{dialogue.split}")
        row["split"] = dialogue.split
        yield row


def _dedup(item, dedup: bool, near_ratio=None):
    from apache_beam import pvalue

    from dailydialog_pp.contexts import cluster_duplicates

    _, dialogues = item
    dialogues = list(dialogues)
    if not dedup:
        for d in dialogues:
            _counter(NS_DDPP, "dialogues-kept")
            yield d
        return
    for kept, removed in cluster_duplicates(dialogues, near_ratio):
        _counter(NS_DDPP, "dialogues-kept")
        yield kept
        for d in removed:
            _counter(NS_DDPP, "duplicate-dialogue")
            yield pvalue.TaggedOutput("rejected", dead_letter(
                "duplicate-dialogue", f"{d.dialogue_id} duplicates {kept.dialogue_id}", None, None, d.dialogue_id))


def _duplicate_block(dialogue, near_ratio):
    """Group key for duplicate removal: the duplicate key, or a blocking key for near duplicates."""
    from dailydialog_pp.contexts import near_duplicate_block
    from dailydialog_pp.normalize import dialogue_key

    if near_ratio is None:
        return dialogue_key(dialogue.turns), dialogue
    return near_duplicate_block(dialogue), dialogue


def _contexts(dialogue, chunk_options, text_options):
    from apache_beam import pvalue

    from dailydialog_pp.contexts import ddpp_contexts
    from dailydialog_pp.normalize import dialogue_key

    rows = ddpp_contexts(dialogue, chunk_options, text_options)
    if not rows:
        _counter(NS_DDPP, "too-short-dialogue")
        yield pvalue.TaggedOutput("rejected", dead_letter(
            "too-short-dialogue", f"{dialogue.dialogue_id} has {len(dialogue.turns)} turn(s)", None, None,
            dialogue.dialogue_id))
        return
    for row in rows:
        _counter(NS_DDPP, "contexts")
        yield dialogue_key(row.pop("raw_context")), row


def _join_ddpp(item):
    """(context key, {context: [...], released: [...]}) -> rows with released responses."""
    from apache_beam import pvalue

    from dailydialog_pp.contexts import pick_released
    from dailydialog_pp.normalize import collapse_spaces

    _, grouped = item
    contexts = sorted(grouped["context"], key=lambda r: natural_key(r["id"]))
    released = list(grouped["released"])
    chosen = pick_released(released) if released else None
    if released and not contexts:
        for rel in released:
            _counter(NS_DDPP, f"unmatched-{rel.source}")
            yield pvalue.TaggedOutput("rejected", dead_letter(
                "released-context-unmatched", f"{rel.source} id {rel.release_id}: no generated context has this text",
                _rel(rel.path), rel.line, " | ".join(rel.context)))
        return
    if chosen is not None:
        for rel in released:
            _counter(NS_DDPP, f"matched-{rel.source}")
        if len(released) > 1:
            _counter(NS_DDPP, "released-duplicate-context", len(released) - 1)
    for row in contexts:
        if chosen is not None:
            row["positive_responses"] = [s for s in (collapse_spaces(x) for x in chosen.positive_responses) if s]
            row["adversarial_negative_responses"] = [
                s for s in (collapse_spaces(x) for x in chosen.adversarial_negative_responses) if s]
            row["source"] = chosen.source
            row["released_random"] = [s for s in (collapse_spaces(x) for x in chosen.random_negative_responses) if s]
            _counter(NS_DDPP, "contexts-with-released-responses")
        else:
            row["positive_responses"] = [row["response"]]
            row["adversarial_negative_responses"] = []
            row["source"] = "dailydialog"
            _counter(NS_DDPP, "contexts-without-released-responses")
        yield row


def _add_split(row, split_options):
    from dailydialog_pp.splits import assign_split

    row = dict(row)
    row["split"] = assign_split(row["dialogue_id"], split_options)
    _counter(NS_DDPP, f"contexts-{row['split']}")
    return row


def _add_negatives(row, pool, negative_options):
    from dailydialog_pp.negatives import sample_negatives

    row = dict(row)
    released = row.pop("released_random", None)
    if negative_options.keep_released and released:
        _counter(NS_DDPP, "released-random-negatives-kept")
        row["random_negative_responses"] = released
        return row
    row["random_negative_responses"] = sample_negatives(
        row["id"], row["dialogue_id"], row["positive_responses"], pool, negative_options)
    if len(row["random_negative_responses"]) < negative_options.count:
        _counter(NS_DDPP, "too-few-random-negatives")
    return row


def _corrupt(row, names, seed):
    from dailydialog_pp.corruptions import corrupt

    for name in names:
        yield {
            "id": f"{row['id']}:{name}",
            "dialogue_id": row["dialogue_id"],
            "context": row["context"],
            "corruption": name,
            "positive_responses": row["positive_responses"],
            "corrupted_responses": [corrupt(p, name, key=f"{row['id']}:{i}", seed=seed)
                                    for i, p in enumerate(row["positive_responses"])],
            "split": row["split"],
        }


def _write_split(item, folder):
    from dailydialog_pp.schema import schema
    from multiref.hfdata import shard_path, write_parquet

    (config, split), rows = item
    rows = sorted(rows, key=lambda r: natural_key(r["id"]))
    n = write_parquet(shard_path(folder, config, split), rows, schema(config))
    yield config, split, n


def _write_rejected(item, folder):
    reason, letters = item
    letters = sorted(letters, key=lambda d: json.dumps(d, sort_keys=True, ensure_ascii=False))
    os.makedirs(os.path.join(folder, "rejected"), exist_ok=True)
    with open(os.path.join(folder, "rejected", f"{reason}.jsonl"), "w", encoding="utf-8") as fh:
        for d in letters:
            fh.write(json.dumps(d, sort_keys=True, ensure_ascii=False) + "\n")
    yield reason, len(letters)


# --- the pipeline -------------------------------------------------------------------------

def build_pipeline(p, source: dict, options: BuildOptions, folder: str):
    """Add every stage to pipeline ``p``; return nothing (outputs are files in ``folder``)."""
    import apache_beam as beam

    from dailydialog_pp.schema import CORRUPTED, DDPP, MULTIREF

    parsed = (_read(p, "Dialogues", source["dailydialog"])
              | "ParseDialogues" >> beam.FlatMap(_parse_dialogue).with_outputs("rejected", main="dialogues"))
    dialogues = parsed.dialogues
    rejected = [parsed.rejected]

    # MultiRef-DD (section 4)
    have_release = source.get("multiref") is not None
    multiref_dialogues = (dialogues
                          | "MultirefSplits" >> beam.Filter(lambda d, s: d.split in s, options.multiref_splits)
                          | "KeyByIndex" >> beam.Map(lambda d: ((d.split, d.index), d)))
    if have_release:
        released = (_read(p, "Multiref", source["multiref"])
                    | "ParseMultiref" >> beam.FlatMap(_parse_multiref).with_outputs("rejected", main="records"))
        rejected.append(released.rejected)
        released_records = released.records
    else:
        released_records = p | "NoMultiref" >> beam.Create([])
    mr = ({"dialogue": multiref_dialogues, "released": released_records}
          | "JoinMultiref" >> beam.CoGroupByKey()
          | "MultirefContexts" >> beam.FlatMap(_join_multiref, options.text, have_release,
                                                    options.multiref_first_reference == "released")
          .with_outputs("rejected", main="rows"))
    rejected.append(mr.rejected)
    outputs = [mr.rows | "MultirefKey" >> beam.Map(lambda r: ((MULTIREF, r["split"]), r))]

    # DD++ (section 5)
    deduped = (dialogues
               | "DuplicateKey" >> beam.Map(_duplicate_block, options.near_duplicates)
               | "GroupDuplicates" >> beam.GroupByKey()
               | "Dedup" >> beam.FlatMap(_dedup, options.dedup, options.near_duplicates)
               .with_outputs("rejected", main="dialogues"))
    rejected.append(deduped.rejected)
    contexts = (deduped.dialogues
                | "Chunk" >> beam.FlatMap(_contexts, options.chunks, options.text).with_outputs("rejected", main="rows"))
    rejected.append(contexts.rejected)
    if source.get("ddpp") is not None:
        ddpp = (_read(p, "DDPP", source["ddpp"])
                | "ParseDDPP" >> beam.FlatMap(_parse_ddpp).with_outputs("rejected", main="records"))
        rejected.append(ddpp.rejected)
        ddpp_records = ddpp.records
    else:
        ddpp_records = p | "NoDDPP" >> beam.Create([])
    joined = ({"context": contexts.rows, "released": ddpp_records}
              | "JoinReleased" >> beam.CoGroupByKey()
              | "ReleasedResponses" >> beam.FlatMap(_join_ddpp).with_outputs("rejected", main="rows"))
    rejected.append(joined.rejected)
    split_rows = joined.rows | "Split" >> beam.Map(_add_split, options.splits)
    from dailydialog_pp.negatives import build_pool, pool_entries

    pool = (split_rows
            | "PoolEntries" >> beam.FlatMap(pool_entries, options.negatives)
            | "Pool" >> beam.combiners.ToList()
            | "SortPool" >> beam.Map(build_pool))
    ddpp_rows = split_rows | "RandomNegatives" >> beam.Map(
        _add_negatives, beam.pvalue.AsSingleton(pool), options.negatives)
    outputs.append(ddpp_rows | "DDPPKey" >> beam.Map(lambda r: ((DDPP, r["split"]), r)))
    if options.corruptions:
        outputs.append(ddpp_rows
                       | "Corrupt" >> beam.FlatMap(_corrupt, options.corruptions, options.seed)
                       | "CorruptedKey" >> beam.Map(lambda r: ((CORRUPTED, r["split"]), r)))

    _ = (outputs | "AllRows" >> beam.Flatten()
         | "GroupBySplit" >> beam.GroupByKey()
         | "WriteParquet" >> beam.FlatMap(_write_split, folder))
    _ = (rejected | "AllRejected" >> beam.Flatten()
         | "KeyByReason" >> beam.Map(lambda d: (d["reason"], d))
         | "GroupRejected" >> beam.GroupByKey()
         | "WriteRejected" >> beam.FlatMap(_write_rejected, folder))


def _clean(folder: str, configs) -> None:
    """Remove parquet shards and dead letters an earlier run of this job left in ``folder``."""
    for config in configs:
        for path in glob.glob(os.path.join(folder, config, "*.parquet")):
            os.remove(path)
    for path in glob.glob(os.path.join(folder, "rejected", "*.jsonl")):
        os.remove(path)


def _forget_config(folder: str, config: str) -> None:
    """Drop ``config`` from the folder's card if an earlier run wrote it and this run does not."""
    from multiref import hfdata

    meta = hfdata.load_meta(folder)
    if meta.get("configs", {}).pop(config, None) is None:
        return
    with open(os.path.join(folder, hfdata.META_FILE), "w", encoding="utf-8") as fh:
        json.dump(meta, fh, indent=2, sort_keys=True, ensure_ascii=False)
        fh.write("\n")
    hfdata.write_card(folder, meta)


def _split_counts(folder: str, config: str) -> dict:
    import pyarrow.parquet as pq

    counts = {}
    for path in sorted(glob.glob(os.path.join(folder, config, "*.parquet"))):
        split = os.path.basename(path).split("-")[0]
        counts[split] = counts.get(split, 0) + pq.read_metadata(path).num_rows
    return counts


DESCRIPTIONS = {
    "multiref": ("Multi-reference DailyDialog (Gupta et al. 2019): every test dialogue cut after each turn "
                 "but the last; `references[0]` is the original next turn, followed by the released human "
                 "references (lowercased, PTB-tokenized as released). `id` is `<dialogue index>_<turn>` as "
                 "in multirefeval's test_duid_mapping.json."),
    "dailydialog_pp": ("DailyDialog++ (Sai et al. 2020) contexts rebuilt from DailyDialog: duplicates removed, "
                       "dialogues under 8 turns give one context, longer ones one per chunk; positive and "
                       "adversarial responses joined from the released files where the context matches "
                       "(`source` names the file; `dailydialog` means no released context matched and "
                       "`positive_responses` holds only the original answer); random negatives drawn from "
                       "other dialogues; splits by a hash of `dialogue_id`."),
    "dailydialog_pp_corrupted": ("Synthetic corruptions of the dailydialog_pp positives (reverse, shuffle, "
                                 "drop_punctuation, drop_stopwords, nouns, synonyms), one row per context and "
                                 "corruption, for probing metrics."),
}


def build(args, beam_args=(), *, source=None) -> dict:
    """Run the whole job for parsed ``args``; return the stats written to stats.json."""
    from dailydialog_pp.schema import CORRUPTED, DDPP, MULTIREF, schema
    from multiref import hfdata
    from multiref.beam_utils import counters, is_local, pipeline_options

    options = options_from_args(args)
    if options.corruptions:
        from dailydialog_pp.corruptions import check_nltk_data

        check_nltk_data(options.corruptions)
    folder = os.path.abspath(args.output)
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise UserError(f"--output is a file, expected a folder: {args.output}")
    log = lambda msg: print(f"[dailydialog] {msg}", file=sys.stderr, flush=True)  # noqa: E731
    if source is None:
        log("reading inputs")
        source = read_sources(args)
    inputs = source.get("inputs", {"dailydialog": "injected records"})
    log("inputs: " + ", ".join(f"{k} = {v}" for k, v in sorted(inputs.items()) if v))
    configs = [MULTIREF, DDPP] + ([CORRUPTED] if options.corruptions else [])
    os.makedirs(folder, exist_ok=True)
    _clean(folder, [MULTIREF, DDPP, CORRUPTED])
    if not options.corruptions:
        _forget_config(folder, CORRUPTED)

    import apache_beam as beam

    log("running the Beam pipeline")
    p = beam.Pipeline(options=pipeline_options(list(beam_args)))
    build_pipeline(p, source, options, folder)
    result = p.run()
    result.wait_until_finish()
    counts = counters(result)
    if not is_local(beam_args):
        log("pipeline submitted to a remote runner; the card is written by a local run")
        return {"counters": counts}

    log("writing the dataset card")
    stats = {"inputs": inputs, "options": options.card(), "counters": counts, "configs": {}}
    summary = ("Multi-reference DailyDialog and DailyDialog++ rebuilt from the DailyDialog release "
               "(ALGORITHMS.md sections 4 and 5). Data licence: DailyDialog is CC BY-NC-SA 4.0; the derived "
               "releases inherit non-commercial share-alike terms.")
    for config in configs:
        splits = _split_counts(folder, config)
        stats["configs"][config] = splits
        prefix = {MULTIREF: (NS_PARSE, NS_MULTIREF)}.get(config, (NS_PARSE, NS_DDPP))
        card_options = {"inputs": inputs, **_config_options(options, config)}
        hfdata.add_config(folder, hfdata.ConfigInfo(
            name=config, description=DESCRIPTIONS[config], splits=splits, features=schema(config),
            options=card_options, counts={k: v for k, v in counts.items() if k.split("/")[0] in prefix}),
            title="Multi-reference DailyDialog and DailyDialog++", summary=summary)
    with open(os.path.join(folder, "stats.json"), "w", encoding="utf-8") as fh:
        json.dump(stats, fh, indent=2, sort_keys=True, ensure_ascii=False)
        fh.write("\n")
    for config in configs:
        print(f"{config}: " + ", ".join(f"{s} {n:,}" for s, n in sorted(stats["configs"][config].items())))
    rejected = {k.split("/", 1)[1]: v for k, v in counts.items()
                if any(w in k for w in ("mismatch", "invalid", "bad-", "missing-", "duplicate-dialogue",
                                        "unmatched", "empty", "too-short"))}
    if rejected:
        print("dropped or unmatched: " + ", ".join(f"{k} {v:,}" for k, v in sorted(rejected.items())))
    print(f"wrote {folder}")
    return stats


def _config_options(options: BuildOptions, config: str) -> dict:
    card = options.card()
    if config == "multiref":
        return {"text": card["text"], "multiref_splits": card["multiref_splits"],
                "first_reference": card["multiref_first_reference"]}
    out = {k: v for k, v in card.items() if not k.startswith("multiref_")}
    if config == "dailydialog_pp":
        out.pop("corruptions")
    return out


def run(argv=None, *, source=None) -> dict:
    """Entry point: our flags are parsed apart from Beam's (parse_known_args); ``source``
    injects raw records (``{"dailydialog": [RawLine], "multiref": [...]|None, "ddpp": [...]|None}``)."""
    from multiref.cli.dailydialog import add_build_arguments

    parser = argparse.ArgumentParser(prog="python -m pipelines.dailydialog", description=__doc__.splitlines()[0])
    add_build_arguments(parser)
    args, beam_args = parser.parse_known_args(argv)
    beam_args = list(beam_args) + [a for a in (args.beam_args or []) if a != "--"]
    return build(args, beam_args, source=source)


if __name__ == "__main__":
    try:
        run()
    except UserError as exc:
        print(f"multiref: error: {exc}", file=sys.stderr)
        sys.exit(1)
