"""Two-probe trees: each split thresholds the difference of two features, the best of many sampled pairs.

The "Two-probe Forest" baseline of the CO2 paper (Norouzi et al. 2015, Sec. 6.2): "split functions that
compare two features (or probes), where the choice of features comes from finding the optimal pair of
features out of a large number of sampled pairs", analogous to the pixel-comparison features of Shotton et
al. (the paper's [27]). At every node ``n_pairs`` ordered pairs ``(i, j)`` of distinct features are drawn;
each pair's threshold is placed at its information-gain optimum on ``x_i - x_j`` and the best pair wins.

In the shared tree store a two-probe split is an oblique node with weights ``+1`` on feature i and ``-1``
on feature j: right when ``x_i - x_j - b >= 0``. The training points are routed with the tree store's
arithmetic, so ``tree_.apply`` reproduces the training partition exactly.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval

from ._criteria import best_difference_split
from ._estimator import GROW_ORDER_CONSTRAINT, GROWTH_CONSTRAINTS, GreedyTreeClassifier
from ._grow import NodeSplit


def sample_pairs(rng, p, n_pairs):
    """``n_pairs`` ordered pairs ``(i, j)`` of distinct features out of ``p``, uniformly."""
    i = rng.integers(0, p, n_pairs)
    j = rng.integers(0, p - 1, n_pairs)
    j = j + (j >= i)  # skips i: j uniform over the other p - 1 features
    return i.astype(np.int64), j.astype(np.int64)


class TwoProbeSplitFinder:
    """``find_split`` for :func:`treeopt.greedy._grow.grow_tree`: best of ``n_pairs`` feature differences."""

    def __init__(self, n_classes, *, n_pairs, min_samples_leaf):
        self.n_classes = n_classes
        self.n_pairs = n_pairs
        self.min_samples_leaf = min_samples_leaf

    reads_rows = True  # grow_tree passes the node's row numbers, not a copy of its rows

    def __call__(self, X, rows, y, rng, depth):
        p = X.shape[1]
        if p < 2:  # no pair of features to compare: the node stays a leaf
            return None
        first, second = sample_pairs(rng, p, self.n_pairs)
        f, threshold, _ = best_difference_split(X, rows, y, self.n_classes, first, second, self.min_samples_leaf)
        if f < 0:
            return None
        w = np.zeros(p)
        w[first[f]], w[second[f]] = 1.0, -1.0
        return NodeSplit.oblique(w, threshold)


class TwoProbeTreeClassifier(GreedyTreeClassifier):
    """Decision tree of two-probe splits ``x_i - x_j >= b`` (CO2 paper Sec. 6.2, "Two-probe Forest").

    Parameters
    ----------
    n_pairs : int, default=1000
        Feature pairs sampled per node; the best by information gain is kept.
    max_depth : int or None, default=None
    min_samples_split, min_samples_leaf : int
    random_state : int, RandomState or None
    grow_order : {"depth_first", "level"}, default="depth_first"
        The order nodes are split in, which decides the random draws each node gets: "level" splits every node
        of a depth before the next depth, so the fit with a larger ``max_depth`` contains the fits with every
        smaller one (``depth_step``; a segmentation forest's depth sweep from one fit).

    Attributes
    ----------
    tree_ : treeopt.trees.Tree
        Every internal node is oblique (``feature = -1``) with exactly two non-zero weights, +1 and -1.
        Leaves hold the class frequencies of their training points. With a single feature there is no pair
        to compare and the tree is one leaf.
    classes_, n_features_in_
    """

    _parameter_constraints = {
        "n_pairs": [Interval(Integral, 1, None, closed="left")],
        **GROWTH_CONSTRAINTS,
        "grow_order": GROW_ORDER_CONSTRAINT,
    }

    def __init__(self, n_pairs=1000, max_depth=None, min_samples_split=2, min_samples_leaf=1, random_state=None,
                 grow_order="depth_first"):
        self.n_pairs = n_pairs
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state
        self.grow_order = grow_order

    def _split_finder(self, n_classes, n_features):
        return TwoProbeSplitFinder(n_classes, n_pairs=self.n_pairs, min_samples_leaf=self.min_samples_leaf)
