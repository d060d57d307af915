"""TAO options measured in the Letter chase (issue #8): surrogate loss, accept rule, threshold refinement and
random initial trees through the node's own points."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits

from treeopt.tao import TAOTreeClassifier
from treeopt.tao import _kernels as K
from treeopt.tao._liblinear import oriented_weights, train_model
from treeopt.tao.tao import _random_tree


def _digits():
    X, y = load_digits(return_X_y=True)
    return X[:600] / 16.0, y[:600]


@settings(max_examples=200, deadline=None)
@given(scores=st.lists(st.integers(-5, 5), min_size=1, max_size=40), data=st.data())
def test_best_threshold_is_the_exact_minimiser(scores, data):
    s = np.asarray(scores, dtype=float) / 2.0  # ties on purpose
    target = np.asarray(data.draw(st.lists(st.booleans(), min_size=len(s), max_size=len(s))))
    b0 = data.draw(st.floats(-4, 4))
    err, b = K.best_threshold(s, target, b0)
    # brute force over every threshold that changes the partition (each score, and above the largest)
    cands = np.concatenate([s, [s.max() + 1.0]])
    best = min(np.count_nonzero((s - c >= 0) != target) for c in cands)
    assert err == best
    assert np.count_nonzero((s - b >= 0) != target) == err  # the returned threshold attains it


def test_oblique_scores_route_as_the_tree():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 6))
    rows = np.arange(0, 50, 2, dtype=np.int64)
    idx = np.array([1, 3, 4], dtype=np.int64)
    w = rng.standard_normal(3)
    s = K.oblique_scores(X, rows, idx, w)
    np.testing.assert_allclose(s, X[rows][:, idx] @ w)
    b = float(np.median(s))
    np.testing.assert_array_equal(s - b >= 0, K.oblique_side(X, rows, idx, w, b))


@pytest.mark.parametrize("first_label_positive", [True, False])
def test_logistic_node_decision_matches_liblinear(first_label_positive):
    from liblinear import liblinear as ll

    rng = np.random.default_rng(3)
    X = rng.standard_normal((200, 5))
    target = X[:, 1] + 0.4 * X[:, 3] - 0.1 > 0
    if target[0] != first_label_positive:
        j = np.flatnonzero(target == first_label_positive)[0]
        X[[0, j]], target[[0, j]] = X[[j, 0]], target[[j, 0]]
    Xs = sp.csr_matrix(X)
    model, _ = train_model(Xs, target, 1.0, labels=(1, 2), regularize_bias=False, loss="logistic")
    assert model.param.solver_type == 6  # L1R_LR
    w, b = oriented_weights(model, 5, positive=1)
    prob = ll.problem(np.zeros(200), Xs)
    prob.set_bias(1.0)
    theirs = np.array([ll.liblinear.predict(model, prob.x[i]) for i in range(200)]) == 1
    np.testing.assert_array_equal(X @ w - b >= 0, theirs)
    assert np.mean(theirs == target) > 0.9


def test_unknown_loss_is_rejected():
    X, y = _digits()
    with pytest.raises(ValueError, match="loss"):
        TAOTreeClassifier(loss="hinge").fit(X, y)


def test_accept_always_takes_the_surrogate_solution():
    # with a huge l1 penalty every node's SVM is w = 0 (all points to one side): "error" keeps the CART splits
    # (their care loss is lower), "always" takes the trivial solutions and the tree collapses
    X, y = _digits()
    kw = dict(C=1e-6, max_depth=4, random_state=0, n_jobs=1, max_iter=1)
    kept = TAOTreeClassifier(accept="error", **kw).fit(X, y)
    taken = TAOTreeClassifier(accept="always", **kw).fit(X, y)
    assert kept.tree_.stats()["n_internal"] >= 10
    assert taken.tree_.stats()["n_internal"] < kept.tree_.stats()["n_internal"]
    assert taken.tree_.W.nnz == 0 or np.all(taken.tree_.W.data == 0)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 1000), C=st.sampled_from([0.01, 1.0, 100.0]))
def test_refined_threshold_keeps_training_error_monotone_and_no_worse_per_node(seed, C):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((120, 4)).round(2)
    y = rng.integers(0, 3, 120)
    est = TAOTreeClassifier(C=C, max_depth=3, refine_threshold=True, tol=0.0, max_iter=4, random_state=seed,
                            n_jobs=1).fit(X, y)
    assert np.all(np.diff(est.history_) <= 1e-12)


def test_refined_threshold_lowers_node_care_loss():
    # one node problem: the exact threshold along the SVM's w has at most the SVM threshold's care errors,
    # and strictly fewer on an unbalanced problem where the squared hinge shifts the hyperplane
    rng = np.random.default_rng(1)
    X = rng.standard_normal((400, 3))
    target = X[:, 0] + 0.3 * rng.standard_normal(400) > 1.2  # ~12% positives
    from treeopt.tao._liblinear import l1_svm

    w, b, _ = l1_svm(sp.csr_matrix(X), target, 0.05, regularize_bias=False, seed=0)
    idx = np.flatnonzero(w).astype(np.int64)
    rows = np.arange(400, dtype=np.int64)
    s = K.oblique_scores(X, rows, idx, w[idx])
    before = np.count_nonzero((s - b >= 0) != target)
    err, b2 = K.best_threshold(s, target, b)
    assert err == np.count_nonzero((s - b2 >= 0) != target)
    assert err < before


@pytest.mark.parametrize("node_type", ["oblique", "axis"])
def test_random_tree_splits_through_the_node_points(node_type):
    X, y = _digits()
    X = X + 1e-3 * np.random.default_rng(0).standard_normal(X.shape)  # distinct projections

    def right_child_reached(through):
        tree = _random_tree(X, y, 10, node_type=node_type, depth=6, random_state=0, through=through)
        reach = np.asarray(tree.decision_path(X).sum(axis=0)).ravel()  # points reaching each node
        internal = np.flatnonzero((tree.left >= 0) & (reach > 0))
        return np.all(reach[tree.right[internal]] > 0)

    ok_node = right_child_reached("node")
    ok_any = right_child_reached("any")
    assert ok_node  # the split point itself goes right, so no node's right child starts dead
    assert not ok_any  # through a point of the whole training set, some nodes start with a dead branch
