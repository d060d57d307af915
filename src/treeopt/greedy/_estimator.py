"""Common scikit-learn plumbing of the greedy tree classifiers grown with :func:`grow_tree`.

A learner subclasses :class:`GreedyTreeClassifier` and implements ``_split_finder(n_classes, n_features)``
returning the ``find_split`` callback; fitting, seeding and prediction live here.
"""

from __future__ import annotations

import math
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval

from ..base import MAX_FEATURES_CONSTRAINT, TreeClassifierMixin, encode_classes, validate_training_data  # noqa: F401
from ._grow import grow_tree

GROWTH_CONSTRAINTS = {
    "max_depth": [Interval(Integral, 1, None, closed="left"), None],
    "min_samples_split": [Interval(Integral, 2, None, closed="left")],
    "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
}


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
        self.tree_ = grow_tree(X, y_enc, self.classes_.shape[0], finder, max_depth=self.max_depth,
                               min_samples_split=self.min_samples_split, min_samples_leaf=self.min_samples_leaf,
                               rng=np.random.default_rng(seed), sample=sample)
        self._record_finder_stats(finder)
        return self

    def _record_finder_stats(self, finder):
        """Hook for subclasses to copy diagnostics off the split finder."""



