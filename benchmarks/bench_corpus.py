"""Benchmark: the LSDSCC corpus pipeline on a generated dump of N comments.

For each size, in a fresh process: generate a dump with lsdscc.sample_gen (zstd JSON lines,
submissions + comments), run the whole Beam pipeline on it, and report comments/second and
peak memory of the whole process tree (sampled from /proc every 0.2 s: this process plus
every descendant, e.g. the multi_processing workers; ru_maxrss of self and children is
printed too). Beside it, in the same process, a plain single-process loop over the same
per-comment functions (read + parse + normalize + clean steps 1-4 + tokenize).

The pipeline runs with its defaults (``--num-shards auto``: one thread bucket per
``--bucket-mb`` of estimated uncompressed input, so each phase holds one bucket at a time);
extra flags (``--bucket-mb 16``, Beam flags) are passed to it. With several sizes the peak
memory ratio largest/smallest is printed: the target is about 1 (memory not growing with
input).

    .venv/bin/python benchmarks/bench_corpus.py                       # 1,000,000 comments
    .venv/bin/python benchmarks/bench_corpus.py --sizes 100000 1000000 --json out/bench_corpus.json

Targets (issue #3): whole pipeline >= 5,000 comments/s; peak memory not growing with input.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def _tree_rss(root_pid: int) -> int:
    """Resident memory (bytes) of ``root_pid`` and all its descendants, from /proc."""
    children: dict[int, list] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            ppid = int(fields[1])
            with open(f"/proc/{name}/statm") as fh:
                rss[int(name)] = int(fh.read().split()[1]) * page
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(name))
    total, stack = 0, [root_pid]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack += children.get(pid, [])
    return total


class PeakSampler:
    def __init__(self, interval: float = 0.2):
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, _tree_rss(os.getpid()))
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _tree_rss(os.getpid()))


def baseline(paths, config) -> tuple[int, float]:
    """The plain loop: every record read, normalized, cleaned and tokenized; (comments, seconds)."""
    from lsdscc import records, sources
    from lsdscc.cleaning import clean_and_tokenize

    start = time.perf_counter()
    comments = 0
    for path in paths:
        for item in sources.read_items(path):
            if item[0] != "ok":
                continue
            post = records.normalize(item[2], config)
            if item[2].get("body") is not None:
                comments += 1
            if isinstance(post, records.Post):
                clean_and_tokenize(post.text, config.tokenizer, config.lowercase)
    return comments, time.perf_counter() - start


def one(size: int, beam_args: list, workdir: str) -> dict:
    from lsdscc.config import CorpusConfig
    from lsdscc.sample_gen import write_dump
    from pipelines.lsdscc_corpus import run

    t0 = time.perf_counter()
    paths, submissions = write_dump(os.path.join(workdir, "dump"), size, files=4)
    gen_s = time.perf_counter() - t0
    out = os.path.join(workdir, "out")
    with PeakSampler() as sampler:
        t0 = time.perf_counter()
        summary = run(["--input", os.path.join(workdir, "dump"), "--output", out] + beam_args, quiet=True)
        pipe_s = time.perf_counter() - t0
    self_max = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    child_max = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    base_n, base_s = baseline(paths, CorpusConfig())
    return {
        "comments": size,
        "submissions": submissions,
        "generate_seconds": round(gen_s, 1),
        "pipeline_seconds": round(pipe_s, 1),
        "pipeline_comments_per_second": round(size / pipe_s),
        "peak_tree_rss_mb": round(sampler.peak / 2**20),
        "ru_maxrss_self_mb": round(self_max / 2**20),
        "ru_maxrss_children_mb": round(child_max / 2**20),
        "baseline_seconds": round(base_s, 1),
        "baseline_comments_per_second": round(base_n / base_s),
        "single_turn": summary["splits"]["single_turn"],
        "multi_turn": summary["splits"]["multi_turn"],
        "num_shards": summary["stats"]["options"]["num_shards"],
        "dump_mb": round(sum(os.path.getsize(p) for p in paths) / 2**20, 1),
        "beam_args": beam_args,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--json", default=None, help="also write the results here")
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    args, beam_args = parser.parse_known_args(argv)
    # Default: the in-process FnApiRunner (on a loaded 2-core machine it matched
    # --direct_num_workers 2 --direct_running_mode multi_processing at a third of the memory).
    if args.one is not None:
        with tempfile.TemporaryDirectory(prefix="bench-corpus-") as tmp:
            print(json.dumps(one(args.one, beam_args, tmp)))
        return 0
    results = []
    for size in args.sizes:  # a fresh process per size, so peaks are comparable
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", str(size)] + beam_args,
                              capture_output=True, text=True, cwd=ROOT)
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            return proc.returncode
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        results.append(result)
        print(
            f"{size:>9,} comments: pipeline {result['pipeline_comments_per_second']:,}/s "
            f"({result['pipeline_seconds']}s, {result['num_shards']} buckets), "
            f"peak tree RSS {result['peak_tree_rss_mb']:,} MB; "
            f"baseline loop {result['baseline_comments_per_second']:,}/s; "
            f"single_turn {sum(result['single_turn'].values()):,} rows",
            flush=True,
        )
    if len(results) > 1:
        small = min(results, key=lambda r: r["comments"])
        large = max(results, key=lambda r: r["comments"])
        ratio = large["peak_tree_rss_mb"] / max(small["peak_tree_rss_mb"], 1)
        print(f"peak memory {large['comments']:,} vs {small['comments']:,} comments: "
              f"{large['peak_tree_rss_mb']:,} MB / {small['peak_tree_rss_mb']:,} MB = {ratio:.2f}x "
              f"(input {large['comments'] / small['comments']:.0f}x)", flush=True)
        results.append({"peak_memory_ratio": round(ratio, 2)})
    if args.json:
        os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
