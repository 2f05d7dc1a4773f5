"""Ids-only releases (issue 21 item 5): ``multiref lsdscc export-ids`` writes ids, options and
dump digests without text; ``multiref lsdscc rehydrate`` rebuilds byte-identical parquet from
the same dumps, and names the rows a user's dumps cannot give, one line per file."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import zstandard

from tests import era_dumps
from tests.helpers import REPO_DIR


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=str(REPO_DIR))
    return subprocess.run([sys.executable, "-m", "multiref_cli", *args], capture_output=True, text=True,
                          cwd=REPO_DIR, env=env, timeout=600)


def _parquet(folder) -> dict:
    out = {}
    for root, _, files in os.walk(folder):
        for name in files:
            if name.endswith(".parquet"):
                path = os.path.join(root, name)
                out[os.path.relpath(path, folder)] = open(path, "rb").read()
    return out


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """Era-shaped dumps, a dataset built from them (with a time range and 2 shards), its ids."""
    root = tmp_path_factory.mktemp("ids")
    era_dumps.era_dumps(root / "dumps", threads_per_month=3)
    out = root / "dataset"
    proc = _cli("lsdscc", "build", "--input", str(root / "dumps"), "--output", str(out), "--skip-testset",
                "--num-shards", "2", "--since", "2010-01-01", "--validation-fraction", "0.3", "--quiet")
    assert proc.returncode == 0, proc.stderr
    proc = _cli("lsdscc", "export-ids", "--dataset", str(out), "--output", str(root / "ids.json"))
    assert proc.returncode == 0, proc.stderr
    return root, out


def test_the_ids_file_holds_ids_options_and_digests_but_no_text(released):
    root, out = released
    release = json.loads((root / "ids.json").read_text())
    stats = json.loads((out / "stats.json").read_text())
    assert release["options"] == stats["options"] and release["options"]["since"] == 1262304000
    assert release["source_files"] == stats["files"] and len(release["source_files"]) == 12
    assert sorted(release["files"]) == sorted(_parquet(out))
    text = (root / "ids.json").read_text()
    import pyarrow.parquet as pq

    for rel in _parquet(out):
        table = pq.read_table(out / rel)
        column = "response" if rel.startswith("single_turn") else "turns"
        for value in table.column(column).to_pylist()[:20]:
            for piece in (value if isinstance(value, list) else [value]):
                assert piece not in text  # no text of any row
        assert len(release["files"][rel]["rows"]) == table.num_rows


def test_rehydrate_from_the_same_dumps_is_byte_identical(released):
    root, out = released
    again = root / "again"
    proc = _cli("lsdscc", "rehydrate", "--ids", str(root / "ids.json"), "--input", str(root / "dumps"),
                "--output", str(again))
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr
    assert _parquet(again) == _parquet(out) and _parquet(out)


def test_rehydrate_names_missing_rows_one_line_per_file(released, tmp_path):
    """A user whose 2016 comments file lacks one comment (deleted before their download)."""
    root, out = released
    import shutil

    shutil.copytree(root / "dumps", tmp_path / "dumps")
    path = tmp_path / "dumps" / "RC_2016-06.zst"
    lines = zstandard.ZstdDecompressor().decompressobj().decompress(path.read_bytes()).decode().splitlines()
    gone = [json.loads(x)["id"] for x in lines if json.loads(x)["id"].endswith("1x2")]
    kept = [x for x in lines if not json.loads(x)["id"].endswith("1x2")]
    assert gone == ["c2016061x2"]
    path.write_bytes(zstandard.ZstdCompressor().compress(("\n".join(kept) + "\n").encode()))
    proc = _cli("lsdscc", "rehydrate", "--ids", str(root / "ids.json"), "--input", str(tmp_path / "dumps"),
                "--output", str(tmp_path / "o"))
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.strip().splitlines()
    assert any("RC_2016-06.zst differs from the release's" in line for line in err)
    missing = [line for line in err if "missing from your dumps" in line]
    assert missing and all(line.count("parquet") == 1 for line in missing)
    assert len({line.split(":")[1] for line in missing}) == len(missing)  # one line per file
    assert all("t1_c2016061x2" in line for line in missing)
    release = json.loads((root / "ids.json").read_text())
    import pyarrow.parquet as pq

    for rel in _parquet(tmp_path / "o"):  # never more rows than the release holds
        assert pq.read_table(tmp_path / "o" / rel).num_rows <= len(release["files"][rel]["rows"])


def test_bad_ids_file_is_one_line(tmp_path):
    (tmp_path / "ids.json").write_text('{"format": "something else"}')
    proc = _cli("lsdscc", "rehydrate", "--ids", str(tmp_path / "ids.json"), "--input", str(tmp_path),
                "--output", str(tmp_path / "o"))
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"multiref: error: {tmp_path / 'ids.json'}: not an ids release (expected \"format\": \"multiref-lsdscc-ids/1\")"]
    proc = _cli("lsdscc", "export-ids", "--dataset", str(tmp_path), "--output", str(tmp_path / "x.json"))
    assert proc.returncode == 1 and "no stats.json" in proc.stderr


def test_a_python_caller_writes_the_same_ids_file(released, tmp_path):
    from lsdscc.corpus.ids import ExportIdsConfig, write_ids

    root, out = released
    release = write_ids(ExportIdsConfig(dataset=str(out), output=str(tmp_path / "ids.json")))
    assert (tmp_path / "ids.json").read_bytes() == (root / "ids.json").read_bytes()  # the command's bytes
    assert sorted(release["files"]) == sorted(_parquet(out))
    from multiref.util.errors import UserError

    with pytest.raises(UserError, match="inside the dataset folder"):
        write_ids(ExportIdsConfig(dataset=str(out), output=str(out / "ids.json")))
    assert not (out / "ids.json").exists()


def test_a_python_caller_rehydrates_the_same_bytes_as_the_command(released, tmp_path):
    """``pipelines.lsdscc.rehydrate.rehydrate`` is the command's one call: same folder, the
    counts and the warnings as data."""
    from lsdscc.corpus.ids import RehydrateConfig
    from pipelines.lsdscc.rehydrate import rehydrate

    root, out = released
    outcome = rehydrate(RehydrateConfig(ids=str(root / "ids.json"), input=(str(root / "dumps"),),
                                        output=str(tmp_path / "again")))
    assert _parquet(tmp_path / "again") == _parquet(out) and _parquet(out)
    assert outcome.warnings == [] and outcome.notes == [] and outcome.missing == ()
    stats = json.loads((out / "stats.json").read_text())
    assert outcome.splits == stats["splits"] and outcome.output == str(tmp_path / "again")
    assert (tmp_path / "again" / "README.md").read_bytes() == (out / "README.md").read_bytes()


def test_the_recorded_options_become_the_build_configs(released):
    """The ids file's options give the build's CorpusConfig back (no flags parsed on the way), and
    a tampered value is refused naming the file and the option, before any work."""
    from lsdscc.corpus.config import CorpusConfig
    from multiref.util.errors import UserError
    from pipelines.lsdscc.rehydrate import release_configs

    root, _out = released
    release = json.loads((root / "ids.json").read_text())
    job, corpus = release_configs("ids.json", release)
    assert job.num_shards == "2" and job.input == ()
    assert corpus == CorpusConfig(since=1262304000, validation_fraction=0.3)
    assert dict(corpus.as_options(), num_shards=2) == release["options"]
    for tampered, words in [({"vocab_size": "abc"}, "ids.json: options: argument --vocab-size: expected an integer, "
                                                    "got 'abc'"),
                            ({"lowercase": "no"}, 'ids.json: options: lowercase: "no" is not a value of '
                                                  "--lowercase/--no-lowercase (it would be recorded as true)"),
                            ({"num_shards": "auto"}, "ids.json: options: num_shards: 'auto' is not a number of shards"),
                            ({"colour": "blue"}, "ids.json: options: the release was built with colour='blue', which "
                                                 "no flag of this version sets (default None); it cannot be rebuilt")]:
        with pytest.raises(UserError) as refused:
            release_configs("ids.json", {**release, "options": {**release["options"], **tampered}})
        assert str(refused.value) == words
    options = dict(release["options"])
    del options["min_turns"]
    with pytest.raises(UserError, match="ids.json: options: no 'min_turns'"):
        release_configs("ids.json", {**release, "options": options})
