"""Provably optimal axis-aligned classification trees of bounded depth, by STreeD (``pystreed``).

STreeD (van der Linden, de Weerdt and Demirović, *Necessary and sufficient conditions for optimal decision
trees using dynamic programming*, NeurIPS 2023) solves, over binary features, the problem

    min_T  sum_i [T(x_i) != y_i]   over trees T of depth <= max_depth                (task "accuracy")

exactly, by dynamic programming over sub-trees with bounds (its ``optimization_task="accuracy"``: the training
misclassification count, no size penalty). This estimator makes the binary features (``binarize``): for every
feature, ``n_thresholds`` quantile tests plus every test of the CART (information gain) tree of the same depth.
The CART tree is therefore one of the trees searched, so the optimum's training error is never above CART's;
STreeD is also given CART's error as its upper bound (``upper_bound``: only trees at least as good are
searched for, which prunes). The result is stored in the shared ``treeopt.trees.Tree`` (axis-aligned nodes,
``x_f >= t`` goes right), so prediction, statistics, saving and ``init=`` of TAO or the non-greedy learner use
it like any other tree.

Time limit. STreeD stops after ``time_limit`` seconds. It then returns the best tree it has found without a
proof of optimality (it deepens its search one level at a time, so this is at worst the optimum of a smaller
depth); if it has found none at least as good as CART, CART's tree is returned. Either way the fit succeeds and
``proven_optimal_`` says whether the tree is proven optimal. pystreed 1.4.0 reports no lower bound (its
``SolverResult`` exposes feasibility, the optimality flag, the score, depth and size only), so the gap of an
unproven tree is unknown: ``optimality_gap_`` is 0.0 when proven and None otherwise.
"""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval

from ..base import TreeClassifierMixin, encode_classes, validate_training_data
from ..greedy import AxisAlignedTreeClassifier
from ..trees import LEAF, Tree
from .binarize import binarize, merge_splits, quantile_splits, tree_splits

# STreeD's own bound on max_depth (pystreed's parameter constraint)
MAX_DEPTH = 20


class OptimalTreeClassifier(TreeClassifierMixin, ClassifierMixin, BaseEstimator):
    """Axis-aligned tree of depth <= ``max_depth`` with the fewest training errors over the candidate splits
    (STreeD, NeurIPS 2023), never worse on the training set than the CART tree of the same depth.

    Parameters
    ----------
    max_depth : int, default=3
        Depth limit (1..20). The tree may be shallower where deeper splits do not lower the training error.
    n_thresholds : int, default=5
        Quantile tests per feature (at the i / (n_thresholds + 1) quantiles of the training values; a feature
        with at most n_thresholds + 1 distinct values gets a test between every pair). 0: CART's tests only.
    cart_thresholds : bool, default=True
        Also offer every split of the CART tree (``AxisAlignedTreeClassifier``, information gain) of the same
        depth, and bound the search by its training error. This is what guarantees "never worse than CART".
    time_limit : float, default=600
        Seconds STreeD may search (wall clock, as pystreed measures it); then the best tree found is kept.
    random_state : int, RandomState or None
        Seeds the CART tree (scikit-learn breaks ties between equally good splits at random).

    Attributes
    ----------
    tree_ : treeopt.trees.Tree
        The tree; leaves hold the class frequencies of their training points (``value_kind="probabilities"``;
        STreeD's label wins a tie; a leaf no training point reaches predicts its label with probability 1).
    classes_, n_features_in_
    split_features_, split_thresholds_ : ndarray
        The candidate tests ``x[f] >= t`` (the binary features STreeD searched over).
    proven_optimal_ : bool
        Whether STreeD proved the tree optimal (it finished within ``time_limit``).
    optimality_gap_ : float or None
        0.0 when proven; None otherwise (pystreed reports no lower bound, see the module docstring).
    train_errors_, cart_train_errors_ : int
        Training misclassifications of the tree and of the CART tree of the same depth.
    from_cart_ : bool
        True when STreeD found nothing at least as good as CART within the time limit and CART's tree is kept.
    solver_seconds_ : float
        Wall time of STreeD's search (the fit also binarises and grows the CART tree).
    fit_stats_ : dict
        The above as numbers, recorded in a run's metrics.json under ``tree``.
    """

    _parameter_constraints = {
        "max_depth": [Interval(Integral, 1, MAX_DEPTH, closed="both")],
        "n_thresholds": [Interval(Integral, 0, None, closed="left")],
        "cart_thresholds": ["boolean"],
        "time_limit": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(self, max_depth=3, n_thresholds=5, cart_thresholds=True, time_limit=600.0, random_state=None):
        self.max_depth = max_depth
        self.n_thresholds = n_thresholds
        self.cart_thresholds = cart_thresholds
        self.time_limit = time_limit
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X, y = validate_training_data(self, X, y)
        self.classes_, y_enc = encode_classes(y)
        k = self.classes_.shape[0]
        if not self.cart_thresholds and self.n_thresholds == 0:
            raise ValueError("no candidate splits: n_thresholds=0 needs cart_thresholds=True")
        cart = AxisAlignedTreeClassifier(max_depth=self.max_depth, random_state=self.random_state).fit(X, y_enc)
        cart_tree = cart.tree_
        self.cart_train_errors_ = int(np.sum(cart.predict(X) != y_enc))
        splits = [quantile_splits(X, self.n_thresholds)]
        if self.cart_thresholds:
            splits.append(tree_splits(cart_tree, X))
        self.split_features_, self.split_thresholds_ = merge_splits(*splits)

        tree, solved = None, None
        start = time.perf_counter()
        if self.split_features_.size:
            solved = self._solve(binarize(X, self.split_features_, self.split_thresholds_), y_enc)
        self.solver_seconds_ = time.perf_counter() - start
        if solved is not None:
            root, self.proven_optimal_ = solved
            tree = self._to_tree(root, X, y_enc, k)
        else:  # nothing as good as CART found in time: CART's tree, unproven; no split at all: a leaf, optimal
            self.proven_optimal_ = self.split_features_.size == 0
        self.from_cart_ = tree is None
        if tree is None:
            tree = Tree(cart_tree.left, cart_tree.right, cart_tree.W, cart_tree.bias, cart_tree.value,
                        feature=cart_tree.feature, n_samples=cart_tree.n_samples, value_kind=cart_tree.value_kind,
                        x_dtype=cart_tree.x_dtype)
        self.tree_ = tree
        self.train_errors_ = int(np.sum(self.tree_.predict_proba(X).argmax(axis=1) != y_enc))
        self.optimality_gap_ = 0.0 if self.proven_optimal_ else None
        self.fit_stats_ = {
            "proven_optimal": bool(self.proven_optimal_), "optimality_gap": self.optimality_gap_,
            "solver_seconds": self.solver_seconds_, "time_limit": float(self.time_limit),
            "n_binary_features": int(self.split_features_.size), "train_errors": self.train_errors_,
            "cart_train_errors": self.cart_train_errors_, "from_cart": bool(self.from_cart_),
        }
        return self

    def _solve(self, B, y):
        """STreeD on the binary matrix: (its root node, proven optimal) or None when it returns no tree."""
        from pystreed import STreeDClassifier

        upper = self.cart_train_errors_ if self.cart_thresholds else 2**31 - 1
        solver = STreeDClassifier(optimization_task="accuracy", max_depth=int(self.max_depth),
                                  time_limit=float(self.time_limit), upper_bound=upper, min_leaf_node_size=1)
        with warnings.catch_warnings():
            # "No feasible tree found": nothing within the upper bound before the time limit; handled by the caller
            warnings.filterwarnings("ignore", message="No feasible tree found")
            solver.fit(B, y)
        result = getattr(solver, "fit_result", None)
        if result is None or not result.is_feasible():
            return None
        return solver.tree_, bool(result.is_optimal())

    def _to_tree(self, root, X, y, k):
        """STreeD's node objects -> ``Tree``: binary feature j (satisfied = right) is ``x[f_j] >= t_j``."""
        left, right, feature, bias, label = [], [], [], [], []
        stack = [(root, 0)]
        nodes = [root]
        left.append(-1), right.append(-1), feature.append(LEAF), bias.append(0.0), label.append(0)
        while stack:
            node, i = stack.pop()
            if node.is_leaf_node():
                label[i] = int(node.label)
                continue
            j = int(node.feature)
            feature[i], bias[i] = int(self.split_features_[j]), float(self.split_thresholds_[j])
            for child, side in ((node.left_child, left), (node.right_child, right)):
                side[i] = len(nodes)
                nodes.append(child)
                left.append(-1), right.append(-1), feature.append(LEAF), bias.append(0.0), label.append(0)
                stack.append((child, side[i]))
        n_nodes = len(nodes)
        feature = np.asarray(feature, dtype=np.int64)
        inner = np.flatnonzero(feature >= 0)
        W = np.zeros((n_nodes, X.shape[1]))
        W[inner, feature[inner]] = 1.0
        shell = Tree(left, right, W, bias, np.zeros((n_nodes, k)), feature=feature)
        counts = np.zeros((n_nodes, k))
        np.add.at(counts, (shell.apply(X), y), 1.0)
        for i in np.argsort(-shell.depth, kind="stable"):  # children before parents
            if left[i] >= 0:
                counts[i] = counts[left[i]] + counts[right[i]]
        n_samples = counts.sum(axis=1)
        label = np.asarray(label, dtype=np.int64)
        label[inner] = counts[inner].argmax(axis=1)
        value = np.eye(k)[label]
        seen = n_samples > 0
        value[seen] = counts[seen] / n_samples[seen, None]
        # STreeD's label where the majority is tied (the same training error either way; keeps its predictions)
        tied = seen & (value[np.arange(n_nodes), label] >= value.max(axis=1))
        value[tied, label[tied]] += 1e-12
        return Tree(left, right, W, bias, value, feature=feature, n_samples=n_samples.astype(np.int64),
                    value_kind="probabilities")
