"""Tree-structured regularisers of RGF (Johnson & Zhang, Sec. 5.4) as quadratic forms in the leaf weights.

Every regulariser of Sec. 5.4 is ``G(T) = lambda/2 * alpha' M alpha`` for the leaf weights ``alpha`` of a tree
``T``, with a positive semi-definite matrix ``M`` that depends on the topology only:

* ``"l2"`` (Sec. 5.4.1): the leaf-only model is the representation, ``M = I``.
* ``"min_penalty"`` (Sec. 5.4.2, eq. (9)): the representation ``{beta_v}`` over all nodes that minimises
  ``sum_v gamma^{d_v} beta_v^2 / 2`` among the equivalent models. With the auxiliary variables
  ``bar_beta`` (eq. (10)-(12)) the internal ``bar_beta`` solve the linear system (13), whose fixed point
  Algorithm 4 iterates to (Appendix A.1: ``bar_beta = (I - A)^{-1} b``).
* ``"min_penalty_sib"`` (Sec. 5.4.3): the unique equivalent model whose sibling weights sum to zero,
  ``bar_beta_v = (bar_beta_left + bar_beta_right) / 2`` at internal nodes (eq. (14)).

In each case ``bar_beta = R alpha`` for a (nodes x leaves) matrix ``R`` (leaf rows are unit rows), the node
weights are ``beta = D bar_beta`` with ``beta_v = bar_beta_v - bar_beta_{p(v)}`` (``beta_root = bar_beta_root``;
eq. (16)), and ``M = (D R)' Gamma (D R)`` with ``Gamma = diag(gamma^{d_v})``. Its entries give the derivatives
of eq. (15): ``dG/d alpha_u = lambda (M alpha)_u`` and ``d^2G/d alpha_u^2 = lambda M_uu``.

Topologies are given as ``parent`` (-1 at the root), ``left``/``right`` (-1 at leaves) and ``depth`` arrays
over the nodes of one tree, plus ``leaves``: the node ids of the leaves in the order of ``alpha``.
"""

from __future__ import annotations

import numpy as np

REGULARIZERS = ("l2", "min_penalty", "min_penalty_sib")


def _internal(left):
    return np.flatnonzero(np.asarray(left) >= 0)


def algorithm4(left, right, parent, alpha_nodes, gamma, n_iter=1000, tol=0.0, gauss_seidel=False):
    """Algorithm 4 (Jacobi) or its variant Algorithm 6 (``gauss_seidel=True``, fixed node order) of the paper.

    ``alpha_nodes`` holds the leaf weights at leaf ids (ignored at internal nodes). Returns ``bar_beta`` for
    every node after ``n_iter`` iterations (or earlier once the largest change is <= ``tol``), and the number
    of iterations run. Leaves keep ``bar_beta_v = alpha_v``; internal nodes take the weighted neighbour
    average of eq. (13).
    """
    left, right, parent = (np.asarray(a, dtype=np.int64) for a in (left, right, parent))
    is_leaf = left < 0
    bar = np.where(is_leaf, np.asarray(alpha_nodes, dtype=np.float64), 0.0)
    internal = np.flatnonzero(~is_leaf)
    denom = 1.0 + 2.0 * gamma
    for it in range(1, n_iter + 1):
        src = bar if gauss_seidel else bar.copy()
        change = 0.0
        for v in internal:
            total = gamma * (src[left[v]] + src[right[v]])
            if parent[v] >= 0:
                total += src[parent[v]]
            new = total / denom
            change = max(change, abs(new - bar[v]))
            bar[v] = new
        if change <= tol:
            return bar, it
    return bar, n_iter


def representation_matrix(left, right, parent, depth, leaves, regularizer, gamma=1.0):
    """``R`` (n_nodes x n_leaves) with ``bar_beta = R alpha`` for the regulariser's unique representation."""
    left, right, parent = (np.asarray(a, dtype=np.int64) for a in (left, right, parent))
    leaves = np.asarray(leaves, dtype=np.int64)
    n_nodes, n_leaves = left.shape[0], leaves.shape[0]
    R = np.zeros((n_nodes, n_leaves))
    R[leaves, np.arange(n_leaves)] = 1.0
    internal = _internal(left)
    if regularizer == "l2" or internal.size == 0:
        return R
    if regularizer == "min_penalty_sib":
        # eq. (14): children before parents (ids grow with depth along every path, so reverse id order works
        # for trees grown by splitting leaves; sort by depth to be safe)
        for v in internal[np.argsort(-np.asarray(depth)[internal], kind="stable")]:
            R[v] = 0.5 * (R[left[v]] + R[right[v]])
        return R
    if regularizer != "min_penalty":
        raise ValueError(f"regularizer must be one of {REGULARIZERS}, got {regularizer!r}")
    # eq. (13) as a linear system over the internal nodes: (1+2g) bb_v - bb_p(v) - g (bb_l + bb_r) = 0,
    # leaves known: the fixed point of Algorithm 4, bar_beta = (I - A)^{-1} b (Appendix A.1).
    pos = -np.ones(n_nodes, dtype=np.int64)
    pos[internal] = np.arange(internal.size)
    K = np.zeros((internal.size, internal.size))
    B = np.zeros((internal.size, n_leaves))
    for j, v in enumerate(internal):
        K[j, j] = 1.0 + 2.0 * gamma
        if parent[v] >= 0:
            K[j, pos[parent[v]]] -= 1.0
        for w in (left[v], right[v]):
            if pos[w] >= 0:
                K[j, pos[w]] -= gamma
            else:
                B[j] += gamma * R[w]
    R[internal] = np.linalg.solve(K, B)
    return R


def node_weights(R, parent):
    """``D R``: node weights ``beta`` (eq. (16)) as linear maps of the leaf weights."""
    parent = np.asarray(parent, dtype=np.int64)
    DR = R.copy()
    has_parent = parent >= 0
    DR[has_parent] -= R[parent[has_parent]]
    return DR


def penalty_matrix(left, right, parent, depth, leaves, regularizer, gamma=1.0):
    """``M`` with ``G(T) = lambda/2 alpha' M alpha`` (leaves in the order of ``leaves``)."""
    if regularizer == "l2":
        return np.eye(len(leaves))
    R = representation_matrix(left, right, parent, depth, leaves, regularizer, gamma)
    DR = node_weights(R, parent)
    w = float(gamma) ** np.asarray(depth, dtype=np.float64)
    return DR.T @ (w[:, None] * DR)


def split_terms(left, right, parent, depth, leaves, alpha, leaf_pos, regularizer, gamma=1.0, quad=None):
    """Regulariser terms for splitting leaf number ``leaf_pos`` (eqs. (6), (7), (15)), in units of lambda.

    The split tree ``T~(0, 0)`` gives the leaf's two new children the parent's weight. Returns
    ``(grad, diag, cross, dG0)``: ``(M~ alpha~)_u`` (equal for both children), ``M~_uu``, ``M~_{u1 u2}`` and
    ``(alpha~' M~ alpha~ - alpha' M alpha) / 2``, so that the penalty change for child offsets (d1, d2) is
    ``lambda * (grad (d1 + d2) + diag (d1^2 + d2^2) / 2 + cross d1 d2 + dG0)``. ``quad`` is
    ``alpha' M alpha`` of the unsplit tree when the caller has it.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    if regularizer == "l2":
        a = alpha[leaf_pos]
        return a, 1.0, 0.0, 0.5 * a * a
    v = int(leaves[leaf_pos])
    n = len(left)
    u1, u2 = n, n + 1
    left2 = np.concatenate([left, [-1, -1]])
    right2 = np.concatenate([right, [-1, -1]])
    parent2 = np.concatenate([parent, [v, v]])
    depth2 = np.concatenate([depth, [depth[v] + 1, depth[v] + 1]])
    left2[v], right2[v] = u1, u2
    leaves2 = np.concatenate([np.delete(np.asarray(leaves), leaf_pos), [u1, u2]])
    alpha2 = np.concatenate([np.delete(alpha, leaf_pos), [alpha[leaf_pos], alpha[leaf_pos]]])
    M2 = penalty_matrix(left2, right2, parent2, depth2, leaves2, regularizer, gamma)
    if quad is None:
        quad = alpha @ (penalty_matrix(left, right, parent, depth, leaves, regularizer, gamma) @ alpha)
    Ma2 = M2 @ alpha2
    dG0 = 0.5 * (alpha2 @ Ma2 - quad)
    return float(Ma2[-1]), float(M2[-1, -1]), float(M2[-1, -2]), float(dG0)
