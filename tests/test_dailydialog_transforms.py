"""Each composite of the DailyDialog job (pipelines/dailydialog/transforms.py) on a real Beam
runner (TestPipeline), on hand-made records: its kept rows, its dead letters with their
reasons, and its counts as data (summed as the job sums them)."""

import argparse
import json

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from dailydialog_pp.readers import Dialogue, MultirefDialogue, RawLine, ReleasedContext
from pipelines.beam.runner import pipeline_options
from multiref.beam.writer import SumCounts
from pipelines.dailydialog import transforms as t
from tests.helpers import data_path

DATA = data_path("dailydialog")


def _options(*argv):
    from pipelines.dailydialog.options import add_build_arguments, options_from_args

    parser = argparse.ArgumentParser()
    add_build_arguments(parser)
    return options_from_args(parser.parse_args(list(argv)))


def _pipeline():
    return TestPipeline(options=pipeline_options([]))


def _check(out, *, rows=None, reasons=None, counts=None, key=lambda r: r, prefix=""):
    """assert_that on a composite's ``rows`` (mapped by ``key``), dead-letter reasons and summed counts."""
    if rows is not None:
        assert_that(out["rows"] | f"{prefix}Rows" >> beam.Map(key), equal_to(rows), label=f"{prefix}CheckRows")
    if reasons is not None:
        assert_that(out["rejected"] | f"{prefix}Reasons" >> beam.Map(lambda d: d["reason"]), equal_to(reasons),
                    label=f"{prefix}CheckReasons")
    if counts is not None:
        summed = out["counts"] | f"{prefix}Sum" >> beam.CombineGlobally(SumCounts())
        assert_that(summed, equal_to([counts]), label=f"{prefix}CheckCounts")


def _dialogue(dialogue_id, *turns):
    split, index = dialogue_id.rsplit("_", 1)
    return Dialogue(dialogue_id, split, int(index), tuple(turns))


def test_read_parses_injected_records_and_rejects_bad_lines():
    # The existing thin-transform case (a label count that does not match) plus a bad JSON line.
    raw = [RawLine("m", 1, "A . __eou__ B . __eou__", "dailydialog", ("test", 0, "1 1", "0 0")),
           RawLine("m", 2, "A . __eou__ B . __eou__", "dailydialog", ("test", 1, "1", "0 0"))]
    released = [RawLine("/x/mr.jsonl", 1, json.dumps({"index": 0, "dialogue": [
                    {"text": "A .", "responses": ["b", "c"]}, {"text": "B ."}]}), "multiref"),
                RawLine("/x/mr.jsonl", 2, "{oops", "multiref")]
    with _pipeline() as p:
        out = p | t.Read({"dailydialog": raw, "multiref": released, "ddpp": None})
        assert_that(out["dialogues"] | "Ids" >> beam.Map(lambda d: d.dialogue_id), equal_to(["test_0"]), label="ids")
        assert_that(out["references"] | "Keys" >> beam.Map(lambda kv: kv[0]), equal_to([("test", 0)]), label="keys")
        assert_that(out["responses"], equal_to([]), label="responses")
        assert_that(out["rejected"] | "Files" >> beam.Map(lambda d: (d["reason"], d["file"], d["line"])),
                    equal_to([("act-count-mismatch", "m", 2), ("invalid-json", "mr.jsonl", 2)]), label="letters")
        _check(out, counts={"dailydialog/act-count-mismatch": 1, "dailydialog/dialogues-test": 1,
                            "multiref/invalid-json": 1, "multiref/released-dialogues": 1})


def test_read_loads_files_inside_the_pipeline():
    from pipelines.dailydialog.job import Loader

    source = {"dailydialog": Loader("dailydialog", str(DATA / "dd")), "multiref": None,
              "ddpp": Loader("ddpp", str(DATA / "ddpp"))}
    with _pipeline() as p:
        out = p | t.Read(source)
        assert_that(out["dialogues"] | beam.combiners.Count.Globally(), equal_to([8]), label="dialogues")
        assert_that(out["references"], equal_to([]), label="no references")
        _check(out, reasons=["act-count-mismatch", "bad-context"])


def test_references_join_by_index_and_reject_what_does_not_join():
    options = _options()
    dialogues = [_dialogue("test_0", "Hi .", "Hello .", "Bye ."), _dialogue("test_1", "One ?", "Two ."),
                 _dialogue("train_0", "Not . ", "Cut .")]
    good = MultirefDialogue(0, ("hi .", "hello .", "bye ."), (("hello .", "r1"), ("bye .", "r2")), 1, "/x/mr.jsonl")
    again = MultirefDialogue(0, ("hi .",), (), 2, "/x/mr.jsonl")
    orphan = MultirefDialogue(7, ("x .",), (), 3, "/x/mr.jsonl")
    released = [(("test", r.index), r) for r in (good, again, orphan)]
    with _pipeline() as p:
        inputs = {"dialogues": p | "D" >> beam.Create(dialogues), "released": p | "R" >> beam.Create(released)}
        out = inputs | t.References(options, have_release=True)
        _check(out, rows=[("0_0", ("hello .", "r1")), ("0_1", ("bye .", "r2")), ("1_0", ("Two .",))],
               key=lambda r: (r["id"], tuple(r["references"])),
               reasons=["duplicate-index", "released-without-dialogue"],
               counts={"multiref/contexts-test": 3, "multiref/dialogues-without-references": 1,
                       "multiref/duplicate-index": 1, "multiref/joined-dialogues": 1,
                       "multiref/released-without-dialogue": 1})


@pytest.mark.parametrize("dedup, kept, reasons", [(True, ["train_0", "train_2"], ["duplicate-dialogue"]),
                                                  (False, ["train_0", "train_1", "train_2"], [])])
def test_dedup_keeps_one_of_each_duplicate(dedup, kept, reasons):
    dialogues = [_dialogue("train_0", "I have 2 cats .", "Nice ."), _dialogue("train_1", "i have two cats.", "nice."),
                 _dialogue("train_2", "Other .", "Yes .")]
    with _pipeline() as p:
        out = p | beam.Create(dialogues) | t.Dedup(dedup, None)
        _check(out, rows=kept, key=lambda d: d.dialogue_id, reasons=reasons,
               counts={"dailydialog_pp/dialogues-kept": len(kept), **({"dailydialog_pp/duplicate-dialogue": 1}
                                                                    if dedup else {})})


def test_contexts_cut_long_dialogues_into_chunks():
    options = _options()
    long = _dialogue("train_0", *[f"T{i} ." for i in range(10)])  # 10 turns: [0:4] [4:8] [7:10]
    with _pipeline() as p:
        out = p | beam.Create([long, _dialogue("train_1", "Alone .")]) | t.Contexts(options.chunks, options.text)
        _check(out, rows=[("train_0_0", 3), ("train_0_1", 3), ("train_0_2", 2)],
               key=lambda kv: (kv[1]["id"], len(kv[1]["context"])), reasons=["too-short-dialogue"],
               counts={"dailydialog_pp/contexts": 3, "dailydialog_pp/too-short-dialogue": 1})


def test_responses_join_released_contexts_by_text():
    from dailydialog_pp.normalize import dialogue_key

    rows = [{"id": "train_0_0", "dialogue_id": "train_0", "context": ["A ."], "response": "B ."},
            {"id": "train_1_0", "dialogue_id": "train_1", "context": ["C ."], "response": "D ."}]
    matched = ReleasedContext("ddpp_dev", 4, ("A .",), ("p1", " p2 "), ("a1",), ("r1",), 1, "/x/dev.json")
    unmatched = ReleasedContext("ddpp_dev", 5, ("Z .",), ("z",), (), (), 2, "/x/dev.json")
    with _pipeline() as p:
        inputs = {"contexts": p | "C" >> beam.Create([(dialogue_key(r["context"]), r) for r in rows]),
                  "released": p | "R" >> beam.Create([(dialogue_key(r.context), r) for r in (matched, unmatched)])}
        out = inputs | t.Responses()
        _check(out, rows=[("train_0_0", "ddpp_dev", ("p1", "p2")), ("train_1_0", "dailydialog", ("D .",))],
               key=lambda r: (r["id"], r["source"], tuple(r["positive_responses"])),
               reasons=["released-context-unmatched"],
               counts={"dailydialog_pp/contexts-with-released-responses": 1,
                       "dailydialog_pp/contexts-without-released-responses": 1,
                       "dailydialog_pp/matched-ddpp_dev": 1, "dailydialog_pp/unmatched-ddpp_dev": 1})


def test_split_hashes_the_dialogue_id():
    from dailydialog_pp.splits import assign_split

    options = _options()
    rows = [{"id": f"train_{i}_0", "dialogue_id": f"train_{i}"} for i in range(20)]
    expected = [(r["id"], assign_split(r["dialogue_id"], options.splits)) for r in rows]
    counts = {}
    for _, split in expected:
        counts[f"dailydialog_pp/contexts-{split}"] = counts.get(f"dailydialog_pp/contexts-{split}", 0) + 1
    with _pipeline() as p:
        out = p | beam.Create(rows) | t.Split(options.splits)
        _check(out, rows=expected, key=lambda r: (r["id"], r["split"]), reasons=[], counts=counts)


def test_negatives_come_from_other_dialogues():
    from dailydialog_pp.negatives import NegativeOptions

    rows = [{"id": f"d{i}_0", "dialogue_id": f"d{i}", "response": f"answer number {i} here",
             "positive_responses": [f"answer number {i} here"], "released_random": ["kept"]} for i in range(4)]
    with _pipeline() as p:
        out = p | beam.Create(rows) | t.Negatives(NegativeOptions(count=2, min_words=1, seed=0))
        _check(out, rows=[(f"d{i}_0", 2, False) for i in range(4)],
               key=lambda r: (r["id"], len(r["random_negative_responses"]),
                              bool(set(r["random_negative_responses"]) & set(r["positive_responses"]))),
               reasons=[], counts={})


def test_corrupt_makes_one_row_per_corruption():
    row = {"id": "d0_0", "dialogue_id": "d0", "context": ["Hi ."], "positive_responses": ["a b c"], "split": "test"}
    with _pipeline() as p:
        out = p | beam.Create([row]) | t.Corrupt(["reverse", "drop_punctuation"], 0)
        _check(out, rows=[("d0_0:reverse", ("c b a",)), ("d0_0:drop_punctuation", ("a b c",))],
               key=lambda r: (r["id"], tuple(r["corrupted_responses"])), counts={})


def test_write_dead_letters_and_stats(tmp_path):
    import pyarrow.parquet as pq

    folder = str(tmp_path / "out")
    rows = [{"id": "1_0", "dialogue_id": "test_1", "context": ["a"], "references": ["b"], "split": "test"},
            {"id": "0_0", "dialogue_id": "test_0", "context": ["c"], "references": ["d"], "split": "test"}]
    letters = [{"reason": "text-mismatch", "detail": "x", "file": "m", "line": 2, "text": None},
               {"reason": "text-mismatch", "detail": "y", "file": "m", "line": 1, "text": None}]
    with _pipeline() as p:
        shards = {"multiref": p | "Rows" >> beam.Create(rows)} | t.Write(folder, [("multiref", "test")])
        assert_that(shards | beam.Map(lambda s: (s.config, s.split, s.rows)), equal_to([("multiref", "test", 2)]))
        _ = p | "Letters" >> beam.Create(letters) | t.WriteRejected(folder)
        counts = p | "Counts" >> beam.Create([{"multiref/a": 1}, {"multiref/a": 2, "multiref/b": 1}])
        _ = {"counts": counts, "shards": shards} | t.WriteStats(folder, {"inputs": {}, "options": {}})
    table = pq.read_table(tmp_path / "out" / "multiref" / "test-00000-of-00001.parquet")
    assert table.column("id").to_pylist() == ["0_0", "1_0"]  # sorted by id
    lines = (tmp_path / "out" / "rejected" / "text-mismatch.jsonl").read_text().splitlines()
    assert [json.loads(line)["detail"] for line in lines] == ["x", "y"]  # sorted JSON lines
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert stats == {"inputs": {}, "options": {}, "counters": {"multiref/a": 3, "multiref/b": 1},
                     "configs": {"multiref": {"test": 2}}}
