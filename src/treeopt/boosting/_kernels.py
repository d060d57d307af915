"""Numba kernels of RGF: binning, per-leaf gradient histograms, the Newton-step split scan (eq. (7)), the
fully-corrective coordinate descent (eq. (8)) and forest prediction (final and staged).

Losses (codes): 0 square ``(h - y)^2 / 2``, 1 exponential ``exp(-y h)``, 2 logistic ``log(1 + exp(-y h))``.
Exponential-loss derivatives are scaled by ``exp(mu)`` with ``mu = clip(mean(y h), -500, 500)`` (Sec. 6.2.3);
callers scale the regulariser by the same factor, which leaves every Newton step unchanged.
"""

import numpy as np
from numba import njit

SQUARE, EXPONENTIAL, LOGISTIC = 0, 1, 2


@njit(cache=True, inline="always")
def _grad_hess(loss, f, y, mu):
    if loss == SQUARE:
        return f - y, 1.0
    if loss == EXPONENTIAL:
        e = np.exp(-y * f + mu)
        return -y * e, e
    # logistic, y in {-1, +1}
    m = y * f
    if m >= 0:
        z = np.exp(-m)
        p = z / (1.0 + z)          # sigma(-m)
    else:
        p = 1.0 / (1.0 + np.exp(m))
    return -y * p, p * (1.0 - p)


@njit(cache=True)
def stabiliser(loss, F, y):
    """``mu`` of Sec. 6.2.3 for the exponential loss (0 otherwise)."""
    if loss != EXPONENTIAL:
        return 0.0
    s = 0.0
    for i in range(F.shape[0]):
        s += y[i] * F[i]
    mu = s / F.shape[0]
    return min(500.0, max(-500.0, mu))


@njit(cache=True)
def grad_hess_at(loss, F, y, mu, idx, g, h):
    """Fill ``g[i], h[i]`` (first and second derivative of the loss at ``F[i]``) for every i in ``idx``."""
    for k in range(idx.shape[0]):
        i = idx[k]
        g[i], h[i] = _grad_hess(loss, F[i], y[i], mu)


@njit(cache=True)
def loss_sum(loss, F, y):
    s = 0.0
    for i in range(F.shape[0]):
        if loss == SQUARE:
            s += 0.5 * (F[i] - y[i]) ** 2
        elif loss == EXPONENTIAL:
            s += np.exp(-y[i] * F[i])
        else:
            m = y[i] * F[i]
            s += np.log1p(np.exp(-m)) if m > -30 else -m
    return s


@njit(cache=True)
def build_hist(Xb, order, start, end, g, h, n_bins_total):
    """Sums of g, h and counts per bin over the points ``order[start:end]``; ``Xb`` holds global bin ids
    (feature f's bins are ``bin_offset[f] .. bin_offset[f] + n_bins[f] - 1``)."""
    d = Xb.shape[1]
    hg = np.zeros(n_bins_total)
    hh = np.zeros(n_bins_total)
    hc = np.zeros(n_bins_total, dtype=np.int64)
    for k in range(start, end):
        i = order[k]
        gi, hi = g[i], h[i]
        for f in range(d):
            b = Xb[i, f]
            hg[b] += gi
            hh[b] += hi
            hc[b] += 1
    return hg, hh, hc


@njit(cache=True)
def update_total(total, old, a, b):
    """total += a + b - old, in place, for the three histogram arrays."""
    for k in range(total[0].shape[0]):
        total[0][k] += a[0][k] + b[0][k] - old[0][k]
        total[1][k] += a[1][k] + b[1][k] - old[1][k]
        total[2][k] += a[2][k] + b[2][k] - old[2][k]


@njit(cache=True)
def scan_split(hg, hh, hc, n_bins, bin_off, min_leaf, a, bc, r, const):
    """Best split of one leaf by the Newton step of eq. (7) with the regulariser.

    For children sums (S_k, H_k) the offsets are ``d_k = -(S_k + r) / (H_k + a)`` and the change of ``n Q`` is
    ``sum_k (S_k d_k + H_k d_k^2 / 2) + r (d1 + d2) + a (d1^2 + d2^2) / 2 + bc d1 d2 + const`` (``a, bc, r,
    const`` are n lambda times the terms of :func:`treeopt.boosting._regularizers.split_terms`). Returns
    (gain = minus that change, feature, bin, d1, d2); gain is -inf when no split leaves ``min_leaf`` points on
    both sides. The left child takes the feature's bins <= bin (a local bin number).
    """
    d = n_bins.shape[0]
    best, bf, bb, bd1, bd2 = -np.inf, -1, -1, 0.0, 0.0
    S = 0.0
    H = 0.0
    C = 0
    for b in range(n_bins[0]):
        S += hg[b]
        H += hh[b]
        C += hc[b]
    for f in range(d):
        s1 = 0.0
        h1 = 0.0
        c1 = 0
        o = bin_off[f]
        for b in range(n_bins[f] - 1):
            s1 += hg[o + b]
            h1 += hh[o + b]
            c1 += hc[o + b]
            if c1 < min_leaf:
                continue
            if C - c1 < min_leaf:
                break
            s2 = S - s1
            h2 = H - h1
            d1 = -(s1 + r) / (h1 + a)
            d2 = -(s2 + r) / (h2 + a)
            change = (s1 * d1 + 0.5 * h1 * d1 * d1 + s2 * d2 + 0.5 * h2 * d2 * d2
                      + r * (d1 + d2) + 0.5 * a * (d1 * d1 + d2 * d2) + bc * d1 * d2 + const)
            if -change > best:
                best, bf, bb, bd1, bd2 = -change, f, b, d1, d2
    return best, bf, bb, bd1, bd2


@njit(cache=True)
def partition(Xb, order, start, end, f, b, buf):
    """Stable in-place partition of ``order[start:end]``: global bins <= b of feature f first. Returns the
    boundary."""
    nl = 0
    nr = 0
    for k in range(start, end):
        i = order[k]
        if Xb[i, f] <= b:
            order[start + nl] = i
            nl += 1
        else:
            buf[nr] = i
            nr += 1
    for k in range(nr):
        order[start + nl + k] = buf[k]
    return start + nl


@njit(cache=True)
def apply_split(order, start, mid, end, F, d1, d2, leaf_row, right_local):
    """Add the children's offsets to the model output (eq. (6)) and relabel the right child's points."""
    for k in range(start, mid):
        F[order[k]] += d1
    for k in range(mid, end):
        i = order[k]
        F[i] += d2
        leaf_row[i] = right_local


@njit(cache=True)
def corrective_pass(loss, F, y, leaves, regulariser, step):
    """Fully-corrective weight optimisation by coordinate descent (eq. (8)), ``n_iter`` sweeps over all leaves.

    ``leaves``: ``(leaf_of, n_leaves, alpha, a_off)``, each point's leaf per tree, the trees' leaf counts and their
    weights (tree t's at ``alpha[a_off[t]:]``); ``regulariser``: ``(M, m_off, use_M)``, the trees' flattened
    penalty matrices; ``step``: ``(lam, eta, n_iter)``.

    Leaves of one tree cover disjoint points, so their loss sums are taken in one pass over the data, after
    which the leaves are updated one after another (the regulariser couples them through ``M alpha``; with
    ``use_M`` False, M = I). Step: ``alpha_v += eta * -(S_v + n lam (M alpha)_v) / (H_v + n lam M_vv)``.
    """
    leaf_of, n_leaves, alpha, a_off = leaves
    M, m_off, use_M = regulariser
    lam, eta, n_iter = step
    n = F.shape[0]
    T = n_leaves.shape[0]
    for _ in range(n_iter):
        mu = stabiliser(loss, F, y)
        lam_eff = lam * np.exp(mu)
        for t in range(T):
            L = n_leaves[t]
            S = np.zeros(L)
            H = np.zeros(L)
            row = leaf_of[t]
            for i in range(n):
                gi, hi = _grad_hess(loss, F[i], y[i], mu)
                S[row[i]] += gi
                H[row[i]] += hi
            a0 = a_off[t]
            delta = np.zeros(L)
            if use_M:
                m0 = m_off[t]
                Ma = np.zeros(L)
                for u in range(L):
                    s = 0.0
                    for v in range(L):
                        s += M[m0 + u * L + v] * alpha[a0 + v]
                    Ma[u] = s
                for v in range(L):
                    mvv = M[m0 + v * L + v]
                    dv = -eta * (S[v] + n * lam_eff * Ma[v]) / (H[v] + n * lam_eff * mvv)
                    delta[v] = dv
                    alpha[a0 + v] += dv
                    for u in range(L):
                        Ma[u] += M[m0 + u * L + v] * dv
            else:
                for v in range(L):
                    dv = -eta * (S[v] + n * lam_eff * alpha[a0 + v]) / (H[v] + n * lam_eff)
                    delta[v] = dv
                    alpha[a0 + v] += dv
            for i in range(n):
                F[i] += delta[row[i]]


@njit(cache=True)
def bin_column(x, edges, out, f, offset):
    """out[i, f] = offset + number of edges <= x[i]."""
    for i in range(x.shape[0]):
        # number of edges <= x[i]
        lo = 0
        hi = edges.shape[0]
        while lo < hi:
            mid = (lo + hi) // 2
            if edges[mid] <= x[i]:
                lo = mid + 1
            else:
                hi = mid
        out[i, f] = offset + lo


@njit(cache=True)
def _leaf(x, root, feature, threshold, left, right):
    node = root
    while left[node] >= 0:
        if x[feature[node]] >= threshold[node]:
            node = right[node]
        else:
            node = left[node]
    return node


@njit(cache=True)
def predict_forest(X, roots, feature, threshold, left, right, value):
    """Sum over trees of the leaf value each row reaches (go right iff ``x[f] >= threshold``)."""
    n = X.shape[0]
    out = np.zeros(n)
    for i in range(n):
        s = 0.0
        for t in range(roots.shape[0]):
            s += value[_leaf(X[i], roots[t], feature, threshold, left, right)]
        out[i] = s
    return out


@njit(cache=True)
def predict_staged(X, roots, feature, threshold, left, right, parent, stage_trees, stage_limit, wanted, values):
    """Output of the stored stages ``wanted`` (ascending indices): the forest as it was at a checkpoint s (its
    first ``stage_trees[s]`` trees, nodes with global id < ``stage_limit[s, t]`` in tree t, leaf weights
    ``values[:, k]`` for s = ``wanted[k]``: the stages' weights node by node, so that one node's weights at the
    wanted stages are read together), shape ``(wanted.size, n)``. A row's node at a stage is the deepest ancestor of its final
    leaf that existed then (node ids grow down every path).

    Checkpoints only add trees and nodes, so going back through the wanted stages a row's node only climbs:
    one walk up from the leaf serves every stage of a tree. Each output still adds its trees' weights in tree
    order, starting from 0.0, so every stage's output is bit for bit that of scoring the stage alone."""
    n = X.shape[0]
    W = wanted.shape[0]
    out = np.zeros((n, W))
    if W == 0:
        return out.T.copy()
    n_trees = min(roots.shape[0], stage_trees[wanted[W - 1]])
    for i in range(n):
        for t in range(n_trees):
            node = _leaf(X[i], roots[t], feature, threshold, left, right)
            for k in range(W - 1, -1, -1):
                s = wanted[k]
                if t >= stage_trees[s]:
                    break  # earlier checkpoints hold no more trees
                lim = stage_limit[s, t]
                while node >= lim:
                    node = parent[node]
                out[i, k] += values[node, k]
    return out.T.copy()
