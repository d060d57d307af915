"""The optimal axis-aligned tree (STreeD via pystreed): optimality, never worse than CART, the time limit, the
shared tree format and its use as TAO's and the non-greedy learner's initial tree."""


import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from treeopt.greedy import AxisAlignedTreeClassifier
from treeopt.optimal import OptimalTreeClassifier
from treeopt.optimal.binarize import binarize, merge_splits, quantile_splits, tree_splits
from treeopt.trees import Tree


def _small(n=150, seed=0):
    """Wine subsample, z-scored: three classes, continuous features, small enough for proofs in well under a
    second."""
    X, y = load_wine(return_X_y=True)
    rng = np.random.default_rng(seed)
    rows = rng.choice(X.shape[0], size=min(n, X.shape[0]), replace=False)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X[rows], y[rows]


def _brute_force_errors(B, y, depth):
    """Fewest training errors of any tree of depth <= ``depth`` over the binary columns of B (exhaustive)."""
    k = int(y.max()) + 1

    def best(rows, d):
        counts = np.bincount(y[rows], minlength=k)
        leaf = int(rows.shape[0] - counts.max())
        if d == 0 or leaf == 0:
            return leaf
        out = leaf
        for j in range(B.shape[1]):
            right = B[rows, j] == 1
            if right.all() or not right.any():
                continue
            out = min(out, best(rows[~right], d - 1) + best(rows[right], d - 1))
        return out

    return best(np.arange(y.shape[0]), depth)


@pytest.mark.parametrize("depth", [1, 2])
def test_the_tree_is_optimal_over_its_candidate_splits(depth):
    X, y = _small(60, seed=depth)
    est = OptimalTreeClassifier(max_depth=depth, n_thresholds=2).fit(X, y)
    assert est.proven_optimal_ and est.optimality_gap_ == 0.0
    B = binarize(X, est.split_features_, est.split_thresholds_)
    assert est.train_errors_ == _brute_force_errors(B, y, depth)
    assert est.train_errors_ == int(np.sum(est.predict(X) != y))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_proven_optimum_is_never_worse_than_cart_on_the_training_set(depth, seed):
    X, y = _small(150, seed)
    est = OptimalTreeClassifier(max_depth=depth, n_thresholds=3, random_state=seed).fit(X, y)
    assert est.proven_optimal_
    cart = DecisionTreeClassifier(criterion="entropy", max_depth=depth, random_state=seed).fit(X, y)
    cart_errors = int(np.sum(cart.predict(X) != y))
    assert est.cart_train_errors_ == cart_errors
    assert est.train_errors_ <= cart_errors
    assert est.tree_.max_depth <= depth


def test_cart_thresholds_are_what_makes_it_never_worse_than_cart():
    """With a single quantile test per feature and no CART tests, the "optimum" loses to CART on breast cancer;
    adding CART's tests restores optimum <= CART (the property is the binarisation's, not luck)."""
    X, y = load_breast_cancer(return_X_y=True)
    depth = 3
    cart = DecisionTreeClassifier(criterion="entropy", max_depth=depth, random_state=0).fit(X, y)
    cart_errors = int(np.sum(cart.predict(X) != y))
    coarse = OptimalTreeClassifier(max_depth=depth, n_thresholds=1, cart_thresholds=False).fit(X, y)
    assert coarse.proven_optimal_ and coarse.train_errors_ > cart_errors
    full = OptimalTreeClassifier(max_depth=depth, n_thresholds=1, random_state=0).fit(X, y)
    assert full.proven_optimal_ and full.train_errors_ <= cart_errors


def test_tree_splits_route_the_training_points_as_the_cart_tree_does():
    X, y = load_breast_cancer(return_X_y=True)
    X = X + np.random.default_rng(0).normal(scale=1e-7, size=X.shape)  # values that differ in float32 rounding
    cart = AxisAlignedTreeClassifier(max_depth=4, random_state=0).fit(X, y).tree_
    features, thresholds = tree_splits(cart, X)
    assert features.shape[0] == cart.internal.shape[0]
    Xr = X.astype(np.float32).astype(np.float64)
    for node, f, t in zip(cart.internal, features, thresholds):
        assert f == cart.feature[node]
        np.testing.assert_array_equal(X[:, f] >= t, Xr[:, f] >= cart.bias[node])


def test_quantile_splits_one_test_per_binary_column_and_midpoints():
    X = np.array([[0.0, 1.0, 5.0], [1.0, 2.0, 5.0], [0.0, 3.0, 5.0], [1.0, 4.0, 5.0], [0.0, 5.0, 5.0]])
    f, t = quantile_splits(X, 2)
    assert f.tolist() == [0, 1, 1]  # the constant column gives no test
    assert t[0] == 0.5
    assert set(t[1:]) <= {1.5, 2.5, 3.5, 4.5}
    f2, t2 = merge_splits((f, t), (np.array([0, 1]), np.array([0.5, 9.0])))
    assert f2.tolist() == [0, 1, 1, 1] and t2[-1] == 9.0
    assert binarize(X, f2, t2).shape == (5, 4)


def test_time_limit_gives_the_best_tree_found_and_says_so():
    """Depth 4 on breast cancer with many thresholds is not proven within 0.05 s: the fit still returns a
    tree no worse than CART and records that optimality is not proven (gap unknown)."""
    X, y = load_breast_cancer(return_X_y=True)
    est = OptimalTreeClassifier(max_depth=4, n_thresholds=20, time_limit=0.05, random_state=0).fit(X, y)
    assert not est.proven_optimal_
    assert est.optimality_gap_ is None
    assert est.train_errors_ <= est.cart_train_errors_
    assert est.fit_stats_["proven_optimal"] is False and est.fit_stats_["time_limit"] == 0.05
    assert est.train_errors_ == int(np.sum(est.predict(X) != y))


def test_shared_tree_format_predicts_saves_and_loads(tmp_path):
    X, y = _small(120)
    est = OptimalTreeClassifier(max_depth=3, n_thresholds=4).fit(X, y)
    tree = est.tree_
    assert isinstance(tree, Tree) and np.all(tree.feature[tree.internal] >= 0)
    assert tree.n_samples[0] == X.shape[0]
    stats = tree.stats(X)
    assert stats["depth"] <= 3 and stats["n_leaves"] == stats["n_internal"] + 1
    tree.save(tmp_path / "model.npz")
    loaded = Tree.load(tmp_path / "model.npz")
    np.testing.assert_array_equal(loaded.predict_proba(X), tree.predict_proba(X))
    np.testing.assert_array_equal(est.classes_[loaded.predict_proba(X).argmax(axis=1)], est.predict(X))


def test_string_labels_and_bad_input():
    X, y = _small(80)
    names = np.array(["a", "b", "c"])[y]
    est = OptimalTreeClassifier(max_depth=2).fit(X, names)
    assert set(est.predict(X)) <= set(names)
    with pytest.raises(ValueError, match="NaN|infinity"):
        OptimalTreeClassifier().fit(np.where(X == X[0, 0], np.nan, X), y)
    with pytest.raises(ValueError, match="class"):
        OptimalTreeClassifier().fit(X, np.zeros(X.shape[0]))
    with pytest.raises(ValueError, match="max_depth"):
        OptimalTreeClassifier(max_depth=0).fit(X, y)
    with pytest.raises(ValueError, match="no candidate splits"):
        OptimalTreeClassifier(n_thresholds=0, cart_thresholds=False).fit(X, y)


def test_tao_refines_the_optimal_tree_without_losing_training_accuracy():
    from treeopt.tao import TAOTreeClassifier

    X, y = _small(150)
    opt = OptimalTreeClassifier(max_depth=3, n_thresholds=3, random_state=0).fit(X, y)
    for node_type in ("axis", "oblique"):
        tao = TAOTreeClassifier(node_type=node_type, max_depth=3, init="optimal", init_params={"n_thresholds": 3},
                                random_state=0).fit(X, y)
        assert tao.fit_stats_["init_train_error"] == pytest.approx(100.0 * opt.train_errors_ / y.shape[0])
        assert tao.fit_stats_["init_proven_optimal"] is True
        assert np.sum(tao.predict(X) != y) <= opt.train_errors_
        # a fitted optimal tree as init gives the same start
        given = TAOTreeClassifier(node_type=node_type, max_depth=3, init=opt, random_state=0).fit(X, y)
        assert given.fit_stats_["init_train_error"] == tao.fit_stats_["init_train_error"]
    with pytest.raises(ValueError, match="init_params"):
        TAOTreeClassifier(init="cart", init_params={"n_thresholds": 3}).fit(X, y)


def test_nongreedy_learner_starts_from_the_optimal_tree():
    from treeopt.nongreedy import NonGreedyTreeClassifier

    X, y = _small(150)
    opt = OptimalTreeClassifier(max_depth=2, n_thresholds=3).fit(X, y)
    ng = NonGreedyTreeClassifier(max_depth=2, init=opt, max_epochs=2, random_state=0).fit(X, y)
    assert ng.tree_.max_depth == 2 and ng.score(X, y) > 0.5


@parametrize_with_checks([OptimalTreeClassifier(max_depth=2, n_thresholds=3, time_limit=10)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_constant_features_give_a_leaf_which_is_optimal():
    X = np.ones((20, 3))
    y = np.array([0, 1] * 10)
    est = OptimalTreeClassifier(max_depth=2).fit(X, y)
    assert est.tree_.n_nodes == 1 and est.proven_optimal_ and est.train_errors_ == 10
