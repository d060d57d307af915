"""Numba kernels over the flat tree arrays (never Python objects).

Convention (DESIGN.md): at internal node i go right iff ``w_i . x - b_i >= 0``. Axis-aligned nodes
(``feature[i] >= 0``) compare one coordinate with ``b_i`` so routing stays O(depth) with no dot product;
oblique nodes use a CSR row of the weight matrix.
"""

import numpy as np
from numba import njit, prange


@njit(cache=True, nogil=True, inline="always")
def _goes_right(x, node, feature, bias, indptr, indices, data):
    f = feature[node]
    if f >= 0:
        return x[f] >= bias[node]
    s = 0.0
    for jj in range(indptr[node], indptr[node + 1]):
        s += data[jj] * x[indices[jj]]
    return s - bias[node] >= 0.0


@njit(cache=True, nogil=True, parallel=True)
def apply_dense(X, left, right, feature, bias, indptr, indices, data):
    """Leaf id reached by every row of X."""
    n = X.shape[0]
    out = np.empty(n, dtype=np.int64)
    for r in prange(n):
        node = 0
        while left[node] >= 0:
            if _goes_right(X[r], node, feature, bias, indptr, indices, data):
                node = right[node]
            else:
                node = left[node]
        out[r] = node
    return out


@njit(cache=True, nogil=True)
def path_lengths_and_ops(X, left, right, feature, bias, indptr, indices, data):
    """Per sample: number of internal nodes visited and multiply-adds spent routing it.

    An axis-aligned node costs one comparison (counted as one op); an oblique node costs nnz(w_i).
    """
    n = X.shape[0]
    lengths = np.empty(n, dtype=np.int64)
    ops = np.empty(n, dtype=np.int64)
    for r in range(n):
        node = 0
        length = 0
        cost = 0
        while left[node] >= 0:
            length += 1
            if feature[node] >= 0:
                cost += 1
            else:
                cost += indptr[node + 1] - indptr[node]
            if _goes_right(X[r], node, feature, bias, indptr, indices, data):
                node = right[node]
            else:
                node = left[node]
        lengths[r] = length
        ops[r] = cost
    return lengths, ops


@njit(cache=True, nogil=True)
def decision_path_dense(X, left, right, feature, bias, indptr, indices, data, max_depth):
    """CSR pieces (indptr, node ids) of the sample-by-node indicator of visited nodes."""
    n = X.shape[0]
    out_indptr = np.zeros(n + 1, dtype=np.int64)
    buf = np.empty(n * (max_depth + 1), dtype=np.int64)
    pos = 0
    for r in range(n):
        node = 0
        buf[pos] = 0
        pos += 1
        while left[node] >= 0:
            if _goes_right(X[r], node, feature, bias, indptr, indices, data):
                node = right[node]
            else:
                node = left[node]
            buf[pos] = node
            pos += 1
        out_indptr[r + 1] = pos
    return out_indptr, buf[:pos]


@njit(cache=True, nogil=True)
def node_depths(left, right):
    """Depth of every node (root 0), by a parent-before-child sweep from the root."""
    n = left.shape[0]
    depth = np.full(n, -1, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)
    top = 0
    stack[top] = 0
    top += 1
    depth[0] = 0
    while top > 0:
        top -= 1
        node = stack[top]
        if left[node] >= 0:
            for child in (left[node], right[node]):
                depth[child] = depth[node] + 1
                stack[top] = child
                top += 1
    return depth


@njit(cache=True, nogil=True, parallel=True)
def forest_accumulate(X, forest, first, last, out):
    """Add the leaf rows of trees ``first..last-1`` of a packed forest to ``out`` (n, k), for every row of X;
    ``forest`` is ``(roots, left, right, feature, bias, indptr, indices, data, leaf_values)``.

    A packed forest concatenates its trees' node arrays (node ids already offset, ``roots[t]`` the root of
    tree t; one CSR over all nodes) and stores per node a probability row of the forest's k classes, so
    every tree is routed in this one kernel and accumulated without per-tree fancy indexing. Rows are
    processed in blocks (in parallel); within a block tree by tree, so one tree's nodes stay in cache while
    the block's rows go through it. Routing arithmetic is ``_goes_right``'s, as in ``apply_dense``.
    """
    roots, left, right, feature, bias, indptr, indices, data, leaf_values = forest
    n = X.shape[0]
    k = leaf_values.shape[1]
    block = 128
    n_blocks = (n + block - 1) // block
    for bi in prange(n_blocks):
        lo = bi * block
        hi = min(n, lo + block)
        for t in range(first, last):
            root = roots[t]
            for r in range(lo, hi):
                x = X[r]
                node = root
                while left[node] >= 0:
                    if _goes_right(x, node, feature, bias, indptr, indices, data):
                        node = right[node]
                    else:
                        node = left[node]
                for c in range(k):
                    out[r, c] += leaf_values[node, c]
