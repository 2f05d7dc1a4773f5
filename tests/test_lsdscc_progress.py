"""Progress and notes of the corpus build on stderr (issue 13 item 4): reading a dump shows
bytes and lines/s with --progress, nothing when stderr is not a terminal, and --quiet
silences the ``[lsdscc]`` notes too. The output bytes never depend on it."""

import subprocess
import sys

import pytest

from multiref.util import progress


def _build(tmp_path, *flags):
    out = tmp_path / ("o" + "".join(f.strip("-")[0] for f in flags))
    proc = subprocess.run([sys.executable, "-m", "pipelines.lsdscc.corpus", "--output", str(out), *flags],
                          capture_output=True, text=True, env=_env())
    assert proc.returncode == 0, proc.stderr
    return out, proc.stderr


def _env():
    import os

    env = dict(os.environ)
    env.pop(progress.ENV, None)
    return env


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("progress")
    return {flag: _build(tmp, *([flag] if flag else [])) for flag in ("--progress", "", "--quiet")}


def test_progress_shows_reading_bytes_and_lines(builds):
    _, err = builds["--progress"]
    done = [line for line in err.splitlines() if line.startswith("reading RC_sample.jsonl.zst: 100%")]
    assert len(done) == 1 and "lines/s" in done[0] and done[0].endswith("(done)"), err
    assert " 9,404 lines," in done[0]  # the bundled RC sample's lines (lsdscc/corpus/sample/RC_sample.jsonl.zst)
    assert "[lsdscc] running the Beam pipeline" in err


def test_no_progress_off_a_terminal_and_quiet_silences_notes(builds):
    _, err = builds[""]
    assert "reading" not in err and "[lsdscc] running the Beam pipeline" in err
    _, err = builds["--quiet"]
    assert "reading" not in err and "[lsdscc]" not in err


def test_progress_does_not_change_the_output(builds):
    def files(folder):
        return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}

    shown, silent = files(builds["--progress"][0]), files(builds["--quiet"][0])
    assert len(shown) >= 10 and shown == silent
