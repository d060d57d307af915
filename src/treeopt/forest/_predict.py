"""Forest prediction kernel over dense oblique weight rows (the packed forest's fast path).

CO2 stumps are dense: SGD on eq. (11) moves every coordinate of ``w`` away from the initial axis split,
so a CSR row holds all p weights plus their column indices, and routing through it costs an index load
and a gather per multiply-add. Here each oblique node owns a row of a dense matrix and the dot product
reads it contiguously. The sum runs over the features in increasing order, zeros included; adding a
zero product leaves a finite sum unchanged, so the result is bit-identical to the tree store's sorted-CSR
routing (``treeopt.trees._kernels._goes_right``) and a point goes to the same leaf.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit, prange


@njit(cache=True, nogil=True, parallel=True)
def forest_accumulate_dense(X, roots, left, right, feature, bias, orow, W, leaf_values, first, last, out):
    """Add the leaf rows of trees ``first..last-1`` to ``out`` (n, k) for every row of X.

    Node i is a leaf when ``left[i] < 0``, an axis split on ``feature[i]`` when that is >= 0, else oblique
    with weights ``W[orow[i]]``; right iff ``w . x - b >= 0``. Rows go in blocks (in parallel), tree by
    tree within a block, so one tree's nodes stay in cache while the block's rows go through it.
    """
    n, p = X.shape
    k = leaf_values.shape[1]
    block = 128
    n_blocks = (n + block - 1) // block
    for bi in prange(n_blocks):
        lo = bi * block
        hi = min(n, lo + block)
        for t in range(first, last):
            root = roots[t]
            for r in range(lo, hi):
                node = root
                while left[node] >= 0:
                    f = feature[node]
                    if f >= 0:
                        go_right = X[r, f] >= bias[node]
                    else:
                        row = orow[node]
                        s = 0.0
                        for j in range(p):
                            s += W[row, j] * X[r, j]
                        go_right = s - bias[node] >= 0.0
                    node = right[node] if go_right else left[node]
                for c in range(k):
                    out[r, c] += leaf_values[node, c]


def _rows_sorted(indptr, indices):
    """Column indices strictly increasing within every CSR row (the dense sum then adds in the same order)."""
    steps = np.diff(indices)
    starts = indptr[1:-1]  # a row's first entry may be below the previous row's last one
    inside = np.ones(steps.shape[0], dtype=bool)
    inside[starts[(starts > 0) & (starts <= steps.shape[0])] - 1] = False
    return not np.any(steps[inside] <= 0)


def _dense_rows(parts, n_features):
    """``(orow, W)`` over the nodes of ``parts`` ((left, feature, indptr, indices, data) per tree, nodes numbered
    on from one part to the next), built part by part, or ``None`` (see :func:`dense_oblique_rows`)."""
    oblique = [np.flatnonzero((left >= 0) & (feature < 0)) for left, feature, *_ in parts]
    nnz = sum(int((indptr[o + 1] - indptr[o]).sum()) for (_, _, indptr, _, _), o in zip(parts, oblique))
    n_oblique = sum(o.shape[0] for o in oblique)
    if n_oblique * n_features > 2 * nnz or not all(_rows_sorted(part[2], part[3]) for part in parts):
        return None
    orow = np.full(sum(part[0].shape[0] for part in parts), -1, dtype=np.int64)
    W = np.empty((n_oblique, n_features))
    node0 = row0 = 0
    for (left, _, indptr, indices, data), o in zip(parts, oblique):
        orow[node0 + o] = row0 + np.arange(o.shape[0])
        rows = sp.csr_matrix((data, indices, indptr), shape=(left.shape[0], n_features))
        W[row0:row0 + o.shape[0]] = rows[o].toarray()
        node0 += left.shape[0]
        row0 += o.shape[0]
    return orow, W


def dense_oblique_rows(left, feature, indptr, indices, data, n_features):
    """``(orow, W)``: a dense weight row per internal oblique node (``orow[i]`` its row, -1 elsewhere), or
    ``None`` when the dense copy would not route exactly as the CSR rows (column indices not strictly
    increasing within a row) or would take more than twice their memory (rows less than half full)."""
    return _dense_rows([(left, feature, indptr, indices, data)], n_features)


def dense_oblique_rows_of_trees(trees, n_features):
    """:func:`dense_oblique_rows` of the trees' concatenated nodes (same rule over all trees together), built
    tree by tree: the forest's concatenated CSR rows are never materialised (for 1000 Connect-4 CO2 trees they
    would take 5 GB beside the 2.7 GB of dense rows)."""
    return _dense_rows([(t.left, t.feature, t.W.indptr, t.W.indices, t.W.data) for t in trees], n_features)
