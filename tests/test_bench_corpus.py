"""The corpus benchmark's own parts: the realistic comment bodies, the month writer and the
per-child measurements (each build's CPU and peak RSS its own, output digests, memory slope)."""

from __future__ import annotations

import hashlib
import os
import statistics
import sys

import pytest

from benchmarks import bench_corpus
from benchmarks.corpus_build import differing_files, memory_slope_kb, output_digests
from benchmarks.realistic_text import RealisticText


def _sha(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def test_realistic_bodies_are_seeded_and_shaped_like_reddit():
    first, again = RealisticText(5), RealisticText(5)
    bodies = [first.body() for _ in range(4000)]
    assert [again.body() for _ in range(4000)] == bodies
    other = RealisticText(6)
    assert [other.body() for _ in range(50)] != bodies[:50]
    words = [len(b.split()) for b in bodies]
    assert 22 <= statistics.median(words) <= 45
    assert max(len(b) for b in bodies) <= 10_000 and min(len(b) for b in bodies) > 0
    assert max(words) > 500  # the long tail
    for marker in ("**", "&gt;", "http", "](", "r/", "u/", "@", "\n\n", '"', "'"):
        share = sum(marker in b for b in bodies) / len(bodies)
        assert 0.001 < share < 0.7, (marker, share)
    assert sum(not b.isascii() for b in bodies) > 100


def test_long_bodies_reach_the_cap():
    gen = RealisticText(1, max_chars=300)
    assert max(len(gen.body()) for _ in range(3000)) == pytest.approx(300, abs=30)


def test_month_text_modes_share_threads_and_are_byte_reproducible(tmp_path):
    bench = bench_corpus.write_month(str(tmp_path / "b"), 3000, seed=3, text="benchmark")
    real = bench_corpus.write_month(str(tmp_path / "r"), 3000, seed=3, text="realistic")
    again = bench_corpus.write_month(str(tmp_path / "r2"), 3000, seed=3, text="realistic")
    assert [_sha(p) for p in real] == [_sha(p) for p in again]
    assert _sha(bench[0]) == _sha(real[0])  # same submissions
    assert _sha(bench[1]) != _sha(real[1])  # other bodies
    assert bench_corpus.baseline_parse(bench[1:])[0] == bench_corpus.baseline_parse(real[1:])[0] == 3000


MEASURE_TWO_CHILDREN = """
import json, sys
from benchmarks.corpus_build import run_child
big = run_child([sys.executable, "-c", "x = bytearray(300 << 20); x[::4096] = b'1' * len(x[::4096])"], sys.argv[1])
small = run_child([sys.executable, "-c", "sum(range(3_000_000))"], sys.argv[1])
print(json.dumps([big, small]))
"""


def test_each_child_is_measured_alone(tmp_path):
    # from a small parent, as the benchmark runs them: a child's ru_maxrss starts at its
    # parent's size when it forks (a pytest worker can be 400+ MB), which no measure can undo
    import json
    import subprocess

    from tests.helpers import REPO_DIR

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_DIR), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", MEASURE_TWO_CHILDREN, str(tmp_path)], capture_output=True, text=True,
                         env=env, check=True, timeout=120).stdout
    big, small = json.loads(out.strip().splitlines()[-1])
    assert big["returncode"] == small["returncode"] == 0
    assert big["peak_rss_mb"] > 300
    assert small["peak_rss_mb"] < 100  # not the earlier child's peak (RUSAGE_CHILDREN would say 300+)
    assert small["cpu_seconds"] > 0.01 and small["process_seconds"] >= small["cpu_seconds"] * 0.5


def test_output_digests_find_every_difference(tmp_path):
    for name in ("a", "b"):
        os.makedirs(tmp_path / name / "sub")
        (tmp_path / name / "x.txt").write_bytes(b"same")
        (tmp_path / name / "sub" / "y.bin").write_bytes(b"y")
    assert differing_files(output_digests(str(tmp_path / "a")), output_digests(str(tmp_path / "b"))) == []
    (tmp_path / "b" / "sub" / "y.bin").write_bytes(b"z")
    (tmp_path / "a" / "only.txt").write_bytes(b"")
    found = differing_files(output_digests(str(tmp_path / "a")), output_digests(str(tmp_path / "b")))
    assert found == ["only.txt", os.path.join("sub", "y.bin")]


def test_memory_slope():
    slope = memory_slope_kb({"comments": 300_000, "peak_rss_mb": 729}, {"comments": 1_000_000, "peak_rss_mb": 1375})
    assert slope == pytest.approx((1375 - 729) * 1024 / 700_000)
    with pytest.raises(ValueError, match="must grow"):
        memory_slope_kb({"comments": 10, "peak_rss_mb": 1}, {"comments": 10, "peak_rss_mb": 2})


@pytest.mark.parametrize("text", ["300000,1000000", "1_000"])
def test_sizes_parse(text):
    assert bench_corpus._sizes(text) == [int(p.replace("_", "")) for p in text.split(",")]


@pytest.mark.parametrize("text", ["", "1000,300", "0", "10,10", "a,b"])
def test_sizes_reject(text):
    with pytest.raises(Exception, match="--sizes"):
        bench_corpus._sizes(text)


def test_the_jobs_flags_reach_the_child_build():
    # --workers is a prefix of the benchmark's own --workers-compare: with argparse's
    # abbreviations the child build took it for that and built in one process
    args, extra = bench_corpus.parse_args(["--child-build", "in", "out", "--workers", "2"])
    assert args.child_build == ["in", "out"] and extra == ["--workers", "2"] and args.workers_compare is None
