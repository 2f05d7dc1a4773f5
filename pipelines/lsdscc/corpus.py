"""The LSDSCC corpus pipeline (docs/algorithms.md#1-lsdscc-corpus): one Apache Beam graph.

Reddit dump files (Pushshift / Arctic Shift schema; plain, .gz or .zst JSON lines, or a
BigQuery-style JSON array) -> a Hugging Face dataset folder with configs ``single_turn``
and ``multi_turn`` (train + validation), ``rejected/`` dead letters, ``stats.json``, plots
and the dataset card. The graph, one composite per step of the paper
(:mod:`pipelines.lsdscc.transforms`)::

    Read -> Threads (grouped by link id) -> Clean -> Vocabulary (a combiner, applied as a
    side input) -> Pairs + Conversations (rows packed per thread) -> Dedup (grouping of the
    content keys alone; per thread, a notice of its duplicates) -> Split (hash of the thread id)
    -> Write (multiref.beam.writer: shard = hash of the thread id, grouped by shard,
    unpacked without the duplicates, sorted, temporary name then rename)

On the local runner (and the portable runner with ``--job_endpoint embed``) the three groupings
and the cleaned threads waiting for the vocabulary pass through spill files
(:mod:`multiref.beam.spill`) in ``<output>/.spill-<random>/`` (in the local temporary folder for a
``gs://`` output on the local runner), removed when the job ends,
whether it succeeded or failed: that runner would hold them in memory, several times over.
Dataflow, Flink and Spark get plain ``GroupByKey`` s (their shuffles spill by themselves).

Drops are counted as data, summed by a combiner and written with the other figures to
``stats.json`` by the graph; the driver then draws the plots and writes the card from it.
So the folder is byte-identical on every runner. Draw the graph without running it::

    python -m pipelines.lsdscc.corpus --runner apache_beam.runners.render.RenderRunner \\
        --render_output graph.dot

Run locally (the offline FnApiRunner; ``--workers auto``, the default, runs it in one process
per core, at most 4, from about 100 MB of uncompressed input, each worker reading its part of
every file, and ``--workers N`` chooses; or Beam's portable runner with ``--runner
PortableRunner --job_endpoint embed --environment_type LOOPBACK``)::

    python -m pipelines.lsdscc.corpus --input 'dumps/RC_2017-*.zst' --input dumps/RS_2017-01.zst \\
        --output out/lsdscc

or the same through ``multiref lsdscc build``. On Google Cloud Dataflow (input and output
on GCS; workers install this package from setup.py)::

    python -m pipelines.lsdscc.corpus --input 'gs://BUCKET/reddit/R[CS]_2017-*.zst' \\
        --output gs://BUCKET/lsdscc --runner DataflowRunner --project PROJECT \\
        --region us-central1 --temp_location gs://BUCKET/tmp --setup_file ./setup.py
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time

from lsdscc.corpus.config import CorpusConfig
from multiref.util.location import is_remote
from pipelines.lsdscc.options import resolve_num_shards, resolve_workers

#: The composites of the graph, in order: the steps of docs/algorithms.md#1-lsdscc-corpus.
STEPS = ("Read", "Threads", "Clean", "Vocabulary", "Pairs", "Conversations", "Dedup", "Split", "Write")


def build_pipeline(p, config: CorpusConfig, folder: str, inputs=(), source=None, input_names=(), read_parts=1,
                   spill=None, verify=None):
    """Add the whole corpus job to pipeline ``p`` (see the module docstring); ``read_parts``:
    workers reading each input file (:class:`pipelines.lsdscc.read.Read`); ``spill``: a folder
    the caller owns and removes (:func:`multiref.beam.spill.spill_folder`) for the
    groupings' spill files, or None for the runner's own GroupByKey; ``verify``: ``(hashes,
    hashes file)`` for ``--verify-hashes`` (digests compared while reading)."""
    import apache_beam as beam

    from lsdscc.corpus import outputs
    from multiref.beam import writer as bw
    from pipelines.lsdscc import releases as r
    from pipelines.lsdscc import transforms as t

    read = p | "Read" >> t.Read(config, inputs, source, parts=read_parts, verify=verify)
    resolved = read["posts"] | "Threads" >> t.Threads(spill)
    threads, extra_counts = resolved, []
    if config.since is not None or config.until is not None:  # the whole thread, by its submission's time
        threads = resolved["threads"] | "TimeRange" >> r.TimeRange(config.since, config.until)
        extra_counts.append(threads["counts"])
    cleaned = threads["threads"] | "Clean" >> t.Clean(config)
    vocabulary = cleaned | "Vocabulary" >> t.Vocabulary(config, spill)
    pairs = vocabulary["threads"] | "Pairs" >> t.Pairs(config)
    conversations = vocabulary["threads"] | "Conversations" >> t.Conversations(config)
    # One lane per config from here to the writer: a Flatten would be materialized locally.
    lanes = {"single_turn": pairs, "multi_turn": conversations}
    deduped = ({c: {"rows": lane["rows"], "keys": lane["keys"]} for c, lane in lanes.items()}
               | "Dedup" >> t.Dedup(spill))
    splits = [(c, s) for c in outputs.CONFIGS for s in outputs.SPLITS
              if not (s == "validation" and config.validation_fraction == 0)]
    shards = (deduped["rows"]
              | "Split" >> t.Split(config.validation_fraction)
              | "Write" >> bw.WriteShards(folder, {c: outputs.schema(c) for c in outputs.CONFIGS}, splits,
                                          config.num_shards, finish=t.finish_shard, summarize=t.summarize_shard,
                                          unpack=t.unpack_shard, spill=spill))
    _ = ((read["rejected"], resolved["rejected"])
         | "AllRejected" >> beam.Flatten()
         | "CollectRejected" >> beam.combiners.ToList()
         | "WriteRejected" >> beam.Map(lambda letters: bw.write_file(
             bw.join(folder, "rejected", "rejected.jsonl"), t.rejected_jsonl(letters))))
    counts = ([read["counts"], resolved["counts"], pairs["counts"], conversations["counts"], deduped["counts"]]
              + extra_counts | "AllCounts" >> beam.Flatten() | "SumCounts" >> beam.CombineGlobally(bw.SumCounts()))
    schema = read["schema"] | "MergeSchema" >> beam.CombineGlobally(r.MergeSchema())
    options, names = config.as_options(), list(input_names)

    def write_stats(_, counts, vocabulary, lengths, shards, schema, files):
        stats = outputs.build_stats(options, names, counts, vocabulary, lengths, [tuple(s) for s in shards],
                                    schema=schema, files=r.sorted_files(files))
        bw.write_file(bw.join(folder, "stats.json"), outputs.stats_json(stats))

    _ = (p | "StatsTrigger" >> beam.Create([None])
         | "WriteStats" >> beam.Map(write_stats, beam.pvalue.AsSingleton(counts),
                                    beam.pvalue.AsSingleton(vocabulary["summary"]),
                                    beam.pvalue.AsSingleton(pairs["lengths"]), beam.pvalue.AsList(shards),
                                    beam.pvalue.AsSingleton(schema), beam.pvalue.AsList(read["files"])))
    return p


def _run_with_gc_tuned(p):
    """Run and wait with a higher gen-0 GC threshold (restored afterwards): the steps hold
    many small tuples, and at Python's default threshold the cyclic collector keeps
    rescanning them. Nothing here makes reference cycles that rely on prompt collection."""
    import gc

    from pipelines.beam.runner import run_pipeline
    from pipelines.lsdscc.read import GC_THRESHOLD

    old = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLD)
    try:
        result = run_pipeline(p)
    finally:
        gc.set_threshold(*old)
    return result


def _log(message: str, quiet: bool) -> None:
    """A note on stderr, unless ``quiet`` or the user asked for ``--quiet`` (multiref.util.progress)."""
    from multiref.util import progress

    if not (quiet or progress.quiet()):
        print(f"[lsdscc] {message}", file=sys.stderr, flush=True)


def run(argv=None, *, source=None, quiet: bool = False, check: bool = False) -> dict:
    """Build the corpus and publish it whole: :func:`build` without the test set. ``argv``: our
    flags (:func:`pipelines.lsdscc.options.corpus_pipeline_options`) plus any Beam flags;
    ``source``: in-memory records instead of files. ``check=True`` (``python -m``) checks the
    folder as ``multiref lsdscc build --skip-testset`` does, which it then equals byte for
    byte; ``False`` publishes whatever the job wrote, an empty corpus included. Returns
    :func:`build`'s summary."""
    from pipelines.beam.runner import pipeline_options
    from pipelines.lsdscc.options import corpus_from_args, corpus_pipeline_options

    options = pipeline_options(list(sys.argv[1:] if argv is None else argv))
    job, corpus = corpus_from_args(options.view_as(corpus_pipeline_options()))
    return build(job, corpus, options=options, source=source, quiet=quiet, check=check)


def build(job, corpus, beam_args=(), *, options=None, testset=None, source=None, quiet: bool = False,
          check: bool = True, command: str = "python -m pipelines.lsdscc.corpus") -> dict:
    """The whole LSDSCC build (``multiref lsdscc build`` and ``python -m pipelines.lsdscc.corpus``):
    the corpus (:func:`run_parsed`) into a staging folder beside ``job.output``, checked,
    then the test set when ``testset`` (a :class:`pipelines.lsdscc.testset_options.TestsetJob`) is
    given (:func:`pipelines.lsdscc.publish.testset_into`), the previous dataset's annotations
    carried over, and the folder published whole (:mod:`multiref.output.publish`: a foreign
    folder or one holding an input is refused, the old dataset kept on any failure).
    ``job``: a :class:`pipelines.lsdscc.options.CorpusJob`, ``corpus``: the
    :class:`lsdscc.corpus.config.CorpusConfig` (:func:`pipelines.lsdscc.options.corpus_from_args`
    builds both from parsed flags); Beam's flags as ``beam_args`` or ready ``options``.
    ``check=False`` skips the checks of :func:`pipelines.lsdscc.publish.finish` (no test set then).

    Returns ``{"output", "counts", "splits", "stats"}`` plus ``"testset"`` (the stage's
    counts) when it ran; ``{"output", "dry_run": True, ...}`` when the runner only builds or
    draws the graph (nothing written, no lock). UserError for a bad option, input or output.
    """
    from multiref.output import publish, publish_target
    from pipelines.beam.runner import pipeline_options, runner_does_not_execute
    from multiref.util.errors import UserError

    from lsdscc.corpus.sources import default_inputs

    options = options if options is not None else pipeline_options(list(beam_args))
    target = job.output
    if testset is not None and not check:
        raise ValueError("the test set is built over a checked corpus: check=False needs testset=None")
    if is_remote(target) and testset is not None:
        raise UserError(f"the test-set stage needs a local corpus folder, not {target}: build with --skip-testset, "
                        "copy the folder locally and run `multiref lsdscc testset --dataset FOLDER`")
    inputs = [] if source is not None else list(job.input or default_inputs())
    if runner_does_not_execute(options):  # a dry run or a drawing writes nothing: no lock, no staging
        if not is_remote(target):
            publish_target.check_local(target, inputs)
        return run_parsed(job, corpus, None, source=source, quiet=quiet, options=options)
    with publish.publishing(target, command=command, inputs=inputs) as pub:
        summary = _build_into(pub, (job, corpus), options, testset, source, quiet, check)
    return dict(summary, output=target)


def _build_into(pub, configs: tuple, options, testset, source, quiet: bool, check: bool) -> dict:
    """:func:`build` inside the publication ``pub``: the corpus (``configs``: its job and
    config), its checks, the test set."""
    from pipelines.lsdscc import publish as lsdscc_publish

    summary = run_parsed(*configs, None, source=source, quiet=quiet, options=options, folder=pub.staging)
    if is_remote(pub.target):  # a remote dataset: no test set, checked by its manifest
        return summary
    if check:  # before the stage starts
        from multiref.output import published

        published.check_dataset(pub.staging, required=list(lsdscc_publish.REQUIRED))
    if testset is not None:
        _log("building the multi-reference test set", quiet)
        summary["testset"] = lsdscc_publish.testset_into(pub, testset)
    splits = lsdscc_publish.finish(pub, check=check)
    if splits is not None:
        summary["splits"] = splits
    return summary


def run_parsed(job, corpus, beam_args, *, source=None, quiet: bool = False, options=None, folder=None) -> dict:
    """The corpus job, written in place into ``folder`` (default ``job.output``; no
    publishing: :func:`build` publishes), for the configs ``job`` and ``corpus`` (as
    :func:`build` takes them) and Beam's flags (``beam_args``, or ready ``options``)."""
    import dataclasses

    import logging

    import apache_beam as beam

    from lsdscc.corpus import outputs, sources
    from multiref.util.errors import UserError
    from multiref.beam.spill import spill_folder
    from pipelines.beam.runner import (check_output_for_runner, is_local_runner, pipeline_options,
                                            runner_does_not_execute, shuffles_in_memory, spill_parent,
                                            use_local_workers)

    logging.getLogger("apache_beam").setLevel(logging.WARNING)
    options = options if options is not None else pipeline_options(list(beam_args or []))
    folder = folder or job.output
    inputs = [] if source is not None else sources.resolve_inputs(list(job.input) or sources.default_inputs())
    verify = None
    if job.verify_hashes:  # listed before the job; digests compared while reading; a mismatch publishes nothing
        from lsdscc.corpus.provenance import check_listed

        if source is not None:
            raise UserError("--verify-hashes checks input files; none are given (in-memory records)")
        _log(f"checking {len(inputs)} input file(s) against {job.verify_hashes} while reading them", quiet)
        verify = (check_listed(inputs, job.verify_hashes), job.verify_hashes)
    executes = not runner_does_not_execute(options)
    # --num-shards auto sizes remote inputs by listing them, except in a dry run (no network)
    config = dataclasses.replace(corpus, num_shards=resolve_num_shards(job.num_shards, inputs, source,
                                                                       list_remote=executes))
    check_output_for_runner(options, folder)
    workers = resolve_workers(job.workers, inputs, source, local=is_local_runner(options))
    if executes:
        outputs.prepare_folder(folder)
    _log(f"{len(inputs) or 'in-memory'} input file(s), subreddits {list(config.subreddits)}, output {folder}, "
         f"{config.num_shards} shard(s) per split", quiet)
    _log("running the Beam pipeline: " + " -> ".join(STEPS), quiet)
    started = time.time()
    if use_local_workers(options, workers):
        _log(f"{workers} local worker processes (--workers)", quiet)
    spills = shuffles_in_memory(options)  # other runners' shuffles spill to disk by themselves
    with spill_folder(spill_parent(folder, options), remove=executes and spills) as spill:  # removed either way
        p = beam.Pipeline(options=options)
        build_pipeline(p, config, folder, inputs, source, [os.path.basename(i) for i in inputs], read_parts=workers,
                       spill=spill if spills else None, verify=verify)
        _run_with_gc_tuned(p)
    if not executes:
        return {"output": folder, "dry_run": True, "counts": {}, "splits": {}}
    _log(f"pipeline done in {time.time() - started:.1f}s; writing plots and the dataset card", quiet)
    return finalize(folder, quiet=quiet, verified=verify is not None)


def finalize(folder: str, quiet: bool = False, verified: bool = False) -> dict:
    """Plots and dataset card from the ``stats.json`` the pipeline wrote; the summary.
    ``verified``: ``--verify-hashes`` was given: a file whose digest is not the listed one
    is a UserError here, before anything else is written (the build publishes nothing)."""
    from lsdscc.corpus import outputs
    from lsdscc.corpus.provenance import hash_problems
    from multiref.util.errors import UserError

    from apache_beam.io.filesystems import FileSystems

    with FileSystems.open(outputs.join(folder, "stats.json")) as fh:
        stats = json.loads(fh.read())
    problems = hash_problems(stats.get("files") or []) if verified else []
    if problems:  # what the job wrote from a file that is not the listed one is removed
        if not outputs.is_remote(folder):
            outputs.clear_folder(folder)
        raise UserError(problems[0] + (f" (and {len(problems) - 1} more file(s))" if len(problems) > 1 else ""))
    outputs.plot_all(folder, stats)
    outputs.write_cards(folder, stats, warn=lambda m: print(m, file=sys.stderr))
    return {"output": folder, "counts": stats["counts"], "splits": stats["splits"], "stats": stats}


def main(argv=None) -> int:
    """``python -m pipelines.lsdscc.corpus``: also takes ``--quiet`` (no notes, no progress)
    and ``--progress`` (progress on stderr even when it is not a terminal)."""
    from multiref.util import progress
    from multiref.util.errors import UserError

    argv = list(sys.argv[1:] if argv is None else argv)
    flags = {flag: flag in argv for flag in ("--quiet", "--progress")}
    argv = [a for a in argv if a not in flags]
    try:
        mode = progress.configured(quiet=flags["--quiet"], force=flags["--progress"]) if any(flags.values()) else None
        with mode or contextlib.nullcontext():
            summary = run(argv, check=True)
    except UserError as exc:
        print(f"multiref: error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(summary.get("splits", {}), sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
