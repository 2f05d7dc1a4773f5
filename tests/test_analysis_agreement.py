"""Annotator agreement (multiref.analysis.agreement) against published worked examples."""

import itertools
import math

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from multiref.analysis import adjusted_rand_index, fleiss_kappa, krippendorff_alpha

# Wikipedia, "Fleiss' kappa", worked example (10 subjects, 14 raters, 5 categories): the table of
# how many raters put each subject in each category; P-bar = 0.378, P-e = 0.213, kappa = 0.210.
WIKIPEDIA_FLEISS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_wikipedia_worked_example():
    assert round(fleiss_kappa(WIKIPEDIA_FLEISS), 3) == 0.210


def _fleiss_by_the_formula(table):
    """Fleiss (1971), eq. 1-9, with loops: P_i per subject, p_j per category."""
    N, n = len(table), sum(table[0])
    p = [sum(row[j] for row in table) / (N * n) for j in range(len(table[0]))]
    P = [(sum(c * c for c in row) - n) / (n * (n - 1)) for row in table]
    P_bar, P_e = sum(P) / N, sum(x * x for x in p)
    return (P_bar - P_e) / (1 - P_e)


@pytest.mark.parametrize("seed", range(6))
def test_fleiss_kappa_equals_the_formula_on_random_tables(seed):
    rng = np.random.default_rng(seed)
    raters, categories = int(rng.integers(2, 9)), int(rng.integers(2, 6))
    table = [list(np.bincount(rng.integers(0, categories, raters), minlength=categories))
             for _ in range(int(rng.integers(3, 40)))]
    assert fleiss_kappa(table) == pytest.approx(_fleiss_by_the_formula(table), abs=1e-12)


def test_fleiss_kappa_edges():
    assert fleiss_kappa([[3, 0], [0, 3], [3, 0]]) == pytest.approx(1.0)
    assert fleiss_kappa([[3, 0], [3, 0]]) is None  # one category only: kappa undefined
    for bad, message in (([[2, 1], [1, 1]], "same number"), ([[1, 0], [0, 1]], "at least 2"),
                         ([1, 2, 3], "table"), ([[2, -1]], "negative")):
        with pytest.raises(ValueError, match=message):
            fleiss_kappa(bad)


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C (nominal data, any
# number of observers, missing data): 4 observers (rows) x 12 units (columns), "." = missing.
# The paper gives alpha = 0.743 (nominal) and, for the same data, 0.849 (interval).
N = None
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]


@pytest.mark.parametrize("level,expected", [("nominal", 0.743), ("interval", 0.849)])
def test_krippendorff_alpha_worked_example(level, expected):
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, level), 3) == expected
    # unit 12 (one value) is not pairable: leaving it out changes nothing; nor does coder order
    assert krippendorff_alpha([row[:11] for row in KRIPPENDORFF_2011], level) == pytest.approx(
        krippendorff_alpha(KRIPPENDORFF_2011, level))
    assert krippendorff_alpha(KRIPPENDORFF_2011[::-1], level) == pytest.approx(
        krippendorff_alpha(KRIPPENDORFF_2011, level))


def test_krippendorff_alpha_two_coders_binary_by_hand():
    # 2 coders, 4 units, values 0/1, pairs (0,0) (0,1) (1,1) (1,1), worked by hand with the
    # coincidence matrix of Krippendorff (2011): o00 = 2, o01 = o10 = 1, o11 = 4; n0 = 3, n1 = 5,
    # n = 8; alpha = 1 - (n - 1) (o01 + o10) / (n0 n1 + n1 n0) = 1 - 7 * 2 / 30
    alpha = krippendorff_alpha([[0, 0, 1, 1], [0, 1, 1, 1]], "nominal")
    assert alpha == pytest.approx(1 - 7 * 2 / 30)
    assert krippendorff_alpha([[0, 1], [0, 1]]) == pytest.approx(1.0)
    assert krippendorff_alpha([[1, 1], [1, 1]]) is None  # no variation: undefined
    assert krippendorff_alpha([[1, N], [N, 2]]) is None  # nothing pairable
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha([[1, 2], [1, 2]], "ratio")


def test_krippendorff_nominal_alpha_with_no_missing_values_relates_to_fleiss():
    # With every unit coded by every coder, nominal alpha and Fleiss' kappa differ only by a
    # small-sample correction (Krippendorff 2011): on 4,000 units they agree to 3 decimals
    rng = np.random.default_rng(1)
    truth = rng.integers(0, 3, 4000)
    codes = np.vstack([np.where(rng.random(4000) < 0.7, truth, rng.integers(0, 3, 4000)) for _ in range(3)])
    table = np.stack([(codes == c).sum(axis=0) for c in range(3)], axis=1)
    assert krippendorff_alpha(codes) == pytest.approx(fleiss_kappa(table), abs=1e-3)


def test_adjusted_rand_index_equals_sklearn():
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(1, 30))
        a, b = rng.integers(0, int(rng.integers(1, 6)), n), rng.integers(0, int(rng.integers(1, 6)), n)
        assert adjusted_rand_index(list(a), list(b)) == pytest.approx(adjusted_rand_score(a, b), abs=1e-12)


def test_adjusted_rand_index_by_hand():
    # Labels are names only: the same partition under other names is 1
    assert adjusted_rand_index(["x", "x", "y", "y"], [2, 2, 7, 7]) == 1.0
    # {1,2,3}{4,5,6} against {1,2}{3,4}{5,6}: contingency [[2,1,0],[0,1,2]]; index = 2;
    # rows 3 + 3 = 6, columns 1 + 1 + 1 = 3, pairs 15: expected 6 * 3 / 15 = 1.2;
    # ARI = (2 - 1.2) / (4.5 - 1.2) = 0.2424...
    assert adjusted_rand_index([1, 1, 1, 2, 2, 2], [1, 1, 2, 2, 3, 3]) == pytest.approx(0.8 / 3.3)
    with pytest.raises(ValueError, match="labels against"):
        adjusted_rand_index([1, 2], [1])


def test_adjusted_rand_index_compares_labels_by_equality():
    # 1 and 1.0 are one label (as scikit-learn's and a dict's equality); "1" and 1 are two
    assert adjusted_rand_index([1, 1.0, 2, 2], [0, 0, 1, 1]) == 1.0 == adjusted_rand_score([1, 1.0, 2, 2], [0, 0, 1, 1])
    assert adjusted_rand_index([True, 1, 0, False], ["a", "a", "b", "b"]) == 1.0
    mixed = ["1", 1, 2, 2]
    assert adjusted_rand_index(mixed, [0, 0, 1, 1]) < 1.0
    assert adjusted_rand_index(mixed, [0, 1, 2, 2]) == 1.0
