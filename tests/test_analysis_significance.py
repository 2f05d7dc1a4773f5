"""Intervals and tests for correlations (multiref.analysis.stats): Williams' test, Fisher-z and
bootstrap intervals (coverage on simulated data), the paired permutation test."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from multiref.analysis import stats
from multiref.analysis import williams_test


def test_williams_matches_the_psych_r_test_example():
    # R, psych::r.test documentation example: r.test(n=103, r12=.4, r13=.5, r23=.1)
    # prints "t value -0.89 with probability < 0.37"
    t, p = williams_test(0.4, 0.5, 0.1, 103)
    assert round(t, 2) == -0.89 and round(p, 2) == 0.37
    # the other order negates t and keeps p
    t2, p2 = williams_test(0.5, 0.4, 0.1, 103)
    assert t2 == pytest.approx(-t) and p2 == pytest.approx(p)


def _williams_closed_form(x1, x2, x3):
    """Steiger (1980) eq. 7 written out independently: the determinant of the 3x3 correlation
    matrix from numpy, the t distribution's two-sided p from its CDF."""
    R = np.corrcoef(np.vstack([x1, x2, x3]))
    n = len(x1)
    r12, r13, r23 = R[0, 1], R[0, 2], R[1, 2]
    det = np.linalg.det(R)
    rbar = (r12 + r13) / 2
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(2 * (n - 1) / (n - 3) * det + rbar**2 * (1 - r23) ** 3)
    return (r12, r13, r23), t, 2 * (1 - sps.t.cdf(abs(t), n - 3))


@pytest.mark.parametrize("seed", range(8))
def test_williams_equals_the_closed_form_on_random_data(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 300))
    human = rng.normal(size=n)
    a = human * rng.uniform(0, 2) + rng.normal(size=n)
    b = human * rng.uniform(0, 2) + 0.5 * a + rng.normal(size=n)
    rs, t_ref, p_ref = _williams_closed_form(human, a, b)
    t, p = williams_test(*rs, n)
    assert t == pytest.approx(t_ref, rel=1e-9) and p == pytest.approx(p_ref, rel=1e-6, abs=1e-12)


def test_williams_size_under_the_null():
    # two metrics with the same true correlation with the human score (0.3): about 5% of
    # 1,000 seeded data sets reject at 0.05
    rng = np.random.default_rng(11)
    rejections = 0
    for _ in range(1000):
        h = rng.normal(size=60)
        a = 0.3 * h + math.sqrt(1 - 0.09) * rng.normal(size=60)
        b = 0.3 * h + math.sqrt(1 - 0.09) * rng.normal(size=60)
        R = np.corrcoef(np.vstack([h, a, b]))
        rejections += williams_test(R[0, 1], R[0, 2], R[1, 2], 60)[1] < 0.05
    assert 0.035 <= rejections / 1000 <= 0.065


@pytest.mark.parametrize("args,message", [
    ((0.4, 0.5, 0.1, 3), "at least 4 items"),
    ((1.4, 0.5, 0.1, 30), "r12 must be a correlation"),
    ((0.9, -0.9, 0.9, 30), "not the correlations of one data set"),
])
def test_williams_rejects_impossible_input(args, message):
    with pytest.raises(ValueError, match=message):
        williams_test(*args)


def test_williams_degenerate_cases():
    assert williams_test(0.3, 0.3, 0.5, 50) == (0.0, 1.0)


def test_fisher_interval_closed_form():
    # r = .5, n = 50: tanh(atanh(0.5) -+ 1.959964 / sqrt(47)) = 0.2575 .. 0.6833 (worked by hand)
    low, high = stats.fisher_interval(0.5, 50)
    assert low == pytest.approx(math.tanh(math.atanh(0.5) - 1.959963985 / math.sqrt(47)), abs=1e-9)
    assert high == pytest.approx(math.tanh(math.atanh(0.5) + 1.959963985 / math.sqrt(47)), abs=1e-9)
    assert (round(low, 4), round(high, 4)) == (0.2575, 0.6833)
    assert stats.fisher_interval(0.5, 50, confidence=0.9)[0] > low
    assert stats.fisher_interval(None, 50) is None and stats.fisher_interval(0.5, 3) is None
    assert stats.fisher_interval(1.0, 10) == [1.0, 1.0]


def _bivariate(rng, rho, n):
    x = rng.normal(size=n)
    return x, rho * x + math.sqrt(1 - rho * rho) * rng.normal(size=n)


RHO = 0.5
TRUTH = {"pearson": RHO, "spearman": 6 / math.pi * math.asin(RHO / 2), "kendall": 2 / math.pi * math.asin(RHO)}


def test_fisher_interval_coverage():
    # 1,000 seeded bivariate normal samples of 30 with rho = 0.5: the 95% interval covers rho in about 95%
    rng = np.random.default_rng(2024)
    covered = 0
    for _ in range(1000):
        x, y = _bivariate(rng, RHO, 30)
        low, high = stats.fisher_interval(np.corrcoef(x, y)[0, 1], 30)
        covered += low <= RHO <= high
    assert 0.935 <= covered / 1000 <= 0.965


def test_bootstrap_interval_coverage():
    # 1,000 seeded samples of 60, 250 resamples each: the percentile intervals of Pearson, Spearman
    # and Kendall cover the population values (Spearman 6/pi asin(rho/2), Kendall 2/pi asin(rho)
    # for a bivariate normal) about 95% of the time (percentile intervals run a little short)
    rng = np.random.default_rng(7)
    covered = {kind: 0 for kind in TRUTH}
    for i in range(1000):
        x, y = _bivariate(rng, RHO, 60)
        for kind, (low, high) in stats.bootstrap_correlations(x, y, 250, seed=i).items():
            covered[kind] += low <= TRUTH[kind] <= high
    for kind, count in covered.items():
        assert 0.92 <= count / 1000 <= 0.97, (kind, count)


def _exact_permutation_p(a, b, h, kind):
    """Every one of the 2^n swap patterns (the exact permutation distribution) of the
    standardized scores (Pearson) or standardized ranks (Spearman: Pearson with the ranks of h;
    Kendall)."""
    def z(v):
        return (v - v.mean()) / v.std()

    if kind == "pearson":
        xa, xb, target, func = z(a), z(b), h, sps.pearsonr
    else:
        xa, xb = z(sps.rankdata(a)), z(sps.rankdata(b))
        target, func = (sps.rankdata(h), sps.pearsonr) if kind == "spearman" else (h, sps.kendalltau)
    observed = func(xa, target)[0] - func(xb, target)[0]
    diffs = []
    for pattern in itertools.product([False, True], repeat=len(h)):
        s = np.array(pattern)
        diffs.append(func(np.where(s, xb, xa), target)[0] - func(np.where(s, xa, xb), target)[0])
    return observed, np.mean(np.abs(diffs) >= abs(observed) - 1e-12)


def test_permutation_test_agrees_with_the_exact_distribution():
    rng = np.random.default_rng(5)
    h = rng.normal(size=10)
    a, b = h + rng.normal(size=10) * 0.5, h + rng.normal(size=10) * 1.5
    got = stats.permutation_test(a, b, h, 20000, seed=1)
    for kind in stats.CORRELATIONS:
        observed, exact = _exact_permutation_p(a, b, h, kind)
        assert got[kind]["difference"] == pytest.approx(observed, abs=1e-12)
        assert observed == pytest.approx(stats.correlation(a, h, kind)["value"] - stats.correlation(b, h, kind)["value"])
        assert got[kind]["p"] == pytest.approx(exact, abs=0.01), kind  # Monte Carlo error about 0.003
    assert stats.permutation_test(a, b, h, 500, seed=1) == stats.permutation_test(a, b, h, 500, seed=1)


def test_permutation_test_size_and_power():
    rng = np.random.default_rng(9)
    rejections = {"null": 0, "real": 0}
    for _ in range(200):
        h = rng.normal(size=50)
        a, b = 0.4 * h + rng.normal(size=50), 0.4 * h + rng.normal(size=50)
        rejections["null"] += stats.permutation_test(a, b, h, 199, seed=3)["pearson"]["p"] < 0.05
        a, b = 1.5 * h + rng.normal(size=50), 0.1 * h + rng.normal(size=50)
        rejections["real"] += stats.permutation_test(a, b, h, 199, seed=3)["pearson"]["p"] < 0.05
    assert rejections["null"] / 200 <= 0.10 and rejections["real"] / 200 >= 0.95


def test_permutation_test_system_level_uses_the_means():
    systems = [s for s in "abcdef" for _ in range(10)]
    rng = np.random.default_rng(4)
    h = np.repeat(np.arange(6.0), 10) + rng.normal(size=60)
    a, b = h + rng.normal(size=60), rng.normal(size=60)
    got = stats.permutation_test(a, b, h, 300, seed=2, systems=systems)
    means = [[np.mean(v[i * 10:(i + 1) * 10]) for i in range(6)] for v in (a, b, h)]
    assert got["pearson"]["difference"] == pytest.approx(sps.pearsonr(means[0], means[2])[0]
                                                         - sps.pearsonr(means[1], means[2])[0])
    assert got["kendall"]["difference"] == pytest.approx(sps.kendalltau(means[0], means[2])[0]
                                                         - sps.kendalltau(means[1], means[2])[0])
    # whole systems swap: the exact distribution has 2^6 patterns, so p >= 2/64 however clear the gap
    za, zb = ((v - v.mean()) / v.std() for v in (a, b))
    ma, mb = (np.array([np.mean(v[i * 10:(i + 1) * 10]) for i in range(6)]) for v in (za, zb))
    observed = sps.pearsonr(ma, means[2])[0] - sps.pearsonr(mb, means[2])[0]
    diffs = [sps.pearsonr(np.where(s, mb, ma), means[2])[0] - sps.pearsonr(np.where(s, ma, mb), means[2])[0]
             for s in map(np.array, itertools.product([False, True], repeat=6))]
    exact = np.mean(np.abs(diffs) >= abs(observed) - 1e-12)
    got = stats.permutation_test(a, b, h, 5000, seed=2, systems=systems)
    assert exact >= 2 / 64 and got["pearson"]["p"] == pytest.approx(exact, abs=0.01)


def test_permutation_test_degenerate():
    got = stats.permutation_test([1, 1, 1, 1], [1, 2, 3, 4], [1, 2, 3, 5], 100, seed=1)
    assert got["pearson"] == {"difference": None, "p": None}
    with pytest.raises(ValueError, match="values"):
        stats.permutation_test([1, 2, 3], [1, 2], [1, 2, 3], 10, seed=1)


def test_swapped_kendall_equals_scipy_with_ties():
    rng = np.random.default_rng(3)
    a, b, h = (rng.integers(0, k, 40).astype(float) for k in (5, 4, 3))
    swap = rng.random((30, 40)) < 0.5
    got = stats._swapped_kendall(a, b, h, swap)
    rows = np.vstack([a, np.where(swap, b, a)])
    assert got == pytest.approx([sps.kendalltau(r, h)[0] for r in rows], abs=1e-12)
