"""CO2 trees and CO2 Forest: growth, seeding, routing, scikit-learn conventions and errors."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from treeopt.forest.co2 import CO2ForestClassifier
from treeopt.greedy._criteria import information_gain
from treeopt.greedy.axis import AxisAlignedTreeClassifier
from treeopt.greedy.co2 import CO2TreeClassifier

FAST = dict(max_epochs=10)


def _rotated(n=800, seed=0, p=3):
    """Classes split by the oblique plane x0 + 0.8 x1 >= 0.1 (plus irrelevant features)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p))
    return X, (X[:, 0] + 0.8 * X[:, 1] >= 0.1).astype(np.int64)


def _three_classes(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.digitize(X[:, 0] - X[:, 2] + 0.3 * rng.normal(size=n), [-0.7, 0.7])
    return X, np.array(["lo", "mid", "hi"])[y]


def _sum_of_four(n, seed):
    """y = 1 iff x0 + x1 + x2 + x3 >= 0 among 8 features: axis trees need a staircase of splits."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 8))
    return X, (X[:, :4].sum(axis=1) >= 0).astype(np.int64)


def test_co2_tree_is_smaller_and_more_accurate_than_axis_trees_on_an_oblique_boundary():
    X, y = _sum_of_four(1000, 0)
    X_test, y_test = _sum_of_four(3000, 1)
    co2 = CO2TreeClassifier(nu=4.0, random_state=0).fit(X, y)
    axis_q = AxisAlignedTreeClassifier(max_features="sqrt", random_state=0).fit(X, y)  # same q as co2
    axis_all = AxisAlignedTreeClassifier(random_state=0).fit(X, y)
    assert co2.score(X, y) == 1.0  # grown to purity
    assert co2.tree_.stats()["n_leaves"] * 2 < axis_q.tree_.stats()["n_leaves"]
    assert co2.score(X_test, y_test) > max(axis_q.score(X_test, y_test), axis_all.score(X_test, y_test)) + 0.03
    assert co2.tree_.feature[0] == -1  # the root split is oblique
    assert co2.n_oblique_splits_ + co2.n_axis_fallbacks_ == co2.tree_.stats()["n_internal"]
    assert co2.n_axis_fallbacks_ < 0.5 * co2.n_oblique_splits_


@pytest.mark.parametrize("standardize", ["none", "tree", "node"])
def test_fallbacks_are_counted_and_only_replace_unusable_stumps(standardize):
    """"never": every internal node holds its optimised oblique split and collapsed stumps are impure leaves;
    "collapsed" (default): only those collapsed nodes get the axis split, so the tree is pure; "no_gain":
    more fallbacks. The counts equal the node kinds in the tree."""
    X, y = _rotated(n=400, seed=2)
    X = X * np.array([50.0, 0.02, 3.0]) + np.array([100.0, -5.0, 0.0])  # badly scaled features
    for nu in (0.05, 4.0):
        make = lambda mode: CO2TreeClassifier(nu=nu, standardize=standardize, axis_fallback=mode, random_state=0,
                                              **FAST).fit(X, y)
        never, default, no_gain = make("never"), make("collapsed"), make("no_gain")
        internal = never.tree_.internal
        assert never.n_axis_fallbacks_ == 0 and np.all(never.tree_.feature[internal] == -1)
        assert never.n_oblique_splits_ == internal.size
        impure = np.count_nonzero(never.tree_.value[never.tree_.is_leaf].max(axis=1) < 1.0)
        assert impure == never.n_collapsed_splits_
        for est in (default, no_gain):
            kinds = est.tree_.feature[est.tree_.internal]
            assert est.n_axis_fallbacks_ == np.count_nonzero(kinds >= 0)
            assert est.n_oblique_splits_ == np.count_nonzero(kinds == -1)
            assert est.n_collapsed_splits_ == 0 and est.score(X, y) == 1.0  # grown to pure leaves
        # the root sees the same data and seed in all modes: its stump collapses in all of them or in none
        assert (default.tree_.feature[0] >= 0) == (never.tree_.n_nodes == 1)
    if standardize != "none":  # in standardised coordinates the bad scaling does not matter
        right = default.tree_.W[0].toarray().ravel() @ X.T - default.tree_.bias[0] >= 0
        assert information_gain(y, right, 2) > 0.2


@pytest.mark.parametrize("standardize", ["tree", "node"])
def test_standardised_trees_do_not_depend_on_feature_scaling(standardize):
    """With standardised coordinates an affine rescaling of each feature leaves the learned partition
    (and so every prediction) unchanged, up to round-off in rare near-ties."""
    X, y = _three_classes(n=400, seed=3)
    X_test, _ = _three_classes(n=1000, seed=4)
    a, c = np.array([100.0, 0.01, 3.0, 7.0]), np.array([-50.0, 2.0, 0.0, 1e3])
    est = CO2TreeClassifier(nu=0.3, standardize=standardize, random_state=0, **FAST)
    plain = est.fit(X, y).predict(X_test)
    rescaled = est.fit(X * a + c, y).predict(X_test * a + c)
    assert np.mean(plain == rescaled) > 0.99
    assert est.n_oblique_splits_ >= 3  # the invariance covers optimised oblique splits, not just axis ones


def test_training_points_reach_the_leaves_they_were_grown_in():
    """Leaf ``n_samples`` recorded during growth equal the counts ``Tree.apply`` gives: fit-time and
    predict-time routing of the oblique splits agree."""
    X, y = _three_classes(n=400)
    est = CO2TreeClassifier(nu=1.0, standardize="node", random_state=3, **FAST).fit(X, y)
    tree = est.tree_
    counts = np.bincount(tree.apply(X), minlength=tree.n_nodes)
    assert np.array_equal(counts[tree.is_leaf], tree.n_samples[tree.is_leaf])
    assert est.n_oblique_splits_ > 0


def test_max_depth_and_min_samples_leaf_are_respected():
    X, y = _three_classes()
    est = CO2TreeClassifier(max_depth=3, min_samples_leaf=5, random_state=0, **FAST).fit(X, y)
    assert est.tree_.max_depth <= 3
    assert est.tree_.n_samples[est.tree_.is_leaf].min() >= 5


def test_same_seed_same_tree_different_seed_different_tree():
    X, y = _three_classes()
    a, b, c = (CO2TreeClassifier(random_state=s, **FAST).fit(X, y) for s in (1, 1, 2))
    assert a.tree_.n_nodes == b.tree_.n_nodes
    assert (a.tree_.W != b.tree_.W).nnz == 0 and np.array_equal(a.tree_.bias, b.tree_.bias)
    assert a.tree_.n_nodes != c.tree_.n_nodes or not np.array_equal(a.tree_.bias, c.tree_.bias)


def test_same_seed_gives_an_identical_forest_with_any_number_of_threads():
    X, y = _three_classes()
    f = CO2ForestClassifier(n_estimators=4, random_state=7, n_jobs=1, **FAST).fit(X, y)
    g = CO2ForestClassifier(n_estimators=4, random_state=7, n_jobs=2, **FAST).fit(X, y)
    g3 = CO2ForestClassifier(n_estimators=4, random_state=7, n_jobs=3, **FAST).fit(X, y)  # trees from a queue
    h = CO2ForestClassifier(n_estimators=4, random_state=8, n_jobs=2, **FAST).fit(X, y)
    for a, b, c in zip(f.estimators_, g.estimators_, g3.estimators_):
        for other in (b, c):
            assert a.tree_.n_nodes == other.tree_.n_nodes
            assert (a.tree_.W != other.tree_.W).nnz == 0 and np.array_equal(a.tree_.bias, other.tree_.bias)
    assert np.array_equal(f.predict_proba(X), g.predict_proba(X))
    assert not np.array_equal(f.predict_proba(X), h.predict_proba(X))
    assert all(isinstance(e, CO2TreeClassifier) and e.nu == f.nu for e in f.estimators_)


def test_forest_beats_its_single_trees_on_held_out_data():
    X, y = _three_classes(n=600, seed=1)
    X_test, y_test = _three_classes(n=1000, seed=2)
    forest = CO2ForestClassifier(n_estimators=15, nu=1.0, random_state=0, **FAST).fit(X, y)
    single = np.mean([est.tree_.predict_proba(X_test).argmax(1) == np.searchsorted(forest.classes_, y_test)
                      for est in forest.estimators_])
    assert forest.score(X_test, y_test) > single + 0.03
    assert forest.predict_proba(X_test).shape == (1000, 3)
    assert np.allclose(forest.predict_proba(X_test).sum(axis=1), 1.0)


@pytest.mark.parametrize("Est", [CO2TreeClassifier, CO2ForestClassifier])
def test_errors_for_nan_one_class_wrong_width_and_bad_params(Est):
    X, y = _three_classes(n=60)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Est(**FAST).fit(bad, y)
    with pytest.raises(ValueError, match="class"):
        Est(**FAST).fit(X, np.zeros(60))
    with pytest.raises(ValueError, match="nu"):
        Est(nu=0.0).fit(X, y)
    est = Est(random_state=0, **FAST).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :3])
    inf = X.copy()
    inf[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        est.predict(inf)


@parametrize_with_checks([CO2TreeClassifier(max_epochs=3), CO2ForestClassifier(n_estimators=3, max_epochs=3)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_packed_staged_prediction_equals_averaging_the_trees_one_by_one():
    """The one-kernel forest prediction (all trees routed together, prefix sums per stage) equals the mean
    of the trees' own ``Tree.predict_proba`` at every forest size; staged output defaults to every size."""
    X, y = _three_classes(n=300, seed=5)
    X_test, _ = _three_classes(n=200, seed=6)
    forest = CO2ForestClassifier(n_estimators=5, nu=1.0, random_state=0, **FAST).fit(X, y)
    stages = list(forest.staged_predict_proba(X_test))
    assert len(stages) == 5
    running = np.zeros((200, 3))
    for m, (est, staged) in enumerate(zip(forest.estimators_, stages), start=1):
        running[:, est.classes_] += est.tree_.predict_proba(X_test)
        assert np.allclose(staged, running / m, atol=1e-12)
        assert np.allclose(forest.predict_proba(X_test, n_trees=m), running / m, atol=1e-12)
    assert [s.shape for s in forest.staged_predict_proba(X_test, [2, 4])] == [(200, 3), (200, 3)]


@pytest.mark.parametrize("seed", range(4))
def test_presorted_axis_search_on_an_index_slice_equals_the_reference_search(seed):
    """The grower's axis search over a node's slice of the presorted lists of distinct points (a bootstrap
    sample repeats points; the lists hold each once, with its multiplicity) returns the same feature,
    threshold and gain as ``best_axis_split`` on the copied rows, repeats included, at the root and at both
    children after the lists are partitioned by a split."""
    from treeopt.greedy._co2_grow import _best_axis, _xlogx_table, feature_order, partition_presorted, presort
    from treeopt.greedy._radix import stable_sort_workspace
    from treeopt.greedy._criteria import best_axis_split
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(80, 5)), 1)  # ties
    y = rng.integers(0, 3, 80)
    idx = rng.integers(0, 80, 120)
    S, mult = presort(feature_order(X), idx)
    assert np.array_equal(mult, np.bincount(idx, minlength=80))
    feats = rng.permutation(5)
    n = idx.shape[0]
    u = S.shape[1]

    def check(start, stop):
        rows = np.repeat(S[0, start:stop], mult[S[0, start:stop]])  # the node's points, repeats included
        total = np.bincount(y[rows], minlength=3)
        m = rows.shape[0]
        node = (False, S, start, mult, np.empty(1, dtype=np.uint64), np.empty(1, dtype=np.int64), stop - start, m, total)
        unused = (np.empty(1), np.arange(1), np.empty(1, dtype=np.int64), stable_sort_workspace(1))  # node sort's
        got = _best_axis((X, y, 3, _xlogx_table(n)), node, feats, 3, 2,
                         (np.empty(m), np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)), unused)
        ref = best_axis_split(X[rows], y[rows], 3, feats[:3].astype(np.int64), 2)
        assert got[0] == ref[0] and got[1] == ref[1] and np.isclose(got[2], ref[2], atol=1e-12)

    for f in range(5):  # every list holds idx's distinct points once, in feature order
        assert np.array_equal(np.sort(S[f]), np.unique(idx)) and np.all(np.diff(X[S[f], f]) >= 0)
    check(0, u)
    goes_right = X[:, 4] + X[:, 1] > 0.3  # an oblique split, by point id
    nl = partition_presorted(S, 0, u, goes_right, np.empty(u, dtype=np.uint32))
    assert nl == np.unique(idx[~goes_right[idx]]).shape[0]
    for f in range(5):
        for lo, hi, side in ((0, nl, False), (nl, u, True)):
            part = S[f, lo:hi]
            assert np.all(goes_right[part] == side) and np.all(np.diff(X[part, f]) >= 0)
            assert np.array_equal(np.sort(part), np.unique(idx[goes_right[idx] == side]))
    check(0, nl)
    check(nl, u)
