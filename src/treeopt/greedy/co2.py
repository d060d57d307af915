"""CO2 (Continuously Optimised Oblique) stumps and trees (Norouzi et al., "CO2 Forest", Sec. 3-5).

A CO2 stump is an oblique split ``w . x - b >= 0 -> right`` with two softmax leaves ``theta_0``
(left) and ``theta_1`` (right). Its empirical log loss eq. (2) is discontinuous in ``w``; the paper
minimises the continuous upper bound eq. (5)/(10) under the norm constraint eq. (9),
``||[w, b]||^2 <= nu``, by the convex-concave procedure with projected stochastic subgradient steps on
eq. (11) (Alg. 1). The numba kernel is :func:`treeopt.greedy._co2_sgd.co2_stump_sgd`; this module holds
the losses, the one-stump optimiser, the per-node split finder and the tree estimator.

Choices the paper leaves open, fixed here:

- Initial split: the best information-gain axis split over q random features (Sec. 5), scaled onto
  the sphere ``||[w, b]||^2 = nu`` (same partition, tightest feasible bound by eq. (8)); theta = the
  add-one-smoothed class log-frequencies of its two sides (exact log-frequencies are -inf for absent
  classes).
- Learning-rate rule ("when it oscillates for more than a number of iterations we reduce the learning
  rate", Sec. 4.2): the surrogate eq. (10) is evaluated over all of the node's points at one parameter
  state after every epoch; after ``OSCILLATION_PATIENCE`` consecutive epochs in which it rose, eta is
  halved (a fall resets the count).
- Mini-batches: ``ceil(n / 100)`` batches of equal size per epoch, so no small remainder batch gets a
  full step; a node with fewer than 100 points takes one full-batch step per epoch.
- Convergence ("while the surrogate has not converged"): at most ``max_epochs`` (200) epochs; stop early
  when the best epoch surrogate has not fallen by a relative ``tol`` for ``n_iter_no_change`` (20) epochs.
- Acceptance: the optimised split is used as it is, as in the paper, whenever it sends at least
  ``min_samples_leaf`` points each way (even with no information gain). A stump can also collapse: send
  every point one way, which splits nothing. The paper grows every tree "as deep as possible, until we
  reach a pure leaf" (Sec. 6) and names no rule for this case, so by default (``axis_fallback="collapsed"``)
  such a node is split by the stump's initial axis split, and counted. ``"never"`` makes it a leaf instead
  (impure leaves; Letter validation error of 30 trees 4.2-4.9% vs 3.6% in a quick check, nu 4-43).
  ``"no_gain"`` is the earlier safeguard, not in the paper: it also replaces optimised splits without
  positive information gain (and, with ``compare_with_axis=True``, with less gain than the axis split).
  Fitted trees count oblique splits, fallbacks and collapses left as leaves (``n_oblique_splits_``,
  ``n_axis_fallbacks_``, ``n_collapsed_splits_``).
- Leaves of the grown tree hold empirical class frequencies (pure when grown to purity), not the
  stumps' theta, which only serve the optimisation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

import scipy.sparse as sp
from sklearn.base import _fit_context
from sklearn.utils import check_random_state

from ..base import encode_classes, note_kernel_compile, validate_training_data
from ..trees import Tree
from ._co2_grow import (FALLBACK_CODES, STANDARDIZE_CODES, UNLIMITED_DEPTH, feature_order, feature_order_rows,  # noqa: F401
                        grow_co2_tree, node_csr)  # feature_order_rows, grow_co2_tree: for treeopt.forest.co2
from ._co2_sgd import co2_stump_sgd
from ._estimator import (GROW_ORDER_CONSTRAINT, GROWTH_CONSTRAINTS, MAX_FEATURES_CONSTRAINT, GreedyTreeClassifier,
                         n_candidate_features)

# Add-one smoothing of the leaf log-frequencies that initialise theta (Alg. 1 line 2). The exact
# empirical log-probabilities (the minimiser of eq. (2) for a fixed split) are -inf for classes absent
# from a side, which would give those points an infinite loss and margin in eq. (5). On Letter
# (validation split) add-one beat 0.01, 0.1, 3 and 10.
LEAF_SMOOTHING = 1.0
# Epochs with a rising surrogate tolerated before the learning rate is halved (Sec. 4.2's "when it
# oscillates for more than a number of iterations we reduce the learning rate").
OSCILLATION_PATIENCE = 2


# --------------------------------------------------------------------------- losses (eq. (2)-(5))
def _log_losses(y, theta):
    """Per-sample log loss eq. (3) under each leaf: array (n, 2) = [l(theta_0, y), l(theta_1, y)]."""
    theta = np.asarray(theta, dtype=np.float64)
    m = theta.max(axis=1, keepdims=True)
    lse = (m + np.log(np.exp(theta - m).sum(axis=1, keepdims=True))).ravel()
    return np.column_stack([lse[0] - theta[0, y], lse[1] - theta[1, y]])


def stump_loss(X, y, weights, bias, theta):
    """Per-sample stump loss eq. (2): the log loss (eq. (3)) of the leaf the point reaches (right iff z >= 0)."""
    z = np.asarray(X, dtype=np.float64) @ np.asarray(weights, dtype=np.float64) - bias
    losses = _log_losses(np.asarray(y), theta)
    return np.where(z >= 0, losses[:, 1], losses[:, 0])


def stump_surrogate(X, y, weights, bias, theta):
    """Per-sample upper bound eq. (5) (its sum is eq. (10)): ``max(-z + l0, z + l1) - |z|``, z = w.x - b."""
    z = np.asarray(X, dtype=np.float64) @ np.asarray(weights, dtype=np.float64) - bias
    losses = _log_losses(np.asarray(y), theta)
    return np.maximum(-z + losses[:, 0], z + losses[:, 1]) - np.abs(z)


def leaf_log_frequencies(y, go_right, n_classes, smoothing=LEAF_SMOOTHING):
    """Smoothed class log-frequencies of each side, shape (2, n_classes), row 0 = left (Alg. 1 line 2).

    With ``smoothing=0`` these are the empirical log-probabilities, the minimiser of eq. (2) for the
    given split (Sec. 4).
    """
    theta = np.empty((2, n_classes))
    for side in (0, 1):
        counts = np.bincount(y[go_right == bool(side)], minlength=n_classes).astype(np.float64)
        with np.errstate(divide="ignore"):
            theta[side] = np.log((counts + smoothing) / (counts.sum() + smoothing * n_classes))
    return theta


# --------------------------------------------------------------------------- one stump (Alg. 1)
@dataclass(frozen=True)
class CO2Stump:
    """Result of :func:`optimize_co2_stump`.

    ``weights``/``bias`` define the split (right iff ``weights . x - bias >= 0``); ``theta`` (2, k) are
    the optimised leaf log-probabilities (row 0 left); ``surrogate`` holds the mean of eq. (10) over all
    points at one parameter state: at the start (entry 0) and after every epoch; ``max_norm2`` is the largest ``||[w, b]||^2`` after any step (at most ``nu``);
    ``learning_rate`` is the final, possibly reduced, rate.
    """

    weights: np.ndarray
    bias: float
    theta: np.ndarray
    surrogate: np.ndarray
    max_norm2: float
    learning_rate: float

    @property
    def n_epochs(self):
        return self.surrogate.shape[0] - 1


def optimize_co2_stump(X, y, weights, bias, theta, *, nu=10.0, learning_rate=0.01, momentum=0.9,
                       batch_size=100, max_epochs=200, tau=1, tol=1e-3, n_iter_no_change=20,
                       tol_reference="best", patience=OSCILLATION_PATIENCE, seed=0):
    """Optimise one CO2 stump from ``(weights, bias, theta)``: Alg. 1 with the Sec. 4.2 modifications.

    Parameters
    ----------
    X : ndarray (n, p) float64
    y : ndarray (n,) int in ``0..k-1`` with ``k = theta.shape[1]``
    weights, bias : the initial split; projected onto ``||[w, b]||^2 <= nu`` first when outside.
    theta : ndarray (2, k), initial leaf log-probabilities (e.g. :func:`leaf_log_frequencies`).
    nu : float, the norm bound of eq. (9) (the bias is the homogeneous coordinate, so it counts).
    learning_rate : float, initial step ``eta``; halved after ``patience`` consecutive epochs whose
        surrogate rose (a fall resets the count; :func:`treeopt.greedy._co2_sgd.next_learning_rate`).
    momentum, batch_size : the paper's 0.9 and 100 (gradients averaged over the mini-batch).
    max_epochs, tol, n_iter_no_change : stop after ``max_epochs`` epochs, or once the best epoch
        surrogate has not fallen by a relative ``tol`` for ``n_iter_no_change`` epochs.
    tol_reference : "best" or "initial", what ``tol`` is relative to (the best or the first surrogate).
    tau : int, epochs between CCCP refreshes of ``w_old`` in eq. (11).
    seed : int, seeds the kernel's own shuffling stream (independent of threads).
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    w = np.array(weights, dtype=np.float64)  # copies: the kernel works in place
    th = np.array(theta, dtype=np.float64)
    if X.ndim != 2 or w.shape != (X.shape[1],) or y.shape != (X.shape[0],):
        raise ValueError(f"inconsistent shapes: X {X.shape}, y {y.shape}, weights {w.shape}")
    if th.ndim != 2 or th.shape[0] != 2 or (y.size and (y.min() < 0 or y.max() >= th.shape[1])):
        raise ValueError(f"theta must have shape (2, k) with every label in 0..k-1, got {th.shape}")
    b = float(bias)
    norm2 = float(w @ w + b * b)
    if norm2 > nu:
        scale = math.sqrt(nu / norm2)
        w *= scale
        b *= scale
    history = np.empty(int(max_epochs) + 1)
    b, n_epochs, max_norm2, eta = co2_stump_sgd(
        (X, y, np.arange(X.shape[0]), np.ones(X.shape[0])), (w, b, th),
        (float(nu), float(learning_rate), float(momentum), int(batch_size), int(tau), int(patience)),
        (int(max_epochs), float(tol), int(n_iter_no_change), tol_reference == "initial"), np.uint64(seed), history)
    return CO2Stump(w, float(b), th, history[:n_epochs + 1].copy(), float(max_norm2), float(eta))


# --------------------------------------------------------------------------- estimator
class CO2TreeClassifier(GreedyTreeClassifier):
    """Decision tree whose splits are CO2 oblique stumps (Norouzi et al., Sec. 4-5).

    Grown top-down to purity (or ``max_depth``). At each node the stump is initialised from the best
    information-gain axis split over ``max_features`` random features and optimised on the upper
    bound eq. (10) subject to ``||[w, b]||^2 <= nu`` (eq. (9)) by the convex-concave procedure (Alg. 1)
    with mini-batch momentum SGD. ``nu`` bounds ``w`` and the bias in the units of ``X``, so inputs should
    be scaled as in the paper (zero mean and unit variance worked clearly better than [0, 1] on Letter),
    or ``standardize="tree"`` does that scaling inside.

    Parameters
    ----------
    nu : float, default=10
        Norm bound of eq. (9); the paper's grid is {0.1, 1, 4, 10, 43, 100}.
    learning_rate : float, default=0.01
        Initial SGD rate eta; the paper's grid is {0.03, 0.01, 0.003}.
    max_features : int, float, "sqrt", "log2" or None, default="sqrt"
        q, the number of random features whose best axis split initialises each stump.
    max_depth : int or None, default=None
    min_samples_split, min_samples_leaf : int
    max_epochs : int, default=200
        Epochs per stump at most. An epoch is one pass over the node's points in mini-batches, so a
        node with fewer than ``batch_size`` points takes one full-batch step per epoch: small nodes
        cost O(n p) per epoch and the deep part of the tree is cheap.
    tau : int, default=1
        Epochs between CCCP refreshes of ``w_old`` (eq. (11)).
    tol, n_iter_no_change : float, int, default=1e-3, 20
        Stop a stump once the best per-epoch surrogate has not fallen by a relative ``tol`` for
        ``n_iter_no_change`` epochs (the paper's "until the surrogate has converged").
    tol_reference : {"best", "initial"}, default="best"
        What ``tol`` is relative to: the best surrogate so far, or the node's initial surrogate (one scale
        per node; nearly pure nodes, whose surrogate tends to 0, then stop as soon as their steps are small
        against where they started).
    batch_size : int, default=100
    momentum : float, default=0.9
    axis_fallback : {"collapsed", "never", "no_gain"}, default="collapsed"
        What a node does when its optimised split is unusable. "collapsed": only a stump that sends fewer
        than ``min_samples_leaf`` points one way (it splits nothing) is replaced by its initial axis split,
        so that trees grow to pure leaves as the paper's do (Sec. 6). "never": such a node becomes a
        (possibly impure) leaf. "no_gain": safeguard not in the paper; optimised splits without positive
        information gain are replaced as well.
    compare_with_axis : bool, default=False
        With ``axis_fallback="no_gain"``, also fall back when the optimised split's information gain is below the
        axis split's. The paper keeps the optimised split (it optimises the regularised bound, not the
        gain).
    standardize : {"none", "tree", "node"}, default="none"
        Coordinates each stump is optimised in (its split is mapped back to the inputs):

        - "none": the inputs as given (scale them as the paper does).
        - "tree": features standardised with the mean and standard deviation of the tree's training
          sample, the paper's zero-mean unit-variance preprocessing done inside the estimator, so results
          do not depend on how the inputs were scaled.
        - "node": standardised with the statistics of each node's points. Not in the paper, which uses
          one ``nu`` for every node and notes that node-specific regularisation could help (Sec. 5).
          Deep nodes hold points spread over a small range; there a fixed ``nu`` makes the bound loose
          and the stump often collapses onto one side. Per-node standardisation rescales the bound.
          Invariant to any per-feature affine scaling of the inputs; smaller ``nu`` suits it
          (0.03-0.3 were best on validation data).
    random_state : int, RandomState or None
    grow_order : {"depth_first", "level"}, default="depth_first"
        The order nodes are split in (each node's split is computed the same way): "level" splits every node of
        depth d before any of depth d + 1, so the tree grown with ``max_depth = d`` is the first d levels of the
        tree grown deeper with the same seed, node for node (:func:`treeopt.greedy._grow.level_order_prefix`; a
        depth sweep of segmentation forests reads every depth off one fit). The two orders draw the random
        numbers of the nodes in a different order, so their trees differ (as two seeds do).
    axis_sort : {"presorted", "per_node"}, default="presorted"
        How a node's axis search (the stump's start) orders its points along each candidate feature:
        "presorted" sorts every feature once (a forest shares it) and keeps every node's points sorted as it
        splits; "per_node" sorts only the node's q candidate features, at the node. The same cuts, thresholds and
        gains up to the order in which tied points are summed (the presort's order against the order of first
        appearance), i.e. up to rounding, so the trees can differ where two cuts tie; "per_node" is cheaper when q
        is a small part of p (a 31 x 31 RGB window's 2,883 values, q = 53: :class:`treeopt.segmentation.ForestSegmenter`)
        and needs no p x n index arrays.

    Attributes
    ----------
    tree_ : treeopt.trees.Tree
        Oblique nodes have ``feature = -1``; leaves hold the class frequencies of their training points
        (``value_kind="probabilities"``; one-hot when grown to purity). The stumps' optimised theta are
        not kept: with greedy growth the children are split again and the final leaves are
        empirical, as in the paper's forests.
    classes_, n_features_in_
    n_oblique_splits_, n_axis_fallbacks_, n_collapsed_splits_ : int
        Internal nodes with an optimised oblique split; nodes that fell back to the initial axis split
        (``axis_fallback``); nodes left as leaves because their stump collapsed onto one side.
    """

    _parameter_constraints = {
        "nu": [Interval(Real, 0, None, closed="neither")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "max_features": MAX_FEATURES_CONSTRAINT,
        "max_epochs": [Interval(Integral, 1, None, closed="left")],
        "tau": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "tol_reference": [StrOptions({"best", "initial"})],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "momentum": [Interval(Real, 0, 1, closed="left")],
        "axis_fallback": [StrOptions({"collapsed", "never", "no_gain"})],
        "compare_with_axis": ["boolean"],
        "standardize": [StrOptions({"none", "tree", "node"})],
        "grow_order": GROW_ORDER_CONSTRAINT,
        "axis_sort": [StrOptions({"presorted", "per_node"})],
        **GROWTH_CONSTRAINTS,
    }

    def __init__(self, nu=10.0, learning_rate=0.01, max_features="sqrt", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, max_epochs=200, tau=1, tol=1e-3, n_iter_no_change=20, tol_reference="best",
                 batch_size=100, momentum=0.9, axis_fallback="collapsed", compare_with_axis=False, standardize="none",
                 random_state=None, grow_order="depth_first", axis_sort="presorted"):
        self.nu = nu
        self.learning_rate = learning_rate
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_epochs = max_epochs
        self.tau = tau
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.tol_reference = tol_reference
        self.batch_size = batch_size
        self.momentum = momentum
        self.axis_fallback = axis_fallback
        self.compare_with_axis = compare_with_axis
        self.standardize = standardize
        self.random_state = random_state
        self.grow_order = grow_order
        self.axis_sort = axis_sort

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X, y = validate_training_data(self, X, y)
        self.classes_, y_enc = encode_classes(y)
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        return self._fit_encoded(X, y_enc, self.classes_.shape[0], np.arange(X.shape[0]), seed)

    def _fit_encoded(self, X, y_enc, n_classes, idx, seed, order=None):
        """Grow on the points ``X[idx]`` (checked float64 X, labels ``0..n_classes-1``) in one numba call
        that releases the GIL (:func:`treeopt.greedy._co2_grow.grow_co2_tree`); sets ``tree_`` and the
        split counts, not ``classes_``/``n_features_in_``. ``order`` is ``feature_order(X)`` (a forest
        computes it once for all its trees; not read with ``axis_sort="per_node"``)."""
        p = X.shape[1]
        node_sort = self.axis_sort == "per_node"
        kernels = (grow_co2_tree,) if order is not None or node_sort else (feature_order, grow_co2_tree)
        note_kernel_compile(type(self).__name__, *kernels)
        if node_sort:
            order = np.empty((0, 0), dtype=np.uint32)
        elif order is None:
            order = feature_order(X)
        points = (X, y_enc, np.ascontiguousarray(idx, dtype=np.int64), int(n_classes))
        settings = (int(n_candidate_features(self.max_features, p)), float(self.nu), float(self.learning_rate),
                    float(self.momentum), int(self.batch_size), int(self.tau), int(OSCILLATION_PATIENCE))
        stop_rule = (int(self.max_epochs), float(self.tol), int(self.n_iter_no_change), self.tol_reference == "initial")
        growth = (int(max(self.min_samples_split, 2 * self.min_samples_leaf)), int(self.min_samples_leaf),
                  UNLIMITED_DEPTH if self.max_depth is None else int(self.max_depth),
                  STANDARDIZE_CODES[self.standardize], FALLBACK_CODES[self.axis_fallback], bool(self.compare_with_axis),
                  self.grow_order == "level", node_sort)
        out = grow_co2_tree(points, settings, stop_rule, growth, np.uint64(seed), order)
        left, right, feature, bias, depth, n_samples, value, wrow, W, counts, epochs = out
        indptr, indices, data = node_csr(feature, wrow, W)
        weights = sp.csr_matrix((data, indices, indptr), shape=(left.shape[0], p))
        self.tree_ = Tree(left, right, weights, bias, value, feature=feature, depth=depth, n_samples=n_samples,
                          value_kind="probabilities")
        self.n_oblique_splits_, self.n_axis_fallbacks_, self.n_collapsed_splits_ = (int(c) for c in counts)
        self.node_epochs_ = epochs
        return self
