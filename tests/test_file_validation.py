"""Every file the tool reads is validated entry by entry (issue 35, faults 13, 14, 25, 26):
ids files of ``lsdscc rehydrate``, the ``stats.json`` that ``export-ids`` reads, hashes files
of ``--verify-hashes``, ratings files of ``analyze``. A bad file is exit 1 and one line
``multiref: error: FILE...: ...`` naming the file and the entry (or line), never a traceback,
a MemoryError or usage text. Each case runs the real ``multiref`` process.
"""

from __future__ import annotations

import json

import pytest

from lsdscc.corpus.config import CorpusConfig
from tests.test_cli_errors import assert_one_error_line, run_multiref

OPTIONS = {**CorpusConfig().as_options(), "num_shards": 1}
GOOD_FILES = {"single_turn/train-00000-of-00001.parquet": {"config": "single_turn", "split": "train",
                                                          "rows": [["t3_a", "t1_b", "t1_c"]]}}


def release(options=None, files=None, **extra):
    return {"format": "multiref-lsdscc-ids/1", "options": {**OPTIONS, **(options or {})},
            "source_files": [], "files": GOOD_FILES if files is None else files, **extra}


ENTRY = "single_turn/train-00000-of-00001.parquet"
IDS_CASES = {
    "entry-is-a-number": (release(files={ENTRY: 7}), f'files["{ENTRY}"]: expected an object'),
    "entry-without-config": (release(files={ENTRY: {"split": "train", "rows": []}}), "no 'config'"),
    "rows-null": (release(files={ENTRY: {"config": "single_turn", "split": "train", "rows": None}}), "no 'rows'"),
    "short-row": (release(files={ENTRY: {"config": "single_turn", "split": "train", "rows": [["t3_a", "t1_b"]]}}),
                  "row 0: expected [thread_id, query_id, response_id]"),
    "path-outside": (release(files={"../../etc/x.parquet": {"config": "single_turn", "split": "train", "rows": []}}),
                     "not a corpus parquet file"),
    "num-shards-1e7": (release(options={"num_shards": 10_000_000}), "--num-shards must be 'auto' or an integer"),
    "vocab-size-abc": (release(options={"vocab_size": "abc"}), "options: argument --vocab-size"),
    "subreddits-help": (release(options={"subreddits": ["--help"]}), 'options.subreddits: "--help" is not a value'),
    "source-files-shape": (release(source_files=[3]), "source_files[0]: expected an object"),
    "options-nan": (release(options={"validation_fraction": float("nan")}), "options.validation_fraction: nan"),
    "not-json": ('{"format": ', "ids.json:1: invalid JSON"),
    "bigint": ('{"format": "multiref-lsdscc-ids/1",\n"x": ' + "9" * 5000 + "}", "ids.json:2: invalid JSON"),
}


@pytest.mark.parametrize("case", sorted(IDS_CASES))
def test_a_malformed_ids_file_is_one_line_naming_the_file_and_entry(case, tmp_path):
    content, needle = IDS_CASES[case]
    (tmp_path / "ids.json").write_text(content if isinstance(content, str) else json.dumps(content))
    (tmp_path / "dump.jsonl").write_text("")
    proc, seconds = run_multiref(["lsdscc", "rehydrate", "--ids", "ids.json", "--input", "dump.jsonl",
                                  "--output", "out"], tmp_path)
    assert_one_error_line(proc, 1, "ids.json")
    assert needle in proc.stderr, proc.stderr
    assert "usage:" not in proc.stderr and not (tmp_path / "out").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dump.jsonl", "ids.json"]  # no lock, no staging


def test_a_corrupt_stats_json_names_the_file(tmp_path):
    ds = tmp_path / "ds"
    ds.mkdir()
    (ds / "stats.json").write_text('{"options": {"subreddits": ["movies"]},\n  {oops}\n')
    proc, _ = run_multiref(["lsdscc", "export-ids", "--dataset", "ds", "--output", "ids.json"], tmp_path)
    assert_one_error_line(proc, 1, "stats.json:2: invalid JSON")
    (ds / "stats.json").write_text('[1, 2]\n')
    proc, _ = run_multiref(["lsdscc", "export-ids", "--dataset", "ds", "--output", "ids.json"], tmp_path)
    assert_one_error_line(proc, 1, "stats.json: not the stats of an LSDSCC corpus build")
    assert not (tmp_path / "ids.json").exists()
