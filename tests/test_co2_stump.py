"""CO2 stumps: the bound eq. (5), the constraint eq. (9) and the CCCP/SGD optimiser of Alg. 1."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numba import njit

from treeopt.greedy._co2_sgd import _exp_nonpositive, batch_bounds, next_learning_rate, shuffle_epoch
from treeopt.greedy._criteria import best_axis_split, class_counts, entropy, information_gain
from treeopt.greedy.co2 import (
    _log_losses,
    leaf_log_frequencies,
    optimize_co2_stump,
    stump_loss,
    stump_surrogate,
)

finite = st.floats(-5, 5, allow_nan=False, allow_infinity=False)


@st.composite
def stumps(draw, max_n=30, max_p=4):
    """Random data, labels, split (w, b) and leaf log-probabilities theta."""
    n = draw(st.integers(1, max_n))
    p = draw(st.integers(1, max_p))
    k = draw(st.integers(2, 4))
    X = draw(arrays(np.float64, (n, p), elements=finite))
    y = draw(arrays(np.int64, n, elements=st.integers(0, k - 1)))
    w = draw(arrays(np.float64, p, elements=finite))
    b = draw(finite)
    theta = draw(arrays(np.float64, (2, k), elements=finite))
    return X, y, w, b, theta


@settings(max_examples=300, deadline=None)
@given(stumps())
def test_surrogate_upper_bounds_the_stump_loss(s):
    """Eq. (5): max(-z + l0, z + l1) - |z| >= 1(z < 0) l0 + 1(z >= 0) l1 for every point."""
    X, y, w, b, theta = s
    loss = stump_loss(X, y, w, b, theta)
    bound = stump_surrogate(X, y, w, b, theta)
    assert np.all(loss >= 0)  # the log loss eq. (3) is non-negative
    assert np.all(bound >= loss - 1e-9 * (1 + np.abs(loss)))


@settings(max_examples=200, deadline=None)
@given(stumps(), st.floats(1.0, 50.0))
def test_surrogate_tightens_as_the_norm_grows(s, a):
    """Eq. (8): scaling [w, b] by a > 1 never loosens the bound, and it is exact once |z| >= |l0 - l1| / 2."""
    X, y, w, b, theta = s
    loss = stump_loss(X, y, w, b, theta)
    bound = stump_surrogate(X, y, w, b, theta)
    scaled = stump_surrogate(X, y, a * w, a * b, theta)
    assert np.all(scaled <= bound + 1e-9 * (1 + np.abs(bound)))
    z = X @ w - b
    losses = _log_losses(y, theta)
    outside_margin = np.abs(z) >= 0.5 * np.abs(losses[:, 0] - losses[:, 1])
    assert np.allclose(bound[outside_margin], loss[outside_margin], rtol=1e-9, atol=1e-9)


def test_leaf_log_frequencies_minimise_eq2_and_give_information_gain():
    """Sec. 4: for a fixed split, the empirical leaf log-probabilities minimise eq. (2), whose value is
    n (H(parent) - information gain)."""
    rng = np.random.default_rng(0)
    n, k = 400, 3
    X = rng.normal(size=(n, 2))
    y = rng.integers(0, k, n)
    w, b = np.array([1.0, 0.5]), 0.1
    right = X @ w - b >= 0
    theta = leaf_log_frequencies(y, right, k, smoothing=0.0)
    assert np.isfinite(theta).all()  # every class occurs on both sides here
    mean_loss = stump_loss(X, y, w, b, theta).mean()
    assert mean_loss == pytest.approx(entropy(class_counts(y, k)) - information_gain(y, right, k), rel=1e-12)
    for _ in range(20):
        other = theta + rng.normal(scale=0.3, size=theta.shape)
        assert stump_loss(X, y, w, b, other).mean() > mean_loss


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_on_separable_data_the_norm_bound_binds_and_a_larger_bound_fits_better(seed):
    """Eq. (9) is what keeps the surrogate from becoming the loss: on two separable clusters the surrogate keeps
    falling as the margins grow, so every step pushes outwards and the projected stump stays on the sphere
    ||[w, b]||^2 = nu (a missing or mis-scaled projection leaves it outside or inside), and each larger nu
    reaches a lower surrogate while the split separates the clusters."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(-2.0, 1.0, (100, 2)), rng.normal(2.0, 1.0, (100, 2))])
    y = np.repeat([0, 1], 100)
    finals = []
    for nu in (0.5, 2.0, 8.0):
        w0 = np.array([3.0 * np.sqrt(nu), 0.0])  # outside the ball: the optimiser starts from its projection
        stump = optimize_co2_stump(X, y, w0, 0.0, np.zeros((2, 2)), nu=nu, learning_rate=0.1, max_epochs=50,
                                   seed=seed)
        assert stump.weights @ stump.weights + stump.bias ** 2 == pytest.approx(nu, rel=1e-9)
        right = X @ stump.weights - stump.bias >= 0
        assert np.mean(right == (y == 1)) > 0.95 or np.mean(right == (y == 0)) > 0.95
        finals.append(stump.surrogate[-1])
    assert finals[0] > finals[1] > finals[2]


def test_tracked_surrogate_is_eq10_when_parameters_stay_put():
    """With a zero step the kernel's per-epoch surrogate equals the mean of eq. (10) at the start."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(250, 4))
    y = rng.integers(0, 3, 250)
    w, b = rng.normal(size=4), 0.2
    theta = rng.normal(size=(2, 3))
    stump = optimize_co2_stump(X, y, w, b, theta, nu=100.0, learning_rate=0.0, max_epochs=3,
                               n_iter_no_change=100)
    expected = stump_surrogate(X, y, w, b, theta).mean()
    assert np.allclose(stump.surrogate, expected, rtol=1e-12)
    assert np.array_equal(stump.weights, w) and stump.bias == b


def _diagonal_problem(n=1500, seed=0):
    """Two classes split by the diagonal x0 = x1: no axis split comes close."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    return X, (X[:, 0] - X[:, 1] >= 0).astype(np.int64)


def _axis_init(X, y, nu):
    f, thr, gain = best_axis_split(X, y, 2, np.arange(X.shape[1]), 1)
    w = np.zeros(X.shape[1])
    w[f] = 1.0
    scale = math.sqrt(nu / (1 + thr * thr))
    return w * scale, thr * scale, leaf_log_frequencies(y, X[:, f] >= thr, 2), gain, X[:, f] >= thr


@pytest.mark.parametrize("nu", [1.0, 4.0, 10.0])
def test_co2_stump_finds_the_oblique_split_the_axis_split_misses(nu):
    X, y = _diagonal_problem()
    w0, b0, theta0, axis_gain, axis_right = _axis_init(X, y, nu)
    stump = optimize_co2_stump(X, y, w0, b0, theta0, nu=nu, learning_rate=0.01, max_epochs=100, seed=3)
    right = X @ stump.weights - stump.bias >= 0
    h = entropy(class_counts(y, 2))
    assert axis_gain < 0.3 * h and (axis_right == y).mean() < 0.8
    assert information_gain(y, right, 2) > 0.8 * h
    assert (right == y).mean() > 0.97
    assert stump.surrogate[-1] < stump.surrogate[0]  # the optimiser descends the bound


def test_stump_optimiser_is_seeded():
    X, y = _diagonal_problem(n=600)
    w0, b0, theta0, _, _ = _axis_init(X, y, 4.0)
    run = lambda seed: optimize_co2_stump(X, y, w0, b0, theta0, nu=4.0, max_epochs=5, n_iter_no_change=100,
                                          seed=seed)
    a, b, c = run(11), run(11), run(12)
    assert np.array_equal(a.weights, b.weights) and a.bias == b.bias and np.array_equal(a.theta, b.theta)
    assert not np.array_equal(a.weights, c.weights)  # a different shuffle changes the mini-batches


def _replay_rate(history, eta, patience):
    """The Sec. 4.2 rule written out: halve after `patience` consecutive rises; a fall resets the count."""
    rises = 0
    for prev, cur in zip(history[:-1], history[1:]):
        if cur > prev:
            rises += 1
            if rises == patience:
                eta, rises = eta / 2, 0
        else:
            rises = 0
    return eta


def test_learning_rate_rule_counts_consecutive_rises_only():
    assert next_learning_rate(1.0, 0, 1.0, 2.0, 2) == (1.0, 1)   # first rise
    assert next_learning_rate(1.0, 1, 2.0, 1.5, 2) == (1.0, 0)   # a fall resets the count
    assert next_learning_rate(1.0, 1, 2.0, 3.0, 2) == (0.5, 0)   # second consecutive rise halves
    assert next_learning_rate(1.0, 0, 1.0, 1.0, 1) == (1.0, 0)   # no change is not a rise
    # rises, fall, rise, fall, ...: never two in a row, so the rate stays
    eta, rises = 1.0, 0
    for prev, cur in [(1, 2), (2, 1), (1, 2), (2, 1), (1, 2)]:
        eta, rises = next_learning_rate(eta, rises, prev, cur, 2)
    assert eta == 1.0


def test_learning_rate_in_the_optimiser_follows_the_rule_on_its_tracked_surrogate():
    """A rate far too large makes the surrogate oscillate; the final rate is the rule replayed on the
    recorded history (the surrogate over all points at one parameter state per epoch)."""
    X, y = _diagonal_problem(n=800, seed=2)
    w0, b0, theta0, _, _ = _axis_init(X, y, 10.0)
    stump = optimize_co2_stump(X, y, w0, b0, theta0, nu=10.0, learning_rate=5.0, max_epochs=40,
                               n_iter_no_change=100, patience=2)
    assert stump.learning_rate < 5.0
    assert stump.learning_rate == _replay_rate(stump.surrogate, 5.0, 2)
    assert np.sum(np.diff(stump.surrogate) > 0) >= 3
    # history entries are eq. (10) at the returned parameters (the last one) and at the start (the first)
    assert np.isclose(stump.surrogate[-1], stump_surrogate(X, y, stump.weights, stump.bias, stump.theta).mean())
    assert np.isclose(stump.surrogate[0], stump_surrogate(X, y, w0, b0, theta0).mean())


def _reference_epochs(X, y, w, b, theta, perms, *, nu, eta, momentum, batch_size, tau):
    """Alg. 1 with the Sec. 4.2 modifications written plainly in numpy, over the given permutations:
    w_old refreshed every tau epochs, equal mini-batches, averaged subgradients of eq. (11), momentum,
    projection onto ||[w, b]||^2 <= nu after every step."""
    n, p = X.shape
    wt = np.append(np.asarray(w, float), b)       # w~ = [w, b]
    Xt = np.hstack([X, -np.ones((n, 1))])          # x~ = [x, -1]
    theta = np.array(theta, dtype=float)
    v, vth = np.zeros(p + 1), np.zeros_like(theta)
    for e, perm in enumerate(perms):
        if e % tau == 0:
            s = np.where(Xt @ wt >= 0, 1.0, -1.0)  # sgn(w_old . x~)
        nb = -(-n // batch_size)
        for i in range(nb):
            batch = perm[i * n // nb:(i + 1) * n // nb]
            z = Xt[batch] @ wt
            lse = np.log(np.exp(theta).sum(axis=1))
            l0 = lse[0] - theta[0, y[batch]]
            l1 = lse[1] - theta[1, y[batch]]
            go_left = -z + l0 >= z + l1                # loss-augmented inference (Alg. 1 line 9)
            coef = np.where(go_left, -(1 + s[batch]), 1 - s[batch])
            g = (coef[:, None] * Xt[batch]).mean(axis=0)
            gth = np.zeros_like(theta)
            probs = np.exp(theta - lse[:, None])
            for side, mask in ((0, go_left), (1, ~go_left)):
                for c in y[batch][mask]:
                    gth[side] += probs[side] - np.eye(theta.shape[1])[c]
            gth /= batch.size
            v = momentum * v - eta * g
            wt = wt + v
            vth = momentum * vth - eta * gth
            theta = theta + vth
            norm2 = wt @ wt
            if norm2 > nu:
                wt *= np.sqrt(nu / norm2)
    return wt[:p], wt[p], theta


@pytest.mark.parametrize("tau", [1, 3])
def test_kernel_matches_a_plain_alg1_with_momentum_batches_and_tau(tau):
    """The numba optimiser equals the numpy transcription of Alg. 1 step for step: several mini-batches of
    unequal-looking sizes (n = 230, batch 100 -> 3 batches of 76-77), momentum, projection, w_old held fixed
    for tau epochs."""
    rng = np.random.default_rng(5)
    n, p, k = 230, 3, 3
    X = rng.normal(size=(n, p))
    y = rng.integers(0, k, n)
    w0, b0 = rng.normal(size=p), 0.3
    theta0 = rng.normal(size=(2, k))
    epochs, seed = 6, 17
    stump = optimize_co2_stump(X, y, w0, b0, theta0, nu=2.0, learning_rate=0.05, momentum=0.9,
                               batch_size=100, max_epochs=epochs, tau=tau, n_iter_no_change=10**6,
                               patience=10**6, seed=seed)
    assert stump.n_epochs == epochs
    state = np.full(1, seed, dtype=np.uint64)   # the kernel's own shuffling stream
    perm = np.arange(n)
    perms = []
    for _ in range(epochs):
        if n > 100:  # the kernel skips the shuffle of a single full batch
            shuffle_epoch(perm, state)
        perms.append(perm.copy())
    scale = min(1.0, math.sqrt(2.0 / (w0 @ w0 + b0 * b0)))
    w, b, theta = _reference_epochs(X, y, w0 * scale, b0 * scale, theta0, perms, nu=2.0, eta=0.05, momentum=0.9,
                                    batch_size=100, tau=tau)
    assert np.allclose(stump.weights, w, atol=1e-10) and np.isclose(stump.bias, b, atol=1e-10)
    assert np.allclose(stump.theta, theta, atol=1e-10)
    # tau matters: refreshing w_old every epoch gives a different trajectory
    w1, _, _ = _reference_epochs(X, y, w0 * scale, b0 * scale, theta0, perms, nu=2.0, eta=0.05, momentum=0.9,
                                 batch_size=100, tau=1 if tau > 1 else 3)
    assert not np.allclose(w1, w, atol=1e-6)


def test_no_mini_batch_is_a_tiny_remainder():
    for n in (1, 99, 100, 101, 199, 201, 1000, 1001):
        nb = batch_bounds(n, 100)
        sizes = [(i + 1) * n // nb - i * n // nb for i in range(nb)]
        assert sum(sizes) == n and max(sizes) <= 100 and max(sizes) - min(sizes) <= 1
        if n >= 100:
            assert min(sizes) >= 50


def test_optimiser_rejects_inconsistent_inputs():
    X = np.zeros((5, 2))
    with pytest.raises(ValueError, match="shapes"):
        optimize_co2_stump(X, np.zeros(5, dtype=int), np.zeros(3), 0.0, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="theta"):
        optimize_co2_stump(X, np.array([0, 1, 2, 0, 1]), np.zeros(2), 0.0, np.zeros((2, 2)))


def _stop_epoch(history, tol, n_iter_no_change, reference):
    """Epochs the stop rule allows on a surrogate history: the first epoch after which the best value has
    not fallen by ``tol`` x (best or initial value) for ``n_iter_no_change`` epochs."""
    best, since = history[0], 0
    for e in range(1, len(history)):
        scale = abs(history[0]) if reference == "initial" else abs(best)
        if history[e] < best - tol * scale:
            best, since = history[e], 0
        else:
            since += 1
            if since >= n_iter_no_change:
                return e
    return len(history) - 1


@pytest.mark.parametrize("n", [60, 450])   # one full batch per epoch, and several mini-batches
def test_stop_rule_follows_its_definition_and_initial_reference_stops_no_later(n):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n) > 0).astype(int) + (X[:, 2] > 1)
    theta0 = leaf_log_frequencies(y, X[:, 3] >= 0, 3)
    w0 = np.array([0.0, 0.0, 0.0, 1.0])
    runs = {}
    for ref in ("best", "initial"):
        stump = optimize_co2_stump(X, y, w0, 0.0, theta0, nu=4.0, learning_rate=0.03, max_epochs=300, tol=1e-2,
                                   n_iter_no_change=4, tol_reference=ref, seed=1)
        # the run stopped exactly where the rule says, on its own tracked surrogate
        assert stump.n_epochs == _stop_epoch(stump.surrogate, 1e-2, 4, ref) < 300
        runs[ref] = stump
    # same seed, same trajectory: the initial-referenced run is a prefix of the other and no longer
    a, b = runs["initial"].surrogate, runs["best"].surrogate
    assert a.size <= b.size and np.array_equal(a, b[:a.size])


@pytest.mark.parametrize("n", [2, 5, 6])
def test_epoch_shuffle_is_a_uniform_permutation(n):
    """Two swaps per 64-bit draw (high and low halves) still give every element every position equally
    often: 30,000 shuffles, each cell within 5 binomial standard deviations of 1/n."""
    state = np.full(1, 11, dtype=np.uint64)
    counts = np.zeros((n, n))
    reps = 30000
    for _ in range(reps):
        perm = np.arange(n)
        shuffle_epoch(perm, state)
        assert np.array_equal(np.sort(perm), np.arange(n))
        counts[perm, np.arange(n)] += 1
    sd = math.sqrt(reps * (1 / n) * (1 - 1 / n))
    assert np.all(np.abs(counts - reps / n) < 5 * sd)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from([37, 260]), st.sampled_from([1, 2]))
def test_kernel_on_distinct_rows_with_multiplicities_equals_the_kernel_on_the_repeated_points(seed, n, tau):
    """A bootstrap node repeats points; the kernel runs its full passes over the distinct rows with their
    multiplicities. Same trajectory as over the points themselves (one full batch at n = 37, three
    mini-batches at n = 260), up to the order of the sums."""
    from treeopt.greedy._co2_sgd import co2_stump_sgd

    rng = np.random.default_rng(seed)
    u, p, k = max(5, n // 2), 4, 3
    Xu = rng.normal(size=(u, p)).astype(np.float32)
    yu = rng.integers(0, k, u)
    rows = rng.integers(0, u, n)
    rows = np.unique(rows, return_inverse=True)[1]  # every row used (rows of a node are its distinct points)
    Xu, yu = Xu[:rows.max() + 1], yu[:rows.max() + 1]
    mult = np.bincount(rows).astype(float)
    assert mult.max() > 1
    w0 = rng.normal(size=p) * 0.5
    theta0 = rng.normal(size=(2, k))
    out = []
    for X, y, r, mu in ((Xu, yu, rows, mult), (Xu[rows], yu[rows], np.arange(n), np.ones(n))):
        w, theta, hist = w0.copy(), theta0.copy(), np.empty(31)
        b, n_ep, max_norm2, eta = co2_stump_sgd((X, y, r, mu), (w, 0.2, theta), (2.0, 0.05, 0.9, 100, tau, 2),
                                                (30, 1e-3, 5, False), np.uint64(seed), hist)
        out.append((w, b, theta, hist[:n_ep + 1].copy(), eta))
    (w1, b1, t1, h1, e1), (w2, b2, t2, h2, e2) = out
    assert h1.shape == h2.shape and e1 == e2
    assert np.allclose(h1, h2, rtol=1e-12, atol=1e-12)
    assert np.allclose(w1, w2, atol=1e-10) and np.isclose(b1, b2, atol=1e-10) and np.allclose(t1, t2, atol=1e-10)


@njit(fastmath={"nsz", "arcp", "contract", "afn", "reassoc"})  # the kernel's flags: its reassociation is the risk
def _exp_many(x, out):
    for i in range(x.shape[0]):
        out[i] = _exp_nonpositive(x[i])


def _ulps(got, want):
    return np.abs(got - want) / np.spacing(want)


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, 64, elements=st.floats(-708.0, 0.0)))
def test_kernel_exp_is_within_two_ulps_of_libm(x):
    # the leaves' softmax uses its own vectorisable exp: it must stay a round-off-level change (a reduction
    # whose low part of ln 2 is folded away, for instance, is ~200 ulps off at x = -700)
    out = np.empty_like(x)
    _exp_many(x, out)
    assert _ulps(out, np.array([math.exp(v) for v in x])).max() <= 2.0


def test_kernel_exp_on_a_grid_and_at_its_ends():
    x = np.concatenate([-np.linspace(0.0, 708.0, 200_001), -np.logspace(-300, 2, 1000), [-0.0]])
    out = np.empty_like(x)
    _exp_many(x, out)
    want = np.array([math.exp(v) for v in x])
    assert _ulps(out, want).max() <= 2.0
    assert out[0] == 1.0
    tail = np.empty(3)
    _exp_many(np.array([-708.5, -1000.0, -np.inf]), tail)  # below -708: exp(-708) ~ 3e-308, not a subnormal
    assert np.all((tail > 0.0) & (tail < 1e-307))


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 60), st.integers(1, 6), st.sampled_from([1, 1000, 2**26 // 61]))
def test_packed_lane_counts_give_each_leafs_label_counts_exactly(seed, n, k, max_weight):
    """The kernel counts both leaves' labels in one slot per label (left + 2^26 right, see _PACK); summed over the
    four lanes and unpacked they must be the exact weighted counts at each point's winning leaf, for weights up to
    multiplicities whose total nears the 2^26 limit (the slot would mix the two counts if the unpacking were wrong)."""
    from treeopt.greedy._co2_sgd import _sum_lanes, _winner

    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    y = rng.integers(0, k, n).astype(np.uint64)
    weight = rng.integers(1, max_weight + 1, n).astype(float)
    loss = rng.exponential(size=(2, k))
    cntl = np.zeros((4, k))
    for i in range(n):
        _winner(z[i], y[i], 1.0, loss, cntl, i % 4, weight[i])
    cnt = np.empty((2, k))
    _sum_lanes(cntl, cnt)
    right = loss[1, y.astype(int)] + z > loss[0, y.astype(int)] - z
    want = np.zeros((2, k))
    np.add.at(want, (right.astype(int), y.astype(int)), weight)
    assert np.array_equal(cnt, want)
    assert not cntl.any()  # the lanes are left zeroed for the next batch


def test_packed_lane_counts_at_the_limit():
    """All weight at the left leaf, just under 2^26 in total, and then all at the right one: unpacked exactly."""
    from treeopt.greedy._co2_sgd import MAX_POINTS, _sum_lanes, _winner

    loss = np.array([[0.0, 0.0], [1.0, 1.0]])
    for z, side in ((-1.0, 0), (1.0, 1)):   # margin -1: the left leaf wins; +1: the right one
        cntl = np.zeros((4, 2))
        for lane in range(4):
            _winner(z, np.uint64(1), 1.0, loss, cntl, lane, float(MAX_POINTS // 4 - 1))
        cnt = np.empty((2, 2))
        _sum_lanes(cntl, cnt)
        want = np.zeros((2, 2))
        want[side, 1] = MAX_POINTS - 4
        assert np.array_equal(cnt, want)


def _stump_run(data, start, settings_, stop, seed, fuse):
    from treeopt.greedy._co2_sgd import co2_stump_sgd

    (w0, b0, theta0) = start
    w, theta, hist = w0.copy(), theta0.copy(), np.full(stop[0] + 1, np.nan)
    b, n_ep, max_norm2, eta = co2_stump_sgd(data, (w, b0, theta), settings_, stop, np.uint64(seed), hist, fuse)
    return w, b, theta, hist[:n_ep + 1], n_ep, max_norm2, eta


def _fused_and_unfused(data, start, settings_, stop, seed):
    from treeopt.greedy._co2_sgd import FUSE_ALWAYS, FUSE_NEVER

    return (_stump_run(data, start, settings_, stop, seed, FUSE_NEVER),
            _stump_run(data, start, settings_, stop, seed, FUSE_ALWAYS))


def _assert_same_trajectory(plain, fused):
    w1, b1, t1, h1, n1, m1, e1 = plain
    w2, b2, t2, h2, n2, m2, e2 = fused
    # the same epochs, the same learning-rate halvings and stop; every surrogate and the stump up to round-off
    assert (n1, e1) == (n2, e2)
    np.testing.assert_allclose(h2, h1, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(w2, w1, rtol=0, atol=1e-10)
    np.testing.assert_allclose(t2, t1, rtol=0, atol=1e-10)
    assert math.isclose(b1, b2, abs_tol=1e-10) and math.isclose(m1, m2, rel_tol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.integers(150, 600), st.sampled_from([3, 17, 64]), st.booleans(), st.booleans(),
       st.sampled_from([32, 100]), st.integers(1, 3), st.integers(1, 3), st.sampled_from([0, 1, 2, 5, 12]),
       st.sampled_from([1, 3, 10]), st.sampled_from([0.01, 0.3, 3.0]))
def test_fused_epochs_follow_the_unfused_loop(seed, u, p, float32, repeats, batch, tau, patience, max_epochs,
                                              no_change, eta):
    """The fused epochs (each epoch run together with the surrogate pass at its start, undone and re-run when that
    surrogate halves the rate, undone when it stops the descent) take the unfused loop's steps: same epochs, rates
    and stop, every surrogate and the stump equal up to round-off. Large learning rates and a patience of 1 make
    re-runs, ``no_change`` 1 makes early stops, ``repeats`` a bootstrap node (rows with multiplicities), odd ``u``
    the passes' partial blocks of four."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    X = rng.normal(size=(u, p)).astype(np.float32 if float32 else np.float64)
    y = rng.integers(0, k, u)
    if repeats:
        rows = np.unique(rng.integers(0, u, u + 37), return_inverse=True)[1]
        X, y = X[:rows.max() + 1], y[:rows.max() + 1]
        mult = np.bincount(rows).astype(float)
    else:
        rows, mult = np.arange(u), np.ones(u)
    start = (rng.normal(size=p) * 0.3, 0.2, rng.normal(size=(2, k)))
    plain, fused = _fused_and_unfused((X, y, rows, mult), start, (2.0, eta, 0.9, batch, tau, patience),
                                      (max_epochs, 1e-3, no_change, bool(seed % 2)), seed)
    _assert_same_trajectory(plain, fused)


def test_fused_epochs_stay_within_round_off_over_a_whole_descent():
    """A segmentation-like stump (float32 rows, a learning rate halved several times, the stop rule ending it):
    over 80-120 epochs the fused and unfused descents stay within round-off of each other, so the trees they grow
    route alike (the fused code adds its sums in another order; docs/cost.md "One read per sample-epoch")."""
    halvings = 0
    for seed in range(4):
        rng = np.random.default_rng(seed)
        u, p, k = 3000, 300, 4
        X = rng.normal(size=(u, p)).astype(np.float32)
        y = (X[:, :4] @ rng.normal(size=4) > 0).astype(int) + 2 * (rng.random(u) < 0.3)
        w0 = np.zeros(p)
        w0[seed] = 0.5
        plain, fused = _fused_and_unfused((X, y, np.arange(u), np.ones(u)), (w0, 0.0, np.zeros((2, k))),
                                          (1.0, 0.03, 0.9, 100, 1, 2), (200, 1e-3, 20, False), seed)
        _assert_same_trajectory(plain, fused)
        assert plain[4] < 200  # the stop rule ended it
        halvings += round(math.log2(0.03 / plain[6]))
    assert halvings >= 8  # the re-runs were exercised


def test_automatic_fusing_leaves_short_rows_on_the_unfused_loop():
    """Rows of 16 float64 values (128 bytes) stay on the unfused loop, whose machine code is the one from before the
    fused epochs existed: bit for bit the same results as asking for it."""
    from treeopt.greedy._co2_sgd import FUSE_AUTO, FUSE_NEVER

    rng = np.random.default_rng(3)
    u, p, k = 40000, 16, 5  # 5 MB: past the node size, not the row size
    X = rng.normal(size=(u, p))
    y = rng.integers(0, k, u)
    data = (X, y, np.arange(u), np.ones(u))
    start = (rng.normal(size=p) * 0.3, 0.0, np.zeros((2, k)))
    runs = [_stump_run(data, start, (1.0, 0.1, 0.9, 100, 1, 2), (4, 1e-3, 10, False), 0, fuse)
            for fuse in (FUSE_AUTO, FUSE_NEVER)]
    for a, b in zip(*runs):
        assert np.array_equal(a, b)
