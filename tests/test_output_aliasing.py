"""One guard for every single-file output (issue 35, faults 1, 2 and 27): a command never
writes over a file it reads or a file of a dataset folder, single files are written under a
temporary name and renamed, and a legal 250-byte output name works.

Each refusal is a real ``multiref`` process: exit 1, one line ``multiref: error: ...`` naming the
output and the input (or the dataset folder), every input byte-identical. The mechanism:
multiref/output/file_output.py.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from multiref.output import file_output, publish
from multiref.util.errors import UserError
from tests.helpers import data_path
from tests.test_cli_errors import assert_one_error_line, run_multiref

REFS = data_path("score", "lsdscc_small.json")
HYPS = data_path("score", "hyps_lsdscc.jsonl")
LONG = "n" * 246 + ".txt"  # 250 bytes: a legal file name


def dataset(folder):
    """A folder this tool published, as publish_target.is_published sees it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "README.md").write_text("---\nconfigs: []\n---\n# card\n")
    (folder / "dataset_meta.json").write_text('{"configs": {}}\n')
    return folder


@pytest.fixture
def work(tmp_path):
    shutil.copy(REFS, tmp_path / "refs.json")
    shutil.copy(HYPS, tmp_path / "sys.jsonl")
    dataset(tmp_path / "ds")
    return tmp_path


def digests(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


SCORE = ["score", "-r", "refs.json", "-H", "sys.jsonl", "-m", "bleu"]
REFUSED = {
    "score-output-is-references": (SCORE + ["--output", "refs.json"], "it is the input refs.json"),
    "score-per-item-is-system": (SCORE + ["--per-item", "sys.jsonl"], "it is the input sys.jsonl"),
    "score-output-is-a-hard-link": (SCORE + ["--output", "hard.json"], "it is the input refs.json"),
    "score-output-is-a-symlink": (SCORE + ["--output", "link.jsonl"], "it is the input sys.jsonl"),
    "score-per-item-is-output": (SCORE + ["--output", "o.txt", "--per-item", "o.txt"], "it is the input o.txt"),
    "score-output-in-a-dataset": (SCORE + ["--output", "ds/README.md"], "inside the dataset folder"),
    "export-ids-card": (["lsdscc", "export-ids", "--dataset", "ds", "--output", "ds/README.md"],
                        "inside the dataset folder"),
    "annotate-export-meta": (["lsdscc", "annotate", "export", "--dataset", "ds", "--output", "ds/dataset_meta.json"],
                             "inside the dataset folder"),
    "analyze-output-in-a-dataset": (["analyze", "regression", "--ratings", str(data_path("analysis",
                                     "regression_synthetic.jsonl")), "--output", "ds/plots"], "inside the dataset folder"),
    "analyze-output-is-ratings": (["analyze", "correlation", "--ratings", "refs.json", "--output", "refs.json"],
                                  "it is the input refs.json"),
    "analyze-output-is-pairwise-ratings": (["analyze", "regression", "--ratings", "refs.json", "--pairwise-ratings",
                                            "sys.jsonl", "--output", "sys.jsonl"], "it is the input sys.jsonl"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_an_output_that_is_an_input_or_in_a_dataset_is_refused(case, work):
    os.link(work / "refs.json", work / "hard.json")
    os.symlink("sys.jsonl", work / "link.jsonl")
    argv, needle = REFUSED[case]
    before = digests(work)
    proc, _ = run_multiref(argv, work)
    assert_one_error_line(proc, 1, needle)
    output = argv[argv.index("--per-item" if "--per-item" in argv else "--output") + 1]
    assert f"refusing to write --{'per-item' if '--per-item' in argv else 'output'} {output}" in proc.stderr
    assert digests(work) == before
    assert [n for n in os.listdir(work) if n.endswith(".tmp")] == []


def test_score_writes_its_outputs_whole_beside_the_inputs(work):
    proc, _ = run_multiref(SCORE + ["--output", "scores.txt", "--per-item", "items.jsonl"], work)
    assert proc.returncode == 0, proc.stderr
    assert "bleu" in (work / "scores.txt").read_text()
    assert json.loads((work / "items.jsonl").read_text().splitlines()[0])["id"]
    assert sorted(n for n in os.listdir(work) if n.startswith(".")) == []  # no temporary file left


def test_a_250_byte_output_name_works(work):
    proc, _ = run_multiref(SCORE + ["--output", LONG, "--per-item", LONG[:-4] + ".csv"], work)
    assert proc.returncode == 0, proc.stderr
    assert "bleu" in (work / LONG).read_text()
    assert (work / (LONG[:-4] + ".csv")).read_text().startswith("id,")


def test_a_250_byte_dataset_folder_name_gets_its_sidecars(tmp_path):
    target = tmp_path / ("d" * 250)
    for kind in ("staging", "lock", "old", "ready", "leftover"):
        name = os.path.basename(publish.sidecar(str(target), kind))
        assert len(name.encode()) <= 255 and name.startswith(".ddd") and name.endswith("." + kind)
    assert publish.sidecar(str(target), "lock") == publish.sidecar(str(target), "lock")  # one per target
    assert publish.sidecar(str(tmp_path / "short"), "lock") == str(tmp_path / ".short.lock")  # unchanged
    with publish.publishing(str(target), command="test") as pub:
        (open(os.path.join(pub.staging, "x.txt"), "w")).close()
    assert os.listdir(target) == ["x.txt"] and os.listdir(tmp_path) == ["d" * 250]


def test_multibyte_names_are_cut_on_whole_characters(tmp_path):
    name = "é" * 126  # 252 bytes
    side = os.path.basename(file_output.sidecar_name(str(tmp_path / name), "staging"))
    assert len(side.encode()) <= 255
    side.encode("utf-8")  # whole characters: no surrogate escapes


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old\n")
    os.chmod(path, 0o640)

    def fails(fh):
        fh.write("half")
        raise RuntimeError("cut")

    with pytest.raises(RuntimeError):
        file_output.write_atomically(str(path), fails)
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["out.txt"]
    file_output.write_atomically(str(path), "new\n")
    assert path.read_text() == "new\n" and (os.stat(path).st_mode & 0o777) == 0o640


def test_the_guard_in_the_library(tmp_path):
    ds = dataset(tmp_path / "ds")
    (tmp_path / "in.txt").write_text("x")
    with pytest.raises(UserError, match=r"it is the input .*in\.txt"):
        file_output.check_output(str(tmp_path / "in.txt"), "--output", [str(tmp_path / "in.txt")])
    with pytest.raises(UserError, match="inside the dataset folder"):
        file_output.check_output(str(ds / "deep" / "er" / "x.json"), "--output")
    with pytest.raises(UserError, match="is a folder"):
        file_output.check_output(str(tmp_path), "--output")
    with pytest.raises(UserError, match="inside the dataset folder"):
        file_output.check_output_folder(str(ds), "--output")
    with pytest.raises(UserError, match="inside the dataset folder"):  # a build into a dataset's subfolder
        with publish.publishing(str(ds / "inner"), command="test"):
            pass
    assert not (ds / "inner").exists() and sorted(os.listdir(ds)) == ["README.md", "dataset_meta.json"]
    assert file_output.check_output(str(tmp_path / "new.txt"), "--output", ["-", None]) == str(tmp_path / "new.txt")
