"""``multiref analyze discrimination`` (DailyDialog++ positives against negatives)."""

import json

import pytest
from scipy import stats as sps

from multiref.analysis import discrimination as disc
from multiref.analysis.scoring import MetricScorer
from multiref_cli import main
from multiref.util.errors import UserError
from tests.helpers import data_path

DEV = str(data_path("analysis", "ddpp_dev.jsonl"))
TEST = str(data_path("analysis", "ddpp_test.jsonl"))

CTX = disc.Context("c", positives=("p0", "p1", "p2", "p3", "p4"), adversarial=("a0", "a1", "a2", "a3", "a4"),
                   random=("r0", "r1", "r2", "r3", "r4"))


class Overlap:
    """Hand-made metric: share of hypothesis tokens found in a reference."""

    def tokenized_sentence_score(self, hyp, refs):
        return max(sum(t in r for t in hyp) / len(hyp) for r in refs)


def test_reference_sets_each_candidate_gets_four_positives():
    sets = disc.reference_sets(CTX, "random")
    assert len(sets) == 10
    assert sets[0] == ("p0", 1, ("p1", "p2", "p3", "p4"))
    assert sets[3] == ("p3", 1, ("p0", "p1", "p2", "p4"))
    # negative j leaves out positive j
    assert sets[5] == ("r0", 0, ("p1", "p2", "p3", "p4"))
    assert sets[9] == ("r4", 0, ("p0", "p1", "p2", "p3"))
    assert [s[0] for s in disc.reference_sets(CTX, "adversarial")][5:] == ["a0", "a1", "a2", "a3", "a4"]


def test_delta_sets_weights():
    sets = disc.delta_sets(CTX, "adversarial")
    cand, label, refs, weights = sets[1]
    assert (cand, label) == ("p1", 1)
    assert refs == ("p0", "p2", "p3", "p4", "a0", "a2", "a3", "a4")
    assert weights == (1.0,) * 4 + (-1.0,) * 4
    cand, label, refs, weights = sets[7]
    assert (cand, label) == ("a2", 0)
    assert refs == ("p0", "p1", "p3", "p4", "a0", "a1", "a3", "a4")
    assert weights == (1.0,) * 4 + (-1.0,) * 4


def test_load_split_counts_empty_responses():
    dev = disc.load_split(DEV, name="validation")
    assert len(dev.contexts) == 2 and dev.empty_dropped == 1
    assert len(dev.contexts[1].random) == 4 and dev.contexts[0].positives[0] == "Sure, dinner tonight sounds great."


def test_load_split_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "positive_responses": ["a", "b"]}\n')
    with pytest.raises(UserError, match=r"bad.jsonl:1: missing field\(s\) adversarial_negative_responses"):
        disc.load_split(str(bad))
    with pytest.raises(UserError, match="no dailydialog_pp/test"):
        disc.load_split(str(tmp_path))


def test_dataset_folder_layout(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(line) for line in open(TEST)]
    table = pa.Table.from_pylist([{"id": str(r["id"]), "dialogue_id": "d", "context": r["context"],
                                   "positive_responses": r["positive_responses"],
                                   "adversarial_negative_responses": r["adversarial_negative_responses"],
                                   "random_negative_responses": r["random_negative_responses"], "source": "dd"}
                                  for r in rows])
    (tmp_path / "dailydialog_pp").mkdir()
    pq.write_table(table, tmp_path / "dailydialog_pp" / "test-00000-of-00001.parquet")
    split = disc.load_split(str(tmp_path), "test")
    assert split.contexts == disc.load_split(TEST).contexts


def test_evaluate_point_biserial_and_threshold_with_hand_made_metric():
    scorer = MetricScorer("overlap", Overlap())
    test = disc.load_split(TEST)
    dev = disc.load_split(DEV)
    result = disc.analyze_discrimination([scorer], test, dev, aggregations=("single", "max", "mean"))
    scores = disc.score_split(scorer, test, "random", ("max",))["max"]
    # the first positive, scored against the other 4 positives (max over them), recomputed directly
    refs = test.contexts[0].positives[1:]
    want = max(Overlap().tokenized_sentence_score(test.contexts[0].positives[0].split(), [r.split()]) for r in refs)
    assert scores["scores"][0] == pytest.approx(want)
    entry = result.results["overlap"]["random"]["max"]
    assert entry["point_biserial"]["value"] == pytest.approx(sps.pearsonr(scores["labels"], scores["scores"])[0])
    assert entry["threshold_chosen_on"] == "validation"
    val = disc.score_split(scorer, dev, "random", ("max",))["max"]
    best = max(range(101), key=lambda i: (sum((s >= i / 100) == bool(y) for s, y in zip(val["scores"], val["labels"])), -i))
    assert entry["threshold"] == pytest.approx(best / 100)
    acc = sum((s >= entry["threshold"]) == bool(y) for s, y in zip(scores["scores"], scores["labels"])) / 20
    assert entry["accuracy"] == pytest.approx(acc)
    assert entry["candidates"] == 20 and entry["mean_positive"] > entry["mean_negative"]


def test_discrimination_cli(tmp_path, capsys):
    out = tmp_path / "d"
    argv = ["analyze", "discrimination", "--validation", DEV, "--test", TEST, "--metric", "bleu2:smoothing=nltk1",
            "--metric", "rouge_l", "--metric", "delta_bleu:order=2,smoothing=nltk1", "--output", str(out)]
    assert main(argv + ["--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed["rouge_l"]) == {"random", "adversarial"}
    assert set(printed["rouge_l"]["random"]) == {"single", "mean", "max", "standard"}
    assert set(printed["delta_bleu:order=2,smoothing=nltk1"]["adversarial"]) == {"delta"}
    entry = printed["bleu2:smoothing=nltk1"]["adversarial"]["standard"]
    assert 0 <= entry["threshold"] <= 1 and entry["candidates"] == 20
    report = json.loads((out / "discrimination.json").read_text())
    assert report["data"]["validation"]["contexts"] == 2 and report["data"]["validation"]["empty_responses_dropped"] == 1
    assert (out / "plots" / "box_rouge_l.png").exists()
    first = (out / "discrimination.json").read_bytes()
    assert main(argv) == 0
    assert "point-biserial" in capsys.readouterr().out
    assert (out / "discrimination.json").read_bytes() == first


def test_discrimination_defaults_are_sai_2020(tmp_path, capsys):
    from multiref.analysis.paper_defaults import SAI_2020

    out = tmp_path / "defaults"
    assert main(["analyze", "discrimination", "--validation", DEV, "--test", TEST, "--output-dir", str(out),
                 "--format", "json"]) == 0
    assert list(json.loads(capsys.readouterr().out)) == [m for m in SAI_2020.metrics]
    report = json.loads((out / "discrimination.json").read_text())
    assert report["options"]["paper_defaults"] == "Sai et al. 2020"
    assert report["options"]["tokenizer"] == "nltk" and report["options"]["lowercase"] is True
    assert "beta:1.2" in report["signatures"]["rouge_l"]  # one beta for single/mean/max and standard alike
    for name in ("bleu1", "bleu4"):
        assert "smooth:none" in report["signatures"][name]


def test_discrimination_cli_without_validation_says_so(capsys):
    assert main(["analyze", "discrimination", "--test", TEST, "--metric", "rouge_l", "--aggregate", "max",
                 "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["rouge_l"]["random"]["max"]["threshold_chosen_on"] == "test"
    assert set(printed["rouge_l"]["random"]) == {"max"}


def test_discrimination_intervals(tmp_path, capsys):
    from multiref.analysis import fisher_interval

    out = tmp_path / "d"
    assert main(["analyze", "discrimination", "--test", TEST, "--metric", "rouge_l", "--aggregate", "max",
                 "--confidence", "0.9", "--output", str(out), "--format", "json"]) == 0
    entry = json.loads(capsys.readouterr().out)["rouge_l"]["random"]["max"]
    # Wilson (1927) by hand: k right of n, z = 1.645 (90%)
    n, k, z = entry["candidates"], round(entry["accuracy"] * entry["candidates"]), 1.6448536269514722
    p = k / n
    centre, half = p + z * z / (2 * n), z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
    assert entry["accuracy_ci"] == pytest.approx([(centre - half) / (1 + z * z / n), min(1.0, (centre + half) / (1 + z * z / n))])
    assert entry["accuracy_ci"][0] <= entry["accuracy"] <= entry["accuracy_ci"][1]
    assert entry["point_biserial_ci"] == pytest.approx(fisher_interval(entry["point_biserial"]["value"], n, 0.9))
    md = (out / "discrimination.md").read_text()
    assert "90% intervals in brackets" in md and f"[{entry['accuracy_ci'][0]:.3f}, " in md
    assert main(["analyze", "discrimination", "--test", TEST, "--confidence", "1.5"]) == 1
    assert "--confidence must be between 0 and 1" in capsys.readouterr().err
