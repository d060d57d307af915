"""Initial W and Theta of a non-greedy tree from any tree in the shared format (paper Sec. 7, Alg. 1 line 1).

The non-greedy objective is defined on the complete binary tree of depth ``d`` (Sec. 3: ``m`` split nodes,
``m + 1`` leaves). An initial tree (axis-aligned, CO2, or any ``treeopt.trees.Tree``) is mapped onto it
node by node from the root, in heap order:

- an internal node of the initial tree at depth < d keeps its split ``[w_i, b_i]`` (axis-aligned nodes
  become the unit row ``e_f`` with ``b_i`` = threshold), scaled onto the sphere ``||[w_i, b_i]||^2 = nu``:
  the same partition, and by eq. (8) the tightest bound the constraint of eq. (9) allows;
- **padding**: below a leaf of the initial tree that lies shallower than ``d`` every split node gets
  ``w_i = 0, b_i = 0``. Then ``w_i . x - b_i = 0``, so all points go right (sgn(0) = +1) and the initial
  tree's predictions are unchanged; the padded nodes start with zero margin, so SGD can move them as soon as
  the loss of their two subtrees differs;
- **truncation**: an initial tree deeper than ``d`` is cut at depth ``d`` (its deeper splits are dropped).

Leaf parameters theta_j are the add-one-smoothed class log-frequencies of the training points routed to
leaf j (the log loss eq. (2) minimiser up to the smoothing, as CO2 initialises its stumps), or their mean
target for the squared loss eq. (3). A leaf that no training point reaches takes the theta of its nearest
ancestor that some point reaches.
"""

from __future__ import annotations

import numpy as np

from ._sgd import route_all

LEAF_SMOOTHING = 1.0


def heap_from_tree(tree, depth, n_features):
    """(W (m x p), b (m,)) of the complete depth-``depth`` tree, copied from ``tree`` (see module doc)."""
    m = 2**depth - 1
    W = np.zeros((m, n_features))
    b = np.zeros(m)
    dense = tree.W.tocsr()
    # (heap node, init node) pairs, parents first
    stack = [(0, 0)]
    while stack:
        h, u = stack.pop()
        if h >= m or tree.left[u] < 0:
            continue
        lo, hi = dense.indptr[u], dense.indptr[u + 1]
        W[h, dense.indices[lo:hi]] = dense.data[lo:hi]
        b[h] = tree.bias[u]
        stack.append((2 * h + 1, int(tree.left[u])))
        stack.append((2 * h + 2, int(tree.right[u])))
    return W, b


def scale_rows(W, b, nu):
    """Scale each non-zero row ``[w_i, b_i]`` onto ``||.||^2 = nu`` (in place); zero rows stay zero."""
    norm2 = np.einsum("ij,ij->i", W, W) + b * b
    nz = norm2 > 0
    s = np.sqrt(nu / norm2[nz])
    W[nz] *= s[:, None]
    b[nz] *= s
    return W, b


def node_counts(leaves, m):
    """Training points reaching every heap node, from the leaf index of each point."""
    counts = np.zeros(2 * m + 1, dtype=np.int64)
    counts[m:] = np.bincount(leaves, minlength=m + 1)
    for i in range(m - 1, -1, -1):
        counts[i] = counts[2 * i + 1] + counts[2 * i + 2]
    return counts


def initial_theta(X, W, b, kind, y_int, Y, n_out):
    """Theta (m+1 x n_out) from the training data routed through (W, b) (see module doc)."""
    m = W.shape[0]
    leaves = route_all(X, W, b)
    sums = np.zeros((2 * m + 1, n_out))
    if kind == 0:
        np.add.at(sums, (m + leaves, y_int), 1.0)
    else:
        np.add.at(sums, m + leaves, Y)
    for i in range(m - 1, -1, -1):
        sums[i] = sums[2 * i + 1] + sums[2 * i + 2]
    counts = node_counts(leaves, m)
    theta = np.empty((2 * m + 1, n_out))
    for node in range(2 * m + 1):
        if counts[node] == 0:
            theta[node] = theta[(node - 1) // 2] if node > 0 else 0.0
        elif kind == 0:
            theta[node] = np.log((sums[node] + LEAF_SMOOTHING) / (counts[node] + LEAF_SMOOTHING * n_out))
        else:
            theta[node] = sums[node] / counts[node]
    return np.ascontiguousarray(theta[m:])
