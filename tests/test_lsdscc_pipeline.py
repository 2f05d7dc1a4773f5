"""The LSDSCC corpus pipeline end to end (issue #3 parts 2-6)."""

import json
import os
import re
import shutil

import pyarrow.parquet as pq
import pytest
import zstandard

from lsdscc.corpus.sample_gen import generate
from multiref_cli import main as cli_main
from pipelines.lsdscc.corpus import run
from tests.helpers import REPO_DIR, data_path, file_digests

# The bundled sample's expected counts, as printed by `multiref lsdscc build` and stated in
# the README (a regression guard: change them only with a deliberate change to the sample
# or the cleaning rules).
SAMPLE_SPLITS = {
    "single_turn": {"train": 5728, "validation": 887},
    "multi_turn": {"train": 4088, "validation": 621},
}


@pytest.fixture(scope="module")
def sample_build(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lsdscc") / "out"
    summary = run(["--output", str(folder)], quiet=True)
    return folder, summary


def test_sample_counts(sample_build):
    folder, summary = sample_build
    assert summary["splits"] == SAMPLE_SPLITS
    counts = summary["counts"]
    for name in ("dropped-deleted", "dropped-removed", "dropped-bot", "dropped-other-subreddit",
                 "dropped-missing-parent", "dropped-duplicate", "multi-turn-dropped-broken-chain",
                 "dropped-query-too-long", "dropped-response-too-long", "dropped-empty-after-cleaning",
                 "multi-turn-dropped-too-long"):
        assert counts.get(name, 0) > 0, name
    strata = summary["stats"]["responses_per_query"]["strata"]
    assert min(strata.values()) >= 100  # the test-set stage needs 100 queries per stratum


def test_output_files_and_columns(sample_build):
    import datasets

    folder, _ = sample_build
    for name in ("README.md", "dataset_meta.json", "stats.json", "rejected/rejected.jsonl",
                 "plots/vocabulary_noise.png", "plots/length_coverage.png",
                 "plots/responses_per_query.png", "plots/survival.png"):
        assert (folder / name).exists(), name
    single = datasets.load_dataset(str(folder), "single_turn")
    multi = datasets.load_dataset(str(folder), "multi_turn")
    assert single["train"].column_names == ["id", "thread_id", "query_id", "response_id", "query", "response",
                                            "created_utc", "response_number"]
    assert multi["validation"].column_names == ["id", "thread_id", "comment_ids", "turns", "created_utc"]
    assert single.num_rows == SAMPLE_SPLITS["single_turn"]
    row = single["train"][0]
    assert row["id"].startswith("t1_") and row["thread_id"].startswith("t3_") and row["id"] == row["response_id"]
    conv = multi["train"][0]
    assert conv["comment_ids"][0] == conv["thread_id"] and len(conv["turns"]) == len(conv["comment_ids"]) >= 3
    # response_number = number of rows sharing the query_id (all splits: a thread is in one split)
    table = pq.read_table(folder / "single_turn").to_pylist()
    per_query = {}
    for r in table:
        per_query[r["query_id"]] = per_query.get(r["query_id"], 0) + 1
    assert all(r["response_number"] == per_query[r["query_id"]] for r in table)
    card = (folder / "README.md").read_text()
    assert "config_name: single_turn" in card and '"vocab_size": 50000' in card and "dropped-bot" in card


def test_text_is_clean_lowercase_and_private(sample_build):
    folder, _ = sample_build
    rows = pq.read_table(folder / "single_turn").to_pylist()
    text = " ".join(r["query"] + " " + r["response"] for r in rows)
    assert text == text.lower() and text.isascii()
    for bad in ("[deleted]", "[removed]", "http", "&gt;", "**", "](", "automoderator"):
        assert bad not in text, bad
    assert not re.search(r"\buser\d+\b", text)  # generated usernames never leak
    tokens = set(text.split())
    assert {"url", "digits", "email", "happy", "laugh", "love"} <= tokens
    assert "iloveyou" not in tokens and "thismovieisamazing" not in tokens  # split into corpus words
    for root, _, files in os.walk(folder):
        for name in files:
            if name.endswith((".json", ".jsonl", ".md")):
                assert not re.search(r"\buser\d+\b", open(os.path.join(root, name), encoding="utf-8").read()), name


def test_stats(sample_build):
    folder, _ = sample_build
    stats = json.loads((folder / "stats.json").read_text())
    assert stats["vocabulary_noise"]["non_ascii_types"] > 0 and stats["vocabulary_noise"]["over_long_types"] > 0
    assert stats["vocabulary"]["split_examples"]["iloveyou"] == ["i", "love", "you"]
    assert [s["stage"] for s in stats["survival"]][0] == "records read (valid JSON)"
    assert stats["survival"][-1]["remaining"] == sum(SAMPLE_SPLITS["single_turn"].values())
    assert stats["options"]["max_query_tokens"] == 100 and stats["options"]["lowercase"] is True


def test_byte_identical_reruns(sample_build, tmp_path):
    folder, _ = sample_build
    again = tmp_path / "again"
    run(["--output", str(again)], quiet=True)
    assert file_digests(folder) == file_digests(again)


def test_plots_do_not_depend_on_what_the_process_set_before(sample_build, tmp_path):
    # another report in the same process (multiref analyze sets font size and dpi) or a
    # user's style used to change the PNG bytes of a corpus build run after it
    import json

    import matplotlib
    import matplotlib.pyplot as plt

    from lsdscc.corpus.outputs import plot_all

    folder, _ = sample_build
    stats = json.loads((folder / "stats.json").read_text())
    with matplotlib.rc_context({"font.size": 9, "figure.dpi": 150, "lines.linewidth": 3}):
        plt.style.use("ggplot")
        paths = plot_all(str(tmp_path), stats)
    assert len(paths) == 4
    for path in paths:
        name = os.path.relpath(path, tmp_path)
        assert (tmp_path / name).read_bytes() == (folder / name).read_bytes(), name


def test_rejected_records_and_options(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    for name in ("variants.jsonl", "bigquery_thread.json", "bad.jsonl"):
        shutil.copy(data_path("lsdscc", name), inputs / name)
    data = b"".join(
        b'{"id":"z%d","body":"cut file line %d","author":"q","parent_id":"t3_zz","link_id":"t3_zz",'
        b'"subreddit":"movies","created_utc":%d}\n' % (i, i, 1500000000 + i)
        for i in range(20000)
    )
    blob = zstandard.ZstdCompressor(level=1).compress(data)
    (inputs / "RC_cut.zst").write_bytes(blob[: len(blob) // 2])
    out = tmp_path / "out"
    summary = run(["--input", str(inputs), "--output", str(out), "--validation-fraction", "0.0",
                   "--max-response-tokens", "5", "--no-lowercase"], quiet=True)
    counts = summary["counts"]
    assert counts["rejected-malformed-json"] == 1 and counts["rejected-not-utf8"] == 1
    assert counts["rejected-wrong-type"] == 2 and counts["rejected-missing-field"] == 1
    assert counts["rejected-truncated-file"] == 1 and counts["rejected-not-object"] == 1
    assert counts["rejected-unknown-kind"] == 1 and counts["threads-without-submission"] == 1
    assert counts["dropped-deleted-later"] == 1 and counts["dropped-other-subreddit"] == 1
    rejected = [json.loads(line) for line in (out / "rejected" / "rejected.jsonl").read_text().splitlines()]
    assert {r["reason"] for r in rejected} >= {"malformed-json", "not-utf8", "wrong-type", "missing-field",
                                                "truncated-file", "not-object", "unknown-kind"}
    assert all({"reason", "file", "line", "detail", "text"} <= set(r) for r in rejected)
    assert "secret_name" not in (out / "rejected" / "rejected.jsonl").read_text()
    truncated = [r for r in rejected if r["reason"] == "truncated-file"][0]
    assert "RC_cut.zst" in truncated["detail"] and "lines" in truncated["detail"]
    rows = pq.read_table(out / "single_turn").to_pylist()
    assert summary["splits"]["single_turn"] == {"train": len(rows), "validation": 0}
    assert all(len(r["response"].split()) <= 5 for r in rows)
    assert any(r["response"] != r["response"].lower() for r in rows)  # --no-lowercase
    pairs = {(r["query_id"], r["response_id"]) for r in rows}
    assert ("t1_bqc1", "t1_bqc2") in pairs and ("t3_s1", "t1_c1") in pairs
    meta = json.loads((out / "dataset_meta.json").read_text())
    assert meta["configs"]["single_turn"]["options"]["max_response_tokens"] == 5
    assert meta["configs"]["single_turn"]["splits"] == {"train": len(rows)}


def test_injected_records(tmp_path):
    submissions, comments = generate(3, seed=5, hard_cases=False)
    summary = run(["--output", str(tmp_path / "o"), "--validation-fraction", "0.5", "--num-shards", "2"],
                  source=submissions + comments, quiet=True)
    assert summary["counts"]["records-read"] == len(submissions) + len(comments)
    files = sorted(os.listdir(tmp_path / "o" / "single_turn"))
    assert files == ["train-00000-of-00002.parquet", "train-00001-of-00002.parquet",
                     "validation-00000-of-00002.parquet", "validation-00001-of-00002.parquet"]


def _spill_leftovers(root) -> list:
    return [os.path.join(d, n) for d, dirs, files in os.walk(root) for n in dirs + files if ".spill" in n]


def _fail_writing(config, rows):
    """A writer hook that fails once the groupings' spill files exist: it names how many there are."""
    spilled = [f for f in _spill_leftovers(os.environ["SPILL_TEST_ROOT"]) if f.endswith(".spill")]
    raise ValueError(f"writer failed with {len(spilled)} spill files present")


def test_the_spill_files_go_when_the_job_succeeds_or_fails(sample_build, tmp_path, monkeypatch):
    folder, _ = sample_build
    assert _spill_leftovers(folder.parent) == []  # after success: only the dataset
    from pipelines.lsdscc import transforms as lsdscc_transforms

    monkeypatch.setenv("SPILL_TEST_ROOT", str(tmp_path))
    monkeypatch.setattr(lsdscc_transforms, "finish_shard", _fail_writing)
    submissions, comments = generate(3, seed=5, hard_cases=False)
    with pytest.raises(Exception, match=r"writer failed with [1-9]\d* spill files present"):
        run(["--output", str(tmp_path / "o")], source=submissions + comments, quiet=True)
    assert _spill_leftovers(tmp_path) == []


def test_same_bytes_with_the_runners_own_shuffles(sample_build, tmp_path, monkeypatch):
    # Dataflow, Flink and Spark get plain GroupByKeys instead of the spill (shuffles_in_memory
    # is False for them): the same folder, and no spill folder is made.
    from pipelines.beam import runner as beam_utils

    folder, _ = sample_build
    monkeypatch.setattr(beam_utils, "shuffles_in_memory", lambda options: False)
    run(["--output", str(tmp_path / "plain")], quiet=True)
    assert file_digests(tmp_path / "plain") == file_digests(folder)


def test_dataflow_job_graph_builds_offline(tmp_path):
    # --setup_file makes Beam build an sdist: `python -m build` is not installed, so Beam falls
    # back to `python setup.py sdist`, which needs no network. --dry_run stops before staging.
    summary = run(["--output", "gs://my-bucket/lsdscc", "--runner", "DataflowRunner", "--dry_run=True",
                   "--project=my-project", "--region=us-central1", "--temp_location=gs://my-bucket/tmp",
                   "--setup_file", str(REPO_DIR / "setup.py")], quiet=True)
    assert summary["dry_run"] is True


@pytest.mark.parametrize(
    "args, message",
    [
        (["--input", "/nonexistent/RC_2017-01.zst"], "input not found: /nonexistent/RC_2017-01.zst"),
        (["--input", "/nonexistent/RC_*.zst"], "no input files match the glob /nonexistent/RC_*.zst"),
        (["--vocab-size", "0"], "vocab_size must be a positive integer"),
    ],
)
def test_cli_errors(capsys, tmp_path, args, message):
    assert cli_main(["lsdscc", "build", "--output", str(tmp_path / "o"), "--skip-testset"] + args) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("multiref: error: ") and message in err[-1]


def test_cli_unwritable_output(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert cli_main(["lsdscc", "build", "--output", str(blocker / "sub"), "--skip-testset"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("multiref: error: cannot write to output folder")


def test_cli_build_prints_counts(capsys, tmp_path):
    code = cli_main(["lsdscc", "build", "--input", str(data_path("lsdscc", "variants.jsonl")),
                     "--output", str(tmp_path / "o"), "--skip-testset", "--", "--direct_num_workers", "1"])
    out = capsys.readouterr()
    assert code == 0
    assert "single_turn: train" in out.out and "dropped-bot 2" in out.out
    assert "[lsdscc] running the Beam pipeline" in out.err


def test_duplicate_losers():
    from functools import reduce

    from lsdscc.corpus.threads import MultiTurnRow, SingleTurnRow, smallest_id

    # the smallest id wins; the others are reported as duplicates (the other fields ride along)
    rows = [SingleTurnRow(i, "t3_s", "t3_s", i, "q", "r", n) for i, n in (("t1_c", 2), ("t1_a", 0), ("t1_b", 1))]
    kept = reduce(smallest_id, rows, None)
    assert kept == rows[1]
    assert {r.id for r in rows if r is not kept} == {"t1_b", "t1_c"}
    one = MultiTurnRow("t1_a", "t3_s", ["t3_s", "t1_a"], ["q", "r"], 0)
    assert reduce(smallest_id, [one], None) is one


def _rows(folder, config):
    return {json.dumps(r, sort_keys=True) for r in pq.read_table(folder / config).to_pylist()}


def test_buckets_give_the_same_rows(sample_build, tmp_path):
    # The build works through thread buckets (= shards); forcing 3 buckets must give exactly the
    # rows of the 1-bucket build (duplicates across buckets included), reproducibly.
    folder, summary = sample_build
    three = tmp_path / "three"
    again = tmp_path / "again"
    summary3 = run(["--output", str(three), "--num-shards", "3"], quiet=True)
    assert summary3["splits"] == summary["splits"] == SAMPLE_SPLITS
    assert summary3["counts"]["dropped-duplicate"] == summary["counts"]["dropped-duplicate"]
    assert sorted(os.listdir(three / "single_turn")) == [f"{s}-{i:05d}-of-00003.parquet"
                                                        for s in ("train", "validation") for i in range(3)]
    for config in ("single_turn", "multi_turn"):
        assert _rows(three, config) == _rows(folder, config)
    assert json.loads((three / "dataset_meta.json").read_text())["configs"]["single_turn"]["options"]["num_shards"] == 3
    run(["--output", str(again), "--num-shards", "3"], quiet=True)
    assert file_digests(three) == file_digests(again)
    assert not (three / "_work").exists()


def test_auto_shard_count(tmp_path, capsys):
    from lsdscc.corpus.sources import default_inputs
    from multiref.util.errors import UserError
    from pipelines.lsdscc.options import estimated_input_bytes, resolve_num_shards

    plain = tmp_path / "RC_x.jsonl"
    plain.write_bytes(b"x" * 30_000_000)
    packed = tmp_path / "RC_y.zst"
    packed.write_bytes(b"x" * 10_000_000)
    assert estimated_input_bytes([str(plain), str(packed)]) == 90_000_000  # .zst counts 6x
    assert resolve_num_shards("auto", [str(plain), str(packed)]) == 3  # ceil(9e7 / 32 MiB)
    assert resolve_num_shards("auto", [str(plain)]) == 1
    assert resolve_num_shards("5", [str(plain)]) == 5
    assert resolve_num_shards("auto", default_inputs()) == 1  # the bundled sample: one shard
    with pytest.raises(UserError, match="--num-shards must be 'auto' or an integer from 1 to 10000"):
        resolve_num_shards("0", [])


def test_bucket_mb_is_accepted_with_a_note(tmp_path, capsys):
    import argparse

    from pipelines.lsdscc import options as lsdscc_options

    lsdscc_options._Deprecated.noted = False
    parser = argparse.ArgumentParser()
    lsdscc_options.add_corpus_arguments(parser)
    args = parser.parse_args(["--bucket-mb", "16", "--num-shards", "2"])
    assert args.num_shards == "2"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("note: --bucket-mb is deprecated")
    assert "--bucket-mb" not in parser.format_help()


def test_same_bytes_on_every_local_runner(sample_build, tmp_path):
    # The deterministic writer (multiref.beam.writer) and counts computed as data: the folder
    # is byte-identical on the default runner, two worker processes, and Beam's portable runner
    # (the path Flink, Spark and Dataflow Runner v2 take), with a local --output.
    folder, _ = sample_build
    runners = {
        "multi": ["--direct_running_mode", "multi_processing", "--direct_num_workers", "2"],
        "portable": ["--runner", "PortableRunner", "--job_endpoint", "embed", "--environment_type", "LOOPBACK"],
    }
    for name, flags in runners.items():
        out = tmp_path / name
        run(["--output", str(out)] + flags, quiet=True)
        assert file_digests(out) == file_digests(folder), name


def test_render_runner_draws_every_step(tmp_path):
    from pipelines.lsdscc.corpus import STEPS

    graph = tmp_path / "graph.dot"
    summary = run(["--output", str(tmp_path / "o"), "--runner", "apache_beam.runners.render.RenderRunner",
                   "--render_output", str(graph)], quiet=True)
    assert summary["dry_run"] is True and not (tmp_path / "o").exists()  # nothing ran, nothing written
    dot = graph.read_text()
    for step in STEPS + ("CountWords", "SegmentAndTruncate", "GroupByLinkId", "GroupByContent", "GroupByShard"):
        assert re.search(rf'label="?{step}"?[,\]\s]', dot), step


def test_dataflow_needs_a_remote_output(tmp_path):
    from multiref.util.errors import UserError

    with pytest.raises(UserError, match="Dataflow workers cannot write to a local folder"):
        run(["--output", str(tmp_path / "o"), "--runner", "DataflowRunner", "--dry_run=True", "--project=p",
             "--region=us-central1", "--temp_location=gs://my-bucket/tmp"], quiet=True)


def _loads(folder, config):
    import datasets

    return datasets.load_dataset(str(folder), config)


@pytest.mark.parametrize("threads, shards", [(0, "1"), (1, "8")])
def test_every_written_split_loads(tmp_path, threads, shards, capsys):
    # An empty input, a tiny one with more shards than rows, a small one: every split the card
    # lists loads with datasets.load_dataset; an empty split is left out of the card, with a warning.
    submissions, comments = generate(threads, seed=3, hard_cases=False) if threads else ([], [])
    out = tmp_path / "o"
    summary = run(["--output", str(out), "--num-shards", shards, "--validation-fraction", "0.3"],
                  source=submissions + comments, quiet=True)
    meta = json.loads((out / "dataset_meta.json").read_text()) if (out / "dataset_meta.json").exists() else {}
    listed = {c: e["splits"] for c, e in meta.get("configs", {}).items()}
    err = capsys.readouterr().err
    for config, splits in summary["splits"].items():
        for split, n in splits.items():
            files = sorted(os.listdir(out / config))
            assert len([f for f in files if f.startswith(split + "-")]) == (8 if shards == "8" else 1)
            assert sum(pq.read_metadata(out / config / f).num_rows for f in files if f.startswith(split)) == n
            if n:
                assert listed[config][split] == n and _loads(out, config)[split].num_rows == n
            else:
                assert split not in listed.get(config, {}) and f"{config}/{split} has no rows" in err
    if threads == 0:
        assert summary["counts"].get("records-read", 0) == 0 and not listed
        assert (out / "stats.json").exists() and (out / "rejected" / "rejected.jsonl").read_bytes() == b""
    else:
        assert sum(summary["splits"]["single_turn"].values()) > 0
