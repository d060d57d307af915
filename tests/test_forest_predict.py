"""The packed forest's dense-oblique-row prediction kernel (treeopt.forest._predict)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from treeopt.forest._predict import dense_oblique_rows, dense_oblique_rows_of_trees, forest_accumulate_dense
from treeopt.forest.co2 import CO2ForestClassifier
from treeopt.forest.oc1 import OC1ForestClassifier
from treeopt.trees._kernels import apply_dense, forest_accumulate


def _data(n, seed, p=5, k=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.digitize(X[:, 0] - X[:, 2] + 0.5 * X[:, 3] + 0.3 * rng.normal(size=n), np.linspace(-1, 1, k - 1))
    return X, y


def _csr_sum(pk, X, first, last):
    out = np.zeros((X.shape[0], pk.values.shape[1]))
    forest_accumulate(X, (pk.roots, pk.left, pk.right, pk.feature, pk.bias, *pk.csr(), pk.values), first, last, out)
    return out


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), nu=st.sampled_from([0.1, 1.0, 10.0]), first=st.integers(0, 3))
def test_dense_rows_route_bit_identically_to_the_csr_rows(seed, nu, first):
    """Same leaves, same sums, to the last bit: the dense dot product adds the same products in the same
    order as the sorted CSR row (plus exact zeros)."""
    X, y = _data(200, seed)
    X_test, _ = _data(300, seed + 1)
    forest = CO2ForestClassifier(n_estimators=4, nu=nu, max_epochs=10, random_state=seed).fit(X, y)
    pk = forest._packed()
    assert pk.dense is not None, "CO2 rows are dense: the fast path must be taken"
    dense = np.zeros((300, pk.values.shape[1]))
    orow, W = pk.dense
    forest_accumulate_dense(X_test, pk.roots, pk.left, pk.right, pk.feature, pk.bias, orow, W, pk.values,
                            first, 4, dense)
    assert np.array_equal(dense, _csr_sum(pk, X_test, first, 4))
    # and each tree alone: the leaf reached is the tree store's leaf
    for est in forest.estimators_[first:]:
        t = est.tree_
        leaves = apply_dense(X_test, t.left, t.right, t.feature, t.bias, t.W.indptr, t.W.indices, t.W.data)
        assert np.array_equal(t.leaf_probabilities()[leaves], est.tree_.predict_proba(X_test))


def test_dense_rows_hold_the_csr_weights_and_only_oblique_nodes_get_one():
    X, y = _data(200, 3)
    pk = CO2ForestClassifier(n_estimators=3, max_epochs=5, random_state=0).fit(X, y)._packed()
    orow, W = pk.dense
    oblique = (pk.left >= 0) & (pk.feature < 0)
    assert oblique.any() and np.all(orow[~oblique] == -1)
    assert sorted(orow[oblique]) == list(range(W.shape[0]))
    indptr, indices, data = pk.csr()
    for node in np.flatnonzero(oblique):
        lo, hi = indptr[node], indptr[node + 1]
        expect = np.zeros(X.shape[1])
        expect[indices[lo:hi]] = data[lo:hi]
        assert np.array_equal(W[orow[node]], expect)


def _one_oblique_node(indices, data, p):
    """A 3-node tree: oblique root with the given CSR row, two leaves."""
    left = np.array([1, -1, -1])
    feature = np.array([-1, -2, -2])
    indptr = np.array([0, len(indices), len(indices), len(indices)])
    return left, feature, indptr, np.array(indices, dtype=np.int64), np.array(data, dtype=float), p


def test_dense_rows_are_refused_when_unsorted_or_too_sparse():
    assert dense_oblique_rows(*_one_oblique_node([0, 2, 3], [1.0, 2.0, 3.0], 4)) is not None
    # an unsorted row would add its products in another order than the dense sum
    assert dense_oblique_rows(*_one_oblique_node([2, 0, 3], [1.0, 2.0, 3.0], 4)) is None
    assert dense_oblique_rows(*_one_oblique_node([0, 0, 3], [1.0, 2.0, 3.0], 4)) is None
    # 1 of 4 features: the dense copy would take more than twice the CSR memory
    assert dense_oblique_rows(*_one_oblique_node([1], [1.0], 4)) is None


def test_a_forest_of_sparse_oblique_rows_still_predicts_through_csr():
    """Forests whose rows are refused keep the CSR kernel and the same probabilities."""
    X, y = _data(200, 4)
    forest = CO2ForestClassifier(n_estimators=3, max_epochs=5, random_state=0).fit(X, y)
    before = forest.predict_proba(X)
    forest._packed_forest.dense = None
    assert np.array_equal(forest.predict_proba(X), before)


@pytest.mark.parametrize("make", [
    lambda: CO2ForestClassifier(n_estimators=4, max_epochs=5, random_state=1),
    lambda: OC1ForestClassifier(n_estimators=4, random_state=1),
], ids=["co2_dense", "oc1_sparse"])
def test_dense_rows_built_tree_by_tree_equal_those_of_the_concatenated_csr(make):
    """The packed forest builds its dense rows tree by tree (no forest-wide CSR copy); same rows, same refusal."""
    X, y = _data(200, 5)
    forest = make().fit(X, y)
    trees = [est.tree_ for est in forest.estimators_]
    pk = forest._packed()
    reference = dense_oblique_rows(pk.left, pk.feature, *pk.csr(), X.shape[1])
    got = dense_oblique_rows_of_trees(trees, X.shape[1])
    assert (got is None) == (reference is None)
    if got is not None:
        assert np.array_equal(got[0], reference[0]) and np.array_equal(got[1], reference[1])


def test_a_dense_packed_forest_keeps_no_csr_copy_until_asked():
    X, y = _data(200, 6)
    forest = CO2ForestClassifier(n_estimators=3, max_epochs=5, random_state=0).fit(X, y)
    pk = forest._packed()
    assert pk.dense is not None and pk._csr is None
    before = forest.predict_proba(X)
    assert pk._csr is None  # predicting takes the dense path
    pk.dense = None
    assert np.array_equal(forest.predict_proba(X), before)  # the CSR rows, built on demand, route the same
    assert pk._csr is not None
