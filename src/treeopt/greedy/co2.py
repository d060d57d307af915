"""CO2 (Continuously Optimised Oblique) stumps and trees (Norouzi et al., "CO2 Forest", Sec. 3-5).

A CO2 stump is an oblique split ``w . x - b >= 0 -> right`` with two softmax leaves ``theta_0``
(left) and ``theta_1`` (right). Its empirical log loss eq. (2) is discontinuous in ``w``; the paper
minimises the continuous upper bound eq. (5)/(10) under the norm constraint eq. (9),
``||[w, b]||^2 <= nu``, by the convex-concave procedure with projected stochastic subgradient steps on
eq. (11) (Alg. 1). The numba kernel is :func:`treeopt.greedy._co2_sgd.co2_stump_sgd`; this module holds
the losses, the one-stump optimiser, the per-node split finder and the tree estimator.

Choices the paper leaves open, fixed here (each measured on Letter's validation split):

- Initial split: the best information-gain axis split over q random features (Sec. 5), scaled onto
  the sphere ``||[w, b]||^2 = nu`` (same partition, tightest feasible bound by eq. (8)); theta = the
  add-one-smoothed class log-frequencies of its two sides (exact log-frequencies are -inf for absent
  classes).
- Learning-rate rule ("reduce it when the surrogate oscillates"): the surrogate eq. (10) is tracked per
  epoch; after ``OSCILLATION_PATIENCE`` epochs in which it rose, eta is halved.
- Convergence ("while the surrogate has not converged"): at most ``max_epochs`` (200) epochs; stop early
  when the best epoch surrogate has not fallen by a relative ``tol`` for ``n_iter_no_change`` (20) epochs.
  Small nodes take one full-batch step per epoch, so a short patience (5 epochs) left deep stumps barely
  moved from their axis start. Validation error of 30-tree forests with 200/20 instead of 50/5 (split
  seed 0): Letter 4.16 -> 3.72% (nu=4, eta=0.03, 2 seeds), Connect-4 17.13 -> 16.38% (nu=0.1,
  eta=0.03, q=78, 1 seed); SatImage's best grid point 8.49 -> 8.42% (3 seeds); fits take 1.4-2x longer.
- Small nodes: an epoch over fewer than ``batch_size`` points is one full-batch step, so their cost is
  tiny and no separate schedule is needed.
- Acceptance: the optimised split is kept when both sides are non-empty (``min_samples_leaf``) and
  its information gain is positive; otherwise (the stump collapsed onto one side, which happens at
  deep nodes where a fixed ``nu`` makes the bound loose) the initial axis split is used so that growth
  to purity continues. Requiring the gain to beat the axis split (``compare_with_axis``) is optional;
  it made forests worse on validation data.
- Leaves of the grown tree hold empirical class frequencies (pure when grown to purity), not the
  stumps' theta, which only serve the optimisation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ._co2_sgd import co2_stump_sgd
from ._criteria import best_sampled_axis_split, information_gain
from ._estimator import GROWTH_CONSTRAINTS, MAX_FEATURES_CONSTRAINT, GreedyTreeClassifier, n_candidate_features
from ._grow import NodeSplit, route_right

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
    the optimised leaf log-probabilities (row 0 left); ``surrogate`` holds the per-epoch mean of
    eq. (10); ``max_norm2`` is the largest ``||[w, b]||^2`` after any step (at most ``nu``);
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
        return self.surrogate.shape[0]


def optimize_co2_stump(X, y, weights, bias, theta, *, nu=10.0, learning_rate=0.01, momentum=0.9,
                       batch_size=100, max_epochs=200, tau=1, tol=1e-3, n_iter_no_change=20,
                       patience=OSCILLATION_PATIENCE, seed=0):
    """Optimise one CO2 stump from ``(weights, bias, theta)``: Alg. 1 with the Sec. 4.2 modifications.

    Parameters
    ----------
    X : ndarray (n, p) float64
    y : ndarray (n,) int in ``0..k-1`` with ``k = theta.shape[1]``
    weights, bias : the initial split; projected onto ``||[w, b]||^2 <= nu`` first when outside.
    theta : ndarray (2, k), initial leaf log-probabilities (e.g. :func:`leaf_log_frequencies`).
    nu : float, the norm bound of eq. (9) (the bias is the homogeneous coordinate, so it counts).
    learning_rate : float, initial step ``eta``; halved after ``patience`` epochs whose tracked
        surrogate rose above the previous epoch's.
    momentum, batch_size : the paper's 0.9 and 100 (gradients averaged over the mini-batch).
    max_epochs, tol, n_iter_no_change : stop after ``max_epochs`` epochs, or once the best epoch
        surrogate has not fallen by a relative ``tol`` for ``n_iter_no_change`` epochs.
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
    history = np.empty(int(max_epochs))
    b, n_epochs, max_norm2, eta = co2_stump_sgd(X, y, w, b, th, float(nu), float(learning_rate),
                                                float(momentum), int(batch_size), int(max_epochs), int(tau),
                                                float(tol), int(n_iter_no_change), int(patience),
                                                np.uint64(seed), history)
    return CO2Stump(w, float(b), th, history[:n_epochs].copy(), float(max_norm2), float(eta))


# --------------------------------------------------------------------------- node split finder
class CO2SplitFinder:
    """``find_split`` callback for :func:`treeopt.greedy._grow.grow_tree` that fits one CO2 stump per node.

    1. Initial split: the best information-gain axis split over ``n_features_split`` random features
       (Sec. 5: "an optimal axis-aligned split on a subsampling of q possible features").
    2. ``[e_f, threshold]`` is scaled onto the sphere ``||[w, b]||^2 = nu``: the same partition with the
       tightest feasible bound (eq. (8)). theta = smoothed leaf log-frequencies of that partition.
    3. The stump optimiser runs on the classes present at the node (labels compressed to ``0..k'-1``).
    4. The optimised oblique split is kept when it sends at least ``min_samples_leaf`` points each way
       and has positive information gain (and, with ``compare_with_axis``, at least the axis split's
       gain); otherwise the node uses the initial axis split, so growth to purity never stalls.

    ``standardize`` picks the coordinates the stump is optimised in: "none" (the inputs as given),
    "tree" (each feature standardised with the mean and variance of the points at the root, i.e. the
    tree's training sample: the paper's zero-mean unit-variance preprocessing, whatever scaling the
    inputs came with) or "node" (standardised with the statistics of the node's own points). The
    optimised split is mapped back to input coordinates; ``nu`` bounds ``||[w, b]||^2`` in the
    standardised ones.
    """

    def __init__(self, n_classes, *, n_features_split, nu, learning_rate, momentum, batch_size, max_epochs,
                 tau, tol, n_iter_no_change, min_samples_leaf, compare_with_axis=False, standardize="none"):
        self.n_classes = n_classes
        self.n_features_split = n_features_split
        self.nu = nu
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.tau = tau
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.min_samples_leaf = min_samples_leaf
        self.compare_with_axis = compare_with_axis
        self.standardize = standardize
        self.n_oblique = 0
        self.n_axis = 0
        self._tree_frame = None

    def _frame(self, X, depth):
        """``(mean, std)`` of the standardised coordinates for this node, or None for the input ones."""
        if self.standardize == "none":
            return None
        if self.standardize == "tree" and depth > 0:
            return self._tree_frame  # set at the root, which grow_tree always visits first
        mean = X.mean(axis=0)
        std = X.std(axis=0)
        std[std <= 0] = 1.0  # constant columns stay zero and get no weight
        if self.standardize == "tree":
            self._tree_frame = (mean, std)
        return mean, std

    def __call__(self, X, y, rng, depth):
        k, msl = self.n_classes, self.min_samples_leaf
        feature, threshold, axis_gain = best_sampled_axis_split(X, y, k, self.n_features_split, msl, rng)
        if feature < 0:
            return None
        axis = NodeSplit.axis(feature, threshold)
        seed = int(rng.integers(0, 2**63))

        present = np.bincount(y, minlength=k) > 0
        y_local = (np.cumsum(present) - 1)[y]
        theta0 = leaf_log_frequencies(y_local, route_right(X, axis), int(present.sum()))

        Z, t = X, threshold
        frame = self._frame(X, depth)
        if frame is not None:
            mean, std = frame
            Z = (X - mean) / std
            t = (threshold - mean[feature]) / std[feature]
        scale = math.sqrt(self.nu / (1.0 + t * t))
        w0 = np.zeros(X.shape[1])
        w0[feature] = scale
        stump = optimize_co2_stump(Z, y_local, w0, t * scale, theta0, nu=self.nu,
                                   learning_rate=self.learning_rate, momentum=self.momentum,
                                   batch_size=self.batch_size, max_epochs=self.max_epochs, tau=self.tau,
                                   tol=self.tol, n_iter_no_change=self.n_iter_no_change, seed=seed)
        w, b = stump.weights, stump.bias
        if frame is not None:  # w.(x - mean)/std - b = (w/std).x - (b + w.(mean/std))
            w, b = w / std, b + float(w @ (mean / std))
        oblique = NodeSplit.oblique(w, b)
        go_right = route_right(X, oblique)  # the exact routing the tree will use
        n_right = int(np.count_nonzero(go_right))
        if min(n_right, y.shape[0] - n_right) >= msl:
            gain = information_gain(y, go_right, k)
            if gain > 0.0 and (not self.compare_with_axis or gain >= axis_gain):
                self.n_oblique += 1
                return oblique
        self.n_axis += 1
        return axis


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
    batch_size : int, default=100
    momentum : float, default=0.9
    compare_with_axis : bool, default=False
        Keep the optimised split only when its information gain is at least that of the axis split it
        started from. The paper keeps the optimised split (it optimises the regularised bound, not the
        gain); on Letter's validation split the comparison made forests worse, so it is off by default.
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

    Attributes
    ----------
    tree_ : treeopt.trees.Tree
        Oblique nodes have ``feature = -1``; leaves hold the class frequencies of their training points
        (``value_kind="probabilities"``; one-hot when grown to purity). The stumps' optimised theta are
        not kept: with greedy growth the children are split again and the final leaves are
        empirical, as in the paper's forests.
    classes_, n_features_in_
    n_oblique_splits_, n_axis_splits_ : int
        Internal nodes that kept the optimised oblique split vs. fell back to the initial axis split.
    """

    _parameter_constraints = {
        "nu": [Interval(Real, 0, None, closed="neither")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "max_features": MAX_FEATURES_CONSTRAINT,
        "max_epochs": [Interval(Integral, 1, None, closed="left")],
        "tau": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "momentum": [Interval(Real, 0, 1, closed="left")],
        "compare_with_axis": ["boolean"],
        "standardize": [StrOptions({"none", "tree", "node"})],
        **GROWTH_CONSTRAINTS,
    }

    def __init__(self, nu=10.0, learning_rate=0.01, max_features="sqrt", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, max_epochs=200, tau=1, tol=1e-3, n_iter_no_change=20, batch_size=100,
                 momentum=0.9, compare_with_axis=False, standardize="none", random_state=None):
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
        self.batch_size = batch_size
        self.momentum = momentum
        self.compare_with_axis = compare_with_axis
        self.standardize = standardize
        self.random_state = random_state

    def _split_finder(self, n_classes, n_features):
        return CO2SplitFinder(
            n_classes, n_features_split=n_candidate_features(self.max_features, n_features), nu=self.nu,
            learning_rate=self.learning_rate, momentum=self.momentum, batch_size=self.batch_size,
            max_epochs=self.max_epochs, tau=self.tau, tol=self.tol, n_iter_no_change=self.n_iter_no_change,
            min_samples_leaf=self.min_samples_leaf, compare_with_axis=self.compare_with_axis,
            standardize=self.standardize)

    def _record_finder_stats(self, finder):
        self.n_oblique_splits_ = finder.n_oblique
        self.n_axis_splits_ = finder.n_axis
