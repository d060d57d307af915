"""Information-gain split criteria shared by the greedy tree learners.

All functions are numba kernels (``nogil`` so bagged trees can be grown in threads).
Entropies are in nats. For a split of ``n`` points into ``n_L`` left and ``n_R`` right,

    gain = H(parent) - (n_L / n) H(left) - (n_R / n) H(right),

which is the information gain that C4.5, the CO2 paper (its eq. (2) with the log loss) and
the non-greedy paper's baselines maximise. The split convention is the tree store's: a point
goes RIGHT iff its (projected) value is ``>= threshold``.

The sweep over sorted values uses ``n H = n log n - sum_c n_c log n_c`` so that moving one
point from the right child to the left child updates the criterion in O(1); a full threshold
search is therefore one sort plus one linear pass.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._radix import stable_sort_labelled, stable_sort_workspace

_NJIT = dict(cache=True, nogil=True)


@njit(**_NJIT)
def class_counts(y, k):
    """Number of points of each class ``0..k-1`` in the int label vector ``y``."""
    counts = np.zeros(k, dtype=np.int64)
    for i in range(y.shape[0]):
        counts[y[i]] += 1
    return counts


@njit(**_NJIT)
def entropy(counts):
    """Shannon entropy (nats) of the distribution proportional to ``counts`` (0 if empty)."""
    total = 0.0
    for c in range(counts.shape[0]):
        total += counts[c]
    if total <= 0.0:
        return 0.0
    h = 0.0
    for c in range(counts.shape[0]):
        if counts[c] > 0:
            p = counts[c] / total
            h -= p * np.log(p)
    return h


@njit(**_NJIT)
def information_gain(y, go_right, k):
    """Information gain (nats) of sending ``y[go_right]`` right and the rest left."""
    n = y.shape[0]
    left = np.zeros(k, dtype=np.int64)
    right = np.zeros(k, dtype=np.int64)
    for i in range(n):
        if go_right[i]:
            right[y[i]] += 1
        else:
            left[y[i]] += 1
    n_right = right.sum()
    n_left = n - n_right
    if n == 0:
        return 0.0
    return entropy(left + right) - (n_left * entropy(left) + n_right * entropy(right)) / n


@njit(**_NJIT)
def _xlogx_table(n):
    """``t[m] = m log m`` for m = 0..n (with 0 log 0 = 0)."""
    t = np.zeros(n + 1)
    for m in range(2, n + 1):
        t[m] = m * np.log(m)
    return t


@njit(**_NJIT)
def _sweep_sorted(zs, ys, k, min_samples_leaf, total, xlogx):
    """Best cut of presorted values ``zs`` (labels ``ys``); returns (threshold, gain).

    A cut after position ``i`` puts the ``i`` smallest values left; it is valid when
    ``zs[i-1] < zs[i]`` and both sides hold at least ``min_samples_leaf`` points.
    Returns (nan, -inf) when no cut is valid.
    """
    n = zs.shape[0]
    left = np.zeros(k, dtype=np.int64)
    right = total.copy()
    s_left = 0.0  # sum_c n_c log n_c on each side
    s_right = 0.0
    for c in range(k):
        s_right += xlogx[right[c]]
    parent = xlogx[n] - s_right  # n H(parent)
    best_gain = -np.inf
    best_i = -1
    last = n - min_samples_leaf  # largest valid left size
    for i in range(1, last + 1):
        c = ys[i - 1]
        s_left += xlogx[left[c] + 1] - xlogx[left[c]]
        s_right += xlogx[right[c] - 1] - xlogx[right[c]]
        left[c] += 1
        right[c] -= 1
        if i < min_samples_leaf or not zs[i - 1] < zs[i]:
            continue
        children = (xlogx[i] - s_left) + (xlogx[n - i] - s_right)
        gain = (parent - children) / n
        if gain > best_gain:
            best_gain = gain
            best_i = i
    if best_i < 0:
        return np.nan, -np.inf
    lo = zs[best_i - 1]
    hi = zs[best_i]
    thr = 0.5 * lo + 0.5 * hi
    if not thr > lo:  # adjacent floats: the midpoint rounds onto lo
        thr = hi
    return thr, max(best_gain, 0.0)


@njit(**_NJIT)
def column_split(z, y, k, msl, total, xlogx, scratch):
    """Best cut of one candidate column ``z`` (contiguous float64) with labels ``y``: sorted with its labels in the
    stable (mergesort) order by :func:`treeopt.greedy._radix.stable_sort_labelled` into ``scratch`` ``(zs, ys,
    ws)``, then :func:`_sweep_sorted`; (nan, -inf) for a constant column."""
    zs, ys, ws = scratch
    n = z.shape[0]
    stable_sort_labelled(z, y, zs, ys, ws)
    if not zs[0] < zs[n - 1]:
        return np.nan, -np.inf
    return _sweep_sorted(zs, ys, k, msl, total, xlogx)


@njit(**_NJIT)
def best_threshold(z, y, k, min_samples_leaf):
    """Best information-gain threshold on projected values ``z`` (e.g. ``z = X w``).

    Exhaustive over all cuts between consecutive distinct sorted values; the threshold is the
    midpoint, so ``z >= threshold`` goes right. Returns ``(threshold, gain)``, or
    ``(nan, -inf)`` when no cut leaves ``min_samples_leaf`` points on both sides.
    """
    n = z.shape[0]
    order = np.argsort(z, kind="mergesort")
    zs = z[order]
    ys = y[order]
    return _sweep_sorted(zs, ys, k, max(min_samples_leaf, 1), class_counts(y, k), _xlogx_table(n))


@njit(**_NJIT)
def best_axis_split(X, y, k, features, min_samples_leaf):
    """Exact best axis-aligned split over the candidate ``features``.

    Returns ``(feature, threshold, gain)``; the split sends ``X[:, feature] >= threshold``
    right. Ties keep the earliest feature in ``features``. ``feature`` is -1 (threshold nan,
    gain -inf) when no feature admits a valid cut.
    """
    n = X.shape[0]
    msl = max(min_samples_leaf, 1)
    if n < 2:
        return -1, np.nan, -np.inf
    total = class_counts(y, k)
    xlogx = _xlogx_table(n)
    best_f = -1
    best_thr = np.nan
    best_gain = -np.inf
    col = np.empty(n)
    zs = np.empty(n)
    ys = np.empty(n, dtype=y.dtype)
    ws = stable_sort_workspace(n)
    for j in range(features.shape[0]):
        f = features[j]
        for i in range(n):
            col[i] = X[i, f]
        thr, gain = column_split(col, y, k, msl, total, xlogx, (zs, ys, ws))
        if gain > best_gain:
            best_f = f
            best_thr = thr
            best_gain = gain
    return best_f, best_thr, best_gain


@njit(**_NJIT)
def best_difference_split(X, rows, y, k, first, second, min_samples_leaf):
    """:func:`best_axis_split` over the differences ``X[rows, first[j]] - X[rows, second[j]]`` (a two-probe
    node), without copying the node's rows or making the n x len(first) matrix of differences and its column
    copies: the differences are taken a block of pairs at a time, reading each row once per block (the rows
    are long: 2,883 values for a segmentation window). Same float64 differences, same order of candidates: the
    same (j, threshold, gain) as ``best_axis_split(X[rows][:, first] - X[rows][:, second], y, k,
    arange(len(first)), min_samples_leaf)``."""
    n = rows.shape[0]
    n_pairs = first.shape[0]
    msl = max(min_samples_leaf, 1)
    if n < 2:
        return -1, np.nan, -np.inf
    total = class_counts(y, k)
    xlogx = _xlogx_table(n)
    # a block of differences of at most ~1 GB (and at least 8 pairs; the old n x len(first) matrix and its two
    # operands took 3x the whole): the rows are read len(first) / block times, once up to 131,072 points
    block = min(n_pairs, max(8, (1 << 30) // (8 * n)))
    D = np.empty((block, n))
    zs = np.empty(n)
    ys = np.empty(n, dtype=y.dtype)
    ws = stable_sort_workspace(n)
    best_j = -1
    best_thr = np.nan
    best_gain = -np.inf
    for start in range(0, n_pairs, block):
        stop = min(n_pairs, start + block)
        for i in range(n):
            r = rows[i]
            for t in range(stop - start):
                D[t, i] = X[r, first[start + t]] - X[r, second[start + t]]
        for t in range(stop - start):
            thr, gain = column_split(D[t], y, k, msl, total, xlogx, (zs, ys, ws))
            if gain > best_gain:
                best_j = start + t
                best_thr = thr
                best_gain = gain
    return best_j, best_thr, best_gain


def best_sampled_axis_split(X, y, k, n_features_split, min_samples_leaf, rng):
    """Best axis split over ``n_features_split`` features drawn without replacement (a random-forest node).

    Falls back to the remaining features only when every sampled one is constant at this node (as
    scikit-learn does). Returns ``(feature, threshold, gain)`` like :func:`best_axis_split`.
    """
    order = rng.permutation(X.shape[1]).astype(np.int64)
    q = n_features_split
    f, thr, gain = best_axis_split(X, y, k, order[:q], min_samples_leaf)
    if f < 0 and q < order.shape[0]:
        f, thr, gain = best_axis_split(X, y, k, order[q:], min_samples_leaf)
    return int(f), float(thr), float(gain)


def separates_perfectly(gain, y, k, tol=1e-12):
    """True when a split's information gain equals the node's entropy: both children are pure, so no
    oblique search can improve it."""
    return gain >= entropy(np.bincount(y, minlength=k)) - tol


# Jitted callees in other files (numba caches by this file's stamp only; tests/test_numba_cache_keys.py):
# numba cache key: greedy/_radix.py a9670243c6c38a19
