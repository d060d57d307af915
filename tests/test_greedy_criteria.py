"""The information-gain kernels against brute-force enumeration."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from treeopt.greedy._criteria import (
    best_axis_split,
    best_threshold,
    class_counts,
    entropy,
    information_gain,
)


def _entropy_ref(labels, k):
    if labels.size == 0:
        return 0.0
    p = np.bincount(labels, minlength=k) / labels.size
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def _gain_ref(y, right, k):
    n = y.size
    return (_entropy_ref(y, k) - right.sum() / n * _entropy_ref(y[right], k)
            - (~right).sum() / n * _entropy_ref(y[~right], k))


def _brute_best(z, y, k, msl):
    """Best gain over every threshold between distinct values (None if no valid cut)."""
    values = np.unique(z)
    best = None
    for lo, hi in zip(values[:-1], values[1:]):
        right = z >= hi
        if right.sum() < msl or (~right).sum() < msl:
            continue
        g = _gain_ref(y, right, k)
        best = g if best is None else max(best, g)
    return best


@st.composite
def labelled_data(draw, max_n=30, max_p=4):
    n = draw(st.integers(1, max_n))
    p = draw(st.integers(1, max_p))
    k = draw(st.integers(2, 4))
    # small integer grid -> many ties between feature values
    X = draw(arrays(np.float64, (n, p), elements=st.integers(-3, 3).map(float)))
    y = draw(arrays(np.int64, n, elements=st.integers(0, k - 1)))
    msl = draw(st.integers(1, 4))
    return X, y, k, msl


def test_entropy_and_counts_known_values():
    y = np.array([0, 0, 1, 1, 2, 2, 2, 2], dtype=np.int64)
    counts = class_counts(y, 4)
    assert counts.tolist() == [2, 2, 4, 0]
    assert entropy(counts) == pytest.approx(-(2 * 0.25 * np.log(0.25) + 0.5 * np.log(0.5)))
    assert entropy(np.zeros(3)) == 0.0
    # a perfect split of two balanced classes gains log 2
    y2 = np.array([0, 0, 1, 1], dtype=np.int64)
    assert information_gain(y2, np.array([False, False, True, True]), 2) == pytest.approx(np.log(2))
    assert information_gain(y2, np.array([False, True, False, True]), 2) == pytest.approx(0.0, abs=1e-15)


@settings(max_examples=150, deadline=None)
@given(labelled_data())
def test_information_gain_matches_reference(data):
    X, y, k, _ = data
    right = X[:, 0] >= 0
    assert information_gain(y, right, k) == pytest.approx(_gain_ref(y, right, k), abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(labelled_data())
def test_best_axis_split_matches_brute_force(data):
    X, y, k, msl = data
    f, thr, gain = best_axis_split(X, y, k, np.arange(X.shape[1]), msl)
    per_feature = [_brute_best(X[:, j], y, k, msl) for j in range(X.shape[1])]
    valid = [g for g in per_feature if g is not None]
    if not valid:
        assert f == -1 and gain == -np.inf and np.isnan(thr)
        return
    assert gain == pytest.approx(max(valid), abs=1e-10)
    right = X[:, f] >= thr
    # the returned threshold realises the reported gain and respects min_samples_leaf
    assert _gain_ref(y, right, k) == pytest.approx(gain, abs=1e-10)
    assert msl <= right.sum() <= X.shape[0] - msl
    # the threshold lies strictly between two consecutive distinct values of that feature
    assert X[~right, f].max() < thr <= X[right, f].min()


@settings(max_examples=100, deadline=None)
@given(labelled_data(max_p=1))
def test_best_threshold_matches_brute_force(data):
    X, y, k, msl = data
    z = X[:, 0] * 0.37 + 0.1  # non-integer projections
    thr, gain = best_threshold(z, y, k, msl)
    ref = _brute_best(z, y, k, msl)
    if ref is None:
        assert gain == -np.inf and np.isnan(thr)
    else:
        assert gain == pytest.approx(ref, abs=1e-10)
        assert _gain_ref(y, z >= thr, k) == pytest.approx(gain, abs=1e-10)


def test_candidate_features_restrict_the_search():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    y = (X[:, 1] > 0).astype(np.int64)
    assert best_axis_split(X, y, 2, np.arange(3), 1)[0] == 1
    f, _, gain = best_axis_split(X, y, 2, np.array([0, 2]), 1)
    assert f in (0, 2) and gain < np.log(2) - 0.1


def test_threshold_between_adjacent_floats_separates_them():
    a = 1.0
    b = np.nextafter(a, 2.0)  # midpoint rounds onto a
    X = np.array([[a], [a], [b], [b]])
    y = np.array([0, 0, 1, 1], dtype=np.int64)
    f, thr, gain = best_axis_split(X, y, 2, np.array([0]), 1)
    assert f == 0 and gain == pytest.approx(np.log(2))
    assert np.array_equal(X[:, 0] >= thr, [False, False, True, True])
