"""scikit-learn's estimator checks for the greedy trees and the bagged forests."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from treeopt.forest.bagging import BaggedTreesClassifier
from treeopt.forest.oc1 import OC1ForestClassifier
from treeopt.greedy.axis import AxisAlignedTreeClassifier
from treeopt.greedy.oc1 import OC1TreeClassifier
from treeopt.greedy.random_oblique import RandomObliqueTreeClassifier
from treeopt.greedy.two_probe import TwoProbeTreeClassifier


@parametrize_with_checks([
    AxisAlignedTreeClassifier(),
    RandomObliqueTreeClassifier(n_hyperplanes=3),
    OC1TreeClassifier(n_restarts=2, n_perturbations=1),
    BaggedTreesClassifier(RandomObliqueTreeClassifier(n_hyperplanes=3), n_estimators=3),
    OC1ForestClassifier(n_estimators=3, n_restarts=1, n_perturbations=1),
    TwoProbeTreeClassifier(n_pairs=20),
])
def test_sklearn_compatible(estimator, check):
    check(estimator)
