"""Regularized greedy forest: the paper's equations and the estimators' contracts."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification, make_regression
from sklearn.utils.estimator_checks import parametrize_with_checks

from treeopt.boosting import RGFClassifier, RGFRegressor
from treeopt.boosting import _kernels as K
from treeopt.boosting._grow import ForestGrower, make_bins
from treeopt.boosting._regularizers import (algorithm4, node_weights, penalty_matrix, representation_matrix,
                                            split_terms)


def random_topology(n_leaves, rng):
    """A tree grown by splitting random leaves: (left, right, parent, depth, leaves)."""
    left, right, parent, depth, leaves = [-1], [-1], [-1], [0], [0]
    while len(leaves) < n_leaves:
        v = leaves.pop(rng.integers(len(leaves)))
        for _ in range(2):
            left.append(-1), right.append(-1), parent.append(v), depth.append(depth[v] + 1)
        left[v], right[v] = len(left) - 2, len(left) - 1
        leaves += [left[v], right[v]]
    arr = [np.array(a, dtype=np.int64) for a in (left, right, parent, depth)]
    return (*arr, np.array(sorted(leaves), dtype=np.int64))


def ancestor_matrix(parent, leaves):
    """A[u, v] = 1 if node v is leaf u or one of its ancestors (the equivalence condition of Sec. 5.4)."""
    A = np.zeros((len(leaves), len(parent)))
    for k, u in enumerate(leaves):
        v = u
        while v >= 0:
            A[k, v] = 1.0
            v = parent[v]
    return A


def min_penalty_direct(parent, depth, leaves, alpha, gamma):
    """The minimiser of eq. (9) by a direct weighted least-norm solve: beta = W^-1 A' (A W^-1 A')^-1 alpha."""
    A = ancestor_matrix(parent, leaves)
    winv = float(gamma) ** -np.asarray(depth, dtype=float)
    beta = winv * (A.T @ np.linalg.solve((A * winv) @ A.T, alpha))
    return beta, 0.5 * np.sum(float(gamma) ** depth * beta ** 2)


# ---------------------------------------------------------------- Sec. 5.3.1: the split's Newton step
def test_l2_square_split_step_is_the_closed_form():
    """Square loss + L2: the Newton step of eq. (7) equals delta_k = (sum(y - h) - n lam alpha) / (n_k + n lam)
    (Sec. 5.3.1), and the scan picks the split whose exact objective change is the smallest."""
    rng = np.random.default_rng(0)
    n, lam, alpha = 60, 0.3, 0.7
    X = rng.integers(0, 8, size=(n, 3)).astype(float)
    y = rng.normal(size=n)
    h = alpha + rng.normal(scale=0.1, size=n)           # model output; this leaf's weight is alpha
    Xb, thresholds, n_bins, offsets = make_bins(X, 255)
    Xl = Xb - offsets[None, :]                          # local bin numbers
    g, hh = h - y, np.ones(n)
    order = np.arange(n, dtype=np.int64)
    hist = K.build_hist(Xb, order, 0, n, g, hh, int(n_bins.sum()))
    grad, diag, cross, dG0 = split_terms(None, None, None, None, [0], np.array([alpha]), 0, "l2")
    gain, f, b, d1, d2 = K.scan_split(*hist, n_bins, offsets, 5, n * lam * diag, n * lam * cross, n * lam * grad,
                                      n * lam * dG0)
    go_left = Xl[:, f] <= b
    np.testing.assert_array_equal(go_left, X[:, f] < thresholds[offsets[f] + b])   # the stored threshold
    for mask, d in ((go_left, d1), (~go_left, d2)):
        closed = (np.sum(y[mask] - h[mask]) - n * lam * alpha) / (mask.sum() + n * lam)
        assert d == pytest.approx(closed, rel=1e-12)

    def q_change(mask):  # exact change of Q = sum (h - y)^2 / (2n) + lam/2 sum alpha^2 at the optimum offsets
        total = 0.0
        for m in (mask, ~mask):
            dk = (np.sum(y[m] - h[m]) - n * lam * alpha) / (m.sum() + n * lam)
            total += np.sum((h[m] + dk - y[m]) ** 2 - (h[m] - y[m]) ** 2) / (2 * n) + lam * (alpha + dk) ** 2 / 2
        return total - lam * alpha ** 2 / 2
    assert -gain / n == pytest.approx(q_change(go_left), rel=1e-9, abs=1e-12)
    best = min(q_change(Xl[:, ff] <= bb) for ff in range(3) for bb in range(n_bins[ff] - 1)
               if 5 <= np.sum(Xl[:, ff] <= bb) <= n - 5)
    assert -gain / n == pytest.approx(best, rel=1e-9, abs=1e-12)


# ---------------------------------------------------------------- Sec. 5.4.2: Algorithm 4 and eq. (9)
@settings(max_examples=25, deadline=None)
@given(n_leaves=st.integers(2, 9), gamma=st.sampled_from([1.0, 2.0, 4.0]), seed=st.integers(0, 10_000))
def test_algorithm4_converges_to_the_minimum_of_eq9(n_leaves, gamma, seed):
    rng = np.random.default_rng(seed)
    left, right, parent, depth, leaves = random_topology(n_leaves, rng)
    alpha = rng.normal(size=n_leaves)
    alpha_nodes = np.zeros(len(left))
    alpha_nodes[leaves] = alpha
    beta, minimum = min_penalty_direct(parent, depth, leaves, alpha, gamma)
    bar_direct = ancestor_matrix(parent, np.arange(len(left))) @ beta  # bar_beta_v = sum over A(v)
    for gs in (False, True):   # Algorithm 4 and its variant Algorithm 6
        bar, _ = algorithm4(left, right, parent, alpha_nodes, gamma, n_iter=5000, tol=1e-14, gauss_seidel=gs)
        np.testing.assert_allclose(bar, bar_direct, atol=1e-9)
    R = representation_matrix(left, right, parent, depth, leaves, "min_penalty", gamma)
    np.testing.assert_allclose(R @ alpha, bar_direct, atol=1e-9)
    M = penalty_matrix(left, right, parent, depth, leaves, "min_penalty", gamma)
    assert 0.5 * alpha @ M @ alpha == pytest.approx(minimum, rel=1e-9, abs=1e-12)


def test_min_penalty_not_above_any_equivalent_model():
    rng = np.random.default_rng(3)
    left, right, parent, depth, leaves = random_topology(7, rng)
    alpha = rng.normal(size=7)
    M = penalty_matrix(left, right, parent, depth, leaves, "min_penalty", 2.0)
    A = ancestor_matrix(parent, leaves)
    beta0 = np.linalg.lstsq(A, alpha, rcond=None)[0]
    null = np.linalg.svd(A)[2][A.shape[0]:]
    for _ in range(20):   # other equivalent models: beta0 + null-space moves
        beta = beta0 + rng.normal(size=null.shape[0]) @ null
        np.testing.assert_allclose(A @ beta, alpha, atol=1e-10)
        assert 0.5 * alpha @ M @ alpha <= 0.5 * np.sum(2.0 ** depth * beta ** 2) + 1e-12


# ---------------------------------------------------------------- Sec. 5.4.3: eq. (14)
@settings(max_examples=25, deadline=None)
@given(n_leaves=st.integers(2, 9), seed=st.integers(0, 10_000))
def test_sum_to_zero_representation_satisfies_eq14(n_leaves, seed):
    rng = np.random.default_rng(seed)
    left, right, parent, depth, leaves = random_topology(n_leaves, rng)
    alpha = rng.normal(size=n_leaves)
    bar = representation_matrix(left, right, parent, depth, leaves, "min_penalty_sib") @ alpha
    internal = np.flatnonzero(left >= 0)
    np.testing.assert_allclose(bar[leaves], alpha)                                        # eq. (14), leaves
    np.testing.assert_allclose(bar[internal], (bar[left[internal]] + bar[right[internal]]) / 2)  # internal
    beta = node_weights(representation_matrix(left, right, parent, depth, leaves, "min_penalty_sib"), parent) @ alpha
    np.testing.assert_allclose(beta[left[internal]] + beta[right[internal]], 0.0, atol=1e-12)  # siblings
    np.testing.assert_allclose(ancestor_matrix(parent, leaves) @ beta, alpha, atol=1e-12)    # equivalent


# ---------------------------------------------------------------- equivalent models predict the same
@pytest.mark.parametrize("regularizer", ["l2", "min_penalty", "min_penalty_sib"])
def test_equivalent_representations_predict_the_same(regularizer):
    X, y = make_regression(n_samples=300, n_features=5, noise=0.5, random_state=0)
    model = RGFRegressor(max_leaf_nodes=60, l2=0.05, regularizer=regularizer, gamma=2.0, opt_interval=20).fit(X, y)
    total = np.full(X.shape[0], model.intercept_)
    for est in model.estimators_:
        tree = est.tree_
        leaves = tree.leaves
        alpha = tree.value[leaves, 0]
        leaf_only = tree.predict_value(X)[:, 0]
        path = tree.decision_path(X).toarray()
        for reg in ("l2", "min_penalty", "min_penalty_sib"):
            parent = np.full(tree.n_nodes, -1)
            for v in np.flatnonzero(tree.left >= 0):
                parent[tree.left[v]] = parent[tree.right[v]] = v
            R = representation_matrix(tree.left, tree.right, parent, tree.depth, leaves, reg, 2.0)
            beta = node_weights(R, parent) @ alpha
            np.testing.assert_allclose(path @ beta, leaf_only, atol=1e-10)   # sum over the path = leaf weight
        total += leaf_only
    np.testing.assert_allclose(total, model.predict(X), atol=1e-10)          # shared Tree format = estimator


# ---------------------------------------------------------------- Sec. 5.3.2: fully-corrective step
def tree_structures(forest):
    """(parent, depth, leaves) per tree of a GrownForest, in the tree's own node numbering."""
    bounds = [*forest.roots.tolist(), len(forest.left)]
    out = []
    for start, stop in zip(bounds, bounds[1:]):
        parent = np.where(forest.parent[start:stop] >= 0, forest.parent[start:stop] - start, -1)
        depth = np.zeros(stop - start, dtype=np.int64)
        for v in range(1, stop - start):  # a parent is numbered before its children
            depth[v] = depth[parent[v]] + 1
        out.append((start, parent, depth, np.flatnonzero(forest.left[start:stop] < 0)))
    return out


def reference_objective(forest, X, y, loss, regularizer, lam, gamma):
    """Q of eq. (5) computed apart from the learner: the loss of the exported forest's predictions on raw X
    (square 1/2 (h - y)^2, exponential exp(-y h), logistic log(1 + exp(-y h)), averaged) plus lam/2 sum alpha^2
    (L2) or lam times eq. (9)'s minimum over equivalent node weights (min-penalty, by a direct solve)."""
    h = forest.predict(X)
    per_point = {"squared": 0.5 * (h - y) ** 2, "exponential": np.exp(-y * h),
                 "logistic": np.logaddexp(0.0, -y * h)}[loss]
    penalty = 0.0
    for start, parent, depth, leaves in tree_structures(forest):
        alpha = forest.value[start + leaves]
        if regularizer == "l2":
            penalty += 0.5 * lam * float(alpha @ alpha)
        else:
            penalty += lam * min_penalty_direct(parent, depth, leaves, alpha, gamma)[1]
    return float(per_point.mean()) + penalty


@pytest.mark.parametrize("loss,regularizer", [("squared", "l2"), ("squared", "min_penalty"), ("exponential", "l2"),
                                              ("logistic", "l2"), ("logistic", "min_penalty")])
def test_corrective_step_never_increases_the_regularised_loss(loss, regularizer):
    """Eq. (8): fully-corrective coordinate descent never raises Q. Q is computed apart from the learner's own
    bookkeeping (reference_objective), which the learner's recorded objective must also equal."""
    if loss == "squared":
        X, y = make_regression(n_samples=400, n_features=6, noise=1.0, random_state=1)
        y = (y - y.mean()) / y.std()
    else:
        X, yc = make_classification(n_samples=400, n_features=6, random_state=1)
        y = np.where(yc == 1, 1.0, -1.0)
    Xb, thresholds, n_bins, offsets = make_bins(X, 255)
    lam, gamma = 0.01, 2.0
    grower = ForestGrower(loss=loss, regularizer=regularizer, l2=lam, gamma=gamma, max_leaf_nodes=40,
                          min_samples_leaf=10, opt_interval=1000, n_iter=1, learning_rate=0.5, n_tree_search=1,
                          max_bins=255)
    forest = grower.fit(Xb, n_bins, offsets, thresholds, y)
    values = [reference_objective(forest, X, y, loss, regularizer, lam, gamma)]
    assert forest.history[-1][1] == pytest.approx(values[0], rel=1e-9)
    for _ in range(15):
        grower.correct()
        values.append(reference_objective(grower._export(), X, y, loss, regularizer, lam, gamma))
    assert all(b <= a + 1e-12 * abs(a) for a, b in zip(values, values[1:])), values
    assert values[-1] < values[0]


def test_logistic_rgf_lowers_the_reference_objective_as_it_grows():
    """RGFClassifier with the logistic loss: the regularised logistic objective of eq. (5), computed from the
    fitted estimator's public decision function and leaf weights, is below the empty model's (log 2) and falls
    as the leaf budget grows."""
    X, yc = make_classification(n_samples=500, n_features=6, random_state=3)
    y = np.where(yc == 1, 1.0, -1.0)
    lam = 0.01

    def objective(budget):
        model = RGFClassifier(loss="logistic", l2=lam, max_leaf_nodes=budget, random_state=0).fit(X, yc)
        weights = np.concatenate([e.tree_.value[e.tree_.left < 0].ravel() for e in model.estimators_])
        return np.mean(np.logaddexp(0.0, -y * model.decision_function(X))) + 0.5 * lam * weights @ weights

    values = [objective(budget) for budget in (100, 200, 400)]
    assert values[0] < np.log(2.0)
    assert values[0] > values[1] > values[2]


def best_first_tree(X, r, n_leaves, min_leaf):
    """A least-squares regression tree of n_leaves leaves grown best-first (the node whose best split lowers the
    squared error most is split next), at least min_leaf points per leaf: the leaf (list of point indices) of
    each point and each leaf's mean, Alg. 5's tree learner A(X, Y~) for square loss."""
    def best_split(idx):
        best = (0.0, None)
        for f in range(X.shape[1]):
            order = idx[np.argsort(X[idx, f], kind="stable")]
            values = X[order, f]
            for cut in range(min_leaf, len(order) - min_leaf + 1):
                if values[cut - 1] == values[cut]:
                    continue
                left, right = order[:cut], order[cut:]
                gain = (np.sum((r[order] - r[order].mean()) ** 2) - np.sum((r[left] - r[left].mean()) ** 2)
                        - np.sum((r[right] - r[right].mean()) ** 2))
                if gain > best[0] + 1e-12:
                    best = (gain, (left, right))
        return best
    leaves = [np.arange(len(r))]
    while len(leaves) < n_leaves:
        splits = [best_split(idx) for idx in leaves]
        k = int(np.argmax([g for g, _ in splits]))
        if splits[k][1] is None:
            break
        leaves[k:k + 1] = list(splits[k][1])
    return leaves


def test_gbdt_baseline_is_the_papers_algorithm5_on_a_tiny_case():
    """The gbdt method (the RGF paper's baseline, Sec. 6.2.2) against Alg. 5 written out: h_0 = 0, K rounds of a
    J-leaf best-first least-squares tree on the residuals (square loss: beta_kj is the leaf mean), step s, 10
    points per leaf. Targets are centred (Sec. 6.2.1), so scikit-learn's initial mean is Alg. 5's h_0 = 0."""
    from treeopt.experiments.plan.methods import make_estimator

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(80, 2))
    y = np.sin(6 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=80)
    y -= y.mean()
    J, s, K = 4, 0.3, 6
    h = np.zeros(len(y))
    for _ in range(K):
        residual = y - h  # -dL/dh of 1/2 (h - y)^2
        for idx in best_first_tree(X, residual, J, 10):
            h[idx] += s * residual[idx].mean()
    model = make_estimator("gbdt", {"max_leaf_nodes": J, "learning_rate": s, "n_estimators": K,
                                    "min_samples_leaf": 10}, seed=0).fit(X, y)
    np.testing.assert_allclose(model.predict(X), h, atol=1e-10)


# ---------------------------------------------------------------- staged models, determinism
def test_staged_models_equal_fits_with_that_budget():
    X, y = make_regression(n_samples=500, n_features=6, noise=1.0, random_state=2)
    model = RGFRegressor(max_leaf_nodes=300, l2=0.01).fit(X, y)
    stages = list(model.staged_predict(X))
    assert model.stage_sizes_["max_leaf_nodes"] == [100, 200, 300]
    assert len(stages) == 3 and model.stage_sizes_["n_leaves"][-1] == model.n_leaves_
    np.testing.assert_allclose(stages[-1], model.predict(X))
    small = RGFRegressor(max_leaf_nodes=200, l2=0.01).fit(X, y)
    np.testing.assert_allclose(stages[1], small.predict(X), rtol=1e-10, atol=1e-10)


def _stage_outputs_one_by_one(forest, X):
    """Each stored stage scored alone, as the kernel did before it learnt to climb (the reference)."""
    out = np.zeros((len(forest.stage_budget), X.shape[0]))
    for s in range(out.shape[0]):
        for i in range(X.shape[0]):
            for t in range(min(forest.stage_trees[s], forest.roots.size)):
                node = forest.roots[t]
                while forest.left[node] >= 0:
                    node = forest.right[node] if X[i, forest.feature[node]] >= forest.threshold[node] \
                        else forest.left[node]
                while node >= forest.stage_limit[s, t]:
                    node = forest.parent[node]
                out[s, i] += forest.stage_value[s, node]
    return out


def test_staged_outputs_equal_each_stage_scored_alone_bit_for_bit():
    X, y = make_regression(n_samples=300, n_features=5, noise=5.0, random_state=3)
    model = RGFRegressor(max_leaf_nodes=180, l2=0.01, opt_interval=20).fit(X, y)
    forest = model.forests_[0]
    assert len(forest.stage_budget) == 9
    reference = _stage_outputs_one_by_one(forest, X[:60])
    assert np.array_equal(forest.predict_stages(X[:60]), reference)
    assert np.array_equal(forest.predict_stages(X[:60], [0, 4, 8]), reference[[0, 4, 8]])
    assert np.array_equal(forest.predict_stages(X[:60], [3]), reference[[3]])
    assert forest.predict_stages(X[:60], []).shape == (0, 60)
    every = list(model.staged_predict(X))
    some = list(model.staged_predict(X, stage_indices=[1, 5, 8]))
    assert len(some) == 3 and all(np.array_equal(a, every[s]) for a, s in zip(some, [1, 5, 8]))
    with pytest.raises(ValueError, match="ascending"):
        list(model.staged_predict(X, stage_indices=[5, 1]))
    with pytest.raises(ValueError, match="below 9"):
        list(model.staged_predict(X, stage_indices=[9]))


def test_staged_stage_indices_one_vs_rest():
    """Three classes, one forest each: the chosen stages are those of the whole sequence."""
    X, y = make_classification(n_samples=400, n_features=6, n_classes=3, n_informative=4, random_state=1)
    model = RGFClassifier(max_leaf_nodes=400, l2=0.01, opt_interval=25, min_samples_leaf=20).fit(X, y)
    lengths = [len(f.stage_budget) for f in model.forests_]
    every = list(model.staged_predict_proba(X))
    wanted = [0, len(every) // 2, len(every) - 1]
    some = list(model.staged_predict_proba(X, stage_indices=wanted))
    assert lengths == [16, 16, 16] and all(np.array_equal(a, every[s]) for a, s in zip(some, wanted))
    labels = list(model.staged_predict(X, stage_indices=wanted[1:]))
    assert np.array_equal(labels[-1], model.predict(X))


def test_same_seed_same_model():
    X, y = make_classification(n_samples=300, n_features=8, n_classes=3, n_informative=4, random_state=0)
    a = RGFClassifier(max_leaf_nodes=120, random_state=0).fit(X, y)
    b = RGFClassifier(max_leaf_nodes=120, random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    assert len(a.estimators_) == a.n_trees_ and sum(e.tree_.leaves.size for e in a.estimators_) == a.n_leaves_


@pytest.mark.parametrize("loss", ["squared", "exponential", "logistic"])
def test_classifier_losses_learn(loss):
    X, y = make_classification(n_samples=600, n_features=8, random_state=4)
    model = RGFClassifier(max_leaf_nodes=200, loss=loss, l2=0.01).fit(X[:400], y[:400])
    assert np.mean(model.predict(X[400:]) == y[400:]) > 0.8
    proba = model.predict_proba(X[400:])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    staged = list(model.staged_predict_proba(X[400:]))
    np.testing.assert_allclose(staged[-1], proba)


def test_exponential_loss_is_stabilised():
    """Large margins would overflow exp(-y h) without the mu of Sec. 6.2.3; scores stay finite."""
    X, y = make_classification(n_samples=300, n_features=4, class_sep=5.0, random_state=0)
    model = RGFClassifier(max_leaf_nodes=200, loss="exponential", l2=1e-20).fit(X, y)
    assert np.all(np.isfinite(model.decision_function(X)))


def test_errors():
    X, y = make_regression(n_samples=50, n_features=3, random_state=0)
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError):
        RGFRegressor().fit(X_nan, y)
    with pytest.raises(ValueError, match="class"):
        RGFClassifier().fit(X, np.zeros(50))
    with pytest.raises(ValueError):
        RGFRegressor(regularizer="min_penalty", gamma=0.5).fit(X, y)
    with pytest.raises(ValueError):
        RGFRegressor().fit(X, y).predict(X[:, :2])


@parametrize_with_checks([RGFRegressor(max_leaf_nodes=50, min_samples_leaf=1),
                          RGFClassifier(max_leaf_nodes=50, min_samples_leaf=1),
                          RGFClassifier(max_leaf_nodes=30, regularizer="min_penalty", gamma=2.0, loss="logistic",
                                        min_samples_leaf=1)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_searching_two_recent_trees():
    """t = 2 (Sec. 5.3.1): leaves of the two most recent trees may be split; the regularised loss it reaches at
    the same budget is no worse than a little above t = 1's, and staged models still equal budget fits."""
    X, y = make_regression(n_samples=400, n_features=5, noise=1.0, random_state=5)
    y = (y - y.mean()) / y.std()
    one = RGFRegressor(max_leaf_nodes=200, l2=0.01, n_tree_search=1).fit(X, y)
    two = RGFRegressor(max_leaf_nodes=200, l2=0.01, n_tree_search=2).fit(X, y)
    q1, q2 = one.forests_[0].history[-1][1], two.forests_[0].history[-1][1]
    assert q2 <= 1.1 * q1
    small = RGFRegressor(max_leaf_nodes=100, l2=0.01, n_tree_search=2).fit(X, y)
    np.testing.assert_allclose(next(iter(two.staged_predict(X))), small.predict(X), rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------- where a weight correction starts
def test_correction_start_changes_only_the_starting_point():
    """Both starts minimise the same strictly convex Q (square loss, L2, lambda > 0) over the same leaves: run
    to convergence, the first correction gives the same weights; with one sweep the starts differ."""
    X, y = make_regression(n_samples=300, n_features=4, noise=1.0, random_state=3)
    y = (y - y.mean()) / y.std()
    fits = {(start, it): RGFRegressor(max_leaf_nodes=40, l2=0.1, opt_interval=40, n_iter=it, learning_rate=1.0,
                                      correction_start=start).fit(X, y)
            for start in ("split", "zero") for it in (1, 3000)}
    np.testing.assert_allclose(fits["split", 3000].predict(X), fits["zero", 3000].predict(X), atol=1e-7)
    assert np.max(np.abs(fits["split", 1].predict(X) - fits["zero", 1].predict(X))) > 1e-3


def test_zero_start_reproduces_rgf_python():
    """``correction_start="zero"`` is rgf-python's behaviour: on integer features (exact splits on both sides,
    thresholds at midpoints) the two programs grow the same forest and predict the same."""
    rgf = pytest.importorskip("rgf.sklearn")
    rng = np.random.default_rng(4)
    X = rng.integers(0, 20, size=(400, 4)).astype(float)
    y = np.sin(X[:, 0] / 3.0) + (X[:, 1] > 9) - 0.05 * X[:, 2] + rng.normal(scale=0.1, size=400)
    kw = dict(l2=0.1, min_samples_leaf=10, opt_interval=50, learning_rate=0.5)
    ours = RGFRegressor(max_leaf_nodes=200, correction_start="zero", **kw).fit(X, y)
    theirs = rgf.RGFRegressor(max_leaf=200, algorithm="RGF", loss="LS", test_interval=50, normalize=True,
                              **kw).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-4, atol=1e-4)
    paper = RGFRegressor(max_leaf_nodes=200, **kw).fit(X, y)
    assert np.max(np.abs(paper.predict(X) - theirs.predict(X))) > 1e-3


@settings(max_examples=25, deadline=None)
@given(n_leaves=st.integers(1, 12), gamma=st.sampled_from([1.0, 2.0, 4.0]), seed=st.integers(0, 10_000),
       regularizer=st.sampled_from(["min_penalty", "min_penalty_sib"]))
@example(n_leaves=11, gamma=4.0, seed=1218, regularizer="min_penalty_sib")  # a zero entry left with 4e-12 round-off
def test_split_terms_kernel_matches_the_matrix_form(n_leaves, gamma, seed, regularizer):
    """The numba kernel's split terms equal the reference built from the full matrices M and M~."""
    from treeopt.boosting._reg_kernels import MIN_PENALTY, MIN_PENALTY_SIB, split_terms_all
    rng = np.random.default_rng(seed)
    left, right, parent, depth, leaves = random_topology(n_leaves, rng)
    alpha = rng.normal(size=leaves.size)
    code = MIN_PENALTY if regularizer == "min_penalty" else MIN_PENALTY_SIB
    got = np.array(split_terms_all(left, right, parent, depth, leaves, alpha, code, gamma))
    want = np.array([split_terms(left, right, parent, depth, leaves, alpha, k, regularizer, gamma)
                     for k in range(leaves.size)]).T
    # entries that cancel to zero carry the round-off of the largest terms (the matrix reference itself is
    # off by ~1e-16 of them), so the absolute tolerance scales with the problem, not a fixed 1e-12
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12 * max(1.0, np.abs(want).max()))
