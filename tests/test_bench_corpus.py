"""The corpus benchmark's parts, from where the benchmark and the tests share them: the realistic
comment bodies and the month writer (:mod:`lsdscc.synthetic`), the per-child measurements
(:mod:`multiref.util.measure`: each build's CPU and peak RSS its own, output digests, memory
slope); and the benchmark's own flags, through its command line."""

from __future__ import annotations

import hashlib
import os
import statistics
import sys

import pytest

from lsdscc.synthetic import dumps
from lsdscc.synthetic.text import RealisticText
from multiref.util.measure import differing_files, memory_slope_kb, output_digests
from tests.helpers import REPO_DIR


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
    bench = dumps.write_month(str(tmp_path / "b"), 3000, seed=3, text="benchmark")
    real = dumps.write_month(str(tmp_path / "r"), 3000, seed=3, text="realistic")
    again = dumps.write_month(str(tmp_path / "r2"), 3000, seed=3, text="realistic")
    assert [_sha(p) for p in real] == [_sha(p) for p in again]
    assert _sha(bench[0]) == _sha(real[0])  # same submissions
    assert _sha(bench[1]) != _sha(real[1])  # other bodies
    assert dumps.baseline_parse(bench[1:])[0] == dumps.baseline_parse(real[1:])[0] == 3000


MEASURE_TWO_CHILDREN = """
import json, sys
from multiref.util.measure import run_child
big = run_child([sys.executable, "-c", "x = bytearray(300 << 20); x[::4096] = b'1' * len(x[::4096])"], sys.argv[1])
small = run_child([sys.executable, "-c", "sum(range(3_000_000))"], sys.argv[1])
print(json.dumps([big, small]))
"""


def test_each_child_is_measured_alone(tmp_path):
    # from a small parent, as the benchmark runs them: a child's ru_maxrss starts at its
    # parent's size when it forks (a pytest worker can be 400+ MB), which no measure can undo
    import json
    import subprocess

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


def _bench_corpus(*argv):
    """``benchmarks/bench_corpus.py argv...`` in a child process (tests do not import benchmarks)."""
    import subprocess

    return subprocess.run([sys.executable, str(REPO_DIR / "benchmarks" / "bench_corpus.py"), *argv],
                          capture_output=True, text=True, timeout=120, cwd=REPO_DIR)


@pytest.mark.parametrize("text", ["", "1000,300", "0", "10,10", "a,b"])
def test_sizes_reject(text):
    proc = _bench_corpus("--sizes", text)
    assert proc.returncode == 2 and "--sizes wants" in proc.stderr, proc.stderr


def test_months_are_kept_and_reused_but_never_over_foreign_files(tmp_path):
    months = tmp_path / "months"
    argv = ("--only", "build", "--comments", "200", "--text", "realistic", "--months", str(months))
    first = _bench_corpus(*argv)
    assert first.returncode == 0 and "generated a month of 200" in first.stdout, first.stderr[-2000:]
    folder = months / "month-200-realistic-seed7"
    rc = folder / "RC_2019-06.zst"
    before = (rc.stat().st_mtime_ns, _sha(str(rc)))
    second = _bench_corpus(*argv)
    assert second.returncode == 0 and "reusing the month of 200" in second.stdout, second.stderr[-2000:]
    assert (rc.stat().st_mtime_ns, _sha(str(rc))) == before
    (folder / "DONE").write_text("comments=200 text=realistic seed=8\n")  # another recipe: not reused
    (folder / "notes.txt").write_text("mine")
    refused = _bench_corpus(*argv)
    assert refused.returncode == 1 and "holds files it did not write (notes.txt)" in refused.stderr
    assert (folder / "notes.txt").read_text() == "mine"
