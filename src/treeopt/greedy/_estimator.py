"""Common scikit-learn plumbing of the greedy tree classifiers grown with :func:`grow_tree`.

A learner subclasses :class:`GreedyTreeClassifier` and implements ``_split_finder(n_classes, n_features)``
returning the ``find_split`` callback; fitting, seeding and prediction live here.
"""

from __future__ import annotations

import copy
import math
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..base import MAX_FEATURES_CONSTRAINT, TreeClassifierMixin, encode_classes, validate_training_data  # noqa: F401
from ._grow import grow_tree, level_order_prefix

GROWTH_CONSTRAINTS = {
    "max_depth": [Interval(Integral, 1, None, closed="left"), None],
    "min_samples_split": [Interval(Integral, 2, None, closed="left")],
    "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
}

# ``grow_order`` of the learners that offer it (see :mod:`treeopt.greedy._grow`, "Growth order")
GROW_ORDER_CONSTRAINT = [StrOptions({"depth_first", "level"})]


def n_candidate_features(max_features, p):
    """q, the number of random features tried for an axis split (scikit-learn's ``max_features`` rules)."""
    if max_features is None:
        return p
    if isinstance(max_features, str):
        q = math.sqrt(p) if max_features == "sqrt" else math.log2(p)
        return max(1, int(q))
    if isinstance(max_features, Integral):
        return min(int(max_features), p)
    return max(1, int(max_features * p))


class GreedyTreeClassifier(TreeClassifierMixin, ClassifierMixin, BaseEstimator):
    """Base class: validate, encode classes, grow with the learner's split finder, predict via ``tree_``.

    Subclasses define ``__init__`` (storing ``max_depth``, ``min_samples_split``, ``min_samples_leaf``,
    ``random_state`` and their own parameters), ``_parameter_constraints`` and ``_split_finder``.
    """

    def _split_finder(self, n_classes, n_features):  # pragma: no cover - abstract
        raise NotImplementedError

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X, y = validate_training_data(self, X, y)
        return self._fit_sample(X, y, None)

    def _fit_sample(self, X, y, sample):
        """Fit on the rows ``X[sample]`` (all rows when None) of a checked float64 ``X``, ``y`` holding their
        labels, without copying them first (:func:`grow_tree`'s ``sample``): a forest grows each tree on its
        bootstrap sample this way. Parameters are not validated here (``fit`` does that)."""
        self.classes_, y_enc = encode_classes(y)
        self.n_features_in_ = X.shape[1]
        finder = self._split_finder(self.classes_.shape[0], X.shape[1])
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        level_order = getattr(self, "grow_order", "depth_first") == "level"
        level_seconds = [] if level_order else None
        self.tree_ = grow_tree(X, y_enc, self.classes_.shape[0], finder, max_depth=self.max_depth,
                               min_samples_split=self.min_samples_split, min_samples_leaf=self.min_samples_leaf,
                               rng=np.random.default_rng(seed), sample=sample, level_order=level_order,
                               level_seconds=level_seconds)
        self._record_finder_stats(finder)
        if level_order:
            self.level_seconds_ = level_seconds
        return self

    def depth_step(self, max_depth):
        """The estimator a fit with ``max_depth`` and otherwise the same parameters and data would give (a copy;
        this one is unchanged), read off this level-order fit (``grow_order="level"``): its nodes above that depth
        were split with the same random draws (:func:`treeopt.greedy._grow.level_order_prefix`), so the tree is
        the same, node for node (``tests/test_greedy_level_order.py``). ``fit_seconds_at_depth`` is the growing
        time up to that depth; the split counts are the truncated tree's. A depth sweep reads every depth off one
        fit this way (config ``path: max_depth``)."""
        check_is_fitted(self)
        if getattr(self, "grow_order", "depth_first") != "level":
            raise ValueError("depth_step needs a fit grown level by level (grow_order='level')")
        max_depth = int(max_depth)
        if max_depth < 1 or (self.max_depth is not None and max_depth > self.max_depth):
            raise ValueError(f"max_depth={max_depth} is not a depth of this fit (1..{self.max_depth})")
        est = copy.copy(self)
        est.max_depth = max_depth
        est.tree_ = level_order_prefix(self.tree_, max_depth)
        est.level_seconds_ = self.level_seconds_[:max_depth - 1] + [self.growing_seconds(max_depth)]
        internal = est.tree_.feature != -2
        if hasattr(self, "n_oblique_splits_"):
            est.n_oblique_splits_ = int(np.count_nonzero(est.tree_.feature[internal] == -1))
            est.n_axis_splits_ = int(np.count_nonzero(est.tree_.feature[internal] >= 0))
        return est

    def growing_seconds(self, max_depth=None):
        """Seconds a level-order fit spent growing the tree down to ``max_depth`` (None: all of it)."""
        check_is_fitted(self)
        times = getattr(self, "level_seconds_", None)
        if not times:
            raise ValueError("growing times per depth are kept by level-order fits only (grow_order='level')")
        return times[-1] if max_depth is None else times[min(int(max_depth), len(times)) - 1]

    def _record_finder_stats(self, finder):
        """Hook for subclasses to copy diagnostics off the split finder."""



