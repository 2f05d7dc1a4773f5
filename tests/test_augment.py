"""``multiref augment`` (lsdscc/testset/augment.py, pipelines/augment/job.py, multiref_cli/augment.py) on
small fixtures (tests/data/augment/README.md): the real CLI in a subprocess, the real JVM with
Lucene, real gensim Doc2Vec.

What is checked: a planted paraphrase is retrieved; the leakage rules (candidates only from
the corpus split; none equal to a test reference; the test context found in the corpus is
never its own neighbour, while another context with the same last turn is); the threshold
and --max-candidates; the card; byte-identical reruns; the output loads with
``datasets.load_dataset``; the annotation round trip on ``test_candidates``; the interface
of the issue and its errors.
"""

from __future__ import annotations

import csv
import json
import os
import random
import subprocess
import sys

import pytest

from tests.helpers import REPO_DIR, data_path, file_digests

FILLER_WORDS = ("apple river window garden yellow quiet happy table teacher market winter coffee bicycle letter "
                "forest doctor cousin kitchen ocean mountain pencil sister dinner holiday camera bottle blanket "
                "sunday monday office").split()
DATA = data_path("augment")


def _read_jsonl(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _filler(n: int = 120) -> list:
    """Seeded filler pairs, so Doc2Vec and Lucene see a corpus and not five lines."""
    rng = random.Random(7)
    return [{"id": f"f{i:03d}", "context": [" ".join(rng.choice(FILLER_WORDS) for _ in range(6)) + " ?"],
             "response": " ".join(rng.choice(FILLER_WORDS) for _ in range(5)) + " ."} for i in range(n)]


def _write_folder(folder, config, splits: dict, schema) -> None:
    from multiref.output import hfdata

    for split, rows in splits.items():
        hfdata.write_parquet(hfdata.shard_path(folder, config, split), rows, schema)
    hfdata.add_config(folder, hfdata.ConfigInfo(name=config, description="fixture", features=schema,
                                                splits={s: len(r) for s, r in splits.items()}))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    import pyarrow as pa

    root = tmp_path_factory.mktemp("augment")
    strings = pa.list_(pa.string())
    corpus, test = str(root / "corpus"), str(root / "test")
    _write_folder(corpus, "pairs", {"train": _read_jsonl(DATA / "corpus_train.jsonl") + _filler(),
                                    "validation": _read_jsonl(DATA / "corpus_validation.jsonl")},
                  pa.schema([("id", pa.string()), ("context", strings), ("response", pa.string())]))
    _write_folder(test, "items", {"test": _read_jsonl(DATA / "test.jsonl")},
                  pa.schema([("id", pa.string()), ("context", strings), ("references", strings)]))
    return root, corpus, test


def _augment(corpus, test, output, *options):
    cmd = [sys.executable, "-m", "multiref_cli", "augment", "--corpus", corpus, "--corpus-config", "pairs",
           "--corpus-split", "train", "--test", test, "--test-config", "items", "--test-split", "test",
           "--output", output, *options]
    env = dict(os.environ, PYTHONPATH=str(REPO_DIR))
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


def _rows(folder, config):
    import pyarrow.parquet as pq

    return {r["id"]: r for r in pq.read_table(os.path.join(folder, config, "test-00000-of-00001.parquet")).to_pylist()}


@pytest.fixture(scope="module")
def loose(inputs):
    """Every retrieved neighbour kept (--threshold -1), so the leakage rules alone decide."""
    root, corpus, test = inputs
    out = str(root / "loose")
    done = _augment(corpus, test, out, "--top-k", "50", "--threshold", "-1", "--max-candidates", "40", "--seed", "7")
    assert done.returncode == 0, done.stderr
    return out, json.loads(done.stdout)


def test_retrieval_finds_the_planted_paraphrase(loose):
    out, _ = loose
    candidates = _rows(out, "test_candidates")["t_para"]["candidates"]
    para = [c for c in candidates if c["source_pair_id"] == "c_para"]
    assert [c["text"] for c in para] == ["try the machine by platform two ."]
    assert para[0]["source_query"] == "where do I buy cheap train tickets to Boston ?"
    fillers = [c["lucene_score"] for c in candidates if c["source_pair_id"].startswith("f")]
    assert para[0]["lucene_score"] > max(fillers, default=0.0)  # TF-IDF ranks it above every filler
    assert all(c["own"] is False for c in candidates)


def test_leakage_rules(loose, inputs):
    out, counts = loose
    rows = _rows(out, "test_candidates")
    train_ids = {r["id"] for r in _read_jsonl(DATA / "corpus_train.jsonl") + _filler()}
    texts = [c["text"] for r in rows.values() for c in r["candidates"]]
    # candidates only from the corpus split given (v_leak is in validation)
    assert all(c["source_pair_id"] in train_ids for r in rows.values() for c in r["candidates"])
    assert "validation split reply ." not in texts
    para = [c["text"] for c in rows["t_para"]["candidates"]]
    # no candidate equal to a test reference (c_refeq's differs only by case and spacing)
    assert "At the  TICKET office ." not in para and counts["dropped_equal_to_reference"] >= 1
    # the test context found in the corpus is never its own neighbour; the same last turn in another dialogue is
    assert "duplicate dialogue reply ." not in para and counts["dropped_own_context"] == 1
    assert "the station sells them ." in para
    def key(text):
        return " ".join(text.split()).casefold()

    for item in _read_jsonl(DATA / "test.jsonl"):
        candidates = {key(c["text"]) for c in rows[item["id"]]["candidates"]}
        assert not candidates & {key(r) for r in item["references"]}


def test_test_auto_is_references_then_candidates(loose):
    out, counts = loose
    auto, cands = _rows(out, "test_auto"), _rows(out, "test_candidates")
    assert auto["t_jazz"]["references"][:2] == ["yes , I love it .", "not really ."]
    assert auto["t_jazz"]["original_references"] == 2 and cands["t_jazz"]["response_number"] == 2
    for key, row in auto.items():
        assert row["references"][row["original_references"]:] == [c["text"] for c in cands[key]["candidates"]]
    assert cands["t_para"]["query"] == "hello there __eou__ where can I buy a cheap train ticket to Boston ?"
    assert counts["test_items"] == 3 and counts["candidates"] == sum(len(r["candidates"]) for r in cands.values())


def test_card_records_corpus_options_and_counts(loose):
    out, counts = loose
    with open(os.path.join(out, "dataset_meta.json"), encoding="utf-8") as fh:
        meta = json.load(fh)["configs"]
    options = meta["test_candidates"]["options"]
    assert options["corpus"]["config"] == "pairs" and options["corpus"]["split"] == "train"
    assert options["test"]["config"] == "items" and len(options["corpus"]["sha256"]) == 64
    assert options["retrieval"]["depth"] == 50 and options["retrieval"]["similarity"] == "tfidf"
    assert options["doc2vec"]["threshold"] == -1.0 and options["doc2vec"]["seed"] == 7
    assert options["augment"] == {"max_candidates": 40, "context_turns": 1, "min_candidates": 5,
                                  "floor_threshold": 0.5}
    assert meta["test_candidates"]["counts"]["candidates"] == counts["candidates"]
    assert meta["test_candidates"]["counts"]["coverage"] == round(counts["items_with_candidates"] / 3, 4)
    assert meta["test_auto"]["splits"] == {"test": 3}
    assert "Augmentation" in open(os.path.join(out, "README.md"), encoding="utf-8").read()


def test_threshold_and_max_candidates(inputs, loose):
    root, corpus, test = inputs
    out = str(root / "strict")
    done = _augment(corpus, test, out, "--threshold", "0.99", "--max-candidates", "2", "--min-candidates", "0")
    assert done.returncode == 0, done.stderr
    rows = _rows(out, "test_candidates")
    # only the corpus context with the very text of t_para's last turn has cosine 1 (the same vector)
    assert [c["text"] for c in rows["t_para"]["candidates"]] == ["the station sells them ."]
    assert rows["t_para"]["candidates"][0]["doc2vec_cosine"] == pytest.approx(1.0)
    assert rows["t_none"]["candidates"] == []
    loose_rows = _rows(loose[0], "test_candidates")
    assert all(len(r["candidates"]) <= 2 for r in rows.values())
    assert any(len(r["candidates"]) > 2 for r in loose_rows.values())


def test_floor_fills_a_context_to_min_candidates(inputs, loose):
    """At --threshold 0.99 t_para has one candidate; the floor (3 at cosine >= -1) adds the next
    two best of the loose run, in its order, and the card counts the filled contexts."""
    root, corpus, test = inputs
    out = str(root / "floor")
    done = _augment(corpus, test, out, "--threshold", "0.99", "--min-candidates", "3", "--floor-threshold", "-1",
                    "--top-k", "50", "--seed", "7")
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout)
    rows, loose_rows = _rows(out, "test_candidates"), _rows(loose[0], "test_candidates")
    assert [c["text"] for c in rows["t_para"]["candidates"]] == [c["text"] for c in loose_rows["t_para"]["candidates"][:3]]
    assert rows["t_para"]["candidates"][0]["doc2vec_cosine"] == pytest.approx(1.0)
    assert rows["t_para"]["candidates"][2]["doc2vec_cosine"] < 0.99
    assert counts["filled_by_floor"] == sum(1 for r in rows.values() if r["candidates"]) >= 2
    assert counts["coverage"] == round(counts["items_with_candidates"] / 3, 4)
    assert "test items" in done.stderr and "got candidates" in done.stderr


def test_files_as_researchers_hold_them(inputs, tmp_path):
    """The issue's interface: train.jsonl and test.jsonl (context: a list of turns; response),
    no other flag, writes test_candidates; a CSV test set with renamed columns; a folder that
    holds the file; a mistyped column is one line naming the file and its columns."""
    train = tmp_path / "train.jsonl"
    rows = _read_jsonl(DATA / "corpus_train.jsonl") + _filler()
    train.write_text("".join(json.dumps({"context": r["context"], "response": r["response"]}) + "\n" for r in rows))
    test = tmp_path / "test.jsonl"
    tests = _read_jsonl(DATA / "test.jsonl")
    test.write_text("".join(json.dumps({"context": r["context"], "response": r["references"][0]}) + "\n"
                            for r in tests))
    env = dict(os.environ, PYTHONPATH=str(REPO_DIR))

    def augment(*argv):
        return subprocess.run([sys.executable, "-m", "multiref_cli", "augment", *argv], capture_output=True, text=True,
                              env=env, timeout=300)

    done = augment("--corpus", str(train), "--test", str(test), "--output", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    found = _rows(str(tmp_path / "out"), "test_candidates")
    assert sorted(found) == ["0", "1", "2"] and json.loads(done.stdout)["test_items"] == 3
    with open(tmp_path / "test.csv", "w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["key", "turns", "gold"])
        out.writerows([[r["id"], json.dumps(r["context"]), r["references"][0]] for r in tests])
    (tmp_path / "corpus").mkdir()
    os.replace(train, tmp_path / "corpus" / "my_train_pairs.jsonl")
    done = augment("--corpus", str(tmp_path / "corpus"), "--test", str(tmp_path / "test.csv"), "--id-column", "key",
                   "--context-column", "turns", "--references-column", "gold", "--output", str(tmp_path / "out2"))
    assert done.returncode == 0, done.stderr  # the names exist in the test file only: the corpus keeps its own
    renamed = _rows(str(tmp_path / "out2"), "test_candidates")
    assert sorted(renamed) == sorted(r["id"] for r in tests)
    for i, row in enumerate(tests):  # the same candidates as from the JSON lines file (ids: its row numbers)
        assert [c["text"] for c in renamed[row["id"]]["candidates"]] == [c["text"] for c in found[str(i)]["candidates"]]
    done = augment("--corpus", str(tmp_path / "corpus"), "--test", str(tmp_path / "test.csv"), "--context-column",
                   "turn", "--output", str(tmp_path / "out3"))
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert f"{tmp_path / 'corpus'} default/my_train_pairs: no column 'turn' (--context-column" in done.stderr
    assert "it has context, response" in done.stderr
    done = augment("--corpus", str(test), "--test", str(tmp_path / "test.csv"), "--output", str(tmp_path / "out3"))
    assert done.returncode == 1
    assert done.stderr.strip() == (f"multiref: error: {tmp_path / 'test.csv'}: needs a context column (context or query, "
                                   "or --context-column) and a references or response column (or --response-column); "
                                   "it has key, turns, gold")
    assert not os.path.exists(tmp_path / "out3")


def test_rerun_is_byte_identical_and_loads_with_datasets(inputs, loose):
    import datasets

    root, corpus, test = inputs
    again = str(root / "again")
    assert _augment(corpus, test, again, "--top-k", "50", "--threshold", "-1", "--max-candidates", "40",
                    "--seed", "7").returncode == 0
    assert file_digests(again) == file_digests(loose[0])
    for config in ("test_candidates", "test_auto"):
        loaded = datasets.load_dataset(loose[0], config, split="test")
        assert loaded.num_rows == 3
    assert datasets.load_dataset(loose[0], "test_auto", split="test")[0]["id"] in {"t_para", "t_jazz", "t_none"}


def test_a_python_caller_gets_the_commands_folder_and_counts(inputs, loose, tmp_path):
    """``pipelines.augment.job.augment`` is the command's one call: same bytes, same counts, and
    an input folder as the output is refused before anything is written."""
    from lsdscc.testset.augment import AugmentConfig
    from lsdscc.testset.doc2vec import Doc2VecConfig
    from lsdscc.testset.retrieval import RetrievalConfig
    from multiref.util.errors import UserError
    from pipelines.augment.job import Source, augment

    root, corpus, test = inputs
    sources = (Source(corpus, "pairs", "train", "corpus"), Source(test, "items", "test", "test"))
    configs = (AugmentConfig(max_candidates=40), RetrievalConfig(depth=50), Doc2VecConfig(threshold=-1.0, seed=7))
    counts = augment(*sources, str(tmp_path / "py"), *configs)
    assert file_digests(tmp_path / "py") == file_digests(loose[0])
    counts.pop("seconds")
    assert counts == loose[1]
    with pytest.raises(UserError, match="is an input folder"):
        augment(*sources, corpus, *configs)
    assert sorted(os.listdir(root / "corpus")) == ["README.md", "dataset_meta.json", "pairs"]


def test_doc2vec_parts_reach_augment_and_its_card(inputs, loose):
    """--doc2vec-parts 2 through the command (its parts train in worker processes started
    from ``python -m multiref_cli``): recorded in the card, the parts' cosines used."""
    root, corpus, test = inputs
    out = str(root / "parts")
    done = _augment(corpus, test, out, "--top-k", "50", "--threshold", "-1", "--max-candidates", "40", "--seed", "7",
                    "--doc2vec-parts", "2")
    assert done.returncode == 0, done.stderr
    with open(os.path.join(out, "dataset_meta.json"), encoding="utf-8") as fh:
        assert json.load(fh)["configs"]["test_candidates"]["options"]["doc2vec"]["parts"] == 2
    rows, loose_rows = _rows(out, "test_candidates"), _rows(loose[0], "test_candidates")
    assert "c_para" in {c["source_pair_id"] for c in rows["t_para"]["candidates"]}
    cosines = {c["source_pair_id"]: c["doc2vec_cosine"] for c in rows["t_para"]["candidates"]}
    assert cosines != {c["source_pair_id"]: c["doc2vec_cosine"] for c in loose_rows["t_para"]["candidates"]}


def test_annotation_round_trip_on_test_candidates(inputs, loose, tmp_path):
    """annotate export -> an annotator marks every candidate of t_para relevant -> annotate import."""
    import shutil

    from multiref_cli import main

    folder = str(tmp_path / "augmented")
    shutil.copytree(loose[0], folder)
    exported = tmp_path / "a.csv"
    assert main(["lsdscc", "annotate", "export", "--dataset", folder, "--output", str(exported), "--quiet"]) == 0
    with open(exported, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["query_id"] for r in rows} == {k for k, v in _rows(folder, "test_candidates").items() if v["candidates"]}
    for r in rows:
        r["relevant"], r["group"] = ("1", "1") if r["query_id"] == "t_para" else ("0", "")
    with open(tmp_path / "x.csv", "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    public = tmp_path / "public"
    assert main(["lsdscc", "annotate", "import", "--dataset", folder, "--annotations", str(tmp_path / "x.csv"),
                 "--output", str(public), "--quiet"]) == 0
    grouped = json.loads((public / "test.group.json").read_text(encoding="utf-8"))
    para = _rows(folder, "test_candidates")["t_para"]
    assert list(grouped) == [para["query"]]
    assert sorted(grouped[para["query"]]["1"]) == sorted(c["text"] for c in para["candidates"])
    assert "test_grouped" in json.load(open(os.path.join(folder, "dataset_meta.json")))["configs"]


@pytest.mark.parametrize("change, message", [
    (("--corpus-config", "nope"), "no config 'nope' (choose one of: pairs)"),
    (("--test-split", "train"), "items: no split 'train' (choose one of: test)"),
    (("--max-candidates", "0"), "--max-candidates must be at least 1"),
])
def test_bad_input_is_one_line_exit_1(inputs, change, message):
    root, corpus, test = inputs
    out = str(root / "bad")
    base = ["--corpus", corpus, "--corpus-config", "pairs", "--corpus-split", "train",
            "--test", test, "--test-config", "items", "--test-split", "test", "--output", out]
    i = base.index(change[0]) if change[0] in base else None
    if i is not None:
        base[i + 1] = change[1]
    else:
        base += list(change)
    env = dict(os.environ, PYTHONPATH=str(REPO_DIR))
    done = subprocess.run([sys.executable, "-m", "multiref_cli", "augment", *base], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith("multiref: error:") and message in done.stderr
    assert not os.path.exists(out)


def test_interface_of_the_issue():
    """Every flag of the issue's interface, with its metavar; a missing required one is a usage error."""
    from multiref_cli import build_parser, flags

    parser = dict(flags.leaf_parsers(build_parser()))["augment"]
    usage = " ".join(parser.format_usage().split())
    for part in ("--corpus PATH", "[--corpus-config NAME]", "[--corpus-split NAME]", "--test PATH",
                 "[--test-config NAME]", "[--test-split NAME]", "--output FOLDER", "[--top-k K]", "[--threshold T]",
                 "[--max-candidates M]", "[--seed S]", "[--min-candidates F]", "[--floor-threshold L]",
                 "[--context-column NAME]", "[--response-column NAME]", "[--id-column NAME]"):
        assert part in usage, part
    args = parser.parse_args(["--corpus", "a", "--corpus-config", "b", "--corpus-split", "c", "--test", "d",
                              "--test-config", "e", "--test-split", "f", "--output", "g", "--top-k", "3",
                              "--threshold", "0.5", "--max-candidates", "4", "--seed", "9"])
    assert (args.corpus, args.corpus_config, args.corpus_split, args.test, args.test_config, args.test_split,
            args.output, args.top_k, args.threshold, args.max_candidates, args.seed) == (
        "a", "b", "c", "d", "e", "f", "g", 3, 0.5, 4, 9)
    env = dict(os.environ, PYTHONPATH=str(REPO_DIR))
    done = subprocess.run([sys.executable, "-m", "multiref_cli", "augment", "--corpus", "a"], capture_output=True,
                          text=True, env=env, timeout=60)
    assert done.returncode == 2 and "multiref: error:" in done.stderr


# ---- the pure rules (lsdscc/testset/augment.py)

def test_items_from_columns_takes_query_and_response_strings():
    import pyarrow as pa

    from lsdscc.testset.augment import items_from_columns

    table = pa.table({"query": ["a b", "c", None], "response": ["x", "", None]})
    items = items_from_columns(table, "here", references=True)
    assert [(i.id, i.turns, i.references) for i in items] == [("0", ("a b",), ("x",)), ("1", ("c",), ()),
                                                              ("2", ("",), ())]
    numbers = items_from_columns(pa.table({"id": [7], "context": [[1, None]], "references": [["y", " "]]}), "here",
                                 references=True)
    assert [(i.id, i.turns, i.references) for i in numbers] == [("7", ("1", ""), ("y",))]
    from multiref.util.errors import UserError

    with pytest.raises(UserError, match="here: needs a context column"):
        items_from_columns(pa.table({"text": ["a"]}), "here", references=False)
    with pytest.raises(UserError, match="repeats"):
        items_from_columns(pa.table({"id": ["1", "1"], "query": ["a", "b"], "response": ["x", "y"]}), "here",
                           references=False)


@pytest.mark.parametrize("turns, n, expected", [
    (("a", "b  c", "d"), 1, "d"), (("a", "b  c", "d"), 2, "b c d"), (("a", "b  c", "d"), 0, "a b c d"),
    ((), 1, ""),
])
def test_retrieval_text(turns, n, expected):
    from lsdscc.testset.augment import retrieval_text

    assert retrieval_text(turns, n) == expected


def test_renamed_flags_keep_the_stage_flags_bounds(capsys):
    """--threshold is --doc2vec-threshold under augment's name: a cosine, checked by the parser."""
    from multiref_cli import build_parser, flags

    parser = dict(flags.leaf_parsers(build_parser()))["augment"]
    base = ["--corpus", "a", "--corpus-config", "b", "--corpus-split", "c", "--test", "d", "--test-config", "e",
            "--test-split", "f", "--output", "g"]
    with pytest.raises(SystemExit) as info:
        parser.parse_args(base + ["--threshold", "1.5"])
    assert info.value.code == 2 and "argument --threshold: must be from -1 to 1, got 1.5" in capsys.readouterr().err
    assert parser.parse_args(base + ["--threshold", "-1"]).threshold == -1.0
