"""The skeleton every part builds on: CLI startup, errors, readers, tokenizers, dataset folders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pyarrow as pa
import pytest

from multiref.output import hfdata
from pipelines.beam import runner as beam_utils
from multiref_cli import main
from multiref.util.errors import UserError
from multiref.util.files import read_json, read_jsonl
from multiref.metrics.tokenizers import get_tokenizer

HEAVY = ("apache_beam", "gensim", "jnius", "pandas", "datasets", "sklearn", "matplotlib", "torch", "pyarrow", "numpy")


def test_help_is_fast_and_imports_nothing_heavy():
    code = (
        "import sys, io, contextlib\n"
        "from multiref_cli import main\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n"
        "    try: main(['--help'])\n"
        "    except SystemExit: pass\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print(repr(heavy)); print('score' in buf.getvalue())\n"
    )
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    elapsed = time.perf_counter() - start
    heavy, has_score = out.stdout.strip().splitlines()[-2:]
    assert heavy == "[]", f"--help imported heavy modules: {heavy}"
    assert has_score == "True"
    assert elapsed < 3.0  # generous for a loaded CI machine; typically ~0.2 s


def test_console_script_help():
    exe = os.path.join(os.path.dirname(sys.executable), "multiref")
    out = subprocess.run([exe, "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for command in ("score", "lsdscc", "dailydialog", "analyze"):
        assert command in out.stdout


def test_group_without_subcommand_is_a_one_line_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["lsdscc"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("multiref: error: 'multiref lsdscc' needs a command: build, crawl") and err.count("\n") == 1


@pytest.mark.parametrize(
    "content, message",
    [
        (b'{"a": 1}\n{bad json}\n', ":2: invalid JSON"),
        (b'{"a": 1}\n[1, 2]\n', ":2: expected a JSON object"),
        (b'{"a": "\xff"}\n', ":1: not valid UTF-8"),
        (b"\n\n", "file has no records"),
    ],
)
def test_read_jsonl_errors_name_file_and_line(tmp_path, content, message):
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    with pytest.raises(UserError, match=message):
        list(read_jsonl(str(path)))


def test_read_jsonl_missing_file(tmp_path):
    with pytest.raises(UserError, match="not found"):
        list(read_jsonl(str(tmp_path / "nope.jsonl")))


def test_read_json_error_line(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{\n  "a": 1,\n  oops\n}\n')
    with pytest.raises(UserError, match=r"x\.json:3: invalid JSON"):
        read_json(str(path))


@pytest.mark.parametrize(
    "name, text, expected",
    [
        ("whitespace", "I don't  know .", ["I", "don't", "know", "."]),
        ("treebank", "I don't know.", ["I", "do", "n't", "know", "."]),
        ("tweet", "so cool :-) #movies", ["so", "cool", ":-)", "#movies"]),
        ("char", "a b", ["a", "b"]),
    ],
)
def test_tokenizers(name, text, expected):
    assert get_tokenizer(name)(text) == expected


def test_tokenizer_lowercase_and_unknown():
    assert get_tokenizer("whitespace", lowercase=True)("The Cat") == ["the", "cat"]
    with pytest.raises(ValueError, match="unknown tokenizer 'spacy'"):
        get_tokenizer("spacy")


@pytest.mark.parametrize(
    "given, expected_runner",
    [
        ([], beam_utils.LOCAL_RUNNER),
        (["--runner", "DirectRunner"], beam_utils.LOCAL_RUNNER),
        (["--runner=DirectRunner", "--direct_num_workers", "2"], beam_utils.LOCAL_RUNNER),
        (["--runner", "DataflowRunner", "--project", "p"], "DataflowRunner"),
    ],
)
def test_local_runner_substitution(given, expected_runner):
    args = beam_utils.local_or_given(given)
    runner, _ = beam_utils._runner_of(args)
    assert runner == expected_runner
    # other flags pass through untouched
    def others(xs):
        out, skip = [], False
        for x in xs:
            if skip:
                skip = False
            elif x == "--runner":
                skip = True
            elif not x.startswith("--runner="):
                out.append(x)
        return out

    assert others(args) == others(given)


def test_beam_pipeline_runs_offline_and_reports_counters():
    import apache_beam as beam
    from apache_beam.metrics import Metrics

    dropped = Metrics.counter("test", "dropped-odd")

    def keep_even(x):
        if x % 2:
            dropped.inc()
            return []
        return [x]

    p = beam.Pipeline(options=beam_utils.pipeline_options([]))
    _ = p | beam.Create(range(10)) | beam.FlatMap(keep_even)
    result = p.run()
    result.wait_until_finish()
    assert beam_utils.counters(result) == {"test/dropped-odd": 5}


def _write_example(folder):
    schema = pa.schema([("id", pa.string()), ("references", pa.list_(pa.string())), ("n", pa.int64())])
    rows = {
        "train": [{"id": "a", "references": ["x y", "z"], "n": 2}, {"id": "b", "references": ["w"], "n": 1}],
        "test": [{"id": "c", "references": [], "n": 0}],
    }
    for split, split_rows in rows.items():
        hfdata.write_parquet(hfdata.shard_path(folder, "toy", split), split_rows, schema)
    hfdata.add_config(
        folder,
        hfdata.ConfigInfo(
            name="toy",
            description="A toy config.",
            splits={s: len(r) for s, r in rows.items()},
            features=schema,
            options={"seed": 3},
            counts={"dropped-empty": 1},
        ),
        title="Toy",
        summary="Toy data.",
    )
    other = pa.schema([("id", pa.string())])
    hfdata.write_parquet(hfdata.shard_path(folder, "other", "test"), [{"id": "q"}], other)
    hfdata.add_config(folder, hfdata.ConfigInfo(name="other", description="Another.", splits={"test": 1}, features=other))


def test_dataset_folder_loads_with_datasets_and_is_reproducible(tmp_path):
    import datasets

    a, b = tmp_path / "a", tmp_path / "b"
    _write_example(str(a))
    _write_example(str(b))
    for rel in ("README.md", "dataset_meta.json", "toy/train-00000-of-00001.parquet"):
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel

    ds = datasets.load_dataset(str(a), "toy")
    assert sorted(ds) == ["test", "train"]
    assert ds["train"]["id"] == ["a", "b"]
    assert ds["train"][0]["references"] == ["x y", "z"]
    assert datasets.load_dataset(str(a), "other")["test"]["id"] == ["q"]

    meta = json.loads((a / "dataset_meta.json").read_text())
    assert meta["configs"]["toy"]["options"] == {"seed": 3}
    card = (a / "README.md").read_text()
    assert "config_name: toy" in card and "config_name: other" in card
    assert '"dropped-empty": 1' in card


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["lsdscc", "build", "--output", "o", "--runner", "DataflowRunner", "--project", "p", "--skip-testset"],
         ["lsdscc", "build", "--output", "o", "--skip-testset", "--", "--runner", "DataflowRunner", "--project", "p"]),
        (["lsdscc", "build", "--out", "o", "--dry_run=True"], ["lsdscc", "build", "--out", "o", "--", "--dry_run=True"]),
        (["lsdscc", "build", "--output", "o", "--", "--runner", "X"], ["lsdscc", "build", "--output", "o", "--", "--runner", "X"]),
        (["dailydialog", "build", "--direct_num_workers", "2", "--seed", "3"],
         ["dailydialog", "build", "--seed", "3", "--", "--direct_num_workers", "2"]),
        (["score", "-r", "x", "--bogus", "y"], ["score", "-r", "x", "--bogus", "y"]),  # no Beam: argparse reports it
    ],
)
def test_beam_options_are_routed_to_beam(argv, expected):
    from multiref_cli import build_parser, route_beam_options

    assert route_beam_options(build_parser(), argv) == expected


def test_build_takes_beam_options_without_separator(tmp_path, capsys):
    # A real Beam option (the number of local workers) given like any other flag reaches Beam.
    out = tmp_path / "dd"
    assert main(["dailydialog", "build", "--output", str(out), "--direct_num_workers", "1"]) == 0
    assert (out / "dataset_meta.json").exists()


def test_unknown_option_of_a_command_without_beam_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["score", "--references", "x", "--hypotheses", "y", "--bogus"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("multiref: error: unknown option --bogus") and err.count("\n") == 1
