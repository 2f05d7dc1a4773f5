"""Fuzz tier for the other files the tool reads and the paths it writes (issue 35 item 6): ids
files (``lsdscc rehydrate``), ratings files (``analyze``), and output paths that alias an input
or lie inside a dataset folder (every single-file output goes through
:func:`multiref.output.file_output.check_output`).

Seeded and bounded like ``tests/test_fuzz_references.py`` (its mutators and per-case timer):
the mutated files go through the functions the commands call. Every outcome is a parsed result
or a UserError whose one-line message names the file; never another exception, never more than
``CASE_SECONDS`` on a case. A parsed ids file can be compared against a folder; a parsed
ratings file holds finite ratings only. For output paths the guard's answer is checked against
the truth computed another way (``os.stat`` identity, a walk up to a folder with the card and
metadata), and a few ``multiref score`` processes on aliasing outputs leave every input intact.
"""

from __future__ import annotations

import json
import math
import os
import random

import pytest

from lsdscc.corpus import ids
from lsdscc.corpus.config import CorpusConfig
from multiref.analysis.ratings import load_ratings, ratings_summary
from multiref.output.file_output import check_output
from multiref.util.errors import UserError
from pipelines.lsdscc.rehydrate import release_configs
from tests.helpers import data_path
from tests.test_cli_errors import run_multiref
from tests.test_fuzz_references import case_timer, mutate_bytes, mutate_tree, scratch  # noqa: F401 (fixture)

SEED = 20261128
IDS_TREE_CASES = 1_500
IDS_BYTE_CASES = 1_000
RATINGS_CASES = 2_000
PATH_CASES = 600
PROCESS_CASES = 4

RELEASE = {
    "format": ids.FORMAT,
    "options": {**CorpusConfig().as_options(), "num_shards": 2},
    "source_files": [{"name": "RC_2017-01.zst", "sha256": "0" * 64, "bytes": 10, "records": 3}],
    "files": {
        "single_turn/train-00000-of-00002.parquet": {"config": "single_turn", "split": "train",
                                                     "rows": [["t3_a", "t1_b", "t1_c"], ["t3_a", "t1_b", "t1_d"]]},
        "multi_turn/validation-00001-of-00002.parquet": {"config": "multi_turn", "split": "validation",
                                                         "rows": [["t3_e", ["t1_f", "t1_g", "t1_h"]]]},
    },
}
RATINGS = data_path("analysis", "ratings.csv").read_bytes()


def _one_line_naming(exc: UserError, path, label: str) -> None:
    message = str(exc)
    assert message and "\n" not in message and os.path.basename(str(path)) in message, f"{label}: {message!r}"


def _ids_case(folder, label: str, data: bytes) -> str:
    path = folder / "ids.json"
    path.write_bytes(data)
    with case_timer(label):
        try:
            release = ids.read_ids(str(path))
            release_configs(str(path), release)
        except UserError as exc:
            _one_line_naming(exc, path, label)
            return "refused"
        missing, removed = ids.compare(release, str(folder / "empty"))  # every file missing, nothing removed
        assert len(missing) == len(release["files"]) and removed == [], label
    return "parsed"


def test_mutated_ids_files(scratch):
    rng = random.Random(SEED)
    (scratch / "empty").mkdir()
    outcomes = {"parsed": 0, "refused": 0}
    text = json.dumps(RELEASE).encode()
    for i in range(IDS_TREE_CASES):
        document = mutate_tree(rng, RELEASE)
        outcomes[_ids_case(scratch, f"ids tree case {i}", json.dumps(document).encode("utf-8", "surrogatepass"))] += 1
    for i in range(IDS_BYTE_CASES):
        outcomes[_ids_case(scratch, f"ids byte case {i}", mutate_bytes(rng, text))] += 1
    assert outcomes["parsed"] >= 50 and outcomes["refused"] >= 500, outcomes


def test_mutated_ratings_files(scratch):
    rng = random.Random(SEED + 1)
    outcomes = {"parsed": 0, "refused": 0}
    for i in range(RATINGS_CASES):
        suffix = ".csv" if i % 4 else ".tsv"
        path = scratch / f"ratings{suffix}"
        data = mutate_bytes(rng, RATINGS)
        if i % 5 == 0:  # the number classes that averaged into NaN: NaN, inf, 1e400, 5,000 digits
            data = data.replace(b"4.8", rng.choice([b"nan", b"inf", b"-Infinity", b"1e400", b"9" * 5000]), 1)
        path.write_bytes(data)
        label = f"ratings case {i}"
        with case_timer(label):
            try:
                rows, _stats = load_ratings(str(path))
            except UserError as exc:
                _one_line_naming(exc, path, label)
                outcomes["refused"] += 1
                continue
            assert all(math.isfinite(r.rating) for r in rows), label
            assert all(math.isfinite(v["mean_rating"]) for v in ratings_summary(rows)["systems"].values()), label
            outcomes["parsed"] += 1
    assert outcomes["parsed"] >= 200 and outcomes["refused"] >= 200, outcomes


# ---------------------------------------------------------------- output paths


def _world(root):
    """Inputs, a dataset folder, links to both; returns the input paths."""
    (root / "in").mkdir()
    (root / "ds" / "sub").mkdir(parents=True)
    (root / "ds" / "README.md").write_text("# card\n")
    (root / "ds" / "dataset_meta.json").write_text('{"configs": {}}\n')
    for name in ("refs.json", "sys.jsonl", "other.txt"):
        (root / "in" / name).write_text(name)
    os.link(root / "in" / "refs.json", root / "hard.json")
    os.symlink(root / "in" / "sys.jsonl", root / "soft.jsonl")
    os.symlink(root / "in", root / "indir")
    os.symlink(root / "ds", root / "dslink")
    return [str(root / "in" / "refs.json"), str(root / "in" / "sys.jsonl")]


def _spellings(root, rng):
    """A path spelled one of many ways: relative, with .. and ., through a link, a hard link."""
    base = rng.choice(["in/refs.json", "in/sys.jsonl", "in/other.txt", "in/new.txt", "hard.json", "soft.jsonl",
                       "indir/refs.json", "indir/new.txt", "ds/README.md", "ds/dataset_meta.json", "ds/sub/x.csv",
                       "dslink/new.json", "new.txt", "in/../in/sys.jsonl", "./in/./refs.json", "ds/sub/../y.txt"])
    return str(root / base) if rng.random() < 0.5 else os.path.relpath(root / base)


def _truth(path: str, inputs) -> bool:
    """Should ``path`` be refused? The same file as an input, or under a folder with the card and metadata."""
    for given in inputs:
        if os.path.exists(path) and os.stat(path)[1:3] == os.stat(given)[1:3]:
            return True
    folder = os.path.dirname(os.path.realpath(path))
    while folder != os.path.dirname(folder):
        if os.path.isfile(os.path.join(folder, "README.md")) and os.path.isfile(os.path.join(folder, "dataset_meta.json")):
            return True
        folder = os.path.dirname(folder)
    return False


def test_output_paths_that_alias_inputs(tmp_path, monkeypatch):
    rng = random.Random(SEED + 2)
    inputs = _world(tmp_path)
    monkeypatch.chdir(tmp_path)
    refused = 0
    for i in range(PATH_CASES):
        path = _spellings(tmp_path, rng)
        given = [rng.choice([i_, os.path.relpath(i_)]) for i_ in inputs]
        try:
            check_output(path, "--output", given)
            ok = True
        except UserError as exc:
            assert "\n" not in str(exc) and f"--output {path}" in str(exc), str(exc)
            ok = False
        assert ok != _truth(path, inputs), (i, path, given)
        refused += not ok
    assert 100 <= refused <= PATH_CASES - 100, refused


def test_score_processes_never_write_over_an_input(tmp_path):
    rng = random.Random(SEED + 3)
    (tmp_path / "refs.json").write_bytes(data_path("score", "lsdscc_small.json").read_bytes())
    (tmp_path / "sys.jsonl").write_bytes(data_path("score", "hyps_lsdscc.jsonl").read_bytes())
    os.link(tmp_path / "refs.json", tmp_path / "hard.json")
    before = {p: (tmp_path / p).read_bytes() for p in ("refs.json", "sys.jsonl")}
    for i in range(PROCESS_CASES):
        flag = rng.choice(["--output", "--per-item"])
        target = ["refs.json", "sys.jsonl", "hard.json", "./sys.jsonl"][i]
        proc, _ = run_multiref(["score", "-r", "refs.json", "-H", "sys.jsonl", "-m", "bleu", flag, target], tmp_path)
        assert proc.returncode == 1 and "refusing to write" in proc.stderr and "Traceback" not in proc.stderr
        assert {p: (tmp_path / p).read_bytes() for p in before} == before
