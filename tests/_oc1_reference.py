"""The OC1 node search as it was at 071be0e (before the sorted-pairs line search), kept as the reference that
``treeopt.greedy._oc1`` must reproduce bit for bit: the line search sorts with numba's ``argsort`` and sweeps
through the permutation; ``oc1_search`` is that commit's code calling it. Not cached (compiled per test session).
"""

import numpy as np
from numba import njit

from treeopt.greedy._criteria import _xlogx_table, class_counts
from treeopt.greedy._grow import project_into
from treeopt.greedy._oc1 import _TOL, _best_offset, _feature_scales, _gain_of_sides


@njit(cache=False)
def line_search(V, d, y, k, min_samples_leaf, total, xlogx):
    """Best step ``alpha`` for ``V + alpha d >= 0 -> right``; returns (alpha, gain), gain -inf if none valid.

    Points with ``d_j > 0`` are right iff ``alpha >= U_j``, points with ``d_j < 0`` iff ``alpha <= U_j``,
    points with ``d_j = 0`` never move. Candidates are midpoints between consecutive distinct ``U``
    values plus one step beyond each end.
    """
    n = V.shape[0]
    U = np.empty(n)
    ev = np.empty(n, dtype=np.int64)
    n_ev = 0
    right = np.zeros(k, dtype=np.int64)
    for j in range(n):
        if d[j] != 0.0:
            U[n_ev] = -V[j] / d[j]
            ev[n_ev] = j
            n_ev += 1
            if d[j] < 0.0:
                right[y[j]] += 1  # alpha -> -inf: all d<0 points are right
        elif V[j] >= 0.0:
            right[y[j]] += 1
    if n_ev == 0:
        return 0.0, -np.inf
    U = U[:n_ev]
    order = np.argsort(U, kind="quicksort")
    left = total - right
    n_right = right.sum()
    s_left = 0.0
    s_right = 0.0
    s = 0.0
    for c in range(k):
        s_left += xlogx[left[c]]
        s_right += xlogx[right[c]]
        s += xlogx[total[c]]
    parent = xlogx[n] - s
    lo = U[order[0]]
    hi = U[order[n_ev - 1]]
    step = (hi - lo) / n_ev if hi > lo else 1.0

    best_gain = -np.inf
    best_alpha = 0.0
    n_left = n - n_right
    if n_left >= min_samples_leaf and n_right >= min_samples_leaf:
        best_gain = (parent - (xlogx[n_left] - s_left) - (xlogx[n_right] - s_right)) / n
        best_alpha = lo - step
    i = 0
    while i < n_ev:
        u = U[order[i]]
        while i < n_ev and U[order[i]] == u:  # all points switching at this critical value
            j = ev[order[i]]
            c = y[j]
            if d[j] > 0.0:  # left -> right
                s_left += xlogx[left[c] - 1] - xlogx[left[c]]
                s_right += xlogx[right[c] + 1] - xlogx[right[c]]
                left[c] -= 1
                right[c] += 1
                n_right += 1
            else:  # right -> left
                s_right += xlogx[right[c] - 1] - xlogx[right[c]]
                s_left += xlogx[left[c] + 1] - xlogx[left[c]]
                right[c] -= 1
                left[c] += 1
                n_right -= 1
            i += 1
        n_left = n - n_right
        if n_left < min_samples_leaf or n_right < min_samples_leaf:
            continue
        gain = (parent - (xlogx[n_left] - s_left) - (xlogx[n_right] - s_right)) / n
        if gain > best_gain:
            best_gain = gain
            if i < n_ev:
                nxt = U[order[i]]
                alpha = 0.5 * u + 0.5 * nxt
                best_alpha = alpha if alpha > u else nxt
            else:
                best_alpha = u + step
    return best_alpha, best_gain



@njit(cache=False)
def oc1_search(X, y, k, w0, b0, restart_normals, jump_normals, min_samples_leaf, max_cycles):
    """OC1 search for the hyperplane of maximal information gain at one node.

    Parameters
    ----------
    X : (n, p) float64 C-contiguous; y : (n,) int64 labels in 0..k-1.
    w0, b0 : the initial hyperplane (first restart), e.g. the best axis-aligned split.
    restart_normals : (R - 1, p) standard normals; restart r >= 1 starts from direction
        ``restart_normals[r-1] / scale`` (scale = per-feature std, so directions are random in standardised
        units) with its best offset.
    jump_normals : (R, J, p + 1) standard normals: the J random perturbation directions of each restart
        (last entry: offset component, in units of the projection's spread).
    max_cycles : cap on coordinate-descent sweeps between random perturbations.

    Returns ``(w, b, gain)`` of the best hyperplane found, gain evaluated on ``V = X w - b >= 0`` with
    the tree store's arithmetic; ``gain`` is never below that of ``(w0, b0)``.
    """
    n, p = X.shape
    msl = max(min_samples_leaf, 1)
    total = class_counts(y, k)
    xlogx = _xlogx_table(n)
    XT = np.ascontiguousarray(X.T)  # columns as contiguous rows for the coordinate steps
    scale = _feature_scales(X)
    inv_scale = np.zeros(p)
    for j in range(p):
        if scale[j] > 0.0:
            inv_scale[j] = 1.0 / scale[j]
    parent = xlogx[n]
    for c in range(k):
        parent -= xlogx[total[c]]
    max_gain = parent / n  # H(parent): a perfect split cannot be improved

    V = np.empty(n)
    d = np.empty(n)
    z = np.empty(n)
    minus_one = -np.ones(n)

    best_w = w0.copy()
    best_b = b0
    project_into(X, best_w, V)
    for i in range(n):
        V[i] -= best_b
    best_gain = _gain_of_sides(V, y, k, msl, total, xlogx)
    n_restarts = jump_normals.shape[0]
    n_jumps = jump_normals.shape[1]

    for r in range(n_restarts):
        if best_gain >= max_gain - _TOL:
            break
        if r == 0:
            w = w0.copy()
            b = b0
        else:
            w = restart_normals[r - 1] * inv_scale
            b, g = _best_offset(X, w, y, k, msl, total, xlogx, z)
            if not np.isfinite(g):
                continue
        project_into(X, w, V)
        for i in range(n):
            V[i] -= b
        gain = _gain_of_sides(V, y, k, msl, total, xlogx)
        if not np.isfinite(gain):
            continue
        jump = 0
        while True:
            # deterministic coordinate descent over w_1..w_p and b
            for _ in range(max_cycles):
                improved = False
                for m in range(p + 1):
                    col = XT[m] if m < p else minus_one
                    alpha, g = line_search(V, col, y, k, msl, total, xlogx)
                    if g > gain + _TOL:
                        for i in range(n):
                            d[i] = V[i] + alpha * col[i]
                        g_true = _gain_of_sides(d, y, k, msl, total, xlogx)
                        if g_true > gain + _TOL:
                            if m < p:
                                w[m] += alpha
                            else:
                                b += alpha
                            V[:] = d
                            gain = g_true
                            improved = True
                if not improved or gain >= max_gain - _TOL:
                    break
                # rescale to unit standardised norm and recompute V exactly, so rounding does not drift
                norm = np.sqrt(np.sum((w * scale) ** 2))
                if norm > 0.0:
                    w /= norm
                    b /= norm
                project_into(X, w, V)
                for i in range(n):
                    V[i] -= b
                gain = _gain_of_sides(V, y, k, msl, total, xlogx)
            # random perturbations: the first direction that improves the gain restarts coordinate descent
            moved = False
            while jump < n_jumps and not moved and gain < max_gain - _TOL:
                rw = jump_normals[r, jump, :p] * inv_scale
                project_into(X, rw, d)
                spread = np.std(d)
                rb = jump_normals[r, jump, p] * (spread if spread > 0.0 else 1.0)
                jump += 1
                for i in range(n):
                    d[i] -= rb
                alpha, g = line_search(V, d, y, k, msl, total, xlogx)
                if g > gain + _TOL:
                    w_new = w + alpha * rw
                    b_new = b + alpha * rb
                    project_into(X, w_new, z)
                    for i in range(n):
                        z[i] -= b_new
                    g_true = _gain_of_sides(z, y, k, msl, total, xlogx)
                    if g_true > gain + _TOL:
                        w = w_new
                        b = b_new
                        V[:] = z
                        gain = g_true
                        moved = True
            if not moved:
                break
        # the offset is re-optimised exactly on the final direction
        b_opt, g_opt = _best_offset(X, w, y, k, msl, total, xlogx, z)
        if g_opt > gain:
            b = b_opt
            gain = g_opt
        if gain > best_gain + _TOL:
            best_w = w.copy()
            best_b = b
            best_gain = gain
    return best_w, best_b, best_gain


@njit(cache=False)
def numba_argsort(keys):
    """numba's ``np.argsort(kind="quicksort")``, the order the plain line search sweeps in."""
    return np.argsort(keys, kind="quicksort")
