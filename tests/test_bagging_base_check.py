"""Issue 12, case 6: BaggedTreesClassifier refuses a base learner it cannot use at fit, not at predict."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from treeopt.forest.bagging import BaggedTreesClassifier
from treeopt.greedy.axis import AxisAlignedTreeClassifier
from treeopt.trees import Tree

X = np.random.default_rng(0).normal(size=(80, 3))
y = (X[:, 0] + X[:, 1] > 0).astype(int)


class NoSeed(ClassifierMixin, BaseEstimator):
    def fit(self, X, y):
        return self

    def predict_proba(self, X):
        return np.ones((len(X), 2)) / 2


class RegressionTree(ClassifierMixin, BaseEstimator):
    """Claims to classify, but its tree_ holds regression values."""

    def __init__(self, random_state=None):
        self.random_state = random_state

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.tree_ = Tree([-1], [-1], np.zeros((1, X.shape[1])), [0.0], [[0.5]], value_kind="regression")
        return self

    def predict_proba(self, X):
        return np.ones((len(X), len(self.classes_))) / len(self.classes_)


@pytest.mark.parametrize("base, message", [
    (LogisticRegression(), "gives no tree_ once fitted"),                        # before: failed at predict
    (DecisionTreeClassifier(), "tree_ of type sklearn.tree._tree.Tree"),          # before: failed at predict
    (DecisionTreeRegressor(), "not a classifier|predict_proba"),
    (NoSeed(), "no random_state parameter"),
    (RegressionTree(), "not a classification tree"),
])
def test_unusable_base_learner_fails_at_fit_with_a_clear_message(base, message):
    forest = BaggedTreesClassifier(base, n_estimators=3, random_state=0)
    with pytest.raises(ValueError, match=message):
        forest.fit(X, y)
    assert not hasattr(forest, "estimators_")


def test_usable_base_learner_still_fits_and_predicts_the_same_forest():
    a = BaggedTreesClassifier(AxisAlignedTreeClassifier(), n_estimators=5, random_state=3, n_jobs=1).fit(X, y)
    b = BaggedTreesClassifier(AxisAlignedTreeClassifier(), n_estimators=5, random_state=3, n_jobs=2).fit(X, y)
    assert len(a.estimators_) == 5
    assert np.array_equal(a.predict_proba(X), b.predict_proba(X))
    # prefix-stable: the first 3 trees of 5 are a forest of 3
    c = BaggedTreesClassifier(AxisAlignedTreeClassifier(), n_estimators=3, random_state=3).fit(X, y)
    assert np.array_equal(a.predict_proba(X, n_trees=3), c.predict_proba(X))
