"""Bootstrap aggregation (Breiman 1996) of any treeopt tree classifier.

Every tree gets its own seed, derived from ``random_state`` by ``numpy.random.SeedSequence.spawn``, which
fixes both its bootstrap sample and its ``random_state``. Tree i therefore depends only on
``(random_state, i)``: the first m trees of a forest of n >= m trees are exactly a forest of m trees, so
``predict_proba(X, n_trees=m)`` scores the smaller forest without refitting (CO2 paper Fig. 2, Table I).
Trees are fitted in threads; the numba kernels release the GIL.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from joblib import effective_n_jobs
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone, is_classifier
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import check_is_fitted

from ..base import encode_classes, validate_features, validate_training_data
from ..trees import Tree
from ..trees import forest_accumulate
from ._ordered import ordered_map
from ._predict import dense_oblique_rows_of_trees, forest_accumulate_dense
from ._progress import TreeProgress


def tree_seeds(random_state, n_trees):
    """Per-tree integer seeds; seed i does not depend on ``n_trees`` (prefix-stable)."""
    root = check_random_state(random_state).randint(np.iinfo(np.int32).max)
    children = np.random.SeedSequence(root).spawn(n_trees)
    return [int(c.generate_state(1, dtype=np.uint32)[0]) for c in children]


def tree_range(trees, n_estimators):
    """``trees`` (None: all of ``range(n_estimators)``) checked to be a non-empty ``range`` of step 1 inside it."""
    if trees is None:
        return range(int(n_estimators))
    if not isinstance(trees, range) or trees.step != 1 or len(trees) == 0:
        raise ValueError(f"trees must be a non-empty range of tree indices with step 1, got {trees!r}")
    if trees.start < 0 or trees.stop > n_estimators:
        raise ValueError(f"trees {trees.start}..{trees.stop - 1} are not all among the forest's "
                         f"{n_estimators} trees (0..{n_estimators - 1})")
    return trees


class PackedForest:
    """The trees of a forest concatenated into flat node arrays (see :func:`forest_accumulate`).

    Leaf rows hold each tree's class probabilities (``Tree.leaf_probabilities``) in the forest's
    columns: a tree fitted on a bootstrap sample that missed some classes has zeros there.
    """

    def __init__(self, trees, tree_classes, n_classes, n_features):
        sizes = np.array([t.n_nodes for t in trees], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        self.roots = offsets[:-1].copy()
        total = int(offsets[-1])
        shift = lambda a, off: np.where(a >= 0, a + off, -1)
        self.left = np.concatenate([shift(t.left, o) for t, o in zip(trees, offsets)]).astype(np.int64)
        self.right = np.concatenate([shift(t.right, o) for t, o in zip(trees, offsets)]).astype(np.int64)
        self.feature = np.concatenate([t.feature for t in trees]).astype(np.int64)
        self.bias = np.concatenate([t.bias for t in trees]).astype(np.float64)
        self.values = np.zeros((total, n_classes))
        for t, o, cls in zip(trees, offsets, tree_classes):
            self.values[o:o + t.n_nodes][:, cls] = t.leaf_probabilities()
        self.x_float32 = [t.x_dtype == "float32" for t in trees]
        self.n_features = n_features
        self._trees = list(trees)  # references, for the CSR rows if they are ever needed
        # dense oblique rows when they route exactly as the CSR ones and fit in twice their memory (CO2);
        # the concatenated CSR rows are then not kept (they would be the largest part of the copy)
        self.dense = dense_oblique_rows_of_trees(self._trees, n_features)
        self._csr = None if self.dense is not None else self._concatenated_csr()

    def _concatenated_csr(self):
        nnz = np.concatenate([[0]] + [np.diff(t.W.indptr) for t in self._trees])
        return (np.cumsum(nnz).astype(np.int64), np.concatenate([t.W.indices for t in self._trees]).astype(np.int64),
                np.concatenate([t.W.data for t in self._trees]).astype(np.float64))

    def csr(self):
        """``(indptr, indices, data)`` of every node's weight row, concatenated over the trees (built on demand)."""
        if self._csr is None:
            self._csr = self._concatenated_csr()
        return self._csr

    def accumulate(self, X, first, last, out):
        """``out += sum of the probability rows of trees first..last-1``."""
        if self.dense is not None:
            orow, W = self.dense
            forest_accumulate_dense(X, self.roots, self.left, self.right, self.feature, self.bias, orow, W,
                                    self.values, first, last, out)
            return
        indptr, indices, data = self.csr()
        forest_accumulate(X, (self.roots, self.left, self.right, self.feature, self.bias, indptr, indices, data,
                              self.values), first, last, out)


class RunningProba:
    """The sum of a forest's tree probabilities on fixed rows ``X``, added one tree at a time.

    With ``block_trees`` = s the trees are summed in blocks of s (trees 0..s-1, s..2s-1, ...): each block from
    zero, the finished blocks' sums added to each other in block order (:func:`blocked_sum`). This is how a
    forest split into jobs of s trees each is merged (:mod:`treeopt.experiments.run.blocks`), so one job and the
    blocks give the same bits; floating-point addition is not associative, so a different s may differ in the
    last bits (a forest of at most s trees is summed exactly as without blocks).

    ``add(estimator)`` adds one fitted tree (an element of ``estimators_``, or one yielded by
    :meth:`BaggedTreesClassifier.fit_iter`) and the tree can then be dropped; ``proba()`` is the mean over the
    trees added so far. The trees are added through the same kernel and in the same order as
    :meth:`BaggedTreesClassifier.staged_predict_proba` adds them (a one-tree :class:`PackedForest`, or the tree's
    own ``predict_proba`` for float32 trees), so after m trees ``proba()`` equals ``predict_proba(X, n_trees=m)``
    of the whole forest bit for bit.
    """

    def __init__(self, forest, X, block_trees=None):
        self.X = validate_features(forest, X, reset=False)
        self.n_classes = forest.classes_.shape[0]
        self.total = np.zeros((self.X.shape[0], self.n_classes))  # the sum of the current block's trees
        self.n_trees = 0
        if block_trees is not None and (not isinstance(block_trees, Integral) or block_trees < 1):
            raise ValueError(f"block_trees must be a positive integer or None, got {block_trees!r}")
        self.block_trees = block_trees
        self.done = None if block_trees is None else np.zeros_like(self.total)  # the sum of the finished blocks

    @staticmethod
    def packed(estimator, n_classes):
        """The tree of ``estimator`` packed for :meth:`add` (None for float32 trees); pack once, add to several sums."""
        tree = estimator.tree_
        if tree.x_dtype != "float64":
            return None
        return PackedForest([tree], [np.asarray(estimator.classes_, dtype=np.int64)], n_classes, tree.n_features)

    def add(self, estimator, packed=False):
        """Add one tree; ``packed``: its :meth:`packed` copy when already made."""
        if packed is False:
            packed = self.packed(estimator, self.n_classes)
        if self.block_trees is not None and self.n_trees and self.n_trees % self.block_trees == 0:
            self.done += self.total  # a block is finished: its sum joins the others', in block order
            self.total[:] = 0.0
        if packed is not None:
            packed.accumulate(self.X, 0, 1, self.total)
        else:
            self.total[:, np.asarray(estimator.classes_, dtype=np.int64)] += estimator.tree_.predict_proba(self.X)
        self.n_trees += 1

    def sum(self):
        """The sum of the probability rows of the trees added so far (finished blocks first, see the class)."""
        return self.total if self.done is None else blocked_sum(self.done, self.total)

    def proba(self):
        return self.sum() / self.n_trees


def blocked_sum(done, block):
    """The sum over a forest's first m trees when trees are summed in blocks: ``done`` (the sums of the finished
    blocks, added in block order) plus ``block`` (the current block's sum of its first trees up to m). One
    expression for a forest scored in one job (:class:`RunningProba` with ``block_trees``) and for block jobs
    merged (:mod:`treeopt.experiments.run.blocks`), so both give the same bits."""
    return done + block


def predict_proba_saved(path, X, n_trees=None):
    """Mean class probabilities of the trees of a saved forest (a run's ``model.npz``), read and added one tree at
    a time (:func:`treeopt.trees.iter_trees`), so a 1000-tree forest predicts in the memory of one tree.

    The trees must hold their leaf rows in the forest's class columns (as runs save forests), all with the same
    number of columns. Sums go through the kernel and order of :meth:`BaggedTreesClassifier.predict_proba`: the
    result equals the fitted forest's ``predict_proba(X, n_trees=n_trees)`` bit for bit.
    """
    from ..trees import iter_trees

    X = np.ascontiguousarray(X, dtype=np.float64)
    total, count = None, 0
    for tree in iter_trees(path):
        if n_trees is not None and count >= n_trees:
            break
        if total is None:
            if X.ndim != 2 or X.shape[1] != tree.n_features:
                raise ValueError(f"X has shape {X.shape}; the trees of {path} expect {tree.n_features} features")
            if not np.all(np.isfinite(X)):
                raise ValueError("X holds NaN or infinite values")
            total = np.zeros((X.shape[0], tree.n_outputs))
        if tree.n_outputs != total.shape[1]:
            raise ValueError(f"{path}: tree {count} has {tree.n_outputs} class columns, the first had "
                             f"{total.shape[1]}; a forest saved by a run holds every tree in the forest's columns")
        if tree.x_dtype == "float64":
            classes = np.arange(total.shape[1])
            PackedForest([tree], [classes], total.shape[1], X.shape[1]).accumulate(X, 0, 1, total)
        else:
            total += tree.predict_proba(X)
        count += 1
    return total / count


def _single_leaf(estimator, n_features, label, n_samples):
    """A fitted stand-in for a bootstrap sample that holds one class only (the base learner would refuse)."""
    estimator.classes_ = np.array([label])
    estimator.n_features_in_ = n_features
    estimator.tree_ = Tree([-1], [-1], np.zeros((1, n_features)), [0.0], [[1.0]], n_samples=[n_samples],
                           value_kind="probabilities")
    return estimator


def bootstrap_indices(seed, n):
    """The bootstrap sample of the tree with this seed (a stream apart from the tree's own seed)."""
    return np.random.default_rng([seed, 1]).integers(0, n, n)


def _fit_one(estimator, X, y, seed, bootstrap, progress=None):
    n = X.shape[0]
    idx = bootstrap_indices(seed, n) if bootstrap else None
    y_tree = y if idx is None else y[idx]
    estimator.set_params(random_state=seed)
    if np.all(y_tree == y_tree[0]):
        estimator = _single_leaf(estimator, X.shape[1], y_tree[0], n)
    elif hasattr(estimator, "_fit_sample"):  # treeopt's greedy trees grow on the sample without copying its rows
        estimator._validate_params()
        estimator = estimator._fit_sample(X, y_tree, idx)
    else:
        estimator = estimator.fit(X if idx is None else X[idx], y_tree)
    if progress is not None:
        progress.tree_done()
    return estimator


class BaggedTreesClassifier(ClassifierMixin, BaseEstimator):
    """Forest of trees, each fitted on a bootstrap sample; probabilities are averaged.

    Parameters
    ----------
    estimator : classifier with ``random_state`` and, once fitted, ``tree_`` and ``classes_``
        E.g. ``OC1TreeClassifier()``, ``CO2TreeClassifier()``, ``RandomObliqueTreeClassifier()``.
    n_estimators : int, default=30
    bootstrap : bool, default=True
        Sample n points with replacement per tree; False fits every tree on all points (only the
        tree's own randomness then differs).
    n_jobs : int or None
        Threads used to fit trees (None: 1, -1: all cores).
    random_state : int, RandomState or None

    Attributes
    ----------
    estimators_ : list of fitted estimators, each with ``tree_``
        They were fitted on encoded labels: their ``classes_`` index into the forest's ``classes_``.
    classes_, n_features_in_
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict_proba"])],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "bootstrap": ["boolean"],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator, n_estimators=30, bootstrap=True, n_jobs=None, random_state=None):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.bootstrap = bootstrap
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _make_estimator(self):
        return clone(self.estimator)

    _TREE_LEARNERS = ("AxisAlignedTreeClassifier, CO2TreeClassifier, OC1TreeClassifier or "
                      "RandomObliqueTreeClassifier from treeopt.greedy")

    def _check_base(self, estimator):
        """Before any fitting: the base learner must be a classifier that takes a ``random_state``."""
        name = type(estimator).__name__
        if not is_classifier(estimator):
            raise ValueError(f"estimator {name} is not a classifier; BaggedTreesClassifier bags tree classifiers "
                             f"such as {self._TREE_LEARNERS}")
        if "random_state" not in estimator.get_params(deep=False):
            raise ValueError(f"estimator {name} has no random_state parameter; every tree of the forest is given "
                             f"its own seed through it")

    def _check_fitted_base(self, estimator, n_features):
        """After fitting a tree: it must expose ``tree_`` in treeopt's format, with a row per class it saw."""
        name = type(estimator).__name__
        tree = getattr(estimator, "tree_", None)
        if not isinstance(tree, Tree):
            got = "no tree_" if tree is None else f"a tree_ of type {type(tree).__module__}.{type(tree).__name__}"
            raise ValueError(f"estimator {name} gives {got} once fitted; BaggedTreesClassifier needs a "
                             f"treeopt.trees.Tree as tree_ to score the forest: use {self._TREE_LEARNERS}")
        classes = getattr(estimator, "classes_", None)
        if tree.value_kind == "regression" or classes is None or tree.n_outputs != len(classes):
            raise ValueError(f"estimator {name}'s tree_ has {tree.n_outputs} outputs ({tree.value_kind}) for "
                             f"classes_ {classes}: not a classification tree")
        if tree.n_features != n_features:
            raise ValueError(f"estimator {name}'s tree_ expects {tree.n_features} features, the data have "
                             f"{n_features}")

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        self.estimators_ = list(self._fit_trees(X, y))
        self._packed_forest = self._pack()
        return self

    def fit_iter(self, X, y, trees=None):
        """Fit the forest tree by tree, yielding each fitted tree's estimator in order, and keep none of them.

        The trees are those :meth:`fit` grows (tree i depends only on ``(random_state, i)``), handed out in
        order while the next ones are being fitted in ``n_jobs`` threads; at most ``2 * n_jobs`` fitted trees
        wait to be taken, so memory does not grow with ``n_estimators`` when the caller drops each tree after
        use (adds its class scores to a running sum, writes it to disk: :mod:`treeopt.experiments.run.streamed`).
        ``classes_`` and ``n_features_in_`` are set before the first tree; ``estimators_`` is not set.

        ``trees``: a ``range`` of tree indices within ``0..n_estimators-1`` (step 1) to fit only those, e.g. one
        block of a forest split into several jobs (:mod:`treeopt.experiments.run.blocks`); tree i is the same tree
        as in the whole forest, since its seed depends only on ``(random_state, i)``.
        """
        self._validate_params()
        yield from self._fit_trees(X, y, tree_range(trees, self.n_estimators))

    def _n_workers(self):
        return max(1, min(effective_n_jobs(self.n_jobs), self.n_estimators))

    def _fit_trees(self, X, y, trees=None):
        """Validate, set ``classes_`` and ``n_features_in_``, and yield the fitted trees ``trees`` (default: all)
        in order."""
        X, y = validate_training_data(self, X, y)
        self.classes_, y_enc = encode_classes(y)
        trees = tree_range(trees, self.n_estimators)
        seeds = tree_seeds(self.random_state, self.n_estimators)[trees.start:trees.stop]
        self._check_base(self._make_estimator())
        # the first tree alone, so that an unusable base learner fails now and fast, not at predict
        progress = TreeProgress(type(self).__name__, len(seeds))
        first = _fit_one(self._make_estimator(), X, y_enc, seeds[0], self.bootstrap, progress)
        self._check_fitted_base(first, X.shape[1])
        yield first
        del first
        fit = lambda seed: _fit_one(self._make_estimator(), X, y_enc, seed, self.bootstrap, progress)  # noqa: E731
        for estimator in ordered_map(fit, seeds[1:], self._n_workers()):
            self._check_fitted_base(estimator, X.shape[1])
            yield estimator

    def _n_trees(self, n_trees):
        if n_trees is None:
            return len(self.estimators_)
        if not 1 <= n_trees <= len(self.estimators_):
            raise ValueError(f"n_trees must be in [1, {len(self.estimators_)}], got {n_trees}")
        return int(n_trees)

    def _pack(self):
        """Packed copy of the fitted trees for :meth:`staged_predict_proba` (built once, at the end of fit)."""
        trees = [est.tree_ for est in self.estimators_]
        if any(t.x_dtype != "float64" for t in trees):
            return None
        return PackedForest(trees, [np.asarray(est.classes_, dtype=np.int64) for est in self.estimators_],
                            self.classes_.shape[0], self.n_features_in_)

    def _packed(self):
        packed = getattr(self, "_packed_forest", None)
        if packed is None or len(packed.roots) != len(self.estimators_):
            return None
        return packed

    def staged_predict_proba(self, X, n_trees=None):
        """Yield ``predict_proba`` of the forests made of the first ``m`` trees, for each m in ``n_trees``
        (default: every m = 1..n_estimators, in order).

        One pass over the trees: the sum is accumulated once (prefix by prefix, in one numba kernel over
        a packed copy of the trees) and read off at each requested size.
        """
        check_is_fitted(self)
        X = validate_features(self, X, reset=False)
        if n_trees is None:
            sizes = list(range(1, len(self.estimators_) + 1))
        else:
            sizes = sorted({self._n_trees(m) for m in np.atleast_1d(n_trees)})
        total = np.zeros((X.shape[0], self.classes_.shape[0]))
        packed = self._packed()
        done = 0
        for m in sizes:
            if packed is not None:
                packed.accumulate(X, done, m, total)
            else:
                for est in self.estimators_[done:m]:
                    # a tree's classes_ are encoded forest labels; its bootstrap sample may have missed some
                    total[:, est.classes_] += est.tree_.predict_proba(X)
            done = m
            yield total / m

    def predict_proba(self, X, n_trees=None):
        """Mean of the trees' class probabilities (the first ``n_trees`` trees when given)."""
        check_is_fitted(self)
        return next(self.staged_predict_proba(X, [self._n_trees(n_trees)]))

    def predict(self, X, n_trees=None):
        proba = self.predict_proba(X, n_trees=n_trees)  # checks fitting before classes_ is read
        return self.classes_[proba.argmax(axis=1)]

    @property
    def trees_(self):
        """The fitted trees (``treeopt.trees.Tree``), in order."""
        check_is_fitted(self)
        return [est.tree_ for est in self.estimators_]
