"""The axis-aligned baseline is scikit-learn's entropy CART, exposed as a treeopt Tree."""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.tree import DecisionTreeClassifier

from treeopt.greedy import AxisAlignedTreeClassifier


@pytest.mark.parametrize("max_depth", [2, 6, None])
def test_predictions_equal_sklearn_entropy_cart(max_depth):
    X, y = load_digits(return_X_y=True)
    labels = np.array(list("abcdefghij"))[y]  # string labels map back through classes_
    ours = AxisAlignedTreeClassifier(max_depth=max_depth, random_state=0).fit(X, labels)
    ref = DecisionTreeClassifier(criterion="entropy", max_depth=max_depth, random_state=0).fit(X, labels)
    assert np.array_equal(ours.predict(X), ref.predict(X))
    assert np.array_equal(ours.predict_proba(X), ref.predict_proba(X))
    assert ours.tree_.max_depth == ref.get_depth()
    assert ours.tree_.stats()["n_leaves"] == ref.get_n_leaves()


def test_one_class_and_nan_are_clear_errors():
    X = np.random.default_rng(0).standard_normal((20, 3))
    with pytest.raises(ValueError, match="at least 2"):
        AxisAlignedTreeClassifier().fit(X, np.zeros(20))
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        AxisAlignedTreeClassifier().fit(X, np.arange(20) % 2)
