"""OC1 oblique decision trees (Murthy, Kasif & Salzberg 1994), as used for the CO2 paper's OC1 Forest.

Each node starts from the best information-gain axis split over ``max_features`` random features (the
CO2 paper's §5 modification of OC1's initialisation) and improves it with OC1's search
(:func:`treeopt.greedy._oc1.oc1_search`): coordinate-wise line searches over the critical values U_j,
random perturbations to leave local optima, and random restarts. Trees grow to purity by default, as in
the CO2 paper ("removing hard-coded limits on tree depth and minimum examples").
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval

from ._criteria import best_sampled_axis_split, information_gain, separates_perfectly
from ._estimator import (GROW_ORDER_CONSTRAINT, GROWTH_CONSTRAINTS, MAX_FEATURES_CONSTRAINT, GreedyTreeClassifier,
                         n_candidate_features)
from ._grow import NodeSplit, route_right
from ._oc1 import MAX_MULTIPLICITY, TAG_BITS, oc1_search, oc1_search_multi

# Coordinate-descent sweeps between random perturbations; each accepted sweep strictly improves the gain,
# so this only caps pathological slow progress.
MAX_CYCLES = 20


class OC1SplitFinder:
    """``find_split`` for :func:`grow_tree`: OC1 search from the best sampled axis split.

    The returned split is never worse (in information gain on the node's points) than that axis split:
    the oblique hyperplane is kept only when its gain is strictly higher.
    """

    takes_rows = True  # the grower passes the node's row numbers: a bootstrap sample's copies of one point
    use_multiplicities = True  # False: every row searched as a point of its own (the same result; tests compare)

    def __init__(self, n_classes, *, n_features_split, n_restarts, n_perturbations, min_samples_leaf,
                 max_cycles=MAX_CYCLES):
        self.n_classes = n_classes
        self.n_features_split = n_features_split
        self.n_restarts = n_restarts
        self.n_perturbations = n_perturbations
        self.min_samples_leaf = min_samples_leaf
        self.max_cycles = max_cycles
        self.n_oblique = 0
        self.n_axis = 0

    def __call__(self, X, y, rng, depth, rows=None):
        k, msl = self.n_classes, self.min_samples_leaf
        p = X.shape[1]
        f, thr, axis_gain = best_sampled_axis_split(X, y, k, self.n_features_split, msl, rng)
        if f < 0:
            return None
        axis = NodeSplit.axis(f, thr)
        if separates_perfectly(axis_gain, y, k):
            self.n_axis += 1
            return axis  # a perfect split cannot be improved
        w0 = np.zeros(p)
        w0[f] = 1.0
        restart_normals = rng.standard_normal((self.n_restarts - 1, p))
        jump_normals = rng.standard_normal((self.n_restarts, self.n_perturbations, p + 1))
        w, b, gain = self._search(X, y, rows, w0, thr, restart_normals, jump_normals)
        if gain > axis_gain + 1e-12:
            oblique = NodeSplit.oblique(w, b)
            # re-score the partition exactly as the tree will route it before trusting the search's gain
            go_right = route_right(X, oblique)
            n_right = int(go_right.sum())
            if (min(n_right, y.shape[0] - n_right) >= msl
                    and information_gain(y, go_right, k) > axis_gain + 1e-12):
                self.n_oblique += 1
                return oblique
        self.n_axis += 1
        return axis

    def _search(self, X, y, rows, w0, thr, restart_normals, jump_normals):
        """:func:`oc1_search`; through :func:`oc1_search_multi` whenever the grower gives the rows (on the distinct
        points with their multiplicities when ``rows`` repeats some: the same hyperplane, faster), so that one
        compiled entry serves nodes with and without copies (a warm-up fit compiles it; a second entry met only
        by the timed fit would compile inside it)."""
        k, msl = self.n_classes, self.min_samples_leaf
        if rows is not None and self.use_multiplicities and 2 * k < 2 ** TAG_BITS:
            _, first, inv, counts = np.unique(rows, return_index=True, return_inverse=True, return_counts=True)
            if counts.max() <= MAX_MULTIPLICITY:
                return oc1_search_multi(X, y, first.astype(np.int64), inv.astype(np.int64).ravel(), k, w0, thr,
                                        restart_normals, jump_normals, msl, self.max_cycles)
        return oc1_search(X, y, k, w0, thr, restart_normals, jump_normals, msl, self.max_cycles)


class OC1TreeClassifier(GreedyTreeClassifier):
    """Oblique decision tree with OC1 splits maximising information gain.

    Parameters
    ----------
    max_features : int, float, "sqrt", "log2" or None, default="sqrt"
        q, the number of random features whose best axis split initialises each node's search (CO2
        paper §5). The oblique search itself uses all features.
    n_restarts : int, default=20
        Starting hyperplanes per node: the axis split, then random hyperplanes (OC1's "restarts").
    n_perturbations : int, default=5
        Random perturbation directions tried per restart once coordinate descent stalls (OC1's "random
        jumps"). 20 and 5 follow the OC1 distribution's defaults.
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
        Leaves hold the class frequencies of their training points (``value_kind="probabilities"``).
    classes_, n_features_in_
    n_oblique_splits_, n_axis_splits_ : int
        Internal nodes where the search beat the initial axis split vs. kept it.
    """

    _parameter_constraints = {
        "max_features": MAX_FEATURES_CONSTRAINT,
        "n_restarts": [Interval(Integral, 1, None, closed="left")],
        "n_perturbations": [Interval(Integral, 0, None, closed="left")],
        **GROWTH_CONSTRAINTS,
        "grow_order": GROW_ORDER_CONSTRAINT,
    }

    def __init__(self, max_features="sqrt", n_restarts=20, n_perturbations=5, max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, random_state=None, grow_order="depth_first"):
        self.max_features = max_features
        self.n_restarts = n_restarts
        self.n_perturbations = n_perturbations
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state
        self.grow_order = grow_order

    def _split_finder(self, n_classes, n_features):
        return OC1SplitFinder(n_classes, n_features_split=n_candidate_features(self.max_features, n_features),
                              n_restarts=self.n_restarts, n_perturbations=self.n_perturbations,
                              min_samples_leaf=self.min_samples_leaf)

    def _record_finder_stats(self, finder):
        self.n_oblique_splits_ = finder.n_oblique
        self.n_axis_splits_ = finder.n_axis
