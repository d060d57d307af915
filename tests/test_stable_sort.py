"""The radix sort behind the axis searches (``_radix.stable_sort_labelled``) gives numpy's stable order bit for
bit, so ``best_axis_split``, two-probe nodes (``best_difference_split``) and random oblique projections find the
splits the mergesort found."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treeopt.greedy._criteria import _sweep_sorted, _xlogx_table, best_axis_split, best_difference_split, class_counts
from treeopt.greedy._radix import STABLE_RADIX_MIN, stable_sort_labelled, stable_sort_workspace
from treeopt.greedy.two_probe import TwoProbeTreeClassifier


def _stable(z, y):
    order = np.argsort(z, kind="stable")
    return z[order], y[order]


def _sorted_by_radix(z, y):
    zs, ys = np.empty_like(z), np.empty_like(y)
    stable_sort_labelled(z, y, zs, ys, stable_sort_workspace(z.shape[0]))
    return zs, ys


def _column(kind, n, rng):
    if kind == "continuous":
        return rng.normal(size=n)
    if kind == "few values":  # ties across classes: their order inside a tie group must be the stable one
        return rng.integers(-4, 5, n) / 3.0
    if kind == "crowded":  # a few distinct values agreeing in their top 33 bits, ties among them: the insertion pass
        z = rng.normal(size=n)
        crowd = rng.random(n) < 0.04
        z[crowd] = 1.0 + rng.integers(0, 4, crowd.sum()) * 2.0 ** -40
        return z
    if kind == "crowded everywhere":  # too many for the insertion pass: its budget sends the column to the mergesort
        return 1.0 + rng.integers(0, 50, n) * 2.0 ** -40
    if kind == "signed zeros":  # -0.0 == +0.0 for the sort; left to the mergesort
        z = rng.integers(-1, 2, n) * 0.0
        z[rng.random(n) < 0.3] = -0.0
        return z
    if kind == "nan":
        z = rng.normal(size=n)
        z[rng.random(n) < 0.1] = np.nan
        return z
    z = rng.normal(size=n)  # "infinities"
    z[rng.random(n) < 0.1] = np.inf
    z[rng.random(n) < 0.1] = -np.inf
    return z


@pytest.mark.parametrize("kind", ["continuous", "few values", "crowded", "crowded everywhere", "signed zeros", "nan",
                                  "infinities"])
@pytest.mark.parametrize("n", [1, 2, STABLE_RADIX_MIN - 1, STABLE_RADIX_MIN, 999, 1000, 6000])
def test_radix_order_is_the_stable_order_bit_for_bit(kind, n):
    rng = np.random.default_rng(n)
    z, y = _column(kind, n, rng), rng.integers(0, 5, n)
    zs, ys = _sorted_by_radix(z, y)
    want_z, want_y = _stable(z, y)
    assert np.array_equal(zs.view(np.uint64), want_z.view(np.uint64))  # -0.0 and NaN bits included
    assert np.array_equal(ys, want_y)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(STABLE_RADIX_MIN, 3000), st.integers(1, 40))
def test_radix_order_with_random_tie_groups(seed, n, n_values):
    rng = np.random.default_rng(seed)
    values = rng.normal(size=n_values) * 10.0 ** rng.integers(-300, 300, n_values)
    z, y = rng.choice(values, n), rng.integers(0, 3, n)
    zs, ys = _sorted_by_radix(z, y)
    want_z, want_y = _stable(z, y)
    assert np.array_equal(zs, want_z) and np.array_equal(ys, want_y)


def _old_best_axis_split(X, y, k, features, msl):
    """``best_axis_split`` as it was: numpy's stable argsort per column, then the same sweep."""
    n = X.shape[0]
    best = (-1, np.nan, -np.inf)
    for f in features:
        zs, ys = _stable(np.ascontiguousarray(X[:, f]), y)
        if not zs[0] < zs[n - 1]:
            continue
        thr, gain = _sweep_sorted(zs, ys, k, msl, class_counts(y, k), _xlogx_table(n))
        if gain > best[2]:
            best = (f, thr, gain)
    return best


@pytest.mark.parametrize("grid", [False, True])
def test_axis_and_difference_searches_equal_the_mergesort_search(grid):
    rng = np.random.default_rng(3)
    n, p, k = 3000, 12, 3
    X = rng.integers(0, 7, (n, p)) / 7.0 if grid else rng.normal(size=(n, p))
    y = rng.integers(0, k, n)
    features = np.arange(p, dtype=np.int64)
    got = best_axis_split(X, y, k, features, 1)
    want = _old_best_axis_split(X, y, k, features, 1)
    assert got[0] == want[0] and got[1] == want[1] and got[2] == want[2]
    # a two-probe node on a bootstrap of the rows (repeats), pairs in a fixed order
    rows = rng.integers(0, n, 2500)
    first = rng.integers(0, p, 40)
    second = (first + rng.integers(1, p, 40)) % p
    D = X[rows][:, first] - X[rows][:, second]
    got = best_difference_split(X, rows, y[rows], k, first, second, 2)
    want = _old_best_axis_split(D, y[rows], k, np.arange(40), 2)
    assert got[0] == want[0] and got[1] == want[1] and got[2] == want[2]


def test_a_two_probe_tree_routes_its_training_points_as_the_tree_store_does():
    """Grown from row numbers (no copy of a node's rows): each leaf's training count is the number of training
    points ``Tree.apply`` sends there."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 5, (800, 9)).astype(float)
    y = (X[:, 0] - X[:, 3] + rng.normal(size=800) > 0).astype(int) + (X[:, 5] > 2)
    tree = TwoProbeTreeClassifier(n_pairs=30, random_state=0).fit(X, y).tree_
    leaves = tree.apply(X)
    assert np.array_equal(np.bincount(leaves, minlength=tree.n_nodes)[tree.leaves],
                          tree.n_samples[tree.leaves])
