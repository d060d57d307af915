"""What a run measures: task metrics, tree statistics, software versions (the DESIGN.md ``metrics.json``)."""

import functools
import platform
import subprocess
from importlib import metadata
from pathlib import Path

import numpy as np

from ...trees import fitted_trees  # noqa: F401 (the runner and the staged scores take it from here)


def task_metrics(task, y_true, y_pred):
    """Classification: ``error`` and ``accuracy`` in percent; regression: ``rmse``. Empty dict for no data."""
    y_true = np.asarray(y_true)
    if y_true.shape[0] == 0:
        return {}
    y_pred = np.asarray(y_pred)
    if task == "classification":
        correct = y_true == y_pred
        return {"error": 100.0 * float(np.mean(~correct)), "accuracy": 100.0 * float(np.mean(correct))}
    if task == "regression":
        return {"rmse": float(np.sqrt(np.mean((y_true.astype(float) - y_pred.astype(float)) ** 2)))}
    raise ValueError(f"unknown task {task!r}")


def tree_stats(trees, X):
    """``Tree.stats(X)`` for one tree; for several, the mean of each statistic. Always adds ``n_trees`` and
    ``n_leaves_total`` (leaves summed over the trees)."""
    return combine_tree_stats([tree.stats(X) for tree in trees], [n_leaves(tree) for tree in trees])


def n_leaves(tree):
    return int(np.count_nonzero(tree.left < 0))


def combine_tree_stats(per_tree, leaves):
    """:func:`tree_stats` from each tree's ``Tree.stats`` and leaf count (a forest scored tree by tree keeps
    only these)."""
    if not per_tree:
        return {"n_trees": 0, "n_leaves_total": 0}
    if len(per_tree) == 1:
        stats = dict(per_tree[0])
    else:
        stats = {key: float(np.mean([s[key] for s in per_tree])) for key in per_tree[0]}
    stats["n_trees"] = len(per_tree)
    stats["n_leaves_total"] = int(sum(leaves))
    return stats


def n_oblique_splits(tree):
    return int(np.count_nonzero(tree.feature[tree.left >= 0] == -1))


def split_counts(estimator, trees):
    """``n_oblique_splits`` and ``n_axis_fallbacks`` per tree (mean over a forest's trees) for every run.

    Oblique splits are counted in the fitted trees (internal nodes with ``feature == -1``); fallbacks are the
    learner's own count (``n_axis_fallbacks_`` of the estimator or of its members: nodes where an optimised
    split was replaced by its axis-aligned start), 0 for learners without such a rule.
    """
    if not trees:
        return {}
    fallbacks = getattr(estimator, "n_axis_fallbacks_", None)
    if fallbacks is None:
        members = getattr(estimator, "estimators_", None)  # a list, or boosting's (iterations x outputs) array
        members = [] if members is None else np.ravel(np.asarray(members, dtype=object))
        fallbacks = [m.n_axis_fallbacks_ for m in members if hasattr(m, "n_axis_fallbacks_")]
    return split_counts_from([n_oblique_splits(t) for t in trees], fallbacks)


def split_counts_from(oblique, fallbacks):
    """:func:`split_counts` from the oblique splits of each tree and the learner's fallback count: a number, or
    one per member (their mean; none: 0). A forest scored tree by tree keeps only these."""
    if not len(oblique):
        return {}
    if not np.isscalar(fallbacks):
        fallbacks = float(np.mean(fallbacks)) if len(fallbacks) else 0.0
    return {"n_oblique_splits": float(np.mean(oblique)), "n_axis_fallbacks": float(fallbacks)}


def versions():
    """Versions of the packages that decide the numbers."""
    out = {}
    for name in ("treeopt", "numpy", "scipy", "scikit-learn", "numba"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    out["python"] = platform.python_version()
    return out


@functools.cache
def git_commit():
    """Commit of the treeopt source tree (``+dirty`` when tracked files differ from it), or None outside git."""
    src = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=src, capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=src,
                               capture_output=True, text=True, timeout=10)
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def path_metrics(estimator, split, X_fit, y_fit, X_val, y_val):
    """One dict per step of a sparsity path (TAO Sec. 4, Fig. 1): the step's C, train/val/test error (%),
    % non-zero weights of the internal nodes, tree size, path lengths and inference ops (on the training
    set, as the paper), iterations and seconds inside LIBLINEAR."""
    rows = []
    p = X_fit.shape[1]
    for entry, tree in zip(estimator.path_, estimator.path_trees_):
        def err(X, y):
            if X.shape[0] == 0:
                return None
            pred = estimator.classes_[tree.predict_proba(X).argmax(axis=1)]
            return 100.0 * float(np.mean(pred != y))
        stats = tree.stats(X_fit)
        n_internal = stats["n_internal"]
        rows.append({
            "C": entry["C"], "train_error": err(X_fit, y_fit), "val_error": err(X_val, y_val),
            "test_error": err(split.X_test, split.y_test),
            "nonzero_pct": 100.0 * stats["nonzero_weights"] / max(1, n_internal * p),
            **stats, "n_iter": entry["n_iter"], "liblinear_seconds": entry["liblinear_seconds"],
            "fit_seconds": entry["fit_seconds"],
        })
    return rows
