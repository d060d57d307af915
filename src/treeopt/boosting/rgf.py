"""Regularized greedy forest (Johnson & Zhang, "Learning Nonlinear Functions Using Regularized Greedy Forest").

``RGFRegressor`` and ``RGFClassifier`` implement Algorithm 3 as Sec. 5.3 specifies it (see
:mod:`treeopt.boosting._grow`): structure search over splitting a leaf of the most recent ``n_tree_search``
trees or starting a new tree, each candidate scored by the Newton step of eq. (7) including the regulariser;
fully-corrective coordinate descent (eq. (8)) every ``opt_interval`` leaves and at the end; the regularisers of
Sec. 5.4: ``"l2"`` on the leaf-only model (5.4.1), ``"min_penalty"`` (5.4.2, eq. (9), Algorithm 4) and
``"min_penalty_sib"`` (5.4.3, sum-to-zero siblings, eq. (14)) with depth factor ``gamma`` >= 1; losses square,
exponential (stabilised as Sec. 6.2.3) and logistic. Regression targets are centred (Sec. 6.2.1); multi-class
problems are solved one-vs-rest.

Staged output: the model after every weight correction is kept, so ``staged_predict`` /
``staged_predict_proba`` yield the forest at 100, 200, ... leaves (``stage_sizes_``) without refitting; the
stage at ``k * opt_interval`` leaves equals a fit with ``max_leaf_nodes = k * opt_interval``.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..base import encode_classes, validate_features, validate_training_data
from ..trees import Tree
from ._grow import ForestGrower, make_bins
from ._grow import stage_indices as _stage_indices
from ._regularizers import REGULARIZERS


class FittedTree:
    """One tree of a fitted forest, exposed as ``tree_`` in the shared format (leaf ``value`` = its weight
    alpha, ``value_kind="regression"``); the forest's output is the sum over trees (plus ``intercept_``)."""

    def __init__(self, tree):
        self.tree_ = tree


def _export_trees(forest, n_features):
    trees = []
    ends = list(forest.roots[1:]) + [forest.left.shape[0]]
    for start, end in zip(forest.roots, ends):
        left = forest.left[start:end]
        right = forest.right[start:end]
        left = np.where(left >= 0, left - start, -1)
        right = np.where(right >= 0, right - start, -1)
        feature = forest.feature[start:end]
        internal = np.flatnonzero(left >= 0)
        W = sp.csr_matrix((np.ones(internal.size), (internal, feature[internal])), shape=(end - start, n_features))
        trees.append(FittedTree(Tree(left, right, W, forest.threshold[start:end], forest.value[start:end, None],
                                     feature=np.where(left >= 0, feature, -2), n_samples=forest.n_samples[start:end],
                                     value_kind="regression")))
    return trees


class _RGFBase(BaseEstimator):
    _parameter_constraints = {
        "max_leaf_nodes": [Interval(Integral, 2, None, closed="left")],
        "l2": [Interval(Real, 0, None, closed="left")],
        "regularizer": [StrOptions(set(REGULARIZERS))],
        "gamma": [Interval(Real, 1, None, closed="left")],
        "loss": [StrOptions({"squared", "exponential", "logistic"})],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "opt_interval": [Interval(Integral, 1, None, closed="left")],
        "n_iter": [Interval(Integral, 1, None, closed="left"), None],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "n_tree_search": [Interval(Integral, 1, None, closed="left")],
        "max_bins": [Interval(Integral, 2, 65535, closed="both")],
        "correction_start": [StrOptions({"split", "zero"})],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
    }

    def __init__(self, max_leaf_nodes=1000, *, l2=0.1, regularizer="l2", gamma=1.0, loss="squared",
                 min_samples_leaf=10, opt_interval=100, n_iter=None, learning_rate=0.5, n_tree_search=1,
                 max_bins=255, correction_start="split", random_state=None, n_jobs=None):
        self.max_leaf_nodes = max_leaf_nodes
        self.l2 = l2
        self.regularizer = regularizer
        self.gamma = gamma
        self.loss = loss
        self.min_samples_leaf = min_samples_leaf
        self.opt_interval = opt_interval
        self.n_iter = n_iter
        self.learning_rate = learning_rate
        self.n_tree_search = n_tree_search
        self.max_bins = max_bins
        self.correction_start = correction_start
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _grow(self, Xb, n_bins, bin_off, thresholds, targets):
        n_iter = self.n_iter if self.n_iter is not None else (10 if self.loss == "squared" else 5)
        gamma = self.gamma if self.regularizer != "l2" else 1.0
        grower = ForestGrower(loss=self.loss, regularizer=self.regularizer, l2=self.l2, gamma=gamma,
                              max_leaf_nodes=self.max_leaf_nodes, min_samples_leaf=self.min_samples_leaf,
                              opt_interval=self.opt_interval, n_iter=n_iter, learning_rate=self.learning_rate,
                              n_tree_search=self.n_tree_search, max_bins=self.max_bins,
                              correction_start=self.correction_start)
        return grower.fit(Xb, n_bins, bin_off, thresholds, targets)

    def _fit_targets(self, X, targets):
        """Grow one forest per column of ``targets``; set the staged-size attributes."""
        Xb, thresholds, n_bins, bin_off = make_bins(X, self.max_bins)
        self.forests_ = [self._grow(Xb, n_bins, bin_off, thresholds, targets[:, k]) for k in range(targets.shape[1])]
        n_stages = max(len(f.stage_budget) for f in self.forests_)
        budgets, leaves = [], []
        for s in range(n_stages):
            picks = [min(s, len(f.stage_budget) - 1) for f in self.forests_]
            budgets.append(int(max(f.stage_budget[p] for f, p in zip(self.forests_, picks))))
            leaves.append(int(sum(f.stage_leaves[p] for f, p in zip(self.forests_, picks))))
        budgets[-1] = int(self.max_leaf_nodes)
        self.stage_sizes_ = {"max_leaf_nodes": budgets, "n_leaves": leaves}
        self.n_leaves_ = int(sum(f.n_leaves for f in self.forests_))
        self.n_trees_ = int(sum(f.roots.size for f in self.forests_))
        self._trees = None

    @property
    def estimators_(self):
        """Every tree of the fitted forest(s) (one-vs-rest: class 0's trees first), each with ``tree_``."""
        if not hasattr(self, "forests_"):
            raise AttributeError("estimators_ exists after fit")
        if self._trees is None:
            self._trees = [t for f in self.forests_ for t in _export_trees(f, self.n_features_in_)]
        return self._trees

    def _raw(self, X):
        check_is_fitted(self, "forests_")
        X = validate_features(self, X, reset=False)
        return X, np.column_stack([f.predict(X) for f in self.forests_])

    def _raw_staged(self, X, stage_indices=None):
        check_is_fitted(self, "forests_")
        X = validate_features(self, X, reset=False)
        wanted = _stage_indices(stage_indices, len(self.stage_sizes_["n_leaves"]), "stage_indices").tolist()
        per = []
        for f in self.forests_:  # a one-vs-rest forest that stopped early stays at its last stage
            own = [min(s, len(f.stage_budget) - 1) for s in wanted]
            needed = sorted(set(own))
            out = f.predict_stages(X, needed)
            per.append([out[needed.index(s)] for s in own])
        for k in range(len(wanted)):
            yield np.column_stack([p[k] for p in per])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


class RGFRegressor(RegressorMixin, _RGFBase):
    """Regularized greedy forest for regression (square loss on centred targets, Sec. 6.2.1).

    Parameters
    ----------
    max_leaf_nodes : int, default=1000
        Leaf budget of the forest (total over trees); training also stops when no structure change reduces
        the regularised loss (Algorithm 3, line 3).
    l2 : float, default=0.1
        lambda of the regulariser (Sec. 5.4).
    regularizer : {"l2", "min_penalty", "min_penalty_sib"}, default="l2"
        Sec. 5.4.1, 5.4.2 (eq. (9)) or 5.4.3 (eq. (14)).
    gamma : float >= 1, default=1.0
        Depth factor gamma^{d_v} of the min-penalty regularisers (ignored by "l2").
    loss : {"squared"}, default="squared"
        ``(h - y)^2 / 2``.
    min_samples_leaf : int, default=10
        No split may leave fewer training points in a leaf (Sec. 6.2.3).
    opt_interval : int, default=100
        Weight correction after every ``opt_interval`` new leaves (Sec. 6.2.1).
    n_iter : int or None, default=None
        Coordinate-descent sweeps per correction: None is 10 for square loss, 5 otherwise (Sec. 6.2.1).
    learning_rate : float, default=0.5
        Step size of the coordinate-descent Newton steps (eq. (8)).
    n_tree_search : int, default=1
        t: splits are searched in the t most recent trees (Sec. 5.3.1).
    max_bins : int, default=255
        Features with more distinct values are cut at quantiles into this many bins.
    correction_start : {"split", "zero"}, default="split"
        Where a weight correction starts the leaves added since the previous one: "split" at the weights their
        split gave them (the paper: Algorithm 3, line 4 and Sec. 5.3.2), "zero" at 0, as the authors' C++
        program (rgf-python) does. Only for like-for-like comparisons with rgf-python.
    random_state, n_jobs : unused
        The algorithm is deterministic and single-threaded; accepted for the shared estimator interface.

    Attributes
    ----------
    estimators_ : list of FittedTree, each with ``tree_`` (shared Tree format, leaf values = weights)
    intercept_ : float, the training mean added back to the forest's output
    stage_sizes_ : dict, ``{"max_leaf_nodes": [...], "n_leaves": [...]}`` of the staged models
    n_leaves_, n_trees_ : int
    """

    def __init__(self, max_leaf_nodes=1000, *, l2=0.1, regularizer="l2", gamma=1.0, loss="squared",
                 min_samples_leaf=10, opt_interval=100, n_iter=None, learning_rate=0.5, n_tree_search=1,
                 max_bins=255, correction_start="split", random_state=None, n_jobs=None):
        super().__init__(max_leaf_nodes, l2=l2, regularizer=regularizer, gamma=gamma, loss=loss,
                         min_samples_leaf=min_samples_leaf, opt_interval=opt_interval, n_iter=n_iter,
                         learning_rate=learning_rate, n_tree_search=n_tree_search, max_bins=max_bins,
                         correction_start=correction_start, random_state=random_state, n_jobs=n_jobs)

    _parameter_constraints = {**_RGFBase._parameter_constraints, "loss": [StrOptions({"squared"})]}

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X, y = validate_training_data(self, X, y, y_numeric=True)
        y = y.astype(np.float64)
        self.intercept_ = float(y.mean())
        self._fit_targets(X, (y - self.intercept_)[:, None])
        return self

    def predict(self, X):
        return self._raw(X)[1][:, 0] + self.intercept_

    def staged_predict(self, X, stage_indices=None):
        """Predictions of the model after each weight correction (``stage_sizes_``), or only after those of
        ``stage_indices`` (ascending, 0-based into ``stage_sizes_``): the same arrays, fewer computed."""
        for raw in self._raw_staged(X, stage_indices):
            yield raw[:, 0] + self.intercept_


def _link(loss, score):
    """P(y = +1) from a forest's score: sigma(2h) for exponential loss (the population minimiser is half the
    log-odds), sigma(h) for logistic, clip((h + 1) / 2, 0, 1) for square loss on +-1 targets."""
    if loss == "exponential":
        return 1.0 / (1.0 + np.exp(-2.0 * np.clip(score, -350, 350)))
    if loss == "logistic":
        return 1.0 / (1.0 + np.exp(-np.clip(score, -700, 700)))
    return np.clip((score + 1.0) / 2.0, 0.0, 1.0)


class RGFClassifier(ClassifierMixin, _RGFBase):
    """Regularized greedy forest for classification: labels +-1 for two classes, one-vs-rest for more.

    Parameters as :class:`RGFRegressor`; ``loss`` is one of "squared" (the paper's experiments, Sec. 6),
    "exponential" (Sec. 6.3, Fig. 11) or "logistic". ``decision_function`` is the forest score (per class for
    more than two classes); ``predict_proba`` maps it through the loss's link (see ``_link``) and normalises the
    one-vs-rest rows.
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X, y = validate_training_data(self, X, y)
        self.classes_, y_enc = encode_classes(y)
        k = self.classes_.shape[0]
        if k == 2:
            targets = np.where(y_enc == 1, 1.0, -1.0)[:, None]
        else:
            targets = np.where(y_enc[:, None] == np.arange(k)[None, :], 1.0, -1.0)
        self._fit_targets(X, targets)
        return self

    def _proba(self, raw):
        if raw.shape[1] == 1:
            p = _link(self.loss, raw[:, 0])
            return np.column_stack([1.0 - p, p])
        p = _link(self.loss, raw)
        total = p.sum(axis=1, keepdims=True)
        return np.where(total > 0, p / np.where(total > 0, total, 1.0), 1.0 / p.shape[1])

    def decision_function(self, X):
        raw = self._raw(X)[1]
        return raw[:, 0] if raw.shape[1] == 1 else raw

    def predict_proba(self, X):
        return self._proba(self._raw(X)[1])

    def predict(self, X):
        raw = self._raw(X)[1]
        if raw.shape[1] == 1:
            return self.classes_[(raw[:, 0] > 0).astype(int)]
        return self.classes_[raw.argmax(axis=1)]

    def staged_predict_proba(self, X, stage_indices=None):
        """Class probabilities of the model after each weight correction (``stage_sizes_``), or only after those
        of ``stage_indices`` (ascending, 0-based into ``stage_sizes_``)."""
        for raw in self._raw_staged(X, stage_indices):
            yield self._proba(raw)

    def staged_predict(self, X, stage_indices=None):
        """Predicted labels after each weight correction, or only after those of ``stage_indices``."""
        for raw in self._raw_staged(X, stage_indices):
            yield (self.classes_[(raw[:, 0] > 0).astype(int)] if raw.shape[1] == 1
                   else self.classes_[raw.argmax(axis=1)])
