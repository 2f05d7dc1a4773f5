"""Expectation-Adjusted Distinct (``ead``, Liu et al. 2022): EAD = distinct n-grams / (V * (1 -
((V-1)/V)^C)), C the n-grams drawn, V the vocabulary size. Golden values are the formula worked by
hand (fractions in the comments); the rest: its vocabulary and signature, its lack of Distinct's
length bias, and its statistics (jackknife interval, approximate randomization only)."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from multiref.metrics import Item, get_metric
from multiref.metrics.diversity import ead_ratio, expected_distinct
from multiref.metrics.significance import compare_systems


def _items(hyps, refs=("x",)):
    return [Item(str(i), [h] if isinstance(h, str) else list(h), list(refs)) for i, h in enumerate(hyps)]


def test_hand_computed_values():
    # "a b a", V = 4: C = 3, distinct 2; expected 4 (1 - (3/4)^3) = 37/16; EAD = 32/37
    assert get_metric("ead", vocab_size=4).score_items(_items(["a b a"])).score == pytest.approx(32 / 37, abs=1e-15)
    # outputs "a b a" and "c d", references "a b c" and "b e" (V = 4: a b c e): C = 5, distinct 4
    # (a b c d); expected 4 (1 - (3/4)^5) = 781/256; EAD = 1024/781 (above 1: more types than chance)
    score = get_metric("ead").score_items([Item("q", ["a b a", "c d"], ["a b c", "b e"])])
    assert score.score == pytest.approx(1024 / 781, abs=1e-15)
    assert score.extra["vocab_size"] == 4
    # bigrams, V = 10: "a b a b" has C = 3 bigrams, 2 distinct; expected 10 (1 - (9/10)^3) = 271/100
    assert get_metric("ead", order=2, vocab_size=10).score_items(_items(["a b a b"])).score == pytest.approx(
        200 / 271, abs=1e-15)
    expected = 10 * (1 - Fraction(9, 10) ** 3)
    assert expected_distinct(10, 3) == pytest.approx(float(expected), abs=1e-15)


def test_edges():
    assert ead_ratio(0, 0, 5) == 0.0  # no n-grams at all
    assert expected_distinct(1, 7) == 1.0  # a one-word vocabulary: one type, however many draws
    assert expected_distinct(10**9, 3) == pytest.approx(3.0, rel=1e-9)  # huge V: every draw a new type
    assert get_metric("ead", order=3, vocab_size=5).score_items(_items(["a b"])).score == 0.0
    for bad in (0, -1, 2.5, True, "10"):
        with pytest.raises(ValueError, match="vocab_size"):
            get_metric("ead", vocab_size=bad)
    with pytest.raises(ValueError, match="give vocab_size"):
        get_metric("ead").score_items([Item("q", ["a b"], [])])


def test_signature_records_the_vocabulary():
    metric = get_metric("ead")
    assert "vocab" not in metric.signature  # not known before a test set sizes it
    metric.score_items([Item("q", ["a b"], ["a b c", "d"])])
    assert "|order:1|vocab:4|vsrc:refs|" in metric.signature
    assert "|order:2|vocab:99|vsrc:given|" in get_metric("ead", order=2, vocab_size=99).signature


def test_no_length_bias_where_distinct_has_one():
    """Uniform draws from 200 words: Distinct-1 of 2,000-token outputs is far below that of 20-token
    outputs of the same source; EAD stays near 1 for both."""
    rng = random.Random(3)
    words = [f"w{i}" for i in range(200)]
    short = [" ".join(rng.choice(words) for _ in range(20)) for _ in range(5)]
    long = [" ".join(rng.choice(words) for _ in range(2000)) for _ in range(5)]
    distinct = get_metric("distinct", order=1)
    ead = get_metric("ead", vocab_size=200)
    ratio_short, ratio_long = (distinct.score_items(_items(h)).score for h in (short, long))
    assert ratio_long < 0.25 * ratio_short
    for hyps in (short, long):
        assert 0.9 < ead.score_items(_items(hyps)).score < 1.1


def test_intervals_and_tests_as_corpus_distinct():
    rng = random.Random(5)
    words = [f"w{i}" for i in range(60)]
    base = _items([" ".join(rng.choice(words[:30]) for _ in range(rng.randint(1, 4))) for _ in range(40)],
                  refs=words)
    better = _items([" ".join(rng.choice(words) for _ in range(rng.randint(1, 4))) for _ in range(40)], refs=words)
    out = compare_systems(get_metric("ead"), [base, better], test="ar", n=500, seed=7, confidence=True)
    assert out[1]["score"] > out[0]["score"] and out[1]["p_value"] < 0.05
    for row in out:
        lo, hi = row["ci"]
        assert lo < row["score"] < hi
    assert "ci_method:jackknife" in out[0]["signature"] and "test:ar|n:500" in out[0]["signature"]
    with pytest.raises(ValueError, match="paired-ar"):
        compare_systems(get_metric("ead"), [base, better], test="bs")


def test_score_command(tmp_path, capsys):
    from multiref_cli import main

    refs = tmp_path / "refs.jsonl"
    refs.write_text('{"id": "1", "references": ["a b c", "b e"]}\n', encoding="utf-8")
    hyps = tmp_path / "hyps.jsonl"
    hyps.write_text('{"id": "1", "hypotheses": ["a b a", "c d"]}\n', encoding="utf-8")
    assert main(["score", "-r", str(refs), "-H", str(hyps), "-m", "ead", "--format", "json", "-q"]) == 0
    printed = capsys.readouterr().out
    assert "1.311" in printed and "vocab:4|vsrc:refs" in printed
