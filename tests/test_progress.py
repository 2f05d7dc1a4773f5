"""Progress on stderr (multiref/util/progress.py): off when stderr is not a terminal unless asked."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from multiref.util import progress
from tests.helpers import REPO_DIR, data_path


class _Tty(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture(autouse=True)
def _restore_mode(monkeypatch):
    monkeypatch.delenv(progress.ENV, raising=False)


@pytest.mark.parametrize("quiet, force, tty, shown", [
    (False, False, False, False),  # a file or a pipe: nothing
    (False, False, True, True),    # a terminal: shown
    (False, True, False, True),    # --progress: shown anyway
    (True, False, True, False),    # --quiet: never
    (True, True, True, False),     # --quiet wins over --progress
])
def test_mode(quiet, force, tty, shown):
    stream = _Tty() if tty else io.StringIO()
    with progress.configured(quiet=quiet, force=force):
        assert progress.enabled(stream) is shown
        bar = progress.Progress("counting", total=4, unit="rows", stream=stream)
        for _ in range(4):
            bar.update()
        bar.close()
    assert os.environ.get(progress.ENV) is None  # restored after the command
    assert ("counting: 100% 4/4 rows" in stream.getvalue()) is shown


def test_plain_lines_and_terminal_redraws():
    with progress.configured(force=True):
        plain = io.StringIO()
        with progress.Progress("indexing", total=2, unit="docs", stream=plain) as bar:
            bar.update(2)
        lines = plain.getvalue().splitlines()
        assert lines[0] == "indexing ..." and lines[-1].startswith("indexing: 100% 2/2 docs") \
            and lines[-1].endswith("(done)")
    tty = _Tty()
    with progress.configured():
        with progress.Progress("search", total=3, unit="queries", stream=tty) as bar:
            bar.update(3)
    assert tty.getvalue().startswith("\r\x1b[K") and tty.getvalue().endswith("(done)\n")


def test_byte_reader_counts_bytes_and_lines(tmp_path):
    path = tmp_path / "dump.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": 2}\n{"c": 3}\n')
    with progress.configured(quiet=True):
        with progress.ByteReader(open(path, "rb"), "reading", total=path.stat().st_size) as fh:
            assert [line for line in fh] == path.read_bytes().splitlines(keepends=True)
            assert fh.lines == 3 and fh.bar.done == path.stat().st_size


def test_iterate_and_step_pass_values_through():
    with progress.configured(quiet=True):
        assert list(progress.iterate(range(5), "x")) == [0, 1, 2, 3, 4]
        with progress.step("y") as bar:
            assert bar.active is False


def _regression(*extra):
    return subprocess.run([sys.executable, "-m", "multiref_cli", "analyze", "regression", "--ratings",
                           str(data_path("analysis", "regression_synthetic.jsonl")), "--format", "json", *extra],
                          capture_output=True, text=True, cwd=REPO_DIR, timeout=180)


def test_cli_progress_only_when_asked():
    quiet_run, asked = _regression(), _regression("--progress")
    assert quiet_run.returncode == asked.returncode == 0
    assert quiet_run.stderr == ""  # stderr is a pipe here: no progress
    assert "regression: leave-one-out" in asked.stderr and asked.stdout == quiet_run.stdout
    assert _regression("--progress", "--quiet").stderr == ""


def test_step_ticks_while_a_silent_call_runs(monkeypatch):
    import time

    monkeypatch.setattr(progress, "PLAIN_INTERVAL", 0.05)
    monkeypatch.setattr(progress.sys, "stderr", io.StringIO())
    with progress.configured(force=True):
        with progress.step("silent"):
            time.sleep(0.4)  # a call that reports nothing
    lines = progress.sys.stderr.getvalue().splitlines()
    assert lines[0] == "silent ..." and lines[-1].endswith("(done)")
    assert len(lines) >= 4  # redrawn with the elapsed time while it ran
