"""Forests that label every pixel from the window around it (CO2 paper Sec. 6.2, Table II, Figs. 3-4).

Training follows the paper: every tree gets its own sample of ``windows_per_tree`` training windows
(256,000 in the paper), drawn so that each label has an equal number of windows; windows are normalised to
zero mean and unit variance per value with statistics of the training set; the 15-pixel border is ignored.
At test time the forest's averaged class probabilities are re-weighted "by the inverse of the factor that
each label was undersampled or oversampled during training": balanced sampling multiplies class c's share
by ``(1/k) / pi_c`` (``pi_c`` its share of training pixels), so the probabilities are multiplied by
``k pi_c`` and renormalised.

Splits (``split_kind``):

* ``"axis"``: random-forest trees (scikit-learn ``DecisionTreeClassifier``, entropy, ``max_features``
  random features per node); the per-tree window sample takes bootstrap's place.
* ``"two_probe"``: :class:`treeopt.greedy.TwoProbeTreeClassifier` (best of ``n_pairs`` pixel differences).
* ``"co2"``: :class:`treeopt.greedy.CO2TreeClassifier` (``nu``, ``learning_rate``, ``max_epochs``; the paper
  picks eta = 1e-4, nu = 1 on LFW's validation images).

Memory. Fitting holds, per tree being fitted (``n_jobs`` at once), its window matrix
``windows_per_tree x d`` (d = 2,883 for 31 x 31 windows; float32 for ``"axis"``, float64 otherwise) plus the
greedy learners' copy of the node being split (at most as large): with the paper's 256,000 windows that is
2.9 GB (axis) or 5.9-11.8 GB (two-probe, CO2) per tree (one CO2 tree's fit peaked at 10.3 GB, and at 16.1 GB
with ``axis_sort="presorted"``, whose per-feature orders add 2 x 4 bytes per window value); the default profile's
2,000 windows take 23 MB (axis) or 46-92 MB per tree.
The per-class pixel index lists take 4 bytes per training pixel. Prediction cuts no windows: each tree reads
the values its nodes test straight from the images (:mod:`treeopt.segmentation.scoring`, the same label maps and
probabilities to the bit), one tree at a time over all images, holding float64 class sums per scored pixel
(n_images x pixels x k). The normalisation statistics come from a uniform sample of ``n_stats_windows`` training
windows, summed ``chunk_size`` at a time.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..forest.bagging import blocked_sum, tree_range, tree_seeds
from ..base import MAX_FEATURES_CONSTRAINT
from ..trees import Tree
from .scoring import PackedTree, WindowScorer
from .windows import (IGNORE, class_counts, class_pools, confusion, extract_windows, jaccard_from_confusion, n_valid,
                      valid_flat, valid_mask, window_dim)

SPLIT_KINDS = ("axis", "two_probe", "co2")


def _check_images(X, y=None):
    X = np.asarray(X)
    if X.ndim != 4 or X.shape[-1] != 3:
        raise ValueError(f"images must have shape (n, H, W, 3), got {X.shape}")
    if X.shape[0] == 0:
        raise ValueError("no images")
    if X.dtype.kind == "f" and not np.all(np.isfinite(X)):
        raise ValueError("images contain NaN or infinity")
    if y is None:
        return X
    y = np.asarray(y)
    if y.shape != X.shape[:3]:
        raise ValueError(f"label maps have shape {y.shape}, expected {X.shape[:3]}")
    return X, y


class ForestSegmenter(BaseEstimator):
    """Per-pixel forest over ``window_size``-square RGB windows (see the module docstring).

    Parameters
    ----------
    split_kind : {"axis", "two_probe", "co2"}, default="axis"
    n_estimators : int, default=16
    max_depth : int or None, default=None
    windows_per_tree : int, default=256000
        Training windows sampled per tree, split equally among the classes.
    window_size : odd int, default=31
    border : int, default=15
        Pixels at the image edge whose labels are ignored; must be at least ``window_size // 2``.
    max_features : int, float, "sqrt", "log2" or None, default="sqrt"
        "axis": features tried per node; "co2": q, the features whose best axis split starts each stump.
    n_pairs : int, default=1000
        "two_probe": feature pairs sampled per node.
    nu, learning_rate, max_epochs : "co2" stump optimisation (see CO2TreeClassifier).
    min_samples_leaf : int, default=1
    reweight : bool, default=True
        Multiply class probabilities by the inverse sampling factor (the paper); False keeps them balanced.
    n_stats_windows : int, default=20000
    chunk_size : int, default=4096
        Windows cut at a time for the normalisation statistics.
    n_jobs : int or None
        Threads fitting trees and labelling images.
    random_state : int, RandomState or None
    grow_order : {"depth_first", "level"}, default="depth_first"
        "two_probe" and "co2": the order a tree's nodes are split in. "level" splits every node of a depth before
        the next, so the forest grown with ``max_depth = d`` is the deeper forest's trees cut at depth d, tree for
        tree (:meth:`depth_sums` scores every depth of a sweep from one fit, CO2 paper Fig. 4 left). "axis"
        (scikit-learn's trees) grows depth first only.
    axis_sort : {"per_node", "presorted"}, default="per_node"
        "co2": how a node's axis search (the stump's start) orders its points along each of its q candidate features
        (see CO2TreeClassifier): sorted at the node ("per_node"), or presorted once per tree for all 2,883 values and
        kept sorted at every split ("presorted", 2 x 4 bytes per window and value more memory). With q = 53 of 2,883
        the presort is most of the sorting work; the two find the same splits up to the rounding of tied values'
        sums (docs/cost.md "Segmentation: the axis search without a presort").

    Attributes
    ----------
    estimators_ : fitted trees (each with ``tree_``); their ``classes_`` index ``classes_``
    classes_ : ndarray, the labels 0..k-1 seen in the training images
    n_features_in_ : int, window values per pixel (2,883)
    window_mean_, window_std_ : normalisation statistics (length n_features_in_)
    class_pixels_ : training pixels per class (inside the border)
    class_weights_ : k * pi_c, the inverse sampling factors applied at test time
    """

    _parameter_constraints = {
        "split_kind": [StrOptions(set(SPLIT_KINDS))],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "windows_per_tree": [Interval(Integral, 2, None, closed="left")],
        "window_size": [Interval(Integral, 1, None, closed="left")],
        "border": [Interval(Integral, 0, None, closed="left")],
        "max_features": MAX_FEATURES_CONSTRAINT,
        "n_pairs": [Interval(Integral, 1, None, closed="left")],
        "nu": [Interval(Real, 0, None, closed="neither")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "max_epochs": [Interval(Integral, 1, None, closed="left")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "reweight": ["boolean"],
        "n_stats_windows": [Interval(Integral, 1, None, closed="left")],
        "chunk_size": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "grow_order": [StrOptions({"depth_first", "level"})],
        "axis_sort": [StrOptions({"per_node", "presorted"})],
    }

    def __init__(self, split_kind="axis", n_estimators=16, max_depth=None, windows_per_tree=256000, window_size=31,
                 border=15, max_features="sqrt", n_pairs=1000, nu=1.0, learning_rate=1e-4, max_epochs=200,
                 min_samples_leaf=1, reweight=True, n_stats_windows=20000, chunk_size=4096, n_jobs=None,
                 random_state=None, grow_order="depth_first", axis_sort="per_node"):
        self.split_kind = split_kind
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.windows_per_tree = windows_per_tree
        self.window_size = window_size
        self.border = border
        self.max_features = max_features
        self.n_pairs = n_pairs
        self.nu = nu
        self.learning_rate = learning_rate
        self.max_epochs = max_epochs
        self.min_samples_leaf = min_samples_leaf
        self.reweight = reweight
        self.n_stats_windows = n_stats_windows
        self.chunk_size = chunk_size
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.grow_order = grow_order
        self.axis_sort = axis_sort

    # ------------------------------------------------------------------------------------------ fit
    def _tree(self, seed):
        if self.split_kind == "axis":
            from sklearn.tree import DecisionTreeClassifier

            return DecisionTreeClassifier(criterion="entropy", max_features=self.max_features,
                                          max_depth=self.max_depth, min_samples_leaf=self.min_samples_leaf,
                                          random_state=seed)
        if self.split_kind == "two_probe":
            from ..greedy.two_probe import TwoProbeTreeClassifier

            return TwoProbeTreeClassifier(n_pairs=self.n_pairs, max_depth=self.max_depth,
                                          min_samples_leaf=self.min_samples_leaf, random_state=seed,
                                          grow_order=self.grow_order)
        from ..greedy.co2 import CO2TreeClassifier

        return CO2TreeClassifier(nu=self.nu, learning_rate=self.learning_rate, max_features=self.max_features,
                                 max_depth=self.max_depth, max_epochs=self.max_epochs,
                                 min_samples_leaf=self.min_samples_leaf, random_state=seed,
                                 grow_order=self.grow_order, axis_sort=self.axis_sort)

    def _sample(self, rng, n_per_class):
        """Flat pixel indices of one tree's balanced window sample, and its labels."""
        picks, labels = [], []
        for c, pool in enumerate(self._pools):
            replace = pool.shape[0] < n_per_class
            idx = rng.choice(pool.shape[0], n_per_class, replace=replace)
            picks.append(pool[idx])
            labels.append(np.full(n_per_class, c, dtype=np.int64))
        return np.concatenate(picks), np.concatenate(labels)

    def _windows(self, images, flat, dtype, out=None):
        n_img, H, W = images.shape[:3]
        img, rem = np.divmod(flat.astype(np.int64), H * W)
        rows, cols = np.divmod(rem, W)
        return extract_windows(images, img, rows, cols, self.window_size, self.window_mean_, self.window_std_,
                               dtype=dtype, out=out)

    def _fit_tree(self, images, seed, n_per_class):
        rng = np.random.default_rng([seed, 3])
        flat, y = self._sample(rng, n_per_class)
        X = self._windows(images, flat, np.float32 if self.split_kind == "axis" else np.float64)
        return self._tree(seed).fit(X, y)

    def fit(self, X, y):
        """Fit on training images ``X`` (n, H, W, 3) and their label maps ``y`` (n, H, W), labels 0..k-1."""
        return self.fit_trees(X, y, None)

    def fit_trees(self, X, y, trees):
        """Fit only trees ``trees`` (a range, None: all) of the forest :meth:`fit` grows: the same trees, since tree
        i's seed and window sample depend only on ``random_state`` and i, and the normalisation statistics on the
        first tree's seed (a tree block job, :mod:`treeopt.experiments.run.segment_runs`). ``estimators_`` holds those
        trees; ``first_tree_`` the number of the first."""
        self._validate_params()
        trees = tree_range(trees, self.n_estimators)
        images, labels = _check_images(X, y)
        if self.window_size % 2 != 1:
            raise ValueError(f"window_size must be odd, got {self.window_size}")
        if self.split_kind == "axis" and self.grow_order != "depth_first":
            raise ValueError("grow_order='level' needs split_kind 'two_probe' or 'co2' (scikit-learn's trees grow "
                             "depth first)")
        if self.border < self.window_size // 2:
            raise ValueError(f"border ({self.border}) must be at least window_size // 2 ({self.window_size // 2}) "
                             "so that every window lies inside its image")
        n_img, H, W = labels.shape
        valid_mask((H, W), self.border)  # checks that the border leaves pixels
        b = self.border
        inner = labels[:, b:H - b, b:W - b]
        if inner.min() < 0:
            raise ValueError("labels must be non-negative integers 0..k-1")
        counts = class_counts(inner, int(inner.max()) + 1)
        self.classes_ = np.flatnonzero(counts)
        if self.classes_.shape[0] < 2:
            raise ValueError(f"the training label maps hold {self.classes_.shape[0]} class(es) inside the border; "
                             "at least 2 are needed")
        if not np.array_equal(self.classes_, np.arange(self.classes_.shape[0])):
            raise ValueError(f"labels must be 0..k-1 with every class present, got {self.classes_.tolist()}")
        k = self.classes_.shape[0]
        self._pools = class_pools(inner, counts, (H, W), b, np.int32 if n_img * H * W < 2**31 else np.int64)
        self.class_pixels_ = counts
        self.class_weights_ = k * counts / counts.sum()
        self.n_features_in_ = window_dim(self.window_size)
        seeds = tree_seeds(self.random_state, self.n_estimators)
        self._fit_stats(images, np.random.default_rng([seeds[0], 7]))
        n_per_class = max(1, self.windows_per_tree // k)
        self.estimators_ = Parallel(n_jobs=self.n_jobs, prefer="threads")(
            delayed(self._fit_tree)(images, seeds[i], n_per_class) for i in trees)
        self.first_tree_ = trees.start
        del self._pools
        return self

    def _fit_stats(self, images, rng):
        """Per-value mean and standard deviation over a uniform sample of training windows."""
        d = self.n_features_in_
        self.window_mean_, self.window_std_ = np.zeros(d), np.ones(d)
        n_pixels = n_valid(images.shape[:3], self.border)
        n = min(self.n_stats_windows, n_pixels)
        flat = valid_flat(rng.choice(n_pixels, n, replace=False), images.shape[1:3], self.border)
        total, total_sq = np.zeros(d), np.zeros(d)
        buf = np.empty((min(self.chunk_size, n), d))
        for start in range(0, n, buf.shape[0]):
            Z = self._windows(images, flat[start:start + buf.shape[0]], np.float64, out=buf)
            total += Z.sum(axis=0)
            total_sq += np.einsum("ij,ij->j", Z, Z)
        mean = total / n
        std = np.sqrt(np.maximum(total_sq / n - mean * mean, 0.0))
        self.window_mean_, self.window_std_ = mean, np.where(std > 1e-8, std, 1.0)

    # -------------------------------------------------------------------------------------- predict
    def _stage_sizes(self, n_trees):
        if n_trees is None:
            return [len(self.estimators_)]
        sizes = sorted({int(m) for m in np.atleast_1d(n_trees)})
        if sizes[0] < 1 or sizes[-1] > len(self.estimators_):
            raise ValueError(f"n_trees must lie in [1, {len(self.estimators_)}], got {sizes}")
        return sizes

    def staged_sums(self, X, n_trees, block_trees=None):
        """Yield ``(m, sums)`` for m in ``n_trees`` (sorted): the class-probability sums ``(n, n_scored, k)`` of
        the forest of the first m trees of ``estimators_`` at every scored pixel (row-major inside the border),
        added tree by tree in tree order. With ``block_trees`` the sums are made in blocks of that many trees,
        each from zero, and the finished blocks added in block order (:func:`treeopt.forest.bagging.blocked_sum`),
        as tree block jobs are merged (:mod:`treeopt.experiments.run.segment_runs`): the same bits for any split.
        ``sums`` is a buffer reused by the next step: read it before asking for the next."""
        check_is_fitted(self)
        images = _check_images(X)
        yield from self._sums(images, self._stage_sizes(n_trees), block_trees, lambda tree: tree)

    def depth_sums(self, X, depths, block_trees=None):
        """Yield ``(d, sums)`` for d in ``depths`` (sorted): :meth:`staged_sums` of the whole forest with every tree
        cut at depth d (its nodes at depth d made leaves with their class frequencies). For a forest grown level by
        level (``grow_order="level"``) that is the forest grown with ``max_depth = d``, tree for tree
        (:func:`treeopt.greedy.level_order_prefix`), so one fit scores a whole depth sweep (CO2 paper Fig. 4
        left). Each ``sums`` is its own array."""
        from ..greedy import level_order_prefix

        check_is_fitted(self)
        if self.grow_order != "level":
            raise ValueError("depth_sums needs a forest grown level by level (grow_order='level')")
        images = _check_images(X)
        depths = sorted({int(d) for d in np.atleast_1d(depths)})
        if depths[0] < 1 or (self.max_depth is not None and depths[-1] > self.max_depth):
            raise ValueError(f"depths must lie in [1, {self.max_depth}] (the fit's max_depth), got {depths}")
        n = [len(self.estimators_)]
        for d in depths:
            for _, sums in self._sums(images, n, block_trees, lambda tree, d=d: level_order_prefix(tree, d)):
                yield d, sums

    def _sums(self, images, sizes, block_trees, cut):
        """:meth:`staged_sums` of ``images`` at the forest sizes ``sizes``, each tree store passed through ``cut``."""
        n_img, H, W = images.shape[:3]
        flat = np.flatnonzero(valid_mask((H, W), self.border))
        rows, cols = np.divmod(flat, W)
        scorer = WindowScorer(images, rows, cols, self.window_mean_, self.window_std_, self.window_size,
                              self.classes_.shape[0])
        n_parts = min(n_img, effective_n_jobs(self.n_jobs))
        bounds = np.linspace(0, n_img, n_parts + 1).astype(int)
        done_blocks = None  # the finished blocks' sum (None: no block finished yet)
        done = 0
        with Parallel(n_jobs=n_parts, prefer="threads") as parallel:
            for m in sizes:
                for t in range(done, m):
                    est = self.estimators_[t]
                    tree = PackedTree(cut(Tree.from_sklearn(est) if self.split_kind == "axis" else est.tree_),
                                      est.classes_, self.classes_.shape[0], self.window_size, self.window_mean_,
                                      self.window_std_)
                    parallel(delayed(scorer.add)(tree, lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:]))
                    if block_trees is not None and (t + 1) % block_trees == 0 and t + 1 < len(self.estimators_):
                        done_blocks = scorer.sums.copy() if done_blocks is None else blocked_sum(done_blocks,
                                                                                                 scorer.sums)
                        scorer.sums[:] = 0.0
                done = m
                yield m, (scorer.sums if done_blocks is None else blocked_sum(done_blocks, scorer.sums))

    def label_maps(self, sums, shape):
        """``(reweighted, balanced)`` label maps ``(n, H, W)`` int16 of the class sums of :meth:`staged_sums` on
        images of ``shape`` (n, H, W): the arg max with and without the paper's re-weighting by the inverse
        sampling factor; the border is IGNORE (-1)."""
        n_img, H, W = shape
        flat = np.flatnonzero(valid_mask((H, W), self.border))
        maps = np.full((2, n_img, H * W), IGNORE, dtype=np.int16)
        maps[0][:, flat] = (sums * self.class_weights_).argmax(axis=2)
        maps[1][:, flat] = sums.argmax(axis=2)
        maps = maps.reshape(2, n_img, H, W)
        return maps[0], maps[1]

    def staged_predict_both(self, X, n_trees, block_trees=None):
        """``(reweighted, balanced)`` label maps, each ``(len(n_trees), n, H, W)``: the forests of the first
        m trees for m in ``n_trees`` (sorted), with and without the paper's re-weighting by the inverse
        sampling factor. The border is IGNORE (-1). Trees are independent, so the first m trees are a forest
        of m. One pass over the trees gives every size and both rules (``block_trees``: see
        :meth:`staged_sums`)."""
        check_is_fitted(self)
        images = _check_images(X)
        both = [self.label_maps(sums, images.shape[:3]) for _, sums in self.staged_sums(images, n_trees,
                                                                                          block_trees)]
        return np.stack([rw for rw, _ in both]), np.stack([bal for _, bal in both])

    def staged_predict(self, X, n_trees):
        """Label maps ``(len(n_trees), n, H, W)`` of the forests of the first m trees, m in ``n_trees``,
        re-weighted when ``reweight`` (see :meth:`staged_predict_both`)."""
        reweighted, balanced = self.staged_predict_both(X, n_trees)
        return reweighted if self.reweight else balanced

    def predict(self, X):
        """Label map of every image (n, H, W), int16, the border IGNORE (-1)."""
        return self.staged_predict(X, None)[0]

    def score(self, X, y):
        """Class-average Jaccard (%) over the images (CO2 paper Sec. 6.2)."""
        _, y = _check_images(X, y)
        C = confusion(y, self.predict(X), self.classes_.shape[0])
        return jaccard_from_confusion(C)[0]

    def sample_windows(self, X, n, random_state=0):
        """``n`` normalised windows drawn uniformly from the scored pixels of ``X`` (for tree statistics)."""
        check_is_fitted(self)
        images = _check_images(X)
        valid_mask(images.shape[1:3], self.border)
        n_pixels = n_valid(images.shape[:3], self.border)
        rng = np.random.default_rng(random_state)
        flat = valid_flat(rng.choice(n_pixels, min(n, n_pixels), replace=False), images.shape[1:3], self.border)
        return self._windows(images, flat, np.float64)

