"""BLEU: parity with NLTK 3.10's bleu_score (the reference implementation,
docs/algorithms.md#8-metric-definitions), Google's compute_bleu(smooth=True) formula for ``add1``, and edge cases."""

from __future__ import annotations

import math
import random
import warnings

import pytest
from nltk.translate import bleu_score as nltk_bleu

from multiref.metrics import Item, get_metric
from multiref.metrics.bleu import (
    BLEU,
    SMOOTHINGS,
    bleu_from_stats,
    bleu_stats,
    max_ref_counts,
    ngram_counts,
    ref_table,
    sentence_bleu,
    stat_order,
    sum_stats,
)

NLTK_SMOOTHINGS = [f"nltk{i}" for i in range(8)]
VOCAB = "a b c d e f g".split()


def _random_sentence(rng, lo, hi):
    return [rng.choice(VOCAB) for _ in range(rng.randint(lo, hi))]


def _random_cases(seed, count=220):
    """Seeded (hypothesis, references) pairs: hypotheses of 0..12 tokens, 1..4 references."""
    rng = random.Random(seed)
    return [(_random_sentence(rng, 0, 12), [_random_sentence(rng, 1, 12) for _ in range(rng.randint(1, 4))])
            for _ in range(count)]


def _nltk(refs, hyp, weights, smoothing, corpus=False):
    """NLTK's value, or None where NLTK refuses (method6 asserts a non-zero trigram precision)."""
    fn = getattr(nltk_bleu.SmoothingFunction(), "method" + smoothing[-1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if corpus:
                return nltk_bleu.corpus_bleu(refs, hyp, weights=weights, smoothing_function=fn)
            return nltk_bleu.sentence_bleu(refs, hyp, weights=weights, smoothing_function=fn)
        except (AssertionError, IndexError):
            return None


@pytest.fixture
def nltk_without_bp(monkeypatch):
    # NLTK has no switch for the brevity penalty: patch its module-level function to 1.
    monkeypatch.setattr(nltk_bleu, "brevity_penalty", lambda closest_ref_len, hyp_len: 1)


@pytest.mark.parametrize("order", [1, 2, 3, 4])
@pytest.mark.parametrize("smoothing", NLTK_SMOOTHINGS)
def test_sentence_parity_with_nltk(smoothing, order):
    weights = tuple(1.0 / order for _ in range(order))
    metric = BLEU(order=order, smoothing=smoothing)
    compared = 0
    for hyp, refs in _random_cases(seed=1000 + order):
        expected = _nltk(refs, hyp, weights, smoothing)
        if expected is None:
            continue
        got = metric.tokenized_sentence_score(hyp, refs)
        assert got == pytest.approx(expected, abs=1e-9, rel=1e-9), (hyp, refs)
        compared += 1
    # NLTK's method6 refuses below order 3 and without a trigram match (see the -O test below)
    assert compared >= (100 if smoothing != "nltk6" else (0 if order < 3 else 15))


@pytest.mark.parametrize("order", [1, 2, 4])
@pytest.mark.parametrize("smoothing", NLTK_SMOOTHINGS)
def test_sentence_parity_without_brevity_penalty(smoothing, order, nltk_without_bp):
    weights = tuple(1.0 / order for _ in range(order))
    metric = BLEU(order=order, smoothing=smoothing, brevity_penalty=False)
    compared = 0
    for hyp, refs in _random_cases(seed=2000 + order):
        expected = _nltk(refs, hyp, weights, smoothing)
        if expected is None:
            continue
        assert metric.tokenized_sentence_score(hyp, refs) == pytest.approx(expected, abs=1e-9, rel=1e-9)
        compared += 1
    assert compared >= (100 if smoothing != "nltk6" else (0 if order < 3 else 15))


def _method6_without_assert():
    """NLTK's own method6 with its assert statement removed: what NLTK computes under python -O."""
    import inspect
    import textwrap

    source = textwrap.dedent(inspect.getsource(nltk_bleu.SmoothingFunction.method6))
    source = "\n".join(line for line in source.splitlines() if not line.strip().startswith("assert "))
    namespace = dict(vars(nltk_bleu))
    exec(compile(source, "nltk_method6", "exec"), namespace)
    return namespace["method6"].__get__(nltk_bleu.SmoothingFunction())


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_nltk6_where_nltk_asserts_equals_nltk_under_python_O(order):
    weights = tuple(1.0 / order for _ in range(order))
    method6 = _method6_without_assert()
    metric = BLEU(order=order, smoothing="nltk6")
    compared = 0
    for hyp, refs in _random_cases(seed=5000 + order):
        try:
            expected = nltk_bleu.sentence_bleu(refs, hyp, weights=weights, smoothing_function=method6)
        except ZeroDivisionError:
            # p_(n-2) = 0: NLTK means pi0 = 0 (as we do), but on Python < 3.12 its unnormalized
            # Fraction(0, d) != 0, so it divides by zero instead.
            continue
        assert metric.tokenized_sentence_score(hyp, refs) == pytest.approx(expected, abs=1e-9, rel=1e-9)
        compared += 1
    assert compared >= 100


@pytest.mark.parametrize("weights", [(0.1, 0.3, 0.5, 0.1), (0.5, 0.5), (0.2,) * 5, (0.0, 1.0), (0.6, 0.0, 0.4)])
@pytest.mark.parametrize("smoothing", NLTK_SMOOTHINGS)
def test_custom_weights_parity(smoothing, weights):
    metric = BLEU(weights=weights, smoothing=smoothing)
    for hyp, refs in _random_cases(seed=3000, count=60):
        expected = _nltk(refs, hyp, weights, smoothing)
        if expected is not None:
            assert metric.tokenized_sentence_score(hyp, refs) == pytest.approx(expected, abs=1e-9, rel=1e-9)


@pytest.mark.parametrize("order", [1, 2, 4])
@pytest.mark.parametrize("smoothing", NLTK_SMOOTHINGS)
def test_corpus_parity_with_nltk(smoothing, order):
    """score_items with aggregate=standard is NLTK's corpus_bleu (incl. method5/6's last-segment quirk)."""
    weights = tuple(1.0 / order for _ in range(order))
    metric = BLEU(order=order, smoothing=smoothing)
    rng = random.Random(4000 + order)
    compared = 0
    for _ in range(40):
        n_items = rng.randint(1, 6)
        refs = [[_random_sentence(rng, 1, 12) for _ in range(rng.randint(1, 3))] for _ in range(n_items)]
        hyps = [_random_sentence(rng, 0, 12) for _ in range(n_items)]
        expected = _nltk(refs, hyps, weights, smoothing, corpus=True)
        if expected is None:
            continue
        items = [Item(str(i), [" ".join(h)], [" ".join(r) for r in rs]) for i, (h, rs) in enumerate(zip(hyps, refs))]
        result = metric.score_items(items)
        assert result.score == pytest.approx(expected, abs=1e-9, rel=1e-9)
        assert len(result.per_item) == n_items
        compared += 1
    assert compared >= (20 if smoothing != "nltk6" else (0 if order < 3 else 5))


# NLTK's own docstring examples (nltk/translate/bleu_score.py, 3.10).
_REF1 = "It is a guide to action that ensures that the military will forever heed Party commands".split()
_REF2 = "It is the guiding principle which guarantees the military forces always being under the command of the Party".split()
_REF3 = "It is the practical guide for the army always to heed the directions of the party".split()
_HYP1 = "It is a guide to action which ensures that the military always obeys the commands of the party".split()
_HYP2 = "It is to insure the troops forever hearing the activity guidebook that party direct".split()


@pytest.mark.parametrize(
    "hyp, refs, options, expected",
    [
        (_HYP1, [_REF1, _REF2, _REF3], {}, 0.5045),
        (_HYP2, [_REF1, _REF2, _REF3], {"smoothing": "nltk1"}, 0.0370),
        (_HYP1, [_REF1, _REF2, _REF3], {"order": 5}, 0.3920),
        (_HYP1, [_REF1, _REF2, _REF3], {"order": 2}, 0.7453),
        (_HYP1, [_REF1], {"smoothing": "nltk2"}, 0.4452),
        (_HYP1, [_REF1], {"smoothing": "nltk5"}, 0.4905),
        (_HYP1, [_REF1], {"smoothing": "nltk6"}, 0.4135),
        (_HYP1, [_REF1], {"smoothing": "nltk7"}, 0.4905),
        (_HYP2, [_REF1, _REF2, _REF3], {}, 0.0),  # no 3-gram match, exact BLEU is 0
    ],
)
def test_nltk_docstring_examples(hyp, refs, options, expected):
    assert BLEU(**options).tokenized_sentence_score(hyp, refs) == pytest.approx(expected, abs=1e-4)


def test_add1_worked_example():
    """Hand-computed: hyp 'the cat sat on the mat' vs ref 'the cat is on the mat'.

    Matches/possible per order: 5/6, 3/5, 1/4, 0/3 -> add1 precisions 6/7, 4/6, 2/5, 1/4;
    equal lengths so BP = 1 (Google's compute_bleu(smooth=True) formula).
    """
    expected = (6 / 7 * 4 / 6 * 2 / 5 * 1 / 4) ** 0.25
    metric = BLEU(smoothing="add1")
    assert metric.sentence_score("the cat sat on the mat", ["the cat is on the mat"]) == pytest.approx(expected, rel=1e-12)
    assert BLEU(smoothing="add1", brevity_penalty=False).sentence_score(
        "the cat sat on the mat", ["the cat is on the mat"]) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "hyp, refs, bp, expected",
    [
        # shorter than the order: possible counts are 0, so p3 = p4 = (0+1)/(0+1) = 1
        ("the cat", ["the dog"], False, (2 / 3 * 1 / 2) ** 0.25),
        # with BP: c=2, closest r=2 -> BP 1
        ("the cat", ["the dog"], True, (2 / 3 * 1 / 2) ** 0.25),
        # BP from the closest reference (length 4): exp(1 - 4/2)
        ("the cat", ["the dog is here"], True, math.exp(1 - 4 / 2) * (2 / 3 * 1 / 2) ** 0.25),
        # empty hypothesis: every precision is 1/1 (Google's formula), BP 0 when on
        ("", ["the dog"], False, 1.0),
        ("", ["the dog"], True, 0.0),
    ],
)
def test_add1_golden(hyp, refs, bp, expected):
    assert BLEU(smoothing="add1", brevity_penalty=bp).sentence_score(hyp, refs) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("smoothing", ["none"] + NLTK_SMOOTHINGS)
@pytest.mark.parametrize("bp", [True, False])
def test_empty_hypothesis_is_zero_like_nltk(smoothing, bp):
    assert BLEU(smoothing=smoothing, brevity_penalty=bp).sentence_score("", ["a b c", "a"]) == 0.0
    assert _nltk([["a", "b", "c"], ["a"]], [], (0.25,) * 4, smoothing if smoothing != "none" else "nltk0") == 0


@pytest.mark.parametrize("smoothing", NLTK_SMOOTHINGS)
@pytest.mark.parametrize("hyp, refs", [("a", ["a"]), ("a", ["a b c"]), ("b", ["a b c", "c"]), ("z", ["a"]),
                                       ("a b", ["a b"]), ("a", ["b a", "a"])])
def test_one_and_two_token_hypotheses_match_nltk(smoothing, hyp, refs):
    expected = _nltk([r.split() for r in refs], hyp.split(), (0.25,) * 4, smoothing)
    if expected is None:  # method6 asserts on these in NLTK; we still give a number
        assert 0.0 <= BLEU(smoothing=smoothing).sentence_score(hyp, refs) <= 1.0
        return
    assert BLEU(smoothing=smoothing).sentence_score(hyp, refs) == pytest.approx(expected, abs=1e-12)


def test_none_is_exact_zero_where_nltk0_is_tiny():
    hyp, refs = "a b c d".split(), ["a b x d".split()]
    assert BLEU(smoothing="none").tokenized_sentence_score(hyp, refs) == 0.0
    tiny = BLEU(smoothing="nltk0").tokenized_sentence_score(hyp, refs)
    assert 0.0 < tiny < 1e-50
    assert tiny == pytest.approx(_nltk(refs, hyp, (0.25,) * 4, "nltk0"), rel=1e-12)


def test_clipping_uses_max_count_in_a_single_reference():
    # 'the' x7 vs refs with 2 and 1 'the': clipped to 2 (not 3) -> p1 = 2/7 (Papineni et al.)
    metric = BLEU(order=1, brevity_penalty=False)
    refs = ["the cat is on the mat", "there is a cat on the mat"]
    assert metric.sentence_score("the the the the the the the", refs) == pytest.approx(2 / 7)
    assert max_ref_counts([r.split() for r in refs], 1)[0][("the",)] == 2


@pytest.mark.parametrize(
    "aggregate, expected",
    [
        ("standard", 1.0),  # unigram p = 3/3 from the union of clipped counts
        ("max", 2 / 3),  # best single reference
        ("mean", (2 / 3 + 1 / 3) / 2),
    ],
)
def test_aggregates(aggregate, expected):
    metric = BLEU(order=1, brevity_penalty=False, aggregate=aggregate)
    assert metric.sentence_score("a b c", ["a b x", "c y z"]) == pytest.approx(expected)


def test_max_and_mean_score_items_average_items():
    metric = BLEU(order=1, brevity_penalty=False, aggregate="max")
    items = [Item("1", ["a b"], ["a b"]), Item("2", ["a b"], ["a x", "z z"])]
    result = metric.score_items(items)
    assert result.per_item == [1.0, 0.5]
    assert result.score == pytest.approx(0.75)


@pytest.mark.parametrize(
    "options, expected",
    [
        ({}, "bleu|tok:whitespace|lc:no|agg:standard|order:4|smooth:none|bp:yes|conv:nltk|version:1-multiref"),
        ({"order": 2, "smoothing": "nltk1", "lowercase": True},
         "bleu|tok:whitespace|lc:yes|agg:standard|order:2|smooth:nltk1|bp:yes|conv:nltk|version:1-multiref"),
        ({"weights": (0.1, 0.9), "brevity_penalty": False, "aggregate": "max", "tokenizer": "char"},
         "bleu|tok:char|lc:no|agg:max|order:2|weights:0.1,0.9|smooth:none|bp:no|conv:nltk|version:1-multiref"),
        ({"smoothing": "add1"}, "bleu|tok:whitespace|lc:no|agg:standard|order:4|smooth:add1|bp:yes|conv:nltk|version:1-multiref"),
    ],
)
def test_signature(options, expected):
    assert get_metric("bleu", **options).signature.startswith(expected)


def test_signature_records_nrefs_after_scoring():
    metric = BLEU()
    metric.score_items([Item("1", ["a"], ["a", "b"]), Item("2", ["a"], ["a", "b"])])
    assert "|nrefs:2|" in metric.signature
    metric.score_items([Item("1", ["a"], ["a", "b"]), Item("2", ["a"], ["a"])])
    assert "|nrefs:var|" in metric.signature


@pytest.mark.parametrize(
    "options",
    [{"smoothing": "nltk8"}, {"order": 0}, {"order": 2.5}, {"weights": ()}, {"weights": (0.5, -0.5)},
     {"weights": (0, 0)}, {"aggregate": "median"}, {"tokenizer": "nope"}, {"colour": "red"}],
)
def test_bad_options_raise_value_error(options):
    with pytest.raises(ValueError):
        get_metric("bleu", **options)


def test_lowercase_and_tokenizer_change_the_score():
    assert BLEU(order=1).sentence_score("The Cat", ["the cat"]) == 0.0
    assert BLEU(order=1, lowercase=True).sentence_score("The Cat", ["the cat"]) == 1.0


def test_no_references_is_an_error():
    with pytest.raises(ValueError):
        BLEU().sentence_score("a", [])
    with pytest.raises(ValueError):
        BLEU().score_items([Item("q", ["a"], [])])


def test_pure_functions_agree_with_metric():
    hyp, refs = "a b c a b".split(), ["a b c".split(), "b a b c a".split()]
    k = stat_order(4, "nltk5")
    assert k == 5
    st = bleu_stats(ngram_counts(hyp, k), len(hyp), ref_table(refs, k))
    assert st.matches[:2] == (5, 3) and st.totals[:2] == (5, 4)  # bigram 'a b' x2 clipped to 1
    value = bleu_from_stats(sum_stats([st]), (0.25,) * 4, "nltk5")
    assert value == pytest.approx(BLEU(smoothing="nltk5").tokenized_sentence_score(hyp, refs), abs=1e-15)
    assert value == pytest.approx(sentence_bleu(hyp, refs, smoothing="nltk5"), abs=1e-15)
    assert ngram_counts(["x"], 3) == ({("x",): 1}, {}, {})


def test_every_smoothing_name_gives_a_score_in_range():
    for smoothing in SMOOTHINGS:
        for hyp, refs in _random_cases(seed=7, count=30):
            value = BLEU(smoothing=smoothing).tokenized_sentence_score(hyp, refs)
            assert 0.0 <= value <= 1.0 + 1e-12


@pytest.mark.parametrize("weights", [(0.25,) * 4, (0.5, 0.0, 0.5), (1.0,)])
@pytest.mark.parametrize("bp", [True, False])
@pytest.mark.parametrize("smoothing", SMOOTHINGS)
def test_sentence_scorer_is_bit_identical_to_bleu_from_stats(smoothing, bp, weights):
    from multiref.metrics.bleu import sentence_scorer

    score = sentence_scorer(weights, smoothing, bp)
    k = stat_order(len(weights), smoothing)
    for hyp, refs in _random_cases(seed=8, count=120):
        st = bleu_stats(ngram_counts(hyp, k), len(hyp), ref_table(refs, k))
        assert score(list(st.matches), st.hyp_len, st.ref_len) == bleu_from_stats(st, weights, smoothing, bp)
