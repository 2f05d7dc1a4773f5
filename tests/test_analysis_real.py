"""Real-data tier of ``multiref analyze`` (runs when MULTIREF_DATA points at ../shared/data).

- correlation on multirefeval's MTurk ratings (500 responses, 5 systems) for BLEU-1..4,
  ROUGE-L, the three embedding metrics (word2vec trained on DailyDialog train) and METEOR
  (only with WordNet under NLTK_DATA; otherwise the clear error is checked);
- refcount with the 5 references of multireftest.json;
- discrimination on DailyDialog++ dev (threshold) and test.
"""

import json
import os
import time

import pytest

from multiref.cli import main
from multiref.errors import UserError
from tests.helpers import real_data


def wordnet_available() -> bool:
    from multiref.metrics.meteor import find_wordnet

    try:
        find_wordnet()
    except UserError:
        return False
    return True


@pytest.fixture(scope="module")
def ratings():
    return str(real_data("multiref-dailydialog", "mturk_rating_processed_output.csv"))


def test_real_correlation(ratings, tmp_path, capsys):
    dialogues = str(real_data("dailydialog", "train", "dialogues_train.txt"))
    metrics = ["bleu1", "bleu2", "bleu3", "bleu4", "rouge_l", "embedding_average", "vector_extrema", "greedy_matching"]
    argv = ["analyze", "correlation", "--ratings", ratings, "--train-vectors-from", dialogues,
            "--output", str(tmp_path), "--format", "json"]
    for m in metrics:
        argv += ["--metric", m]
    start = time.perf_counter()
    assert main(argv) == 0
    elapsed = time.perf_counter() - start
    printed = json.loads(capsys.readouterr().out)
    assert list(printed) == metrics
    report = json.loads((tmp_path / "correlation.json").read_text())
    assert report["data"]["rows"] == 500 and len(report["data"]["systems"]) == 5
    # all_references already holds prevgt: 4 distinct references per response
    assert report["data"]["references_per_response"] == {"min": 4, "max": 4, "mean": 4.0}
    assert report["data"]["systems"]["human"]["mean_rating"] == pytest.approx(4.45, abs=0.01)
    for m in ("bleu1", "bleu2", "rouge_l", "greedy_matching"):
        single, multi = printed[m]["single"], printed[m]["multi"]
        # the paper's finding: more references, better response-level correlation
        assert multi["spearman"]["value"] > single["spearman"]["value"]
        assert multi["pearson"]["p"] < 0.01
    assert elapsed < 120, f"correlation took {elapsed:.0f}s"
    assert len(os.listdir(tmp_path / "plots")) == len(metrics)


def test_real_meteor_or_its_clear_error(ratings, capsys):
    code = main(["analyze", "correlation", "--ratings", ratings, "--metric", "meteor", "--bootstrap", "0",
                 "--format", "json"])
    if wordnet_available():
        assert code == 0
        printed = json.loads(capsys.readouterr().out)
        assert printed["meteor"]["multi"]["pearson"]["value"] is not None
    else:
        assert code == 1
        err = capsys.readouterr().err
        assert err.startswith("multiref: error: metric 'meteor': METEOR needs NLTK's WordNet data") and "NLTK_DATA" in err


def test_real_refcount_with_five_references(ratings, capsys):
    multiref = str(real_data("multiref-dailydialog", "multireftest.json"))
    assert main(["analyze", "refcount", "--ratings", ratings, "--multiref-references", multiref, "--metric", "bleu2",
                 "--orders", "5", "--format", "json"]) == 0
    curve = json.loads(capsys.readouterr().out)["bleu2"]
    assert [p["references"] for p in curve] == [1, 2, 3, 4, 5]
    assert curve[-1]["responses_with_k"] == 495  # 5 rows have a duplicate among their 5 references
    assert curve[-1]["pearson"] > curve[0]["pearson"]


def test_real_discrimination(tmp_path, capsys):
    dev = str(real_data("dailydialog-plusplus", "dev.json"))
    test = str(real_data("dailydialog-plusplus", "test.json"))
    start = time.perf_counter()
    assert main(["analyze", "discrimination", "--validation", dev, "--test", test, "--output", str(tmp_path),
                 "--format", "json"]) == 0
    elapsed = time.perf_counter() - start
    printed = json.loads(capsys.readouterr().out)
    report = json.loads((tmp_path / "discrimination.json").read_text())
    assert report["data"]["validation"]["contexts"] == 1028 and report["data"]["test"]["contexts"] == 1142
    for kind in ("random", "adversarial"):
        entry = printed["bleu2"][kind]
        assert entry["max"]["candidates"] == 1142 * 10
        # scoring against several positives separates better than against one
        assert entry["max"]["point_biserial"]["value"] > entry["single"]["point_biserial"]["value"] > 0
        assert entry["max"]["accuracy"] > 0.6
        assert printed["delta_bleu"][kind]["delta"]["point_biserial"]["value"] > 0
    assert elapsed < 180, f"discrimination took {elapsed:.0f}s"
