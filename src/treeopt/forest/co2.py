"""CO2 Forest: bagged CO2 oblique trees (Norouzi et al., "CO2 Forest", Sec. 5-6, Table I, Fig. 2)."""

from __future__ import annotations

import numpy as np
from sklearn.base import _fit_context

from ..base import encode_classes, note_kernel_compile, validate_training_data
from ..greedy.co2 import feature_order_rows, grow_co2_tree
from ..greedy.co2 import CO2TreeClassifier
from ._ordered import ordered_map
from ._progress import TreeProgress
from .bagging import BaggedTreesClassifier, bootstrap_indices, tree_range, tree_seeds

_TREE_PARAMS = ("nu", "learning_rate", "max_features", "max_depth", "min_samples_split", "min_samples_leaf",
                "max_epochs", "tau", "tol", "n_iter_no_change", "tol_reference", "batch_size", "momentum", "axis_fallback", "compare_with_axis",
                "standardize")


class CO2ForestClassifier(BaggedTreesClassifier):
    """Bagging of :class:`~treeopt.greedy.co2.CO2TreeClassifier` trees grown to purity (paper Sec. 5).

    Every tree is grown on its own bootstrap sample with its own seed; each node's CO2 stump starts from
    the best axis split over ``max_features`` random features, so trees stay diverse although their
    splits are optimised. Class probabilities are averaged; ``predict_proba(X, n_trees=m)`` scores the
    first m trees (Table I's 10 / 30 / 1000-tree columns from one fit).

    Parameters
    ----------
    n_estimators : int, default=30
    nu, learning_rate, max_features, max_depth, min_samples_split, min_samples_leaf, max_epochs, tau, tol,
    n_iter_no_change, tol_reference, batch_size, momentum, axis_fallback, compare_with_axis, standardize :
        Passed to every :class:`CO2TreeClassifier` (see there). The paper selects ``nu`` from
        {0.1, 1, 4, 10, 43, 100} and ``learning_rate`` from {0.03, 0.01, 0.003} on a validation split.
        The stump stopping rule ("until the surrogate converges", Alg. 1 line 3; the paper names no rule)
        is ours: ``n_iter_no_change=10`` epochs without a relative fall of ``tol=1e-3`` of the best
        surrogate, chosen by the paper's validation protocol (validation error of 30-tree forests on the
        training/validation split of Letter, SatImage and Connect-4, 3 forest seeds, candidates 3/5/10/20
        epochs, tol 1e-2, a 50-epoch cap, tolerance relative to the initial surrogate): the cheapest rule
        within one seed standard deviation of the best on every set (``studies/co2_stop_rule.py``; 5 epochs
        passed on Letter and SatImage but costs Connect-4 0.6 points). Single :class:`CO2TreeClassifier`
        trees keep 20.
    bootstrap : bool, default=True
    n_jobs : int or None
        Threads fitting trees in parallel (None: 1, -1: all cores; the numba kernels release the GIL). Trees
        are handed out one at a time as threads become free.
    random_state : int, RandomState or None

    Attributes
    ----------
    estimators_ : list of fitted :class:`CO2TreeClassifier`, each with ``tree_``
        Fitted on encoded labels (``classes_ = 0..k-1``); inputs are validated once per forest and each tree
        is grown on its bootstrap sample as an index array, in one numba call that releases the GIL.
    classes_, n_features_in_
    n_oblique_splits_, n_axis_fallbacks_, n_collapsed_splits_ : float
        Mean per tree of the trees' split counts (see :class:`CO2TreeClassifier`).
    """

    _parameter_constraints = {
        **{k: v for k, v in BaggedTreesClassifier._parameter_constraints.items() if k != "estimator"},
        **{k: v for k, v in CO2TreeClassifier._parameter_constraints.items() if k != "random_state"},
    }

    def __init__(self, n_estimators=30, nu=10.0, learning_rate=0.01, max_features="sqrt", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, max_epochs=200, tau=1, tol=1e-3, n_iter_no_change=10,
                 tol_reference="best", batch_size=100, momentum=0.9, axis_fallback="collapsed", compare_with_axis=False, standardize="none", bootstrap=True,
                 n_jobs=None, random_state=None):
        self.n_estimators = n_estimators
        self.nu = nu
        self.learning_rate = learning_rate
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_epochs = max_epochs
        self.tau = tau
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.tol_reference = tol_reference
        self.batch_size = batch_size
        self.momentum = momentum
        self.axis_fallback = axis_fallback
        self.compare_with_axis = compare_with_axis
        self.standardize = standardize
        self.bootstrap = bootstrap
        self.n_jobs = n_jobs
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        self.estimators_ = list(self._fit_trees(X, y))
        for name in ("n_oblique_splits_", "n_axis_fallbacks_", "n_collapsed_splits_"):
            setattr(self, name, float(np.mean([getattr(est, name) for est in self.estimators_])))
        self._packed_forest = self._pack()
        return self

    def _fit_trees(self, X, y, trees=None):
        X, y = validate_training_data(self, X, y)
        self.classes_, y_enc = encode_classes(y)
        k = self.classes_.shape[0]
        n, p = X.shape
        trees = tree_range(trees, self.n_estimators)
        seeds = tree_seeds(self.random_state, self.n_estimators)[trees.start:trees.stop]
        order = np.empty((p, n), dtype=np.uint32)  # every feature's sorted rows, shared by the trees' axis searches
        progress = TreeProgress(type(self).__name__, len(seeds))
        note_kernel_compile(type(self).__name__, feature_order_rows, grow_co2_tree)

        def fit_tree(seed):
            est = self._make_estimator().set_params(random_state=seed)
            idx = bootstrap_indices(seed, n) if self.bootstrap else np.arange(n)
            est._fit_encoded(X, y_enc, k, idx, seed, order)
            est.classes_ = np.arange(k)
            est.n_features_in_ = X.shape[1]
            progress.tree_done()
            return est

        # Both phases hand out small tasks from one queue, so no thread idles while another still has a share
        # to do: the presort one feature at a time, then the trees one at a time (a fixed split of the trees
        # leaves one thread idle at the end for up to half the trees' spread). The kernels release the GIL;
        # tree i depends only on seeds[i], so the forest is the same for any n_jobs.
        n_workers = self._n_workers()
        for _ in ordered_map(lambda f: feature_order_rows(X, order, f, f + 1), range(p), n_workers, window=p):
            pass
        yield from ordered_map(fit_tree, seeds, n_workers)

    def _make_estimator(self):
        return CO2TreeClassifier(**{name: getattr(self, name) for name in _TREE_PARAMS})
