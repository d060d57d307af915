"""Numba kernel: the min-penalty regularisers' split terms for every leaf of a tree in one call.

Same quantities as :func:`treeopt.boosting._regularizers.split_terms` (eqs. (6), (7), (15); the reference
implementation and the tests' oracle), without building the full ``M~`` of each split tree: for the tree
``T~`` in which leaf ``v`` is split into children ``u1, u2`` that keep ``v``'s weight, only three
representations are needed, ``bar_beta = R~ x`` for ``x = alpha~``, ``e_u1`` and ``e_u2`` (eq. (13) for
``"min_penalty"``, one small linear solve with three right-hand sides; eq. (14) for ``"min_penalty_sib"``,
children before parents). With node weights ``beta = D bar_beta`` (eq. (16)) and ``Gamma = diag(gamma^d)``:
``(M~ alpha~)_u2 = beta(e_u2)' Gamma beta(alpha~)``, ``M~_u2u2 = beta(e_u2)' Gamma beta(e_u2)``,
``M~_u1u2 = beta(e_u1)' Gamma beta(e_u2)`` and ``alpha~' M~ alpha~ = beta(alpha~)' Gamma beta(alpha~)``.
"""

import numpy as np
from numba import njit

MIN_PENALTY, MIN_PENALTY_SIB = 1, 2


@njit(cache=True)
def _node_weights(bar, parent):
    beta = bar.copy()
    for w in range(bar.shape[0]):
        if parent[w] >= 0:
            beta[w] = bar[w] - bar[parent[w]]
    return beta


@njit(cache=True)
def _representations(left, right, parent, depth, X, mode, gamma):
    """bar_beta for each column of X (values at leaf rows, ignored elsewhere), in place: X (nodes x k)."""
    n = left.shape[0]
    k = X.shape[1]
    if mode == MIN_PENALTY_SIB:   # eq. (14): deepest internal nodes first
        order = np.argsort(-depth, kind="mergesort")
        for j in range(n):
            v = order[j]
            if left[v] >= 0:
                for c in range(k):
                    X[v, c] = 0.5 * (X[left[v], c] + X[right[v], c])
        return
    # eq. (13) on the internal nodes: (1 + 2g) bb_v - bb_p(v) - g (bb_l + bb_r) = 0, leaves known
    pos = -np.ones(n, dtype=np.int64)
    m = 0
    for v in range(n):
        if left[v] >= 0:
            pos[v] = m
            m += 1
    K = np.zeros((m, m))
    B = np.zeros((m, k))
    for v in range(n):
        j = pos[v]
        if j < 0:
            continue
        K[j, j] = 1.0 + 2.0 * gamma
        if parent[v] >= 0:
            K[j, pos[parent[v]]] -= 1.0
        for w in (left[v], right[v]):
            if pos[w] >= 0:
                K[j, pos[w]] -= gamma
            else:
                for c in range(k):
                    B[j, c] += gamma * X[w, c]
    sol = np.linalg.solve(K, B)
    for v in range(n):
        if pos[v] >= 0:
            for c in range(k):
                X[v, c] = sol[pos[v], c]


@njit(cache=True)
def split_terms_all(left, right, parent, depth, leaves, alpha, mode, gamma):
    """(grad, diag, cross, dG0) arrays over the leaves (in the order of ``leaves``/``alpha``), in units of
    lambda, for splitting each leaf; see :func:`treeopt.boosting._regularizers.split_terms`."""
    n = left.shape[0]
    L = leaves.shape[0]
    n2 = n + 2
    gpow = np.empty(n2)
    # quad of the unsplit tree
    X0 = np.zeros((n, 1))
    for k in range(L):
        X0[leaves[k], 0] = alpha[k]
    _representations(left, right, parent, depth, X0, mode, gamma)
    b0 = _node_weights(X0[:, 0], parent)
    quad = 0.0
    for w in range(n):
        quad += gamma ** depth[w] * b0[w] * b0[w]
    grad = np.empty(L)
    diag = np.empty(L)
    cross = np.empty(L)
    dG0 = np.empty(L)
    left2 = np.empty(n2, dtype=np.int64)
    right2 = np.empty(n2, dtype=np.int64)
    parent2 = np.empty(n2, dtype=np.int64)
    depth2 = np.empty(n2, dtype=np.int64)
    left2[:n] = left
    right2[:n] = right
    parent2[:n] = parent
    depth2[:n] = depth
    for k in range(L):
        v = leaves[k]
        u1, u2 = n, n + 1
        left2[v], right2[v] = u1, u2
        left2[u1] = right2[u1] = left2[u2] = right2[u2] = -1
        parent2[u1] = parent2[u2] = v
        depth2[u1] = depth2[u2] = depth[v] + 1
        X = np.zeros((n2, 3))
        for j in range(L):
            if j != k:
                X[leaves[j], 0] = alpha[j]
        X[u1, 0] = alpha[k]
        X[u2, 0] = alpha[k]
        X[u1, 1] = 1.0
        X[u2, 2] = 1.0
        _representations(left2, right2, parent2, depth2, X, mode, gamma)
        ba = _node_weights(X[:, 0], parent2)
        b1 = _node_weights(X[:, 1], parent2)
        b2 = _node_weights(X[:, 2], parent2)
        q2 = 0.0
        g2 = 0.0
        d2 = 0.0
        c2 = 0.0
        for w in range(n2):
            gpow[w] = gamma ** depth2[w]
            q2 += gpow[w] * ba[w] * ba[w]
            g2 += gpow[w] * b2[w] * ba[w]
            d2 += gpow[w] * b2[w] * b2[w]
            c2 += gpow[w] * b1[w] * b2[w]
        grad[k], diag[k], cross[k], dG0[k] = g2, d2, c2, 0.5 * (q2 - quad)
        left2[v], right2[v] = -1, -1
    return grad, diag, cross, dG0
