"""Non-greedy oblique decision trees (Norouzi, Collins, Johnson, Fleet, Kohli, NeurIPS 2015).

All split functions ``W`` and leaf parameters ``Theta`` of a complete binary tree of depth ``d`` are
optimised jointly on the surrogate eq. (9): the sum over the training pairs of the
convex-concave upper bound eq. (7) (exact loss-augmented inference, eq. (10)-(12)) or eq. (13) (the
Hamming ball of radius 1, "fast"), subject to ``||w_i||^2 <= nu`` for every split row (with the bias as the
homogeneous coordinate, Sec. 3). Optimisation is Alg. 1 with momentum and mini-batches (Sec. 6), or Stable
SGD (SSGD): the data-to-leaf assignments ``a(x)`` are frozen and the bound eq. (14) is optimised while it
improves, then the assignments are refreshed. The numba kernels are in :mod:`treeopt.nongreedy._sgd`,
the start (Alg. 1 line 1) in :mod:`treeopt.nongreedy._init`.

Choices the paper leaves open, fixed here:

- Initialisation (Sec. 7): ``init="co2"`` fits a CO2 tree (:class:`treeopt.greedy.CO2TreeClassifier`,
  whose stumps start from the best information-gain axis split, i.e. axis-aligned -> CO2) of depth ``d``;
  ``init="axis"`` an axis-aligned tree by information gain (the regressor: variance reduction). Any fitted
  estimator with ``tree_``, a scikit-learn tree, or a :class:`treeopt.trees.Tree` is used as given; an
  unfitted estimator is cloned and fitted first. The start keeps the initial tree's rows (partition and
  margins) where ``||[w_i, b_i]||^2 <= nu`` and projects the others onto the sphere; padded nodes get a
  balanced start split; it predicts exactly as the initial tree (``_init``). ``init_scale`` multiplies every
  start row first (same partition, smaller margins), a choice made on validation (``_init``: why).
- Gradients are averaged over the mini-batch; momentum 0.9, batch 100 (as the CO2 implementation).
- The tracked bound: after every epoch the surrogate (eq. (13) or (7); SSGD: eq. (14) at the assignments
  in force) is evaluated at that one parameter state, averaged over ``bound_samples`` training points (a
  fixed random subset drawn once per fit; None: all of them). Per-sample sums collected *during* an epoch
  mix parameter states and are noisy.
- Learning rate: CO2's rule (Sec. 4.2 of the CO2 paper, :func:`treeopt.greedy._co2_sgd.next_learning_rate`):
  halved after ``OSCILLATION_PATIENCE`` (2) consecutive epochs in which the tracked bound rose; a fall
  resets the count.
- Stopping: after ``max_epochs`` epochs, or when the best tracked bound (SSGD: at the end of each epoch,
  before any refresh) has not fallen by a relative ``tol`` for ``n_iter_no_change`` epochs.
- SSGD: an assignment round ends when the tracked bound fell by less than a relative ``stable_tol`` in an
  epoch, or after ``stable_max_epochs`` epochs; then ``a(x)`` is recomputed as the leaf ``f(sgn(Wx))``.
  Refreshing can only lower eq. (14) (its second term becomes the unconstrained maximum); the bound after
  the refresh is the reference of the next epoch's learning-rate and stopping comparisons.
- The regressor standardises the targets inside (the squared loss competes with the margin term ``Wx``
  in the bound, so its scale matters); leaf values are mapped back in ``tree_``.
- Diagnostics, recorded by run folders in ``metrics.json``: ``depth_stats_`` (key ``per_depth``), per depth
  of the tree, the number of samples that gave a row of that depth a gradient (Alg. 1 line 6), the number of
  rows that got any, the relative change ``||W_d - W_d^0|| / ||W_d^0||`` of the depth's rows ``[w_i, b_i]``
  against the start, and the number of training points whose path parts from the start's at a node of that
  depth (a tree whose deep rows never move shows zeros there); ``fit_stats_`` (under ``tree``): epochs run,
  final learning rate, training error of the start and of the result (on the tracked points), padded rows.
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
from ..greedy.sgd import next_learning_rate
from ..greedy.co2 import OSCILLATION_PATIENCE
from ..trees import OBLIQUE, Tree
from . import _init, _sgd

log = logging.getLogger(__name__)

# A row's momentum is dropped once it has had no gradient for this many mini-batches (0.9^66 < 1e-3).
STALE_BATCHES = 66


def run_epoch(state, data, tree, assign, *, loss, fast, stable, nu, eta, momentum, batch_size):
    """One epoch of (S)SGD (Alg. 1) on ``tree`` (a ``_sgd.Params``) in place; returns the summed per-sample
    bound of the epoch (see ``_sgd.sgd_epoch``)."""
    return _sgd.sgd_epoch(data, tree, assign, _sgd.bound(loss, fast, stable),
                          _sgd.step(eta, momentum, nu, batch_size, STALE_BATCHES), state)


def surrogate_bounds(X, W, b, Theta, *, kind, y_int, Y, inference="fast"):
    """Per-sample upper bound on the loss: eq. (13) (``"fast"``) or eq. (7) (``"exact"``)."""
    data = _sgd.data(X, y_int, Y)
    rows = np.arange(data.X.shape[0])
    values, _, _ = _sgd.evaluate(data, _sgd.Params(W, b, Theta), _sgd.bound(kind, inference == "fast"), rows,
                                 rows)
    return values


def empirical_losses(X, W, b, Theta, *, kind, y_int, Y):
    """Per-sample loss eq. (4) of the tree (W, b, Theta): ``l(Theta^T f(sgn(Wx)), y)``."""
    data = _sgd.data(X, y_int, Y)
    return _sgd.losses_at(_sgd.route_all(data.X, W, b), Theta, kind, data)


def depth_diagnostics(W0, b0, W, b, row_grads, leaves0, leaves):
    """Per depth ``t`` of the complete tree (lists indexed by depth): samples that gave a row of depth ``t`` a
    gradient, rows of depth ``t`` that got any, ``||[W_t, b_t] - [W_t^0, b_t^0]|| / ||[W_t^0, b_t^0]||``
    (None where the start rows are all zero), and training points whose path leaves the start's at a node of
    depth ``t`` (``leaves0``/``leaves``: leaf of every point at the start and at the end)."""
    m = W.shape[0]
    depth = int(round(math.log2(m + 1)))
    # paths part at the depth of the deepest common ancestor: the highest differing bit of the heap indices
    diff = np.bitwise_xor(leaves0 + m + 1, leaves + m + 1)
    parted = depth - np.floor(np.log2(np.maximum(diff, 1))).astype(np.int64) - 1
    rerouted = np.bincount(parted[diff > 0], minlength=depth)
    grads, rows, change = [], [], []
    for t in range(depth):
        sl = slice(2**t - 1, 2 ** (t + 1) - 1)
        grads.append(int(row_grads[sl].sum()))
        rows.append(int(np.count_nonzero(row_grads[sl])))
        ref = math.sqrt(float(np.einsum("ij,ij->", W0[sl], W0[sl], dtype=np.float64) + (b0[sl] ** 2).sum()))
        diff_t = math.sqrt(float(((W[sl] - W0[sl]) ** 2).sum() + ((b[sl] - b0[sl]) ** 2).sum()))
        change.append(diff_t / ref if ref > 0 else None)
    return {"depth_row_grads": grads, "depth_rows_with_grads": rows, "depth_rel_change": change,
            "depth_rerouted": [int(v) for v in rerouted]}


class _NonGreedyTree(BaseEstimator):
    """Shared fitting code; subclasses set the loss (``_kind``) and the targets."""

    _parameter_constraints = {
        "max_depth": [Interval(Integral, 1, 24, closed="both"), None],
        "nu": [Interval(Real, 0, None, closed="neither")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "warmup_epochs": [Interval(Integral, 0, None, closed="left")],
        "inference": [StrOptions({"fast", "exact"})],
        "stable": ["boolean"],
        "max_epochs": [Interval(Integral, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "momentum": [Interval(Real, 0, 1, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left"), None],
        "stable_tol": [Interval(Real, 0, None, closed="left")],
        "stable_max_epochs": [Interval(Integral, 1, None, closed="left")],
        "bound_samples": [Interval(Integral, 1, None, closed="left"), None],
        "init": [StrOptions({"co2", "axis"}), HasMethods("fit"), Tree, HasMethods("apply")],
        "init_params": [dict, None],
        "init_scale": [Interval(Real, 0, None, closed="neither")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(self, max_depth=6, nu=10.0, learning_rate=0.01, warmup_epochs=0, inference="fast", stable=False,
                 max_epochs=100, batch_size=100, momentum=0.9, tol=1e-4, n_iter_no_change=None, stable_tol=1e-3,
                 stable_max_epochs=10, bound_samples=10000, init="co2", init_params=None, init_scale=1.0,
                 verbose=0, random_state=None):
        self.max_depth = max_depth
        self.nu = nu
        self.learning_rate = learning_rate
        self.warmup_epochs = warmup_epochs
        self.inference = inference
        self.stable = stable
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.momentum = momentum
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.stable_tol = stable_tol
        self.stable_max_epochs = stable_max_epochs
        self.bound_samples = bound_samples
        self.init = init
        self.init_params = init_params
        self.init_scale = init_scale
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
    def _fit(self, X, y_int, Y, y_fit, n_out, monitor=None):
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
        W, b, Theta, padded = _init.start(init_tree, depth, X, kind, y_int, Y, n_out, self.nu,
                                          float(self.init_scale))
        self.init_seconds_ = time.perf_counter() - start
        log.info("non-greedy init: %s tree of depth %d -> complete depth %d (%d split rows, %d padded, %d of them "
                 "zero), %.2f s", type(self.init).__name__ if not isinstance(self.init, str) else self.init,
                 init_tree.max_depth, depth, W.shape[0], int(padded.sum()), int((~W.any(axis=1)).sum()),
                 self.init_seconds_)
        tree = _sgd.Params(W, b, Theta)
        W0, b0 = W.astype(np.float32), b.copy()  # for the per-depth change only (float32: half the memory)
        n = X.shape[0]
        data = _sgd.data(X, y_int, Y)
        leaves0 = _sgd.route_all(data.X, W, b)
        tracked = np.arange(n)
        if self.bound_samples is not None and self.bound_samples < n:
            tracked = np.sort(rs.choice(n, self.bound_samples, replace=False))
        state = _sgd.epoch_state(tree, n, sgd_seed)
        self.history_ = self._optimize(data, tree, state, tracked, depth, monitor)
        self.n_epochs_ = len(self.history_["epoch"]) - 1
        self.W_, self.b_, self.theta_ = W, b, Theta
        self.depth_ = depth
        leaves = _sgd.route_all(data.X, W, b)
        self._counts = _init.node_counts(leaves, W.shape[0])
        self.active_leaves_ = int((self._counts[W.shape[0]:] > 0).sum())
        self.fit_stats_ = {"sgd_epochs": self.n_epochs_, "final_learning_rate": self.history_["learning_rate"][-1],
                           "start_train_error": self.history_["train_error"][0],
                           "end_train_error": self.history_["train_error"][-1],
                           "padded_rows": int(padded.sum())}
        self.depth_stats_ = depth_diagnostics(W0, b0, W, b, state.row_grads, leaves0, leaves)
        return self

    def _optimize(self, data, tree, state, tracked, depth, monitor):
        """Epochs of (S)SGD with the learning-rate, SSGD-round and stopping rules of the module docstring;
        returns the history (entry 0: the start)."""
        kind = self._kind
        bound = _sgd.bound(kind, self.inference == "fast", self.stable)
        assign = _sgd.route_all(data.X, tree.W, tree.b)
        history = {k: [] for k in ("epoch", "surrogate", "train_loss", "train_error", "active_leaves",
                                   "learning_rate", "seconds", "reassigned", "surrogate_reassigned")}

        def record(epoch, seconds, reassigned, eta):
            values, losses, leaves = _sgd.evaluate(data, tree, bound, assign, tracked)
            err = self._train_error(leaves, tree.Theta, data.yi[tracked], data.Y[tracked])
            row = (epoch, float(values.mean()), float(losses.mean()), err, int(np.unique(leaves).size), eta,
                   seconds, reassigned, float(values.mean()))
            for key, val in zip(history, row):
                history[key].append(val)
            return float(values.mean())

        eta = float(self.learning_rate)
        current = record(0, 0.0, False, eta)
        best, since_best, n_rises, round_len = current, 0, 0, 0
        patience = self.n_iter_no_change if self.n_iter_no_change is not None else np.inf
        bar = None
        if self.verbose:
            from tqdm.auto import tqdm
            bar = tqdm(total=self.max_epochs, desc=f"non-greedy d={depth}", leave=False)
        sgd_seconds = eval_seconds = 0.0
        for epoch in range(1, self.max_epochs + 1):
            t0 = time.perf_counter()
            # warm-up: epoch e <= warmup_epochs runs with eta * e / (warmup_epochs + 1) (the rule's eta is kept)
            eta_used = eta * min(1.0, epoch / (self.warmup_epochs + 1))
            run_epoch(state, data, tree, assign, loss=kind, fast=bound.fast, stable=bound.stable, nu=self.nu,
                      eta=eta_used, momentum=self.momentum, batch_size=self.batch_size)
            t1 = time.perf_counter()
            previous, current = current, record(epoch, 0.0, False, eta_used)
            eta, n_rises = next_learning_rate(eta, n_rises, previous, current, OSCILLATION_PATIENCE)
            if bound.stable:  # SSGD: a round ends when the bound stops improving; then a(x) = f(sgn(Wx))
                round_len += 1
                if previous - current < self.stable_tol * abs(previous) or round_len >= self.stable_max_epochs:
                    assign = _sgd.route_all(data.X, tree.W, tree.b)
                    current = float(_sgd.evaluate(data, tree, bound, assign, tracked)[0].mean())
                    history["reassigned"][-1] = True
                    history["surrogate_reassigned"][-1] = current
                    round_len = 0
            sgd_seconds += t1 - t0
            eval_seconds += time.perf_counter() - t1
            history["seconds"][-1] = time.perf_counter() - t0
            log.info("epoch %d: surrogate %.5f | train loss %.5f | train error %.4f | active leaves %d/%d | "
                     "eta %.4g%s", epoch, history["surrogate"][-1], history["train_loss"][-1],
                     history["train_error"][-1], history["active_leaves"][-1], tree.W.shape[0] + 1, eta_used,
                     " | leaves re-assigned" if history["reassigned"][-1] else "")
            if bar is not None:
                bar.update(1)
                bar.set_postfix(bound=f"{current:.4f}", err=f"{history['train_error'][-1]:.4f}")
            if monitor is not None:
                monitor(epoch, tree)
            end = history["surrogate"][-1]  # SSGD: before any refresh, the bound this epoch optimised
            if end < best - self.tol * abs(best):
                best, since_best = end, 0
            else:
                since_best += 1
                if since_best >= patience:
                    break
        if bar is not None:
            bar.close()
        self.sgd_seconds_, self.eval_seconds_ = sgd_seconds, eval_seconds
        return history

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
        Initial SGD step ``eta`` (Alg. 1), applied to mini-batch averaged gradients; halved after two
        consecutive epochs in which the tracked bound rose (CO2's rule).
    warmup_epochs : int, default=0
        Learning-rate warm-up: epoch ``e <= warmup_epochs`` runs with ``eta * e / (warmup_epochs + 1)`` (the rule's
        ``eta``; its halvings still apply). 0: none.
    inference : {"fast", "exact"}, default="fast"
        Loss-augmented inference: "exact" maximises over all codes, eq. (10)-(12), O(2^d p) per sample;
        "fast" over the Hamming ball of radius 1, eq. (13), O(d^2 p).
    stable : bool, default=False
        Stable SGD (assignments fixed while eq. (14) improves) instead of plain SGD (Alg. 1).
    max_epochs : int, default=100
        Epochs at most (an epoch is one pass over the training points in mini-batches).
    batch_size, momentum : int, float, default=100, 0.9
    tol, n_iter_no_change : float, int or None, default=1e-4, None
        Stop once the best tracked bound has not fallen by a relative ``tol`` for ``n_iter_no_change``
        epochs; None: run ``max_epochs``.
    stable_tol, stable_max_epochs : end of an SSGD assignment round (relative improvement in an epoch, epochs).
    bound_samples : int or None, default=10000
        Training points (a fixed random subset) on which the bound is evaluated after every epoch for the
        learning-rate and stopping rules and the history; None: all. On Connect-4 (44,000 points) the
        evaluation over all points costs about 85% of an SGD epoch, over 10,000 about 20%.
    init : "co2", "axis", a (fitted or unfitted) estimator with ``tree_``, or a ``treeopt.trees.Tree``
        Initial W (Sec. 7: axis-aligned -> CO2 -> non-greedy). Padded or truncated to depth ``d``.
    init_params : dict or None
        Parameters set on the initial estimator (e.g. ``{"max_epochs": 20}`` for a cheaper CO2 start).
        The string inits default to ``max_depth=d``; CO2 also to ``nu`` and all features (``max_features=None``:
        the paper's single trees, Sec. 7), its learning rate to CO2's default. Sec. 7 does not say which CO2 tree starts
        the non-greedy one; the paper-profile workflow passes the CO2 tree's ``nu`` and ``learning_rate``
        chosen on validation at the same depth (``init_params.nu`` in config ``inherit:``). With an integer
        ``random_state`` the string inits are fitted with that same seed, so the start is the very tree of
        the CO2 (or axis-aligned) baseline run with that seed.
    init_scale : float, default=1
        Every start row ``[w_i, b_i]`` is multiplied by this factor (> 0) before the projection onto the ``nu``
        ball: same partition and start predictions, margins times ``init_scale`` (exactly for a power of two,
        which keeps points lying on a split on their side). How far SGD moves the start
        depends on its rows' scale (a start of large rows gives a tight bound and few gradients); the paper
        profile chooses it on validation (``_init`` module doc).
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
    history_ : dict of lists (surrogate, train_loss, train_error, active_leaves, learning_rate, seconds,
        reassigned, surrogate_reassigned), entry 0 at the start, entry e after epoch e, on the ``bound_samples``
        points; ``learning_rate[e]`` is the rate epoch e ran with; SSGD: ``reassigned[e]`` says whether a(x) was
        refreshed after epoch e, and ``surrogate_reassigned[e]`` is eq. (14) at the refreshed assignments
        (otherwise equal to ``surrogate[e]``), the reference of epoch e + 1.
    fit_stats_ : dict, epochs, final rate, start and end training error, padded rows (module doc).
    depth_stats_ : dict of per-depth lists: gradient counts, rows with gradients, row change, re-routed points.
    n_epochs_, init_seconds_, sgd_seconds_, eval_seconds_, depth_, classes_, n_features_in_
    """

    _kind = _sgd.LOG_LOSS

    def _default_init(self, name, seed):
        from ..greedy import AxisAlignedTreeClassifier, CO2TreeClassifier

        if name == "axis":
            return AxisAlignedTreeClassifier(max_depth=self.max_depth, random_state=seed)
        # single trees use all features at every node (Sec. 7); q < p features is the forests' randomisation.
        # CO2's own learning rate (its grid differs from the non-greedy one): set it through init_params
        return CO2TreeClassifier(nu=self.nu, max_features=None, max_depth=self.max_depth, random_state=seed)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, monitor=None):
        """Fit on (X, y). ``monitor``: called as ``monitor(epoch, params)`` after every epoch with the current
        ``(W, b, Theta)`` (a ``_sgd.Params`` that keeps changing; copy what you keep), e.g. to follow the
        validation accuracy (as scikit-learn's gradient boosting ``monitor``)."""
        X, y = validate_training_data(self, X, y)
        self.classes_, y_enc = encode_classes(y)
        k = self.classes_.shape[0]
        self._fit(X, y_enc, np.zeros((X.shape[0], 1)), y_enc, k, monitor)
        self.tree_ = self._build_tree(self.theta_, "log_scores")
        return self

    def _train_error(self, leaves, Theta, y_int, Y):
        """Fraction of the given points misclassified by the leaves they reach."""
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

    def __init__(self, max_depth=6, nu=10.0, learning_rate=0.01, warmup_epochs=0, inference="fast", stable=False,
                 max_epochs=100, batch_size=100, momentum=0.9, tol=1e-4, n_iter_no_change=None, stable_tol=1e-3,
                 stable_max_epochs=10, bound_samples=10000, init="axis", init_params=None, init_scale=1.0,
                 verbose=0, random_state=None):
        super().__init__(max_depth=max_depth, nu=nu, learning_rate=learning_rate, warmup_epochs=warmup_epochs,
                         inference=inference, stable=stable, max_epochs=max_epochs, batch_size=batch_size,
                         momentum=momentum, tol=tol,
                         n_iter_no_change=n_iter_no_change, stable_tol=stable_tol,
                         stable_max_epochs=stable_max_epochs, bound_samples=bound_samples, init=init,
                         init_params=init_params, init_scale=init_scale, verbose=verbose,
                         random_state=random_state)

    def _default_init(self, name, seed):
        from sklearn.tree import DecisionTreeRegressor

        return DecisionTreeRegressor(max_depth=self.max_depth, random_state=seed)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, monitor=None):
        """Fit on (X, y); ``monitor`` as :meth:`NonGreedyTreeClassifier.fit`."""
        X, y = validate_training_data(self, X, y, y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        self.y_mean_ = float(y.mean())
        std = float(y.std())
        self.y_scale_ = std if std > 0 else 1.0
        Y = np.ascontiguousarray(((y - self.y_mean_) / self.y_scale_)[:, None])
        self._fit(X, np.zeros(X.shape[0], dtype=np.int64), Y, y, 1, monitor)
        self.tree_ = self._build_tree(self.theta_ * self.y_scale_ + self.y_mean_, "regression")
        return self

    def _train_error(self, leaves, Theta, y_int, Y):
        """Root mean squared error on the standardised targets."""
        return float(np.sqrt(np.mean((Theta[leaves, 0] - Y[:, 0]) ** 2)))

    def predict(self, X):
        check_is_fitted(self)
        return self.tree_.predict_value(validate_features(self, X, reset=False))[:, 0]
