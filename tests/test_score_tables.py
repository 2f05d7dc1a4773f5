"""``multiref score --references`` with the files researchers hold (multiref/util/tables.py,
multiref.metrics.references): .csv/.tsv/.parquet/.json/.jsonl tables with a references list, a
column per reference or a response; any parquet folder; the column flags; --max-references
(each item's first N references, maxrefs:N in the signature); the DailyDialog ``contexts``
config as the single-reference form; one-line errors naming the file and its columns."""

from __future__ import annotations

import csv
import json

import pytest

from multiref_cli import main
from tests.helpers import data_path

D = data_path("score")
REFS_FLAT = str(D / "refs_flat.jsonl")
HYPS_FLAT = str(D / "hyps_flat.jsonl")


def _records():
    with open(REFS_FLAT, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def run(capsys, *argv):
    code = main(["score", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def result(capsys, *argv):
    code, out, err = run(capsys, *argv, "-m", "bleu", "-m", "rouge_l", "--format", "json", "-q")
    assert code == 0, err
    return json.loads(out)


def _first_only(tmp_path, n: int = 1) -> str:
    path = tmp_path / f"first{n}.jsonl"
    path.write_text("".join(json.dumps({"id": r["id"], "references": r["references"][:n]}) + "\n"
                            for r in _records()))
    return str(path)


@pytest.mark.parametrize("n", [1, 2])
def test_max_references_equals_a_file_of_the_first_n(capsys, tmp_path, n):
    limited = result(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT, "--max-references", str(n))
    by_hand = result(capsys, "-r", _first_only(tmp_path, n), "-H", HYPS_FLAT)
    everything = result(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT)
    for metric in ("bleu", "rouge_l"):
        assert limited[metric]["score"] == by_hand[metric]["score"]
        assert limited[metric]["signature"] == by_hand[metric]["signature"] + f"|maxrefs:{n}"
    if n == 1:  # the limit changes the number
        assert everything["bleu"]["score"] != limited["bleu"]["score"]


def test_max_references_keeps_groups_of_the_first_references(tmp_path):
    from multiref.metrics.references import limit_references, load_references

    path = tmp_path / "grouped.json"
    path.write_text(json.dumps({"q one": {"1": ["a b", "c d"], "2": ["e f"]}, "q two": {"7": ["g h"]}}))
    refset = limit_references(load_references(str(path)), 2)
    first = refset.by_id["q one"]
    assert first.references == ("a b", "c d") and first.groups == (("a b", "c d"),) and first.group_ids == ("1",)
    assert refset.by_id["q two"].groups == (("g h",),) and refset.max_references == 2


def _write_csv(path, header, rows, delimiter=","):
    with open(path, "w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh, delimiter=delimiter)
        out.writerow(header)
        out.writerows(rows)


def test_tables_with_a_column_per_reference_or_a_list(capsys, tmp_path):
    records = _records()
    expected = result(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT)
    wide = [[r["id"]] + r["references"] + [""] * (3 - len(r["references"])) for r in records]
    _write_csv(tmp_path / "refs.csv", ["id", "reference1", "reference2", "reference3"], wide)
    _write_csv(tmp_path / "refs.tsv", ["id", "references"], [[r["id"], json.dumps(r["references"])] for r in records],
               delimiter="\t")
    (tmp_path / "refs.json").write_text(json.dumps([{"key": r["id"], "gold": r["references"]} for r in records]))
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": [r["id"] for r in records], "references": [r["references"] for r in records]}),
                   tmp_path / "refs.parquet")
    for path, extra in ((tmp_path / "refs.csv", ()), (tmp_path / "refs.tsv", ()), (tmp_path / "refs.parquet", ()),
                        (tmp_path / "refs.json", ("--id-column", "key", "--references-column", "gold"))):
        found = result(capsys, "-r", str(path), "-H", HYPS_FLAT, *extra)
        assert {m: v["score"] for m, v in found.items()} == {m: v["score"] for m, v in expected.items()}, path
    # two columns named with the flag, one reference each: the first two references
    two = result(capsys, "-r", str(tmp_path / "refs.csv"), "-H", HYPS_FLAT, "--references-column", "reference1",
                 "--references-column", "reference2")
    assert two["bleu"]["score"] == result(capsys, "-r", _first_only(tmp_path, 2), "-H", HYPS_FLAT)["bleu"]["score"]


def test_a_response_column_is_the_single_reference_form(capsys, tmp_path):
    records = _records()
    (tmp_path / "single.jsonl").write_text("".join(json.dumps({"id": r["id"], "context": ["hi", "q"],
                                                               "response": r["references"][0]}) + "\n"
                                                   for r in records))
    single = result(capsys, "-r", str(tmp_path / "single.jsonl"), "-H", HYPS_FLAT)
    first = result(capsys, "-r", _first_only(tmp_path), "-H", HYPS_FLAT)
    assert single["bleu"]["score"] == first["bleu"]["score"]


def test_a_parquet_folder_as_the_hub_lays_it_out(capsys, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    records = _records()
    (tmp_path / "hub" / "data").mkdir(parents=True)
    pq.write_table(pa.table({"id": [r["id"] for r in records], "response": [r["references"][0] for r in records]}),
                   tmp_path / "hub" / "data" / "test-00000-of-00001.parquet")
    found = result(capsys, "-r", str(tmp_path / "hub"), "-H", HYPS_FLAT)
    assert found["bleu"]["score"] == result(capsys, "-r", _first_only(tmp_path), "-H", HYPS_FLAT)["bleu"]["score"]


@pytest.mark.parametrize("argv, message", [
    (("--references-column", "refs"), "refs.csv: no column 'refs' (--references-column, references); it has id, ref_a"),
    (("--id-column", "key"), "refs.csv: no column 'key' (--id-column, the item id); it has id, ref_a"),
    ((), "refs.csv: needs a 'references' list, a 'groups' list, one column per reference (reference1, reference2, "
         "...) or a 'response' (or name it with --references-column); it has id, ref_a"),
    (("--config", "x"), "refs.csv: --config/--split only apply to a dataset folder, not to a file"),
])
def test_a_missing_column_is_one_line_naming_the_file_and_its_columns(capsys, tmp_path, argv, message):
    _write_csv(tmp_path / "refs.csv", ["id", "ref_a"], [["d1_1", "x"]])
    code, out, err = run(capsys, "-r", str(tmp_path / "refs.csv"), "-H", HYPS_FLAT, *argv)
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith("multiref: error: ") and message in err


def test_dailydialog_contexts_config_scores_as_single_reference(capsys, tmp_path):
    """The bundled DailyDialog sample, built: `contexts` (a response per context) scores, and
    equals `multiref --max-references 1` on the items both have whose first reference is the response."""
    from multiref.metrics.references import load_references

    folder = data_path("dailydialog", "dd")
    built = tmp_path / "dd"
    assert main(["dailydialog", "build", "--output", str(built), "--dailydialog", str(folder), "-q"]) == 0
    capsys.readouterr()
    refset = load_references(str(built), "contexts", "test")
    assert refset.records and all(len(r.references) == 1 for r in refset.records)
    hyps = tmp_path / "echo.jsonl"
    hyps.write_text("".join(json.dumps({"id": r.id, "hypothesis": r.query or ""}) + "\n" for r in refset.records))
    found = result(capsys, "-r", str(built), "--config", "contexts", "-H", str(hyps))
    assert found["bleu"]["signature"].count("nrefs:1") == 1 and 0 <= found["bleu"]["score"] <= 1
