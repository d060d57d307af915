"""Numba kernels of TAO (Carreira-Perpinan & Tavallali 2018): routing, care points, exact axis splits.

All kernels take flat arrays: ``left``/``right`` (-1 at leaves), ``feature`` (>= 0 axis-aligned, -1 oblique),
``bias``, the oblique weight rows as ``indices[lo[i]:hi[i]], data[lo[i]:hi[i]]`` (per-node ranges rather than a
CSR ``indptr``, so one node's row can be replaced without touching the others'), ``label`` (the class a leaf
predicts). A point goes right at node i iff ``w_i . x - b_i >= 0`` (DESIGN.md).
"""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def _goes_right(X, r, node, feature, bias, lo, hi, indices, data):
    f = feature[node]
    if f >= 0:
        return X[r, f] >= bias[node]
    s = 0.0
    for jj in range(lo[node], hi[node]):
        s += data[jj] * X[r, indices[jj]]
    return s - bias[node] >= 0.0


@njit(cache=True, nogil=True)
def reach_by_depth(X, left, right, feature, bias, lo, hi, indices, data, max_depth):
    """(n x max_depth+1) array: the node each point visits at each depth, -1 below its leaf."""
    n = X.shape[0]
    out = np.full((n, max_depth + 1), -1, dtype=np.int64)
    for r in range(n):
        node = 0
        d = 0
        out[r, 0] = 0
        while left[node] >= 0:
            if _goes_right(X, r, node, feature, bias, lo, hi, indices, data):
                node = right[node]
            else:
                node = left[node]
            d += 1
            out[r, d] = node
    return out


@njit(cache=True, nogil=True)
def predict_from(X, rows, start, left, right, feature, bias, lo, hi, indices, data, label):
    """Label predicted for X[rows[k]] by the subtree rooted at ``start[k]``."""
    m = rows.shape[0]
    out = np.empty(m, dtype=np.int64)
    for k in range(m):
        r = rows[k]
        node = start[k]
        while left[node] >= 0:
            if _goes_right(X, r, node, feature, bias, lo, hi, indices, data):
                node = right[node]
            else:
                node = left[node]
        out[k] = label[node]
    return out


@njit(cache=True, nogil=True)
def care_points(X, rows, y, node, tree, label):
    """Theorem 3.2: among the points ``rows`` reaching internal ``node``, the "care" points (exactly one child
    subtree classifies them correctly) and their target child (True = right). ``tree``: the flat arrays
    ``(left, right, feature, bias, lo, hi, indices, data)`` (``_Work.arrays()``), ``label`` the leaves' classes.

    Returns (care mask over rows, target_right over rows, current go_right over rows).
    """
    left, right, feature, bias, lo, hi, indices, data = tree
    m = rows.shape[0]
    care = np.zeros(m, dtype=np.bool_)
    target = np.zeros(m, dtype=np.bool_)
    cur = np.zeros(m, dtype=np.bool_)
    lc = left[node]
    rc = right[node]
    for k in range(m):
        r = rows[k]
        cur[k] = _goes_right(X, r, node, feature, bias, lo, hi, indices, data)
        # left subtree
        a = lc
        while left[a] >= 0:
            if _goes_right(X, r, a, feature, bias, lo, hi, indices, data):
                a = right[a]
            else:
                a = left[a]
        b = rc
        while left[b] >= 0:
            if _goes_right(X, r, b, feature, bias, lo, hi, indices, data):
                b = right[b]
            else:
                b = left[b]
        ok_left = label[a] == y[r]
        ok_right = label[b] == y[r]
        if ok_left != ok_right:
            care[k] = True
            target[k] = ok_right
    return care, target, cur


@njit(cache=True, nogil=True)
def _best_cut(sv, tg, n_right, b0, near):
    """Best threshold of "right iff value >= b" for the 0/1 loss against ``tg``, over values ``sv`` sorted
    ascending (``tg`` in the same order, ``n_right`` of them True). Candidates: "all right" (b = min), midpoints
    between consecutive distinct values and "all left" (b = max + 1). Ties go to the first candidate (lowest
    threshold), or with ``near`` to the one closest to ``b0``. Returns (errors, threshold)."""
    m = sv.shape[0]
    best_err = m - n_right  # threshold below everything: all go right, errors = number wanting left
    best_b = sv[0]
    prefix_right = 0
    for k in range(1, m + 1):
        if tg[k - 1]:
            prefix_right += 1
        # first k points go left
        if k < m and sv[k] == sv[k - 1]:
            continue
        err = prefix_right + (m - k) - (n_right - prefix_right)
        if err > best_err or (err == best_err and not near):
            continue
        if k == m:
            thr = sv[m - 1] + 1.0
        else:
            thr = 0.5 * (sv[k - 1] + sv[k])
            if not (thr > sv[k - 1]):
                thr = sv[k]
        if err < best_err or abs(thr - b0) < abs(best_b - b0):
            best_err, best_b = err, thr
    return best_err, best_b


@njit(cache=True, nogil=True)
def best_axis_split(X, rows, target):
    """Exact minimiser of the 0/1 loss of "right iff x_f >= b" against ``target`` over all (feature, threshold)
    pairs on the points ``rows`` (the reduced problem (4) for an axis-aligned node, by enumeration).

    Thresholds are midpoints between consecutive distinct values; also "all right" (b = min) and "all left"
    (b = max + 1). Returns (errors, feature, threshold); ties go to the lowest feature, then lowest threshold.
    """
    m = rows.shape[0]
    p = X.shape[1]
    n_right = 0
    for k in range(m):
        if target[k]:
            n_right += 1
    best_err = m + 1
    best_f = 0
    best_b = 0.0
    vals = np.empty(m)
    tg = np.empty(m, dtype=np.bool_)
    for f in range(p):
        for k in range(m):
            vals[k] = X[rows[k], f]
        order = np.argsort(vals, kind="mergesort")
        for k in range(m):
            tg[k] = target[order[k]]
        err, thr = _best_cut(vals[order], tg, n_right, 0.0, False)
        if err < best_err:
            best_err, best_f, best_b = err, f, thr
    return best_err, best_f, best_b


@njit(cache=True, nogil=True)
def majority(y, rows, n_classes, current):
    """Majority label of y[rows] (ties keep ``current`` when it is among the most frequent) and the counts."""
    counts = np.zeros(n_classes, dtype=np.int64)
    for k in range(rows.shape[0]):
        counts[y[rows[k]]] += 1
    best = current
    for c in range(n_classes):
        if counts[c] > counts[best]:
            best = c
    return best, counts


@njit(cache=True, nogil=True)
def oblique_side(X, rows, idx, w, b):
    """``w . x - b >= 0`` for X[rows] with the weights ``w`` on features ``idx`` (ascending): the node as a
    one-node tree routed by :func:`_goes_right`, so a node's accept test sees exactly the routing the tree will
    use."""
    feature = np.full(1, -1, dtype=np.int64)
    bias = np.full(1, b)
    lo = np.zeros(1, dtype=np.int64)
    hi = np.full(1, idx.shape[0], dtype=np.int64)
    m = rows.shape[0]
    out = np.empty(m, dtype=np.bool_)
    for k in range(m):
        out[k] = _goes_right(X, rows[k], 0, feature, bias, lo, hi, idx, w)
    return out


@njit(cache=True, nogil=True)
def column_modes(X):
    """Most frequent value of every column of X (ties: the smallest such value)."""
    n, p = X.shape
    out = np.zeros(p)
    col = np.empty(n)
    for f in range(p):
        for r in range(n):
            col[r] = X[r, f]
        col.sort()
        best_val = col[0] if n > 0 else 0.0
        best_len = 0
        k = 0
        while k < n:
            j = k + 1
            while j < n and col[j] == col[k]:
                j += 1
            if j - k > best_len:
                best_len, best_val = j - k, col[k]
            k = j
        out[f] = best_val
    return out


@njit(cache=True, nogil=True)
def oblique_scores(X, rows, idx, w):
    """``w . x`` for X[rows], summed in the order of :func:`_goes_right` (so ``score - b >= 0`` is its routing)."""
    m = rows.shape[0]
    out = np.empty(m)
    for k in range(m):
        s = 0.0
        for jj in range(idx.shape[0]):
            s += w[jj] * X[rows[k], idx[jj]]
        out[k] = s
    return out


@njit(cache=True, nogil=True)
def best_threshold(score, target, b0):
    """Exact minimiser over b of the 0/1 loss of "right iff score - b >= 0" against ``target``: the reduced problem
    (4) along a fixed direction w (:func:`_best_cut`, the scan of :func:`best_axis_split` for one column); among
    equally good thresholds the one closest to ``b0`` (the surrogate's own threshold) wins. Returns (errors, b)."""
    m = score.shape[0]
    if m == 0:
        return 0, b0
    order = np.argsort(score, kind="mergesort")
    n_right = 0
    for k in range(m):
        if target[k]:
            n_right += 1
    return _best_cut(score[order], target[order], n_right, b0, True)
