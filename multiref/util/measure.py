"""A build measured in a child process, for the benchmarks (``benchmarks/bench_corpus.py``) and their tests.

Each build runs ``bench_corpus.py --child-build`` in its own process, reaped with
``os.wait4``: its CPU seconds (user + sys) and peak RSS are that child's alone (including the
worker processes it started and waited for), never mixed with an earlier build or the
parent's baseline. Also here: the output folder's digests (to check two builds wrote the
same bytes) and the memory slope between two sizes.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

# Files of the output that may legitimately differ between two builds of the same input.
# The corpus job writes none (no timings, dates or host names): every file is compared.
VOLATILE_FILES: frozenset = frozenset()


def run_child(argv: list, cwd: str) -> dict:
    """Runs ``argv``; returns its exit code, stdout, stderr, wall seconds, CPU seconds, peak RSS (MB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        out.seek(0)
        err.seek(0)
        return {
            "returncode": proc.returncode, "stdout": out.read().decode("utf-8", "replace"),
            "stderr": err.read().decode("utf-8", "replace"), "process_seconds": wall,
            "cpu_seconds": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024,  # KiB on Linux
        }


def measure_build(script: str, folder: str, out: str, extra: list, cwd: str) -> dict:
    """``script --child-build folder out extra...``: run() seconds, rows, and the child's
    whole-process seconds, CPU seconds and peak RSS. SystemExit with its stderr if it failed."""
    child = run_child([sys.executable, script, "--child-build", folder, out] + list(extra), cwd)
    if child["returncode"] != 0:
        raise SystemExit(f"the build failed (exit {child['returncode']}):\n{child['stderr'][-3000:]}")
    result = json.loads(child["stdout"].strip().splitlines()[-1])
    result.update({k: child[k] for k in ("process_seconds", "cpu_seconds", "peak_rss_mb")})
    return result


def output_digests(folder: str) -> dict:
    """``{relative path: sha256}`` of every file under ``folder`` but :data:`VOLATILE_FILES`."""
    digests = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, folder)
            if rel in VOLATILE_FILES:
                continue
            sha = hashlib.sha256()
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    sha.update(block)
            digests[rel] = sha.hexdigest()
    return digests


def differing_files(first: dict, second: dict) -> list:
    """Relative paths whose digests differ or that only one of two :func:`output_digests` has."""
    return sorted(p for p in set(first) | set(second) if first.get(p) != second.get(p))


def memory_slope_kb(small: dict, large: dict) -> float:
    """KB of peak RSS per extra comment between two builds (``comments`` and ``peak_rss_mb`` keys)."""
    extra = large["comments"] - small["comments"]
    if extra <= 0:
        raise ValueError(f"the sizes must grow: {small['comments']:,} then {large['comments']:,} comments")
    return (large["peak_rss_mb"] - small["peak_rss_mb"]) * 1024 / extra


def load_average() -> str:
    """The 1, 5 and 15 minute load averages as text (the machine may be shared)."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())
