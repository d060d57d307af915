"""Random oblique trees."""

import numpy as np
import pytest

from treeopt.greedy._criteria import best_axis_split, entropy, information_gain
from treeopt.greedy._grow import route_right
from treeopt.greedy.random_oblique import RandomObliqueSplitFinder, RandomObliqueTreeClassifier


def _data(n=500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) * np.array([1.0, 100.0, 0.01, 1.0])  # very different feature scales
    y = (X[:, 0] - X[:, 1] / 100 + X[:, 2] * 100 > 0).astype(np.int64)
    y[X[:, 3] > 1.0] = 2
    return X, y


@pytest.mark.parametrize("seed", range(3))
def test_root_split_is_the_best_of_the_drawn_hyperplanes_by_brute_force(seed):
    """The paper's baseline: the best of R random hyperplanes (no axis candidates by default); every cut of
    every drawn direction is scored by brute force."""
    X, y = _data(n=120, seed=seed)
    R = 7
    finder = RandomObliqueSplitFinder(3, n_hyperplanes=R, n_features_split=4, min_samples_leaf=1)
    split = finder(X, y, np.random.default_rng(seed), 0)
    assert split.feature == -1 and finder.n_axis == 0
    W = np.random.default_rng(seed).standard_normal((R, 4)) / X.std(axis=0)  # the same draw, standardised units
    best = -np.inf
    for w in W:
        z = X @ w
        for t in np.unique(z)[1:]:
            best = max(best, information_gain(y, z >= t, 3))
    assert np.isclose(information_gain(y, route_right(X, split), 3), best, atol=1e-9)


def test_axis_candidates_are_optional():
    X, y = _data(n=300, seed=1)
    plain = RandomObliqueTreeClassifier(n_hyperplanes=5, random_state=0).fit(X, y)
    assert plain.n_axis_splits_ == 0 and np.all(plain.tree_.feature[plain.tree_.internal] == -1)
    mixed = RandomObliqueTreeClassifier(n_hyperplanes=5, axis_candidates=True, random_state=0).fit(X, y)
    assert mixed.n_axis_splits_ > 0
    assert mixed.n_axis_splits_ == np.count_nonzero(mixed.tree_.feature[mixed.tree_.internal] >= 0)


def test_random_hyperplanes_beat_axis_splits_on_oblique_boundary():
    # directions are drawn in standardised units, so the badly scaled features still get useful mixtures
    X, y = _data(n=800)
    y = np.minimum(y, 1)
    finder = RandomObliqueSplitFinder(2, n_hyperplanes=200, n_features_split=4, min_samples_leaf=1,
                                      axis_candidates=True)
    split = finder(X, y, np.random.default_rng(0), 0)
    _, _, axis_gain = best_axis_split(X, y, 2, np.arange(4), 1)
    assert split.feature == -1
    assert information_gain(y, route_right(X, split), 2) > axis_gain + 0.1 * entropy(np.bincount(y))


def test_tree_is_pure_seeded_and_depth_limited():
    X, y = _data(n=300, seed=1)
    a = RandomObliqueTreeClassifier(n_hyperplanes=10, random_state=0).fit(X, y)
    b = RandomObliqueTreeClassifier(n_hyperplanes=10, random_state=0).fit(X, y)
    c = RandomObliqueTreeClassifier(n_hyperplanes=10, random_state=1).fit(X, y)
    assert np.array_equal(a.predict(X), y)
    assert np.array_equal(a.tree_.bias, b.tree_.bias)
    assert not (a.tree_.n_nodes == c.tree_.n_nodes and np.array_equal(a.tree_.bias, c.tree_.bias))
    assert a.n_oblique_splits_ + a.n_axis_splits_ == a.tree_.internal.size
    shallow = RandomObliqueTreeClassifier(n_hyperplanes=10, max_depth=2, random_state=0).fit(X, y)
    assert shallow.tree_.max_depth <= 2
    proba = shallow.predict_proba(X)
    assert np.allclose(proba.sum(axis=1), 1.0) and proba.shape == (300, 3)


def test_constant_node_features_give_zero_weight():
    X, y = _data(n=200, seed=2)
    X[:, 3] = 5.0  # constant: its direction component must be 0, not a division by zero
    y = np.minimum(y, 1)
    tree = RandomObliqueTreeClassifier(n_hyperplanes=30, random_state=0).fit(X, y).tree_
    assert np.all(np.isfinite(tree.W.data))
    assert tree.dense_weights()[:, 3].max() == 0.0


def _projection_restated(X, w):
    """``X w`` as the tree store routes a point: summed in feature order, zero weights skipped, one addition at a
    time (Python floats: the same IEEE double operations as the kernel without fastmath)."""
    out = np.empty(X.shape[0])
    for i, row in enumerate(X):
        s = 0.0
        for x, v in zip(row.tolist(), w.tolist()):
            if v != 0.0:
                s += v * x
        out[i] = s
    return out


@pytest.mark.parametrize("R, zeros", [(1, "none"), (37, "shared"), (70, "mixed"), (32, "none")])
def test_blocked_projections_are_the_one_at_a_time_sums_bit_for_bit(R, zeros):
    """``_best_projection`` sums PROJECTION_BLOCK hyperplanes side by side (one read of each row per block): every
    projection must still be the feature-order sum a tree routes with, whether the block's rows share their zero
    weights (constant features) or not, and whatever R is modulo the block."""
    from treeopt.greedy.random_oblique import PROJECTION_BLOCK, _project_block

    rng = np.random.default_rng(R)
    X = rng.normal(size=(53, 19)) * rng.uniform(0.01, 100, size=19)
    W = rng.standard_normal((R, 19))
    if zeros in ("shared", "mixed"):
        W[:, [0, 7, 18]] = 0.0
    if zeros == "mixed":
        W[5, 3] = W[40, 11] = 0.0
    block = min(PROJECTION_BLOCK, R)
    Z = np.empty((block, 53))
    cols, WT = np.empty(19, dtype=np.int64), np.empty((19, block))
    for r0 in range(0, R, block):
        B = min(block, R - r0)
        _project_block(X, W, r0, B, cols, WT, Z)
        for b in range(B):
            np.testing.assert_array_equal(Z[b], _projection_restated(X, W[r0 + b]))
