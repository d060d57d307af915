"""Axis-aligned decision trees grown greedily by information gain (the papers' univariate baseline).

scikit-learn's CART with ``criterion="entropy"`` already grows these exactly; this estimator fits it and
exposes the result as a treeopt ``Tree`` so it can initialise TAO and the non-greedy learner.
"""

from numbers import Integral, Real

from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..base import encode_classes, validate_features, validate_training_data
from ..trees import Tree


class AxisAlignedTreeClassifier(ClassifierMixin, BaseEstimator):
    """Univariate decision tree by information gain (C4.5/CART-style greedy induction).

    Parameters
    ----------
    max_depth : int or None
        Grow to purity when None.
    min_samples_leaf, min_samples_split : int
        Usual stopping rules.
    max_features : int, float, "sqrt", "log2" or None
        Features tried per node (None: all of them).
    random_state : int, RandomState or None

    Attributes
    ----------
    tree_ : treeopt.trees.Tree
        The fitted tree; leaves hold class probabilities (``value_kind="probabilities"``).
    classes_, n_features_in_
    """

    _parameter_constraints = {
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "min_samples_split": [Interval(Integral, 2, None, closed="left")],
        "max_features": [Interval(Integral, 1, None, closed="left"), Interval(Real, 0, 1, closed="right"),
                         StrOptions({"sqrt", "log2"}), None],
        "random_state": ["random_state"],
    }

    def __init__(self, max_depth=None, min_samples_leaf=1, min_samples_split=2, max_features=None,
                 random_state=None):
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.min_samples_split = min_samples_split
        self.max_features = max_features
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X, y = validate_training_data(self, X, y)
        self.classes_, y_enc = encode_classes(y)
        cart = DecisionTreeClassifier(criterion="entropy", max_depth=self.max_depth,
                                      min_samples_leaf=self.min_samples_leaf,
                                      min_samples_split=self.min_samples_split, max_features=self.max_features,
                                      random_state=self.random_state).fit(X, y_enc)
        self.tree_ = Tree.from_sklearn(cart)
        return self

    def predict_proba(self, X):
        check_is_fitted(self)
        return self.tree_.predict_proba(validate_features(self, X, reset=False))

    def predict(self, X):
        proba = self.predict_proba(X)
        return self.classes_[proba.argmax(axis=1)]

    def apply(self, X):
        check_is_fitted(self)
        return self.tree_.apply(validate_features(self, X, reset=False))
