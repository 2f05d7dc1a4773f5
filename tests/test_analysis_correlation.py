"""``multiref analyze correlation`` and ``refcount`` on a small hand-made ratings file."""

import json
import os

import pytest
from scipy import stats as sps

from multiref.analysis import correlation, refcount
from multiref.analysis.ratings import RatingColumns, load_multiref_test, load_ratings
from multiref.analysis.scoring import MetricScorer
from multiref_cli import main
from tests.helpers import data_path

RATINGS = str(data_path("analysis", "ratings.csv"))
RATINGS_JSONL = str(data_path("analysis", "ratings.jsonl"))
MULTIREF = str(data_path("analysis", "multireftest.jsonl"))


class Overlap:
    """Hand-made metric: share of hypothesis tokens found in a reference, max over references."""

    def tokenized_sentence_score(self, hyp, refs):
        return max(sum(t in r for t in hyp) / len(hyp) for r in refs)


def test_load_ratings_unions_references_without_duplicates():
    rows, info = load_ratings(RATINGS)
    assert len(rows) == 12 and info.rows == 12
    first = rows[0]
    assert (first.system, first.id, first.rating) == ("human", "0_0", 4.8)
    # all_references = ref1 TAB prevgt TAB ref2: prevgt comes first, the repeat is merged
    assert first.references == ("how are you today ?", "i am fine thanks", "pretty good , you ?")
    assert info.duplicate_references_merged == 12 and info.empty_references_dropped == 0


def test_join_with_multiref_test_adds_the_other_references():
    join = load_multiref_test(MULTIREF)
    assert join["1_2"][2] == "almost noon" and "0_2" not in join
    rows, info = load_ratings(RATINGS, join=join)
    assert all(len(r.references) == 5 for r in rows) and info.joined_rows == 12
    assert rows[0].references[-2:] == ("not bad at all", "great , thank you")


def test_jsonl_ratings_with_other_column_names():
    columns = RatingColumns(response="hyp", rating="score", system="system", reference="ref", references="refs", id="id")
    rows, _ = load_ratings(RATINGS_JSONL, columns, exclude_systems=["random"])
    assert len(rows) == 8 and {r.system for r in rows} == {"human", "seq2seq"}
    assert rows[0].references == ("how are you today ?", "i am fine thanks", "pretty good , you ?")


def test_correlations_equal_scipy_on_hand_computed_scores():
    rows, _ = load_ratings(RATINGS)
    scorer = MetricScorer("overlap", Overlap())
    options = correlation.CorrelationOptions(bootstrap=0)
    results, scores = correlation.analyze_correlation([scorer], rows, options)
    # "i am fine , thank you" (6 tokens) against "how are you today ?": only "you" -> 1/6;
    # all references: "i am fine thanks" -> i, am, fine = 3/6; "pretty good , you ?" -> 2/6; max 3/6
    assert scores["overlap"]["single"][0] == pytest.approx(1 / 6)
    assert scores["overlap"]["multi"][0] == pytest.approx(3 / 6)
    ratings = [r.rating for r in rows]
    for setting in ("single", "multi"):
        values = scores["overlap"][setting]
        res = results["overlap"][setting]
        assert res["pearson"]["value"] == pytest.approx(sps.pearsonr(values, ratings)[0])
        assert res["spearman"]["p"] == pytest.approx(sps.spearmanr(values, ratings)[1])
        assert res["kendall"]["value"] == pytest.approx(sps.kendalltau(values, ratings)[0])
        systems = sorted({r.system for r in rows})
        sys_metric = [sum(v for v, r in zip(values, rows) if r.system == s) / 4 for s in systems]
        sys_human = [sum(r.rating for r in rows if r.system == s) / 4 for s in systems]
        assert res["system_level"]["pearson"]["value"] == pytest.approx(sps.pearsonr(sys_metric, sys_human)[0])
    assert results["overlap"]["multi"]["pearson"]["value"] > results["overlap"]["single"]["pearson"]["value"]


def test_refcount_curve_with_hand_made_metric():
    rows, _ = load_ratings(RATINGS, join=load_multiref_test(MULTIREF))
    scorer = MetricScorer("overlap", Overlap())
    curve = refcount.refcount_curve(scorer, rows, refcount.RefcountOptions(orders=4, seed=1))
    assert [p["references"] for p in curve] == [1, 2, 3, 4, 5]
    # with all 5 references every order gives the same scores: no spread
    assert curve[-1]["pearson_std"] == pytest.approx(0.0, abs=1e-12)
    full = [Overlap().tokenized_sentence_score(r.response.split(), [x.split() for x in r.references]) for r in rows]
    assert curve[-1]["pearson"] == pytest.approx(sps.pearsonr(full, [r.rating for r in rows])[0])
    again = refcount.refcount_curve(scorer, rows, refcount.RefcountOptions(orders=4, seed=1))
    assert again == curve
    assert refcount.reference_orders(rows, 2, 1) != refcount.reference_orders(rows, 2, 2)


def _run(tmp_path, *extra, name="out"):
    out = tmp_path / name
    code = main(["analyze", "correlation", "--ratings", RATINGS, "--metric", "bleu2:smoothing=nltk1", "--metric",
                 "rouge_l", "--bootstrap", "50", "--seed", "3", "--output", str(out), *extra])
    return code, out


def test_correlation_cli_writes_reports_and_is_reproducible(tmp_path, capsys):
    code, out = _run(tmp_path, "--format", "json")
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed) == {"bleu2:smoothing=nltk1", "rouge_l"}
    entry = printed["rouge_l"]["multi"]
    assert set(entry) == {"pearson", "spearman", "kendall", "system_level"}
    assert set(entry["pearson"]) == {"value", "p", "ci"} and entry["pearson"]["ci"][0] <= entry["pearson"]["ci"][1]
    report = json.loads((out / "correlation.json").read_text())
    assert report["results"]["bleu2:smoothing=nltk1"]["multi_aggregation"] == "standard"
    assert "smooth:nltk1" in report["results"]["bleu2:smoothing=nltk1"]["signature"]
    assert report["data"]["systems"]["human"] == {"responses": 4, "mean_rating": pytest.approx(4.5)}
    md = (out / "correlation.md").read_text()
    assert "## System level" in md and "plots/scatter_rouge_l.png" in md
    pngs = sorted(p.name for p in (out / "plots").iterdir())
    assert pngs == ["scatter_bleu2_smoothing_nltk1.png", "scatter_rouge_l.png"]
    _, out2 = _run(tmp_path, name="out2")
    for name in ("correlation.json", "correlation.md", "plots/scatter_rouge_l.png"):
        assert (out / name).read_bytes() == (out2 / name).read_bytes(), name
    assert b"Software" not in (out / "plots/scatter_rouge_l.png").read_bytes()


def test_correlation_defaults_are_gupta_2019(tmp_path, capsys):
    from multiref.analysis.paper_defaults import GUPTA_2019

    out = tmp_path / "defaults"
    assert main(["analyze", "correlation", "--ratings", RATINGS, "--bootstrap", "0", "--output-dir", str(out),
                 "--format", "json"]) == 0
    assert list(json.loads(capsys.readouterr().out)) == list(GUPTA_2019.metrics)
    report = json.loads((out / "correlation.json").read_text())
    assert report["options"]["paper_defaults"] == "Gupta et al. 2019"
    assert report["options"]["bleu_smoothing"] == "nltk1" and report["options"]["rouge_beta"] == 1.2
    results = report["results"]
    for name in ("bleu1", "bleu2", "bleu3", "bleu4"):
        assert "smooth:nltk1" in results[name]["signature"] and "smooth:nltk1" in results[name]["multi_signature"]
    # one ROUGE-L beta in both columns (it used to be 1 for one reference and 1.2 for all)
    assert "beta:1.2" in results["rouge_l"]["signature"] and "beta:1.2" in results["rouge_l"]["multi_signature"]
    # a spec option beats the command's default; --bleu-smoothing/--rouge-beta change every other metric
    assert main(["analyze", "correlation", "--ratings", RATINGS, "--bootstrap", "0", "--output-dir", str(out),
                 "--metric", "bleu2:smoothing=nltk3", "--metric", "bleu4", "--metric", "rouge_l",
                 "--bleu-smoothing", "none", "--rouge-beta", "1"]) == 0
    results = json.loads((out / "correlation.json").read_text())["results"]
    assert "smooth:nltk3" in results["bleu2:smoothing=nltk3"]["signature"]
    assert "smooth:none" in results["bleu4"]["signature"]
    assert "beta:1|" in results["rouge_l"]["signature"] and "beta:1|" in results["rouge_l"]["multi_signature"]


def test_correlation_cli_table_and_options_change_numbers(tmp_path, capsys):
    assert main(["analyze", "correlation", "--ratings", RATINGS, "--metric", "rouge_l", "--bootstrap", "0"]) == 0
    table = capsys.readouterr().out
    assert "response-level" in table and "system-level" in table and "rouge_l" in table
    assert main(["analyze", "correlation", "--ratings", RATINGS, "--metric", "rouge_l", "--bootstrap", "0",
                 "--multiref-references", MULTIREF, "--format", "json"]) == 0
    joined = json.loads(capsys.readouterr().out)
    assert main(["analyze", "correlation", "--ratings", RATINGS, "--metric", "rouge_l", "--bootstrap", "0",
                 "--aggregate", "mean", "--format", "json"]) == 0
    mean = json.loads(capsys.readouterr().out)
    assert main(["analyze", "correlation", "--ratings", RATINGS, "--metric", "rouge_l", "--bootstrap", "0",
                 "--format", "json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    values = {json.dumps(x["rouge_l"]["multi"]["pearson"]) for x in (joined, mean, plain)}
    assert len(values) == 3
    # the single-reference column does not depend on the joined references
    assert joined["rouge_l"]["single"] == plain["rouge_l"]["single"]


@pytest.mark.parametrize("args,message", [
    (["--rating-column", "stars"], "ratings.csv:2: no rating column 'stars'"),
    (["--ratings", "/nonexistent.csv"], "ratings file not found"),
    (["--metric", "embedding_average"], "--vectors PATH or --train-vectors-from"),
    (["--metric", "bleu:order=0"], "order must be an integer from 1 to 10, got 0"),
    (["--rouge-beta", "0"], "--rouge-beta must be positive, got 0.0"),
    (["--metric", "bleu:weights=0.5/x"], "weights must be numbers"),
])
def test_correlation_cli_errors(args, message, capsys):
    argv = ["analyze", "correlation", "--ratings", RATINGS, "--bootstrap", "0", *args]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("multiref: error:") and message in err and len(err.strip().splitlines()) == 1


def test_refcount_cli(tmp_path, capsys):
    out = tmp_path / "rc"
    assert main(["analyze", "refcount", "--ratings", RATINGS, "--multiref-references", MULTIREF, "--metric", "rouge_l",
                 "--orders", "3", "--output", str(out), "--format", "json"]) == 0
    curves = json.loads(capsys.readouterr().out)
    assert [p["references"] for p in curves["rouge_l"]] == [1, 2, 3, 4, 5]
    assert sorted(os.listdir(out / "plots")) == ["refcount_kendall.png", "refcount_pearson.png",
                                                 "refcount_spearman.png"]
    assert "| rouge_l | 5 |" in (out / "refcount.md").read_text()


@pytest.mark.parametrize("argv,message", [
    (["refcount", "--ratings", RATINGS, "--orders", "0"], "--orders must be at least 1"),
    (["correlation", "--ratings", RATINGS, "--confidence", "2"], "--confidence must be between 0 and 1"),
    (["correlation", "--ratings", RATINGS, "--bootstrap", "-1"], "--bootstrap must be 0 or more"),
    (["discrimination", "--test", str(data_path("analysis", "ddpp_test.jsonl")), "--threshold-step", "0"],
     "bad threshold grid"),
    (["regression", "--ratings", str(data_path("analysis", "regression_synthetic.jsonl")), "--top-m", "0"],
     "--top-m must be at least 1"),
    (["correlation", "--ratings", RATINGS, "--metric", "bleu2", "--metric", "bleu2"], "--metric given twice: bleu2"),
])
def test_option_errors(argv, message, capsys):
    assert main(["analyze", *argv]) == 1
    assert message in capsys.readouterr().err


def test_correlation_cli_tests_the_differences(tmp_path, capsys):
    """All references against one, and metric against metric: Williams' p from the printed
    correlations, the permutation p in (0, 1], Fisher-z intervals, the warning for 3 systems."""
    from multiref.analysis import fisher_interval, williams_test

    code, out = _run(tmp_path, "--format", "json", "--permutations", "200")
    assert code == 0
    captured = capsys.readouterr()
    assert "warning: system-level correlations rest on 3 systems (fewer than 10)" in captured.err
    printed = json.loads(captured.out)
    report = json.loads((out / "correlation.json").read_text())
    assert report["warnings"] and report["options"]["permutations"] == 200
    rows, _ = load_ratings(RATINGS)
    ratings = [r.rating for r in rows]
    bleu = printed["bleu2:smoothing=nltk1"]
    gain = bleu["multi_vs_single"]["response"]["pearson"]
    r_multi, r_single = bleu["multi"]["pearson"]["value"], bleu["single"]["pearson"]["value"]
    assert gain["difference"] == pytest.approx(r_multi - r_single) and gain["n"] == 12
    # Williams needs the correlation of the two columns with each other: from the per-row scores
    scorer_scores = correlation.score_rows(_bleu2_scorer(), rows)
    r23 = sps.pearsonr(scorer_scores["multi"], scorer_scores["single"])[0]
    t, p = williams_test(r_multi, r_single, r23, 12)
    assert (gain["williams_t"], gain["williams_p"]) == (pytest.approx(t), pytest.approx(p))
    assert 0 < gain["permutation_p"] <= 1 and bleu["multi_vs_single"]["response"]["kendall"]["williams_p"] is None
    assert bleu["multi_vs_single"]["system"]["pearson"]["n"] == 3
    # 3 systems: whole systems swap, so no permutation p is below 2 / 2^3
    assert all(e["permutation_p"] >= 0.25 for e in bleu["multi_vs_single"]["system"].values()
               if e["permutation_p"] is not None)
    assert bleu["fisher_z"]["multi"]["response"] == pytest.approx(fisher_interval(r_multi, 12))
    versus = bleu["versus"]["rouge_l"]["multi"]["response"]["spearman"]
    assert versus["difference"] == pytest.approx(bleu["multi"]["spearman"]["value"]
                                                 - printed["rouge_l"]["multi"]["spearman"]["value"])
    assert "versus" in printed["rouge_l"] and printed["rouge_l"]["versus"] == {}  # each pair once
    md = (out / "correlation.md").read_text()
    assert "## Does it differ significantly?" in md and "**Warning:** system-level" in md
    assert "| bleu2:smoothing=nltk1 | rouge_l | all refs | response |" in md
    assert ratings  # the rows the test recomputed from


def _bleu2_scorer():
    from multiref.analysis.scoring import make_scorers, parse_metric_spec

    return make_scorers([parse_metric_spec("bleu2:smoothing=nltk1")], {"tokenizer": "whitespace", "lowercase": True,
                                                                        "smoothing": "nltk1"}, None,
                        {"rouge_l": {"beta": 1.2}})[0]


def test_correlation_without_permutations(capsys):
    assert main(["analyze", "correlation", "--ratings", RATINGS, "--metric", "rouge_l", "--bootstrap", "0",
                 "--permutations", "0", "--format", "json"]) == 0
    entry = json.loads(capsys.readouterr().out)["rouge_l"]["multi_vs_single"]["response"]["pearson"]
    assert entry["permutation_p"] is None and entry["williams_p"] is not None
    assert main(["analyze", "correlation", "--ratings", RATINGS, "--permutations", "-1"]) == 1
    assert "--permutations must be 0 or more" in capsys.readouterr().err


def test_refcount_bands(tmp_path, capsys):
    out = tmp_path / "rc"
    argv = ["analyze", "refcount", "--ratings", RATINGS, "--multiref-references", MULTIREF, "--metric", "rouge_l",
            "--orders", "3", "--bootstrap", "200", "--output", str(out), "--format", "json"]
    assert main(argv) == 0
    curve = json.loads(capsys.readouterr().out)["rouge_l"]
    for point in curve:
        for kind in ("pearson", "spearman", "kendall"):
            low, high = point[f"{kind}_ci"]
            assert -1 <= low <= high <= 1
    # with all 5 references every order gives the same scores: the band is the plain bootstrap interval
    rows, _ = load_ratings(RATINGS, join=load_multiref_test(MULTIREF))
    full = correlation.score_rows(_rouge_scorer(), rows)["multi"]
    from multiref.analysis import bootstrap_correlations

    plain = bootstrap_correlations(full, [r.rating for r in rows], 200, seed=12345)
    assert curve[-1]["pearson_ci"] == pytest.approx(plain["pearson"])
    assert "bootstrap band" in (out / "refcount.md").read_text()
    assert main(argv[:-2] + ["--bootstrap", "0", "--format", "json"]) == 0
    assert "pearson_ci" not in json.loads(capsys.readouterr().out)["rouge_l"][0]


def _rouge_scorer():
    from multiref.analysis.scoring import make_scorers, parse_metric_spec

    return make_scorers([parse_metric_spec("rouge_l")], {"tokenizer": "whitespace", "lowercase": True,
                                                         "smoothing": "nltk1"}, None, {"rouge_l": {"beta": 1.2}})[0]


def test_scatter_titles_carry_the_intervals():
    from multiref.analysis.report_text import scatter_title

    result = {"pearson": {"value": 0.18, "p": 0.01, "ci": [0.094, 0.256]}, "spearman": {"value": 0.025, "p": 0.6}}
    assert scatter_title("single reference", result) == "single reference\nr 0.180 [0.094, 0.256], rho 0.025"


def test_refcount_progress_and_max_references(capsys):
    """--progress shows each curve point on stderr (-q none); --max-references 2 stops the curve at
    2 references, whose point (every order: the same two) is correlation's multi-reference column
    with --max-references 2; the report's options and signatures record it."""
    argv = ["analyze", "refcount", "--ratings", RATINGS, "--multiref-references", MULTIREF, "--metric", "bleu2",
            "--orders", "3", "--bootstrap", "50", "--format", "json"]
    assert main(argv + ["--progress"]) == 0
    full, err = capsys.readouterr()
    assert "refcount: 1 metrics x 3 orders, 50 resamples" in err and "5/5 curve points" in err
    assert main(argv + ["-q"]) == 0
    assert capsys.readouterr().err == ""
    assert main(argv + ["--max-references", "2"]) == 0
    limited = json.loads(capsys.readouterr().out)["bleu2"]
    assert [p["references"] for p in limited] == [1, 2] and limited[1]["spearman_std"] == 0
    assert main(["analyze", "correlation", "--ratings", RATINGS, "--multiref-references", MULTIREF, "--metric", "bleu2",
                 "--bootstrap", "0", "--permutations", "0", "--max-references", "2", "--format", "json", "-q"]) == 0
    multi = json.loads(capsys.readouterr().out)["bleu2"]["multi"]["spearman"]["value"]
    assert limited[1]["spearman"] == pytest.approx(multi, abs=1e-12)
    assert len(json.loads(full)["bleu2"]) == 5
    from multiref.analysis import commands
    from multiref.analysis.config import RatingsOptions, RefcountConfig

    config = RefcountConfig(ratings=RatingsOptions(ratings=RATINGS, multiref_test=MULTIREF, max_references=2),
                            metrics=RefcountConfig().metrics.__class__(metric=("bleu2",)), orders=3, bootstrap=50)
    report = commands.refcount(config).report
    assert report["options"]["max_references"] == 2 and report["signatures"]["bleu2"].endswith("|maxrefs:2")
