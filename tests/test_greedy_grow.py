"""The shared top-down growth loop."""

import numpy as np
import pytest

from treeopt.greedy._criteria import best_axis_split
from treeopt.greedy._grow import NodeSplit, grow_tree, project, route_right


def _axis_finder(min_samples_leaf=1):
    def find_split(X, y, rng, depth):
        f, thr, _ = best_axis_split(X, y, int(y.max()) + 1, np.arange(X.shape[1]), min_samples_leaf)
        return None if f < 0 else NodeSplit.axis(f, thr)
    return find_split


def _xor(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0)).astype(np.int64)
    return X, y


def test_separable_data_gives_pure_leaves_that_fit_training_set():
    X, y = _xor()
    tree = grow_tree(X, y, 2, _axis_finder(), rng=0)
    leaves = tree.leaves
    assert np.all(tree.value[leaves].max(axis=1) == 1.0)  # pure
    assert np.array_equal(tree.predict_proba(X).argmax(axis=1), y)
    # n_samples are consistent: children sum to their parent, leaves match apply()
    internal = tree.internal
    assert np.array_equal(tree.n_samples[tree.left[internal]] + tree.n_samples[tree.right[internal]],
                          tree.n_samples[internal])
    reached = np.bincount(tree.apply(X), minlength=tree.n_nodes)
    assert np.array_equal(reached[leaves], tree.n_samples[leaves])
    assert tree.value_kind == "probabilities"


@pytest.mark.parametrize("max_depth", [0, 1, 3])
def test_max_depth_is_respected(max_depth):
    X, y = _xor(seed=1)
    y = (y + (X[:, 0] > 0.5)).astype(np.int64)  # 3 classes, needs depth > 3 to fit
    tree = grow_tree(X, y, 3, _axis_finder(), max_depth=max_depth, rng=0)
    assert tree.max_depth == max_depth
    assert tree.value.shape == (tree.n_nodes, 3)
    # leaf rows are class frequencies of the points reaching them
    leaf_of = tree.apply(X)
    for leaf in tree.leaves:
        freq = np.bincount(y[leaf_of == leaf], minlength=3) / np.count_nonzero(leaf_of == leaf)
        assert np.allclose(tree.value[leaf], freq)


def test_min_samples_leaf_rejects_small_children():
    X, y = _xor(n=300, seed=2)
    y[:15] = 1 - y[:15]  # label noise forces small leaves when unrestricted
    for msl in (1, 7, 25):
        # the finder ignores min_samples_leaf, so grow_tree must enforce it
        tree = grow_tree(X, y, 2, _axis_finder(1), min_samples_leaf=msl, rng=0)
        assert tree.n_samples[tree.leaves].min() >= msl
    unrestricted = grow_tree(X, y, 2, _axis_finder(1), rng=0)
    assert unrestricted.n_samples[unrestricted.leaves].min() < 7


def test_min_samples_split_makes_leaves():
    X, y = _xor(n=200, seed=3)
    tree = grow_tree(X, y, 2, _axis_finder(), min_samples_split=50, rng=0)
    assert np.all(tree.n_samples[tree.internal] >= 50)


def test_deep_chain_does_not_recurse():
    # alternating labels on a line, and a finder that peels off the single smallest point:
    # the tree is a chain of depth n-1
    n = 120
    X = np.arange(n, dtype=np.float64)[:, None]
    y = (np.arange(n) % 2).astype(np.int64)

    def peel(Xn, yn, rng, depth):
        v = np.sort(Xn[:, 0])
        return NodeSplit.axis(0, 0.5 * (v[0] + v[1]))

    tree = grow_tree(X, y, 2, peel, rng=0)
    assert tree.max_depth == n - 1
    assert np.array_equal(tree.predict_proba(X).argmax(axis=1), y)


def test_oblique_split_routing_matches_tree_apply():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(500, 3))
    y = (X @ np.array([0.3, -1.1, 0.7]) > 0.2).astype(np.int64)

    def oblique(Xn, yn, r, depth):
        return NodeSplit.oblique(np.array([0.3, -1.1, 0.7]), 0.2)

    tree = grow_tree(X, y, 2, oblique, max_depth=1, rng=0)
    assert tree.feature[0] == -1
    go_right = route_right(X, NodeSplit.oblique(np.array([0.3, -1.1, 0.7]), 0.2))
    assert np.array_equal(tree.apply(X) == tree.right[0], go_right)
    assert tree.n_samples[tree.right[0]] == go_right.sum()


def test_finder_returning_none_or_one_sided_split_makes_a_leaf():
    X, y = _xor(n=50)
    tree = grow_tree(X, y, 2, lambda *a: None, rng=0)
    assert tree.n_nodes == 1 and tree.n_samples[0] == 50
    tree = grow_tree(X, y, 2, lambda *a: NodeSplit.axis(0, 10.0), rng=0)  # everything left
    assert tree.n_nodes == 1


def test_rng_is_passed_and_seeds_reproduce():
    X, y = _xor(n=200, seed=5)

    def random_axis(Xn, yn, rng, depth):
        f = int(rng.integers(2))
        return NodeSplit.axis(f, float(np.median(Xn[:, f])) + 1e-9)

    a = grow_tree(X, y, 2, random_axis, rng=1)
    b = grow_tree(X, y, 2, random_axis, rng=1)
    c = grow_tree(X, y, 2, random_axis, rng=2)
    assert np.array_equal(a.feature, b.feature) and np.array_equal(a.bias, b.bias)
    assert not (a.n_nodes == c.n_nodes and np.array_equal(a.feature, c.feature))


def test_project_matches_tree_routing_at_thresholds_placed_on_it():
    # thresholds set exactly at projected values: any difference in arithmetic would flip points
    rng = np.random.default_rng(6)
    X = rng.normal(size=(300, 5))
    w = rng.normal(size=5)
    w[2] = 0.0
    z = project(X, w)
    tree_split = NodeSplit.oblique(w, float(z[17]))
    tree = grow_tree(X, (z >= z[17]).astype(np.int64), 2, lambda *a: tree_split, max_depth=1, rng=0)
    assert np.array_equal(tree.apply(X) == tree.right[0], z >= z[17])
    assert np.array_equal(route_right(X, tree_split), z >= z[17])
    with pytest.raises(ValueError, match="shape"):
        project(X, w[:3])
