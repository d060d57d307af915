import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from treeopt.trees import Tree, load_trees, random_tree, save_trees


def stump(w, b, value, value_kind="probabilities"):
    """Root 0 with left leaf 1 and right leaf 2."""
    W = np.zeros((3, len(w)))
    W[0] = w
    return Tree([1, -1, -1], [2, -1, -1], W, [b, 0, 0], value, value_kind=value_kind)


def test_routing_convention_right_iff_wx_minus_b_nonnegative():
    t = stump([1.0, 2.0], 3.0, [[0, 0], [1, 0], [0, 1]])
    X = np.array([[1.0, 1.0], [1.0, 0.999], [3.0, 0.0], [-5.0, 1.0]])
    # w.x - b = 0 (on the plane: right), -0.002 (left), 0 (right), -6 (left)
    assert t.apply(X).tolist() == [2, 1, 2, 1]


def test_axis_nodes_are_inferred_and_cost_one_op():
    t = stump([0.0, 1.0], 0.5, np.eye(3, 2))
    assert t.feature.tolist() == [1, -2, -2]
    o = stump([0.5, 1.0], 0.5, np.eye(3, 2))
    assert o.feature[0] == -1
    assert t.stats()["inference_ops"] == 1.0 and o.stats()["inference_ops"] == 2.0


def test_leaf_rows_of_weights_are_ignored():
    W = np.ones((3, 4))
    t = Tree([1, -1, -1], [2, -1, -1], W, [0, 0, 0], np.eye(3))
    assert t.W.nnz == 4 and t.stats()["nonzero_weights"] == 4


@pytest.mark.parametrize("left,right,msg", [
    ([1, -1, -1], [-1, -1, -1], "both children"),
    ([1, 5, -1], [2, 6, -1], "child ids"),
    ([1, 2, -1], [2, -1, -1], "both children"),
    ([1, -1, -1, -1], [2, -1, -1, -1], "exactly one parent"),
])
def test_malformed_structures_are_rejected(left, right, msg):
    n = len(left)
    with pytest.raises(ValueError, match=msg):
        Tree(left, right, np.zeros((n, 2)), np.zeros(n), np.zeros((n, 2)))


def test_axis_feature_must_match_weight_row():
    W = np.zeros((3, 2))
    W[0] = [0.5, 0.0]
    with pytest.raises(ValueError, match="unit weight row"):
        Tree([1, -1, -1], [2, -1, -1], W, [0, 0, 0], np.eye(3, 2), feature=[0, -2, -2])


def test_bad_inputs_raise_clear_errors():
    t = random_tree(3, 4, 2, random_state=0)
    with pytest.raises(ValueError, match="3 features"):
        t.apply(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        t.apply(np.array([[np.nan, 0, 0, 0]]))
    with pytest.raises(ValueError, match="2-D"):
        t.apply(np.zeros(4))


def test_log_scores_give_softmax_probabilities():
    t = stump([1.0], 0.0, [[0, 0], [np.log(3), 0.0], [0.0, 0.0]], value_kind="log_scores")
    p = t.predict_proba(np.array([[-1.0], [1.0]]))
    np.testing.assert_allclose(p, [[0.75, 0.25], [0.5, 0.5]])


def test_stats_on_hand_built_tree():
    # root oblique (2 nnz) -> left leaf, right axis node -> two leaves
    W = np.zeros((5, 3))
    W[0] = [1.0, -1.0, 0.0]
    W[2] = [0.0, 0.0, 1.0]
    t = Tree([1, -1, 3, -1, -1], [2, -1, 4, -1, -1], W, [0, 0, 0.5, 0, 0], np.eye(5, 2))
    X = np.array([[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 1.0]])
    s = t.stats(X)
    assert (s["depth"], s["n_internal"], s["n_leaves"], s["nonzero_weights"]) == (2, 2, 3, 3)
    assert (s["path_length_min"], s["path_length_max"], s["active_leaves"]) == (1, 2, 3)
    assert s["path_length_mean"] == pytest.approx(5 / 3)
    assert s["inference_ops"] == pytest.approx((2 + 3 + 3) / 3)


def random_data(seed, n, p, k):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) * rng.uniform(0.01, 100)
    # Repeated values and ties exercise threshold rounding.
    X[:, 0] = np.round(X[:, 0], 1)
    y = rng.integers(0, k, n)
    return X, y


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(5, 300), p=st.integers(1, 8), k=st.integers(2, 5),
       max_depth=st.one_of(st.none(), st.integers(1, 8)))
def test_converted_sklearn_classifier_predicts_identically(seed, n, p, k, max_depth):
    X, y = random_data(seed, n, p, k)
    m = DecisionTreeClassifier(criterion="entropy", max_depth=max_depth, random_state=seed).fit(X, y)
    t = Tree.from_sklearn(m)
    Xq, _ = random_data(seed + 1, 200, p, k)
    Xq = np.vstack([X, Xq, X + 1e-9])
    assert np.array_equal(t.apply(Xq), m.apply(Xq))
    assert np.array_equal(t.predict_proba(Xq), m.predict_proba(Xq))
    assert (t.decision_path(Xq) != m.decision_path(Xq)).nnz == 0


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(5, 200), p=st.integers(1, 6))
def test_converted_sklearn_regressor_predicts_identically(seed, n, p):
    X, _ = random_data(seed, n, p, 2)
    y = np.random.default_rng(seed).standard_normal(n)
    m = DecisionTreeRegressor(max_depth=6, random_state=seed).fit(X, y)
    t = Tree.from_sklearn(m)
    assert t.value_kind == "regression"
    assert np.array_equal(t.predict_value(X)[:, 0], m.predict(X))


@pytest.mark.parametrize("oblique", [True, False])
def test_save_load_round_trip_predicts_identically(tmp_path, oblique):
    t = random_tree(6, 5, 3, oblique=oblique, random_state=1)
    X = np.random.default_rng(2).standard_normal((500, 5))
    t.save(tmp_path / "t.npz")
    t2 = Tree.load(tmp_path / "t.npz")
    assert np.array_equal(t.apply(X), t2.apply(X))
    assert np.array_equal(t.predict_proba(X), t2.predict_proba(X))
    assert t2.value_kind == t.value_kind and t2.stats(X) == t.stats(X)
    assert not list(tmp_path.glob("*.tmp*"))


def test_forest_file_and_no_pickle(tmp_path):
    trees = [random_tree(d, 3, 2, random_state=d) for d in (1, 2, 3)]
    save_trees(tmp_path / "f.npz", trees)
    with np.load(tmp_path / "f.npz", allow_pickle=False) as f:  # would fail on object arrays
        assert int(f["n_trees"]) == 3
    back = load_trees(tmp_path / "f.npz")
    X = np.random.default_rng(0).standard_normal((50, 3))
    assert all(np.array_equal(a.apply(X), b.apply(X)) for a, b in zip(trees, back))
    with pytest.raises(ValueError, match="holds 3 trees"):
        Tree.load(tmp_path / "f.npz")


def test_sparse_weights_and_sparse_input_agree_with_dense():
    t = random_tree(4, 6, 2, random_state=3)
    t_sparse = Tree(t.left, t.right, sp.csr_matrix(t.dense_weights()), t.bias, t.value)
    X = np.random.default_rng(4).standard_normal((100, 6))
    assert np.array_equal(t.apply(X), t_sparse.apply(sp.csr_matrix(X)))


def test_apply_matches_a_plain_python_walk():
    t = random_tree(5, 4, 2, random_state=5)
    X = np.random.default_rng(6).standard_normal((300, 4))
    W = t.dense_weights()
    expected = []
    for x in X:
        node = 0
        while t.left[node] >= 0:
            node = t.right[node] if W[node] @ x - t.bias[node] >= 0 else t.left[node]
        expected.append(node)
    assert t.apply(X).tolist() == expected
