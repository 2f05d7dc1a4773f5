"""Statistics of ``multiref analyze``: correlations, bootstrap, point-biserial, thresholds."""

import math

import numpy as np
import pytest
from scipy import stats as sps

from multiref.analysis import stats

# Hand-worked example: x = 1..5, y = 2, 4, 5, 4, 5.
# Pearson: dx = -2..2, dy = -2, 0, 1, 0, 1; sum dx*dy = 6, sum dx^2 = 10, sum dy^2 = 6
#          -> r = 6 / sqrt(60).
# Spearman: ranks of y = 1, 2.5, 4.5, 2.5, 4.5 -> sum dx*dr = 7, sum dr^2 = 9 -> 7 / sqrt(90).
# Kendall tau-b: 10 pairs, 7 concordant, 1 discordant, 2 tied in y -> 6 / sqrt(10 * 8).
X = [1, 2, 3, 4, 5]
Y = [2, 4, 5, 4, 5]
HAND = {"pearson": 6 / math.sqrt(60), "spearman": 7 / math.sqrt(90), "kendall": 6 / math.sqrt(80)}


@pytest.mark.parametrize("kind", ["pearson", "spearman", "kendall"])
def test_correlation_matches_hand_worked_example(kind):
    assert stats.correlation(X, Y, kind)["value"] == pytest.approx(HAND[kind], abs=1e-12)


@pytest.mark.parametrize("kind,func", [("pearson", sps.pearsonr), ("spearman", sps.spearmanr), ("kendall", sps.kendalltau)])
def test_p_values_match_scipy(kind, func):
    rng = np.random.default_rng(3)
    x = rng.normal(size=40)
    y = x + rng.normal(size=40)
    ref = func(x, y)
    got = stats.correlation(list(x), list(y), kind)
    assert got["value"] == pytest.approx(ref[0], abs=1e-12)
    assert got["p"] == pytest.approx(ref[1], rel=1e-9)
    assert 0 < got["p"] < 0.05


@pytest.mark.parametrize("x,y", [([1, 1, 1], [1, 2, 3]), ([1, 2, 3], [4, 4, 4]), ([1, 2], [2, 1]), ([], [])])
def test_degenerate_inputs_give_none(x, y):
    for result in stats.correlations(x, y).values():
        assert result == {"value": None, "p": None}


def test_correlation_rejects_bad_input():
    with pytest.raises(ValueError, match="3 values against 2"):
        stats.correlation([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="unknown correlation"):
        stats.correlation(X, Y, "cosine")


def test_point_biserial_equals_scipy_pointbiserialr():
    scores = [0.9, 0.7, 0.8, 0.2, 0.4, 0.3, 0.6, 0.1]
    labels = [1, 1, 1, 0, 0, 0, 1, 0]
    ref = sps.pointbiserialr(labels, scores)
    got = stats.point_biserial(scores, labels)
    assert got["value"] == pytest.approx(ref[0], abs=1e-12)
    assert got["p"] == pytest.approx(ref[1], rel=1e-9)
    with pytest.raises(ValueError, match="0 or 1"):
        stats.point_biserial([0.1, 0.2, 0.3], [0, 1, 2])


def test_threshold_grid_is_the_dd_pp_grid():
    grid = stats.threshold_grid()
    assert len(grid) == 101 and grid[0] == 0.0 and grid[-1] == 1.0 and grid[37] == 0.37
    with pytest.raises(ValueError):
        stats.threshold_grid(0, 1, 0)


@pytest.mark.parametrize("scores,labels,expected", [
    # separable between 0.35 and 0.4: the first grid point that separates is 0.36
    ([0.1, 0.4, 0.35, 0.8], [0, 1, 0, 1], (0.36, 1.0)),
    # every score equal to a positive: t = 0 classifies all as positive (3 of 4 right)
    ([0.5, 0.5, 0.5, 0.5], [1, 1, 1, 0], (0.0, 0.75)),
    # inverted metric: all-positive (t = 0) and all-negative (t > 0.9) both get 2 of 4; the tie
    # goes to the smallest threshold; t in (0.1, 0.2] gets 1 of 4, t in (0.2, 0.8] none
    ([0.9, 0.8, 0.1, 0.2], [0, 0, 1, 1], (0.0, 0.5)),
])
def test_best_threshold(scores, labels, expected):
    t, acc = stats.best_threshold(scores, labels)
    assert t == pytest.approx(expected[0]) and acc == pytest.approx(expected[1])
    assert stats.accuracy_at(scores, labels, t) == pytest.approx(acc)


def test_accuracy_at_hand_example():
    # scores >= 0.5 are positive: right for 0.7 (1), 0.2 (0), 0.5 (1); wrong for 0.6 (0)
    assert stats.accuracy_at([0.7, 0.2, 0.5, 0.6], [1, 0, 1, 0], 0.5) == 0.75


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    y = 0.6 * x + rng.normal(size=200)
    a = stats.bootstrap_correlations(x, y, 300, seed=5)
    b = stats.bootstrap_correlations(x, y, 300, seed=5)
    c = stats.bootstrap_correlations(x, y, 300, seed=6)
    assert a == b and a != c
    for kind in stats.CORRELATIONS:
        low, high = a[kind]
        assert low < stats.correlation(x, y, kind)["value"] < high
        assert high - low < 0.4
    assert stats.bootstrap_correlations(x, y, 0, seed=5) == {}


def test_rowwise_correlations_match_scipy_with_ties():
    rng = np.random.default_rng(1)
    for n in (5, 80, 250):  # the pairwise kendall path (one block, several blocks) and the scipy path
        X = rng.integers(0, 4, size=(20, n)).astype(float)
        Y = rng.integers(0, 4, size=(20, n)).astype(float)
        got = stats.rowwise_correlations(X, Y)
        for b in range(20):
            if len(set(X[b])) > 1 and len(set(Y[b])) > 1:
                assert got["pearson"][b] == pytest.approx(sps.pearsonr(X[b], Y[b])[0], abs=1e-9)
                assert got["spearman"][b] == pytest.approx(sps.spearmanr(X[b], Y[b])[0], abs=1e-9)
                assert got["kendall"][b] == pytest.approx(sps.kendalltau(X[b], Y[b])[0], abs=1e-9)


def test_stratified_resampling_keeps_system_sizes():
    systems = ["a"] * 3 + ["b"] * 5 + ["c"] * 2
    idx, spans = stats.resample_indices(10, 50, seed=1, strata=systems)
    assert [label for label, _ in spans] == ["a", "b", "c"]
    for label, cols in spans:
        members = {i for i, s in enumerate(systems) if s == label}
        assert set(idx[:, cols].ravel()) <= members


def test_system_level_bootstrap():
    systems = [s for s in "abcde" for _ in range(20)]
    rng = np.random.default_rng(2)
    quality = {s: i for i, s in enumerate("abcde")}
    x = [quality[s] + rng.normal(scale=0.5) for s in systems]
    y = [quality[s] + rng.normal(scale=0.5) for s in systems]
    ci = stats.bootstrap_system_correlations(x, y, systems, 200, seed=3)
    assert ci["pearson"][0] > 0.8 and ci["pearson"][1] <= 1.0
    assert stats.system_means([1, 2, 3, 5], ["b", "a", "b", "a"]) == {"a": 3.5, "b": 2.0}


@pytest.mark.parametrize("n", [7, 60, 300])
def test_resampled_correlations_equal_correlating_the_resampled_rows(n):
    """stats.Resampled (refcount's bands: counts instead of rows) gives what correlating each
    resample's rows gives, ties, repeated draws and constant resamples included; scipy is the
    judge for a few resamples."""
    rng = np.random.default_rng(n)
    x = rng.integers(0, 5, size=n) / 4.0
    y = rng.integers(0, 3, size=n) + 0.5 * x
    idx = stats.resample_indices(n, 40, seed=3)[0]
    if n == 7:
        idx[0] = 2  # one row drawn n times: every correlation undefined
    counts = stats.resample_counts(idx, n)
    assert counts.sum(axis=1).tolist() == [n] * 40
    got = stats.Resampled(x, counts).correlations(stats.Resampled(y, counts))
    want = stats.rowwise_correlations(x[idx], y[idx])
    for kind in stats.CORRELATIONS:
        np.testing.assert_allclose(got[kind], want[kind], atol=1e-12, equal_nan=True)
    if n == 7:
        assert all(np.isnan(got[kind][0]) for kind in stats.CORRELATIONS)
    for b in (1, 2):
        assert got["kendall"][b] == pytest.approx(sps.kendalltau(x[idx[b]], y[idx[b]])[0], abs=1e-12)
        assert got["spearman"][b] == pytest.approx(sps.spearmanr(x[idx[b]], y[idx[b]])[0], abs=1e-12)
