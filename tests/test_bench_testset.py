"""The test-set benchmark's parts: a child measured as a process tree, step by step
(:mod:`multiref.util.process_tree`), and the benchmark's own flags for a real corpus
(``--dataset``, ``--realistic-month``), through its command line (tests do not import benchmarks)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from multiref.util.process_tree import descendants, run_sampled, steps_of, tree_usage
from tests.helpers import REPO_DIR

# The child holds 150 MB itself and starts a grandchild that holds 150 MB more at the same time;
# it writes a mark to stderr before and after, as the stage writes its progress lines.
TWO_HOLDERS = """
import subprocess, sys, time
print("[step] started", file=sys.stderr, flush=True)
time.sleep(0.6)
mine = bytearray(150 << 20); mine[::4096] = b"1" * len(mine[::4096])
grand = subprocess.Popen([sys.executable, "-c",
    "import time; x = bytearray(150 << 20); x[::4096] = b'1' * len(x[::4096]); time.sleep(1.5)"])
grand.wait()
print("[step] allocated", file=sys.stderr, flush=True)
del mine
time.sleep(0.6)
print("done")
"""


def test_the_tree_is_measured_step_by_step():
    child = run_sampled([sys.executable, "-c", TWO_HOLDERS], marks=[("start", r"^\[step\] started"),
                        ("never", r"no such line"), ("hold", r"^\[step\] allocated")], interval=0.1)
    assert child["returncode"] == 0 and child["stdout"] == "done\n"
    assert "[step] allocated" in child["stderr"]
    assert child["peak_tree_rss_mb"] > 290  # both holders at once: the sum over the tree
    assert child["peak_rss_mb"] < 250  # the largest single process only (sampled VmHWM)
    steps = child["steps"]
    assert [s["name"] for s in steps] == ["start", "hold", "rest"]  # a mark never seen is skipped
    assert sum(s["seconds"] for s in steps) == pytest.approx(child["process_seconds"])
    assert steps[1]["peak_tree_rss_mb"] > 290 and steps[2]["peak_tree_rss_mb"] < 250
    assert steps[1]["seconds"] >= 1.4  # the grandchild's sleep
    assert 0 <= sum(s["cpu_seconds"] for s in steps) <= child["cpu_seconds"] + 0.01


def test_the_largest_process_is_not_the_parent_that_spawned_it():
    """wait4's ru_maxrss counts the spawning parent's resident set (Linux carries the old
    memory's high-water mark across exec): a 400 MB parent made the holders' peak read 459 MB
    under pytest-xdist. The sampled VmHWM is each process's own."""
    script = ("import sys\nfrom multiref.util.process_tree import run_sampled\n"
              "ballast = bytearray(400 * 2**20)\nballast[::4096] = b'x' * len(ballast[::4096])\n"
              f"child = run_sampled([sys.executable, '-c', {TWO_HOLDERS!r}], interval=0.1)\n"
              "print(child['peak_rss_mb'], child['peak_tree_rss_mb'])\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=REPO_DIR, env={**os.environ, "PYTHONPATH": str(REPO_DIR)})
    largest, tree = map(float, done.stdout.split())
    assert largest < 250 and tree > 290, done.stderr


def test_steps_from_lines_and_samples():
    lines = [(1.0, "a\n"), (2.0, "b\n"), (2.5, "b again\n"), (4.0, "c\n")]
    samples = [(0.0, 0.0, 0.0), (0.5, 10.0, 0.2), (1.5, 30.0, 0.9), (3.0, 20.0, 1.5), (4.5, 5.0, 2.0)]
    steps = steps_of(lines, samples, [("to a", "^a"), ("to b", "^b"), ("to c", "^c")], end=5.0)
    assert [(s["name"], s["seconds"]) for s in steps] == [("to a", 1.0), ("to b", 1.0), ("to c", 2.0), ("rest", 1.0)]
    assert [s["peak_tree_rss_mb"] for s in steps] == [10.0, 30.0, 20.0, 5.0]
    assert [round(s["cpu_seconds"], 6) for s in steps] == [0.2, 0.7, 0.6, 0.5]
    # marks are matched in order: "to a" after "to b" is never found
    assert [s["name"] for s in steps_of(lines, samples, [("to b", "^b"), ("to a", "^a")], end=5.0)] == ["to b", "rest"]


def test_tree_usage_counts_this_process():
    import os

    assert os.getpid() in descendants(os.getpid())
    rss, cpu = tree_usage(os.getpid())
    assert rss > 10 and cpu > 0


def _bench_testset(*argv):
    return subprocess.run([sys.executable, str(REPO_DIR / "benchmarks" / "bench_testset.py"), *argv],
                          capture_output=True, text=True, timeout=120, cwd=REPO_DIR)


@pytest.mark.parametrize("argv, message", [
    (["--dataset", "{tmp}/nothing"], "not a corpus folder (no single_turn/"),
    (["--dataset", "{tmp}", "--realistic-month", "1000"], "not allowed with argument"),
    (["--realistic-month", "0"], "wants a positive comment count"),
    (["--dataset", "{tmp}/corpus", "--overlap", "100"], "--overlap runs on generated pairs"),
    (["--dataset", "{tmp}/corpus", "--keep", "{tmp}/corpus"], "--keep must not be the --dataset folder"),
])
def test_corpus_flags_reject(tmp_path, argv, message):
    (tmp_path / "corpus" / "single_turn").mkdir(parents=True)
    proc = _bench_testset(*[a.format(tmp=tmp_path) for a in argv])
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
