"""``bench_testset.py --dataset FOLDER`` and ``--realistic-month N``: the test-set stage on a real
corpus folder, as the user runs it, measured as a process tree step by step.

``--dataset FOLDER``: the corpus folder (written by ``multiref lsdscc build --skip-testset``) is
copied into the work folder (the stage rewrites its corpus in place and keeps its build cache
beside it, so every run starts from the same bytes and an empty cache), then
``multiref lsdscc testset --dataset COPY`` runs in a child process with the stage options given
to the benchmark (default: the stage's). ``--realistic-month N``: first a realistic month of N
r/movies comments (:func:`lsdscc.synthetic.dumps.write_month`, ``text="realistic"``, seed
``--month-seed``: the month ``bench_corpus.py --text realistic --comments N`` builds) is written
and built with ``multiref lsdscc build --skip-testset`` (measured the same way); with ``--keep``
the month is kept and reused by the next run with the same N and seed.

Each child is measured with :func:`multiref.util.process_tree.run_sampled`: whole-process wall
and CPU seconds and the largest process's peak RSS (``os.wait4``), the peak of the whole
process tree's RSS (sampled from ``/proc``; the JVM runs inside the stage's process), and per
step (cut at the stage's progress lines on standard error) wall, CPU and peak tree RSS. Also
the disk: the month, the corpus folder, the build cache the stage leaves (Lucene index,
Doc2Vec model, the corpus before leak removal).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_P = r"^\[lsdscc testset\] "
#: the stage's steps, each ended by its progress line (pipelines/lsdscc/testset.py); then "rest": publishing
STAGE_STEPS = (
    ("start_up", _P + r"snapshot of the corpus"),
    ("snapshot_and_read_corpus", _P + r"[\d,]+ pairs, [\d,]+ distinct queries"),
    ("lucene_index", _P + r"(indexed [\d,]+ queries with Lucene|reused Lucene index)"),
    ("lucene_search", _P + r"retrieved top"),
    ("doc2vec_select_and_train", _P + r"(trained|reused) Doc2Vec"),
    ("rerank_assemble_write", _P + r"wrote [\d,]+ test queries"),
    ("leak_removal", _P + r"removed the test pairs"),
)
MONTH_MARKER = "month.json"  # beside the month, not in it (the build would read a .json as a dump)


def check_corpus_args(parser, args) -> None:
    """``parser.error`` (exit 2) for flags that do not go with ``--dataset``/``--realistic-month``."""
    if args.overlap is not None:
        parser.error("--overlap runs on generated pairs: not with --dataset or --realistic-month")
    if args.dataset is not None and not os.path.isdir(os.path.join(args.dataset, "single_turn")):
        parser.error(f"--dataset {args.dataset}: not a corpus folder (no single_turn/ in it; build one with "
                     "`multiref lsdscc build --skip-testset`)")
    if args.sample_interval <= 0:
        parser.error(f"--sample-interval wants a positive number of seconds, got {args.sample_interval}")
    if args.keep and args.dataset and os.path.realpath(args.keep) == os.path.realpath(args.dataset):
        parser.error("--keep must not be the --dataset folder (the benchmark works on a copy)")


def stage_flags(configs) -> list:
    """The ``multiref lsdscc testset`` flags that give the stage ``configs`` (its three configs)."""
    from multiref.util.options import recorded, to_argv

    return [token for config in configs for token in to_argv(type(config), recorded(config))[0]]


def _env() -> dict:
    path = os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


def _measured(argv: list, interval: float, marks=()) -> dict:
    """``argv`` in a measured child; SystemExit with its stderr's end if it failed."""
    from multiref.util.process_tree import run_sampled

    child = run_sampled(argv, cwd=ROOT, marks=marks, interval=interval, env=_env())
    if child["returncode"] != 0:
        raise SystemExit(f"{shlex.join(argv[2:5])} failed (exit {child['returncode']}):\n{child['stderr'][-3000:]}")
    return child


def folder_mb(path: str) -> float:
    """Megabytes of the files under ``path`` (0 if it does not exist)."""
    total = 0
    for root, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, name)) for name in files)
    return round(total / 2**20, 1)


def _figures(child: dict) -> dict:
    """The measured figures of a child, rounded (seconds to 0.1, MB to 1)."""
    steps = [{"name": s["name"], "seconds": round(s["seconds"], 1), "cpu_seconds": round(s["cpu_seconds"], 1),
              "peak_tree_rss_mb": round(s["peak_tree_rss_mb"])} for s in child["steps"]]
    return {"process_seconds": round(child["process_seconds"], 1), "cpu_seconds": round(child["cpu_seconds"], 1),
            "peak_rss_mb": round(child["peak_rss_mb"]), "peak_tree_rss_mb": round(child["peak_tree_rss_mb"]),
            "steps": steps}


def realistic_month(work: str, comments: int, seed: int) -> dict:
    """The month in ``work/month`` (reused when its marker says same N and seed): its files and size."""
    from lsdscc.synthetic.dumps import write_month

    folder, wanted = os.path.join(work, "month"), {"comments": comments, "seed": seed, "text": "realistic"}
    marker = os.path.join(work, MONTH_MARKER)
    if os.path.exists(marker):
        with open(marker, encoding="utf-8") as fh:
            if json.load(fh) == wanted:
                print(f"reusing the month in {folder}", file=sys.stderr)
                return {"folder": folder, "generate_seconds": None, "zstd_mb": folder_mb(folder), "reused": True}
    shutil.rmtree(folder, ignore_errors=True)
    if os.path.exists(marker):
        os.remove(marker)
    start = time.perf_counter()
    write_month(folder, comments, seed=seed, text="realistic")
    seconds = time.perf_counter() - start
    with open(marker, "w", encoding="utf-8") as fh:
        json.dump(wanted, fh)
    print(f"generated a realistic month of {comments:,} comments in {seconds:.0f}s", file=sys.stderr)
    return {"folder": folder, "generate_seconds": round(seconds, 1), "zstd_mb": folder_mb(folder), "reused": False}


def build_corpus(work: str, args) -> tuple:
    """``--realistic-month``: the month built by ``multiref lsdscc build --skip-testset``; returns
    ``(corpus folder, report)``."""
    month = realistic_month(work, args.realistic_month, args.month_seed)
    corpus = os.path.join(work, "corpus")
    for stale in (corpus, corpus + ".cache"):
        shutil.rmtree(stale, ignore_errors=True)
    argv = [sys.executable, "-m", "multiref_cli", "lsdscc", "build", "--input", month["folder"], "--output", corpus,
            "--skip-testset", *shlex.split(args.build_flags)]
    child = _measured(argv, args.sample_interval)
    print(f"built the corpus: {child['process_seconds']:.1f}s wall, {child['cpu_seconds']:.1f}s CPU, peak tree RSS "
          f"{child['peak_tree_rss_mb']:,.0f} MB", file=sys.stderr)
    report = {"comments": args.realistic_month, "seed": args.month_seed, "month": month,
              "command": shlex.join(["multiref", *argv[3:]]), **_figures(child), "corpus_mb": folder_mb(corpus),
              "summary": child["stdout"].strip().splitlines()[:8]}
    return corpus, report


def run_stage(corpus: str, work: str, configs, interval: float) -> dict:
    """``multiref lsdscc testset`` on a copy of ``corpus`` with an empty build cache, measured."""
    copy = os.path.join(work, "stage")
    for stale in (copy, copy + ".cache"):
        shutil.rmtree(stale, ignore_errors=True)
    start = time.perf_counter()
    shutil.copytree(corpus, copy, ignore=shutil.ignore_patterns("artifacts"))
    copy_seconds = time.perf_counter() - start
    argv = [sys.executable, "-m", "multiref_cli", "lsdscc", "testset", "--dataset", copy, *stage_flags(configs)]
    child = _measured(argv, interval, STAGE_STEPS)
    counts = json.loads(child["stdout"])
    return {"command": shlex.join(["multiref", *argv[3:]]), "copy_seconds": round(copy_seconds, 1),
            **_figures(child), "counts": counts, "corpus_mb": folder_mb(corpus),
            "dataset_after_mb": folder_mb(copy), "build_cache_mb": folder_mb(copy + ".cache"),
            "cache_parts_mb": {name: folder_mb(os.path.join(copy + ".cache", name))
                               for name in sorted(os.listdir(copy + ".cache"))}}


def corpus_stage(args, configs) -> dict:
    """The report of ``--dataset``/``--realistic-month`` (module docstring)."""
    work = args.keep or tempfile.mkdtemp(prefix="bench-testset-corpus-")
    os.makedirs(work, exist_ok=True)
    load = os.getloadavg()
    report = {"cpus": os.cpu_count(), "load_average_before": [round(x, 2) for x in load],
              "options": {"retrieval": configs[0].options(), "doc2vec": configs[1].options(),
                          "sampling": configs[2].options()}}
    try:
        corpus = args.dataset
        if corpus is None:
            corpus, report["corpus_build"] = build_corpus(work, args)
        report["dataset"] = corpus
        report["stage"] = run_stage(corpus, work, configs, args.sample_interval)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    print_summary(report)
    return report


def print_summary(report: dict) -> None:
    """A table of the stage's steps on standard error."""
    stage, counts = report["stage"], report["stage"]["counts"]
    print(f"\ntest-set stage on {counts.get('corpus_pairs', 0):,} pairs ({counts.get('corpus_queries', 0):,} distinct "
          f"queries; Doc2Vec on {counts.get('doc2vec_trained_sentences', 0):,} of "
          f"{counts.get('doc2vec_corpus_sentences', 0):,} sentences, sampled: {counts.get('doc2vec_sampled')})",
          file=sys.stderr)
    print("| step | wall s | CPU s (sampled) | peak tree RSS MB (sampled) |\n| --- | --- | --- | --- |", file=sys.stderr)
    for step in stage["steps"]:
        print(f"| {step['name']} | {step['seconds']:,.1f} | {step['cpu_seconds']:,.1f} | "
              f"{step['peak_tree_rss_mb']:,} |", file=sys.stderr)
    print(f"| whole process | {stage['process_seconds']:,.1f} | {stage['cpu_seconds']:,.1f} (wait4) | "
          f"{stage['peak_tree_rss_mb']:,} (largest process {stage['peak_rss_mb']:,}) |", file=sys.stderr)
    print(f"disk: corpus {stage['corpus_mb']:,} MB, build cache {stage['build_cache_mb']:,} MB; load average "
          f"{report['load_average_before']} before, {report['load_average_after']} after", file=sys.stderr)
