"""Score one fitted model at every size of a sweep ("metric vs size" curves from a single fit).

A forest of 1000 trees contains the forests of its first 1, 3, 10, ... trees; a boosted model after 1000
iterations contains the models after fewer; RGF's model after 1000 leaves passed through its models after 100,
200, ... leaves. A staged final run (config ``staged:``, :mod:`treeopt.experiments.plan.build`) fits the largest size
once and reads the smaller ones off it. The estimator side of the contract:

* ``staged_predict_proba(X)`` (classifiers) or ``staged_predict(X)`` (regressors): a generator yielding one
  prediction array per stage, in order of growing size, as scikit-learn's gradient boosting does. A staged
  method that takes ``n_trees`` (treeopt's bagged forests) is given the wanted sizes and yields only those; one
  that takes ``stage_indices`` (RGF) is given the wanted stages (0-based) and yields only those.
  Ensembles with ``estimators_`` and neither method (scikit-learn's random forests) are staged here by
  averaging their members' predictions over prefixes, in the members' order, as their own predict does.
* optional ``stage_sizes_``: ``{parameter: [value at each stage], "n_leaves": [...], "n_trees": [...]}``; without
  it stage i (1-based) is size i of the staged parameter (trees or iterations).

A wanted size between two stages is scored at the last stage not above it (``stage_value`` records which).
"""

import inspect

import numpy as np

from . import metrics as _metrics


def _prefix_mean(members, X, predict, sizes, classes=None):
    """Mean prediction of the first m members for each m in ``sizes`` (ascending), one pass over members."""
    total, done = None, 0
    for m in sizes:
        for member in members[done:m]:
            out = np.asarray(predict(member, X), dtype=float)
            total = out.copy() if total is None else total + out
        done = m
        yield total / m


def _stage_predictions(estimator, task, X, indices, n_stages):
    """Predicted labels (classification) or values (regression) at the 1-based stage ``indices``."""
    wanted = set(indices)
    if task == "classification":
        staged = getattr(estimator, "staged_predict_proba", None)
        classes = estimator.classes_
        finish = lambda proba: classes[np.asarray(proba).argmax(axis=1)]  # noqa: E731 (as predict does)
    else:
        staged = getattr(estimator, "staged_predict", None)
        finish = lambda values: np.asarray(values, dtype=float).ravel()  # noqa: E731
    if staged is not None and "n_trees" in inspect.signature(staged).parameters:
        return [finish(p) for p in staged(X, n_trees=sorted(wanted))]
    if staged is not None and "stage_indices" in inspect.signature(staged).parameters:
        return [finish(p) for p in staged(X, stage_indices=[i - 1 for i in sorted(wanted)])]
    if staged is not None:
        return [finish(p) for i, p in enumerate(staged(X), start=1) if i in wanted]
    members = list(getattr(estimator, "estimators_", None) or [])
    if len(members) != n_stages:
        raise TypeError(f"{type(estimator).__name__} has no staged_predict{'_proba' if task == 'classification' else ''}"
                        f" and no estimators_ to stage")
    if task == "classification":
        # scikit-learn forests: every member predicts all forest classes, in the forest's order
        predict = lambda member, Z: member.predict_proba(Z)  # noqa: E731
    else:
        predict = lambda member, Z: member.predict(Z)  # noqa: E731
    return [finish(p) for p in _prefix_mean(members, X, predict, sorted(wanted))]


def n_stages_of(estimator, param):
    sizes = getattr(estimator, "stage_sizes_", None) or {}
    if param in sizes:
        return len(sizes[param])
    members = getattr(estimator, "estimators_", None)
    if members is not None:
        return len(members)  # a list of members, or scikit-learn GBDT's (iterations x outputs) array
    n = getattr(estimator, "n_estimators_", None) or getattr(estimator, "n_estimators", None)
    if n is None:
        raise TypeError(f"{type(estimator).__name__}: cannot tell how many stages it has (no stage_sizes_, "
                        f"estimators_ or n_estimators)")
    return int(n)


def pick_stages(stage_value, values, param="n_estimators"):
    """``{wanted value: 1-based stage index}``: each value is scored at the last stage not above it. A value
    below the first stage (e.g. n_estimators 0) is an error: no model that small exists, and no row may silently
    go missing."""
    picks = {}
    for value in sorted(set(values)):
        below = [i for i, v in enumerate(stage_value, start=1) if v <= value]
        if not below:
            raise ValueError(f"{param}={value!r} is below the smallest stage of the fitted model "
                             f"({stage_value[0] if stage_value else 'none'}); nothing to score it at")
        picks[value] = below[-1]
    return picks


def stage_entries(task, param, picks, stage_value, parts, predictions, tree_of_stage):
    """The ``stages`` list of a run's metrics: one dict per wanted value (see :func:`staged_scores`) from the
    predictions ``{part: {stage index: labels or values}}`` and ``tree_of_stage(index) -> tree dict``."""
    out = []
    for value, index in picks.items():
        entry = {param: value, "stage_value": stage_value[index - 1]}
        for part, (_, y) in parts.items():
            entry[part] = (_metrics.task_metrics(task, y, predictions[part][index]) if part in predictions else {})
        entry["tree"] = tree_of_stage(index)
        out.append(entry)
    return out


def staged_scores(estimator, task, param, values, parts, trees=None):
    """Metrics of ``estimator`` at each wanted size ``values`` of ``param``.

    ``parts`` maps "train"/"val"/"test" to (X, y). Returns a list of dicts, one per wanted value:
    ``{param: value, "stage_value": size scored, "train": {...}, "val": {...}, "test": {...},
    "tree": {"n_trees": ..., "n_leaves_total": ...}}``. ``trees``: the estimator's trees as
    :func:`treeopt.experiments.run.metrics.fitted_trees` gives them, when already at hand.
    """
    n_stages = n_stages_of(estimator, param)
    sizes = getattr(estimator, "stage_sizes_", None) or {}
    stage_value = list(sizes.get(param, range(1, n_stages + 1)))
    picks = pick_stages(stage_value, values, param)
    indices = sorted(set(picks.values()))
    predictions = {}
    for part, (X, y) in parts.items():
        if X.shape[0]:
            predictions[part] = dict(zip(indices, _stage_predictions(estimator, task, X, indices, n_stages)))
    trees = _metrics.fitted_trees(estimator) if trees is None else trees
    per_stage = len(trees) // n_stages if n_stages and len(trees) % n_stages == 0 else None

    def tree_of_stage(index):
        tree = {}
        if "n_trees" in sizes:
            tree["n_trees"] = int(sizes["n_trees"][index - 1])
        elif per_stage is not None:
            tree["n_trees"] = index * per_stage
        if "n_leaves" in sizes:
            tree["n_leaves_total"] = int(sizes["n_leaves"][index - 1])
        elif per_stage is not None:
            tree["n_leaves_total"] = sum(_metrics.n_leaves(t) for t in trees[:index * per_stage])
        return tree

    return stage_entries(task, param, picks, stage_value, parts, predictions, tree_of_stage)
