"""Binary split candidates for the optimal-tree solver: per-feature quantile thresholds plus given ones.

STreeD (van der Linden, de Weerdt and Demirović, NeurIPS 2023) searches trees over *binary* features. A
continuous feature becomes the tests ``x_f >= t`` for a few thresholds t; the optimum is then optimal among the
trees whose splits use those tests only. Every threshold here is the midpoint between two consecutive distinct
training values of its feature, so on the training set ``x_f >= t`` splits exactly where the candidate meant to
split, and on new data it falls halfway, as CART's thresholds do. A test is a pair (feature, threshold) and the
binary column is ``X[:, feature] >= threshold`` in float64: the same comparison the shared ``Tree`` makes
("right iff w.x - b >= 0" with w = e_feature), so a tree over these columns converts without any rounding.
"""

from __future__ import annotations

import numpy as np


def _cut(values, j):
    """Threshold between distinct sorted ``values[j - 1]`` and ``values[j]``: their midpoint, or ``values[j]``
    when the two are adjacent floats (the midpoint would round down onto ``values[j - 1]``)."""
    lo, hi = values[j - 1], values[j]
    mid = lo + (hi - lo) / 2.0
    return mid if lo < mid <= hi else hi


def quantile_splits(X, n_thresholds):
    """(features, thresholds) of up to ``n_thresholds`` tests per feature at its empirical quantiles
    i / (n_thresholds + 1), i = 1..n_thresholds; a feature with few distinct values gets a test between each
    pair of neighbours (a one-hot column: one test)."""
    features, thresholds = [], []
    for f in range(X.shape[1]):
        values = np.unique(X[:, f])
        if values.shape[0] < 2 or n_thresholds < 1:
            continue
        if values.shape[0] - 1 <= n_thresholds:
            cuts = np.arange(1, values.shape[0])
        else:
            q = np.quantile(X[:, f], np.arange(1, n_thresholds + 1) / (n_thresholds + 1))
            # the test "x >= q" separates the values below q from those at or above it
            cuts = np.unique(np.clip(np.searchsorted(values, q, side="left"), 1, values.shape[0] - 1))
        features.extend([f] * cuts.shape[0])
        thresholds.extend(_cut(values, j) for j in cuts)
    return np.asarray(features, dtype=np.int64), np.asarray(thresholds, dtype=np.float64)


def tree_splits(tree, X):
    """(features, thresholds) reproducing every axis-aligned split of ``tree`` (a ``treeopt.trees.Tree``) on
    the training points X: the test ``X[:, f] >= t`` sends exactly the rows of X right that the tree's node
    sends right (the node may compare in float32, as converted scikit-learn trees do; rounding to float32 is
    monotone, so "goes right" is an upper set of the feature's values and one float64 cut matches it)."""
    features, thresholds = [], []
    for node in tree.internal:
        f = int(tree.feature[node])
        if f < 0:
            raise ValueError("tree_splits takes axis-aligned trees only (node %d is oblique)" % node)
        values = np.unique(X[:, f])
        routed = values.astype(tree.x_dtype).astype(np.float64)
        j = int(np.searchsorted(routed, tree.bias[node], side="left"))  # first value the node sends right
        if 0 < j < values.shape[0]:  # otherwise the split does not separate any training points
            features.append(f)
            thresholds.append(_cut(values, j))
    return np.asarray(features, dtype=np.int64), np.asarray(thresholds, dtype=np.float64)


def merge_splits(*pairs):
    """Union of (features, thresholds) pairs, sorted by feature then threshold, duplicates removed."""
    f = np.concatenate([p[0] for p in pairs]).astype(np.int64)
    t = np.concatenate([p[1] for p in pairs]).astype(np.float64)
    if f.size == 0:
        return f, t
    order = np.lexsort((t, f))
    f, t = f[order], t[order]
    keep = np.ones(f.shape[0], dtype=bool)
    keep[1:] = (f[1:] != f[:-1]) | (t[1:] != t[:-1])
    return f[keep], t[keep]


def binarize(X, features, thresholds):
    """The 0/1 matrix (n x number of tests) with column j = ``X[:, features[j]] >= thresholds[j]``."""
    return np.ascontiguousarray(X[:, features] >= thresholds, dtype=np.int32)
