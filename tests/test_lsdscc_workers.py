"""The corpus job on several local workers (``--workers``): each input file is read in parts,
one per worker, and the dataset is byte-identical to the single-process build."""

import gzip
import json
import os
import subprocess
import sys

import pytest
import zstandard

from lsdscc.corpus import provenance, sources
from lsdscc.corpus.sample_gen import write_dump
from multiref.util.errors import UserError
from pipelines.lsdscc import options as lsdscc_options
from tests.helpers import file_digests


def _lines(n: int, subreddit_every: int = 0) -> bytes:
    """``n`` JSON lines; every ``subreddit_every``-th of another subreddit, some blank and bad."""
    out = []
    for i in range(n):
        sub = "pics" if subreddit_every and i % subreddit_every == 0 else "movies"
        record = {"id": f"c{i}", "body": f"reply number {i}", "parent_id": "t3_s", "link_id": "t3_s",
                  "subreddit": sub, "created_utc": 1500000000 + i}
        out.append(b"" if i % 97 == 5 else b"{not json" if i % 89 == 7 else json.dumps(record).encode())
    return b"\n".join(out) + b"\n"


def _items(path, parts: int, subreddits=None) -> list:
    """The items of all ``parts`` parts of ``path``, in part order."""
    return [item for part in range(parts)
            for item in sources.read_items(str(path), subreddits=subreddits, part=part, parts=parts)]


def _comparable(items) -> tuple:
    """Items without the ``skipped`` batches (parts batch them differently), sorted by line;
    and the skipped total."""
    kept = sorted((i for i in items if i[0] != "skipped"), key=lambda i: (i[1], i[0]))
    return kept, sum(i[1] for i in items if i[0] == "skipped")


@pytest.mark.parametrize("parts", [2, 3, 5])
@pytest.mark.parametrize("subreddits", [None, ("movies",)])
def test_the_parts_of_a_file_are_its_items(tmp_path, monkeypatch, parts, subreddits):
    monkeypatch.setattr(sources, "PIECE", 2000)  # many pieces from one small file
    path = tmp_path / "RC.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(_lines(3000, subreddit_every=4)))
    whole = _comparable(list(sources.read_items(str(path), subreddits=subreddits)))
    assert _comparable(_items(path, parts, subreddits)) == whole
    per_part = [list(sources.read_items(str(path), subreddits=subreddits, part=k, parts=parts)) for k in range(parts)]
    assert all(len([i for i in items if i[0] == "ok"]) > 100 for items in per_part)  # every part has work


def test_a_truncated_file_ends_once_in_part_zero(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "PIECE", 2000)
    blob = zstandard.ZstdCompressor().compress(_lines(3000))
    path = tmp_path / "RC.zst"
    path.write_bytes(blob[: len(blob) * 2 // 3])
    whole = list(sources.read_items(str(path)))
    assert whole[-1][2] == "truncated-file"
    parts = [list(sources.read_items(str(path), part=k, parts=2)) for k in range(2)]
    ends = [item for items in parts for item in items if item[0] == "rejected" and item[2] == "truncated-file"]
    assert ends == [whole[-1]] and parts[0][-1] == whole[-1]
    assert _comparable(parts[0] + parts[1]) == _comparable(whole)


def test_a_json_array_and_a_gzip_file_split_too(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "PIECE", 2000)
    array = tmp_path / "export.json"
    array.write_text(json.dumps([{"id": f"c{i}", "subreddit": "movies"} for i in range(50)]))
    assert _items(array, 3) == list(sources.read_items(str(array)))  # all in part 0
    gz = tmp_path / "RC.jsonl.gz"
    gz.write_bytes(gzip.compress(_lines(2000)))
    assert _comparable(_items(gz, 2)) == _comparable(list(sources.read_items(str(gz))))
    with pytest.raises(ValueError):
        list(sources.read_items(str(gz), part=2, parts=2))


def test_file_summaries_of_parts_merge_to_the_whole():
    part0 = {"name": "RC.zst", "bytes": 10, "sha256": "ab", "records": 3, "first_created_utc": 5,
             "last_created_utc": 9}
    part1 = dict(part0, bytes=None, sha256=None, records=4, first_created_utc=2, last_created_utc=7)
    part2 = dict(part1, records=0, first_created_utc=None, last_created_utc=None)
    merged = provenance.merge_summaries([part1, part0, part2])
    assert merged == dict(part0, records=7, first_created_utc=2, last_created_utc=9)
    assert provenance.merge_summaries([provenance.merge_summaries([part1, part2]), part0]) == merged


def test_workers_auto_and_explicit(tmp_path, monkeypatch):
    small = tmp_path / "RC_small.zst"
    small.write_bytes(b"\x28\xb5\x2f\xfd")
    big = tmp_path / "RC_big.zst"
    with open(big, "wb") as fh:  # sparse: estimated at 6x its size uncompressed
        fh.truncate(lsdscc_options.AUTO_WORKERS_MB * 2**20 // lsdscc_options.COMPRESSION_RATIO + 1)
    cores = min(lsdscc_options.MAX_AUTO_WORKERS, os.cpu_count() or 1)
    assert lsdscc_options.resolve_workers("auto", [str(small)]) == 1
    assert lsdscc_options.resolve_workers("auto", [str(big)]) == cores
    assert lsdscc_options.resolve_workers("auto", [str(big)], local=False) == 1
    # as many as the available memory holds, at least one
    estimate = lsdscc_options.estimated_input_bytes([str(big)])
    per_worker = lsdscc_options.WORKER_MEMORY_BASE + lsdscc_options.WORKER_MEMORY_FACTOR * estimate
    for room, expected in ((per_worker * 1.3, 1), (per_worker * 2.6, min(2, cores)), (per_worker * 0.1, 1),
                           (None, cores)):
        monkeypatch.setattr(lsdscc_options, "available_memory", lambda room=room: room)
        assert lsdscc_options.resolve_workers("auto", [str(big)]) == expected, room
    assert lsdscc_options.available_memory() is None or lsdscc_options.available_memory() > 0
    assert lsdscc_options.resolve_workers("3", [str(small)]) == 3
    assert lsdscc_options.resolve_workers(" 2 ", [str(small)]) == 2
    for bad in ("0", "-1", "two", "65", "+5", "1_0", "\u00b2", "", "2.0"):
        with pytest.raises(UserError, match="--workers"):
            lsdscc_options.resolve_workers(bad, [str(small)])


def _build(month, out, *flags) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "pipelines.lsdscc.corpus", "--quiet", "--input", str(month),
            "--output", str(out), *flags]
    return subprocess.run(argv, capture_output=True, text=True, timeout=240, cwd=out.parent)


def test_two_workers_build_the_same_bytes_as_one_process(tmp_path):
    paths, _ = write_dump(str(tmp_path / "month"), 30000, files=2)  # RC files of several pieces each
    assert os.path.getsize(paths[1]) > 0
    one = _build(tmp_path / "month", tmp_path / "one", "--workers", "1")
    two = _build(tmp_path / "month", tmp_path / "two", "--workers", "2")
    assert one.returncode == 0, one.stderr[-2000:]
    assert two.returncode == 0, two.stderr[-2000:]
    digests = file_digests(tmp_path / "one")
    assert any(k.startswith("multi_turn") for k in digests) and "stats.json" in digests
    assert file_digests(tmp_path / "two") == digests
    stats = json.loads((tmp_path / "two" / "stats.json").read_text())
    assert stats["counts"]["posts-kept-comments"] > 20000


@pytest.mark.parametrize("flag,value", [("--workers", "\u00b2"), ("--workers", "0"), ("--num-shards", "+5")])
def test_bad_count_flag_is_one_line_and_leaves_nothing(tmp_path, flag, value):
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "multiref_cli", "lsdscc", "build", "--skip-testset", "--output", str(out),
            flag, value]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == [f"multiref: error: {flag} must be 'auto' or "
                                                f"{'an integer from 1 to 64' if flag == '--workers' else 'an integer from 1 to 10000'}"
                                                f", got {value!r}"]
    assert sorted(os.listdir(tmp_path)) == []  # no output, no staging folder, no lock


@pytest.mark.parametrize("flags,message,code", [
    (("--doc2vec-parts", "100000"), "argument --doc2vec-parts: must be from 1 to 64, got 100000", 2),
    (("--doc2vec-epochs", "0"), "argument --doc2vec-epochs: must be from 1 to 1000, got 0", 2),
    (("--doc2vec-parts", "2", "--doc2vec-workers", "2"), "--doc2vec-workers must be 1, got 2", 1),
])
def test_bad_testset_option_stops_before_the_corpus_is_built(tmp_path, flags, message, code):
    argv = [sys.executable, "-m", "multiref_cli", "lsdscc", "build", "--output", str(tmp_path / "out"), *flags]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == code, done.stderr[-2000:]
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr  # no "[lsdscc] ..." progress first
    assert os.listdir(tmp_path) == []
