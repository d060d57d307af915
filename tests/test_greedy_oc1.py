"""OC1 oblique trees: the line search, the node search and the estimator."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from treeopt.greedy._criteria import _xlogx_table, best_sampled_axis_split, best_threshold, class_counts, entropy, information_gain
from treeopt.greedy._grow import route_right
from treeopt.greedy._oc1 import (RADIX_MIN_POINTS, RADIX_WIDE_POINTS, TIE_PRONE_AFTER, TIE_PRONE_SKIP, _best_offset,
                                 _best_offset_into, _line_search, _line_search_into, line_search_workspace, oc1_search)
from treeopt.greedy._radix import (float_to_ordered, quicksort_pairs, radix_sort_pairs, radix_sort_pairs_small,
                                   radix_workspace)
from treeopt.greedy.axis import AxisAlignedTreeClassifier
from treeopt.greedy.oc1 import OC1SplitFinder, OC1TreeClassifier

import _oc1_reference as reference  # the search at 071be0e, before the sorted-pairs line search


@st.composite
def node_data(draw, max_n=40, max_p=4):
    n = draw(st.integers(2, max_n))
    p = draw(st.integers(1, max_p))
    k = draw(st.integers(2, 3))
    X = draw(arrays(np.float64, (n, p), elements=st.integers(-4, 4).map(float)))
    y = draw(arrays(np.int64, n, elements=st.integers(0, k - 1)))
    return X, y, k


def _brute_line_search(V, d, y, k, msl):
    """Best gain of ``V + alpha d >= 0`` over alpha between consecutive critical values and beyond the ends."""
    moving = d != 0
    U = np.unique(-V[moving] / d[moving])
    if U.size == 0:
        return -np.inf
    candidates = np.concatenate([[U[0] - 1.0, U[-1] + 1.0], 0.5 * (U[:-1] + U[1:])])
    best = -np.inf
    for a in candidates:
        right = V + a * d >= 0
        if msl <= right.sum() <= y.size - msl:
            best = max(best, information_gain(y, right, k))
    return best


@settings(max_examples=150, deadline=None)
@given(node_data(max_p=1), st.integers(1, 3), st.integers(0, 2**31))
def test_line_search_matches_brute_force(data, msl, seed):
    X, y, k = data
    rng = np.random.default_rng(seed)
    # critical values U on an integer grid (exact ties, exact arithmetic); d = 0 points never move
    d = X[:, 0]
    U = rng.integers(-3, 4, size=y.size).astype(np.float64)
    V = np.where(d != 0, -U * d, rng.normal(size=y.size))
    total, xlogx = class_counts(y, k), _xlogx_table(y.size)
    alpha, gain = _line_search(V, d, y, k, msl, total, xlogx)
    ref = _brute_line_search(V, d, y, k, msl)
    if ref == -np.inf:
        assert gain == -np.inf
        return
    assert gain == pytest.approx(ref, abs=1e-10)
    right = V + alpha * d >= 0  # the returned step realises the reported gain
    assert information_gain(y, right, k) == pytest.approx(gain, abs=1e-10)


@settings(max_examples=100, deadline=None)
@given(node_data(max_p=4), st.integers(1, 3), st.integers(0, 2**31))
def test_coordinate_line_search_in_p_dimensions_matches_brute_force(data, msl, seed):
    """OC1's coordinate step for p > 1: moving w_m of a p-dimensional hyperplane (V = X w - b, d = X[:, m])
    finds the best gain over all step sizes, as brute force over the critical values."""
    X, y, k = data
    rng = np.random.default_rng(seed)
    p = X.shape[1]
    w, b = rng.integers(-3, 4, size=p).astype(float), float(rng.integers(-3, 4)) + 0.5
    m = int(rng.integers(0, p))
    V, d = X @ w - b, X[:, m].copy()
    alpha, gain = _line_search(V, d, y, k, msl, class_counts(y, k), _xlogx_table(y.size))
    ref = _brute_line_search(V, d, y, k, msl)
    if ref == -np.inf:
        assert gain == -np.inf
        return
    assert gain == pytest.approx(ref, abs=1e-10)
    w2 = w.copy()
    w2[m] += alpha
    assert information_gain(y, X @ w2 - b >= 0, k) == pytest.approx(gain, abs=1e-10)


def _brute_force_linear_split(X, y, k):
    """Best information gain over every linear split of 2-D points: each dichotomy a line can make is made by
    a line through two points, turned slightly either way."""
    best = -np.inf
    for i in range(len(y)):
        for j in range(i + 1, len(y)):
            d = X[j] - X[i]
            base = np.arctan2(d[1], d[0]) + np.pi / 2
            for eps in (-1e-6, 1e-6):
                w = np.array([np.cos(base + eps), np.sin(base + eps)])
                best = max(best, best_threshold(X @ w, y, k, 1)[1])
    return best


def test_oc1_with_restarts_reaches_the_brute_force_optimum_in_two_dimensions():
    """On random 2-D nodes OC1 never reports more than the best linear split (its gain is real) and its
    restarts and perturbations find that optimum on most nodes."""
    hits = 0
    for seed in range(10):
        rng = np.random.default_rng(seed)
        X, y = rng.normal(size=(25, 2)), rng.integers(0, 2, 25)
        best = _brute_force_linear_split(X, y, 2)
        gain = oc1_search(X, y, 2, np.array([1.0, 0.0]), 0.0, rng.normal(size=(19, 2)),
                          rng.normal(size=(20, 5, 3)), 1, 50)[2]
        assert gain <= best + 1e-9
        hits += gain >= best - 1e-9
    assert hits >= 8


def test_restarts_and_random_jumps_beat_plain_coordinate_descent():
    """A node where deterministic coordinate descent from the axis start stalls in a local optimum
    (classes: sign(x0 x1) xor [x2 > 0.5]); OC1's random perturbations and restarts escape it."""
    better_jumps = better_full = 0
    for seed in range(10):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(60, 3))
        y = ((X[:, 0] * X[:, 1] > 0) ^ (X[:, 2] > 0.5)).astype(np.int64)
        w0 = np.array([1.0, 0.0, 0.0])
        plain = oc1_search(X, y, 2, w0, 0.0, np.zeros((0, 3)), np.zeros((1, 0, 4)), 1, 50)[2]
        jumps = oc1_search(X, y, 2, w0, 0.0, np.zeros((0, 3)), rng.normal(size=(1, 5, 4)), 1, 50)[2]
        full = oc1_search(X, y, 2, w0, 0.0, rng.normal(size=(9, 3)), rng.normal(size=(10, 5, 4)), 1, 50)[2]
        better_jumps += jumps > plain + 0.01
        better_full += full > plain + 0.02
    assert better_jumps >= 2 and better_full >= 6


@settings(max_examples=60, deadline=None)
@given(node_data(), st.integers(0, 2**31))
def test_oc1_search_reports_true_gain_of_its_hyperplane(data, seed):
    X, y, k = data
    rng = np.random.default_rng(seed)
    p = X.shape[1]
    w0, b0 = rng.normal(size=p), 0.3
    w, b, gain = oc1_search(X, y, k, w0, b0, rng.normal(size=(2, p)), rng.normal(size=(3, 2, p + 1)), 1, 20)
    if np.isfinite(gain):
        assert information_gain(y, route_right(X, _oblique(w, b)), k) == pytest.approx(gain, abs=1e-10)


def _oblique(w, b):
    from treeopt.greedy._grow import NodeSplit
    return NodeSplit.oblique(w, b)


def _rotated_problem(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    y = (X[:, 0] + 0.8 * X[:, 1] >= 0.1).astype(np.int64)
    return X, y


def test_oc1_recovers_an_oblique_boundary():
    X, y = _rotated_problem()
    finder = OC1SplitFinder(2, n_features_split=3, n_restarts=5, n_perturbations=5, min_samples_leaf=1)
    split = finder(X, y, np.random.default_rng(0), 0)
    _, _, axis_gain = best_sampled_axis_split(X, y, 2, 3, 1, np.random.default_rng(0))
    gain = information_gain(y, route_right(X, split), 2)
    h = entropy(np.bincount(y))
    assert axis_gain < 0.6 * h  # the axis split is poor here ...
    assert gain > 0.95 * h  # ... and OC1 nearly separates the classes with one hyperplane
    oc1 = OC1TreeClassifier(max_features=None, n_restarts=5, random_state=0).fit(X, y)
    axis = AxisAlignedTreeClassifier(random_state=0).fit(X, y)
    assert oc1.tree_.stats()["n_leaves"] * 4 < axis.tree_.stats()["n_leaves"]
    assert oc1.n_oblique_splits_ >= 1


def test_oc1_tree_fits_training_data_and_is_seeded():
    X, y = _rotated_problem(n=300, seed=1)
    y[X[:, 2] > 0.7] = 2
    a = OC1TreeClassifier(n_restarts=3, random_state=3).fit(X, y)
    b = OC1TreeClassifier(n_restarts=3, random_state=3).fit(X, y)
    assert np.array_equal(a.predict(X), y)  # grown to purity
    assert set(a.classes_) == {0, 1, 2}
    assert np.array_equal(a.tree_.bias, b.tree_.bias)
    assert (a.tree_.W != b.tree_.W).nnz == 0
    assert np.array_equal(a.apply(X), a.tree_.apply(X))


def test_oc1_respects_max_depth_and_min_samples_leaf():
    X, y = _rotated_problem(n=300, seed=2)
    y[:30] = 1 - y[:30]
    tree = OC1TreeClassifier(n_restarts=2, max_depth=3, min_samples_leaf=5, random_state=0).fit(X, y).tree_
    assert tree.max_depth <= 3
    assert tree.n_samples[tree.leaves].min() >= 5


def test_oc1_input_validation():
    X, y = _rotated_problem(n=50)
    with pytest.raises(ValueError, match="class"):
        OC1TreeClassifier().fit(X, np.zeros(50))
    Xbad = X.copy()
    Xbad[0, 0] = np.nan
    with pytest.raises(ValueError):
        OC1TreeClassifier().fit(Xbad, y)
    with pytest.raises(ValueError):
        OC1TreeClassifier(n_restarts=0).fit(X, y)
    fitted = OC1TreeClassifier(n_restarts=1, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        fitted.predict(X[:, :2])


# --- the fast line search against the plain one (071be0e's), bit for bit --------------------------------------

def _line_search_case(rng, n, k, kind):
    """(V, d, y) of one line search: continuous, on an integer grid (ties of U, mixed and not), or with d = 0
    points and duplicated rows (as a bootstrap sample has)."""
    y = rng.integers(0, k, n)
    if kind == "continuous":
        X = rng.normal(size=(n, 3))
    elif kind == "grid":  # Letter-like integer features: many equal critical values, of mixed classes
        X = rng.integers(-3, 4, size=(n, 3)).astype(float)
    else:  # "duplicates": every row twice with its label, and exact zeros in the direction
        half = rng.integers(-5, 6, size=((n + 1) // 2, 3)).astype(float) / 3
        X, y = np.repeat(half, 2, axis=0)[:n], np.repeat(y[: (n + 1) // 2], 2)[:n]
    w = rng.integers(-3, 4, size=3).astype(float) if kind != "continuous" else rng.normal(size=3)
    V = X @ w - 0.5
    d = X[:, int(rng.integers(0, 3))].copy() if rng.random() < 0.8 else -np.ones(n)
    return V, d, y


@pytest.mark.parametrize("kind", ["continuous", "grid", "duplicates"])
def test_line_search_equals_the_plain_form_bit_for_bit(kind):
    """Every sort path (quicksort replay below RADIX_MIN_POINTS, 8-bit and 11-bit radix above, the fallback on
    mixed ties) returns exactly the alpha and gain of 071be0e's argsort-and-sweep line search."""
    rng = np.random.default_rng(["continuous", "grid", "duplicates"].index(kind))
    sizes = [2, 5, RADIX_MIN_POINTS - 1, RADIX_MIN_POINTS, 300, RADIX_WIDE_POINTS - 1, RADIX_WIDE_POINTS, 2500]
    for n in sizes:
        for trial in range(6):
            k = int(rng.integers(2, 27))
            V, d, y = _line_search_case(rng, n, k, kind)
            msl = int(rng.integers(1, 4))
            total, xlogx = class_counts(y, k), _xlogx_table(n)
            got = _line_search(V, d, y, k, msl, total, xlogx)
            want = reference.line_search(V, d, y, k, msl, total, xlogx)
            assert got == want or (np.isnan(got[0]) and np.isnan(want[0])), (kind, n, trial, got, want)


@pytest.mark.parametrize("kind", ["continuous", "grid", "one_class_ties", "zeros"])
def test_best_offset_equals_the_argsort_form_bit_for_bit(kind):
    """The exact offset on a direction (the radix sort from RADIX_MIN_POINTS points on, the argsort form on a tie
    group mixing classes) returns exactly the (b, gain) of the argsort form, 071be0e's."""
    rng = np.random.default_rng(["continuous", "grid", "one_class_ties", "zeros"].index(kind))
    sizes = [2, RADIX_MIN_POINTS - 1, RADIX_MIN_POINTS, 300, RADIX_WIDE_POINTS - 1, RADIX_WIDE_POINTS, 2500]
    for n in sizes:
        for trial in range(6):
            k = int(rng.integers(2, 27))
            y = rng.integers(0, k, n)
            if kind == "continuous":
                X, w = rng.normal(size=(n, 3)), rng.normal(size=3)
            elif kind == "grid":  # projections tie across classes
                X, w = rng.integers(-3, 4, size=(n, 3)).astype(float), rng.integers(-2, 3, size=3).astype(float)
            elif kind == "one_class_ties":  # ties only inside a class: the radix order is kept
                X, w = np.repeat(rng.normal(size=(n // 4 + 1, 3)), 4, axis=0)[:n], rng.normal(size=3)
                y = np.repeat(rng.integers(0, k, n // 4 + 1), 4)[:n]
            else:  # a large group of zeros of every class, next to continuous values
                X = np.where(rng.random((n, 3)) < 0.5, 0.0, rng.normal(size=(n, 3)))
                X[rng.random(n) < 0.5] = 0.0
                w = np.array([-1.0, 0.0, 1.0]) * rng.random()
            msl = int(rng.integers(1, 4))
            total, xlogx = class_counts(y, k), _xlogx_table(n)
            ws = line_search_workspace(n, k, xlogx)
            got = _best_offset_into(X, w, y, k, msl, total, xlogx, np.empty(n), ws)
            want = _best_offset(X, w, y, k, msl, total, xlogx, np.empty(n))
            same = (np.isnan(got[0]) and np.isnan(want[0])) or got[0] == want[0]
            assert same and got[1] == want[1], (kind, n, trial, got, want)


@pytest.mark.parametrize("seed", range(3))
def test_oc1_search_finds_the_same_hyperplane_as_the_plain_search(seed):
    """The whole node search (restarts, coordinate descent, perturbations) with the fast line search ends on the
    same (w, b, gain) as 071be0e's, bit for bit, on nodes large enough for the radix paths, with and without
    tied critical values."""
    rng = np.random.default_rng(seed)
    n, p, k = 1500, 4, 5
    X = rng.normal(size=(n, p)) if seed == 0 else rng.integers(0, 8, size=(n, p)).astype(float)
    y = (X @ rng.normal(size=p) + rng.normal(size=n) > 0).astype(np.int64) + 2 * (X[:, 0] > X[:, 1])
    w0 = np.zeros(p)
    w0[0] = 1.0
    args = (X, y, k, w0, float(np.median(X[:, 0])), rng.normal(size=(3, p)), rng.normal(size=(4, 3, p + 1)), 1, 20)
    w, b, gain = oc1_search(*args)
    w_ref, b_ref, gain_ref = reference.oc1_search(*args)
    assert np.array_equal(w, w_ref) and b == b_ref and gain == gain_ref


def test_sorts_order_pairs_like_numbas_argsort():
    """The quicksort replay gives numba's argsort permutation, ties included; the radix sorts give an ascending
    order carrying the tags (ties in any order)."""
    rng = np.random.default_rng(0)
    argsort = reference.numba_argsort
    for n in [1, 2, 15, 16, 17, 100, 700, 1500, 6000]:
        # large tie-heavy inputs too: the tie-prone and mixed-tie fallbacks of the line search replay the quicksort on
        # nodes of thousands of points (Connect-4's projections take a few values)
        for keys in (rng.normal(size=n), rng.integers(-4, 5, n) / 3.0, np.sort(rng.normal(size=n))[::-1].copy(),
                     np.where(rng.random(n) < 0.5, -0.0, 0.0), rng.integers(0, 3, n) * 0.5 - rng.integers(0, 2, n)):
            tags = np.arange(n, dtype=np.int32)
            sorted_keys = keys.copy()
            quicksort_pairs(sorted_keys, tags, n, np.empty(200, dtype=np.int64))
            assert np.array_equal(tags, argsort(keys))
            for sort in (radix_sort_pairs, radix_sort_pairs_small):
                ordered, spare_keys, spare_tags, hist, hist_small = radix_workspace(n)
                for i in range(n):
                    ordered[i] = float_to_ordered(keys.view(np.uint64)[i])
                out_keys, out_tags = sort(ordered, np.arange(n, dtype=np.int32), n, spare_keys, spare_tags,
                                          hist if sort is radix_sort_pairs else hist_small)
                assert np.all(out_keys[1:n] >= out_keys[: n - 1])
                assert np.array_equal(keys[out_tags[:n]], np.sort(keys))


def test_a_node_that_stops_tying_goes_back_to_the_radix_path():
    """The tie-prone rule is judged per window, not once per node: a node whose first searches tie across classes (an
    axis-aligned start on integer features) takes the quicksort form for TIE_PRONE_SKIP searches, then tries the
    radix path again and keeps it once its searches no longer tie (judged once, Letter's trees took 3x as long).
    Every search returns the plain form's result either way."""
    rng = np.random.default_rng(0)
    n, k = 400, 5
    y = rng.integers(0, k, n)
    total, xlogx = class_counts(y, k), _xlogx_table(n)
    ws = line_search_workspace(n, k, xlogx)
    tally = ws[10]
    grid = rng.integers(-3, 4, size=(n, 2)).astype(float)  # tied critical values of mixed classes
    V_tied, d_tied = grid[:, 0] - 0.5, grid[:, 1].copy()
    V, d = rng.normal(size=n), rng.normal(size=n)  # no ties
    want_tied = reference.line_search(V_tied, d_tied, y, k, 1, total, xlogx)
    want = reference.line_search(V, d, y, k, 1, total, xlogx)
    for _ in range(TIE_PRONE_AFTER):
        assert _line_search_into(V_tied, d_tied, y, k, 1, total, xlogx, ws) == want_tied
    assert tally[0] == TIE_PRONE_AFTER and 2 * tally[1] > tally[0]  # judged tie-prone
    for _ in range(TIE_PRONE_SKIP):  # the quicksort form directly, even for searches that would not tie
        assert _line_search_into(V, d, y, k, 1, total, xlogx, ws) == want
    assert tally[0] == 0  # a new window
    for _ in range(TIE_PRONE_AFTER + 1):
        assert _line_search_into(V, d, y, k, 1, total, xlogx, ws) == want
    assert tally[1] == 0 and tally[0] >= 1  # the radix path, without falling back


# --- distinct points with multiplicities (a bootstrap sample's copies) against the search over rows ------------------

def _bootstrap_node(rng, n, p, kind, k):
    """Rows of a bootstrap sample (indices into ``u`` points drawn with replacement) and their labels: continuous,
    on an integer grid (tied critical values of mixed classes), or one-hot (Connect-4-like, tie-prone)."""
    u = max(2, int(0.8 * n))
    if kind == "continuous":
        P = rng.normal(size=(u, p))
    elif kind == "grid":
        P = rng.integers(-3, 4, size=(u, p)).astype(float)
    else:
        P = (rng.random((u, p)) < 0.3).astype(float)
    labels = rng.integers(0, k, u)
    ids = rng.integers(0, u, n)
    return ids, P[ids], labels[ids]


@pytest.mark.parametrize("kind", ["continuous", "grid", "onehot"])
def test_line_searches_over_distinct_points_equal_the_search_over_rows(kind):
    """A run of line searches on one workspace (the tie-prone tally carries over between them, as in a node's
    coordinate descent): over the distinct points with multiplicities, every (alpha, gain) and the tally after it
    equal the search over the rows, on every path (below RADIX_MIN_POINTS, mixed ties, tie-prone windows)."""
    from treeopt.greedy._oc1 import _line_search_multi

    rng = np.random.default_rng(["continuous", "grid", "onehot"].index(kind))
    saw_mixed = saw_skip = False
    for n in [3, RADIX_MIN_POINTS // 2, RADIX_MIN_POINTS + 10, 400, RADIX_WIDE_POINTS + 300]:
        k = int(rng.integers(2, 7))
        p = 5
        ids, X, y = _bootstrap_node(rng, n, p, kind, k)
        _, first, inv = np.unique(ids, return_index=True, return_inverse=True)
        mult = np.bincount(inv).astype(np.int64)
        Xd, yd = X[first], y[first]
        total, xlogx = class_counts(y, k), _xlogx_table(n)
        ws_rows, ws_multi = line_search_workspace(n, k, xlogx), line_search_workspace(n, k, xlogx)
        rows = (inv.astype(np.int64), y, np.empty(n), np.empty(n))
        w = rng.normal(size=p) if kind == "continuous" else rng.integers(-2, 3, size=p).astype(float)
        for step in range(3 * TIE_PRONE_AFTER + TIE_PRONE_SKIP):
            m = step % (p + 1)
            d_rows = X[:, m].copy() if m < p else -np.ones(n)
            d = Xd[:, m].copy() if m < p else -np.ones(first.size)
            V_rows, V = X @ w - 0.5, Xd @ w - 0.5
            msl = 1 + step % 2
            want = _line_search_into(V_rows, d_rows, y, k, msl, total, xlogx, ws_rows)
            got = _line_search_multi(V, d, yd, mult, k, msl, total, xlogx, ws_multi, rows)
            assert got == want or (np.isnan(got[0]) and np.isnan(want[0])), (kind, n, step, got, want)
            assert np.array_equal(ws_multi[10], ws_rows[10]), (kind, n, step)  # the tally
            saw_mixed |= bool(ws_rows[10][1] > 0)
            saw_skip |= bool(ws_rows[10][2] > 0)
            w[step % p] += 0.5 if kind != "continuous" else rng.normal()
    if kind != "continuous":  # the paths the ties take were taken
        assert saw_mixed and saw_skip


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from(["continuous", "grid", "onehot"]), st.integers(20, 700))
def test_the_node_search_over_distinct_points_finds_the_rows_hyperplane(seed, kind, n):
    """The whole OC1 node search (restarts, coordinate descent, perturbations, the final offset) over a bootstrap
    node's distinct points with multiplicities ends on the same (w, b, gain) as over its rows, bit for bit."""
    from treeopt.greedy._oc1 import oc1_search_multi

    rng = np.random.default_rng(seed)
    p, k = 4, int(rng.integers(2, 5))
    ids, X, y = _bootstrap_node(rng, n, p, kind, k)
    _, first, inv = np.unique(ids, return_index=True, return_inverse=True)
    w0 = np.zeros(p)
    w0[0] = 1.0
    args = (k, w0, float(np.median(X[:, 0])) + 0.25, rng.normal(size=(3, p)), rng.normal(size=(4, 3, p + 1)), 1, 20)
    want = oc1_search(X, y, *args)
    got = oc1_search_multi(X, y, first.astype(np.int64), inv.astype(np.int64), *args)
    assert np.array_equal(got[0], want[0]) and got[1] == want[1] and got[2] == want[2]


@pytest.mark.parametrize("data", ["digits", "grid"])
def test_an_oc1_forest_searches_distinct_points_and_grows_the_same_trees(data, monkeypatch):
    """OC1 Forest trees (bootstrap samples: about a third of each tree's rows are copies) grown with each node's
    distinct points searched once, and with every row searched, are the same trees, array for array."""
    from sklearn.datasets import load_digits

    from treeopt.forest.oc1 import OC1ForestClassifier

    if data == "digits":
        X, y = load_digits(return_X_y=True)
        X = X.astype(float)
    else:
        rng = np.random.default_rng(1)
        X = rng.integers(0, 4, size=(900, 8)).astype(float)
        y = (X[:, 0] + X[:, 1] + rng.integers(0, 2, 900)).astype(np.int64) % 3
    forests = {}
    for flag in (False, True):
        monkeypatch.setattr(OC1SplitFinder, "use_multiplicities", flag)
        forests[flag] = OC1ForestClassifier(n_estimators=2, n_restarts=3, n_jobs=1, random_state=3).fit(X, y)
    for a, b in zip(forests[False].estimators_, forests[True].estimators_):
        for name in ("left", "right", "feature", "bias", "value"):
            assert np.array_equal(getattr(a.tree_, name), getattr(b.tree_, name)), name
        assert (a.tree_.W != b.tree_.W).nnz == 0


def test_a_forest_reaches_the_node_search_through_one_compiled_entry(monkeypatch):
    """Every node of a forest tree, with copies of a point (bootstrap) or without (bootstrap=False), goes through
    oc1_search_multi: a small warm-up fit compiles what the timed fit needs (the plain entry, met first by a node
    without copies inside a timed fit, compiled there: 2.5 s of a 5.7 s Letter tree with an empty numba cache)."""
    import treeopt.greedy.oc1 as oc1_module
    from treeopt.forest.oc1 import OC1ForestClassifier

    def plain(*args):
        raise AssertionError("the forest called the row search's own entry")

    monkeypatch.setattr(oc1_module, "oc1_search", plain)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(np.int64)
    for bootstrap in (True, False):
        OC1ForestClassifier(n_estimators=2, n_restarts=2, bootstrap=bootstrap, n_jobs=1, random_state=0).fit(X, y)
