"""The Beam pipeline and CLI (pipelines/dailydialog/job.py, multiref_cli/dailydialog.py) on hand-made data.

tests/data/dailydialog holds a tiny release (see the expected counts worked out below), a
multi-reference file (3 dialogues + a malformed line) and DD++ files.
"""

import glob
import io
import json
import os
import subprocess
import sys

import pytest
from apache_beam.io.filesystem import FileMetadata, FileSystem

from dailydialog_pp.readers import RawLine
from multiref import citations
from pipelines.dailydialog.job import natural_key, run
from tests.helpers import REPO_DIR, data_path
from tests.test_citations import entries

DATA = data_path("dailydialog")
ARGS = ["--dailydialog", str(DATA / "dd"), "--multiref-references", str(DATA / "multiref.jsonl"),
        "--ddpp", str(DATA / "ddpp"), "--negative-min-words", "1"]


def _rows(folder, config, split):
    import pyarrow.parquet as pq

    return pq.read_table(os.path.join(folder, config, f"{split}-00000-of-00001.parquet")).to_pylist()


def _all_rows(folder, config):
    import glob

    import pyarrow.parquet as pq

    out = []
    for path in sorted(glob.glob(os.path.join(folder, config, "*.parquet"))):
        split = os.path.basename(path).split("-")[0]
        out += [dict(r, split=split) for r in pq.read_table(path).to_pylist()]
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("dd") / "out")
    stats = run(ARGS + ["--output", folder, "--corruptions", "reverse", "drop_stopwords"])
    return folder, stats


def test_multiref_rows(built):
    folder, stats = built
    rows = _rows(folder, "multiref", "test")
    # worked out by hand: test dialogues of 3, 4 and 2 turns -> 2 + 3 + 1 contexts
    assert [r["id"] for r in rows] == ["0_0", "0_1", "1_0", "1_1", "1_2", "2_0"]
    assert rows[0] == {"id": "0_0", "dialogue_id": "test_0", "context": ["Hi , how are you ?"],
                       "references": ["fine , thanks . and you ?", "good !", "great , you ?", "ok"]}
    # references[0] is the release's responses[0] by default (--first-reference released, as Gupta et al. release it)
    assert rows[3]["references"] == ["thanks !", "e", "f", "g", "h"]  # matched despite ’ vs ' and spacing
    assert rows[5]["references"] == ["Yes.It is ."]  # text mismatch (6.5 vs 7): original reference only
    counters = stats["counters"]
    assert counters["multiref/text-mismatch"] == 1 and counters["multiref/invalid-json"] == 1
    assert counters["multiref/empty-reference"] == 1 and counters["multiref/joined-dialogues"] == 2


def test_contexts_rows(built):
    folder, stats = built
    # every parsed dialogue of every split cut after each turn: test 3, 4, 2 turns -> 2 + 3 + 1;
    # train 10, 3, 3, 1, 9 turns (line 5 is rejected: act-count-mismatch) -> 9 + 2 + 2 + 0 + 8
    assert stats["configs"]["contexts"] == {"test": 6, "train": 21, "validation": 0}
    assert [r["id"] for r in _rows(folder, "contexts", "test")] == ["0_0", "0_1", "1_0", "1_1", "1_2", "2_0"]
    train = _rows(folder, "contexts", "train")
    assert [r["id"] for r in train][-3:] == ["5_5", "5_6", "5_7"] and len(train) == 21
    assert _rows(folder, "contexts", "test")[1] == {
        "id": "0_1", "context": ["Hi , how are you ?", "Fine , thanks . And you ?"], "response": "Not bad ."}
    assert stats["counters"]["contexts/pairs-train"] == 21
    with open(os.path.join(folder, "dataset_meta.json")) as fh:
        meta = json.load(fh)["configs"]
    assert meta["contexts"]["splits"] == {"test": 6, "train": 21}  # the empty validation split is left out
    assert [f["name"] for f in meta["contexts"]["features"]] == ["id", "context", "response"]


def test_ddpp_rows(built):
    folder, stats = built
    rows = {r["id"]: r for r in _all_rows(folder, "dailydialog_pp")}
    # 8 parsed dialogues; train_2 duplicates train_1 (2/two, colour/color, grey/gray); train_3 has 1 turn;
    # contexts: test_0, test_1, test_2 (1 each), train_0 (10 turns: 3), train_1 (1), train_5 (9 turns: 2)
    assert sorted(rows, key=natural_key) == ["test_0_0", "test_1_0", "test_2_0", "train_0_0", "train_0_1",
                                             "train_0_2", "train_1_0", "train_5_0", "train_5_1"]
    assert rows["train_0_2"]["context"] == ["B8 .", "A9 ."]
    assert rows["train_0_0"]["source"] == "ddpp_dev"
    assert rows["train_0_0"]["positive_responses"] == ["p1", "p2", "p3", "p4", "p5"]
    assert rows["train_0_0"]["adversarial_negative_responses"] == ["a1", "a2", "a3", "a4", "a5"]
    assert rows["train_1_0"]["source"] == "ddpp_positives"
    assert rows["train_1_0"]["adversarial_negative_responses"] == []
    assert rows["train_0_1"]["source"] == "dailydialog" and rows["train_0_1"]["positive_responses"] == ["B8 ."]
    for row in rows.values():
        assert len(row["random_negative_responses"]) == 5
        assert not set(row["random_negative_responses"]) & set(row["positive_responses"])
    c = stats["counters"]
    assert c["dailydialog_pp/duplicate-dialogue"] == 1 and c["dailydialog_pp/too-short-dialogue"] == 1
    assert c["dailydialog/act-count-mismatch"] == 1 and c["dailydialog_pp/unmatched-ddpp_dev"] == 1
    assert c["dailydialog_pp/ddpp_positives-bad-context"] == 1
    assert c["dailydialog_pp/matched-ddpp_dev"] == 1 and c["dailydialog_pp/matched-ddpp_positives"] == 1


def test_a_dialogue_never_spans_two_splits(built):
    folder, _ = built
    split_of = {}
    for row in _all_rows(folder, "dailydialog_pp") + _all_rows(folder, "dailydialog_pp_corrupted"):
        assert split_of.setdefault(row["dialogue_id"], row["split"]) == row["split"]
    assert len(split_of) == 6


def test_corrupted_config(built):
    folder, _ = built
    rows = {r["id"]: r for r in _all_rows(folder, "dailydialog_pp_corrupted")}
    assert len(rows) == 2 * 9
    assert rows["train_0_0:reverse"]["corrupted_responses"] == ["p1", "p2", "p3", "p4", "p5"]
    assert rows["test_1_0:drop_stopwords"]["positive_responses"] == ["You ’ re welcome ."]
    assert rows["test_1_0:drop_stopwords"]["corrupted_responses"] == ["’ welcome ."]  # you, re: stop words


def test_rejected_and_stats_and_card(built):
    folder, stats = built
    rejected = sorted(os.listdir(os.path.join(folder, "rejected")))
    assert rejected == ["act-count-mismatch.jsonl", "bad-context.jsonl", "duplicate-dialogue.jsonl",
                        "empty-reference.jsonl", "invalid-json.jsonl", "released-context-unmatched.jsonl",
                        "text-mismatch.jsonl", "too-short-dialogue.jsonl"]
    with open(os.path.join(folder, "rejected", "act-count-mismatch.jsonl")) as fh:
        letter = json.loads(fh.readline())
    assert letter["reason"] == "act-count-mismatch" and letter["line"] == 5
    with open(os.path.join(folder, "stats.json")) as fh:
        assert json.load(fh)["configs"]["multiref"] == {"test": 6}
    meta = json.load(open(os.path.join(folder, "dataset_meta.json")))
    assert meta["configs"]["dailydialog_pp"]["options"]["random_negatives"]["min_words"] == 1
    assert meta["configs"]["dailydialog_pp_corrupted"]["options"]["corruptions"] == ["reverse", "drop_stopwords"]
    card = open(os.path.join(folder, "README.md")).read()
    assert "dailydialog_pp" in card
    assert entries(card) == [citations.LI_2017, citations.GUPTA_2019, citations.SAI_2020]  # from multiref.citations


def test_load_dataset(built):
    import datasets

    folder, _ = built
    ds = datasets.load_dataset(folder, "multiref")
    assert ds["test"].num_rows == 6 and ds["test"][0]["references"][0] == "fine , thanks . and you ?"
    ds = datasets.load_dataset(folder, "dailydialog_pp")
    assert sum(ds[s].num_rows for s in ds) == 9


def test_byte_identical_reruns_and_options_change_output(built, tmp_path):
    folder, _ = built
    again = str(tmp_path / "again")
    run(ARGS + ["--output", again, "--corruptions", "reverse", "drop_stopwords"])
    files = sorted(os.path.relpath(os.path.join(d, f), folder) for d, _, fs in os.walk(folder) for f in fs)
    for rel in files:
        with open(os.path.join(folder, rel), "rb") as a, open(os.path.join(again, rel), "rb") as b:
            assert a.read() == b.read(), rel
    other = str(tmp_path / "other")
    run(ARGS + ["--output", other, "--seed", "3", "--lowercase", "--chunk-length", "5", "--max-chunk", "6",
                "--released-random-negatives", "--first-reference", "dailydialog", "--detokenize"])
    mr = _rows(other, "multiref", "test")
    assert mr[2]["references"][0] == "it’s on main street."  # DailyDialog's next turn (curly quote kept), detokenized + lowercased
    assert mr[2]["references"][1:] == ["a", "b", "c", "d"]
    assert mr[2]["context"] == ["where is the bank?"]  # detokenized + lowercased
    rows = {r["id"]: r for r in _all_rows(other, "dailydialog_pp")}
    base = {r["id"]: r for r in _all_rows(folder, "dailydialog_pp")}
    assert rows["train_1_0"]["random_negative_responses"] != base["train_1_0"]["random_negative_responses"]  # seed
    assert rows["test_0_0"]["context"] == ["hi, how are you?", "fine, thanks. and you?"]
    assert rows["train_0_0"]["context"] == ["a1.", "b2.", "a3.", "b4."]  # chunk of 5, lowercased, detokenized
    assert "train_0_2" not in rows
    # with 5-turn chunks train_0 (10 turns) gives [0:5] [5:10]; neither matches dev 0 (3-turn context)
    assert rows["train_0_0"]["source"] == "dailydialog"


def test_released_random_negatives_option(tmp_path):
    out = str(tmp_path / "o")
    run(ARGS + ["--output", out, "--released-random-negatives"])
    rows = {r["id"]: r for r in _all_rows(out, "dailydialog_pp")}
    assert rows["train_0_0"]["random_negative_responses"] == ["r1", "r2", "r3", "r4", "r5"]  # from dev.json
    assert len(rows["train_1_0"]["random_negative_responses"]) == 5  # positives file has none: drawn
    assert "r1" not in rows["train_1_0"]["random_negative_responses"]


def test_source_injection():
    raw = [RawLine("mem", i + 1, text, "dailydialog", ("test", i, acts, emos)) for i, (text, acts, emos) in enumerate([
        ("Hello ! __eou__ Hi . __eou__ Bye . __eou__", "1 1 1", "0 0 0"),
        ("One ? __eou__ Two . __eou__", "2 1", "0 0"),
    ])]
    import tempfile

    with tempfile.TemporaryDirectory() as out:
        stats = run(["--output", out, "--random-negatives", "0"], source={"dailydialog": raw, "multiref": None, "ddpp": None})
        assert stats["configs"]["multiref"] == {"test": 3}
        assert sum(stats["configs"]["dailydialog_pp"].values()) == 2


def test_bad_options_are_user_errors(tmp_path):
    from multiref.util.errors import UserError

    with pytest.raises(UserError, match="sum to 1"):
        run(ARGS + ["--output", str(tmp_path / "x"), "--split-fractions", "0.5", "0.5", "0.5"])
    with pytest.raises(UserError, match="need --dailydialog"):
        run(["--output", str(tmp_path / "x"), "--ddpp", str(DATA / "ddpp")])
    with pytest.raises(UserError, match="not found"):
        run(["--output", str(tmp_path / "x"), "--dailydialog", str(tmp_path / "missing")])


def test_cli_on_bundled_sample(tmp_path):
    exe = os.path.join(os.path.dirname(sys.executable), "multiref")
    out = subprocess.run([exe, "dailydialog", "build", "--output", str(tmp_path / "s")],
                         capture_output=True, text=True, cwd=str(REPO_DIR))
    assert out.returncode == 0, out.stderr
    # expected counts of the bundled sample (also stated in the README)
    assert "multiref: test 37" in out.stdout
    assert "dailydialog_pp: test 6, train 39, validation 11" in out.stdout
    assert "contexts: test 37, train 134, validation 33" in out.stdout
    assert "[dailydialog] running the Beam pipeline" in out.stderr
    bad = subprocess.run([exe, "dailydialog", "build", "--output", str(tmp_path / "t"), "--dailydialog",
                          str(tmp_path / "nope")], capture_output=True, text=True, cwd=str(REPO_DIR))
    assert bad.returncode == 1 and bad.stderr.splitlines()[-1].startswith(
        "multiref: error: DailyDialog folder not found")


def test_cli_passes_beam_args_after_double_dash(tmp_path):
    from multiref_cli import build_parser

    args = build_parser().parse_args(["dailydialog", "build", "--output", "o", "--seed", "2", "--",
                                      "--runner", "DirectRunner", "--direct_num_workers", "1"])
    assert args.seed == 2 and args.beam_args[-4:] == ["--runner", "DirectRunner", "--direct_num_workers", "1"]


def test_thin_transform_with_test_pipeline():
    import apache_beam as beam
    from apache_beam.testing.test_pipeline import TestPipeline
    from apache_beam.testing.util import assert_that, equal_to

    from pipelines.beam.runner import pipeline_options
    from pipelines.dailydialog.transforms import Read

    raw = [RawLine("m", 1, "A . __eou__ B . __eou__", "dailydialog", ("test", 0, "1 1", "0 0")),
           RawLine("m", 2, "A . __eou__ B . __eou__", "dailydialog", ("test", 1, "1", "0 0"))]
    with TestPipeline(options=pipeline_options([])) as p:
        out = p | Read({"dailydialog": raw, "multiref": None, "ddpp": None})
        assert_that(out["dialogues"] | "ids" >> beam.Map(lambda d: d.dialogue_id), equal_to(["test_0"]), label="ok")
        assert_that(out["rejected"] | "reasons" >> beam.Map(lambda d: d["reason"]), equal_to(["act-count-mismatch"]),
                    label="rejected")


def test_rerun_without_corruptions_removes_the_corrupted_config(tmp_path):
    out = str(tmp_path / "o")
    run(ARGS + ["--output", out, "--corruptions", "reverse"])
    assert "dailydialog_pp_corrupted" in json.load(open(os.path.join(out, "dataset_meta.json")))["configs"]
    run(ARGS + ["--output", out])
    assert "dailydialog_pp_corrupted" not in json.load(open(os.path.join(out, "dataset_meta.json")))["configs"]
    assert not glob.glob(os.path.join(out, "dailydialog_pp_corrupted", "*"))  # published whole: no folder at all
    assert "dailydialog_pp_corrupted" not in open(os.path.join(out, "README.md")).read()


def test_empty_splits_are_left_out_of_the_card(tmp_path, capsys):
    import datasets

    out = str(tmp_path / "o")
    stats = run(ARGS + ["--output", out, "--split-fractions", "1", "0", "0"])
    assert stats["configs"]["dailydialog_pp"]["validation"] == 0 and stats["configs"]["dailydialog_pp"]["train"] == 9
    meta = json.load(open(os.path.join(out, "dataset_meta.json")))
    assert meta["configs"]["dailydialog_pp"]["splits"] == {"train": 9}
    assert "dailydialog_pp/validation has no rows" in capsys.readouterr().err
    assert datasets.load_dataset(out, "dailydialog_pp")["train"].num_rows == 9


def test_same_bytes_on_the_portable_runner(built, tmp_path):
    # The shared writer (multiref.beam.writer) makes the folder independent of the runner.
    folder, _ = built
    other = str(tmp_path / "portable")
    run(ARGS + ["--output", other, "--corruptions", "reverse", "drop_stopwords", "--runner", "PortableRunner",
                "--job_endpoint", "embed", "--environment_type", "LOOPBACK"])
    files = sorted(os.path.relpath(os.path.join(d, f), folder) for d, _, fs in os.walk(folder) for f in fs)
    assert files == sorted(os.path.relpath(os.path.join(d, f), other) for d, _, fs in os.walk(other) for f in fs)
    for rel in files:
        with open(os.path.join(folder, rel), "rb") as a, open(os.path.join(other, rel), "rb") as b:
            assert a.read() == b.read(), rel


def test_render_runner_draws_every_step(tmp_path):
    # The whole graph, every composite labelled after a step of the papers, drawn without running.
    import re

    from pipelines.dailydialog.job import STEPS

    graph = tmp_path / "graph.dot"
    summary = run(ARGS + ["--output", str(tmp_path / "o"), "--corruptions", "reverse",
                          "--runner", "apache_beam.runners.render.RenderRunner", "--render_output", str(graph)])
    assert summary["dry_run"] is True and not (tmp_path / "o").exists()  # nothing ran, nothing written
    dot = graph.read_text()
    for step in STEPS + ("ParseDialogues", "JoinByIndex", "GroupDuplicates", "JoinByContext", "SumCounts",
                         "GroupByShard", "GroupByReason"):
        assert re.search(rf'label="?{step}"?[,\]\s]', dot), step


def test_no_beam_metrics_no_local_open_and_no_printing_in_the_job():
    # Counts travel as data and files go through FileSystems: the job's modules neither query
    # Beam metrics nor open, create or delete files themselves; only the notes on stderr
    # (_note) and the `python -m` entry point (main) print.
    import ast

    for name in ("pipelines/dailydialog/job.py", "pipelines/dailydialog/transforms.py", "dailydialog_pp/steps.py",
                 "dailydialog_pp/card.py"):
        tree = ast.parse((REPO_DIR / name).read_text())
        calls = {node.func.id if isinstance(node.func, ast.Name) else node.func.attr
                 for node in ast.walk(tree) if isinstance(node, ast.Call)
                 and isinstance(node.func, (ast.Name, ast.Attribute))}
        assert not calls & {"open", "counters", "metrics", "makedirs", "remove"}, (name, calls)
        printing = {f.name for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)
                    for node in ast.walk(f) if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "print"}
        assert printing <= {"_note", "main"}, (name, printing)


class MemoryFileSystem(FileSystem):
    """An in-memory object store registered with Beam's FileSystems under ``memtest://`` (Beam
    finds every FileSystem subclass by its scheme): stands in for gs:// in these tests."""

    objects: dict = {}

    @classmethod
    def scheme(cls):
        return "memtest"

    def join(self, base, *paths):
        return "/".join([base.rstrip("/")] + [p.strip("/") for p in paths])

    def split(self, path):
        return tuple(path.rstrip("/").rsplit("/", 1))

    def has_dirs(self):
        return False

    def mkdirs(self, path):
        pass

    def _list(self, prefix):
        return [FileMetadata(p, len(b)) for p, b in sorted(self.objects.items()) if p.startswith(prefix)]

    def create(self, path, mime_type="application/octet-stream", compression_type=None):
        objects = self.objects

        class Upload(io.BytesIO):
            def close(self):
                objects[path] = self.getvalue()
                super().close()
        return Upload()

    def open(self, path, mime_type="application/octet-stream", compression_type=None):
        return io.BytesIO(self.objects[path])

    def copy(self, sources, destinations):
        for s, d in zip(sources, destinations):
            self.objects[d] = self.objects[s]

    def rename(self, sources, destinations):
        for s, d in zip(sources, destinations):
            self.objects[d] = self.objects.pop(s)

    def exists(self, path):
        return path in self.objects

    def size(self, path):
        return len(self.objects[path])

    def last_updated(self, path):
        return 0.0

    def metadata(self, path):
        return FileMetadata(path, self.size(path))

    def delete(self, paths):
        for p in paths:
            self.objects.pop(p)


def test_a_remote_output_gets_the_same_bytes(built):
    # Every file (shards, dead letters, stats.json, the card) goes through Beam's FileSystems,
    # so an object-store output (gs:// on Dataflow; an in-memory store here) holds the same bytes.
    folder, _ = built
    MemoryFileSystem.objects.clear()
    summary = run(ARGS + ["--output", "memtest://bucket/dd", "--corruptions", "reverse", "drop_stopwords"])
    assert summary["output"] == "memtest://bucket/dd" and summary["configs"]["multiref"] == {"test": 6}
    remote = {p[len("memtest://bucket/dd/"):]: b for p, b in MemoryFileSystem.objects.items()}
    # run() publishes as the CLI does: the remote protocol's manifest and marker, beside the same files
    assert remote.pop("_SUCCESS", None) is not None and json.loads(remote.pop("_MANIFEST.json"))
    local = {}
    for d, _, fs in os.walk(folder):
        for f in fs:
            with open(os.path.join(d, f), "rb") as fh:
                local[os.path.relpath(os.path.join(d, f), folder)] = fh.read()
    assert sorted(remote) == sorted(local)
    for rel, data in local.items():
        assert remote[rel] == data, rel
    assert summary["dead_letters"]["text-mismatch"] == 1


def test_cli_publishes_a_remote_output_whole(capsys):
    # The CLI's one call (pipelines.dailydialog.job.build_published) on an object store: built in a
    # staging prefix, then published with its manifest and _SUCCESS marker (multiref.output.publish_remote).
    from multiref_cli import main

    MemoryFileSystem.objects.clear()
    assert main(["dailydialog", "build", "--output", "memtest://bucket/pub", "--quiet"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "multiref: test 37" and out[-1] == "wrote memtest://bucket/pub"
    names = sorted(p[len("memtest://bucket/"):] for p in MemoryFileSystem.objects)
    assert "pub/_SUCCESS" in names and "pub/stats.json" in names and "pub/README.md" in names
    assert not [n for n in names if not n.startswith("pub/")]  # no staging prefix, no lock left


# sha256 of the bundled sample build's files before the contexts config was added (issue 23):
# adding a config must leave every earlier config's shards and dead letters byte-identical.
SAMPLE_DIGESTS = {
    "dailydialog_pp/test-00000-of-00001.parquet": "a9f0c967173822a7a6bb464215f2e3659d6785c22ec6ccf81bc705e788ffdf60",
    "dailydialog_pp/train-00000-of-00001.parquet": "0d321e6cefb90dbb9a2d43b5bcacabfe65b1c3b6fc542926af9c3f21b9b29b07",
    "dailydialog_pp/validation-00000-of-00001.parquet": "55966d0adb8bcd23031735a7ca7bb56874a13989b2da7c2985986b9d496621b7",
    "multiref/test-00000-of-00001.parquet": "e6998a63a674d885650a1fa3f45115f3405026b1e6c6a41b36b720c57d17d587",
    "rejected/act-count-mismatch.jsonl": "276339794a2f0f9d8045bdf214cd41eb1d5c75a69e3518ff74d04598dfcfb092",
    "rejected/text-mismatch.jsonl": "5827449efcb3ceded15f964d17357a003ee28d1f99ca2f77ae89d103a0329c69",
}


def test_bundled_sample_keeps_earlier_configs_byte_identical(tmp_path):
    from tests.helpers import file_digests

    folder = str(tmp_path / "sample")
    run(["--output", folder])
    digests = file_digests(folder)
    assert {k: digests.get(k) for k in SAMPLE_DIGESTS} == SAMPLE_DIGESTS
    assert {"contexts/test-00000-of-00001.parquet", "contexts/train-00000-of-00001.parquet"} <= set(digests)
