"""A method fitted on a prepared split and measured on its parts: :func:`fit_and_measure` (in one piece, tree by
tree for treeopt's bagged forests, merged from tree blocks, or as a segmentation run). Writes no file but the model;
:mod:`treeopt.experiments.run.runner` writes the run folder around it.
"""

import logging
import time
import warnings

import numpy as np

from ...base import encode_classes
from ...trees import save_trees
from ..infra.precompile import warm_up_listed as warm_up
from ..infra.warmup import numba_compile_clock
from ..plan.methods import get_method, make_estimator
from . import metrics as _metrics
from .folders import PATH_MODELS
from .segment_runs import fit_and_measure_segmentation
from .staged import pick_stages, stage_entries, staged_scores
from .streamed import fit_streamed, streams

FIT_ON = ("train", "trainval")


def fit_parts(split, fit_on):
    """``(X_fit, y_fit, parts, X_stats)`` of a run: the rows fitted on, ``parts`` {"train" / "val" / "test": (X, y)}
    scored (a refit fits train+validation and has no validation part), and the rows tree statistics are taken on."""
    X_fit, y_fit = split.X_train, split.y_train
    X_val, y_val = split.X_val, split.y_val
    if fit_on == "trainval":  # the papers' final refit on the union of training and validation sets
        X_fit, y_fit = _stacked(X_fit, X_val), np.concatenate([y_fit, y_val])
        X_val, y_val = X_val[:0], y_val[:0]
    parts = {"train": (X_fit, y_fit), "val": (X_val, y_val), "test": (split.X_test, split.y_test)}
    X_stats = split.X_test if split.X_test.shape[0] else X_fit
    return X_fit, y_fit, parts, X_stats


def fit_and_measure(method, params, seed, split, *, fit_on="train", n_jobs=1, log=None, stages=(), model_path=None,
                    block_trees=None, blocks=None, block_check=None, score_test=True):
    """Fit ``method`` on the split and return (metrics dict without provenance keys, fitted estimator).

    ``stages`` ((param, values) pairs, at most one) also scores the fitted model at each of those sizes
    (:func:`treeopt.experiments.run.staged.staged_scores`), recorded under ``stages`` in the metrics. A treeopt
    bagged forest is scored tree by tree and keeps no tree (:mod:`treeopt.experiments.run.streamed`: memory does not
    grow with the number of trees; the returned estimator then has no ``estimators_``); with ``model_path`` its
    trees are written there one by one. Other models are written there after fitting.

    ``block_trees``: a bagged forest's tree probabilities are summed in blocks of that many trees (as block jobs
    are merged; :mod:`treeopt.experiments.run.blocks`). ``blocks``: the folders of those block jobs, merged instead
    of fitting (``block_check``: what each must share with this run,
    :data:`treeopt.experiments.run.block_sums.SAME_RUN_KEYS`). ``score_test=False`` (segmentation candidates):
    no test image is labelled (:func:`treeopt.experiments.run.segment_runs.fit_and_measure_segmentation`); rows are
    always scored on test (cheap, and a ``refit: false`` final reads its chosen candidate's).
    """
    log = log or logging.getLogger(__name__)
    spec = get_method(method)
    if split.task != spec.task:
        raise ValueError(f"method {method!r} solves {spec.task}, but the data set is a {split.task} task")
    if fit_on not in FIT_ON:
        raise ValueError(f"fit_on must be one of {FIT_ON}, got {fit_on!r}")
    if len(stages) > 1:
        raise ValueError(f"one staged parameter per run, got {[param for param, _ in stages]}")
    if spec.task == "segmentation":
        result, estimator = fit_and_measure_segmentation(method, params, seed, split, fit_on=fit_on, n_jobs=n_jobs,
                                                         log=log, block_trees=block_trees, blocks=blocks,
                                                         block_check=block_check, model_path=model_path,
                                                         score_test=score_test,
                                                         depths=dict(stages).get("max_depth"))
        return result, estimator
    X_fit, y_fit, parts, X_stats = fit_parts(split, fit_on)
    X_val, y_val = parts["val"]
    estimator = make_estimator(method, params, seed, n_jobs=n_jobs, n_features=X_fit.shape[1])
    streamed = streams(estimator, spec.task)
    if (block_trees is not None or blocks) and not streamed:
        raise ValueError(f"method {method!r} cannot be summed or split in tree blocks (block_trees, blocks): only "
                         f"treeopt's bagged forests (CO2 Forest, OC1 Forest) are fitted tree by tree")
    # a merge fits nothing; any other fit first compiles (or loads) its numba kernels outside the timed fit
    compile_seconds = 0.0 if blocks else warm_up(estimator, X_fit, y_fit, task=spec.task, name=method, log=log)
    if blocks:
        log.info("merging %d tree blocks of %s (%d trees, blocks of %d)", len(blocks), method,
                 estimator.n_estimators, block_trees)
    else:
        log.info("fitting %s on %d x %d points (%s), params %s, seed %d", method, *X_fit.shape, fit_on, params,
                 seed)
    result = {
        "params": dict(params), "seed": int(seed),
        "n_train": int(X_fit.shape[0]), "n_val": int(X_val.shape[0]), "n_test": int(split.X_test.shape[0]),
    }
    with warnings.catch_warnings(record=True) as caught, numba_compile_clock() as compiling:
        warnings.simplefilter("always")
        if streamed:
            sizes = streamed_stage_indices(estimator, {v for _, values in stages for v in values})
            if blocks:
                from .block_sums import merge_blocks

                classes = encode_classes(y_fit)[0]  # as the forest sets its classes_
                rows = {part: X.shape[0] for part, (X, _) in parts.items() if X.shape[0]}
                fitted = merge_blocks(blocks, {**dict(block_check or {}), "n_estimators": int(estimator.n_estimators),
                                               "block_trees": block_trees}, classes, rows, sizes, model_path, log)
            else:
                fitted = fit_streamed(estimator, X_fit, y_fit, {part: X for part, (X, _) in parts.items()}, X_stats,
                                      stage_sizes=sizes, model_path=model_path, block_trees=block_trees)
        else:
            start, cpu = time.perf_counter(), time.process_time()
            estimator.fit(X_fit, y_fit)
            fitted = {"fit_seconds": time.perf_counter() - start, "fit_cpu_seconds": time.process_time() - cpu}
    for w in caught:
        log.warning("%s: %s", w.category.__name__, w.message)
    log.info("fit took %.3f s", fitted["fit_seconds"])

    if "labels" in fitted:  # scored tree by tree
        labels = fitted["labels"]
        predict_seconds = fitted["predict_seconds"]
        result["tree"] = _metrics.combine_tree_stats(fitted["tree_stats"], fitted["leaves"])
        result["tree"].update(_metrics.split_counts_from(fitted["oblique"], fitted["fallbacks"]))
        trees = [fitted["first_tree"]] if fitted["first_tree"] is not None else []
        for part, (_, y) in parts.items():
            result[part] = _metrics.task_metrics(spec.task, y, labels[part] if part in labels else y)
    else:
        measured, trees = _measure_fitted(estimator, spec.task, split, parts, X_stats, model_path)
        predict_seconds = measured.pop("predict_seconds")
        result.update(measured)
    result.update(fit_seconds=fitted["fit_seconds"], predict_seconds=predict_seconds,
                  compile_seconds=compile_seconds, fit_compile_seconds=compiling.lock)
    if "fit_cpu_seconds" in fitted:
        # the process's CPU seconds in the fit: on a shared machine, the wall time of an idle core that timings
        # such as the RGF paper's Fig. 15 assume (a one-threaded fit; threads' CPU time adds up)
        result["fit_cpu_seconds"] = fitted["fit_cpu_seconds"]
    _add_tree_extras(result["tree"], estimator, trees, X_fit)
    if getattr(estimator, "depth_stats_", None):  # non-greedy: per depth, where the gradients went (a stalled level)
        result["per_depth"] = estimator.depth_stats_
    if getattr(estimator, "path_trees_", None):  # TAO's sparsity path: every C of one warm-started fit
        result["path"] = _metrics.path_metrics(estimator, split, X_fit, y_fit, X_val, y_val)
        if len(estimator.path_trees_) > 1 and hasattr(estimator, "path_step"):
            result["path_runs"] = _path_runs(estimator, spec.task, split, parts, X_stats, X_fit, result["path"],
                                             model_path)
    # a level-order fit that timed its levels (OC1, random oblique): every shallower depth read off it (path: max_depth)
    if getattr(estimator, "level_seconds_", None) and (estimator.max_depth or 0) > 1:
        result["path_runs"] = _depth_runs(estimator, spec.task, split, parts, X_stats, X_fit, fitted["fit_seconds"])
    log.info("train %s | val %s | test %s", result["train"], result["val"], result["test"])
    for param, values in stages:
        if "labels" in fitted:
            result["stages"] = _streamed_stages(spec.task, param, values, parts, fitted)
        else:
            result["stages"] = staged_scores(estimator, spec.task, param, values, parts, trees=trees)
        for stage in result["stages"]:
            log.info("stage %s=%s (scored at %s): train %s | val %s | test %s", param, stage[param],
                     stage["stage_value"], stage["train"], stage["val"], stage["test"])
    return result, estimator


def _measure_fitted(estimator, task, split, parts, X_stats, model_path):
    """(metrics of a fitted model: ``train``/``val``/``test``, ``tree`` and ``predict_seconds``; its trees), the
    trees written to ``model_path`` when given."""
    X_fit, _ = parts["train"]
    X_val, _ = parts["val"]
    start = time.perf_counter()
    labels = {"test": estimator.predict(split.X_test) if split.X_test.shape[0] else split.y_test[:0]}
    predict_seconds = time.perf_counter() - start
    labels["train"] = estimator.predict(X_fit)
    if X_val.shape[0]:
        labels["val"] = estimator.predict(X_val)
    trees = _metrics.fitted_trees(estimator)
    out = {part: _metrics.task_metrics(task, y, labels[part] if part in labels else y)
           for part, (_, y) in parts.items()}
    out["tree"] = _metrics.tree_stats(trees, X_stats)
    out["tree"].update(_metrics.split_counts(estimator, trees))
    if model_path is not None and trees:
        save_trees(model_path, trees)
    out["predict_seconds"] = predict_seconds
    return out, trees


def _add_tree_extras(tree, estimator, trees, X_fit):
    """The tree statistics that need the fitted estimator: active leaves and the learner's ``fit_stats_``."""
    if len(trees) == 1:
        # leaves the fitting data reach (non-greedy Fig. 3: a small nu prunes leaves in training)
        tree["active_leaves_train"] = int(np.unique(trees[0].apply(X_fit)).size)
    tree.update(getattr(estimator, "fit_stats_", None) or {})  # e.g. TAO's time inside LIBLINEAR


def _path_runs(estimator, task, split, parts, X_stats, X_fit, path, model_path):
    """What a run of each earlier C of a warm-started path would record (the estimator's ``path_step``; TAO Sec.
    4): one dict per step but the last (this run), with its ``C``, ``train``/``val``/``test``, ``tree`` and ``path``
    as a run with that C writes them and ``fit_seconds`` the initial tree's plus the steps' so far; when this run
    keeps a model, the steps' trees go to ``path_models.npz`` beside it (tree i: step i). ``path``: this run's
    :func:`~treeopt.experiments.run.metrics.path_metrics`, whose first entries are a shorter path's (the same steps).
    A candidate of a selection over C reads its step from here instead of fitting the same steps again (config
    ``path: C``; :func:`treeopt.experiments.run.reads.run_from_path`).
    """
    out, step_trees = [], []
    for step in range(len(estimator.path_trees_) - 1):
        at = estimator.path_step(step)
        measured, trees = _measure_fitted(at, task, split, parts, X_stats, None)
        _add_tree_extras(measured["tree"], at, trees, X_fit)
        step_trees.extend(trees)
        seconds = at.fit_stats_.get("init_seconds", 0.0) + sum(p["fit_seconds"] for p in at.path_)
        out.append({"step": step, "C": at.path_[-1]["C"], **measured, "fit_seconds": seconds,
                    "path": path[:step + 1]})
    if model_path is not None:
        save_trees(model_path.parent / PATH_MODELS, step_trees)
    return out


def _depth_runs(estimator, task, split, parts, X_stats, X_fit, fit_seconds):
    """What a run of each smaller ``max_depth`` would record, read off a level-order fit (``grow_order="level"``:
    its tree limited to depth d is the fit with ``max_depth = d``, the estimator's ``depth_step``): one dict per
    depth 1..max_depth-1 with its ``max_depth``, ``train``/``val``/``test``, ``tree``, ``predict_seconds`` and
    ``fit_seconds`` this run's minus the growing time below depth d. A candidate of a depth sweep reads its depth
    from here instead of growing the same levels again (config ``path: max_depth``;
    :func:`treeopt.experiments.run.reads.run_from_path`, which takes the tree from this run's ``model.npz``)."""
    out = []
    below = estimator.growing_seconds()
    for step, depth in enumerate(range(1, int(estimator.max_depth))):
        at = estimator.depth_step(depth)
        measured, trees = _measure_fitted(at, task, split, parts, X_stats, None)
        _add_tree_extras(measured["tree"], at, trees, X_fit)
        out.append({"step": step, "max_depth": depth, **measured,
                    "fit_seconds": max(0.0, fit_seconds - (below - estimator.growing_seconds(depth)))})
    return out


def _stacked(top, bottom):
    """``np.vstack([top, bottom])``, without a copy when ``bottom``'s rows follow ``top``'s in one array (a split
    loaded by :func:`treeopt.data.load_split` keeps training and validation rows so)."""
    base = top.base
    start = lambda a: a.__array_interface__["data"][0]  # noqa: E731 (address of an array's first element)
    if (isinstance(base, np.ndarray) and base is bottom.base and base.ndim == 2 and base.flags.c_contiguous
            and top.flags.c_contiguous and bottom.flags.c_contiguous and top.shape[1:] == base.shape[1:]
            and base.shape[0] == top.shape[0] + bottom.shape[0] and start(top) == start(base)
            and start(bottom) == start(base) + top.nbytes):
        return base
    return np.vstack([top, bottom])


def streamed_stage_indices(estimator, values):
    """The forest sizes a streamed forest is scored at for the wanted ``values`` (each at the last size not
    above it, as :func:`treeopt.experiments.run.staged.staged_scores` picks)."""
    stage_value = list(range(1, int(estimator.n_estimators) + 1))
    return sorted(set(pick_stages(stage_value, values).values()))


def _streamed_stages(task, param, values, parts, fitted):
    """The ``stages`` entries of a forest scored tree by tree (as :func:`staged_scores` makes them)."""
    n_trees = len(fitted["leaves"])
    stage_value = list(range(1, n_trees + 1))
    picks = pick_stages(stage_value, values, param)
    cumulative = np.cumsum(fitted["leaves"])
    tree_of_stage = lambda index: {"n_trees": index, "n_leaves_total": int(cumulative[index - 1])}  # noqa: E731
    return stage_entries(task, param, picks, stage_value, parts, fitted["staged"], tree_of_stage)
