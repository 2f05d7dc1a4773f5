"""Annotation round-trip (lsdscc/annotation/roundtrip.py, docs/algorithms.md#test-set-step-6-annotation).

Data: tests/data/testset/candidates.json (hand-made test_candidates rows) and three
annotators' files under tests/data/testset/annotations/. Expected groups are worked out by
hand from the documented rules (majority relevance; two references co-grouped when more
than half of the annotators who marked both relevant put them in one group):

- query t3_qa: #1 and #2 relevant for A, B, C and grouped together by A and B (2 of 3):
  linked. #3 relevant for A and B only (2 of 3), grouped with #1/#2 by B only (1 of 2) and
  with #4 by A only (1 of 2): alone. #4 alone. #5 relevant for C only: dropped.
- query t1_qb: #1 and #2 relevant for all, grouped together by A and B: linked; #3 dropped.
- query t1_qc: nothing relevant: left out.
"""

from __future__ import annotations

import csv
import json
import shutil

import pytest

from multiref.util.errors import UserError
from tests.helpers import data_path

ANN = data_path("testset", "annotations")
FILES = [str(ANN / f"annotator_{x}.csv") for x in "abc"]

EXPECTED_ABC = {
    "what is the best batman movie": {
        "1": ["the dark knight for sure", "the dark knight obviously"],
        "2": ["batman begins"],
        "3": ["mask of the phantasm"],
    },
    "favorite horror movie": {"1": ["the thing", "the thing by carpenter"]},
}


def make_candidates(folder):
    from multiref.output import hfdata

    from lsdscc.testset.assemble import CANDIDATES_CONFIG, candidates_schema

    rows = json.loads(data_path("testset", "candidates.json").read_text())["rows"]
    hfdata.write_parquet(hfdata.shard_path(str(folder), CANDIDATES_CONFIG, "test"), rows, candidates_schema())
    hfdata.add_config(str(folder), hfdata.ConfigInfo(name=CANDIDATES_CONFIG, description="hand-made",
                                                     splits={"test": len(rows)}, features=candidates_schema()))
    return rows


@pytest.fixture()
def dataset(tmp_path):
    folder = tmp_path / "corpus"
    make_candidates(folder)
    return folder


@pytest.mark.parametrize(
    "threshold, expected",
    [
        # content words: {dark,knight,sure} vs {dark,knight,obviously}: Jaccard 2/4 = 0.5;
        # {thing} vs {thing,carpenter}: 0.5; "no" is a stop word, so "no" is alone
        (0.2, ["1", "1", "2", "3", "4", "1", "1", "2", "1", "2"]),
        (0.5, ["1", "1", "2", "3", "4", "1", "1", "2", "1", "2"]),
        (0.6, ["1", "2", "3", "4", "5", "1", "2", "3", "1", "2"]),
    ],
)
def test_export_csv_and_jsonl(dataset, tmp_path, threshold, expected):
    from lsdscc.annotation.roundtrip import COLUMNS, export

    out = tmp_path / "ann" / "round1.csv"
    assert export(str(dataset), str(out), overlap_threshold=threshold) == 10
    with open(out, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == list(COLUMNS)
    assert [r["proposed_group"] for r in rows] == expected
    assert [r["row_id"] for r in rows[:2]] == ["t3_qa#1", "t3_qa#2"]
    assert all(r["relevant"] == "" and r["group"] == "" for r in rows)
    assert rows[2]["source_pair_id"] == "t1_b1" and rows[2]["lucene_score"] == "3.5" and rows[0]["lucene_score"] == ""
    twin = [json.loads(line) for line in (tmp_path / "ann" / "round1.jsonl").read_text().splitlines()]
    assert [t["row_id"] for t in twin] == [r["row_id"] for r in rows]
    assert twin[0]["lucene_score"] is None and twin[2]["doc2vec_cosine"] == 0.95 and twin[0]["own"] is True


def test_import_majority_and_groups(dataset, tmp_path):
    from lsdscc.annotation.roundtrip import import_annotations

    out = tmp_path / "public"
    counts = import_annotations(str(dataset), FILES, str(out))
    text = (out / "test.group.json").read_text()
    assert json.loads(text) == EXPECTED_ABC
    assert text == json.dumps(EXPECTED_ABC, indent=2)  # the released file's formatting
    assert list(json.loads(text)) == list(EXPECTED_ABC)  # candidate order of the queries
    assert (out / "test.queries.txt").read_text() == "what is the best batman movie\nfavorite horror movie\n"
    assert counts == {"annotators": 3, "candidates": 10, "relevant": 6, "queries": 2, "groups": 4,
                      "queries_without_relevant": 1, "unanimous_relevance": 8}
    import pyarrow.parquet as pq

    grouped = pq.read_table(str(dataset / "test_grouped" / "test-00000-of-00001.parquet")).to_pylist()
    assert grouped[0] == {"id": "t3_qa", "query": "what is the best batman movie",
                          "groups": list(EXPECTED_ABC["what is the best batman movie"].values()),
                          "group_ids": ["1", "2", "3"]}
    meta = json.loads((dataset / "dataset_meta.json").read_text())
    assert meta["configs"]["test_grouped"]["options"]["tie"] == "irrelevant"
    assert set(meta["configs"]) == {"test_candidates", "test_grouped"}


@pytest.mark.parametrize(
    "tie, expected",
    [
        # A and C only: #3 (A yes, C no) and #5 (A no, C yes) tie
        ("irrelevant", {"what is the best batman movie": {"1": ["the dark knight for sure"],
                                                          "2": ["the dark knight obviously"],
                                                          "3": ["mask of the phantasm"]},
                        "favorite horror movie": {"1": ["the thing"], "2": ["the thing by carpenter"]}}),
        # tie -> relevant: #5 joins #1 (only C marked both, and grouped them: 1 of 1);
        # #3 joins #4 (only A marked both: same group)
        ("relevant", {"what is the best batman movie": {"1": ["the dark knight for sure", "i like turtles"],
                                                        "2": ["the dark knight obviously"],
                                                        "3": ["batman begins", "mask of the phantasm"]},
                      "favorite horror movie": {"1": ["the thing"], "2": ["the thing by carpenter"]}}),
    ],
)
def test_import_ties(dataset, tmp_path, tie, expected):
    from lsdscc.annotation.roundtrip import import_annotations

    import_annotations(str(dataset), [FILES[0], FILES[2]], str(tmp_path / "out"), tie=tie)
    assert json.loads((tmp_path / "out" / "test.group.json").read_text()) == expected


def _edited(tmp_path, line_no, new_line=None, name="bad.csv"):
    """annotator_a.csv with line ``line_no`` (1-based) replaced (or removed when None)."""
    lines = (ANN / "annotator_a.csv").read_text().splitlines()
    if new_line is None:
        del lines[line_no - 1]
    else:
        lines[line_no - 1] = new_line
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize(
    "line_no, new_line, message",
    [
        (4, "t3_zz#3,q,batman begins,1,y", r"bad\.csv:4: unknown row id 't3_zz#3'"),
        (4, "t3_qa#3,what is the best batman movie,batman begins,,y", r"bad\.csv:4: missing relevance label"),
        (4, "t3_qa#3,what is the best batman movie,batman begins,maybe,y", r"bad\.csv:4: relevance .* must be 1/0"),
        (4, "t3_qa#3,what is the best batman movie,batman begins,1,", r"bad\.csv:4: row t3_qa#3 is relevant but has no group"),
        (4, "t3_qa#3,what is the best batman movie,batman begins,1,y;x", r"bad\.csv:4: row t3_qa#3 is in two groups"),
        (4, "t3_qa#2,what is the best batman movie,the dark knight obviously,1,y",
         r"bad\.csv:4: row t3_qa#2 given twice \(first at line 3\)"),
        (4, "t3_qa#3,what is the best batman movie,batman forever,1,y", r"bad\.csv:4: reference text .* differs"),
        (4, None, r"bad\.csv: missing labels for 1 candidate row\(s\), first t3_qa#3"),
        (1, "row_id,relevant", r"bad\.csv:1: missing column\(s\) group"),
    ],
)
def test_import_errors_name_file_and_line(dataset, tmp_path, line_no, new_line, message):
    from lsdscc.annotation.roundtrip import import_annotations

    bad = _edited(tmp_path, line_no, new_line)
    with pytest.raises(UserError, match=message):
        import_annotations(str(dataset), [FILES[1], bad], str(tmp_path / "out"))
    assert not (tmp_path / "out" / "test.group.json").exists()


def test_cli_round_trip_and_scoring(dataset, tmp_path, capsys):
    """export -> annotate -> import with the CLI, then score the result with `multiref score`."""
    from multiref_cli import main

    assert main(["lsdscc", "annotate", "export", "--dataset", str(dataset), "--output", str(tmp_path / "a.csv")]) == 0
    # an annotator fills in the exported file: keep A's labels
    labels = {r["row_id"]: r for r in csv.DictReader(open(FILES[0], encoding="utf-8"))}
    with open(tmp_path / "a.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        r["relevant"], r["group"] = labels[r["row_id"]]["relevant"], labels[r["row_id"]]["group"]
    for name in ("x.csv", "y.csv"):
        with open(tmp_path / name, "w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    out = tmp_path / "public"
    assert main(["lsdscc", "annotate", "import", "--dataset", str(dataset), "--annotations",
                 str(tmp_path / "x.csv"), str(tmp_path / "y.csv"), "--output", str(out)]) == 0
    capsys.readouterr()
    assert json.loads((out / "test.group.json").read_text()) == {
        "what is the best batman movie": {"1": ["the dark knight for sure", "the dark knight obviously"],
                                          "2": ["batman begins", "mask of the phantasm"]},
        "favorite horror movie": {"1": ["the thing", "the thing by carpenter"]}}
    hyps = tmp_path / "system.jsonl"
    hyps.write_text(json.dumps({"query": "what is the best batman movie", "hypotheses": ["the dark knight for sure"]})
                    + "\n" + json.dumps({"query": "favorite horror movie", "hypotheses": ["the thing"]}) + "\n")
    # MDS: batman query covers 1 of 2 groups, horror query 1 of 1 -> mean (0.5 + 1) / 2 = 0.75
    for refs in (["--references", str(out / "test.group.json")],
                 ["--references", str(dataset), "--config", "test_grouped", "--split", "test"]):
        assert main(["score", *refs, "--hypotheses", str(hyps), "--metric", "mds", "--format", "json", "--quiet"]) == 0
        result = json.loads(capsys.readouterr().out)
        assert result["mds"]["score"] == pytest.approx(0.75)


def test_import_unknown_dataset_is_a_user_error(tmp_path):
    from lsdscc.annotation.roundtrip import import_annotations

    with pytest.raises(UserError, match="test_candidates"):
        import_annotations(str(tmp_path), FILES, str(tmp_path / "out"))
    shutil.rmtree(tmp_path / "out", ignore_errors=True)


def test_public_format_matches_the_released_file():
    """Real-data tier: the released test.group.json is reproduced byte for byte by our writer."""
    from tests.helpers import real_data

    from lsdscc.annotation.roundtrip import dumps_public

    path = real_data("lsdscc", "test.group.json")
    text = path.read_text(encoding="utf-8")
    assert dumps_public(json.loads(text)) == text


def test_import_reports_agreement_and_records_it_in_the_card(dataset, tmp_path):
    """Agreement of annotators A, B, C, worked by hand from the three files.

    Relevance (yes votes of 3 per candidate): 3 on qa#1 qa#2 qa#4 qb#1 qb#2, 2 on qa#3, 1 on qa#5,
    0 on qb#3 qc#1 qc#2. Fleiss (1971): P_i = 1 for the 8 unanimous rows, 1/3 for the other two,
    P-bar = 26/30; p_yes = 18/30, P_e = 0.52; kappa = (26/30 - 0.52) / 0.48 = 13/18.
    Krippendorff (2011), nominal: o_yy = 16, o_nn = 10, o_yn = o_ny = 2; n_yes = 18, n_no = 12,
    n = 30; alpha = 1 - 29 * 4 / (2 * 18 * 12) = 79/108.
    Groups, on the references both annotators marked relevant: A-B on qa (x x y y / a a a b) is 0,
    on qb (g g / g g) 1: mean 0.5; A-C and B-C are 0 on both queries; the mean over pairs 1/6.
    """
    from lsdscc.annotation.roundtrip import import_round

    counts, agreed = import_round(str(dataset), FILES, str(tmp_path / "out"))
    assert counts["unanimous_relevance"] == 8
    assert agreed["candidates"] == 10
    assert agreed["relevance_fleiss_kappa"] == pytest.approx(13 / 18)
    assert agreed["relevance_krippendorff_alpha"] == pytest.approx(79 / 108)
    assert agreed["groups_adjusted_rand_index"] == pytest.approx(1 / 6)
    assert agreed["pairs"][0] == {"annotators": ["annotator_a.csv", "annotator_b.csv"], "adjusted_rand_index": 0.5,
                                  "queries_compared": 2}
    card = (dataset / "README.md").read_text()
    assert "## Annotator agreement" in card and "Fleiss' kappa of relevance 0.722" in card
    assert "Krippendorff's alpha (nominal) 0.731" in card and "adjusted Rand index of the groups 0.167" in card
    meta = json.loads((dataset / "dataset_meta.json").read_text())
    assert '"relevance_fleiss_kappa": 0.7222' in meta["sections"]["Annotator agreement"]


def test_agreement_of_one_annotator_is_undefined(dataset, tmp_path, capsys):
    from multiref_cli import main

    assert main(["lsdscc", "annotate", "import", "--dataset", str(dataset), "--annotations", FILES[0],
                 "--output", str(tmp_path / "out")]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["agreement"]["relevance_fleiss_kappa"] is None and printed["agreement"]["pairs"] == []
    assert printed["annotators"] == 1 and "Fleiss' kappa of relevance n/a" in (dataset / "README.md").read_text()
    assert main(["lsdscc", "annotate", "import", "--dataset", str(dataset), "--annotations", *FILES,
                 "--output", str(tmp_path / "out")]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["agreement"]["relevance_krippendorff_alpha"] == pytest.approx(79 / 108)


def test_the_commands_defaults_are_the_librarys():
    # each default once, in lsdscc.annotation.config: the functions a Python caller uses read it
    import inspect

    from lsdscc.annotation import browse, config, roundtrip, session
    from pipelines.lsdscc.publish import publish_annotations

    assert config.ExportConfig().proposal.overlap_threshold == config.ServeConfig().proposal.overlap_threshold == 0.2
    for function in (roundtrip.export, roundtrip.export_rows, session.AnnotationSession.open, browse.browse_document):
        assert inspect.signature(function).parameters["overlap_threshold"].default == config.OVERLAP_THRESHOLD
    for function in (roundtrip.import_round, roundtrip.reconcile, publish_annotations):
        assert inspect.signature(function).parameters["tie"].default == config.ImportConfig().tie == "irrelevant"


def test_export_from_a_config_as_the_command_builds_it(dataset, tmp_path):
    from lsdscc.annotation import roundtrip
    from lsdscc.annotation.config import CandidatesInput, ExportConfig, Proposal
    from multiref.util.options import from_args

    from multiref_cli import build_parser

    argv = ["lsdscc", "annotate", "export", "--dataset", str(dataset), "--output", str(tmp_path / "a.csv"),
            "--overlap-threshold", "0.6"]
    config = from_args(ExportConfig, build_parser().parse_args(argv))
    assert config == ExportConfig(source=CandidatesInput(dataset=str(dataset)), output=str(tmp_path / "a.csv"),
                                  proposal=Proposal(overlap_threshold=0.6))
    assert roundtrip.export(config.source.dataset, config.output, config.proposal.overlap_threshold) == 10
