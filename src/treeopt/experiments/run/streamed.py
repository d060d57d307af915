"""Forest runs in memory that does not grow with the number of trees: each tree is scored and dropped.

A run of a bagged forest (:class:`treeopt.forest.BaggedTreesClassifier` and its CO2 / OC1 forests) needs from
each tree only its contribution to the scores: its class probabilities on the training, validation and test
rows (added to running sums, read off at every staged size and at the end), its statistics (``Tree.stats`` on
the test rows, leaves, oblique splits, axis fallbacks) and, when the model is kept, its arrays in
``model.npz``. :func:`fit_streamed` takes the trees one at a time from ``fit_iter`` (fitted in ``n_jobs``
threads, at most ``2 * n_jobs`` waiting) and keeps nothing else of them, so a 1000-tree forest runs in the
memory of a few trees. The sums are made in tree order by the kernel that ``predict_proba`` uses, so every
metric equals that of the same forest fitted whole and scored afterwards (tests compare the two).

Timing: trees are fitted in worker threads while this thread scores the ones already fitted, so the two
overlap. ``fit_seconds`` is the wall time of the whole loop minus the time this thread spent scoring;
``predict_seconds`` is the time spent adding trees to the test rows' sums (what predicting the test rows with
the whole forest costs).
"""

from __future__ import annotations

import time
from contextlib import nullcontext

import numpy as np

from ...trees import TreeWriter
from . import metrics as _metrics

PARTS = ("train", "val", "test")


def streams(estimator, task):
    """True when a run of ``estimator`` can be scored tree by tree (a treeopt bagged forest, classification)."""
    return task == "classification" and callable(getattr(estimator, "fit_iter", None))


def _tree_in_forest_columns(estimator, n_classes):
    """The tree with its leaf rows in the forest's class columns (a bootstrap sample may miss a class), so that a
    saved forest predicts without its estimators' ``classes_``."""
    tree = estimator.tree_
    classes = np.asarray(estimator.classes_)
    if tree.n_outputs == n_classes and np.array_equal(classes, np.arange(n_classes)):
        return tree
    from ...trees import Tree

    value = np.zeros((tree.n_nodes, n_classes))
    value[:, classes] = tree.leaf_probabilities()
    return Tree(tree.left, tree.right, tree.W, tree.bias, value, feature=tree.feature, depth=tree.depth,
                n_samples=tree.n_samples, value_kind="probabilities", x_dtype=tree.x_dtype)


def fit_streamed(estimator, X_fit, y_fit, parts, X_stats, stage_sizes=(), model_path=None, block_trees=None,
                 trees=None):
    """Fit ``estimator`` (a forest with ``fit_iter``) on ``(X_fit, y_fit)``, scoring tree by tree.

    ``parts`` maps "train" / "val" / "test" to row matrices (empty ones are skipped). Returns a dict:
    ``labels`` ({part: predicted labels of the whole forest}), ``staged`` ({part: {m: labels of the first m
    trees}} for each m in ``stage_sizes``), ``tree_stats`` (each tree's ``Tree.stats(X_stats)``), ``leaves``,
    ``oblique``, ``fallbacks`` (per tree; fallbacks only for learners that count them), ``first_tree`` (the tree
    when the forest has one, else None), ``fit_seconds``, ``predict_seconds``. With ``model_path`` the trees go
    to that tree file one by one (:class:`treeopt.trees.TreeWriter`).

    ``block_trees``: the trees' probabilities are summed in blocks of that many trees
    (:class:`treeopt.forest.bagging.RunningProba`), as a forest split into block jobs is merged. ``trees``: a block
    job, fitting only the trees of that ``range`` (one block: it starts at a multiple of ``block_trees`` and holds
    at most ``block_trees`` trees); instead of labels it returns the block's probability sums, ``partial``
    ({part: {m: sum of the block's trees up to tree m}} for the wanted m in the block) and ``block_sum`` ({part:
    sum of all its trees}), which :mod:`treeopt.experiments.run.blocks` merges in block order.
    """
    from ...forest.bagging import RunningProba

    n_trees = int(estimator.n_estimators)
    block = trees is not None
    if block and (block_trees is None or trees.start % block_trees or len(trees) > block_trees):
        raise ValueError(f"a block job fits one block of block_trees={block_trees} trees, got trees "
                         f"{trees.start}..{trees.stop - 1}")
    first, last = (trees.start, trees.stop) if block else (0, n_trees)
    wanted = {int(m) for m in stage_sizes if first < int(m) <= last}
    out = {"labels": {}, "staged": {}, "tree_stats": [], "leaves": [], "oblique": [], "fallbacks": [],
           "first_tree": None, "partial": {}, "block_sum": {}}
    sums = None
    scoring = predicting = 0.0
    start = time.perf_counter()
    writer = TreeWriter(model_path, last - first) if model_path is not None else nullcontext()
    with writer:
        for m, estimator_i in enumerate(estimator.fit_iter(X_fit, y_fit, trees=trees), start=first + 1):
            t0 = time.perf_counter()
            if sums is None:  # classes_ is known once the first tree is fitted
                sums = {part: RunningProba(estimator, X, block_trees) for part, X in parts.items() if X.shape[0]}
                out["staged"] = {part: {} for part in sums}
                out["partial"] = {part: {} for part in sums}
            packed = RunningProba.packed(estimator_i, estimator.classes_.shape[0])
            for part, running in sums.items():
                t_part = time.perf_counter()
                running.add(estimator_i, packed)
                if part == "test":
                    predicting += time.perf_counter() - t_part
            for part, running in sums.items():
                if block:
                    if m in wanted:
                        out["partial"][part][m] = running.total.copy()
                    if m == last:
                        out["block_sum"][part] = running.total
                elif m in wanted or m == n_trees:
                    labels = estimator.classes_[running.proba().argmax(axis=1)]  # as predict does
                    if m in wanted:
                        out["staged"][part][m] = labels
                    if m == n_trees:
                        out["labels"][part] = labels
            tree = estimator_i.tree_
            out["tree_stats"].append(tree.stats(X_stats))
            out["leaves"].append(_metrics.n_leaves(tree))
            out["oblique"].append(_metrics.n_oblique_splits(tree))
            if hasattr(estimator_i, "n_axis_fallbacks_"):
                out["fallbacks"].append(estimator_i.n_axis_fallbacks_)
            if n_trees == 1:
                out["first_tree"] = tree
            if model_path is not None:
                writer.add(_tree_in_forest_columns(estimator_i, estimator.classes_.shape[0]))
            del estimator_i, tree, packed
            scoring += time.perf_counter() - t0
    total = time.perf_counter() - start
    out["fit_seconds"] = total - scoring
    out["predict_seconds"] = predicting
    return out
