"""Build the multi-reference DailyDialog and DailyDialog++ datasets with Apache Beam: one graph.

docs/algorithms.md sections 4 (MultiRef-DD) and 5 (DD++). Input: the DailyDialog release, and
optionally the multi-reference test set (multireftest.json) and the DailyDialog++ files;
with no input, the bundled sample in dailydialog_pp/sample. Output: a Hugging Face dataset
folder with configs ``multiref``, ``dailydialog_pp`` and ``contexts`` (plus
``dailydialog_pp_corrupted`` with ``--corruptions``), ``rejected/<reason>.jsonl`` dead letters, ``stats.json``, and the
card (``README.md``, ``dataset_meta.json``).

The graph, one composite per step of the papers (:mod:`pipelines.dailydialog.transforms`,
over the pure functions of :mod:`dailydialog_pp.steps`)::

    Read -> References (section 4: join the released references by dialogue index, cut after
    each turn) -> Write
    Read -> Pairs (every split cut after each turn: context-response pairs) -> Write
    Read -> Dedup -> Contexts (chunks) -> Responses (join the released DD++ responses by
    context text) -> Split (hash of the dialogue id) -> Negatives (pool as a side input)
    [-> Corrupt] -> Write
    every step's dead letters -> WriteRejected; every step's counts -> WriteStats (stats.json)

Counts travel as data (summed by a combiner), dead letters are outputs of the steps, and
every file is written through Beam's FileSystems (temporary name, then rename), so the
folder is byte-identical on every runner and may be on ``gs://``. After the run the driver
writes the card from ``stats.json`` and returns a summary; it prints nothing but its notes
on stderr. Draw the graph without running it::

    python -m pipelines.dailydialog.job --output out/dd --runner apache_beam.runners.render.RenderRunner \\
        --render_output graph.dot

Local run (``python -m`` publishes the folder whole, as the CLI does)::

    multiref dailydialog build --output out/dailydialog --dailydialog DD/ \\
        --multiref-references multireftest.json --ddpp DDPP/
    python -m pipelines.dailydialog.job --output out/dd            # bundled sample

Dataflow (build the job graph offline with --dry_run=True)::

    python -m pipelines.dailydialog.job --output gs://B/dd --runner DataflowRunner --project P \\
        --region R --temp_location gs://B/t --setup_file ./setup.py
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass

import dailydialog_pp  # a docstring only: cheap to import
from dailydialog_pp.steps import natural_key  # noqa: F401  (the job's API)
from multiref.util.errors import UserError
from multiref.util.location import is_remote
from pipelines.dailydialog.options import BuildOptions, DailyDialogJob, options_from_args  # noqa: F401  (job's API)

SPLITS = ("train", "validation", "test")
SAMPLE_DIR = os.path.join(os.path.dirname(os.path.abspath(dailydialog_pp.__file__)), "sample")

#: The composites of the graph, in order (``Corrupt`` only with ``--corruptions``).
STEPS = ("Read", "References", "Pairs", "Dedup", "Contexts", "Responses", "Split", "Negatives", "Corrupt", "Write",
         "WriteRejected", "WriteStats")


def _note(message: str) -> None:
    """A progress note on stderr, unless the user asked for ``--quiet`` (multiref.util.progress)."""
    from multiref.util import progress

    if not progress.quiet():
        print(f"[dailydialog] {message}", file=sys.stderr, flush=True)


def check_inputs(job: DailyDialogJob) -> None:
    """Check the releases ``job`` names by shape before anything runs (UserError naming the file)."""
    from dailydialog_pp import readers

    if job.dailydialog:
        readers.check_dailydialog_shape(job.dailydialog)
    if job.multiref_references:
        readers.check_multiref_shape(job.multiref_references)
    if job.ddpp:
        readers.check_ddpp_shape(job.ddpp)


def input_paths(job: DailyDialogJob) -> list:
    """The input files and folders ``job`` names (the bundled sample when none): an output
    may not be or hold one of them (:mod:`multiref.output.publish_target`)."""
    given = [p for p in (job.dailydialog, job.multiref_references, job.ddpp) if p]
    return given or [SAMPLE_DIR]


def read_sources(job: DailyDialogJob) -> dict:
    """Raw lines of the inputs named in ``job`` (the bundled sample when none is given)."""
    from dailydialog_pp import readers

    given = any([job.dailydialog, job.multiref_references, job.ddpp])
    if given and not job.dailydialog:
        raise UserError("--multiref-references and --ddpp need --dailydialog (the dialogues they refer to)")
    if not given:
        dd_dir = SAMPLE_DIR
        mr_path = os.path.join(SAMPLE_DIR, "multireftest.json")
        ddpp_dir = os.path.join(SAMPLE_DIR, "ddpp")
        names = {"dailydialog": "bundled sample", "multiref_references": "bundled sample", "ddpp": "bundled sample"}
    else:
        dd_dir, mr_path, ddpp_dir = job.dailydialog, job.multiref_references, job.ddpp
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




# --- the graph ----------------------------------------------------------------------------

def build_pipeline(p, source: dict, options: BuildOptions, folder: str):
    """Add the whole job to pipeline ``p`` (see the module docstring); its outputs are files
    in ``folder`` (local or remote). ``source``: as :func:`read_sources` returns it."""
    import apache_beam as beam

    from dailydialog_pp.schema import CONTEXTS, CORRUPTED, DDPP, MULTIREF
    from pipelines.dailydialog import transforms as t

    read = p | "Read" >> t.Read(source)
    references = ({"dialogues": read["dialogues"], "released": read["references"]}
                  | "References" >> t.References(options, have_release=source.get("multiref") is not None))
    pairs = read["dialogues"] | "Pairs" >> t.Pairs(options.text)
    deduped = read["dialogues"] | "Dedup" >> t.Dedup(options.dedup, options.near_duplicates)
    contexts = deduped["rows"] | "Contexts" >> t.Contexts(options.chunks, options.text)
    answered = {"contexts": contexts["rows"], "released": read["responses"]} | "Responses" >> t.Responses()
    split = answered["rows"] | "Split" >> t.Split(options.splits)
    ddpp = split["rows"] | "Negatives" >> t.Negatives(options.negatives)
    done = [read, references, pairs, deduped, contexts, answered, split, ddpp]
    lanes = {MULTIREF: references["rows"], DDPP: ddpp["rows"], CONTEXTS: pairs["rows"]}
    if options.corruptions:
        corrupted = ddpp["rows"] | "Corrupt" >> t.Corrupt(options.corruptions, options.seed)
        done.append(corrupted)
        lanes[CORRUPTED] = corrupted["rows"]
    splits = [(MULTIREF, s) for s in options.multiref_splits] + [(c, s) for c in lanes if c != MULTIREF for s in SPLITS]
    shards = lanes | "Write" >> t.Write(folder, splits)
    rejected = tuple(step["rejected"] for step in done) | "AllRejected" >> beam.Flatten()
    _ = rejected | "WriteRejected" >> t.WriteRejected(folder)
    counts = tuple(step["counts"] for step in done) | "AllCounts" >> beam.Flatten()
    base = {"inputs": source.get("inputs", {"dailydialog": "injected records"}), "options": options.card()}
    _ = {"counts": counts, "shards": shards} | "WriteStats" >> t.WriteStats(folder, base)
    return p


# --- the driver ---------------------------------------------------------------------------

def _output_folder(path: str) -> str:
    """``path`` made absolute when local (a ``gs://`` path is kept as given)."""
    if is_remote(path):
        return path.rstrip("/")
    folder = os.path.abspath(path)
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise UserError(f"--output is a file, expected a folder: {path}")
    return folder


def _clear_previous(folder: str) -> None:
    """Delete the parquet shards and dead letters an earlier run of this job left in
    ``folder`` (local or remote), so the folder holds this run's only; the card is replaced
    after the run."""
    from apache_beam.io.filesystems import FileSystems

    from dailydialog_pp.card import CONFIGS
    from multiref.beam.writer import join, matching

    old = [p for c in CONFIGS for p in matching(join(folder, c, "*.parquet"))]
    old += matching(join(folder, "rejected", "*.jsonl"))
    if old:
        FileSystems.delete(old)


def build(job: DailyDialogJob, config: BuildOptions, beam_args=(), *, source=None, options=None,
          folder: str | None = None) -> dict:
    """Run the whole job: the inputs ``job`` names, the options ``config``, Beam's flags
    (``beam_args``, or ready ``options``), writing into ``folder`` (default ``job.output``) in
    place. Returns the summary of :func:`finalize`, or
    ``{"output", "dry_run": True, "counters": {}}`` for a runner that only builds or draws
    the graph. UserError for a bad option, input or output."""
    import apache_beam as beam

    from pipelines.beam.runner import check_output_for_runner, pipeline_options, run_pipeline, runner_does_not_execute

    beam_options = options if options is not None else pipeline_options(list(beam_args))
    if config.corruptions:
        from dailydialog_pp.corruptions import check_nltk_data

        check_nltk_data(config.corruptions)
    folder = _output_folder(folder or job.output)
    check_output_for_runner(beam_options, folder)
    if source is None:
        _note("reading inputs")
        source = read_sources(job)
    inputs = source.get("inputs", {"dailydialog": "injected records"})
    _note("inputs: " + ", ".join(f"{k} = {v}" for k, v in sorted(inputs.items()) if v))
    executes = not runner_does_not_execute(beam_options)  # a dry run or a drawing writes nothing
    if executes:
        if not is_remote(folder):  # a direct call writes in place: only over this job's earlier output
            from multiref.output.publish_target import check_local

            check_local(folder, input_paths(job))
        _clear_previous(folder)
    _note("running the Beam pipeline: " + " -> ".join(s for s in STEPS if config.corruptions or s != "Corrupt"))
    p = beam.Pipeline(options=beam_options)
    build_pipeline(p, source, config, folder)
    run_pipeline(p)
    if not executes:
        return {"output": folder, "dry_run": True, "counters": {}}
    _note("writing the dataset card")
    return finalize(folder)


def finalize(folder: str) -> dict:
    """The card (``README.md``, ``dataset_meta.json``) from the ``stats.json`` the graph wrote
    in ``folder``; a note per empty split left out of it. Returns the summary: stats.json's
    values (``configs``: rows per config and split; ``counters``; ``inputs``; ``options``),
    ``output`` and ``dead_letters`` (``{reason: records}`` as written to ``rejected/``)."""
    from dailydialog_pp.card import card_configs, merged_meta
    from multiref.output import hfdata
    from multiref.beam.writer import join, matching, parquet_data_bytes, read_file, write_card

    stats = json.loads(read_file(join(folder, "stats.json")))
    infos, warnings = card_configs(stats)
    for warning in warnings:
        _note(warning)
    split_bytes = {info.name: {split: parquet_data_bytes(matching(join(folder, pattern)))
                               for split, pattern in info.files().items()} for info in infos}
    previous = read_file(join(folder, hfdata.META_FILE))
    meta = merged_meta(json.loads(previous) if previous is not None else None, list(stats["configs"]), infos,
                       split_bytes)
    if meta is not None:
        write_card(folder, meta)
    letters = {path.rsplit("/", 1)[-1][: -len(".jsonl")]: read_file(path).count(b"\n")
               for path in matching(join(folder, "rejected", "*.jsonl"))}
    return dict(stats, output=folder, dead_letters=letters)


def build_published(job: DailyDialogJob, config: BuildOptions, beam_args=(), *, options=None, source=None,
                    command: str = "multiref dailydialog build") -> dict:
    """The DailyDialog build (``multiref dailydialog build``, ``python -m pipelines.dailydialog.job``
    and :func:`run`): check the inputs and ``job.output`` (a foreign folder or one holding an
    input is refused: :mod:`multiref.output.publish_target`), build into a staging folder
    beside it and publish that whole (:mod:`multiref.output.publish`: at every instant the
    output is the complete old dataset or the complete new one). ``source`` injects raw
    records as for :func:`build`. Returns :func:`build`'s summary, naming the published folder."""
    from multiref.output import publish, published
    from pipelines.beam.runner import pipeline_options, runner_does_not_execute
    from multiref.util.files import require_writable

    check_inputs(job)
    require_writable(job.output, "--output")
    options = options if options is not None else pipeline_options(list(beam_args))
    target = _output_folder(job.output)
    if runner_does_not_execute(options):  # builds or draws the graph only: nothing to publish
        return dict(build(job, config, options=options, source=source, folder=target), output=target)
    with publish.publishing(target, command=command, inputs=input_paths(job)) as pub:
        summary = build(job, config, options=options, source=source, folder=pub.staging)
        if not is_remote(target):
            published.check_dataset(pub.staging)
    return dict(summary, output=target)


def run(argv=None, *, source=None) -> dict:
    """Build and publish (:func:`build_published`, as the CLI and ``python -m`` do): the flags
    of :func:`pipelines.dailydialog.options.dailydialog_pipeline_options` plus Beam's; ``source`` injects
    raw records (``{"dailydialog": [RawLine], "multiref": [...]|None, "ddpp": [...]|None}``).
    Returns :func:`build`'s summary."""
    options, job, config = _parse(argv)
    return build_published(job, config, options=options, source=source, command="python -m pipelines.dailydialog.job")


def _parse(argv) -> tuple:
    """``(Beam options, DailyDialogJob, BuildOptions)`` of the job's command line ``argv``."""
    from pipelines.beam.runner import pipeline_options
    from pipelines.dailydialog.options import dailydialog_pipeline_options, job_from_args

    argv = [a for a in (sys.argv[1:] if argv is None else argv) if a != "--"]
    options = pipeline_options(argv)
    job, config = job_from_args(options.view_as(dailydialog_pipeline_options()))
    if not job.output:
        raise UserError("--output FOLDER is required")
    return options, job, config


def main(argv=None) -> int:
    """``python -m pipelines.dailydialog.job``: build and publish like the CLI; print the rows
    per config and split as JSON."""
    try:
        options, job, config = _parse(argv)
        summary = build_published(job, config, options=options, command="python -m pipelines.dailydialog.job")
    except UserError as exc:
        print(f"multiref: error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(summary.get("configs", {}), sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
