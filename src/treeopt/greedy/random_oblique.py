"""Random oblique trees: each split is the best of R random hyperplanes by information gain.

The greedy "random" baseline of the non-greedy trees paper (Norouzi et al. 2015, §7: "random oblique trees
that select the best split function from a set of randomly generated hyperplanes based on information
gain"): at every node, draw ``n_hyperplanes`` random directions w, put the threshold of each at its
information-gain optimum on the projection ``X w``, and keep the best. Letting the exact best axis-aligned
split compete as well (``axis_candidates=True``) is an option, off by default as in the paper.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from numba import njit
from sklearn.utils._param_validation import Interval

from ._criteria import _xlogx_table, best_sampled_axis_split, class_counts, column_split, separates_perfectly
from ._estimator import (GROW_ORDER_CONSTRAINT, GROWTH_CONSTRAINTS, MAX_FEATURES_CONSTRAINT, GreedyTreeClassifier,
                         n_candidate_features)
from ._grow import NodeSplit
from ._oc1 import _feature_scales
from ._radix import stable_sort_workspace


# hyperplanes projected together: each point's row is read once per block, and the block's sums, one per lane, are
# independent chains the CPU overlaps (one sum at a time waits on each addition)
PROJECTION_BLOCK = 32


@njit(cache=True, nogil=True)
def _project_block(X, W, r0, B, cols, WT, Z):
    """``Z[b] = X W[r0 + b]`` for ``b < B``, each sum in feature order over the weights that are not zero: the tree
    store's arithmetic (``_project_one``) for every lane. When the block's rows share their zero weights (the
    usual case: only constant features have none), the sums run side by side over the shared non-zero columns;
    otherwise one hyperplane at a time."""
    n, p = X.shape
    m = 0
    shared = True
    for j in range(p):
        nonzero = W[r0, j] != 0.0
        for b in range(1, B):
            if (W[r0 + b, j] != 0.0) != nonzero:
                shared = False
        if nonzero:
            cols[m] = j
            for b in range(B):
                WT[m, b] = W[r0 + b, j]
            m += 1
    if not shared:
        for b in range(B):
            _project_one(X, W, r0 + b, Z[b])
        return
    acc = np.empty(B)
    for i in range(n):
        for b in range(B):
            acc[b] = 0.0
        for jj in range(m):
            x = X[i, cols[jj]]
            for b in range(B):
                acc[b] += WT[jj, b] * x
        for b in range(B):
            Z[b, i] = acc[b]


@njit(cache=True, nogil=True)
def _project_one(X, W, r, z):
    """``z = X W[r]``, summed in feature order, zero weights skipped (as ``Tree`` routes a point)."""
    n, p = X.shape
    for i in range(n):
        s = 0.0
        for j in range(p):
            if W[r, j] != 0.0:
                s += W[r, j] * X[i, j]
        z[i] = s


@njit(cache=True, nogil=True)
def _best_projection(X, W, y, k, min_samples_leaf):
    """``best_axis_split`` over the projections ``X W[r]`` of every row ``r`` of ``W``.

    Returns ``(r, threshold, gain)`` (r = -1 when no projection admits a cut). Each projection is summed with
    the tree store's arithmetic (feature order, zero weights skipped), ``PROJECTION_BLOCK`` hyperplanes at a time
    (``_project_block``: the same sums, bit for bit), swept, and overwritten by the next block: memory
    O(block n), not the n x R matrix of all projections. Ties keep the earliest row, as ``best_axis_split`` keeps
    the earliest feature, so the split is the one found over that matrix.
    """
    n, p = X.shape
    R = W.shape[0]
    msl = max(min_samples_leaf, 1)
    if n < 2:
        return -1, np.nan, -np.inf
    total = class_counts(y, k)
    xlogx = _xlogx_table(n)
    block = min(PROJECTION_BLOCK, R)
    Z = np.empty((block, n))
    cols = np.empty(p, dtype=np.int64)
    WT = np.empty((p, block))
    zs = np.empty(n)
    ys = np.empty(n, dtype=y.dtype)
    ws = stable_sort_workspace(n)
    best_r = -1
    best_thr = np.nan
    best_gain = -np.inf
    for r0 in range(0, R, block):
        B = min(block, R - r0)
        _project_block(X, W, r0, B, cols, WT, Z)
        for b in range(B):
            thr, gain = column_split(Z[b], y, k, msl, total, xlogx, (zs, ys, ws))
            if gain > best_gain:
                best_r = r0 + b
                best_thr = thr
                best_gain = gain
    return best_r, best_thr, best_gain


class RandomObliqueSplitFinder:
    """``find_split`` for :func:`grow_tree`: best of random hyperplanes (and, optionally, axis splits) by
    information gain.

    Directions are standard normal in standardised units (``w_j = g_j / std_j`` at the node, 0 for
    constant features), so the draw does not depend on the features' scales.
    """

    def __init__(self, n_classes, *, n_hyperplanes, n_features_split, min_samples_leaf, axis_candidates=False):
        self.n_classes = n_classes
        self.axis_candidates = axis_candidates
        self.n_hyperplanes = n_hyperplanes
        self.n_features_split = n_features_split
        self.min_samples_leaf = min_samples_leaf
        self.n_oblique = 0
        self.n_axis = 0

    def __call__(self, X, y, rng, depth):
        k, msl = self.n_classes, self.min_samples_leaf
        p = X.shape[1]
        f, thr, axis_gain = -1, np.nan, -np.inf
        if self.axis_candidates:
            f, thr, axis_gain = best_sampled_axis_split(X, y, k, self.n_features_split, msl, rng)
            if f >= 0 and separates_perfectly(axis_gain, y, k):
                self.n_axis += 1
                return NodeSplit.axis(f, thr)  # already perfect
        W = rng.standard_normal((self.n_hyperplanes, p))
        scale = _feature_scales(X)
        W *= np.divide(1.0, scale, out=np.zeros(p), where=scale > 0)
        r, b, gain = _best_projection(X, W, y, k, msl)
        if r >= 0 and gain > axis_gain:
            self.n_oblique += 1
            return NodeSplit.oblique(W[r], b)
        if f < 0:
            return None
        self.n_axis += 1
        return NodeSplit.axis(f, thr)


class RandomObliqueTreeClassifier(GreedyTreeClassifier):
    """Greedy oblique tree whose splits are the best of ``n_hyperplanes`` random hyperplanes.

    Splitting criterion: information gain. Leaves hold class frequencies (``value_kind="probabilities"``).

    Parameters
    ----------
    n_hyperplanes : int, default=100
        R, random directions tried per node (the paper does not state its value).
    axis_candidates : bool, default=False
        Let the exact best axis-aligned split over ``max_features`` features compete with the random
        hyperplanes at every node. The paper's baseline uses random hyperplanes only.
    max_features : int, float, "sqrt", "log2" or None, default=None
        With ``axis_candidates``: the features whose best axis split competes (None: all).
    max_depth : int or None, default=None
        Grow to purity when None.
    min_samples_split, min_samples_leaf : int
    random_state : int, RandomState or None
    grow_order : {"depth_first", "level"}, default="depth_first"
        The order nodes are split in, which decides the random draws each node gets. "level" splits every
        node of a depth before the next depth, so the fit with a larger ``max_depth`` contains the fits with
        every smaller one (``depth_step``: a depth sweep from one fit); "depth_first" is the order of the
        earlier versions (their trees, bit for bit).

    Attributes
    ----------
    tree_ : treeopt.trees.Tree
    classes_, n_features_in_
    n_oblique_splits_, n_axis_splits_ : int
        Internal nodes whose winner was a random hyperplane vs. an axis split (0 unless ``axis_candidates``).
    """

    _parameter_constraints = {
        "n_hyperplanes": [Interval(Integral, 1, None, closed="left")],
        "axis_candidates": ["boolean"],
        "max_features": MAX_FEATURES_CONSTRAINT,
        **GROWTH_CONSTRAINTS,
        "grow_order": GROW_ORDER_CONSTRAINT,
    }

    def __init__(self, n_hyperplanes=100, axis_candidates=False, max_features=None, max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, random_state=None, grow_order="depth_first"):
        self.n_hyperplanes = n_hyperplanes
        self.axis_candidates = axis_candidates
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state
        self.grow_order = grow_order

    def _split_finder(self, n_classes, n_features):
        return RandomObliqueSplitFinder(n_classes, n_hyperplanes=self.n_hyperplanes,
                                        n_features_split=n_candidate_features(self.max_features, n_features),
                                        min_samples_leaf=self.min_samples_leaf,
                                        axis_candidates=self.axis_candidates)

    def _record_finder_stats(self, finder):
        self.n_oblique_splits_ = finder.n_oblique
        self.n_axis_splits_ = finder.n_axis

# Jitted callees in other files (numba caches by this file's stamp only; tests/test_numba_cache_keys.py):
# numba cache key: greedy/_criteria.py 4dcab3fc6aaebb4f
# numba cache key: greedy/_grow.py d6bb969f416b02cb
# numba cache key: greedy/_oc1.py 21533cd357d5ec8c
# numba cache key: greedy/_radix.py a9670243c6c38a19
