"""CO2 (Continuously Optimised Oblique) stumps and trees (Norouzi et al., "CO2 Forest", Sec. 4-5).

A CO2 stump is an oblique split ``w . x - b >= 0 -> right`` with two softmax leaves ``theta_0``
(left) and ``theta_1`` (right). Its empirical log loss eq. (2) is discontinuous in ``w``; the paper
minimises the continuous upper bound eq. (5)/(10) under the norm constraint eq. (9),
``||[w, b]||^2 <= nu``, by the convex-concave procedure with projected stochastic subgradient steps on
eq. (11) (Alg. 1). The kernel lives in :mod:`treeopt.greedy._co2_sgd`; this module holds the
loss functions, the per-node split finder and the estimator.

A CO2 tree applies the stump optimiser at every node of a greedy top-down tree (Sec. 3, 5), each
stump initialised from the best information-gain axis split over ``q`` random features.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..base import encode_classes, validate_features, validate_training_data
from ._co2_sgd import co2_stump_sgd
from ._criteria import best_axis_split, best_threshold, information_gain
from ._grow import NodeSplit, grow_tree, route_right

# Add-alpha smoothing of the leaf log-frequencies that initialise theta: the exact empirical
# log-probabilities (the minimiser of eq. (2) for fixed w) are -inf for classes absent from a side,
# which would give those points an infinite loss and margin in eq. (5).
LEAF_SMOOTHING = 1.0


# --------------------------------------------------------------------------- losses (eq. (2)-(5))
def _log_losses(y, theta):
    """Per-sample log loss eq. (3) under each leaf: array (n, 2) = [l(theta_0, y), l(theta_1, y)]."""
    theta = np.asarray(theta, dtype=np.float64)
    m = theta.max(axis=1, keepdims=True)
    lse = (m + np.log(np.exp(theta - m).sum(axis=1, keepdims=True))).ravel()
    return np.column_stack([lse[0] - theta[0, y], lse[1] - theta[1, y]])


def stump_loss(X, y, weights, bias, theta):
    """Per-sample stump loss eq. (2): the log loss of the leaf the point reaches (right iff z >= 0)."""
    z = np.asarray(X, dtype=np.float64) @ np.asarray(weights, dtype=np.float64) - bias
    losses = _log_losses(np.asarray(y), theta)
    return np.where(z >= 0, losses[:, 1], losses[:, 0])


def stump_surrogate(X, y, weights, bias, theta):
    """Per-sample upper bound eq. (5) (summed, eq. (10)): ``max(-z + l0, z + l1) - |z|``."""
    z = np.asarray(X, dtype=np.float64) @ np.asarray(weights, dtype=np.float64) - bias
    losses = _log_losses(np.asarray(y), theta)
    return np.maximum(-z + losses[:, 0], z + losses[:, 1]) - np.abs(z)


def leaf_log_frequencies(y, go_right, n_classes, smoothing=LEAF_SMOOTHING):
    """Smoothed empirical class log-probabilities of each side, shape (2, n_classes) (Alg. 1 line 2)."""
    theta = np.empty((2, n_classes))
    for side in (0, 1):
        counts = np.bincount(y[go_right == bool(side)], minlength=n_classes).astype(np.float64)
        theta[side] = np.log((counts + smoothing) / (counts.sum() + smoothing * n_classes))
    return theta


# --------------------------------------------------------------------------- one stump (Alg. 1)
@dataclass(frozen=True)
class CO2Stump:
    """Result of :func:`optimize_co2_stump`.

    ``weights``/``bias`` define the split (right iff ``weights . x - bias >= 0``); ``theta`` (2, k) are
    the optimised leaf log-probabilities (row 0 left); ``surrogate`` is the per-epoch mean of eq. (10);
    ``max_norm2`` is the largest ``||[w, b]||^2`` after any update (never above ``nu``); ``learning_rate``
    is the final, possibly reduced, rate.
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
                       batch_size=100, max_epochs=50, tau=1, tol=1e-3, n_iter_no_change=5, patience=2,
                       seed=0):
    """Optimise one CO2 stump from ``(weights, bias, theta)`` (Alg. 1 with the Sec. 4.2 modifications).

    Parameters
    ----------
    X : ndarray (n, p) float64
    y : ndarray (n,) int in ``0..k-1`` with ``k = theta.shape[1]``
    weights, bias : the initial split, projected onto ``||[w, b]||^2 <= nu`` first if needed.
    theta : ndarray (2, k), initial leaf log-probabilities (e.g. :func:`leaf_log_frequencies`).
    nu : float, the norm bound of eq. (9).
    learning_rate : float, initial SGD step ``eta``; halved after ``patience`` epochs in which the
        tracked surrogate rose (the paper's "reduce the rate when the surrogate oscillates").
    momentum, batch_size : the paper's 0.9 and 100.
    max_epochs, tol, n_iter_no_change : stop after ``max_epochs`` epochs, or once the best epoch
        surrogate has not fallen by a relative ``tol`` for ``n_iter_no_change`` epochs.
    tau : int, epochs between CCCP refreshes of ``w_old`` in eq. (11).
    seed : int, seeds the kernel's own shuffling stream.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    w = np.array(weights, dtype=np.float64)  # copied: the kernel works in place
    th = np.array(theta, dtype=np.float64)
    if X.ndim != 2 or w.shape != (X.shape[1],) or y.shape != (X.shape[0],):
        raise ValueError(f"inconsistent shapes: X {X.shape}, y {y.shape}, weights {w.shape}")
    if th.ndim != 2 or th.shape[0] != 2 or (y.size and (y.min() < 0 or y.max() >= th.shape[1])):
        raise ValueError("theta must have shape (2, k) with every label in 0..k-1")
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
def _n_candidate_features(max_features, p):
    """q, the number of random features searched for the initial axis split (sklearn's rules)."""
    if max_features is None:
        return p
    if isinstance(max_features, str):
        q = math.sqrt(p) if max_features == "sqrt" else math.log2(p)
        return max(1, int(q))
    if isinstance(max_features, Integral):
        return min(int(max_features), p)
    return max(1, int(max_features * p))


class CO2SplitFinder:
    """``find_split`` callback for :func:`treeopt.greedy._grow.grow_tree` that fits one CO2 stump.

    1. Initial split: the best information-gain axis split over ``q`` random features (Sec. 5), like
       a random-forest node; other features are tried only when all ``q`` are constant at the node.
    2. Scale ``[e_f, threshold]`` onto the sphere ``||[w, b]||^2 = nu`` (the same split, tightest
       feasible bound, eq. (8)); theta = smoothed leaf log-frequencies.
    3. Run the stump optimiser (labels compressed to the classes present at the node).
    4. Keep the optimised oblique split if it has positive information gain, leaves at least
       ``min_samples_leaf`` points per side and, when ``keep_better_gain``, its gain is not below
       the initial axis split's; otherwise keep the axis split.
    """

    def __init__(self, n_classes, *, n_features_split, nu, learning_rate, momentum, batch_size, max_epochs,
                 tau, tol, n_iter_no_change, min_samples_leaf, keep_better_gain):
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
        self.keep_better_gain = keep_better_gain
        self.n_oblique = 0
        self.n_axis = 0

    # experimental knobs (class attributes, patched in experiments)
    init_scale = "sphere"
    min_steps = 0
    degenerate = "axis"
    smoothing = LEAF_SMOOTHING
    node_standardize = False

    def _initial_axis_split(self, X, y, rng):
        p = X.shape[1]
        order = rng.permutation(p)
        q = self.n_features_split
        feature, threshold, gain = best_axis_split(X, y, self.n_classes, order[:q], self.min_samples_leaf)
        if feature < 0 and q < p:  # every sampled feature is constant here: look at the others
            feature, threshold, gain = best_axis_split(X, y, self.n_classes, order[q:], self.min_samples_leaf)
        return int(feature), float(threshold), float(gain)

    def __call__(self, X, y, rng, depth):
        feature, threshold, axis_gain = self._initial_axis_split(X, y, rng)
        if feature < 0:
            return None
        axis = NodeSplit.axis(feature, threshold)
        seed = int(rng.integers(0, 2**63))

        # Compress labels to the classes present at this node: the stump's softmax leaves range over them.
        present = np.bincount(y, minlength=self.n_classes) > 0
        y_local = (np.cumsum(present) - 1)[y]
        k_local = int(present.sum())

        X_orig = X
        if self.node_standardize:
            mu = X.mean(axis=0)
            sd = X.std(axis=0)
            sd[sd <= 0] = 1.0
            X = (X - mu) / sd
            threshold = (threshold - mu[feature]) / sd[feature]
        w0 = np.zeros(X.shape[1])
        w0[feature] = 1.0
        scale = math.sqrt(self.nu / (1.0 + threshold * threshold))
        if self.init_scale == "unit":
            scale = min(1.0, scale)
        n_batches = -(-y.shape[0] // self.batch_size)
        factor = max(1, -(-self.min_steps // (self.max_epochs * n_batches)))
        theta0 = leaf_log_frequencies(y_local, route_right(X, axis), k_local, self.smoothing)
        stump = optimize_co2_stump(X, y_local, w0 * scale, threshold * scale, theta0, nu=self.nu,
                                   learning_rate=self.learning_rate, momentum=self.momentum,
                                   batch_size=self.batch_size, max_epochs=self.max_epochs * factor, tau=self.tau,
                                   tol=self.tol, n_iter_no_change=self.n_iter_no_change * factor, seed=seed)
        if self.node_standardize:
            wo = stump.weights / sd
            bo = stump.bias + stump.weights @ (mu / sd)
            X = X_orig
        else:
            wo, bo = stump.weights, stump.bias
        oblique = NodeSplit.oblique(wo, bo)
        go_right = route_right(X, oblique)
        n_right = int(go_right.sum())
        if min(n_right, y.shape[0] - n_right) >= self.min_samples_leaf:
            gain = information_gain(y, go_right, self.n_classes)
            if gain > 0.0 and (not self.keep_better_gain or gain >= axis_gain):
                self.n_oblique += 1
                return oblique
        if self.degenerate == "rethreshold":
            z = X @ wo
            thr, g2 = best_threshold(z, y, self.n_classes, self.min_samples_leaf)
            if g2 > 0:
                self.n_oblique += 1
                return NodeSplit.oblique(wo, thr)
        self.n_axis += 1
        return axis


# --------------------------------------------------------------------------- estimator
class CO2TreeClassifier(ClassifierMixin, BaseEstimator):
    """Decision tree whose every split is a CO2 oblique stump (Norouzi et al., Sec. 4-5).

    Grown top-down to purity (or ``max_depth``). At each node the stump is initialised from the best
    information-gain axis split over ``max_features`` random features and then optimised on the
    upper bound eq. (10) subject to ``||[w, b]||^2 <= nu`` (eq. (9)) by the convex-concave procedure
    (Alg. 1) with mini-batch momentum SGD. The inputs should be scaled (e.g. to [0, 1] or to zero
    mean and unit variance, as in the paper): ``nu`` bounds ``w`` and the bias in the same units.

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
    max_epochs : int, default=50
        Epochs per stump at most (an epoch is one pass over the node's points; nodes smaller than
        ``batch_size`` take one full-batch step per epoch, so small nodes cost little).
    tau : int, default=1
        Epochs between CCCP refreshes of ``w_old`` (eq. (11)).
    tol, n_iter_no_change : stopping rule on the per-epoch surrogate (see ``optimize_co2_stump``).
    batch_size : int, default=100
    momentum : float, default=0.9
    keep_better_gain : bool, default=True
        Keep the optimised oblique split only when its information gain is at least that of the axis
        split it started from (otherwise that axis split is used). The paper minimises a bound on the
        log loss whose exact minimiser maximises information gain (Sec. 4), so this guards against SGD
        ending worse than its start on the quantity it stands in for.
    random_state : int, RandomState or None

    Attributes
    ----------
    tree_ : treeopt.trees.Tree
        Leaves hold the class frequencies of the training points reaching them
        (``value_kind="probabilities"``); with growth to purity these are one-hot.
    classes_, n_features_in_
    n_oblique_splits_, n_axis_splits_ : int
        How many internal nodes kept the optimised oblique split vs. fell back to the axis split.
    """

    _parameter_constraints = {
        "nu": [Interval(Real, 0, None, closed="neither")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "max_features": [Interval(Integral, 1, None, closed="left"), Interval(Real, 0, 1, closed="right"),
                         StrOptions({"sqrt", "log2"}), None],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "min_samples_split": [Interval(Integral, 2, None, closed="left")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "max_epochs": [Interval(Integral, 1, None, closed="left")],
        "tau": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "momentum": [Interval(Real, 0, 1, closed="left")],
        "keep_better_gain": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, nu=10.0, learning_rate=0.01, max_features="sqrt", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, max_epochs=50, tau=1, tol=1e-3, n_iter_no_change=5, batch_size=100,
                 momentum=0.9, keep_better_gain=True, random_state=None):
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
        self.keep_better_gain = keep_better_gain
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X, y = validate_training_data(self, X, y)
        self.classes_, y_enc = encode_classes(y)
        k = self.classes_.shape[0]
        finder = CO2SplitFinder(
            k, n_features_split=_n_candidate_features(self.max_features, X.shape[1]), nu=self.nu,
            learning_rate=self.learning_rate, momentum=self.momentum, batch_size=self.batch_size,
            max_epochs=self.max_epochs, tau=self.tau, tol=self.tol, n_iter_no_change=self.n_iter_no_change,
            min_samples_leaf=self.min_samples_leaf, keep_better_gain=self.keep_better_gain)
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        self.tree_ = grow_tree(X, y_enc, k, finder, max_depth=self.max_depth,
                               min_samples_split=self.min_samples_split, min_samples_leaf=self.min_samples_leaf,
                               rng=np.random.default_rng(seed))
        self.n_oblique_splits_ = finder.n_oblique
        self.n_axis_splits_ = finder.n_axis
        return self

    def predict_proba(self, X):
        check_is_fitted(self)
        return self.tree_.predict_proba(validate_features(self, X, reset=False))

    def predict(self, X):
        return self.classes_[self.predict_proba(X).argmax(axis=1)]

    def apply(self, X):
        check_is_fitted(self)
        return self.tree_.apply(validate_features(self, X, reset=False))
