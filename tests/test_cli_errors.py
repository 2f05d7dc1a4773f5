"""The bad-input battery: every command, run as a real process, against user mistakes.

Each case asserts the documented exit status (1 bad input, 2 usage; README "Command-line
conventions"), exactly one line on stderr, ``multiref: error: ...`` naming the file, line or
option, and no traceback. Unreachable cloud and network paths must fail within seconds:
``STORAGE_EMULATOR_HOST`` points the gs:// check at a closed local port, so the case is the
same with or without a network.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from tests.helpers import REPO_DIR, data_path

BINARY = bytes(range(256)) * 8  # not UTF-8, not JSON, not CSV
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens there
DD_SAMPLE = REPO_DIR / "dailydialog_pp" / "sample"


def _files(folder):
    """Bad inputs of every kind, in ``folder``."""
    (folder / "binary.dat").write_bytes(BINARY)
    (folder / "empty.jsonl").write_text("")
    (folder / "array.json").write_text('[{"id": "a", "references": ["x"]}]\n')
    (folder / "lists.jsonl").write_text('[{"index": 0}]\n[{"index": 1}]\n')
    (folder / "object.jsonl").write_text('{"x": 1}\n')
    (folder / "columns.csv").write_text("foo,bar\n1,2\n")
    (folder / "a_file").write_text("not a folder\n")
    dd = folder / "dd_binary" / "test"
    dd.mkdir(parents=True)
    (dd / "dialogues_test.txt").write_bytes(BINARY)
    for name in ("dialogues_act_test.txt", "dialogues_emotion_test.txt"):
        (dd / name).write_bytes((DD_SAMPLE / "test" / name).read_bytes())
    (folder / "ddpp").mkdir()
    (folder / "ddpp" / "dev.json").write_text('{"id": 1, "context": "not a list"}\n')
    corpus = folder / "empty_corpus" / "single_turn"
    corpus.mkdir(parents=True)
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": pa.array([], pa.string())}), corpus / "train-00000-of-00001.parquet")
    from multiref.output import hfdata  # a corpus this tool wrote (a build of no rows): the stage may update it

    hfdata.add_config(str(corpus.parent), hfdata.ConfigInfo(name="single_turn", description="no rows",
                                                            splits={"train": 0}, features=pa.schema([("id", pa.string())])))
    (folder / "annotated.csv").write_text("x\n")
    _deep_files(folder)


DEEP = "[" * 100_000 + "]" * 100_000  # a RecursionError (exit 3) in json before the nesting bound


def _deep_files(folder):
    """Reference and hypothesis files nested too deeply, and other JSON the parser itself refuses."""
    (folder / "deep.json").write_text(DEEP + "\n")
    (folder / "deep_lsdscc.json").write_text('{\n  "q1": {"1": ["a b"]},\n  "q2": {"1": ' + DEEP + '}\n}\n')
    (folder / "deep_refs.jsonl").write_text('{"id": "a", "references": ["x"]}\n{"id": "b", "references": ' + DEEP + '}\n')
    (folder / "deep_hyps.jsonl").write_text('{"id": "a", "hypothesis": "x"}\n\n{"id": "b", "hypotheses": ' + DEEP + '}\n')
    (folder / "deep_200.jsonl").write_text('{"id": "a", "references": ' + "[" * 200 + "]" * 200 + '}\n')
    (folder / "deep_strings.jsonl").write_text(json.dumps({"id": "a", "references": ["[" * 5000]}) + "\n")
    (folder / "bigint.jsonl").write_text('{"id": "a", "references": ["x"]}\n{"id": ' + "9" * 5000 + ', "references": ["x"]}\n')
    (folder / "bigint.json").write_text('{\n"q": {"1": ["x"]},\n"r": {"1": [' + "9" * 5000 + ']}}\n')
    meta = folder / "deep_meta" / "test_grouped"
    meta.mkdir(parents=True)
    (folder / "deep_meta" / "dataset_meta.json").write_text('{"configs": ' + DEEP + '}')


SCORE_REFS = str(data_path("score", "lsdscc_small.json"))
SCORE_HYPS = str(data_path("score", "hyps_lsdscc.jsonl"))
RATINGS = str(data_path("analysis", "ratings.csv"))
REGRESSION = str(data_path("analysis", "regression_synthetic.jsonl"))

# (id, argv, exit status, text the error line must contain)
CASES = [
    ("score-binary", ["score", "-r", "binary.dat", "-H", SCORE_HYPS], 1, "binary.dat"),
    ("score-empty", ["score", "-r", SCORE_REFS, "-H", "empty.jsonl"], 1, "empty.jsonl"),
    ("score-array", ["score", "-r", SCORE_REFS, "-H", "array.json"], 1, "array.json"),
    ("score-lists", ["score", "-r", SCORE_REFS, "-H", "lists.jsonl"], 1, "lists.jsonl:1"),
    ("score-missing", ["score", "-r", "missing.json", "-H", SCORE_HYPS], 1, "missing.json"),
    ("score-unwritable", ["score", "-r", SCORE_REFS, "-H", SCORE_HYPS, "-o", "a_file/out.txt"], 1, "a_file"),
    ("score-gs", ["score", "-r", "gs://bucket/refs.json", "-H", SCORE_HYPS], 1, "gs://bucket/refs.json"),
    ("score-http", ["score", "-r", f"{CLOSED}/refs.json", "-H", SCORE_HYPS], 1, "127.0.0.1:9"),
    ("score-deep-refs-document", ["score", "-r", "deep.json", "-H", SCORE_HYPS], 1, "deep.json:1: JSON nested deeper than 100 levels"),
    ("score-deep-lsdscc", ["score", "-r", "deep_lsdscc.json", "-H", SCORE_HYPS], 1, "deep_lsdscc.json:3: JSON nested deeper"),
    ("score-deep-refs-line", ["score", "-r", "deep_refs.jsonl", "-H", SCORE_HYPS], 1, "deep_refs.jsonl:2: JSON nested deeper"),
    ("score-deep-hyps-line", ["score", "-r", SCORE_REFS, "-H", "deep_hyps.jsonl"], 1, "deep_hyps.jsonl:3: JSON nested deeper"),
    ("score-deep-200", ["score", "-r", "deep_200.jsonl", "-H", SCORE_HYPS], 1, "deep_200.jsonl:1: JSON nested deeper than 100"),
    ("score-brackets-in-strings", ["score", "-r", "deep_strings.jsonl", "-H", SCORE_HYPS], 1, "the references have no queries"),
    ("score-bigint-line", ["score", "-r", "bigint.jsonl", "-H", SCORE_HYPS], 1, "bigint.jsonl:2: invalid JSON"),
    ("score-bigint-document", ["score", "-r", "bigint.json", "-H", SCORE_HYPS], 1, "bigint.json:3: invalid JSON"),
    ("score-deep-dataset-meta", ["score", "-r", "deep_meta", "-H", SCORE_HYPS], 1, "deep_meta: not a dataset folder"),
    ("score-unknown-option", ["score", "-r", SCORE_REFS, "-H", SCORE_HYPS, "--lowercse"], 2, "--lowercase"),
    ("score-missing-option", ["score", "-r", SCORE_REFS], 2, "--hypotheses"),
    ("correlation-binary", ["analyze", "correlation", "--ratings", "binary.dat"], 1, "binary.dat"),
    ("correlation-columns", ["analyze", "correlation", "--ratings", "columns.csv"], 1, "columns.csv:2"),
    ("refcount-lists", ["analyze", "refcount", "--ratings", RATINGS, "--multiref-references", "lists.jsonl"],
     1, "lists.jsonl:1"),
    ("discrimination-object", ["analyze", "discrimination", "--test", "object.jsonl"], 1, "object.jsonl"),
    ("regression-columns", ["analyze", "regression", "--ratings", "columns.csv"], 1, "columns.csv"),
    ("regression-unwritable", ["analyze", "regression", "--ratings", REGRESSION, "--output", "a_file/out"],
     1, "a_file"),
    ("lsdscc-build-missing", ["lsdscc", "build", "--input", "missing.zst", "--output", "out"], 1, "missing.zst"),
    ("lsdscc-build-gs", ["lsdscc", "build", "--input", "gs://bucket/RC_2017-01.zst", "--output", "out"],
     1, "gs://bucket/RC_2017-01.zst"),
    ("lsdscc-build-unwritable", ["lsdscc", "build", "--output", "a_file/out"], 1, "a_file"),
    ("lsdscc-build-vocabsize", ["lsdscc", "build", "--vocabsize", "5"], 2, "--vocab-size"),
    ("lsdscc-build-beam-typo", ["lsdscc", "build", "--direct_num_worker", "2"], 2, "--direct_num_workers"),
    ("lsdscc-build-beam-bad-value", ["lsdscc", "build", "--direct_num_workers", "two"], 2,
     "argument --direct_num_workers: invalid int value: 'two'"),
    ("dailydialog-bad-runner", ["dailydialog", "build", "--output", "dd", "--runner", "no_such.module.Runner"], 2,
     "--runner no_such.module.Runner: cannot import no_such.module"),
    ("lsdscc-testset-zero-rows", ["lsdscc", "testset", "--dataset", "empty_corpus"], 1, "no pairs"),
    ("annotate-export-missing", ["lsdscc", "annotate", "export", "--dataset", "missing", "--output", "x.csv"],
     1, "missing"),
    ("annotate-import-onto-file", ["lsdscc", "annotate", "import", "--dataset", "empty_corpus", "--annotations",
                                   "annotated.csv", "--output", "a_file"], 1, "a_file"),
    ("crawl-binary-ids", ["lsdscc", "crawl", "--output", "crawl", "--ids", "binary.dat"], 1, "binary.dat"),
    ("dailydialog-binary", ["dailydialog", "build", "--output", "dd", "--dailydialog", "dd_binary"],
     1, "dialogues_test.txt"),
    ("dailydialog-multiref-lists", ["dailydialog", "build", "--output", "dd", "--dailydialog", str(DD_SAMPLE),
                                    "--multiref-references", "lists.jsonl"], 1, "lists.jsonl:1"),
    ("dailydialog-multiref-shape", ["dailydialog", "build", "--output", "dd", "--dailydialog", str(DD_SAMPLE),
                                    "--multiref-references", "object.jsonl"], 1, "multireftest.json"),
    ("dailydialog-ddpp-shape", ["dailydialog", "build", "--output", "dd", "--dailydialog", str(DD_SAMPLE),
                                "--ddpp", "ddpp"], 1, "dev.json:1"),
    ("dailydialog-unwritable", ["dailydialog", "build", "--output", "a_file/dd"], 1, "a_file"),
    ("annotate-serve-port", ["lsdscc", "annotate", "serve", "--dataset", "missing", "--output", "x.csv", "--port",
                             "70000"], 2, "argument --port: must be from 0 to 65535, got 70000"),
    ("metrics-path-unknown", ["metrics", "path", "no_such_metric"], 1, "no_such_metric"),
    ("group-without-command", ["analyze"], 2, "correlation"),
]


@pytest.fixture(scope="module")
def bad_inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bad")
    _files(folder)
    return folder


def run_multiref(argv, cwd, env_extra=None, timeout=180):
    env = {**os.environ, "STORAGE_EMULATOR_HOST": CLOSED, **(env_extra or {})}
    env.pop("MULTIREF_DEBUG", None)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "multiref_cli", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    return proc, time.perf_counter() - start


def assert_one_error_line(proc, status, needle):
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("multiref: error: "), proc.stderr
    assert needle in lines[0], lines[0]
    assert proc.returncode == status, (proc.returncode, proc.stderr)


@pytest.mark.parametrize("case, argv, status, needle", CASES, ids=[c[0] for c in CASES])
def test_bad_input_gives_one_error_line(bad_inputs, case, argv, status, needle):
    proc, seconds = run_multiref(argv, bad_inputs)
    assert_one_error_line(proc, status, needle)
    if "gs://" in " ".join(argv) or CLOSED in " ".join(argv):
        assert seconds < 30, f"{case}: an unreachable path took {seconds:.0f} s"


def test_unknown_option_suggests_the_closest(bad_inputs):
    proc, _ = run_multiref(["lsdscc", "build", "--vocabsize", "5"], bad_inputs)
    assert "unknown option --vocabsize" in proc.stderr and "did you mean --vocab-size?" in proc.stderr
    assert not (bad_inputs / "out" / "lsdscc").exists()  # nothing was built


def test_version_of_a_build_command_runs_nothing(bad_inputs):
    proc, _ = run_multiref(["lsdscc", "build", "--version", "--output", "version_out"], bad_inputs)
    assert proc.returncode == 0 and proc.stdout.startswith("multiref-dialog ")
    assert not (bad_inputs / "version_out").exists()


def test_existing_output_file_of_annotate_import(bad_inputs):
    # The message says what exists and what to do, whatever the layer that notices it.
    proc, _ = run_multiref(["lsdscc", "annotate", "import", "--dataset", "empty_corpus", "--annotations",
                            "annotated.csv", "--output", "a_file"], bad_inputs)
    assert "a_file" in proc.stderr and "folder" in proc.stderr


def test_blank_rating_is_left_out_and_said(tmp_path):
    rows = (data_path("analysis", "ratings.csv")).read_text(encoding="utf-8").splitlines()
    header = rows[0].split(",")
    column = header.index("human_average_rating")
    # blank the rating of the first data row (a CSV row whose fields hold no commas inside quotes)
    first = next(i for i, r in enumerate(rows[1:], start=1) if '"' not in r)
    fields = rows[first].split(",")
    fields[column] = ""
    rows[first] = ",".join(fields)
    path = tmp_path / "ratings.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    proc, _ = run_multiref(["analyze", "correlation", "--ratings", str(path), "--metric", "bleu1",
                            "--bootstrap", "0", "--format", "json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"1 row(s) without a rating left out (first at {path}:{first + 1})" in proc.stderr
    json.loads(proc.stdout)


def _raiser(exc):
    def handler(args):
        raise exc
    return handler


@pytest.mark.parametrize("exc, status, text", [
    (KeyboardInterrupt(), 130, "interrupted"),
    (RuntimeError("boom\nsecond line"), 3, "internal error"),
    (ValueError("Pipeline has validation errors:\nInvalid Project ID (BAD PROJECT)."), 1,
     "Pipeline has validation errors: Invalid Project ID (BAD PROJECT)."),
    (FileExistsError(17, "File exists", "out.csv"), 1, "already exists: out.csv"),
    (OSError(28, "No space left on device"), 1, "OSError: [Errno 28] No space left on device"),
])
def test_exit_statuses_in_process(capsys, monkeypatch, exc, status, text):
    import argparse

    from multiref_cli import _run

    monkeypatch.delenv("MULTIREF_DEBUG", raising=False)
    assert _run(_raiser(exc), argparse.Namespace(command="score")) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("multiref: error: ") and text in err and "Traceback" not in err


def _beam_io_error():
    from apache_beam.io.filesystems import FileSystems

    try:  # Beam's file systems wrap every failure (a gs:// upload's too) in a BeamIOError without a filename
        FileSystems.rename(["/nonexistent-multiref/a"], ["/nonexistent-multiref/b"])
    except OSError as exc:
        return exc
    raise AssertionError("the rename should have failed")


def _cloud_error():
    from google.api_core.exceptions import Forbidden

    return Forbidden("POST https://storage.googleapis.com/upload/b/x: caller lacks storage.objects.create")


@pytest.mark.parametrize("make, text", [
    (_beam_io_error, "BeamIOError: Rename operation failed"),
    (_cloud_error, "Forbidden: 403 POST https://storage.googleapis.com/upload/b/x"),
])
def test_storage_failures_are_the_environments_not_bugs(capsys, monkeypatch, make, text):
    """A failed write to a file system or a bucket (mid-publish too) is exit 1 and one line, not exit 3."""
    import argparse

    from multiref_cli import _run

    monkeypatch.delenv("MULTIREF_DEBUG", raising=False)
    wrapped = RuntimeError("Beam wrapped it")
    wrapped.__cause__ = make()
    assert _run(_raiser(wrapped), argparse.Namespace(command="score")) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and text in err and "internal error" not in err


def test_a_bug_shows_its_traceback_when_asked(monkeypatch):
    import argparse

    from multiref_cli import _run

    monkeypatch.setenv("MULTIREF_DEBUG", "1")
    with pytest.raises(RuntimeError, match="boom"):
        _run(_raiser(RuntimeError("boom")), argparse.Namespace(command="score"))


def test_beam_failure_on_user_input_drops_beams_log(capsys):
    # Beam logs a failing step's exception before re-raising it; for a user mistake only our line remains.
    import argparse
    import logging

    from multiref_cli import _run
    from multiref.util.errors import UserError

    def handler(args):
        logging.getLogger("apache_beam.runners.worker").error("Traceback (most recent call last): ...")
        raise UserError("data.txt:3: not valid UTF-8")

    assert _run(handler, argparse.Namespace(command="dailydialog")) == 1
    assert capsys.readouterr().err == "multiref: error: data.txt:3: not valid UTF-8\n"


def test_the_local_workers_routine_warning_is_not_shown(capsys):
    # each worker of Beam's multi-processing mode (--workers 2) relays this warning on every run
    import logging

    from multiref_cli.beam_logs import captured_beam_logs

    with captured_beam_logs():
        logging.getLogger("apache_beam.runners.worker").warning(  # as Beam relays it: the entry an argument
            "Worker: %s", 'severity: WARN message: "No semi_persistent_directory found:  User registered objects"')
        logging.getLogger("apache_beam.runners.worker").warning("a real warning")
    err = capsys.readouterr().err
    assert "semi_persistent" not in err and "a real warning" in err
