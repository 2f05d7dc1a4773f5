"""MaxBLEU, MDS, PDS (docs/algorithms.md#3-lsdscc-metrics): the paper's Figure 4 worked example
(required), hand-computed values, tie-breaking, parity with a straightforward NLTK loop."""

from __future__ import annotations

import random
import warnings

import pytest
from nltk.translate import bleu_score as nltk_bleu

from multiref.metrics import Item, get_metric
from multiref.metrics.lsdscc import align_tokenized, coverage
from multiref.metrics.lsdscc_ties import EXACT_SMOOTHINGS, public_group_order, sequential_mean

# Figure 4 of the LSDSCC paper: group sizes [2, 4, 1, 1]; eight hypotheses align to groups
# 1, 1, 2, 2, 2, 4, 4, 4 (1-based) -> covered {1, 2, 4}: MDS = 3/4, PDS = (2+4+1)/8 = 7/8.
# Each group gets its own vocabulary so that the alignment is unambiguous.
FIGURE4_GROUPS = [
    ["alpha beta gamma delta", "alpha beta gamma epsilon"],
    ["one two three four", "one two three five", "two three four six", "one two six seven"],
    ["red green blue"],
    ["cat dog mouse horse"],
]
FIGURE4_HYPOTHESES = [
    "alpha beta gamma delta",
    "alpha beta epsilon",
    "one two three four",
    "two three four six",
    "one two six",
    "cat dog mouse",
    "dog mouse horse",
    "cat dog",
]
FIGURE4_ITEM = Item("figure4", FIGURE4_HYPOTHESES, groups=FIGURE4_GROUPS)


@pytest.mark.parametrize("options", [{}, {"smoothing": "nltk1", "brevity_penalty": True}, {"order": 2}])
def test_figure4_worked_example(options):
    mds = get_metric("mds", **options)
    pds = get_metric("pds", **options)
    assert [g for g, _ in mds.alignment(FIGURE4_ITEM)] == [0, 0, 1, 1, 1, 3, 3, 3]
    assert mds.score_items([FIGURE4_ITEM]).score == pytest.approx(0.75, abs=1e-15)
    assert pds.score_items([FIGURE4_ITEM]).score == pytest.approx(0.875, abs=1e-15)


@pytest.mark.parametrize(
    "alignment, sizes, expected",
    [
        ([0, 0, 1, 1, 1, 3, 3, 3], [2, 4, 1, 1], (0.75, 0.875)),  # Figure 4
        ([0], [2, 4, 1, 1], (0.25, 0.25)),
        ([2, 2], [2, 4, 1, 1], (0.25, 0.125)),
        ([0, 1, 2, 3], [2, 4, 1, 1], (1.0, 1.0)),
        ([0], [5], (1.0, 1.0)),
    ],
)
def test_coverage_table(alignment, sizes, expected):
    assert coverage(alignment, sizes) == pytest.approx(expected)


def test_maxbleu_hand_computed_add1_no_bp():
    # hyp 'a x' vs group ['a b'] and group ['a c']: add1 precisions (1+1)/(2+1), (0+1)/(1+1),
    # then 1/1 for orders 3 and 4 -> (2/3 * 1/2) ** 0.25 for both groups: a tie -> group 0.
    # hyp 'a c' vs group 2 is an exact match: p = 3/3, 2/2, 1, 1 -> 1.0.
    item = Item("q", ["a x", "a c"], groups=[["a b"], ["a c"]])
    metric = get_metric("maxbleu")
    assert metric.alignment(item) == ((0, pytest.approx((1 / 3) ** 0.25)), (1, 1.0))
    assert metric.score_items([item]).score == pytest.approx(((1 / 3) ** 0.25 + 1.0) / 2)
    assert get_metric("mds").score_items([item]).score == 1.0


def test_ties_go_to_the_first_group():
    item = Item("q", ["zzz"], groups=[["a"], ["b b"], ["c"]])
    assert [g for g, _ in get_metric("mds", smoothing="nltk1").alignment(item)] == [0]
    assert get_metric("pds").score_items([item]).score == pytest.approx(1 / 3)  # 1 of 3 references


def test_system_score_is_the_mean_over_queries():
    items = [FIGURE4_ITEM, Item("q2", ["a"], groups=[["a"], ["b"]])]
    result = get_metric("mds").score_items(items)
    assert result.per_item == [0.75, 0.5]
    assert result.score == pytest.approx(0.625)
    assert result.extra["groups"] == 6 and result.extra["hypotheses"] == 9


@pytest.mark.parametrize("name", ["maxbleu", "mds", "pds"])
def test_default_signature_records_the_lsdscc_scorer_bleu(name):
    # the one default tie rule (auto): the public scorer's with its BLEU, first with any other BLEU options
    assert get_metric(name).signature.startswith(
        f"{name}|tok:whitespace|lc:no|order:4|smooth:add1|bp:no|conv:lsdscc|ties:lsdscc|version:1-")
    assert "|bp:no|conv:lsdscc|ties:first|" in get_metric(name, ties="first").signature
    assert "|bp:yes|conv:lsdscc|ties:first|" in get_metric(name, brevity_penalty=True).signature
    assert "|ties:first|" in get_metric(name, weights=(0.5, 0.5)).signature
    assert "|order:2|smooth:nltk1|bp:yes|" in get_metric(name, order=2, smoothing="nltk1", brevity_penalty=True).signature


@pytest.mark.parametrize("smoothing, bp", [("nltk1", True), ("nltk1", False), ("nltk4", True), ("nltk0", True)])
def test_parity_with_straightforward_nltk_loop(smoothing, bp, monkeypatch):
    """The library's numbers equal NLTK sentence_bleu per (hypothesis, group), argmax, means."""
    if not bp:
        monkeypatch.setattr(nltk_bleu, "brevity_penalty", lambda closest_ref_len, hyp_len: 1)
    rng = random.Random(11)
    vocab = "a b c d e f g h".split()
    sent = lambda: " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 9)))  # noqa: E731
    items = [Item(str(q), [sent() for _ in range(rng.randint(1, 6))],
                  groups=[[sent() for _ in range(rng.randint(1, 3))] for _ in range(rng.randint(1, 4))])
             for q in range(30)]
    fn = getattr(nltk_bleu.SmoothingFunction(), "method" + smoothing[-1])
    maxbleu, mds, pds = [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for item in items:
            groups = [[r.split() for r in g] for g in item.groups]
            aligned, best = set(), []
            for h in item.hypotheses:
                values = [nltk_bleu.sentence_bleu(g, h.split(), smoothing_function=fn) for g in groups]
                k = max(range(len(values)), key=lambda i: (values[i], -i))
                aligned.add(k)
                best.append(values[k])
            maxbleu.append(sum(best) / len(best))
            mds.append(len(aligned) / len(groups))
            pds.append(sum(len(groups[k]) for k in aligned) / sum(len(g) for g in groups))
    opts = {"smoothing": smoothing, "brevity_penalty": bp}
    assert get_metric("maxbleu", **opts).score_items(items).score == pytest.approx(sum(maxbleu) / 30, abs=1e-12)
    assert get_metric("mds", **opts).score_items(items).score == pytest.approx(sum(mds) / 30, abs=1e-12)
    assert get_metric("pds", **opts).score_items(items).score == pytest.approx(sum(pds) / 30, abs=1e-12)


@pytest.mark.parametrize("use_numpy", [True, False])
def test_align_tokenized_pure_function(use_numpy):
    out = align_tokenized([["a", "b"], ["c"], []], [[["a", "b"]], [["c"]]], (0.5, 0.5), "add1", False,
                          use_numpy=use_numpy)
    assert [g for g, _ in out] == [0, 1, 0]
    assert out[0][1] == 1.0 and out[2][1] == 1.0  # empty hypothesis: add-one precisions 1/1
    # every hypothesis empty, and hypotheses shorter than the order
    assert align_tokenized([[], []], [[["a"]]], (0.25,) * 4, "nltk1", True, use_numpy=use_numpy) == [(0, 0.0)] * 2
    assert align_tokenized([["a"], ["a", "a"]], [[["a", "a"]]], (0.5, 0.5), "none", False,
                           use_numpy=use_numpy) == [(0, 0.0), (0, 1.0)]


@pytest.mark.parametrize(
    "item",
    [
        Item("q", ["a"], references=["a", "b"]),  # flat references
        Item("q", [], groups=[["a"]]),  # no hypotheses
        Item("q", ["a"], groups=[["a"], []]),  # an empty group
    ],
)
@pytest.mark.parametrize("name", ["maxbleu", "mds", "pds"])
def test_errors_name_the_item(name, item):
    with pytest.raises(ValueError, match="'q'"):
        get_metric(name).score_items([item])


def test_bad_options():
    with pytest.raises(ValueError):
        get_metric("maxbleu", smoothing="laplace")
    with pytest.raises(ValueError, match="unknown ties 'random'"):
        get_metric("mds", ties="random")
    with pytest.raises(ValueError, match="add1 smoothing and no brevity penalty"):
        get_metric("pds", ties="lsdscc", brevity_penalty=True)
    with pytest.raises(ValueError):
        get_metric("pds", aggregate="mean")


@pytest.mark.parametrize("use_numpy", [True, False])
@pytest.mark.parametrize("smoothing", ["none", "add1"] + [f"nltk{i}" for i in range(8)])
@pytest.mark.parametrize("bp", [True, False])
def test_fast_alignment_equals_pairwise_bleu(smoothing, bp, use_numpy):
    """align_tokenized's values are bit-identical to BLEU per (hypothesis, group), for every
    smoothing, with repeated n-grams on both sides and tokens unknown to the references."""
    from multiref.metrics.bleu import BLEU

    rng = random.Random(hash((smoothing, bp)) % 1000)
    vocab = "a b c d e".split()
    bleu = BLEU(smoothing=smoothing, brevity_penalty=bp)
    for _ in range(40):
        groups = [[[rng.choice(vocab) for _ in range(rng.randint(1, 9))] for _ in range(rng.randint(1, 3))]
                  for _ in range(rng.randint(1, 4))]
        hyps = [[rng.choice(vocab + ["zz", "yy"]) for _ in range(rng.randint(0, 10))] for _ in range(rng.randint(1, 9))]
        aligned = align_tokenized(hyps, groups, bleu.weights, smoothing, bp, use_numpy=use_numpy)
        for hyp, (g, value) in zip(hyps, aligned):
            values = [bleu.tokenized_sentence_score(hyp, group) for group in groups]
            assert value == values[g]
            if smoothing in EXACT_SMOOTHINGS:  # floats within 1e-9 are ordered exactly (the tests below)
                assert value >= max(values) * (1 - 1e-9)
            else:
                assert value == max(values) and g == values.index(max(values))


def test_numpy_path_in_small_blocks_gives_the_same_alignment(monkeypatch):
    """Batching (hypotheses per pass, cells per block) bounds memory without changing numbers."""
    import multiref.metrics.lsdscc as lsdscc

    rng = random.Random(3)
    vocab = "a b c d e f".split()
    groups = [[[rng.choice(vocab) for _ in range(rng.randint(1, 8))] for _ in range(3)] for _ in range(4)]
    hyps = [[rng.choice(vocab + ["q"]) for _ in range(rng.randint(0, 9))] for _ in range(50)]
    expected = align_tokenized(hyps, groups, (0.25,) * 4, "nltk1", True, use_numpy=False)
    monkeypatch.setattr(lsdscc, "_MAX_CELLS", 7)
    monkeypatch.setattr(lsdscc, "_NUMPY_BATCH", 6)
    assert align_tokenized(hyps, groups, (0.25,) * 4, "nltk1", True, use_numpy=True) == expected


# -- ties="lsdscc": the public LSDSCC scorer's behaviour on ties (multiref/metrics/lsdscc_ties.py) --------------


@pytest.mark.parametrize("ids, order", [
    (["1", "2", "3"], [0, 1, 2]),
    (["2", "1"], [1, 0]),
    (["null", "1", "2"], [1, 2, 0]),  # "null" gets len(ids) = 3: after 1 and 2
    (["1", "null", "x", "2"], [0, 3, 1, 2]),  # non-integers get 4, 5 in file order
    (["1", "7", "null"], [0, 2, 1]),  # "null" gets 3, which sorts before 7
    (["01", "1"], [0, 1]),  # equal keys keep file order
])
def test_public_group_order(ids, order):
    assert public_group_order(ids) == order


def test_group_order_decides_exact_ties():
    # hypothesis "a" (1 token) against group "2" = ["a"] and group "1" = ["a z", "a y"]: unigram matched in both,
    # add1 precisions 2/2, 1/1, 1/1, 1/1 -> BLEU 1.0 in both groups, an exact tie. File order picks "2"
    # (1 of 3 references: PDS 1/3); the public scorer sorts groups by id, picks "1" (2 of 3: PDS 2/3).
    groups, ids = [["a"], ["a z", "a y"]], ["2", "1"]
    item = Item("q", ["a"], groups=groups, group_ids=ids)
    assert get_metric("pds", ties="first").score_items([item]).score == pytest.approx(1 / 3)
    assert get_metric("pds", ties="lsdscc").score_items([item]).score == pytest.approx(2 / 3)
    assert get_metric("mds", ties="lsdscc").score_items([item]).score == 0.5
    # the alignment names groups in the item's own order: group index 1 is id "1"
    assert get_metric("mds", ties="lsdscc").alignment(item) == ((1, 1.0),)
    # without group ids, ties="lsdscc" keeps file order
    assert get_metric("pds", ties="lsdscc").score_items([Item("q", ["a"], groups=groups)]).score == pytest.approx(1 / 3)
    # "null" goes last
    item = Item("q", ["a"], groups=[["a"], ["a z", "a y"]], group_ids=["null", "1"])
    assert get_metric("pds", ties="lsdscc").score_items([item]).score == pytest.approx(2 / 3)


def test_float_noise_decides_ties_like_the_public_scorer():
    # hypothesis: 10 distinct tokens. Group 1 holds the run "a b c d": clipped matches (4, 3, 2, 1) of
    # (10, 9, 8, 7) n-grams; group 2 holds the runs "a b c", "e f g", "i": matches (7, 4, 2, 0). Add-one
    # precisions: group 1 5/11 * 4/10 * 3/9 * 2/8 = 1/66, group 2 8/11 * 5/10 * 3/9 * 1/8 = 1/66: the same BLEU,
    # (1/66) ** 0.25, in exact arithmetic. Summed exactly (math.fsum) the two floats are equal and the first
    # group wins; the public scorer sums 0 + w log p1 + ... + w log p4 left to right, which gives group 1 one
    # unit in the last place less, so group 2 wins there (computed step by step below).
    import math

    hyp = "a b c d e f g h i j"
    groups, ids = [["a b c d"], ["a b c x e f g y i", "z"]], ["1", "2"]

    def public(precisions):
        total = 0
        for p in precisions:
            total += 0.25 * math.log(p)
        return math.exp(total)

    g1, g2 = public([5 / 11, 4 / 10, 3 / 9, 2 / 8]), public([8 / 11, 5 / 10, 3 / 9, 1 / 8])
    assert g1 < g2 and math.isclose(g1, g2, rel_tol=1e-15)
    item = Item("q", [hyp], groups=groups, group_ids=ids)
    assert get_metric("pds", ties="first").score_items([item]).score == pytest.approx(1 / 3)  # group 1: 1 of 3
    lsdscc = get_metric("pds", ties="lsdscc")
    assert lsdscc.alignment(item) == ((1, g2),)
    assert lsdscc.score_items([item]).score == pytest.approx(2 / 3)
    assert get_metric("maxbleu", ties="lsdscc").score_items([item]).score == g2  # to the last digit


def test_public_means_equal_numpy():
    # the public scorer: numpy.mean of a query's MaxBLEU values (pairwise summation over 8+ values), and
    # numpy.mean(rows, axis=0) over per-query (MDS, PDS, MaxBLEU) rows (a left-to-right sum)
    import numpy as np

    rng = random.Random(5)
    values = [rng.random() / 3 for _ in range(300)]
    rows = np.array([[v, v * 2, v / 7] for v in values])
    assert sequential_mean(values) == np.mean(rows, axis=0)[0]
    hyps = [" ".join(rng.choice("abcdefgh") for _ in range(rng.randint(1, 6))) for _ in range(20)]
    groups = [["a b c", "d e"], ["f g h a"], ["b b c d"]]
    item = Item("q", hyps, groups=groups, group_ids=["1", "2", "3"])
    metric = get_metric("maxbleu", ties="lsdscc")
    assert metric.item_score(item) == np.mean([v for _, v in metric.alignment(item)])
    items = [Item(str(i), [h], groups=groups, group_ids=["1", "2", "3"]) for i, h in enumerate(hyps)]
    result = metric.score_items(items)
    assert result.score == np.mean(np.array([[x, x, x] for x in result.per_item]), axis=0)[0]


# -- ties="first": groups compared exactly (multiref.metrics.lsdscc_ties.exact_compare) -------------------------


def test_exact_tie_goes_to_the_first_group_whatever_the_floats():
    # hypothesis of 6 tokens: group 1 matches (5, 1, 0, 0), group 2 (3, 2, 0, 0); add-one precisions
    # 6/7 * 2/6 * 1/5 * 1/4 = 3/7 * 1/6 * ... = 1/70 and 4/7 * 3/6 * 1/5 * 1/4 = 1/70: equal BLEU, yet the
    # floats (fsum of the weighted logs) differ in the last bit and the later group used to win
    from multiref.metrics.bleu import sentence_scorer
    from multiref.metrics.lsdscc import align_tokenized

    score = sentence_scorer((0.25,) * 4, "add1", False)
    assert score((5, 1, 0, 0), 6, 0) < score((3, 2, 0, 0), 6, 0)
    hyp, groups = "a b c d e f", [["a b x c y d z e"], ["a b q b c"]]
    assert align_tokenized([hyp.split()], [[r.split() for r in g] for g in groups], (0.25,) * 4) == [
        (0, score((5, 1, 0, 0), 6, 0))]
    items = [Item(str(i), [hyp], groups=groups) for i in range(70)]  # 64+ items: the batch path
    for some in (items[:1], items):
        assert get_metric("pds", ties="first").score_items(some).per_item[0] == 0.5  # group 1: 1 of 2 references
        assert get_metric("mds", ties="first").test_set_alignment(some)[0][0][0] == 0


def _exact_bleu(hyp, group, weights, smoothing):
    """An oracle: BLEU as exact rationals (uniform weights: the product of the precisions, whose
    order is BLEU's), from the clipped counts of multiref.metrics.bleu."""
    from fractions import Fraction

    from multiref.metrics.bleu import bleu_stats, ngram_counts, ref_table

    stats = bleu_stats(ngram_counts(hyp, len(weights)), len(hyp), ref_table(group, len(weights)))
    if smoothing != "add1" and not stats.matches[0]:
        return Fraction(0)
    value = Fraction(1)
    for n in range(len(weights)):
        t = max(0, len(hyp) - n)
        if smoothing == "add1":
            value *= Fraction(stats.matches[n] + 1, t + 1)
        else:  # nltk1
            value *= Fraction(stats.matches[n], t or 1) if stats.matches[n] else Fraction(1, 10) / (t or 1)
    return value


@pytest.mark.parametrize("smoothing", ["add1", "nltk1"])
def test_alignment_is_the_first_exact_maximum(smoothing):
    """Random items over 4 word types (exact ties are everywhere): every hypothesis goes to the first
    group with the largest exact BLEU, in the per-item path and the batch path alike."""
    from multiref.metrics.lsdscc import align_tokenized

    rng = random.Random(7)
    words = "a b c d".split()
    items, expected = [], []
    for i in range(80):
        groups = [[" ".join(rng.choice(words) for _ in range(rng.randint(1, 7))) for _ in range(rng.randint(1, 2))]
                  for _ in range(rng.randint(2, 4))]
        hyps = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 7))) for _ in range(2)]
        items.append(Item(str(i), hyps, groups=groups))
        for h in hyps:
            values = [_exact_bleu(h.split(), [r.split() for r in g], (0.25,) * 4, smoothing) for g in groups]
            expected.append(values.index(max(values)))
    per_item = [g for item in items for g, _ in align_tokenized(
        [h.split() for h in item.hypotheses], [[r.split() for r in g] for g in item.groups], (0.25,) * 4,
        smoothing, ties="first")]
    batch = [g for aligned in get_metric("mds", ties="first", smoothing=smoothing).test_set_alignment(items)
             for g, _ in aligned]
    assert per_item == expected and batch == expected


def test_exact_compare_with_weights_and_brevity_penalty():
    from multiref.metrics.lsdscc_ties import exact_compare

    # unequal weights (logarithms to 80 digits): add1 precisions (4/4, 1/3, 1/2) against (2/4, 1/3, 1/2)
    a, b = (3, (3, 0, 0), None), (3, (1, 0, 0), None)
    assert exact_compare(a, b, (0.5, 0.25, 0.25), "add1", False) == 1
    assert exact_compare(b, a, (0.5, 0.25, 0.25), "add1", False) == -1
    assert exact_compare(a, a, (0.5, 0.25, 0.25), "add1", False) == 0
    # the brevity penalty: the same precisions against a longer closest reference lose
    assert exact_compare((4, (4, 3, 2, 1), 4), (4, (4, 3, 2, 1), 6), (0.25,) * 4, "add1", True) == 1
    # equal products in each weight class: a tie however the orders are weighted; (1, 1/3, 1) and (1, 2/3, 1/2)
    assert exact_compare((3, (3, 0, 1), None), (3, (3, 1, 0), None), (0.5, 0.25, 0.25), "none", False) == 0
    # no smoothing: a missing order is BLEU 0, below any positive value
    assert exact_compare((4, (2, 0, 0, 0), 4), (4, (1, 1, 1, 1), 4), (0.25,) * 4, "none", True) == -1
    assert exact_compare(a, b, (0.5, 0.25, 0.25), "nltk4", False) is None  # not rational: the floats decide
