"""Tests of the non-greedy oblique trees (Norouzi et al., NeurIPS 2015): inference kernels, bound, estimators."""

import itertools

import numpy as np
import pytest
from sklearn.datasets import load_iris

from treeopt.nongreedy import NonGreedyTreeClassifier, NonGreedyTreeRegressor
from treeopt.nongreedy import _sgd


def _leaf_of_code(g, m):
    node = 0
    while node < m:
        node = 2 * node + 2 if g[node] > 0 else 2 * node + 1
    return node - m


def _loss(Theta, leaf, kind, yi, Y, r):
    if kind == _sgd.LOG_LOSS:
        t = Theta[leaf]
        mx = t.max()
        return mx + np.log(np.exp(t - mx).sum()) - t[yi[r]]
    return float(((Theta[leaf] - Y[r]) ** 2).sum())


def _problem(seed, depth, p, kind, n=6, k=3):
    rng = np.random.default_rng(seed)
    m = 2**depth - 1
    X = rng.normal(size=(n, p))
    W = rng.normal(size=(m, p))
    b = rng.normal(size=m)
    # some zero rows (padding): z = 0 exactly, sgn(0) = +1
    if m > 2:
        W[m - 1] = 0.0
        b[m - 1] = 0.0
    if kind == _sgd.LOG_LOSS:
        Theta = rng.normal(scale=2.0, size=(m + 1, k))
        yi = rng.integers(0, k, size=n).astype(np.int64)
        Y = np.zeros((n, 1))
    else:
        Theta = rng.normal(size=(m + 1, 2))
        yi = np.zeros(n, dtype=np.int64)
        Y = rng.normal(size=(n, 2))
    return X, W, b, Theta, yi, Y


def _brute(X, r, W, b, Theta, kind, yi, Y, codes):
    m = W.shape[0]
    z = W @ X[r] - b
    h = np.where(z >= 0, 1.0, -1.0)
    vals = []
    for g in codes(h):
        g = np.asarray(g, dtype=float)
        vals.append((g - h) @ z + _loss(Theta, _leaf_of_code(g, m), kind, yi, Y, r))
    return max(vals)


CASES = [(s, d, p, kind) for s in range(4) for d in (2, 3, 4) for p in (2, 5)
         for kind in (_sgd.LOG_LOSS, _sgd.SQUARED_LOSS)]


@pytest.mark.parametrize("seed,depth,p,kind", CASES)
def test_exact_inference_is_brute_force_max(seed, depth, p, kind):
    X, W, b, Theta, yi, Y = _problem(seed, depth, p, kind)
    m = W.shape[0]
    data, tree, cache = _sgd.data(X, yi, Y), _sgd.Params(W, b, Theta), _sgd.zcache(m)
    for r in range(X.shape[0]):
        leaf, h_leaf, val = _sgd.exact_inference(data, r, tree, kind, cache)
        want = _brute(X, r, W, b, Theta, kind, yi, Y,
                      lambda h: itertools.product((-1.0, 1.0), repeat=m))
        assert val == pytest.approx(want, rel=1e-10, abs=1e-10)
        assert h_leaf == _sgd.route_all(X[r:r + 1], W, b)[0]
        # the returned leaf attains the value: its cheapest code costs 2|z| on the disagreeing path bits
        z = W @ X[r] - b
        node, c = m + leaf, 0.0
        while node > 0:
            par = (node - 1) // 2
            if (node == 2 * par + 2) != (z[par] >= 0):
                c += 2 * abs(z[par])
            node = par
        assert _loss(Theta, leaf, kind, yi, Y, r) - c == pytest.approx(val, abs=1e-10)


def _ball1(h):
    yield h.copy()
    for i in range(h.shape[0]):
        g = h.copy()
        g[i] = -g[i]
        yield g


@pytest.mark.parametrize("seed,depth,p,kind", CASES)
def test_fast_inference_is_hamming_ball_max(seed, depth, p, kind):
    X, W, b, Theta, yi, Y = _problem(seed, depth, p, kind)
    m = W.shape[0]
    data, tree, cache = _sgd.data(X, yi, Y), _sgd.Params(W, b, Theta), _sgd.zcache(m)
    for r in range(X.shape[0]):
        leaf, flip, val, h_leaf = _sgd.fast_inference(data, r, tree, kind, cache, r + 1)
        assert h_leaf == _sgd.route_all(X[r:r + 1], W, b)[0]
        want = _brute(X, r, W, b, Theta, kind, yi, Y, _ball1)
        assert val == pytest.approx(want, rel=1e-10, abs=1e-10)
        z = W @ X[r] - b
        h = np.where(z >= 0, 1.0, -1.0)
        g = h.copy()
        if flip >= 0:
            g[flip] = -g[flip]
        assert _leaf_of_code(g, m) == leaf
        assert (g - h) @ z + _loss(Theta, leaf, kind, yi, Y, r) == pytest.approx(val, abs=1e-10)


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("kind", [_sgd.LOG_LOSS, _sgd.SQUARED_LOSS])
def test_surrogate_upper_bounds_tree_loss(seed, kind):
    rng = np.random.default_rng(100 + seed)
    depth, p = int(rng.integers(2, 5)), int(rng.integers(2, 6))
    X, W, b, Theta, yi, Y = _problem(seed + 1000, depth, p, kind, n=30)
    data, tree, rows = _sgd.data(X, yi, Y), _sgd.Params(W, b, Theta), np.arange(X.shape[0])
    loss = _sgd.losses_at(_sgd.route_all(X, W, b), Theta, kind, data)
    want = np.array([_loss(Theta, j, kind, yi, Y, r) for r, j in enumerate(_sgd.route_all(X, W, b))])
    np.testing.assert_allclose(loss, want, rtol=1e-12)
    fast, fast_loss, leaves = _sgd.evaluate(data, tree, _sgd.bound(kind, True), rows, rows)
    exact, _, _ = _sgd.evaluate(data, tree, _sgd.bound(kind, False), rows, rows)
    np.testing.assert_allclose(fast_loss, loss, rtol=1e-12)
    np.testing.assert_array_equal(leaves, _sgd.route_all(X, W, b))
    assert np.all(fast >= loss - 1e-12)
    assert np.all(exact >= fast - 1e-12)
    # Stable SGD's bound eq. (14) is above eq. (13) for any assignment, and equal to it at a(x) = f(sgn(Wx))
    assign = np.random.default_rng(seed).integers(0, W.shape[0] + 1, size=X.shape[0])
    stable, _, _ = _sgd.evaluate(data, tree, _sgd.bound(kind, True, True), assign, rows)
    assert np.all(stable >= fast - 1e-12)
    at_leaves, _, _ = _sgd.evaluate(data, tree, _sgd.bound(kind, True, True), leaves, rows)
    np.testing.assert_allclose(at_leaves, fast, rtol=1e-12, atol=1e-12)


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    return X, y


@pytest.mark.parametrize("inference,stable", [("fast", True), ("exact", False), ("fast", False), ("exact", True)])
def test_fit_respects_norm_constraint(iris, inference, stable):
    X, y = iris
    nu = 0.5
    clf = NonGreedyTreeClassifier(max_depth=3, nu=nu, learning_rate=0.1, inference=inference, stable=stable,
                                  init="axis", max_epochs=5, batch_size=16, random_state=0).fit(X, y)
    norm2 = (clf.W_ ** 2).sum(axis=1) + clf.b_ ** 2
    assert np.all(norm2 <= nu + 1e-9)
    assert clf.n_epochs_ >= 1


def test_same_random_state_same_tree(iris):
    X, y = iris
    kw = dict(max_depth=3, init="axis", max_epochs=4, batch_size=20, learning_rate=0.1)
    a = NonGreedyTreeClassifier(random_state=3, **kw).fit(X, y)
    b = NonGreedyTreeClassifier(random_state=3, **kw).fit(X, y)
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(a.b_, b.b_)
    np.testing.assert_array_equal(a.theta_, b.theta_)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_classifier_shapes_and_accuracy(iris):
    X, y = iris
    clf = NonGreedyTreeClassifier(max_depth=3, init="axis", max_epochs=10, batch_size=20, learning_rate=0.1,
                                  random_state=0).fit(X, y)
    proba = clf.predict_proba(X)
    assert proba.shape == (150, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    pred = clf.predict(X)
    assert pred.shape == (150,)
    assert set(np.unique(pred)) <= set(clf.classes_)
    assert np.mean(pred == y) > 0.8  # chance is 1/3
    assert clf.W_.shape == (7, 4) and clf.theta_.shape == (8, 3)


def test_regressor_shapes():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X[:, 0] - 2 * X[:, 1] + 0.1 * rng.normal(size=200)
    reg = NonGreedyTreeRegressor(max_depth=3, max_epochs=5, batch_size=20, random_state=0).fit(X, y)
    pred = reg.predict(X)
    assert pred.shape == (200,)
    assert np.all(np.isfinite(pred))
    assert reg.score(X, y) > 0.5


def _brute_step(X, W, b, Theta, kind, yi, Y, fast, assign, eta):
    """One full-batch Alg. 1 step without momentum or projection, by brute force over the codes."""
    n, m = X.shape[0], W.shape[0]
    gW, gb, gT = np.zeros_like(W), np.zeros_like(b), np.zeros_like(Theta)
    for r in range(n):
        z = W @ X[r] - b
        h = np.where(z >= 0, 1.0, -1.0)
        codes = _ball1(h) if fast else itertools.product((-1.0, 1.0), repeat=m)
        best, g_best = -np.inf, None
        for g in codes:
            g = np.asarray(g, dtype=float)
            val = (g - h) @ z + _loss(Theta, _leaf_of_code(g, m), kind, yi, Y, r)
            if val > best + 1e-12:
                best, g_best = val, g
        if assign is not None:  # eq. (14): h is the code that reaches a(x), off-path bits at sgn(Wx)
            node = m + assign[r]
            while node > 0:
                par = (node - 1) // 2
                h[par] = 1.0 if node == 2 * par + 2 else -1.0
                node = par
        d = g_best - h  # d/dW of g^T W x~ - h^T W x~, x~ = [x, -1]
        gW += np.outer(d, X[r])
        gb -= d
        leaf = _leaf_of_code(g_best, m)
        if kind == _sgd.LOG_LOSS:
            p = np.exp(Theta[leaf] - Theta[leaf].max())
            p /= p.sum()
            p[yi[r]] -= 1.0
            gT[leaf] += p
        else:
            gT[leaf] += 2 * (Theta[leaf] - Y[r])
    return W - eta / n * gW, b - eta / n * gb, Theta - eta / n * gT


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("fast,stable", [(True, False), (False, False), (True, True), (False, True)])
@pytest.mark.parametrize("kind", [_sgd.LOG_LOSS, _sgd.SQUARED_LOSS])
def test_epoch_step_is_alg1_subgradient(seed, fast, stable, kind):
    """A full-batch epoch (momentum 0, nu large) moves W, b, Theta by -eta x the (sub)gradient of eq. (9)
    (bound (13) fast, (7) exact, (14) with Stable SGD) computed by brute force over the codes."""
    from treeopt.nongreedy.estimator import run_epoch

    depth, p, n = 3, 4, 25
    X, W, b, Theta, yi, Y = _problem(seed + 50, depth, p, kind, n=n)
    W[-1] = np.random.default_rng(seed).normal(size=p)  # no zero rows: no ties in the argmax
    b[-1] = 0.3
    rng = np.random.default_rng(seed + 7)
    assign = rng.integers(0, W.shape[0] + 1, size=n).astype(np.int64)
    eta = 0.05
    want = _brute_step(X, W, b, Theta, kind, yi, Y, fast, assign if stable else None, eta)
    tree = _sgd.Params(W, b, Theta)
    state = _sgd.epoch_state(tree, n, 1)
    run_epoch(state, _sgd.data(X, yi, Y), tree, assign, loss=kind, fast=fast, stable=stable, nu=1e9, eta=eta,
              momentum=0.0, batch_size=n)
    np.testing.assert_allclose(W, want[0], atol=1e-12)
    np.testing.assert_allclose(b, want[1], atol=1e-12)
    np.testing.assert_allclose(Theta, want[2], atol=1e-12)


@pytest.mark.parametrize("inference,stable", [("fast", False), ("fast", True), ("exact", False)])
def test_training_lowers_surrogate_on_digits(inference, stable):
    """On real data (digits, z-scored) SGD lowers the surrogate eq. (9) below its value at the initial tree."""
    from sklearn.datasets import load_digits

    from treeopt.nongreedy.estimator import surrogate_bounds

    X, y = load_digits(return_X_y=True)
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    kw = dict(max_depth=4, nu=1.0, learning_rate=0.05, inference=inference, stable=stable, init="axis",
              random_state=0)
    before = NonGreedyTreeClassifier(max_epochs=0, **kw).fit(X, y)
    after = NonGreedyTreeClassifier(max_epochs=8, **kw).fit(X, y)
    bound = {}
    for name, clf in (("before", before), ("after", after)):
        bound[name] = surrogate_bounds(X, clf.W_, clf.b_, clf.theta_, kind=_sgd.LOG_LOSS,
                                       y_int=np.searchsorted(clf.classes_, y), Y=np.zeros((len(y), 1)),
                                       inference=inference).mean()
    assert bound["after"] < 0.9 * bound["before"]
    assert after.history_["surrogate"][-1] < after.history_["surrogate"][0]


def test_run_log_has_per_epoch_progress_and_tree_stats(tmp_path, wine_split, monkeypatch):
    """A run folder's log.txt gets the learner's per-epoch lines; metrics.json its active leaves and weights."""
    import json

    from treeopt.experiments.plan import methods
    from treeopt.experiments.run.runner import run

    monkeypatch.setitem(methods.METHODS, "_ng_test", methods.Method(
        "_ng_test", "treeopt.nongreedy:NonGreedyTreeClassifier", "classification", "tree", {}, None))
    path, _ = wine_split
    out = tmp_path / "run"
    params = {"max_depth": 3, "init": "axis", "max_epochs": 3, "n_iter_no_change": 5, "batch_size": 20}
    result = run(out, dataset="wine", method="_ng_test", params=params, seed=0, split_path=path)
    text = (out / "log.txt").read_text()
    epochs = [line for line in text.splitlines() if "epoch " in line and "surrogate" in line]
    assert len(epochs) == 3
    assert all("train error" in line and "active leaves" in line for line in epochs)
    assert "non-greedy init" in text
    stats = json.loads((out / "metrics.json").read_text())["tree"]
    assert stats == result["tree"]
    assert 1 <= stats["active_leaves"] <= 8 and stats["n_leaves"] == 8
    assert stats["nonzero_weights"] > 0
    # the library logger is left as it was
    import logging
    assert not logging.getLogger("treeopt").handlers


def test_verbose_shows_a_progress_bar(iris, capsys):
    X, y = iris
    NonGreedyTreeClassifier(max_depth=2, init="axis", max_epochs=3, n_iter_no_change=5, verbose=1,
                            random_state=0).fit(X, y)
    err = capsys.readouterr().err
    assert "non-greedy d=2" in err and "3/3" in err
    NonGreedyTreeClassifier(max_depth=2, init="axis", max_epochs=3, random_state=0).fit(X, y)
    assert "non-greedy" not in capsys.readouterr().err


def test_an_integer_seed_starts_from_the_same_seeded_co2_tree():
    """Sec. 7's CO2 start is the CO2 baseline itself: with random_state=s and no epochs the non-greedy tree
    predicts exactly as CO2TreeClassifier(random_state=s) with the same nu and learning rate; another seed
    gives another start."""
    from sklearn.datasets import load_digits

    from treeopt.greedy import CO2TreeClassifier

    X, y = load_digits(return_X_y=True)
    X = (X - X.mean(0)) / (X.std(0) + 1e-9)
    params = {"nu": 0.1, "learning_rate": 0.03}
    co2 = CO2TreeClassifier(max_depth=3, max_features=None, random_state=3, **params).fit(X, y)
    ng = NonGreedyTreeClassifier(max_depth=3, nu=1.0, max_epochs=0, init_params=params, random_state=3).fit(X, y)
    np.testing.assert_array_equal(ng.predict(X), co2.predict(X))
    other = CO2TreeClassifier(max_depth=3, max_features=None, random_state=4, **params).fit(X, y)
    assert (other.predict(X) != co2.predict(X)).any()  # the check above could fail


# ------------------------------------------------------------------ learning (issue #24): the tree must move
def _rotated_xor(n, seed, noise=0.1, p=4):
    """XOR of two lines rotated by 30 degrees in the first two of p uniform features, labels flipped with
    probability ``noise``. Every hyperplane leaves both sides near 50/50, so a greedy root split has (almost) no
    information gain and the greedy tree depends on where the root happens to land."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p))
    a = np.deg2rad(30)
    u = X[:, 0] * np.cos(a) + X[:, 1] * np.sin(a)
    v = -X[:, 0] * np.sin(a) + X[:, 1] * np.cos(a)
    y = ((u > 0) ^ (v > 0)).astype(int)
    return X, np.where(rng.random(n) < noise, 1 - y, y)


def test_nongreedy_beats_its_greedy_start_on_rotated_xor():
    """Joint optimisation of all levels fixes what greedy growth cannot: on a rotated XOR (best possible training
    accuracy 90%) the depth-2 tree ends far above its CO2 start on average, and never below it."""
    from treeopt.greedy import CO2TreeClassifier

    gains = []
    for seed in range(4):
        X, y = _rotated_xor(2000, seed)
        co2 = CO2TreeClassifier(max_depth=2, nu=1.0, learning_rate=0.1, max_features=None, random_state=seed).fit(X, y)
        ng = NonGreedyTreeClassifier(max_depth=2, nu=4.0, learning_rate=0.03, stable=True, max_epochs=100, init=co2,
                                     random_state=seed).fit(X, y)
        start = 1 - ng.history_["train_error"][0]
        assert start == pytest.approx(np.mean(co2.predict(X) == y))  # the start is the CO2 tree itself
        gains.append(np.mean(ng.predict(X) == y) - start)
    assert min(gains) > 0.0
    assert np.mean(gains) > 0.08, gains


def test_training_lowers_the_training_loss_on_a_random_problem():
    """Labels of a random oblique depth-3 tree with 20% noise; from an axis-aligned start the empirical loss
    eq. (4) of the fitted tree is below the start's."""
    from treeopt.nongreedy.estimator import empirical_losses

    rng = np.random.default_rng(5)
    X = rng.normal(size=(1500, 6))
    Wt, bt = rng.normal(size=(7, 6)), rng.normal(scale=0.3, size=7)
    y = rng.integers(0, 3, size=8)[_sgd.route_all(X, Wt, bt)]
    y = np.where(rng.random(1500) < 0.2, rng.integers(0, 3, 1500), y)
    kw = dict(max_depth=3, nu=4.0, learning_rate=0.1, init="axis", random_state=0)
    losses = {}
    for name, epochs in (("start", 0), ("fit", 40)):
        clf = NonGreedyTreeClassifier(max_epochs=epochs, **kw).fit(X, y)
        losses[name] = empirical_losses(X, clf.W_, clf.b_, clf.theta_, kind=_sgd.LOG_LOSS, y_int=y,
                                        Y=np.zeros((len(y), 1))).mean()
    assert losses["fit"] < losses["start"] - 0.01, losses


def test_rows_at_every_depth_get_gradients_from_a_deep_start():
    """From a CO2 start of depth 6 on digits, every depth's rows receive gradients (Alg. 1 line 6), change, and
    re-route training points; ``depth_stats_`` records it per depth."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    ng = NonGreedyTreeClassifier(max_depth=6, nu=10.0, learning_rate=0.1, max_epochs=15,
                                 init_params={"nu": 1.0, "learning_rate": 0.03}, random_state=0).fit(X, y)
    stats = ng.depth_stats_
    assert len(stats["depth_row_grads"]) == 6
    assert all(g > 0 for g in stats["depth_row_grads"]), stats["depth_row_grads"]
    assert all(r > 0 for r in stats["depth_rows_with_grads"])
    assert all(c is not None and c > 0 for c in stats["depth_rel_change"])
    assert sum(stats["depth_rerouted"]) > 0
    assert ng.fit_stats_["start_train_error"] != ng.fit_stats_["end_train_error"]


def test_padded_nodes_get_a_split_and_keep_the_start_predictions():
    """Below a leaf of the initial tree shallower than d the padded nodes get a balanced axis split (non-zero
    margins), while every leaf below keeps the initial leaf's theta: the start predicts as the initial tree."""
    from sklearn.datasets import load_iris

    from treeopt.greedy import AxisAlignedTreeClassifier
    from treeopt.nongreedy import _init

    X, y = load_iris(return_X_y=True)
    axis = AxisAlignedTreeClassifier(max_depth=2, random_state=0).fit(X, y)  # setosa: a leaf at depth 1
    W, b, Theta, padded = _init.start(axis.tree_, 4, X, _sgd.LOG_LOSS, y, np.zeros((150, 1)), 3, nu=100.0)
    assert padded.sum() > 0
    leaves = _sgd.route_all(X, W, b)
    np.testing.assert_array_equal(Theta.argmax(axis=1)[leaves], axis.predict(X))
    # the padded nodes that points reach split them both ways
    counts = _init.node_counts(leaves, W.shape[0])
    reached = np.flatnonzero(padded & (counts[:W.shape[0]] >= 2))
    assert reached.size > 0
    for node in reached:
        assert W[node].any() and counts[2 * node + 1] > 0 and counts[2 * node + 2] > 0


def test_start_keeps_rows_inside_the_ball_and_projects_the_others():
    from treeopt.nongreedy import _init

    W = np.array([[0.3, 0.0], [3.0, 4.0]])
    b = np.array([0.4, 0.0])
    _init.project_rows(W, b, nu=1.0)
    np.testing.assert_array_equal(W[0], [0.3, 0.0])  # ||[w, b]||^2 = 0.25 <= 1: kept, margins unchanged
    assert b[0] == 0.4
    np.testing.assert_allclose(W[1], [0.6, 0.8])     # 25 > 1: onto the sphere, same direction
    # a start fitted with a smaller nu keeps its margins under a larger nu
    from treeopt.greedy import CO2TreeClassifier
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    co2 = CO2TreeClassifier(max_depth=2, nu=0.1, learning_rate=0.03, max_features=None, random_state=0).fit(X, y)
    ng = NonGreedyTreeClassifier(max_depth=2, nu=43.0, max_epochs=0, init=co2, random_state=0).fit(X, y)
    np.testing.assert_allclose(ng.W_ @ X.T - ng.b_[:, None], co2.tree_.W.toarray()[:3] @ X.T - co2.tree_.bias[:3, None],
                               atol=1e-12)


@pytest.mark.parametrize("scale", [0.125, 0.5])
def test_init_scale_shrinks_the_margins_and_keeps_the_partition(scale):
    """``init_scale`` multiplies every start row (padded ones too) before the projection: the same points reach
    the same leaves, the start predicts as before, every margin is ``scale`` times the unscaled start's (a power
    of two: exactly, so the points lying on a padded node's median split stay on their side)."""
    from treeopt.greedy import AxisAlignedTreeClassifier
    from treeopt.nongreedy import _init

    X, y = load_iris(return_X_y=True)
    axis = AxisAlignedTreeClassifier(max_depth=2, random_state=0).fit(X, y)  # a shallow leaf: padded rows
    W1, b1, T1, padded = _init.start(axis.tree_, 4, X, _sgd.LOG_LOSS, y, np.zeros((150, 1)), 3, nu=100.0)
    Ws, bs, Ts, _ = _init.start(axis.tree_, 4, X, _sgd.LOG_LOSS, y, np.zeros((150, 1)), 3, nu=100.0, scale=scale)
    assert padded.any() and W1[padded].any()
    np.testing.assert_array_equal(X @ Ws.T - bs, scale * (X @ W1.T - b1))
    np.testing.assert_array_equal(_sgd.route_all(X, Ws, bs), _sgd.route_all(X, W1, b1))
    np.testing.assert_array_equal(Ts, T1)
    # the estimator passes it on: a fit of no epochs is the scaled start
    ng = NonGreedyTreeClassifier(max_depth=4, nu=100.0, max_epochs=0, init=axis, init_scale=scale,
                                 random_state=0).fit(X, y)
    np.testing.assert_allclose(ng.W_, Ws, atol=1e-12)
    np.testing.assert_array_equal(ng.predict(X), axis.predict(X))
    with pytest.raises(ValueError, match="init_scale"):
        NonGreedyTreeClassifier(init_scale=0.0).fit(X, y)


def test_learning_rate_follows_co2s_rule_on_the_tracked_bound():
    """A rate far too large makes the tracked bound oscillate; the rate of every epoch is CO2's rule replayed on
    the recorded bound (one parameter state per epoch)."""
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    clf = NonGreedyTreeClassifier(max_depth=3, nu=4.0, learning_rate=5.0, max_epochs=30, batch_size=20,
                                  init="axis", random_state=0).fit(X, y)
    from test_co2_stump import _replay_rate  # CO2's rule written out

    bound, rate = clf.history_["surrogate"], clf.history_["learning_rate"]
    assert np.sum(np.diff(bound) > 0) >= 3
    assert rate[-1] < 5.0
    for e in range(1, len(bound)):
        assert rate[e] == _replay_rate(bound[:e], 5.0, 2), e


def test_warmup_ramps_the_rate_and_then_follows_co2s_rule():
    """With ``warmup_epochs=k`` epoch e <= k runs with eta * e / (k + 1) of the rule's eta; the rule itself still
    sees every epoch's bound; ``warmup_epochs=0`` is the plain rule, bit for bit."""
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    params = dict(max_depth=3, nu=4.0, learning_rate=5.0, max_epochs=12, batch_size=20, init="axis", random_state=0)
    clf = NonGreedyTreeClassifier(warmup_epochs=4, **params).fit(X, y)
    from test_co2_stump import _replay_rate

    bound, rate = clf.history_["surrogate"], clf.history_["learning_rate"]
    assert rate[1] == 5.0 / 5 and rate[2] == 5.0 * 2 / 5
    for e in range(1, len(bound)):
        assert rate[e] == _replay_rate(bound[:e], 5.0, 2) * min(1.0, e / 5), e
    plain = NonGreedyTreeClassifier(**params).fit(X, y)
    assert np.array_equal(NonGreedyTreeClassifier(warmup_epochs=0, **params).fit(X, y).W_, plain.W_)
    assert not np.array_equal(clf.W_, plain.W_)


def test_stable_sgd_reassigns_when_the_bound_stops_improving():
    """SSGD refreshes a(x) exactly after the epochs whose bound eq. (14) fell by less than ``stable_tol`` from the
    epoch's reference (or after ``stable_max_epochs``), and a refresh never raises the bound."""
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    tol, max_round = 0.02, 4
    clf = NonGreedyTreeClassifier(max_depth=3, nu=4.0, learning_rate=0.1, stable=True, stable_tol=tol,
                                  stable_max_epochs=max_round, max_epochs=25, batch_size=20, init="axis",
                                  random_state=0).fit(X, y)
    h = clf.history_
    assert any(h["reassigned"][1:]) and not all(h["reassigned"][1:])
    round_len = 0
    for e in range(1, len(h["epoch"])):
        reference, current = h["surrogate_reassigned"][e - 1], h["surrogate"][e]
        round_len += 1
        due = reference - current < tol * abs(reference) or round_len >= max_round
        assert h["reassigned"][e] == due, e
        if due:
            round_len = 0
            assert h["surrogate_reassigned"][e] <= current + 1e-12
        else:
            assert h["surrogate_reassigned"][e] == current
