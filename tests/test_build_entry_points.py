"""One build per dataset below the command line (issue 18 item 2): ``multiref lsdscc build`` and
``python -m pipelines.lsdscc.corpus`` are one function (:func:`pipelines.lsdscc.corpus.build`),
``multiref dailydialog build``, ``python -m pipelines.dailydialog.job`` and its ``run()`` another
(:func:`pipelines.dailydialog.job.build_published`). So each pair writes the same bytes, refuses
the same folders and keeps the old dataset when the new one is unusable, in real subprocesses.
"""

from __future__ import annotations

import os

import pytest

from multiref.output import publish
from multiref.output.publish import FolderLocked
from tests.helpers import REPO_DIR
from tests.test_cli_errors import assert_one_error_line
from tests.test_data_safety import SKIP_TESTSET, run, tiny_dump  # noqa: F401 (fixture)
from tests.test_output_guard import assert_refused, run_module, someone_elses
from tests.test_publish import sidecars, tree

ENTRY_POINTS = {
    "cli": lambda folder, *argv: run("lsdscc", "build", "--output", str(folder), *SKIP_TESTSET, *argv),
    "module": lambda folder, *argv: run_module("pipelines.lsdscc.corpus", ["--output", str(folder), *argv],
                                               cwd=REPO_DIR),
}


def test_the_cli_and_python_m_write_the_same_folder(tmp_path):
    """The bundled sample, built by each: every file byte-identical, nothing left beside it."""
    trees = {}
    for name, build in ENTRY_POINTS.items():
        done = build(tmp_path / name / "lsdscc")
        assert done.returncode == 0, done.stderr
        assert sidecars(tmp_path / name) == []
        trees[name] = tree(tmp_path / name / "lsdscc")
    assert trees["cli"] == trees["module"]
    assert any(rel.startswith("single_turn/") and rel.endswith(".parquet") for rel in trees["cli"])


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_both_refuse_a_foreign_folder(entry, tmp_path, tiny_dump):
    folder = tmp_path / "mine"
    before = someone_elses(folder, tiny_dump)
    proc = ENTRY_POINTS[entry](folder, *tiny_dump[0])
    assert_refused(proc, folder, before, "NOTES.txt")


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_both_keep_the_old_dataset_when_the_new_one_is_unusable(entry, tmp_path, tiny_dump):
    """A rebuild from an empty dump has no single_turn pairs: an error line last, exit 1, and the
    dataset published before is still there, byte for byte (python -m used to publish the
    empty corpus over it)."""
    folder = tmp_path / "lsdscc"
    first = ENTRY_POINTS[entry](folder, *tiny_dump[0])
    assert first.returncode == 0, first.stderr
    before = tree(folder)
    proc = ENTRY_POINTS[entry](folder, *tiny_dump[1])
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("multiref: error: no usable dataset: no config has any rows")
    assert tree(folder) == before


def test_python_m_waits_for_no_one(tmp_path, tiny_dump):
    """The module takes the folder's lock as the CLI does: a second build is refused by name."""
    folder = tmp_path / "lsdscc"
    lock = publish.Lock(str(folder), "a test holding the folder").acquire()
    try:
        proc = ENTRY_POINTS["module"](folder, *tiny_dump[0])
    finally:
        lock.release()
    assert_one_error_line(proc, 1, "is being written by another build")
    assert "a test holding the folder" in proc.stderr
    assert not os.path.exists(folder)


def test_dailydialog_run_publishes_through_the_clis_function(tmp_path):
    """``pipelines.dailydialog.job.run`` publishes as the CLI does: it takes the lock (it used to
    write in place, lock-free), and its folder is byte-identical to the CLI's."""
    from pipelines.dailydialog.job import run as dd_run

    folder = tmp_path / "run" / "dd"
    lock = publish.Lock(str(folder), "a test holding the folder").acquire()
    try:
        with pytest.raises(FolderLocked, match="a test holding the folder"):
            dd_run(["--output", str(folder)])
    finally:
        lock.release()
    assert not os.path.exists(folder)
    summary = dd_run(["--output", str(folder)])
    assert summary["output"] == str(folder) and sidecars(folder.parent) == []
    cli = run("dailydialog", "build", "--output", str(tmp_path / "cli" / "dd"))
    assert cli.returncode == 0, cli.stderr
    assert tree(folder) == tree(tmp_path / "cli" / "dd")
