"""The RGF paper's boosting baselines built on scikit-learn (Sec. 6.2.2 and 6.3).

GBDT is scikit-learn's gradient boosting with ``max_leaf_nodes`` J (best-first growth), ``max_depth=None`` and
shrinkage ``learning_rate`` s (registered directly as methods ``gbdt``, ``gbdt_clf``, ``gbdt_exp``).
:class:`SquareLossGBDTClassifier` is the paper's GBDT for binary classification (Sec. 6: "we focus on square loss
for regression and binary classification"; Sec. 6.5 times it for Fig. 15): square-loss GBDT on +-1 targets
(method ``gbdt_sq_clf``). :class:`BestFirstAdaBoostClassifier` is AdaBoost whose base learners are trees grown
best-first to J leaves, the paper's "ada" of Fig. 11.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.ensemble import AdaBoostClassifier, GradientBoostingRegressor
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from ..base import encode_classes, validate_features, validate_training_data


class BestFirstAdaBoostClassifier(ClassifierMixin, BaseEstimator):
    """AdaBoost (SAMME) over trees grown best-first to ``max_leaf_nodes`` leaves (RGF paper, Sec. 6.3).

    ``estimators_`` are the fitted scikit-learn trees (converted to the shared format by the workflow);
    ``staged_predict_proba`` yields the ensemble after each tree (``stage i`` = ``n_estimators = i``).
    """

    _parameter_constraints = {
        "max_leaf_nodes": [Interval(Integral, 2, None, closed="left")],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, max_leaf_nodes=8, n_estimators=100, *, learning_rate=1.0, min_samples_leaf=10,
                 random_state=None):
        self.max_leaf_nodes = max_leaf_nodes
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X, y = validate_training_data(self, X, y)
        self.classes_, _ = encode_classes(y)
        base = DecisionTreeClassifier(max_leaf_nodes=self.max_leaf_nodes, min_samples_leaf=self.min_samples_leaf)
        self.model_ = AdaBoostClassifier(base, n_estimators=self.n_estimators, learning_rate=self.learning_rate,
                                         random_state=self.random_state).fit(X, y)
        self.estimators_ = self.model_.estimators_
        return self

    def predict_proba(self, X):
        check_is_fitted(self)
        return self.model_.predict_proba(validate_features(self, X, reset=False))

    def predict(self, X):
        check_is_fitted(self)
        return self.model_.predict(validate_features(self, X, reset=False))

    def staged_predict_proba(self, X):
        check_is_fitted(self)
        yield from self.model_.staged_predict_proba(validate_features(self, X, reset=False))


class SquareLossGBDTClassifier(ClassifierMixin, BaseEstimator):
    """GBDT with square loss for binary classification: scikit-learn's ``GradientBoostingRegressor``
    (``squared_error``) fitted to +1 for ``classes_[1]`` and -1 for ``classes_[0]`` (RGF paper Sec. 6 and 6.5: the
    GBDT of Figs. 7-10 and of the Fig. 15 timings uses square loss for binary classification too; exponential loss
    is only Fig. 11's ``gbdt_exp``).

    ``decision_function`` is the regressor's output f; ``predict`` its sign (f > 0: ``classes_[1]``);
    ``predict_proba`` is ``[1 - p, p]`` with p = clip((f + 1) / 2, 0, 1), the population minimiser of square loss on
    +-1 targets being 2 P(y = +1) - 1 (as ``RGFClassifier`` with square loss), so its argmax is ``predict``.
    ``staged_predict_proba`` / ``staged_predict`` / ``staged_decision_function`` yield the model after each tree.
    ``estimators_`` are the regressor's trees (the workflow converts them to the shared format). Only two classes.
    """

    _parameter_constraints = {
        "max_leaf_nodes": [Interval(Integral, 2, None, closed="left"), None],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, max_leaf_nodes=8, n_estimators=100, *, learning_rate=0.1, max_depth=None,
                 min_samples_leaf=10, random_state=None):
        self.max_leaf_nodes = max_leaf_nodes
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X, y = validate_training_data(self, X, y)
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        if y_type != "binary":
            raise ValueError(f"Only binary classification is supported (square loss on +-1 targets; gbdt_clf for "
                             f"more classes). The type of the target is {y_type}.")
        self.classes_, y_enc = encode_classes(y)
        self.model_ = GradientBoostingRegressor(
            loss="squared_error", n_estimators=self.n_estimators, learning_rate=self.learning_rate,
            max_leaf_nodes=self.max_leaf_nodes, max_depth=self.max_depth, min_samples_leaf=self.min_samples_leaf,
            random_state=self.random_state).fit(X, np.where(y_enc == 1, 1.0, -1.0))
        self.estimators_ = self.model_.estimators_
        return self

    def decision_function(self, X):
        check_is_fitted(self)
        return self.model_.predict(validate_features(self, X, reset=False))

    def _proba(self, f):
        p = np.clip((f + 1.0) / 2.0, 0.0, 1.0)
        return np.column_stack([1.0 - p, p])

    def predict_proba(self, X):
        return self._proba(self.decision_function(X))

    def predict(self, X):
        f = self.decision_function(X)
        return self.classes_[(f > 0).astype(int)]

    def staged_decision_function(self, X):
        check_is_fitted(self)
        yield from self.model_.staged_predict(validate_features(self, X, reset=False))

    def staged_predict_proba(self, X):
        for f in self.staged_decision_function(X):
            yield self._proba(f)

    def staged_predict(self, X):
        for f in self.staged_decision_function(X):
            yield self.classes_[(f > 0).astype(int)]


def l1_post_processing(gbdt, X_train, y_train, X_test, *, n_alphas=100, eps=1e-3):
    """GBDT with L1-regularised post-processing (Friedman & Popescu; RGF paper Fig. 12).

    The leaves of all of ``gbdt``'s trees become 0/1 basis functions; their weights are refit by the whole lasso
    path (scikit-learn's ``lasso_path``, the paper used glmnet) on the centred targets (classification: +-1
    targets, the square loss of the paper's experiments). Returns ``(n_nonzero, test_outputs)``: the number of
    non-zero weights and the test outputs (centring added back) at each of the path's ``n_alphas`` penalties,
    from strongest to weakest.
    """
    import numpy as np
    from sklearn.linear_model import lasso_path
    from sklearn.preprocessing import OneHotEncoder

    leaves = gbdt.apply(X_train).reshape(X_train.shape[0], -1)
    encoder = OneHotEncoder(handle_unknown="ignore", dtype=np.float64).fit(leaves)
    phi = encoder.transform(leaves).tocsc()
    phi_test = encoder.transform(gbdt.apply(X_test).reshape(X_test.shape[0], -1)).tocsr()
    y = np.asarray(y_train, dtype=np.float64)
    mean = y.mean()
    _, coefs, _ = lasso_path(phi, y - mean, alphas=n_alphas, eps=eps)
    return (coefs != 0).sum(axis=0), mean + np.asarray(phi_test @ coefs)
