"""Axis-aligned decision trees grown greedily by information gain (the papers' univariate baseline).

scikit-learn's CART with ``criterion="entropy"`` already grows these exactly; this estimator fits it and
exposes the result as a treeopt ``Tree`` so it can initialise TAO and the non-greedy learner.
"""

from sklearn.base import _fit_context
from sklearn.tree import DecisionTreeClassifier

from ..base import encode_classes, validate_training_data
from ..trees import Tree
from ._estimator import GROWTH_CONSTRAINTS, MAX_FEATURES_CONSTRAINT, GreedyTreeClassifier


class AxisAlignedTreeClassifier(GreedyTreeClassifier):
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

    _parameter_constraints = {**GROWTH_CONSTRAINTS, "max_features": MAX_FEATURES_CONSTRAINT}

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

    def _fit_sample(self, X, y, sample):
        """scikit-learn's CART grows on a copy of the sampled rows (see :meth:`GreedyTreeClassifier._fit_sample`)."""
        return self.fit(X if sample is None else X[sample], y)
