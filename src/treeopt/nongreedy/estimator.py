"""Non-greedy oblique decision trees (Norouzi, Collins, Johnson, Fleet, Kohli, NeurIPS 2015).

All split functions ``W`` and leaf parameters ``Theta`` of a complete binary tree of depth ``d`` are
optimised jointly on the surrogate objective eq. (9): the sum over the training pairs of the
convex-concave upper bound eq. (7) (exact loss-augmented inference, eq. (10)-(12)) or eq. (13) (the
Hamming ball of radius 1, "fast"), subject to ``||w_i||^2 <= nu`` for every split row (with the bias as the
homogeneous coordinate, Sec. 3). Optimisation is Alg. 1 with momentum and mini-batches (Sec. 6), or Stable
SGD (SSGD): the data-to-leaf assignments ``a(x)`` are frozen and the bound eq. (14) is optimised while it
improves, then the assignments are refreshed. The numba kernels are in :mod:`treeopt.nongreedy._sgd`,
the mapping of an initial tree onto the complete tree in :mod:`treeopt.nongreedy._init`.

Choices the paper leaves open, fixed here:

- Initialisation (Sec. 7): ``init="co2"`` fits a CO2 tree (:class:`treeopt.greedy.CO2TreeClassifier`,
  whose stumps start from the best information-gain axis split, i.e. axis-aligned -> CO2) of depth ``d``;
  ``init="axis"`` an axis-aligned tree by information gain (the regressor: variance reduction). Any fitted
  estimator with ``tree_``, a scikit-learn tree, or a :class:`treeopt.trees.Tree` is used as given; an
  unfitted estimator is cloned and fitted first. Padding/truncation to depth ``d``: see ``_init``.
- Gradients are averaged over the mini-batch; momentum 0.9, batch 100 (as the CO2 implementation).
- Learning rate: halved after ``patience`` (2) epochs in which the tracked bound rose (as CO2's Sec. 4.2
  rule). Stopping: ``max_epochs``, or the best epoch bound has not fallen by a relative ``tol`` for
  ``n_iter_no_change`` epochs.
- SSGD: an assignment round ends when the epoch bound fell by less than a relative ``stable_tol``, or
  after ``stable_max_epochs`` epochs; then ``a(x)`` is recomputed as the leaf ``f(sgn(Wx))``. Refreshing
  can only lower eq. (14) (its second term becomes the unconstrained maximum).
- The regressor standardises the targets inside (the squared loss competes with the margin term ``Wx``
  in the bound, so its scale matters); leaf values are mapped back in ``tree_``.
"""

from __future__ import annotations

import logging
import math
import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context, clone
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..base import TreeClassifierMixin, encode_classes, validate_features, validate_training_data
from ..trees import OBLIQUE, Tree
from . import _init, _sgd

log = logging.getLogger(__name__)

# Epochs with a rising bound tolerated before the learning rate is halved (as CO2, Sec. 4.2).
OSCILLATION_PATIENCE = 2
# A row's momentum is dropped once it has had no gradient for this many mini-batches (0.9^66 < 1e-3).
STALE_BATCHES = 66


class SGDState:
    """Arrays of one (S)SGD run that persist across epochs (velocities, active lists, RNG, counters)."""

    def __init__(self, W, b, Theta, seed, n):
        m, p = W.shape
        self.vW = np.zeros((m, p))
        self.vb = np.zeros(m)
        self.vT = np.zeros_like(Theta)
        self.inW = np.zeros(m, dtype=np.bool_)
        self.actW = np.zeros(m, dtype=np.int64)
        self.nactW = np.zeros(1, dtype=np.int64)
        self.lastW = np.zeros(m, dtype=np.int64)
        self.inT = np.zeros(m + 1, dtype=np.bool_)
        self.actT = np.zeros(m + 1, dtype=np.int64)
        self.nactT = np.zeros(1, dtype=np.int64)
        self.lastT = np.zeros(m + 1, dtype=np.int64)
        self.counters = np.zeros(2, dtype=np.int64)
        self.zc = np.zeros(m)
        self.zstamp = np.zeros(m, dtype=np.int64)
        self.cost = np.zeros(2 * m + 1)
        self.perm = np.arange(n, dtype=np.int64)
        self.rng = np.full(1, seed, dtype=np.uint64)


def run_epoch(state, X, y_int, Y, W, b, Theta, depth, kind, *, fast, stable, assign, nu, eta, momentum,
              batch_size):
    """One epoch of (S)SGD (Alg. 1); returns the summed bound of the epoch (see ``_sgd.sgd_epoch``)."""
    s = state
    return _sgd.sgd_epoch(X, y_int, Y, W, b, Theta, int(depth), int(kind), bool(fast), bool(stable), assign,
                          float(nu), float(eta), float(momentum), int(batch_size), s.perm, s.rng, s.vW, s.vb,
                          s.vT, s.inW, s.actW, s.nactW, s.lastW, s.inT, s.actT, s.nactT, s.lastT, s.counters,
                          STALE_BATCHES, s.zc, s.zstamp, s.cost)


def surrogate_bounds(X, W, b, Theta, *, kind, y_int, Y, inference="fast"):
    """Per-sample upper bound on the loss: eq. (13) (``"fast"``) or eq. (7) (``"exact"``)."""
    depth = int(round(math.log2(W.shape[0] + 1)))
    return _sgd.bounds(np.ascontiguousarray(X, dtype=np.float64), y_int, Y, W, b, Theta, depth, kind,
                       inference == "fast")


def empirical_losses(X, W, b, Theta, *, kind, y_int, Y):
    """Per-sample loss eq. (4) of the tree (W, b, Theta): ``l(Theta^T f(sgn(Wx)), y)``."""
    leaves = _sgd.route_all(np.ascontiguousarray(X, dtype=np.float64), W, b)
    return _sgd.losses_at(leaves, Theta, kind, y_int, Y)


class _NonGreedyTree(BaseEstimator):
    """Shared fitting code; subclasses set the loss (``_kind``) and the targets."""

    _parameter_constraints = {
        "max_depth": [Interval(Integral, 1, 24, closed="both"), None],
        "nu": [Interval(Real, 0, None, closed="neither")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "inference": [StrOptions({"fast", "exact"})],
        "stable": ["boolean"],
        "max_epochs": [Interval(Integral, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "momentum": [Interval(Real, 0, 1, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "stable_tol": [Interval(Real, 0, None, closed="left")],
        "stable_max_epochs": [Interval(Integral, 1, None, closed="left")],
        "init": [StrOptions({"co2", "axis"}), HasMethods("fit"), Tree, HasMethods("apply")],
        "init_params": [dict, None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(self, max_depth=6, nu=10.0, learning_rate=0.01, inference="fast", stable=True, max_epochs=50,
                 batch_size=100, momentum=0.9, tol=1e-4, n_iter_no_change=10, stable_tol=1e-3,
                 stable_max_epochs=10, init="co2", init_params=None, verbose=0, random_state=None):
        self.max_depth = max_depth
        self.nu = nu
        self.learning_rate = learning_rate
        self.inference = inference
        self.stable = stable
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.momentum = momentum
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.stable_tol = stable_tol
        self.stable_max_epochs = stable_max_epochs
        self.init = init
        self.init_params = init_params
        self.verbose = verbose
        self.random_state = random_state

    # ---------------------------------------------------------------- initialisation
    def _default_init(self, seed):  # pragma: no cover - abstract
        raise NotImplementedError

    def _initial_tree(self, X, y_fit, seed):
        init = self.init
        if isinstance(init, Tree):
            return init
        if isinstance(init, str):
            init = self._default_init(init, seed)
            init.set_params(**(self.init_params or {}))
            return self._tree_of(init.fit(X, y_fit))
        tree = getattr(init, "tree_", None)
        if tree is None:  # an unfitted estimator: fit a copy
            init = clone(init)
            if self.init_params:
                init.set_params(**self.init_params)
            if "random_state" in init.get_params():
                init.set_params(random_state=seed)
            return self._tree_of(init.fit(X, y_fit))
        return self._tree_of(init)

    @staticmethod
    def _tree_of(estimator):
        tree = estimator.tree_
        if isinstance(tree, Tree):
            return tree
        if hasattr(tree, "children_left"):
            return Tree.from_sklearn(estimator)
        raise TypeError(f"init: cannot read a tree from {type(estimator).__name__}.tree_")

    # ---------------------------------------------------------------- fitting
    def _fit(self, X, y_int, Y, y_fit, n_out):
        kind = self._kind
        rs = check_random_state(self.random_state)
        init_seed = int(rs.randint(np.iinfo(np.int32).max))
        sgd_seed = int(rs.randint(np.iinfo(np.int32).max))
        if isinstance(self.random_state, Integral):
            # an integer seed starts from the very tree the same-seeded baseline (e.g. CO2TreeClassifier with
            # random_state=seed and the same init_params) fits, so non-greedy vs CO2 compares like with like
            init_seed = int(self.random_state)
        start = time.perf_counter()
        init_tree = self._initial_tree(X, y_fit, init_seed)
        if init_tree.n_features != X.shape[1]:
            raise ValueError(f"init tree has {init_tree.n_features} features, X has {X.shape[1]}")
        depth = int(self.max_depth) if self.max_depth is not None else init_tree.max_depth
        depth = max(depth, 1)
        W, b = _init.heap_from_tree(init_tree, depth, X.shape[1])
        _init.scale_rows(W, b, self.nu)
        Theta = _init.initial_theta(X, W, b, kind, y_int, Y, n_out)
        self.init_seconds_ = time.perf_counter() - start
        log.info("non-greedy init: %s tree of depth %d -> complete depth %d (%d split rows, %d zero/padded), "
                 "%.2f s", type(self.init).__name__ if not isinstance(self.init, str) else self.init,
                 init_tree.max_depth, depth, W.shape[0], int((~W.any(axis=1)).sum()), self.init_seconds_)

        n = X.shape[0]
        fast = self.inference == "fast"
        state = SGDState(W, b, Theta, sgd_seed, n)
        assign = _sgd.route_all(X, W, b)
        eta = float(self.learning_rate)
        history = {k: [] for k in ("epoch", "surrogate", "train_loss", "train_error", "active_leaves",
                                   "learning_rate", "seconds", "reassigned")}
        best, since_best, prev, n_up, round_prev, round_len = np.inf, 0, np.inf, 0, np.inf, 0
        bar = None
        if self.verbose:
            from tqdm.auto import tqdm
            bar = tqdm(total=self.max_epochs, desc=f"non-greedy d={depth}", leave=False)
        sgd_seconds = 0.0
        for epoch in range(self.max_epochs):
            t0 = time.perf_counter()
            total = run_epoch(state, X, y_int, Y, W, b, Theta, depth, kind, fast=fast, stable=self.stable,
                              assign=assign, nu=self.nu, eta=eta, momentum=self.momentum,
                              batch_size=self.batch_size)
            sgd_seconds += time.perf_counter() - t0
            bound = total / n
            leaves = _sgd.route_all(X, W, b)
            losses = _sgd.losses_at(leaves, Theta, kind, y_int, Y)
            err = self._train_error(leaves, Theta, y_int, Y)
            active = int(np.unique(leaves).size)
            reassigned = False
            if self.stable:
                round_len += 1
                if (round_prev - bound < self.stable_tol * abs(round_prev) or
                        round_len >= self.stable_max_epochs):
                    assign = leaves
                    reassigned, round_prev, round_len = True, np.inf, 0
                else:
                    round_prev = bound
            for key, val in zip(history, (epoch + 1, bound, float(losses.mean()), err, active, eta,
                                          time.perf_counter() - t0, reassigned)):
                history[key].append(val)
            log.info("epoch %d: surrogate %.5f | train loss %.5f | train error %.4f | active leaves %d/%d | "
                     "eta %.4g%s", epoch + 1, bound, losses.mean(), err, active, W.shape[0] + 1, eta,
                     " | leaves re-assigned" if reassigned else "")
            if bar is not None:
                bar.update(1)
                bar.set_postfix(bound=f"{bound:.4f}", err=f"{err:.4f}", active=active)
            if bound > prev:
                n_up += 1
                if n_up >= OSCILLATION_PATIENCE:
                    eta *= 0.5
                    n_up = 0
            prev = bound
            if bound < best - self.tol * abs(best) or best == np.inf:
                best, since_best = bound, 0
            else:
                since_best += 1
                if since_best >= self.n_iter_no_change:
                    break
        if bar is not None:
            bar.close()
        self.sgd_seconds_ = sgd_seconds
        self.n_epochs_ = len(history["epoch"])
        self.history_ = history
        leaves = _sgd.route_all(X, W, b)
        counts = _init.node_counts(leaves, W.shape[0])
        self.active_leaves_ = int((counts[W.shape[0]:] > 0).sum())
        self.W_, self.b_, self.theta_ = W, b, Theta
        self.depth_ = depth
        self._counts = counts
        return self

    def _build_tree(self, value, value_kind):
        m = self.W_.shape[0]
        n_nodes = 2 * m + 1
        left = np.full(n_nodes, -1, dtype=np.int64)
        right = np.full(n_nodes, -1, dtype=np.int64)
        left[:m] = 2 * np.arange(m) + 1
        right[:m] = 2 * np.arange(m) + 2
        weights = np.zeros((n_nodes, self.W_.shape[1]))
        weights[:m] = self.W_
        bias = np.zeros(n_nodes)
        bias[:m] = self.b_
        full_value = np.zeros((n_nodes, value.shape[1]))
        full_value[m:] = value
        feature = np.full(n_nodes, OBLIQUE, dtype=np.int64)
        return Tree(left, right, weights, bias, full_value, feature=feature, n_samples=self._counts,
                    value_kind=value_kind)

    def apply(self, X):
        """Leaf node id (in ``tree_``) reached by each row."""
        check_is_fitted(self)
        return self.tree_.apply(validate_features(self, X, reset=False))


class NonGreedyTreeClassifier(TreeClassifierMixin, ClassifierMixin, _NonGreedyTree):
    """Non-greedy oblique decision tree classifier: log loss eq. (2), surrogate eq. (9).

    Parameters
    ----------
    max_depth : int or None, default=6
        Depth ``d`` of the complete binary tree optimised (``2^d - 1`` split rows, ``2^d`` leaves). None: the
        initial tree's depth.
    nu : float, default=10
        Bound on ``||[w_i, b_i]||^2`` for every split row (eq. (9)); the paper's grid {0.1, 1, 4, 10, 43, 100}.
        It is in the units of ``X`` (scale the inputs, e.g. to [0, 1] or z-scores).
    learning_rate : float, default=0.01
        SGD step ``eta`` (Alg. 1), applied to mini-batch averaged gradients; halved when the bound oscillates.
    inference : {"fast", "exact"}, default="fast"
        Loss-augmented inference: "exact" maximises over all codes, eq. (10)-(12), O(2^d p) per sample;
        "fast" over the Hamming ball of radius 1, eq. (13), O(d^2 p).
    stable : bool, default=True
        Stable SGD (assignments fixed while eq. (14) improves) instead of plain SGD (Alg. 1).
    max_epochs, batch_size, momentum, tol, n_iter_no_change : optimisation (see module docstring).
    stable_tol, stable_max_epochs : end of an SSGD assignment round (relative improvement, epochs).
    init : "co2", "axis", a (fitted or unfitted) estimator with ``tree_``, or a ``treeopt.trees.Tree``
        Initial W (Sec. 7: axis-aligned -> CO2 -> non-greedy). Padded or truncated to depth ``d``.
    init_params : dict or None
        Parameters set on the initial estimator (e.g. ``{"max_epochs": 20}`` for a cheaper CO2 start).
        The string inits default to ``max_depth=d``; CO2 also to ``nu``, ``learning_rate`` and all features
        (``max_features=None``: the paper's single trees, Sec. 7). Sec. 7 does not say which CO2 tree starts
        the non-greedy one; the paper-profile workflow passes the CO2 tree's ``nu`` and ``learning_rate``
        chosen on validation at the same depth (``init_params.nu`` in config ``inherit:``). With an integer
        ``random_state`` the string inits are fitted with that same seed, so the start is the very tree of
        the CO2 (or axis-aligned) baseline run with that seed.
    verbose : int, default=0
        > 0 shows a tqdm progress bar over epochs (per-epoch progress always goes to the
        ``treeopt.nongreedy`` logger at INFO level).
    random_state : int, RandomState or None

    Attributes
    ----------
    tree_ : treeopt.trees.Tree
        The complete depth-``d`` tree in heap order, all internal nodes oblique (``feature = -1``), leaves
        hold theta (``value_kind="log_scores"``; ``predict_proba`` is their softmax, eq. (1));
        ``n_samples`` counts training points per node (leaves with 0 are inactive, Fig. 3).
    W_, b_, theta_ : the optimised split rows (m x p), offsets (m,) and leaf scores (m+1 x k).
    active_leaves_ : int, leaves that training points reach.
    history_ : dict of per-epoch lists (surrogate, train_loss, train_error, active_leaves, learning_rate,
        seconds, reassigned).
    n_epochs_, init_seconds_, sgd_seconds_, depth_, classes_, n_features_in_
    """

    _kind = _sgd.LOG_LOSS

    def _default_init(self, name, seed):
        from ..greedy import AxisAlignedTreeClassifier, CO2TreeClassifier

        if name == "axis":
            return AxisAlignedTreeClassifier(max_depth=self.max_depth, random_state=seed)
        # single trees use all features at every node (Sec. 7); q < p features is the forests' randomisation
        return CO2TreeClassifier(nu=self.nu, learning_rate=self.learning_rate, max_features=None,
                                 max_depth=self.max_depth, random_state=seed)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        X, y = validate_training_data(self, X, y)
        self.classes_, y_enc = encode_classes(y)
        k = self.classes_.shape[0]
        self._fit(X, y_enc, np.zeros((X.shape[0], 1)), y_enc, k)
        self.train_error_ = self.history_["train_error"][-1] if self.n_epochs_ else None
        self.tree_ = self._build_tree(self.theta_, "log_scores")
        return self

    def _train_error(self, leaves, Theta, y_int, Y):
        return float(np.mean(Theta.argmax(axis=1)[leaves] != y_int))



class NonGreedyTreeRegressor(RegressorMixin, _NonGreedyTree):
    """Non-greedy oblique regression tree: squared loss eq. (3), surrogate eq. (9).

    Parameters as :class:`NonGreedyTreeClassifier`; ``init="co2"`` is not available (CO2 is a classifier),
    the default ``init="axis"`` fits a variance-reduction CART tree. Targets are standardised inside; ``tree_``
    leaves hold the predictions in the original units (``value_kind="regression"``).
    """

    _kind = _sgd.SQUARED_LOSS
    _parameter_constraints = {**_NonGreedyTree._parameter_constraints,
                              "init": [StrOptions({"axis"}), HasMethods("fit"), Tree, HasMethods("apply")]}

    def __init__(self, max_depth=6, nu=10.0, learning_rate=0.01, inference="fast", stable=True, max_epochs=50,
                 batch_size=100, momentum=0.9, tol=1e-4, n_iter_no_change=10, stable_tol=1e-3,
                 stable_max_epochs=10, init="axis", init_params=None, verbose=0, random_state=None):
        super().__init__(max_depth=max_depth, nu=nu, learning_rate=learning_rate, inference=inference,
                         stable=stable, max_epochs=max_epochs, batch_size=batch_size, momentum=momentum, tol=tol,
                         n_iter_no_change=n_iter_no_change, stable_tol=stable_tol,
                         stable_max_epochs=stable_max_epochs, init=init, init_params=init_params,
                         verbose=verbose, random_state=random_state)

    def _default_init(self, name, seed):
        from sklearn.tree import DecisionTreeRegressor

        return DecisionTreeRegressor(max_depth=self.max_depth, random_state=seed)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        X, y = validate_training_data(self, X, y, y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        self.y_mean_ = float(y.mean())
        std = float(y.std())
        self.y_scale_ = std if std > 0 else 1.0
        Y = np.ascontiguousarray(((y - self.y_mean_) / self.y_scale_)[:, None])
        self._fit(X, np.zeros(X.shape[0], dtype=np.int64), Y, y, 1)
        self.tree_ = self._build_tree(self.theta_ * self.y_scale_ + self.y_mean_, "regression")
        return self

    def _train_error(self, leaves, Theta, y_int, Y):
        """Root mean squared error on the standardised targets."""
        return float(np.sqrt(np.mean((Theta[leaves, 0] - Y[:, 0]) ** 2)))

    def predict(self, X):
        check_is_fitted(self)
        return self.tree_.predict_value(validate_features(self, X, reset=False))[:, 0]
