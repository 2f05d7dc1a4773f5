"""A build never deletes what it did not write, and a full disk is the user's error, not a bug
(issue 17, items 1 and 4), in real subprocesses of every command that publishes a folder:
``multiref lsdscc build|testset|annotate import``, ``multiref dailydialog build`` and the
``python -m pipelines.*`` entry points.

Each refusal is exit 1 and one line ``multiref: error: ...`` naming the folder and what is in
it, with every file byte-identical (sha256) and no lock or staging sidecar left beside it.
The disk-full case runs on a real 20 MB tmpfs (mounted as root, or inside ``unshare -rm``).
The mechanism: multiref/output/publish_target.py.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys

import pytest

from multiref.output import publish
from multiref.util.errors import UserError
from tests.helpers import REPO_DIR
from tests.test_cli_errors import assert_one_error_line, run_multiref
from tests.test_data_safety import SKIP_TESTSET, base, copy_of, load_rows, run, tiny_dump  # noqa: F401 (fixtures)
from tests.test_publish import make, sidecars, tree

DD_SAMPLE = REPO_DIR / "dailydialog_pp" / "sample"


def run_module(module, argv, cwd):
    """``python -m MODULE ARGV`` in ``cwd`` (the pipelines' own entry points)."""
    env = dict(os.environ)
    env.pop("MULTIREF_DEBUG", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_DIR), env.get("PYTHONPATH")) if p)  # cwd is elsewhere
    return subprocess.run([sys.executable, "-m", module, *argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def someone_elses(folder, tiny_dump) -> dict:
    """A folder of a user's files: notes, a dump, a subfolder. Returns its digests."""
    make(folder, {"NOTES.txt": "my notes\n", "drafts/plan.md": "# plan\n"})
    shutil.copy(tiny_dump[0][3], folder / "RC_tiny.jsonl")  # the comments of the tiny dump
    return tree(folder)


def assert_refused(proc, folder, before, *needles):
    """Exit 1, one line naming the folder and ``needles``; every file as it was; no sidecar."""
    assert_one_error_line(proc, 1, str(os.path.realpath(folder)))
    for needle in needles:
        assert needle in proc.stderr, proc.stderr
    assert tree(folder) == before
    assert sidecars(os.path.dirname(os.path.realpath(folder))) == []


# ---------------------------------------------------------------- a folder we did not write


def _commands(folder, tmp_path):
    csv = tmp_path / "annotator.csv"
    csv.write_text("id,relevant,group\n")
    return {
        "lsdscc-build": ("multiref_cli", ["lsdscc", "build", "--output", str(folder), *SKIP_TESTSET]),
        "lsdscc-testset": ("multiref_cli", ["lsdscc", "testset", "--dataset", str(folder)]),
        "annotate-import": ("multiref_cli", ["lsdscc", "annotate", "import", "--dataset", str(folder), "--annotations",
                                         str(csv), "--output", str(tmp_path / "public")]),
        "dailydialog-build": ("multiref_cli", ["dailydialog", "build", "--output", str(folder)]),
        "module-lsdscc-corpus": ("pipelines.lsdscc.corpus", ["--output", str(folder)]),
        "module-dailydialog": ("pipelines.dailydialog.job", ["--output", str(folder)]),
        "module-lsdscc-testset": ("pipelines.lsdscc.testset", ["--dataset", str(folder)]),
    }


COMMANDS = ["lsdscc-build", "lsdscc-testset", "annotate-import", "dailydialog-build", "module-lsdscc-corpus",
            "module-dailydialog", "module-lsdscc-testset"]


@pytest.mark.parametrize("command", COMMANDS)
def test_a_folder_of_someone_elses_files_is_refused_by_every_command(command, tiny_dump, tmp_path):
    folder = tmp_path / "mine"
    before = someone_elses(folder, tiny_dump)
    module, argv = _commands(folder, tmp_path)[command]
    proc = run_module(module, argv, tmp_path)
    assert_refused(proc, folder, before, "not a dataset folder written by multiref",
                   "3 entries: NOTES.txt, RC_tiny.jsonl, drafts/")
    assert not (tmp_path / "public").exists()


NOT_OURS = {
    "hidden-file-only": {".env": "TOKEN=1\n"},
    "empty-subfolder-only": {"data/.keep": ""},
    "someone-elses-dataset_meta": {"dataset_meta.json": '{"name": "theirs"}\n', "README.md": "# theirs\n"},
    "dataset_meta-without-card": {"dataset_meta.json": '{"configs": {}}\n', "notes.txt": "x\n"},
    "many-files": {f"f{i}.txt": str(i) for i in range(7)},
}


@pytest.mark.parametrize("case", sorted(NOT_OURS))
def test_a_non_empty_folder_that_is_not_ours_is_refused(case, tmp_path):
    folder = tmp_path / "out"
    make(folder, NOT_OURS[case])
    before = tree(folder)
    proc, _ = run_multiref(["lsdscc", "build", "--output", str(folder), *SKIP_TESTSET], tmp_path)
    entries = sorted(n + ("/" if (folder / n).is_dir() else "") for n in os.listdir(folder))
    assert_refused(proc, folder, before, f"holds {len(entries)} entr", entries[0])
    if case == "many-files":
        assert "7 entries: f0.txt, f1.txt, f2.txt, f3.txt, ...;" in proc.stderr


def test_output_dot_holding_the_input_is_refused(tiny_dump, tmp_path):
    before = someone_elses(tmp_path / "work", tiny_dump)
    proc, _ = run_multiref(["lsdscc", "build", "--input", "RC_tiny.jsonl", "--output", ".", *SKIP_TESTSET],
                           tmp_path / "work")
    assert_refused(proc, tmp_path / "work", before, "contains the input RC_tiny.jsonl")


def test_dailydialog_output_dot_is_refused(tmp_path):
    work = tmp_path / "work"
    shutil.copytree(DD_SAMPLE, work / "dd")
    (work / "NOTES.txt").write_text("mine\n")
    before = tree(work)
    proc, _ = run_multiref(["dailydialog", "build", "--dailydialog", "dd", "--output", "."], work)
    assert_refused(proc, work, before, "contains the input dd")


def test_output_equal_to_the_input_folder_is_refused(tiny_dump, tmp_path):
    folder = tmp_path / "dumps"
    folder.mkdir()
    for path in tiny_dump[0][1::2]:
        shutil.copy(path, folder)
    before = tree(folder)
    proc, _ = run_multiref(["lsdscc", "build", "--input", str(folder), "--output", str(folder), *SKIP_TESTSET],
                           tmp_path)
    assert_refused(proc, folder, before, f"it is the input {folder}")


@pytest.mark.parametrize("spec", ["dumps", "dumps/RC_tiny.jsonl", "dumps/*.jsonl"])
def test_our_dataset_holding_an_input_is_refused(spec, base, tiny_dump, tmp_path):
    """Even a folder this tool published is kept when the build reads from inside it."""
    folder = copy_of(base, tmp_path)
    (folder / "dumps").mkdir()
    for path in tiny_dump[0][1::2]:
        shutil.copy(path, folder / "dumps")
    before = tree(folder)
    proc, _ = run_multiref(["lsdscc", "build", "--input", str(folder / spec), "--output", str(folder), *SKIP_TESTSET],
                           tmp_path)
    assert_refused(proc, folder, before, "contains the input")


# ---------------------------------------------------------------- what may be replaced


def test_symlinked_output_is_followed_and_stays_a_link(base, tmp_path):
    real = copy_of(base, tmp_path)
    link = tmp_path / "link"
    link.symlink_to(real.name)
    done = run("lsdscc", "build", "--output", str(link), "--vocab-size", "300", *SKIP_TESTSET)
    assert done.returncode == 0, done.stderr
    assert os.path.islink(link) and os.readlink(link) == real.name
    assert tree(real) != base[1] and tree(link) == tree(real)
    assert load_rows(link, "single_turn", tmp_path)["train"] > 0
    assert sidecars(tmp_path) == []


def test_symlink_to_someone_elses_folder_is_refused(tiny_dump, tmp_path):
    before = someone_elses(tmp_path / "mine", tiny_dump)
    (tmp_path / "link").symlink_to("mine")
    proc, _ = run_multiref(["dailydialog", "build", "--output", "link"], tmp_path)
    assert_refused(proc, tmp_path / "mine", before, "NOTES.txt")
    assert os.path.islink(tmp_path / "link")


@pytest.mark.parametrize("how", ["cli", "module"])
def test_our_previous_dataset_is_replaced_whole(how, base, tmp_path):
    """Our own dataset (also from ``python -m pipelines.lsdscc.corpus``, which used to clear it
    in place) is replaced by a new folder swapped in: a new inode, no sidecar, loadable."""
    folder = copy_of(base, tmp_path)
    inode = os.stat(folder).st_ino
    if how == "cli":
        done = run("lsdscc", "build", "--output", str(folder), "--vocab-size", "300", *SKIP_TESTSET)
    else:
        done = run_module("pipelines.lsdscc.corpus", ["--output", str(folder), "--vocab-size", "300"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert os.stat(folder).st_ino != inode and sidecars(tmp_path) == []
    assert tree(folder) != base[1] and load_rows(folder, "single_turn", tmp_path)["train"] > 0
    assert ".staging" not in done.stdout


def test_dailydialog_module_publishes_whole(tmp_path):
    folder = tmp_path / "dd"
    first = run_module("pipelines.dailydialog.job", ["--output", str(folder)], tmp_path)
    assert first.returncode == 0, first.stderr
    inode = os.stat(folder).st_ino
    again = run_module("pipelines.dailydialog.job", ["--output", str(folder), "--seed", "7"], tmp_path)
    assert again.returncode == 0, again.stderr
    assert os.stat(folder).st_ino != inode and sidecars(tmp_path) == []
    assert json.loads(again.stdout.strip().splitlines()[-1])["multiref"] == {"test": 37}
    assert load_rows(folder, "multiref", tmp_path) == {"test": 37}


# ---------------------------------------------------------------- remote prefixes (on local paths)


def test_remote_prefix_of_someone_elses_objects_is_refused(tmp_path):
    from multiref.output import publish_remote as remote
    from multiref.output import publish_target

    make(tmp_path / "data", {"exports/a.csv": "1\n", "_SUCCESS": ""})  # e.g. a Spark job's output
    before = tree(tmp_path / "data")
    with pytest.raises(publish_target.NotOurFolder, match=r"holds 2 object\(s\) under 2 entries: _SUCCESS, exports/"):
        with remote.publishing_remote(str(tmp_path / "data"), command="test"):
            pytest.fail("the build must not start")
    assert tree(tmp_path / "data") == before and sidecars(tmp_path) == []
    with pytest.raises(publish_target.NotOurFolder, match="contains the input"):
        with remote.publishing_remote("gs://b/out", command="test", inputs=["gs://b/out/dumps/RC_*.zst"]):
            pytest.fail("the build must not start")


# ---------------------------------------------------------------- OS errors on the output


@pytest.mark.parametrize("exc, mapped", [
    (OSError(errno.ENOSPC, "No space left on device"), errno.ENOSPC),
    (RuntimeError("OSError: [Errno 28] No space left on device [while running 'Write/multi_turn/WriteShard']"),
     errno.ENOSPC),  # how Beam re-raises a worker's error
    (OSError(errno.EROFS, "Read-only file system"), errno.EROFS),
    (PermissionError(errno.EACCES, "Permission denied", "STAGING/single_turn/x.parquet"), errno.EACCES),
    (PermissionError(errno.EACCES, "Permission denied", "/elsewhere/input.zst"), None),  # the CLI names the input
    (FileNotFoundError(errno.ENOENT, "No such file or directory", "STAGING/x"), None),  # our bug: not hidden
    (KeyError("configs"), None),
])
def test_os_errors_on_the_output_are_one_line_and_remove_staging(exc, mapped, tmp_path):
    target = tmp_path / "data"
    make(target, {"README.md": "# ours\n", "dataset_meta.json": '{"configs": {}}\n'})
    before = tree(target)
    if isinstance(exc, OSError) and exc.filename:
        exc.filename = exc.filename.replace("STAGING", str(tmp_path / ".data.staging"))
    with pytest.raises(Exception) as caught:
        with publish.publishing(str(target), command="test") as pub:
            make(pub.staging, {"single_turn/train.parquet": "partial"})
            raise exc
    assert tree(target) == before
    if mapped:
        assert isinstance(caught.value, UserError) and caught.value.__cause__ is exc
        assert f"cannot write the output {target}: {os.strerror(mapped)} ({errno.errorcode[mapped]})" in str(caught.value)
        assert sidecars(tmp_path) == []
    else:
        assert caught.value is exc


def _small_filesystem(folder) -> bool:
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", str(folder)], capture_output=True)
    return done.returncode == 0


def test_disk_full_keeps_the_previous_dataset(tmp_path):
    """A 20 MB tmpfs, our dataset on it, then a filler leaving 150 KB: the rebuild fails with
    one line naming the folder and ENOSPC's text, exit 1; the dataset is byte-identical and
    loads; no staging folder is left."""
    if os.geteuid() != 0:
        if os.environ.get("MULTIREF_IN_UNSHARE") or shutil.which("unshare") is None or subprocess.run(
                ["unshare", "-rm", "true"], capture_output=True).returncode != 0:
            pytest.skip("needs root or `unshare -rm` to mount a small tmpfs")
        inner = subprocess.run(["unshare", "-rm", sys.executable, "-m", "pytest", "-p", "no:xdist", "-q",
                                f"{__file__}::test_disk_full_keeps_the_previous_dataset"],
                               env={**os.environ, "MULTIREF_IN_UNSHARE": "1"}, capture_output=True, text=True)
        assert inner.returncode == 0 and " passed" in inner.stdout, inner.stdout + inner.stderr
        return
    small = tmp_path / "small"
    assert _small_filesystem(small), "root, yet mount -t tmpfs failed"
    try:
        folder = small / "lsdscc"
        done = run("lsdscc", "build", "--output", str(folder), "-q", *SKIP_TESTSET)
        assert done.returncode == 0, done.stderr
        before = tree(folder)
        stat = os.statvfs(small)
        with open(small / "filler", "wb") as fh:
            os.posix_fallocate(fh.fileno(), 0, stat.f_bavail * stat.f_frsize - 150 * 1024)
        failed = run("lsdscc", "build", "--output", str(folder), "-q", "--vocab-size", "300", *SKIP_TESTSET)
        assert_one_error_line(failed, 1, f"cannot write the output {folder}: No space left on device (ENOSPC)")
        assert tree(folder) == before
        assert sorted(os.listdir(small)) == ["filler", "lsdscc"]  # no staging, lock or leftover
        assert load_rows(folder, "single_turn", tmp_path) == json.loads(
            (folder / "dataset_meta.json").read_text())["configs"]["single_turn"]["splits"]
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False)
