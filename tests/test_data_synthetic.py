"""The RGF paper's synthetic generator (section 6.1.1)."""

import itertools

import numpy as np
import pytest

from treeopt.data import load_split, make_rgf_synthetic, prepare_split
from treeopt.data.synthetic import random_tree


@pytest.mark.parametrize("q", [1, 2, 4, 16, 64])
def test_random_tree_has_q_leaves_weighted_0_to_q_minus_1(q):
    tree = random_tree(q, n_features=10, n_values=100, rng=np.random.default_rng(q))
    leaves = np.flatnonzero(tree.is_leaf)
    assert len(leaves) == q and len(tree.left) == 2 * q - 1
    assert sorted(tree.value[leaves].tolist()) == list(range(q))
    internal = ~tree.is_leaf
    assert np.all((tree.threshold[internal] >= 1) & (tree.threshold[internal] <= 99))


def test_every_leaf_owns_part_of_the_value_grid():
    # On a small grid we can enumerate every point: no random split may be empty.
    rng = np.random.default_rng(0)
    grid = np.array(list(itertools.product(range(6), range(6))), dtype=float)
    for _ in range(20):
        tree = random_tree(12, n_features=2, n_values=6, rng=rng)
        values = tree.predict(grid)
        assert sorted(set(values.tolist())) == list(range(12))


def test_generator_is_deterministic_for_a_seed_and_varies_across_seeds():
    a = make_rgf_synthetic(16, target="regression", n_samples=500, random_state=3)
    b = make_rgf_synthetic(16, target="regression", n_samples=500, random_state=3)
    c = make_rgf_synthetic(16, target="regression", n_samples=500, random_state=4)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[1], c[1])


@pytest.mark.parametrize("q", [2, 4, 16, 64])
def test_stated_properties(q):
    X, y, trees = make_rgf_synthetic(q, target="regression", n_samples=3000, random_state=q)
    assert X.shape == (3000, 10) and len(trees) == 100
    assert np.all(X == np.round(X)) and X.min() == 0 and X.max() == 99
    interim = sum(t.predict(X) for t in trees)
    assert interim.min() >= 0 and interim.max() <= 100 * (q - 1)
    np.testing.assert_allclose(y, (interim - interim.mean()) / interim.std())
    Xc, yc, trees_c = make_rgf_synthetic(q, target="classification", n_samples=3000, random_state=q)
    interim_c = sum(t.predict(Xc) for t in trees_c)
    assert set(np.unique(yc)) == {-1.0, 1.0}
    np.testing.assert_array_equal(yc == 1, interim_c > np.median(interim_c))


def _effect_of_moving(trees, j, base):
    """f(x with x_j = 93) - f(x with x_j = 7) for each row x of ``base``."""
    lo, hi = base.copy(), base.copy()
    lo[:, j], hi[:, j] = 7.0, 93.0
    return sum(t.predict(hi) - t.predict(lo) for t in trees)


def test_stumps_make_an_additive_target_and_larger_trees_do_not():
    # q = 2: each tree is one split on one feature, so f is a sum of univariate steps and the
    # effect of moving x_j cannot depend on the other coordinates. With q = 16 it does.
    rng = np.random.default_rng(1)
    base = rng.integers(0, 100, size=(30, 10)).astype(float)
    _, _, stumps = make_rgf_synthetic(2, target="regression", n_samples=10, random_state=0)
    assert all(np.count_nonzero(~t.is_leaf) == 1 for t in stumps)
    for j in range(10):
        effect = _effect_of_moving(stumps, j, base)
        assert np.all(effect == effect[0])
    _, _, deep = make_rgf_synthetic(16, target="regression", n_samples=10, random_state=0)
    assert any(np.ptp(_effect_of_moving(deep, j, base)) > 0 for j in range(10))


def test_prepared_synthetic_split_seed_selects_the_dataset(tmp_path):
    entry = {"task": "classification", "format": "synthetic",
             "options": {"q": 4, "target": "classification", "n_samples": 600, "n_trees": 20},
             "split": {"protocol": "rgf", "n_train": 200, "test": "rest"}}
    cfg = {"data": {"processed_dir": str(tmp_path / "p"), "raw_dir": str(tmp_path / "r"),
                    "lock_file": str(tmp_path / "l")}, "datasets": {"syn": entry}}
    s0, s1 = (load_split(prepare_split("syn", cfg, seed)) for seed in (0, 1))
    assert s0.X_train.shape == (200, 10) and s0.X_test.shape == (400, 10) and s0.X_val.shape == (0, 10)
    assert s0.classes.tolist() == ["-1", "1"] and s0.n_classes == 2
    assert not np.array_equal(s0.X_train, s1.X_train)
    again = load_split(prepare_split("syn", {**cfg, "data": {**cfg["data"], "processed_dir": str(tmp_path / "q")}}, 0))
    np.testing.assert_array_equal(again.X_test, s0.X_test)


def test_covertype_like_has_covertypes_layout_and_is_reproducible():
    from treeopt.data.synthetic import make_covertype_like

    X, y = make_covertype_like(3000, random_state=5)
    assert X.shape == (3000, 54) and set(np.unique(y)) <= set(range(7))
    assert np.array_equal(X[:, 10:14].sum(axis=1), np.ones(3000))  # one wilderness area per row
    assert np.array_equal(X[:, 14:].sum(axis=1), np.ones(3000))  # one soil type per row
    assert set(np.unique(X[:, 10:])) == {0.0, 1.0}
    X2, y2 = make_covertype_like(3000, random_state=5)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    assert not np.array_equal(y, make_covertype_like(3000, random_state=6)[1])
    # labels follow the features (a tree beats the majority class by far), but not perfectly (redrawn labels)
    from sklearn.tree import DecisionTreeClassifier

    tree = DecisionTreeClassifier(max_depth=8, random_state=0).fit(X[:2000], y[:2000])
    accuracy = tree.score(X[2000:], y[2000:])
    assert np.bincount(y).max() / len(y) + 0.15 < accuracy < 0.99
    for bad in ({"n_classes": 1}, {"n_classes": 8}, {"noise": 1.0}):
        with pytest.raises(ValueError):
            make_covertype_like(10, **bad)
