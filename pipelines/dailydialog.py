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

import glob
import json
import os
import sys
from dataclasses import dataclass

import dailydialog_pp  # a docstring only: cheap to import
from multiref.errors import UserError
from pipelines.dailydialog_options import BuildOptions, options_from_args  # noqa: F401  (the job's API)
from pipelines.dailydialog_transforms import NS_DDPP, NS_MULTIREF, NS_PARSE, natural_key  # noqa: F401

SPLITS = ("train", "validation", "test")
SAMPLE_DIR = os.path.join(os.path.dirname(os.path.abspath(dailydialog_pp.__file__)), "sample")


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


# --- the pipeline -------------------------------------------------------------------------

def build_pipeline(p, source: dict, options: BuildOptions, folder: str):
    """Add every stage to pipeline ``p``; return nothing (outputs are files in ``folder``)."""
    import apache_beam as beam

    from dailydialog_pp.schema import CORRUPTED, DDPP, MULTIREF, schema
    from multiref import beam_writer as bw
    from pipelines import dailydialog_transforms as t

    parsed = (_read(p, "Dialogues", source["dailydialog"])
              | "ParseDialogues" >> beam.FlatMap(t._parse_dialogue).with_outputs("rejected", main="dialogues"))
    dialogues = parsed.dialogues
    rejected = [parsed.rejected]

    # MultiRef-DD (section 4)
    have_release = source.get("multiref") is not None
    multiref_dialogues = (dialogues
                          | "MultirefSplits" >> beam.Filter(lambda d, s: d.split in s, options.multiref_splits)
                          | "KeyByIndex" >> beam.Map(lambda d: ((d.split, d.index), d)))
    if have_release:
        released = (_read(p, "Multiref", source["multiref"])
                    | "ParseMultiref" >> beam.FlatMap(t._parse_multiref).with_outputs("rejected", main="records"))
        rejected.append(released.rejected)
        released_records = released.records
    else:
        released_records = p | "NoMultiref" >> beam.Create([])
    mr = ({"dialogue": multiref_dialogues, "released": released_records}
          | "JoinMultiref" >> beam.CoGroupByKey()
          | "MultirefContexts" >> beam.FlatMap(t._join_multiref, options.text, have_release,
                                                    options.multiref_first_reference == "released")
          .with_outputs("rejected", main="rows"))
    rejected.append(mr.rejected)
    outputs = [mr.rows | "MultirefKey" >> beam.Map(lambda r: (MULTIREF, r["split"], r["id"], r))]

    # DD++ (section 5)
    deduped = (dialogues
               | "DuplicateKey" >> beam.Map(t._duplicate_block, options.near_duplicates)
               | "GroupDuplicates" >> beam.GroupByKey()
               | "Dedup" >> beam.FlatMap(t._dedup, options.dedup, options.near_duplicates)
               .with_outputs("rejected", main="dialogues"))
    rejected.append(deduped.rejected)
    contexts = (deduped.dialogues
                | "Chunk" >> beam.FlatMap(t._contexts, options.chunks, options.text).with_outputs("rejected", main="rows"))
    rejected.append(contexts.rejected)
    if source.get("ddpp") is not None:
        ddpp = (_read(p, "DDPP", source["ddpp"])
                | "ParseDDPP" >> beam.FlatMap(t._parse_ddpp).with_outputs("rejected", main="records"))
        rejected.append(ddpp.rejected)
        ddpp_records = ddpp.records
    else:
        ddpp_records = p | "NoDDPP" >> beam.Create([])
    joined = ({"context": contexts.rows, "released": ddpp_records}
              | "JoinReleased" >> beam.CoGroupByKey()
              | "ReleasedResponses" >> beam.FlatMap(t._join_ddpp).with_outputs("rejected", main="rows"))
    rejected.append(joined.rejected)
    split_rows = joined.rows | "Split" >> beam.Map(t._add_split, options.splits)
    from dailydialog_pp.negatives import build_pool, pool_entries

    pool = (split_rows
            | "PoolEntries" >> beam.FlatMap(pool_entries, options.negatives)
            | "Pool" >> beam.combiners.ToList()
            | "SortPool" >> beam.Map(build_pool))
    ddpp_rows = split_rows | "RandomNegatives" >> beam.Map(
        t._add_negatives, beam.pvalue.AsSingleton(pool), options.negatives)
    outputs.append(ddpp_rows | "DDPPKey" >> beam.Map(lambda r: (DDPP, r["split"], r["id"], r)))
    if options.corruptions:
        outputs.append(ddpp_rows
                       | "Corrupt" >> beam.FlatMap(t._corrupt, options.corruptions, options.seed)
                       | "CorruptedKey" >> beam.Map(lambda r: (CORRUPTED, r["split"], r["id"], r)))

    configs = [MULTIREF, DDPP] + ([CORRUPTED] if options.corruptions else [])
    splits = [(MULTIREF, s) for s in options.multiref_splits] + [(c, s) for c in configs[1:] for s in SPLITS]
    _ = (outputs | "AllRows" >> beam.Flatten()
         | "Write" >> bw.WriteShards(folder, {c: schema(c) for c in configs}, splits, 1, sort_key=t.row_sort_key))
    _ = (rejected | "AllRejected" >> beam.Flatten()
         | "KeyByReason" >> beam.Map(lambda d: (d["reason"], d))
         | "GroupRejected" >> beam.GroupByKey()
         | "WriteRejected" >> beam.MapTuple(lambda reason, letters: bw.write_file(
             bw.join(folder, "rejected", f"{reason}.jsonl"), t.rejected_jsonl(letters))))


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


def build(args, beam_args=(), *, source=None, options=None) -> dict:
    """Run the whole job for parsed ``args`` (the CLI's namespace or the options view) and
    Beam's flags (``beam_args``, or ready ``options``); return the stats written to stats.json."""
    from dailydialog_pp.schema import CORRUPTED, DDPP, MULTIREF
    from multiref.beam_utils import check_output_for_runner, pipeline_options

    beam_options = options if options is not None else pipeline_options(list(beam_args))
    options = options_from_args(args)
    if options.corruptions:
        from dailydialog_pp.corruptions import check_nltk_data

        check_nltk_data(options.corruptions)
    folder = os.path.abspath(args.output)
    check_output_for_runner(beam_options, args.output)
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise UserError(f"--output is a file, expected a folder: {args.output}")
    from multiref import progress

    def log(msg):  # --quiet silences the job's notes
        if not progress.quiet():
            print(f"[dailydialog] {msg}", file=sys.stderr, flush=True)
    if source is None:
        log("reading inputs")
        source = read_sources(args)
    inputs = source.get("inputs", {"dailydialog": "injected records"})
    log("inputs: " + ", ".join(f"{k} = {v}" for k, v in sorted(inputs.items()) if v))
    configs = [MULTIREF, DDPP] + ([CORRUPTED] if options.corruptions else [])
    import apache_beam as beam

    from multiref.beam_utils import counters, run_pipeline, runner_does_not_execute

    if not runner_does_not_execute(beam_options):  # a dry run or a drawing writes nothing
        os.makedirs(folder, exist_ok=True)
        _clean(folder, [MULTIREF, DDPP, CORRUPTED])
        if not options.corruptions:
            _forget_config(folder, CORRUPTED)
    log("running the Beam pipeline")
    p = beam.Pipeline(options=beam_options)
    build_pipeline(p, source, options, folder)
    result = run_pipeline(p)
    if runner_does_not_execute(beam_options):
        return {"counters": {}, "dry_run": True}
    counts = counters(result)
    log("writing the dataset card")
    stats = _write_card(folder, configs, options, inputs, counts, log)
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


def _write_card(folder, configs, options, inputs, counts, log) -> dict:
    """The card (empty splits left out, with a warning: ``datasets`` cannot load them) and the stats."""
    from dailydialog_pp.schema import MULTIREF, schema
    from multiref import hfdata

    stats = {"inputs": inputs, "options": options.card(), "counters": counts, "configs": {}}
    summary = ("Multi-reference DailyDialog and DailyDialog++ rebuilt from the DailyDialog release "
               "(ALGORITHMS.md sections 4 and 5). Data licence: DailyDialog is CC BY-NC-SA 4.0; the derived "
               "releases inherit non-commercial share-alike terms.")
    for config in configs:
        splits = _split_counts(folder, config)
        stats["configs"][config] = splits
        listed = {s: n for s, n in splits.items() if n}
        for split in sorted(set(splits) - set(listed)):
            log(f"warning: {config}/{split} has no rows; it is left out of the dataset card")
        if not listed:
            _forget_config(folder, config)
            continue
        prefix = {MULTIREF: (NS_PARSE, NS_MULTIREF)}.get(config, (NS_PARSE, NS_DDPP))
        card_options = {"inputs": inputs, **_config_options(options, config)}
        hfdata.add_config(folder, hfdata.ConfigInfo(
            name=config, description=DESCRIPTIONS[config], splits=listed, features=schema(config),
            options=card_options, counts={k: v for k, v in counts.items() if k.split("/")[0] in prefix}),
            title="Multi-reference DailyDialog and DailyDialog++", summary=summary)
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
    """Entry point: the flags of :class:`pipelines.dailydialog_options.DailyDialogOptions`
    plus Beam's; ``source`` injects raw records (``{"dailydialog": [RawLine], "multiref":
    [...]|None, "ddpp": [...]|None}``)."""
    from multiref.beam_utils import pipeline_options
    from pipelines.dailydialog_options import DailyDialogOptions

    argv = [a for a in (sys.argv[1:] if argv is None else argv) if a != "--"]
    options = pipeline_options(argv)
    values = options.view_as(DailyDialogOptions)
    if not values.output:
        raise UserError("--output FOLDER is required")
    return build(values, options=options, source=source)


if __name__ == "__main__":
    try:
        run()
    except UserError as exc:
        print(f"multiref: error: {exc}", file=sys.stderr)
        sys.exit(1)
