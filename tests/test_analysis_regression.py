"""Sugiyama's regression evaluator (docs/algorithms.md#7-sugiyama-regression): winning rates, similarities,
AM/WS/SVR, leave-one-out, the Python API and ``multiref analyze regression``."""

import json

import pytest
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from nltk.translate.ribes_score import sentence_ribes

from multiref.analysis import regression as reg
from multiref_cli import main
from tests.helpers import data_path

DATA = str(data_path("analysis", "regression_synthetic.jsonl"))
JUDGMENTS = str(data_path("analysis", "regression_judgments.jsonl"))


def test_winning_rates_hand_example():
    # 3 references; 0 beats 1, 0 beats 2, 2 beats 1 -> 0: 2/2, 1: 0/2, 2: 1/2
    assert reg.winning_rates(3, [(0, 1), (0, 2), (2, 1)]) == [1.0, 0.0, 0.5]
    # a tie counts half a win for each; an unjudged reference gets 0.5
    assert reg.winning_rates(4, [(0, 1, 0.5), (0, 2)]) == [0.75, 0.5, 0.0, 0.5]
    with pytest.raises(ValueError):
        reg.winning_rates(2, [(0, 0)])


def test_pairs_all_and_seeded_sample():
    assert reg.all_pairs(3) == [(0, 1), (0, 2), (1, 2)]
    sample = reg.sample_pairs(10, 12, seed=4)
    assert len(sample) == 12 == len(set(sample)) and all(i < j for i, j in sample)
    assert sample == reg.sample_pairs(10, 12, seed=4) != reg.sample_pairs(10, 12, seed=5)
    assert reg.sample_pairs(4, 100, seed=1) == reg.all_pairs(4)


def test_judge_by_quality_then_rates_are_rank_based():
    judgments = reg.judge_by_quality([0.2, 0.9, 0.5], reg.all_pairs(3))
    assert reg.winning_rates(3, judgments) == [0.0, 1.0, 0.5]


@pytest.mark.parametrize("a,b,distance", [
    ("", "", 0), ("a b c", "a b c", 0), ("a b c", "a c", 1), ("a b c d", "x b c y", 2), ("a", "", 1),
    ("kitten sitting", "sitting kitten", 2),
])
def test_levenshtein(a, b, distance):
    assert reg.levenshtein(a.split(), b.split()) == distance


def test_wer_similarities():
    wer, wer2 = reg.similarity_function("wer"), reg.similarity_function("wer2")
    # distance 2 over the longer length 4: NL = 0.5
    assert wer("a b c d".split(), "x b c y".split()) == 0.5
    assert wer2("a b c d".split(), "x b c y".split()) == 0.0
    assert wer2("a".split(), "b c".split()) == -1.0


def test_bleu_and_ribes_similarities_match_nltk():
    t, r = "the cat sat on the red mat".split(), "the cat is on the mat".split()
    want = sentence_bleu([r], t, smoothing_function=SmoothingFunction().method3)
    assert reg.similarity_function("bleu")(t, r) == pytest.approx(want, abs=1e-12)
    assert reg.similarity_function("ribes")(t, r) == pytest.approx(sentence_ribes([r], t), abs=1e-12)
    assert reg.similarity_function("ribes")(["a"], ["b"]) == 0.0
    with pytest.raises(ValueError, match="unknown similarity"):
        reg.similarity_function("cosine")


def test_am_and_ws_hand_example():
    sims = [0.1, 0.9, 0.5, 0.7, 0.2]
    scores = [1.0, 0.2, 0.6, 0.4, 0.0]
    # top 3: 0.9 (score 0.2), 0.7 (0.4), 0.5 (0.6)
    assert reg.am_score(sims, 3) == pytest.approx((0.9 + 0.7 + 0.5) / 3)
    assert reg.ws_score(sims, scores, 3) == pytest.approx((0.9 * 0.2 + 0.7 * 0.4 + 0.5 * 0.6) / 3)
    assert reg.top_m_indices([0.5, 0.5, 0.1], 1) == [0]


@pytest.mark.parametrize("similarity", ["bleu", "ribes", "wer"])
def test_regression_beats_am_where_the_answer_is_known(similarity):
    data = reg.synthetic_scored_references(inputs=6, per_method=6, seed=3)
    result = reg.leave_one_out(data, reg.RegressionConfig(similarity=similarity))
    corr = result["correlations"]
    # AM is blind to the scores and rates the look-alike bad references high
    assert corr["AM"]["sentence"]["value"] < 0.0
    assert corr["SVR"]["sentence"]["value"] > 0.8
    assert corr["SVR"]["sentence"]["value"] > corr["AM"]["sentence"]["value"] + 0.8
    assert corr["SVR"]["system"]["value"] > 0.95
    assert len(result["predictions"]["SVR"]) == len(data)


def test_sampled_pairs_still_beat_am():
    data = reg.synthetic_scored_references(inputs=6, per_method=6, seed=3, pairs=60)
    corr = reg.leave_one_out(data)["correlations"]
    assert corr["SVR"]["sentence"]["value"] > corr["AM"]["sentence"]["value"] + 0.5


def test_leave_one_out_uses_only_the_other_references():
    data = reg.synthetic_scored_references(inputs=1, per_method=3, seed=1)
    result = reg.leave_one_out(data, reg.RegressionConfig(similarity="wer"))
    tokens = [d.reference.split() for d in data]
    sim = reg.similarity_function("wer")
    others = [sim(tokens[0], tokens[j]) for j in range(1, len(data))]
    assert result["predictions"]["AM"][0] == pytest.approx(reg.am_score(others, 3))
    assert result["predictions"]["WS"][0] == pytest.approx(reg.ws_score(others, [d.score for d in data[1:]], 3))
    with pytest.raises(ValueError, match="at least 3"):
        reg.leave_one_out(data[:2])


def test_python_api_scores_new_responses():
    data = [d for d in reg.synthetic_scored_references(inputs=1, per_method=8, seed=2)]
    ev = reg.RegressionEvaluator(similarity="bleu").fit([d.reference for d in data], [d.score for d in data])
    good = ev.score("g0_0 g0_1 g0_2 g0_3 g0_4 g0_5")
    bad = ev.score("b0_0 b0_1 b0_2 b0_3 b0_4 b0_5")
    assert good > 0.6 > 0.3 > bad
    assert ev.ws("g0_0 g0_1 g0_2 g0_3 g0_4 g0_5") > ev.ws("b0_0 b0_1 b0_2 b0_3 b0_4 b0_5")
    assert len(ev.features("g0_0")) == len(data)
    with pytest.raises(ValueError, match="fit"):
        reg.RegressionEvaluator().score("x")


def test_load_with_judgments_gives_winning_rates():
    scored = reg.load_scored_references(DATA)
    judged = reg.load_scored_references(DATA, judgments=JUDGMENTS)
    assert len(scored) == len(judged) == 60
    for a, b in zip(scored, judged):
        assert b.score == pytest.approx(a.score, abs=1e-6)


def test_regression_cli(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["analyze", "regression", "--ratings", DATA, "--similarity", "bleu", "--similarity", "wer",
                 "--output", str(out), "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed) == {"bleu", "wer"} and set(printed["bleu"]) == {"AM", "WS", "SVR"}
    assert printed["wer"]["SVR"]["sentence"]["value"] > printed["wer"]["AM"]["sentence"]["value"]
    assert "SVR" in (out / "regression.md").read_text()
    for name in ("bleu", "wer"):  # the README promises PNG plots from every analyze command
        assert (out / "plots" / f"regression_{name}.png").read_bytes().startswith(b"\x89PNG")
    report = json.loads((out / "regression.json").read_text())
    assert report["data"] == {"inputs": 4, "references": 60, "methods": 3}
    # C changes the SVR numbers and nothing else
    assert main(["analyze", "regression", "--ratings", DATA, "--similarity", "wer", "--svr-c", "0.1",
                 "--format", "json"]) == 0
    low_c = json.loads(capsys.readouterr().out)
    assert low_c["wer"]["AM"] == printed["wer"]["AM"] and low_c["wer"]["SVR"] != printed["wer"]["SVR"]


def test_regression_cli_bad_score(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"input": "i", "reference": "r", "method": "m", "score": "high"}\n')
    assert main(["analyze", "regression", "--ratings", str(bad)]) == 1
    assert "bad.jsonl:1: score 'high' is not a number" in capsys.readouterr().err
