"""``multiref score`` and ``multiref metrics``: formats, option routing, per-item files,
dataset folders, and one-line ``file:line`` errors with exit status 1."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import warnings

import pytest
from nltk.translate import bleu_score as nltk_bleu

from multiref_cli import main
from tests.helpers import data_path

D = data_path("score")
LSDSCC = str(D / "lsdscc_small.json")
HYPS_LSDSCC = str(D / "hyps_lsdscc.jsonl")
REFS_FLAT = str(D / "refs_flat.jsonl")
HYPS_FLAT = str(D / "hyps_flat.jsonl")


def run(capsys, *argv):
    code = main(["score", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _flat_nltk_corpus_bleu(smoothing=None, weights=(0.25,) * 4):
    refs = [json.loads(line) for line in open(REFS_FLAT)]
    hyps = [json.loads(line) for line in open(HYPS_FLAT)]
    hyp_texts = [h.get("hypothesis") or h["hypotheses"][0] for h in hyps]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return nltk_bleu.corpus_bleu([[r.split() for r in rec["references"]] for rec in refs],
                                     [h.split() for h in hyp_texts], weights=weights, smoothing_function=smoothing)


def test_grouped_defaults_to_maxbleu_mds_pds_json(capsys):
    # lsdscc_small.json: query 1 is the paper's Figure 4 (MDS 3/4, PDS 7/8, one group id "null");
    # query 2 has two one-reference groups and one hypothesis (MDS 1/2, PDS 1/2).
    code, out, err = run(capsys, "--references", LSDSCC, "--hypotheses", HYPS_LSDSCC, "--format", "json",
                         "--progress")
    assert code == 0
    result = json.loads(out)
    assert list(result) == ["maxbleu", "mds", "pds"]
    assert result["mds"]["score"] == pytest.approx((0.75 + 0.5) / 2)
    assert result["pds"]["score"] == pytest.approx((0.875 + 0.5) / 2)
    assert result["mds"]["signature"].startswith("mds|tok:whitespace|lc:no|order:4|smooth:add1|bp:no|")
    assert set(result["maxbleu"]) == {"score", "signature"}
    assert "2 items, 9 hypotheses" in err  # progress goes to stderr, stdout stays JSON


def test_flat_defaults_to_bleu_and_matches_nltk_corpus_bleu(capsys):
    code, out, _ = run(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT, "--format", "json", "-q")
    assert code == 0
    result = json.loads(out)
    assert list(result) == ["bleu"]
    assert result["bleu"]["score"] == pytest.approx(_flat_nltk_corpus_bleu(), abs=1e-12)
    assert result["bleu"]["signature"].startswith("bleu|tok:whitespace|lc:no|agg:standard|order:4|smooth:none|bp:yes|conv:nltk|nrefs:var|")


def test_bleu_options_reach_the_metric(capsys):
    code, out, _ = run(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT, "--format", "json", "-q",
                       "--bleu-order", "2", "--bleu-smoothing", "nltk1")
    assert code == 0
    result = json.loads(out)["bleu"]
    expected = _flat_nltk_corpus_bleu(nltk_bleu.SmoothingFunction().method1, (0.5, 0.5))
    assert result["score"] == pytest.approx(expected, abs=1e-12)
    assert "|order:2|smooth:nltk1|bp:yes|" in result["signature"]


@pytest.mark.parametrize(
    "extra, fragment",
    [
        (["--bleu-weights", "0.1,0.9"], "|order:2|weights:0.1,0.9|"),
        (["--no-brevity-penalty"], "|bp:no|"),
        (["--aggregate", "max"], "|agg:max|"),
        (["--lowercase", "--tokenizer", "char"], "bleu|tok:char|lc:yes|"),
    ],
)
def test_each_flag_changes_the_signature(capsys, extra, fragment):
    code, out, _ = run(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT, "--format", "json", "-q", *extra)
    assert code == 0
    assert fragment in json.loads(out)["bleu"]["signature"]


def test_options_are_routed_per_metric(capsys):
    # --bleu-smoothing/--brevity-penalty reach the BLEU family only, --distinct-order only distinct,
    # and --aggregate mean is skipped (with a note) for mds, which only aligns by the max.
    code, out, err = run(capsys, "-r", LSDSCC, "-H", HYPS_LSDSCC, "--format", "json",
                         "-m", "bleu", "-m", "mds", "-m", "distinct", "--bleu-smoothing", "nltk1",
                         "--brevity-penalty", "--distinct-order", "1", "--aggregate", "mean")
    assert code == 0
    result = json.loads(out)
    assert "|agg:mean|order:4|smooth:nltk1|bp:yes|" in result["bleu"]["signature"]
    assert "|order:4|smooth:nltk1|bp:yes|" in result["mds"]["signature"]
    assert "|order:1|" in result["distinct"]["signature"] and "smooth" not in result["distinct"]["signature"]
    assert "note: mds does not take --aggregate mean" in err


def test_table_and_csv_formats(capsys):
    code, out, _ = run(capsys, "-r", LSDSCC, "-H", HYPS_LSDSCC, "-q")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["metric", "score", "signature"]
    assert lines[2].split()[:2] == ["mds", "0.6250"] and lines[2].split()[2].startswith("mds|")
    code, out, _ = run(capsys, "-r", LSDSCC, "-H", HYPS_LSDSCC, "-q", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["metric"] for r in rows] == ["maxbleu", "mds", "pds"]
    assert float(rows[2]["score"]) == pytest.approx(0.6875)


def test_output_and_per_item_files(capsys, tmp_path):
    out_path, items_path = tmp_path / "scores.json", tmp_path / "items.jsonl"
    code, out, _ = run(capsys, "-r", LSDSCC, "-H", HYPS_LSDSCC, "-q", "--format", "json",
                       "--output", str(out_path), "--per-item", str(items_path))
    assert code == 0 and out == ""
    assert json.loads(out_path.read_text())["pds"]["score"] == pytest.approx(0.6875)
    rows = [json.loads(line) for line in items_path.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["what is your favourite movie ?", "did you like the ending ?"]
    assert rows[0]["mds"] == 0.75 and rows[0]["pds"] == 0.875 and rows[0]["hypotheses"] == 8
    assert rows[1]["mds"] == 0.5
    csv_path = tmp_path / "items.csv"
    assert run(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT, "-q", "--per-item", str(csv_path))[0] == 0
    rows = list(csv.DictReader(csv_path.open()))
    assert [r["id"] for r in rows] == ["d1_1", "d1_2", "d2_1"] and all(0 <= float(r["bleu"]) <= 1 for r in rows)


def test_delta_bleu_reads_weights_from_the_references(capsys):
    code, out, _ = run(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT, "-q", "--format", "json", "-m", "delta_bleu", "-m", "bleu")
    result = json.loads(out)
    # d2_1's second reference has weight 0.5, so deltaBLEU differs from BLEU
    assert code == 0 and result["delta_bleu"]["score"] != result["bleu"]["score"]
    assert 0 < result["delta_bleu"]["score"] < 1


def test_partial_scores_only_covered_items(capsys):
    code, out, _ = run(capsys, "-r", REFS_FLAT, "-H", str(D / "err_missing_outputs.jsonl"), "-q", "--partial",
                       "--format", "json")
    assert code == 0 and 0 <= json.loads(out)["bleu"]["score"] <= 1


def _write_dataset(folder, with_query=True):
    import pyarrow as pa

    from multiref.output.hfdata import shard_path, write_parquet

    schema = pa.schema([("id", pa.string()), ("query", pa.string()), ("groups", pa.list_(pa.list_(pa.string()))),
                        ("group_ids", pa.list_(pa.string()))])
    rows = [{"id": "t1_a", "query": "what is your favourite movie ?",
             "groups": [["alpha beta gamma delta", "alpha beta gamma epsilon"],
                        ["one two three four", "one two three five", "two three four six", "one two six seven"],
                        ["red green blue"], ["cat dog mouse horse"]], "group_ids": ["1", "2", "3", "null"]},
            {"id": "t1_b", "query": "did you like the ending ?", "groups": [["a b c d"], ["e f g h"]],
             "group_ids": ["1", "2"]}]
    write_parquet(shard_path(str(folder), "test_grouped", "test"), rows, schema)
    flat = pa.schema([("id", pa.string()), ("references", pa.list_(pa.string()))])
    write_parquet(shard_path(str(folder), "multiref", "test"), [{"id": "0_1", "references": ["a b", "c d"]}], flat)


def test_dataset_folder_by_query_and_by_id(capsys, tmp_path):
    _write_dataset(tmp_path)
    code, out, _ = run(capsys, "-r", str(tmp_path), "--config", "test_grouped", "--split", "test",
                       "-H", HYPS_LSDSCC, "-q", "--format", "json")
    assert code == 0
    assert json.loads(out)["pds"]["score"] == pytest.approx(0.6875)
    hyps = tmp_path / "by_id.jsonl"
    hyps.write_text('{"id": "0_1", "hypothesis": "a b"}\n')
    code, out, _ = run(capsys, "-r", str(tmp_path), "--config", "multiref", "-H", str(hyps), "-q", "--format", "json")
    assert code == 0 and json.loads(out)["bleu"]["score"] == 0.0  # no 3-grams: exact BLEU-4 is 0
    code, _, err = run(capsys, "-r", str(tmp_path), "-H", str(hyps), "-q")
    assert code == 1 and "choose a config with --config (one of: multiref, test_grouped)" in err
    code, _, err = run(capsys, "-r", str(tmp_path), "--config", "multiref", "--split", "train", "-H", str(hyps))
    assert code == 1 and "no split 'train'" in err


@pytest.mark.parametrize(
    "references, hypotheses, expected",
    [
        (REFS_FLAT, "err_unknown_id.jsonl", "err_unknown_id.jsonl:2: no references for id 'nope'"),
        (REFS_FLAT, "err_duplicate_id.jsonl", "err_duplicate_id.jsonl:3: duplicate id 'd1_1' (first on line 1)"),
        (REFS_FLAT, "err_bad_json.jsonl", "err_bad_json.jsonl:2: invalid JSON"),
        (REFS_FLAT, "err_empty.jsonl", "err_empty.jsonl: file has no records"),
        (REFS_FLAT, "err_wrong_type.jsonl", "err_wrong_type.jsonl:1: 'hypotheses' must be a list of strings"),
        (REFS_FLAT, "err_missing_outputs.jsonl", "err_missing_outputs.jsonl: no outputs for 1 of 3 reference items"),
        (LSDSCC, "err_unknown_query.jsonl", "err_unknown_query.jsonl:2: no references for query 'unknown query'"),
        (REFS_FLAT, "err_unknown_query.jsonl", "err_unknown_query.jsonl:1: the references have no queries"),
        ("err_refs_duplicate.jsonl", HYPS_FLAT, "err_refs_duplicate.jsonl:3: duplicate id 'a'"),
        ("err_refs_wrong_type.jsonl", HYPS_FLAT, "err_refs_wrong_type.jsonl:1: 'references' must be a list of strings"),
        ("err_lsdscc_wrong_type.json", HYPS_FLAT, "err_lsdscc_wrong_type.json:3: group '2' must be a list of strings"),
        ("err_lsdscc_bad_json.json", HYPS_FLAT, "err_lsdscc_bad_json.json:4: invalid JSON"),
        ("does_not_exist.json", HYPS_FLAT, "references not found"),
        (REFS_FLAT, "does_not_exist.jsonl", "hypotheses file not found"),
    ],
)
def test_errors_exit_1_with_one_line(capsys, references, hypotheses, expected):
    references = references if os.path.isabs(references) else str(D / references)
    hypotheses = hypotheses if os.path.isabs(hypotheses) else str(D / hypotheses)
    code, out, err = run(capsys, "-r", references, "-H", hypotheses, "-q")
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("multiref: error: ") and expected in err


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["-m", "nosuchmetric"], "--metric nosuchmetric: unknown metric"),
        (["-m", "maxbleu"], "item 'd1_1' has no reference groups"),
        (["--config", "x"], "--config/--split only apply to a dataset folder"),
    ],
)
def test_option_errors_exit_1(capsys, extra, expected):
    code, _, err = run(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT, "-q", *extra)
    assert code == 1 and len(err.strip().splitlines()) == 1 and expected in err


MANY_WEIGHTS = ",".join(["1"] * 50_000)


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--bleu-order", "100000"], "argument --bleu-order: must be from 1 to 10, got 100000"),
        (["--bleu-order", "11"], "must be from 1 to 10, got 11"),
        (["--bleu-order", "0"], "must be from 1 to 10, got 0"),
        (["--bleu-order", "-3"], "must be from 1 to 10, got -3"),
        (["--bleu-order", "4.5"], "expected an integer from 1 to 10, got '4.5'"),
        (["--bleu-order", "9" * 5000], "expected an integer from 1 to 10"),
        (["-m", "self_bleu", "--bleu-order", "50"], "must be from 1 to 10"),
        (["--bleu-weights", MANY_WEIGHTS], "argument --bleu-weights: at most 10 weights (one per n-gram order), got 50000"),
        (["--bleu-weights", "a,b"], "argument --bleu-weights: expected numbers separated by commas, got 'a,b'"),
        (["--bleu-weights", ","], "argument --bleu-weights: no weights given"),
        (["--bleu-weights", "0.5,nan"], "non-negative finite numbers"),
        (["--bleu-weights", "0.5,-1"], "non-negative finite numbers"),
        (["--bleu-weights", "0,0"], "not all zero"),
        (["-m", "distinct", "--distinct-order", "100000000"], "argument --distinct-order: must be from 1 to 10"),
        (["-m", "distinct", "--distinct-order", "0"], "argument --distinct-order: must be from 1 to 10, got 0"),
    ],
)
def test_option_bounds_are_usage_errors(extra, expected):
    # Parse-time: exit 2, one line, before any file is read (the files here do not even exist),
    # and at once (--bleu-order 100000 used to run for minutes).
    import time

    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "multiref_cli", "score", "-r", "missing.json", "-H", "missing.jsonl", *extra],
                          capture_output=True, text=True, timeout=60)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("multiref: error: ") and expected in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr and time.perf_counter() - start < 30


def test_option_bounds_are_shown_in_the_help(capsys):
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "max n-gram order, 1 to 10 (default 4)" in text
    assert "at most 10 weights" in text and "n for distinct/distinct_per_utterance (default 2) and ead (default 1), 1 to 10" in text


@pytest.mark.parametrize(
    "name, options, expected",
    [
        ("bleu", {"order": 11}, "order must be an integer from 1 to 10, got 11"),
        ("maxbleu", {"order": 100_000}, "order must be an integer from 1 to 10, got 100000"),
        ("delta_bleu", {"weights": [1.0] * 11}, "at most 10 weights, got 11"),
        ("self_bleu", {"order": 0}, "order must be an integer from 1 to 10, got 0"),
        ("recall_bleu", {"order": 12}, "order must be an integer from 1 to 10, got 12"),
        ("distinct", {"order": 11}, "order must be an integer from 1 to 10, got 11"),
        ("distinct_per_utterance", {"order": 10**9}, "order must be an integer from 1 to 10"),
        ("rouge_l", {"beta": float("inf")}, "beta must be a positive finite number"),
        ("rouge_l", {"beta": float("nan")}, "beta must be a positive finite number"),
        ("meteor", {"beta": -1.0}, "beta must be a non-negative finite number"),
        ("meteor", {"beta": float("nan")}, "beta must be a non-negative finite number"),
    ],
)
def test_metric_options_are_bounded_in_the_library(name, options, expected):
    # the same bound for Python and `evaluate` users, who do not go through the command line
    from multiref.metrics import get_metric

    with pytest.raises(ValueError, match=expected):
        get_metric(name, **options)


@pytest.mark.parametrize(
    "header, expected",
    [
        ("2000000000 300", "claims 2000000000 vectors of 300 dimensions"),
        ("2 2000000000", "2000000000 dimensions is over the limit of 100000"),
        ("200000 3000", "claims 200000 vectors of 3000 dimensions"),
        ("0 3", "claims 0 vectors"),
        ("3 x", "header"),
    ],
)
def test_word_vector_headers_are_bounded(capsys, tmp_path, header, expected):
    # a two-line file claiming 2e9 words used to take a minute and 16 GB before failing
    import time

    vectors = tmp_path / "vec.txt"
    vectors.write_text(f"{header}\nthe 0.1 0.2 0.3\n")
    start = time.perf_counter()
    code, _, err = run(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT, "-q", "-m", "embedding_average",
                       "--vectors", str(vectors))
    assert code == 1 and len(err.strip().splitlines()) == 1 and "vec.txt" in err and expected in err, err
    assert time.perf_counter() - start < 20


def test_ties_default_to_the_public_scorer_with_its_bleu_in_every_format(capsys, tmp_path):
    def ties(refs, *extra):
        code, out, _ = run(capsys, "-r", refs, "-H", HYPS_LSDSCC, "-q", "--format", "json", *extra)
        assert code == 0
        return {name: entry["signature"].split("|ties:")[1].split("|")[0] for name, entry in json.loads(out).items()}

    assert ties(LSDSCC) == {"maxbleu": "lsdscc", "mds": "lsdscc", "pds": "lsdscc"}  # test.group.json format
    assert ties(LSDSCC, "--ties", "first") == {"maxbleu": "first", "mds": "first", "pds": "first"}
    assert ties(LSDSCC, "--brevity-penalty")["mds"] == "first"  # not the public scorer's BLEU any more
    assert ties(LSDSCC, "--bleu-weights", "0.5,0.5")["mds"] == "first"
    assert ties(LSDSCC, "--bleu-order", "2")["mds"] == "lsdscc"  # its BleuAligner takes an order
    grouped = tmp_path / "groups.jsonl"  # the same groups and ids as JSON lines: the same rule, the same numbers
    with open(LSDSCC) as fh:
        document = json.load(fh)
    grouped.write_text("".join(json.dumps({"query": q, "groups": g}) + "\n" for q, g in document.items()))
    assert ties(str(grouped))["pds"] == "lsdscc"
    assert ties(str(grouped), "--ties", "first")["pds"] == "first"
    assert ties(str(grouped), "--bleu-smoothing", "nltk1")["pds"] == "first"
    code, _, err = run(capsys, "-r", LSDSCC, "-H", HYPS_LSDSCC, "-q", "--ties", "lsdscc", "--bleu-smoothing", "nltk1")
    assert code == 1 and len(err.strip().splitlines()) == 1 and "add1 smoothing and no brevity penalty" in err


def test_degenerate_hypotheses_warning(capsys, tmp_path):
    hyps = tmp_path / "short.jsonl"
    hyps.write_text(json.dumps({"query": "what is your favourite movie ?",
                                "hypotheses": ["", "i", "alpha beta", "one two three", "   "]}) + "\n"
                    + json.dumps({"query": "did you like the ending ?", "hypothesis": "a b c d"}) + "\n")
    code, out, err = run(capsys, "-r", LSDSCC, "-H", str(hyps), "-q", "--format", "json")
    assert code == 0 and "warning" not in err  # -q: no warning
    code, out, err = run(capsys, "-r", LSDSCC, "-H", str(hyps), "--format", "json")
    # 6 hypotheses: "" and "   " have no token, "i" and "alpha beta" have 1-2
    warning = [line for line in err.splitlines() if line.startswith("multiref score: warning: ")]
    assert len(warning) == 1 and "2 of 6 hypotheses are empty and 2 have 1-2 tokens" in warning[0]
    assert "smooth:add1|bp:no" in warning[0] and "here: maxbleu, mds, pds" in warning[0]
    assert "empty hypothesis 1.0" in warning[0]
    # the warning is about a real effect: the empty hypotheses score 1.0 against every group
    assert json.loads(out)["maxbleu"]["score"] > 0.9
    _, _, err = run(capsys, "-r", LSDSCC, "-H", str(hyps), "-m", "mds", "--brevity-penalty")
    assert "hypotheses are empty" not in err  # no metric of the run uses add-one without a brevity penalty
    _, _, err = run(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT, "-q")  # 5 to 7 tokens each: no warning
    assert "warning" not in err


def test_metrics_list_and_path(capsys):
    assert main(["metrics", "list"]) == 0
    out = capsys.readouterr().out
    names = [line.split()[0] for line in out.splitlines()]
    assert {"bleu", "maxbleu", "mds", "pds", "delta_bleu"} <= set(names)
    assert main(["metrics", "path", "mds"]) == 0
    path = capsys.readouterr().out.strip()
    assert path.endswith(os.path.join("evaluate_modules", "lsdscc_metrics"))
    assert os.path.isfile(os.path.join(path, "lsdscc_metrics.py"))
    assert main(["metrics", "path", "bleu"]) == 0
    assert capsys.readouterr().out.strip().endswith("multiref_metrics")
    assert main(["metrics", "path", "nope"]) == 1
    assert "unknown evaluate module or metric 'nope'" in capsys.readouterr().err


def test_console_script_subprocess():
    exe = os.path.join(os.path.dirname(sys.executable), "multiref")
    proc = subprocess.run([exe, "score", "--references", LSDSCC, "--hypotheses", HYPS_LSDSCC, "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["mds"]["score"] == pytest.approx(0.625)
    proc = subprocess.run([exe, "score", "-r", REFS_FLAT, "-H", str(D / "err_bad_json.jsonl")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert "err_bad_json.jsonl:2: invalid JSON" in proc.stderr


# -- the loaders on their own (multiref.metrics.references) ----------------------------------------

from multiref.util.errors import UserError  # noqa: E402
from multiref.metrics.references import load_hypotheses, load_references, match_items, to_items  # noqa: E402


@pytest.mark.parametrize(
    "name, content, groups, group_ids",
    [
        ("groups_list.jsonl", '{"id": "a", "groups": [["x y"], ["z", "w"]]}\n', (("x y",), ("z", "w")), ("1", "2")),
        ("groups_object.jsonl", '{"id": "a", "groups": {"7": ["x"], "null": ["z"]}}\n', (("x",), ("z",)), ("7", "null")),
        ("group_ids.jsonl", '{"id": 5, "groups": [["x"]], "group_ids": ["g"]}\n', (("x",),), ("g",)),
        ("one_record.json", '{"id": "a", "groups": [["x"]]}', (("x",),), ("1",)),
        ("lsdscc_flat_value.json", '{"q": ["x", "y"]}', (("x", "y"),), ("1",)),
        ("records_list.json", '[{"id": "a", "groups": [["x"]]}]', (("x",),), ("1",)),
    ],
)
def test_reference_formats(tmp_path, name, content, groups, group_ids):
    path = tmp_path / name
    path.write_text(content)
    refset = load_references(str(path))
    record = refset.records[0]
    assert refset.grouped and record.groups == groups and record.group_ids == group_ids
    assert record.references == tuple(r for g in groups for r in g)


@pytest.mark.parametrize(
    "content, expected",
    [
        ('{\n "q": {"1": ["a"]},\n "q": {"1": ["b"]}\n}\n', ":3: duplicate key 'q'"),
        ('{"q": {}}', "'groups' is empty"),
        ('{"q": {"1": []}}', "group '1' is empty"),
        ('{"id": "a", "references": ["x"], "groups": [["y"]]}\n', ":1: each record needs exactly one of"),
        ('{"id": "a", "references": ["x"], "weights": [1, 2]}\n', ":1: 'weights' must be a list of 1 numbers"),
        ('{"id": true, "references": ["x"]}\n', ":1: each record needs an 'id'"),
        ('[1, 2]', "record 1: expected a JSON object"),
        ('"just a string"', "expected LSDSCC grouped JSON"),
        ('  \n', "file is empty"),
    ],
)
def test_reference_errors(tmp_path, content, expected):
    path = tmp_path / "refs.json"
    path.write_text(content)
    with pytest.raises(UserError, match=None) as info:
        load_references(str(path))
    assert expected in str(info.value) and "\n" not in str(info.value)


def test_ambiguous_query_must_match_by_id(tmp_path):
    refs = tmp_path / "refs.jsonl"
    refs.write_text('{"id": "a", "query": "hi", "references": ["x"]}\n{"id": "b", "query": "hi", "references": ["y"]}\n')
    hyps = tmp_path / "hyps.jsonl"
    hyps.write_text('{"query": "hi", "hypothesis": "x"}\n')
    with pytest.raises(UserError, match=r"hyps.jsonl:1: query 'hi' matches several reference items"):
        match_items(load_references(str(refs)), load_hypotheses(str(hyps)), str(hyps), partial=True)
    hyps.write_text('{"id": "b", "hypothesis": "x"}\n{"id": "a", "hypotheses": ["y", "z"]}\n')
    items = to_items(match_items(load_references(str(refs)), load_hypotheses(str(hyps)), str(hyps)))
    assert [(i.id, list(i.hypotheses), list(i.references)) for i in items] == [("b", ["x"], ["y"]), ("a", ["y", "z"], ["x"])]


def test_vectors_reach_the_embedding_metrics(capsys, tmp_path):
    vectors = tmp_path / "vec.txt"
    vectors.write_text("4 3\ni 1 0 0\nam 0 1 0\nfine 0 0 1\nsee 1 1 0\n")  # word2vec text format
    code, out, _ = run(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT, "-q", "--format", "json",
                       "-m", "embedding_average", "--vectors", str(vectors))
    assert code == 0
    result = json.loads(out)["embedding_average"]
    assert "|vectors:vec.txt|dim:3|" in result["signature"]
    # d1_1 'i am fine , thanks .' vs 'i am fine , thank you .' share all known words -> cosine 1;
    # d1_2 'see you tomorrow .' vs 'see you tomorrow then .' -> 1; d2_1 has no known word -> 0
    assert result["score"] == pytest.approx(2 / 3)
    code, _, err = run(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT, "-q", "-m", "embedding_average")
    assert code == 1 and "--metric embedding_average:" in err and "--vectors" in err


def test_scoring_asks_for_one_blas_thread_unless_the_user_chose(monkeypatch):
    # numpy's OpenBLAS starts its thread pool on import: score asks for one thread (start-up time),
    # and keeps the user's own setting
    from multiref_cli.score import command as score

    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    score._single_threaded_blas()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    score._single_threaded_blas()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"
