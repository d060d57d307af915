"""OC1 Forest: bagged OC1 oblique trees, the CO2 paper's oblique-forest baseline (Table I, Fig. 2)."""

from __future__ import annotations

from ..greedy.oc1 import OC1TreeClassifier
from .bagging import BaggedTreesClassifier


class OC1ForestClassifier(BaggedTreesClassifier):
    """Bagging of :class:`~treeopt.greedy.oc1.OC1TreeClassifier` trees grown to purity.

    As in the CO2 paper §6: every tree sees a bootstrap sample, each node's OC1 search starts from the best
    axis split over ``max_features`` random features, OC1's own search settings keep their defaults, and
    probabilities are averaged. ``predict_proba(X, n_trees=m)`` scores the first m trees.

    Parameters
    ----------
    n_estimators : int, default=30
    max_features, n_restarts, n_perturbations, max_depth, min_samples_split, min_samples_leaf :
        Passed to every :class:`OC1TreeClassifier`.
    bootstrap : bool, default=True
    n_jobs : int or None
        Threads fitting trees in parallel.
    random_state : int, RandomState or None
    """

    _parameter_constraints = {
        **{k: v for k, v in BaggedTreesClassifier._parameter_constraints.items() if k != "estimator"},
        **OC1TreeClassifier._parameter_constraints,
    }

    def __init__(self, n_estimators=30, max_features="sqrt", n_restarts=20, n_perturbations=5, max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, bootstrap=True, n_jobs=None, random_state=None):
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.n_restarts = n_restarts
        self.n_perturbations = n_perturbations
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.bootstrap = bootstrap
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _make_estimator(self):
        return OC1TreeClassifier(max_features=self.max_features, n_restarts=self.n_restarts,
                                 n_perturbations=self.n_perturbations, max_depth=self.max_depth,
                                 min_samples_split=self.min_samples_split, min_samples_leaf=self.min_samples_leaf)
