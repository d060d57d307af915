"""Bagged forests: seeding, class alignment, staged scoring, OC1 Forest."""

import numpy as np
import pytest

from treeopt.forest.bagging import BaggedTreesClassifier, tree_seeds
from treeopt.forest.oc1 import OC1ForestClassifier
from treeopt.greedy.axis import AxisAlignedTreeClassifier
from treeopt.greedy.random_oblique import RandomObliqueTreeClassifier


def _data(n=300, seed=0, k=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n), np.linspace(-1, 1, k - 1))
    return X, np.array(["a", "b", "c", "d"])[y]


def _forest(n_estimators=6, random_state=0, **kw):
    return BaggedTreesClassifier(RandomObliqueTreeClassifier(n_hyperplanes=5), n_estimators=n_estimators,
                                 random_state=random_state, **kw)


def _same_trees(f, g):
    return all(a.tree_.n_nodes == b.tree_.n_nodes and np.array_equal(a.tree_.bias, b.tree_.bias)
               and (a.tree_.W != b.tree_.W).nnz == 0 for a, b in zip(f.estimators_, g.estimators_))


def test_same_seed_identical_forest_regardless_of_threads():
    X, y = _data()
    f = _forest(random_state=7, n_jobs=1).fit(X, y)
    g = _forest(random_state=7, n_jobs=2).fit(X, y)
    assert _same_trees(f, g)
    assert np.array_equal(f.predict_proba(X), g.predict_proba(X))


def test_different_seeds_give_different_forests():
    X, y = _data()
    f = _forest(random_state=1).fit(X, y)
    g = _forest(random_state=2).fit(X, y)
    assert not _same_trees(f, g)
    assert not np.array_equal(f.predict_proba(X), g.predict_proba(X))
    # trees inside one forest differ too (own bootstrap sample and seed)
    trees = f.estimators_
    assert len({t.tree_.n_nodes for t in trees}) > 1 or not np.array_equal(trees[0].tree_.bias, trees[1].tree_.bias)


def test_staged_scoring_equals_a_smaller_forest():
    X, y = _data(seed=1)
    big = _forest(n_estimators=12, random_state=3).fit(X, y)
    for m in (1, 5, 12):
        small = _forest(n_estimators=m, random_state=3).fit(X, y)
        assert np.array_equal(big.predict_proba(X, n_trees=m), small.predict_proba(X))
        assert np.array_equal(big.predict(X, n_trees=m), small.predict(X))
    staged = list(big.staged_predict_proba(X, [1, 5, 12]))
    assert len(staged) == 3
    assert np.allclose(staged[1], big.predict_proba(X, n_trees=5))
    assert np.allclose(staged[2], big.predict_proba(X))
    assert tree_seeds(3, 5) == tree_seeds(3, 12)[:5]
    with pytest.raises(ValueError, match="n_trees"):
        big.predict_proba(X, n_trees=13)


def test_probabilities_aligned_when_bootstrap_misses_a_class():
    X, y = _data(n=200, seed=2, k=3)
    X = np.vstack([X, 10 + np.zeros((1, 5))])
    y = np.append(y, "z")  # a single point of class "z": most bootstrap samples miss it
    forest = BaggedTreesClassifier(AxisAlignedTreeClassifier(), n_estimators=20, random_state=0).fit(X, y)
    assert list(forest.classes_) == ["a", "b", "c", "z"]
    has_z = [3 in est.classes_ for est in forest.estimators_]
    assert 0 < sum(has_z) < 20
    proba = forest.predict_proba(X)
    assert proba.shape == (201, 4) and np.allclose(proba.sum(axis=1), 1.0)
    # on the lone "z" point only the trees that saw it vote "z", each with certainty
    assert proba[-1, 3] == pytest.approx(sum(has_z) / 20)
    # and a reference built tree by tree from each estimator's own classes agrees
    ref = np.zeros_like(proba)
    for est in forest.estimators_:
        ref[:, forest.classes_.searchsorted(forest.classes_[est.classes_])] += est.predict_proba(X)
    assert np.allclose(proba, ref / 20)


def test_single_class_bootstrap_gives_a_constant_tree():
    X = np.arange(6, dtype=float)[:, None]
    y = np.array([0, 0, 0, 0, 0, 1])
    forest = BaggedTreesClassifier(AxisAlignedTreeClassifier(), n_estimators=30, random_state=0).fit(X, y)
    constant = [est for est in forest.estimators_ if est.classes_.size == 1]
    assert constant  # (5/6)^6 ~ 1/3 of the samples miss class 1
    assert np.allclose(forest.predict_proba(X).sum(axis=1), 1.0)


def test_bagging_reduces_error_over_a_single_tree():
    X, y = _data(n=600, seed=3)
    Xt, yt = _data(n=600, seed=4)
    single = RandomObliqueTreeClassifier(n_hyperplanes=5, random_state=0).fit(X, y)
    forest = _forest(n_estimators=25, random_state=0).fit(X, y)
    assert (forest.predict(Xt) != yt).mean() < (single.predict(Xt) != yt).mean() - 0.03


def test_oc1_forest_parameters_reach_the_trees():
    X, y = _data(n=150, seed=5)
    forest = OC1ForestClassifier(n_estimators=3, n_restarts=2, n_perturbations=1, max_depth=2,
                                 random_state=0).fit(X, y)
    assert len(forest.estimators_) == 3
    for est in forest.estimators_:
        assert est.n_restarts == 2 and est.tree_.max_depth <= 2
    assert forest.predict(X).shape == (150,)
    assert set(forest.get_params()) >= {"n_restarts", "n_perturbations", "max_features", "n_estimators"}
    with pytest.raises(ValueError):
        OC1ForestClassifier(n_estimators=0).fit(X, y)
