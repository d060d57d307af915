"""Top-down greedy growth shared by every greedy tree learner (axis-aligned, random oblique, OC1, CO2).

A learner supplies only ``find_split(X_node, y_node, rng, depth) -> NodeSplit | None``; this module
handles the recursion (as an explicit stack, so depth is not limited by Python's recursion limit),
the stopping rules, routing of the training points and assembly of the shared
:class:`treeopt.trees.Tree`.

**Growth order.** Depth first (the default) visits a node's whole left subtree before its right child, so the
random draws a node gets depend on how deep its left neighbours grew: a tree grown to depth 18 does not contain
the tree grown with the same seed to depth 6. Level order (``level_order=True``) splits every node of depth d,
left to right, before any node of depth d + 1 and numbers the nodes in that order; the draws of the nodes above
depth d are then the same whatever the depth limit, so a tree grown to depth D *contains* the tree grown to every
d < D with the same seed, node for node (:func:`level_order_prefix`; a depth sweep reads every depth off one fit).
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit

from treeopt.trees import Tree


@dataclass(frozen=True)
class NodeSplit:
    """A split ``w . x - b >= 0 -> right`` proposed for one node.

    ``feature >= 0`` marks an axis-aligned split on that feature (``weights`` is then ignored and
    stored as the unit vector, with ``bias`` as the threshold); ``feature = -1`` is oblique.
    """

    weights: np.ndarray | None
    bias: float
    feature: int = -1

    @classmethod
    def axis(cls, feature, threshold):
        """Axis-aligned split ``x[feature] >= threshold -> right``."""
        return cls(None, float(threshold), int(feature))

    @classmethod
    def oblique(cls, weights, bias):
        return cls(np.ascontiguousarray(weights, dtype=np.float64), float(bias), -1)


@njit(cache=True, nogil=True)
def project_into(X, w, out):
    """``out = X w`` summed in feature order over the non-zero weights: the tree store's arithmetic.

    Thresholds chosen on these values route the training points exactly as ``Tree.apply`` will.
    """
    n, p = X.shape
    for i in range(n):
        s = 0.0
        for j in range(p):
            if w[j] != 0.0:
                s += w[j] * X[i, j]
        out[i] = s


@njit(cache=True, nogil=True)
def _route_right(X, weights, bias, feature):
    n = X.shape[0]
    out = np.empty(n, dtype=np.bool_)
    if feature >= 0:
        for i in range(n):
            out[i] = X[i, feature] >= bias
        return out
    z = np.empty(n)
    project_into(X, weights, z)
    for i in range(n):
        out[i] = z[i] - bias >= 0.0
    return out


@njit(cache=True, nogil=True)
def _route_right_rows(X, rows, nz, weights, bias):
    """:func:`_route_right` of an oblique split on the rows ``X[rows]``, read in place; ``nz``: the split's
    non-zero weights' features, ascending (the sum :func:`project_into` makes, term for term)."""
    n = rows.shape[0]
    out = np.empty(n, dtype=np.bool_)
    for i in range(n):
        s = 0.0
        for t in range(nz.shape[0]):
            s += weights[nz[t]] * X[rows[i], nz[t]]
        out[i] = s - bias >= 0.0
    return out


def _checked_weights(X, weights):
    w = np.ascontiguousarray(weights, dtype=np.float64)
    if w.shape != (X.shape[1],):
        raise ValueError(f"split weights have shape {w.shape}, expected ({X.shape[1]},)")
    return w


def project(X, weights):
    """Projections ``X w`` computed as the tree store routes (use them to place oblique thresholds)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    z = np.empty(X.shape[0])
    project_into(X, _checked_weights(X, weights), z)
    return z


def route_right(X, split):
    """Boolean mask of the rows of ``X`` that ``split`` sends right (exactly as ``Tree.apply`` does)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    if split.feature >= 0:
        return _route_right(X, np.zeros(1), split.bias, split.feature)
    return _route_right(X, _checked_weights(X, split.weights), split.bias, -1)


def grow_tree(X, y, n_classes, find_split, *, max_depth=None, min_samples_split=2, min_samples_leaf=1,
              rng=None, sample=None, level_order=False, level_seconds=None):
    """Grow a tree top-down, one node at a time (the greedy procedure of CO2 paper §2).

    Parameters
    ----------
    X : ndarray (n, p), float64
    y : ndarray (n,), int labels in ``0..n_classes-1``
    find_split : callable ``(X_node, y_node, rng, depth) -> NodeSplit | None``
        ``None`` makes the node a leaf. A finder with ``reads_rows = True`` is called as
        ``find_split(X, rows, y_node, rng, depth)`` with the node's row numbers in ``X`` instead of a copy of
        its rows (a two-probe node reads 2,000 of a segmentation window's 2,883 values), and must return an
        oblique split. A finder with ``takes_rows = True`` gets the copy and also ``rows=``, the node's row numbers
        in ``X`` (with ``sample``, a bootstrap sample's copies of one point share a number: OC1 searches each point
        once, with its multiplicity).
    max_depth : int or None
        Nodes at this depth become leaves (root has depth 0); None grows until the other rules stop.
    min_samples_split : int
        Nodes with fewer points become leaves.
    min_samples_leaf : int
        A proposed split leaving fewer points on either side is rejected (the node becomes a leaf).
    rng : numpy.random.Generator, passed on to ``find_split``.
    sample : array of int, optional
        Grow on the rows ``X[sample]`` (a bootstrap sample: indices may repeat) without copying them first: each
        node gathers only its own rows, and a node's copy is freed before the next node's is made, so growing
        holds at most one node's rows besides ``X`` (the root's: the whole sample). ``y`` then holds the labels
        of the sampled rows (``len(sample)`` of them). The tree equals the one grown on ``X[sample]``.
    level_order : bool
        Grow level by level (see the module's "Growth order"): nodes are split and numbered breadth first, so
        the tree grown with ``max_depth = d`` is :func:`level_order_prefix` of any deeper one (same ``rng``).
    level_seconds : list, optional
        With ``level_order``, filled with the seconds (``time.perf_counter``) from the start until every node
        above depth d was split, for d = 1, 2, ...: entry ``d - 1`` is the growing time of the same tree limited
        to depth d.

    Returns
    -------
    Tree with ``value_kind="probabilities"``: every node's row holds the empirical class frequencies
    of the training points reaching it, and ``n_samples`` their number. Pure nodes are leaves.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    p = X.shape[1]
    sample = np.arange(X.shape[0]) if sample is None else np.asarray(sample, dtype=np.int64)
    n = sample.shape[0]
    if y.shape != (n,):
        raise ValueError(f"y has shape {y.shape}, expected ({n},)")
    if n == 0:
        raise ValueError("cannot grow a tree on zero samples")
    rng = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    min_samples_leaf = max(int(min_samples_leaf), 1)
    min_samples_split = max(int(min_samples_split), 2 * min_samples_leaf)

    reads_rows = getattr(find_split, "reads_rows", False)
    takes_rows = getattr(find_split, "takes_rows", False)
    left, right, feature, bias, depth, n_samples, value, rows = [], [], [], [], [], [], [], []

    def new_node(d):
        left.append(-1)
        right.append(-1)
        feature.append(-2)
        bias.append(0.0)
        depth.append(d)
        n_samples.append(0)
        value.append(None)
        rows.append(None)
        return len(left) - 1

    start, level = time.perf_counter(), 0
    stack = collections.deque([(new_node(0), np.arange(n))])
    take = stack.popleft if level_order else stack.pop
    while stack:
        node, idx = take()
        d = depth[node]
        if level_order and d > level:  # every node above depth d is split: a depth-d tree's growing time
            if level_seconds is not None:
                level_seconds.extend([time.perf_counter() - start] * (d - level))
            level = d
        y_node = y[idx]
        counts = np.bincount(y_node, minlength=n_classes)
        value[node] = counts / idx.size
        n_samples[node] = idx.size
        if (idx.size < min_samples_split or np.count_nonzero(counts) <= 1
                or (max_depth is not None and d >= max_depth)):
            continue
        if reads_rows:
            node_rows = sample[idx]
            split = find_split(X, node_rows, y_node, rng, d)
            if split is None:
                continue
            w = _checked_weights(X, split.weights)
            go_right = _route_right_rows(X, node_rows, np.flatnonzero(w), w, split.bias)
        else:
            X_node = X[sample[idx]]
            # a finder with ``takes_rows`` also gets the node's row numbers in X: repeated ones (a bootstrap sample's
            # copies of one point) are the same point, which OC1 searches once with its multiplicity
            split = (find_split(X_node, y_node, rng, d, rows=sample[idx]) if takes_rows
                     else find_split(X_node, y_node, rng, d))
            if split is None:
                del X_node
                continue
            go_right = route_right(X_node, split)
            del X_node  # before the next node's rows are gathered: one node's copy at a time
        n_right = int(np.count_nonzero(go_right))
        if n_right < min_samples_leaf or idx.size - n_right < min_samples_leaf:
            continue
        if split.feature >= 0:
            rows[node] = (np.array([split.feature]), np.array([1.0]))
        else:
            nz = np.flatnonzero(split.weights)
            rows[node] = (nz, split.weights[nz])
        feature[node] = split.feature
        bias[node] = split.bias
        left[node] = new_node(d + 1)
        right[node] = new_node(d + 1)
        if level_order:  # first in, first out: the left child is split first, as depth first does
            stack.append((left[node], idx[~go_right]))
            stack.append((right[node], idx[go_right]))
        else:
            stack.append((right[node], idx[go_right]))
            stack.append((left[node], idx[~go_right]))

    if level_order and level_seconds is not None:
        level_seconds.append(time.perf_counter() - start)  # the deepest level's leaves: the whole tree
    W = _rows_to_csr(rows, p)
    return Tree(np.array(left), np.array(right), W, np.array(bias), np.vstack(value),
                feature=np.array(feature), depth=np.array(depth), n_samples=np.array(n_samples),
                value_kind="probabilities")


def level_order_prefix(tree, max_depth):
    """The tree a level-order growth (:func:`grow_tree` with ``level_order=True``) limited to ``max_depth`` gives,
    from a level-order tree grown deeper with the same random draws: its nodes of depth at most ``max_depth`` (the
    first ones: level order numbers them first), those at ``max_depth`` made leaves (no split, bias 0, their class
    frequencies kept), as the shallower growth leaves them. Raises ValueError when ``tree``'s nodes are not numbered
    level by level."""
    max_depth = int(max_depth)
    if max_depth < 0:
        raise ValueError(f"max_depth must be >= 0, got {max_depth}")
    if np.any(np.diff(tree.depth) < 0):
        raise ValueError("the tree's nodes are not numbered level by level (grow it with level_order=True)")
    m = int(np.searchsorted(tree.depth, max_depth, side="right"))
    cut = tree.depth[:m] == max_depth
    left, right = tree.left[:m].copy(), tree.right[:m].copy()
    left[cut] = -1
    right[cut] = -1
    if np.any(left >= m) or np.any(right >= m):  # cannot happen in level order: children follow their level
        raise ValueError("the tree's nodes are not numbered level by level (grow it with level_order=True)")
    bias = tree.bias[:m].copy()
    bias[cut] = 0.0
    feature = tree.feature[:m].copy()
    feature[cut] = -2
    return Tree(left, right, tree.W[:m], bias, tree.value[:m].copy(), feature=feature,
                n_samples=tree.n_samples[:m].copy(), value_kind=tree.value_kind, x_dtype=tree.x_dtype)


def _rows_to_csr(rows, p):
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    for i, r in enumerate(rows):
        indptr[i + 1] = indptr[i] + (0 if r is None else r[0].size)
    present = [r for r in rows if r is not None]
    indices = np.concatenate([r[0] for r in present]) if present else np.zeros(0, dtype=np.int64)
    data = np.concatenate([r[1] for r in present]) if present else np.zeros(0)
    return sp.csr_matrix((data, indices, indptr), shape=(len(rows), p))
