"""Metric specs and scorers of ``multiref analyze`` (fast paths must equal the metrics)."""

import random

import pytest

from multiref.analysis import scoring
from multiref.analysis.scoring import MetricScorer, WeightedScorer, make_scorers, parse_metric_spec
from multiref.util.errors import UserError
from multiref.metrics import get_metric


class Overlap:
    """A hand-made metric: share of hypothesis tokens found in a reference, max over references."""

    def tokenized_sentence_score(self, hyp, refs):
        return max(sum(t in r for t in hyp) / len(hyp) for r in refs)


class PooledOverlap:
    """Its 'standard' multi-reference form: share of hypothesis tokens found in any reference."""

    def tokenized_sentence_score(self, hyp, refs):
        pool = {t for r in refs for t in r}
        return sum(t in pool for t in hyp) / len(hyp)


@pytest.mark.parametrize("text,name,options", [
    ("bleu", "bleu", {}),
    ("bleu2", "bleu", {"order": 2}),
    ("BLEU4:smoothing=nltk1", "bleu", {"order": 4, "smoothing": "nltk1"}),
    ("rouge_l:beta=1.2,aggregate=standard", "rouge_l", {"beta": 1.2, "aggregate": "standard"}),
    ("bleu:brevity_penalty=no", "bleu", {"brevity_penalty": False}),
    ("rouge-l", "rouge_l", {}),
    ("bleu:weights=0.5/0.5", "bleu", {"weights": (0.5, 0.5)}),
    ("bleu:weights=0.5,0.5,smoothing=nltk1", "bleu", {"weights": (0.5, 0.5), "smoothing": "nltk1"}),
    ("bleu:weights=1", "bleu", {"weights": (1,)}),
    ("bleu2:smoothing=nltk1,weights=0/1", "bleu", {"order": 2, "smoothing": "nltk1", "weights": (0, 1)}),
])
def test_parse_metric_spec(text, name, options):
    spec = parse_metric_spec(text)
    assert spec.name == name and spec.option_dict == options and spec.label == text


@pytest.mark.parametrize("text", ["", "bleu:order", "bleu:=2", "bleu:weights=0.5//0.5", "bleu:order=2,,x=1"])
def test_parse_metric_spec_errors(text):
    with pytest.raises(UserError):
        parse_metric_spec(text)


def test_build_metric_errors_are_user_errors():
    with pytest.raises(UserError, match="unknown metric"):
        scoring.build_metric(parse_metric_spec("nosuchmetric"))
    with pytest.raises(UserError, match="bleu2"):
        scoring.build_metric(parse_metric_spec("bleu2:colour=red"))


def test_custom_weights_spec_builds_that_bleu():
    # BLEU with weights (0.5, 0.5) is BLEU-2; (0, 1) scores bigram precision alone
    hyp, ref = "the cat sat on a mat", "the cat sat on the mat"
    two = scoring.build_metric(parse_metric_spec("bleu:weights=0.5/0.5"))
    assert two.weights == (0.5, 0.5) and "weights:0.5,0.5" in two.signature
    assert two.sentence_score(hyp, [ref]) == pytest.approx(get_metric("bleu", order=2).sentence_score(hyp, [ref]))
    bigram = scoring.build_metric(parse_metric_spec("bleu:weights=0/1,brevity_penalty=no"))
    assert bigram.sentence_score(hyp, [ref]) == pytest.approx(3 / 5)  # 3 of the 5 hypothesis bigrams match


def test_common_options_only_reach_metrics_that_accept_them():
    # bleu takes no vectors; it must not be passed to it
    metric = scoring.build_metric(parse_metric_spec("bleu2"), {"tokenizer": "whitespace", "lowercase": True,
                                                               "vectors": object()})
    assert metric.lowercase and "order:2" in metric.signature


def test_aggregations_with_a_hand_made_metric():
    scorer = MetricScorer("overlap", Overlap(), standard=PooledOverlap())
    refs = ["a b", "c d x", "e"]
    # per reference: "a b c d" has 2/4 in "a b", 2/4 in "c d x", 0/4 in "e"
    got = scorer.aggregates("a b c d", refs, ("single", "mean", "max", "standard"))
    assert got == {"single": 0.5, "mean": pytest.approx(1 / 3), "max": 0.5, "standard": 1.0}
    assert MetricScorer("o", Overlap()).aggregate("a b", refs, "standard") is None
    assert MetricScorer("o", Overlap()).multi_aggregation() == "max"
    assert scorer.multi_aggregation() == "standard"
    with pytest.raises(UserError, match="no standard"):
        MetricScorer("o", Overlap()).multi_aggregation("standard")


def _sentences(n, seed):
    rng = random.Random(seed)
    vocab = "the a cat dog sat on mat ran away home is big small red".split()
    return [" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 9))) for _ in range(n)]


@pytest.mark.parametrize("smoothing", ["none", "nltk1", "nltk3", "nltk5", "add1"])
def test_shared_bleu_statistics_equal_each_metric(smoothing):
    specs = [parse_metric_spec(f"bleu{n}:smoothing={smoothing}") for n in (1, 2, 3, 4)]
    scorers = make_scorers(specs, {"tokenizer": "whitespace"})
    assert all(s.bleu_cache is scorers[0].bleu_cache for s in scorers)
    hyps, refs = _sentences(30, 1), _sentences(30, 2)
    for scorer in scorers:
        for i, h in enumerate(hyps):
            group = refs[i:i + 3] or refs[:3]
            want_single = scorer.metric.tokenized_sentence_score(h.split(), [group[0].split()])
            want_standard = scorer.standard.tokenized_sentence_score(h.split(), [r.split() for r in group])
            assert scorer.aggregate(h, group, "single") == pytest.approx(want_single, abs=1e-12)
            assert scorer.aggregate(h, group, "standard") == pytest.approx(want_standard, abs=1e-12)


def test_fast_delta_bleu_equals_the_metric():
    metric = get_metric("delta_bleu", order=2, smoothing="nltk1")
    fast = WeightedScorer("delta_bleu", metric)
    hyps, refs = _sentences(25, 3), _sentences(40, 4)
    for i, h in enumerate(hyps):
        group = refs[i:i + 6]
        weights = [1.0, 1.0, 0.5, -1.0, -1.0, -0.3][:len(group)]
        want = metric.sentence_score(h, group, weights=weights)
        assert fast.score(h, group, weights) == pytest.approx(want, abs=1e-12)
