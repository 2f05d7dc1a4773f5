"""A build never loses or breaks a dataset (issue 11), in real subprocesses
(``sys.executable -m multiref_cli ...``): SIGINT at many points of a build and of the test-set
stage, SIGTERM, two concurrent builds, tiny and empty corpora, more shards than rows. Each
checks the folder byte for byte (sha256 of every file) and loads it with
``datasets.load_dataset``. Unit tests of the mechanism: tests/test_publish.py.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

from tests.test_publish import sidecars, tree

SKIP_TESTSET = ["--skip-testset"]
# an interrupted build must differ from the folder's dataset, so "unchanged" means something
OTHER_OPTIONS = ["--vocab-size", "300"]
# small test-set options: the stage runs in seconds on the bundled sample
TESTSET_OPTIONS = ["--doc2vec-epochs", "2", "--retrieval-depth", "10", "--jvm-heap", "1g"]


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a background job may inherit SIGINT ignored


def start(*args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "multiref_cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint)


def run(*args, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "multiref_cli", *args], capture_output=True, text=True,
                          timeout=timeout, preexec_fn=_default_sigint)


def wait_for(proc: subprocess.Popen, marker: str, timeout: float = 240) -> list:
    """Read the process's stderr until a line contains ``marker``; return the lines read."""
    lines, deadline = [], time.monotonic() + timeout
    for line in proc.stderr:
        lines.append(line)
        if marker in line:
            return lines
        assert time.monotonic() < deadline, f"no {marker!r} in {''.join(lines)}"
    raise AssertionError(f"process ended without {marker!r}: {''.join(lines)}")


def interrupt(proc: subprocess.Popen, sig=signal.SIGINT) -> tuple:
    if proc.poll() is None:
        proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def load_rows(folder, config, tmp_path) -> dict:
    import datasets

    loaded = datasets.load_dataset(str(folder), config, cache_dir=str(tmp_path / "hf-cache"))
    return {split: d.num_rows for split, d in loaded.items()}


def card_splits(folder) -> dict:
    with open(os.path.join(folder, "dataset_meta.json"), encoding="utf-8") as fh:
        return {c: e["splits"] for c, e in json.load(fh)["configs"].items()}


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """The bundled sample's corpus (--skip-testset): (folder, sha256 of every file)."""
    folder = tmp_path_factory.mktemp("base") / "lsdscc"
    done = run("lsdscc", "build", "--output", str(folder), *SKIP_TESTSET)
    assert done.returncode == 0, done.stderr
    return folder, tree(folder)


def copy_of(base, tmp_path):
    folder = tmp_path / "lsdscc"
    shutil.copytree(base[0], folder)
    assert tree(folder) == base[1]
    return folder


@pytest.fixture(scope="module")
def tiny_dump(tmp_path_factory):
    """A small real-shaped dump: two r/movies threads of the bundled sample (75 records)."""
    import io

    import zstandard

    def read(name):
        with open(os.path.join(os.path.dirname(__file__), "..", "lsdscc", "corpus", "sample", name), "rb") as fh:
            text = io.TextIOWrapper(zstandard.ZstdDecompressor().stream_reader(fh), encoding="utf-8")
            return [json.loads(line) for line in text if line.strip()]

    folder = tmp_path_factory.mktemp("tiny")
    submissions = [s for s in read("RS_sample.jsonl.zst") if s["subreddit"] == "movies"][:2]
    threads = {"t3_" + s["id"] for s in submissions}
    comments = [c for c in read("RC_sample.jsonl.zst") if c.get("link_id") in threads]
    assert len(comments) == 73
    paths = []
    for name, records in (("RS_tiny.jsonl", submissions), ("RC_tiny.jsonl", comments)):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in records))
        paths += ["--input", str(folder / name)]
    (folder / "RC_empty.jsonl").write_text("")
    return paths, ["--input", str(folder / "RC_empty.jsonl")]


# ---------------------------------------------------------------- interrupts


def test_sigint_at_many_points_of_a_corpus_build(base, tmp_path):
    folder = copy_of(base, tmp_path)
    before = tree(folder)
    rows = load_rows(folder, "single_turn", tmp_path)
    # The complete new dataset, built elsewhere (the build is deterministic, so the same bytes).
    reference = tmp_path / "reference" / "lsdscc"
    assert run("lsdscc", "build", "--output", str(reference), *SKIP_TESTSET, *OTHER_OPTIONS).returncode == 0
    after = tree(reference)
    assert after != before
    for delay in (0.3, 0.8, 1.5, 2.5, 3.5, 4.5, 5.5, 7.0):
        proc = start("lsdscc", "build", "--output", str(folder), *SKIP_TESTSET, *OTHER_OPTIONS)
        time.sleep(delay)
        code, _, err = interrupt(proc)
        now = tree(folder)
        if now == after:  # the signal came after the swap: the new dataset is published whole
            assert load_rows(folder, "single_turn", tmp_path) == load_rows(reference, "single_turn", tmp_path)
            break
        assert code != 0 and now == before, f"after {delay}s (exit {code}): {err[-2000:]}"
        assert load_rows(folder, "single_turn", tmp_path) == rows
        if "multiref: error:" in err:  # once the command runs (not during Python's start-up)
            assert err.strip().splitlines()[-1].startswith("multiref: error: interrupted")
        assert ".lsdscc.lock" not in sidecars(tmp_path)
    done = run("lsdscc", "build", "--output", str(folder), *SKIP_TESTSET, *OTHER_OPTIONS)
    assert done.returncode == 0, done.stderr
    assert sidecars(tmp_path) == []  # the next build cleaned up the partial output
    after = load_rows(folder, "single_turn", tmp_path)
    assert after == card_splits(folder)["single_turn"] == rows and tree(folder) != before  # same rows, other words
    assert f"single_turn: train {after['train']:,}, validation {after['validation']:,}" in done.stdout


def test_sigterm_during_a_build(base, tmp_path):
    folder = copy_of(base, tmp_path)
    proc = start("lsdscc", "build", "--output", str(folder), *SKIP_TESTSET, *OTHER_OPTIONS)
    wait_for(proc, "running the Beam pipeline")
    code, _, err = interrupt(proc, signal.SIGTERM)
    assert code == 130 and err.strip().splitlines()[-1].startswith("multiref: error: interrupted by SIGTERM: ")
    assert tree(folder) == base[1]
    assert load_rows(folder, "multi_turn", tmp_path) == card_splits(folder)["multi_turn"]


def test_sigterm_to_the_driver_alone_ends_a_build_with_two_worker_processes(tmp_path):
    """``kill PID`` reaches the driver only (Ctrl-C reaches the whole process group): the driver
    ends the job's worker processes and exits 130 with one line. Before, the local runner's
    driver waited on its idle workers for ever."""
    from lsdscc.synthetic.dumps import write_month
    from pipelines.beam.guard import marked

    inputs = [arg for path in write_month(str(tmp_path / "month"), 50_000, seed=7, text="realistic")
              for arg in ("--input", path)]
    out = tmp_path / "out" / "lsdscc"
    proc = start("lsdscc", "build", *inputs, "--output", str(out), *SKIP_TESTSET, "--workers", "2")
    try:
        wait_for(proc, "local worker processes")
        time.sleep(2)
        t0 = time.monotonic()
        code, _, err = interrupt(proc, signal.SIGTERM)
        assert time.monotonic() - t0 < 60
    finally:
        proc.kill()
    assert code == 130, err[-2000:]
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("multiref: error: interrupted by SIGTERM: ")
    assert not out.exists() and sidecars(tmp_path / "out") == []
    assert marked(str(proc.pid)) == []  # no worker left behind


def test_sigint_during_the_testset_stage_then_a_full_run(base, tmp_path):
    """Interrupts after the snapshot, after the Lucene index and after test_candidates is
    written (before the leak removal): never a test set that leaks into training."""
    folder = copy_of(base, tmp_path)
    witness = tmp_path / "witness"  # hard links to every file: an in-place write would show here
    from multiref.output.publish import link_tree

    link_tree(str(folder), str(witness))
    for marker in ("snapshot of the corpus", "indexed", "wrote "):
        proc = start("lsdscc", "testset", "--dataset", str(folder), *TESTSET_OPTIONS)
        wait_for(proc, marker)
        code, _, err = interrupt(proc)
        if code == 0 and marker == "wrote ":  # the leak removal beat the signal: published whole
            break
        assert code != 0 and tree(folder) == base[1], f"after {marker!r}: {err[-2000:]}"
        assert "test_candidates" not in card_splits(folder)
    assert load_rows(folder, "single_turn", tmp_path) == card_splits(folder)["single_turn"]
    done = run("lsdscc", "testset", "--dataset", str(folder), *TESTSET_OPTIONS)
    assert done.returncode == 0, done.stderr
    assert "reused Lucene index" in done.stderr  # the cache of the interrupted run
    assert tree(witness) == base[1]  # the old files were never modified through a link
    counts = json.loads(done.stdout)
    published = card_splits(folder)
    assert load_rows(folder, "test_candidates", tmp_path) == {"test": counts["test_queries"]} == published["test_candidates"]
    single = load_rows(folder, "single_turn", tmp_path)
    assert single == published["single_turn"]
    removed = sum(counts[f"removed_{r}"] for r in ("test_query", "test_query_text", "test_reference"))
    assert sum(single.values()) == counts["corpus_pairs"] - removed
    assert sidecars(tmp_path) == []


def test_two_builds_at_once(base, tmp_path):
    folder = copy_of(base, tmp_path)
    first = start("lsdscc", "build", "--output", str(folder), *SKIP_TESTSET, *OTHER_OPTIONS)
    wait_for(first, "[lsdscc]")
    t0 = time.monotonic()
    second = run("lsdscc", "build", "--output", str(folder), *SKIP_TESTSET)
    assert second.returncode == 1 and time.monotonic() - t0 < 60
    line = second.stderr.strip().splitlines()
    assert len(line) == 1 and line[0].startswith(
        f"multiref: error: {folder} is being written by another build: pid {first.pid} on {socket.gethostname()}, "
        "started 20")
    interrupt(first)
    assert tree(folder) == base[1]


# ---------------------------------------------------------------- small, empty and over-sharded corpora


def test_tiny_corpus_with_the_defaults_keeps_training_rows(tiny_dump, tmp_path):
    folder = tmp_path / "tiny"
    done = run("lsdscc", "build", *tiny_dump[0], "--output", str(folder), *TESTSET_OPTIONS)
    assert done.returncode == 0, done.stderr
    assert "warning: the corpus is small (21 distinct queries): sampling lt3 6, 3to5 2, gt5 1" in done.stderr
    with open(folder / "README.md", encoding="utf-8") as fh:
        assert "Small corpus: lt3 6, 3to5 2, gt5 1 queries were sampled instead of 100" in fh.read()
    published = card_splits(folder)
    for config in ("single_turn", "multi_turn", "test_candidates"):
        assert load_rows(folder, config, tmp_path) == published[config]
    assert published["single_turn"]["train"] > 0 and published["test_candidates"] == {"test": 9}
    assert f"single_turn: train {published['single_turn']['train']:,}\n" in done.stdout  # as published


def test_training_emptied_by_the_test_set_fails_naming_the_option(tiny_dump, tmp_path):
    folder = tmp_path / "tiny"
    done = run("lsdscc", "build", *tiny_dump[0], "--output", str(folder), *TESTSET_OPTIONS,
               "--max-stratum-share", "0.99", "--strata-bounds", "1", "100", "--doc2vec-threshold", "-1",
               "--references-per-query", "100")  # 20 of the 21 queries, each taking every similar query's pairs
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "multiref: error: the test set would leave single_turn train empty: its 20 queries, the pairs sharing their "
        "text and their candidates' source pairs are all 64 training pairs; lower --per-stratum or "
        "--max-stratum-share (or --references-per-query), or build with --skip-testset")
    assert not folder.exists()


def test_empty_corpus_publishes_nothing(base, tiny_dump, tmp_path):
    folder = copy_of(base, tmp_path)
    done = run("lsdscc", "build", *tiny_dump[1], "--output", str(folder), *SKIP_TESTSET)
    assert done.returncode == 1 and tree(folder) == base[1]
    staging = tmp_path / ".lsdscc.staging"
    assert done.stderr.strip().splitlines()[-1] == (
        "multiref: error: no usable dataset: no config has any rows (see the dropped and rejected counts in "
        f"{staging / 'stats.json'}); nothing was published")
    assert json.loads((staging / "stats.json").read_text())["counts"]["kept-single-turn-train"] == 0  # kept for a look


def test_more_shards_than_rows(tiny_dump, tmp_path):
    """50 shards for 64 pairs: many shards are empty, every split still loads whole (the counts
    are those of the same corpus with 1 shard, test_tiny_corpus_with_the_defaults... before
    its test set: single_turn 64, multi_turn 38, no validation rows)."""
    folder = tmp_path / "many"
    done = run("lsdscc", "build", *tiny_dump[0], "--output", str(folder), *SKIP_TESTSET, "--num-shards", "50")
    assert done.returncode == 0, done.stderr
    assert len(os.listdir(folder / "single_turn")) == 100  # train and validation, 50 shards each
    assert "warning: single_turn/validation has no rows; it is left out of the dataset card" in done.stderr
    assert load_rows(folder, "single_turn", tmp_path) == card_splits(folder)["single_turn"] == {"train": 64}
    assert load_rows(folder, "multi_turn", tmp_path) == card_splits(folder)["multi_turn"] == {"train": 38}


# ---------------------------------------------------------------- annotations across rebuilds


def test_annotations_survive_a_rebuild_and_move_aside_when_the_test_set_changes(tiny_dump, tmp_path):
    import csv

    folder = tmp_path / "tiny"
    assert run("lsdscc", "build", *tiny_dump[0], "--output", str(folder), *TESTSET_OPTIONS).returncode == 0
    exported = tmp_path / "round1.csv"
    assert run("lsdscc", "annotate", "export", "--dataset", str(folder), "--output", str(exported)).returncode == 0
    with open(exported, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:  # an annotator: everything relevant, one group per query
        r["relevant"], r["group"] = "1", "g"
    with open(tmp_path / "alice.csv", "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    from multiref.output.publish import link_tree

    for _ in range(2):  # the second import replaces the first one's files
        before = tree(folder)
        link_tree(str(folder), str(tmp_path / "witness"))  # an in-place write would show through these links
        done = run("lsdscc", "annotate", "import", "--dataset", str(folder), "--annotations",
                   str(tmp_path / "alice.csv"), "--output", str(folder / "public"))
        assert done.returncode == 0, done.stderr
        assert tree(tmp_path / "witness") == before
        shutil.rmtree(tmp_path / "witness")
    assert (folder / "annotations" / "alice.csv").read_bytes() == (tmp_path / "alice.csv").read_bytes()
    assert (folder / "public" / "test.group.json").exists()  # an --output inside the dataset is published with it
    grouped = {k: v for k, v in tree(folder).items() if k.startswith(("test_grouped", "annotations"))}
    assert load_rows(folder, "test_grouped", tmp_path) == {"test": 9}

    same = run("lsdscc", "build", *tiny_dump[0], "--output", str(folder), *TESTSET_OPTIONS)  # same test set
    assert same.returncode == 0 and "kept the annotations (test_grouped, annotations/)" in same.stderr
    assert "reused Lucene index" in same.stderr and "reused Doc2Vec model" in same.stderr  # the cache of the rebuild
    assert {k: v for k, v in tree(folder).items() if k.startswith(("test_grouped", "annotations"))} == grouped
    assert load_rows(folder, "test_grouped", tmp_path) == {"test": 9}

    other = run("lsdscc", "testset", "--dataset", str(folder), *TESTSET_OPTIONS, "--testset-seed", "2")
    assert other.returncode == 0, other.stderr
    moved = [line for line in other.stderr.splitlines() if "the test set changed" in line]
    aside = moved[0].rsplit(" ", 1)[1]
    assert os.path.dirname(aside) == str(tmp_path) and os.path.basename(aside).startswith("tiny.annotations-")
    assert "test_grouped" not in card_splits(folder) and not (folder / "annotations").exists()
    assert {k: v for k, v in tree(aside).items() if k.startswith(("test_grouped", "annotations"))} == grouped
    assert load_rows(aside, "test_grouped", tmp_path) == {"test": 9}


def test_dailydialog_build_is_published_whole(tmp_path):
    folder = tmp_path / "dd"
    done = run("dailydialog", "build", "--output", str(folder))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == f"wrote {folder}" and ".dd.staging" not in done.stdout
    assert sidecars(tmp_path) == []
    before = tree(folder)
    assert load_rows(folder, "multiref", tmp_path) == card_splits(folder)["multiref"] == {"test": 37}
    proc = start("dailydialog", "build", "--output", str(folder), "--seed", "7")
    wait_for(proc, "running the Beam pipeline")
    code, _, err = interrupt(proc)
    assert code == 130 and err.strip().splitlines()[-1].startswith("multiref: error: interrupted by SIGINT: ")
    assert tree(folder) == before
