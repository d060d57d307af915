"""Initial W and Theta of a non-greedy tree from any tree in the shared format (paper Sec. 7, Alg. 1 line 1).

The non-greedy objective is defined on the complete binary tree of depth ``d`` (Sec. 3: ``m`` split nodes,
``m + 1`` leaves). An initial tree (axis-aligned, CO2, or any ``treeopt.trees.Tree``) is mapped onto it
node by node from the root, in heap order:

- an internal node of the initial tree at depth < d keeps its split ``[w_i, b_i]`` (axis-aligned nodes
  become the unit row ``e_f`` with ``b_i`` = threshold) **as it is** whenever ``||[w_i, b_i]||^2 <= nu``:
  the start keeps the initial tree's partition *and* its margins ``w_i . x - b_i``. A row above the bound
  is projected onto the sphere ``||[w_i, b_i]||^2 = nu`` (Alg. 1 line 8's projection): the partition is
  kept, the margins shrink by the same factor. Rows are never scaled *up* to the sphere: a CO2 start
  chosen with a small ``nu`` would otherwise have its margins multiplied by ``sqrt(nu'/nu)`` (about 20
  for 0.1 -> 43), which makes the bound eq. (7) nearly the loss itself (Proposition 1) and leaves almost no
  point whose loss-augmented leaf differs from its own: SGD then only moves the root (issue #24).
- **padding**: below a leaf ``u`` of the initial tree that lies shallower than ``d`` the complete tree has
  split nodes the initial tree does not have. Each gets a *start split* from the training points that reach
  it: the median of the feature with the largest variance among them (ties: the lowest feature index),
  i.e. the row ``[e_f, median]``, projected as above; a node that one point or none reaches keeps
  ``w_i = 0, b_i = 0`` (all right, zero margin). Every leaf below ``u`` starts with ``u``'s theta, so the
  start predicts exactly as the initial tree. Why: with zero rows and copied theta (the earlier padding) all
  of ``u``'s points go to one leaf and the two sides of every padded node have the same loss, so no
  gradient ever reaches these rows or leaves; with a balanced split the points spread over the subtree's
  leaves, each leaf's theta follows its own points (Alg. 1 line 10), and once the leaves differ their
  splits get gradients (line 6). The split ignores the labels on purpose: the initial tree stopped at ``u``
  (pure, or too few points), so no label-driven split exists there; what the subtree needs is points in
  every leaf.
- **truncation**: an initial tree deeper than ``d`` is cut at depth ``d`` (its deeper splits are dropped).
- **scale** (``init_scale`` of the estimators, default 1): every row, padded ones included, is multiplied by
  ``init_scale > 0`` before the projection. The partition and the start's predictions stay the same; only the
  margins ``w_i . x - b_i`` shrink (or grow). A power of two scales every margin exactly; another factor can
  move a point lying exactly on a split (a padded node's median, an axis threshold) by rounding. Why it is a
  choice: how far SGD moves the start depends on how many points lie within the bound's unit margin of a
  split, i.e. on the rows' scale, and a CO2 start chosen for its own accuracy can come at any scale. On
  Connect-4 at depth 18 validation picked a CO2 tree of ``nu = 4`` (rows of squared norm up to 4, against 0.1
  at every other depth); started from it as it is, the non-greedy tree hardly moved (training accuracy 87.96
  -> 87.00%, validation below CO2's), while the same partition with rows times 0.125 moved and reached
  76.55% validation on seeds 0 and 1, against 75.75 / 75.81% unscaled and 76.00 / 75.87% for the CO2 tree
  (docs/nongreedy.md, ``studies/results/nongreedy_start_scale.jsonl``).

Leaf parameters theta_j are the add-one-smoothed class log-frequencies of the training points routed to
leaf j by the initial tree (the log loss eq. (2) minimiser up to the smoothing, as CO2 initialises its
stumps), or their mean target for the squared loss eq. (3).
"""

from __future__ import annotations

import numpy as np

from ._sgd import route_all

LEAF_SMOOTHING = 1.0


def heap_from_tree(tree, depth, n_features):
    """(W (m x p), b (m,), padded (m,) bool) of the complete depth-``depth`` tree copied from ``tree``:
    ``padded[i]`` marks the split nodes below a leaf of ``tree`` (zero rows here; see module doc)."""
    m = 2**depth - 1
    W = np.zeros((m, n_features))
    b = np.zeros(m)
    padded = np.ones(m, dtype=bool)
    dense = tree.W.tocsr()
    # (heap node, init node) pairs, parents first
    stack = [(0, 0)]
    while stack:
        h, u = stack.pop()
        if h >= m or tree.left[u] < 0:
            continue
        padded[h] = False
        lo, hi = dense.indptr[u], dense.indptr[u + 1]
        W[h, dense.indices[lo:hi]] = dense.data[lo:hi]
        b[h] = tree.bias[u]
        stack.append((2 * h + 1, int(tree.left[u])))
        stack.append((2 * h + 2, int(tree.right[u])))
    return W, b, padded


def project_rows(W, b, nu):
    """Project every row ``[w_i, b_i]`` with ``||.||^2 > nu`` onto the sphere ``||.||^2 = nu`` (in place, Alg. 1
    line 8); rows inside the ball are left as they are."""
    norm2 = np.einsum("ij,ij->i", W, W) + b * b
    over = norm2 > nu
    s = np.sqrt(nu / norm2[over])
    W[over] *= s[:, None]
    b[over] *= s
    return W, b


def padding_splits(X, W, b, padded):
    """Set the start split of every padded node that two or more training points reach (in place): the row
    ``[e_f, median_f]`` of the feature ``f`` with the largest variance among the node's points (module doc).

    Nodes are visited parents first, so a padded node's points are those its (already split) ancestors send
    it. Returns the number of padded nodes that got a split."""
    m = W.shape[0]
    node_of = np.zeros(X.shape[0], dtype=np.int64)  # current heap node of every point, parents first
    n_split = 0
    for depth in range(int(np.log2(m + 1))):
        first, last = 2**depth - 1, 2 ** (depth + 1) - 1
        order = np.argsort(node_of, kind="stable")
        bounds = np.searchsorted(node_of[order], np.arange(first, last + 1))
        for node in range(first, last):
            pts = order[bounds[node - first]:bounds[node - first + 1]]
            if padded[node] and pts.size >= 2:
                var = X[pts].var(axis=0)
                f = int(np.argmax(var))
                if var[f] > 0:
                    W[node] = 0.0
                    W[node, f] = 1.0
                    b[node] = float(np.median(X[pts, f]))
                    if not np.any(X[pts, f] < b[node]):  # the median is the minimum: split above it
                        b[node] = float(np.min(X[pts, f][X[pts, f] > b[node]]))
                    n_split += 1
            if pts.size:
                z = X[pts] @ W[node] - b[node]
                node_of[pts] = np.where(z >= 0.0, 2 * node + 2, 2 * node + 1)
    return n_split


def node_counts(leaves, m):
    """Training points reaching every heap node, from the leaf index of each point."""
    counts = np.zeros(2 * m + 1, dtype=np.int64)
    counts[m:] = np.bincount(leaves, minlength=m + 1)
    for i in range(m - 1, -1, -1):
        counts[i] = counts[2 * i + 1] + counts[2 * i + 2]
    return counts


def initial_theta(X, W, b, kind, y_int, Y, n_out):
    """Theta (m+1 x n_out) from the training data routed through (W, b) (see module doc). A leaf that no
    training point reaches takes the theta of its nearest ancestor that some point reaches."""
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


def start(init_tree, depth, X, kind, y_int, Y, n_out, nu, scale=1.0):
    """``(W, b, Theta, padded)``: the start of Alg. 1 line 1 from ``init_tree`` (module doc).

    Theta is computed while the padded rows are still zero (all of an initial leaf's points reach one leaf of
    the complete tree, and the other leaves below it inherit that theta), so the start predicts exactly as
    ``init_tree`` (cut at ``depth``); then the padded nodes get their splits and every row is multiplied by
    ``scale`` and projected."""
    W, b, padded = heap_from_tree(init_tree, depth, X.shape[1])
    Theta = initial_theta(X, W, b, kind, y_int, Y, n_out)
    if padded.any():
        padding_splits(X, W, b, padded)
    W *= scale  # exact for 1 (the old start bit for bit) and any power of two
    b *= scale
    project_rows(W, b, nu)
    return W, b, Theta, padded
