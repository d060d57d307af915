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
    zc, cost = np.zeros(m), np.zeros(2 * m + 1)
    for r in range(X.shape[0]):
        leaf, h_leaf, val = _sgd.exact_inference(X, r, W, b, Theta, depth, kind, yi, Y, zc, cost)
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
    zc, zstamp = np.zeros(m), np.zeros(m, dtype=np.int64)
    for r in range(X.shape[0]):
        leaf, flip, val = _sgd.fast_inference(X, r, W, b, Theta, depth, kind, yi, Y, zc, zstamp, r + 1)
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
    loss = _sgd.losses_at(_sgd.route_all(X, W, b), Theta, kind, yi, Y)
    want = np.array([_loss(Theta, j, kind, yi, Y, r) for r, j in enumerate(_sgd.route_all(X, W, b))])
    np.testing.assert_allclose(loss, want, rtol=1e-12)
    fast = _sgd.bounds(X, yi, Y, W, b, Theta, depth, kind, True)
    exact = _sgd.bounds(X, yi, Y, W, b, Theta, depth, kind, False)
    assert np.all(fast >= loss - 1e-12)
    assert np.all(exact >= fast - 1e-12)


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
