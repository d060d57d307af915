"""Segmentation runs (CO2 paper Sec. 6.2): fitted in one job, or as tree blocks fitted apart and merged.

Rows of a segmentation split are images, targets label maps. A run's metrics are the class-average Jaccard (%) and
the pixel accuracy inside the ignored border, with the paper's re-weighting of the class probabilities by the inverse
sampling factor (``jaccard_unweighted``: the same forest's balanced probabilities), at every staged forest size 1, 2,
4, ... (Fig. 4 right; Table II's 16 and 32 trees from one fit) on the test and validation images, and for the whole
forest on the first 5 training images (scoring costs as much as on test). The test label maps go to
``segmentation.npz`` (Fig. 3).

**Tree blocks.** A segmentation forest of the paper profile takes up to 10 CPU-hours in one job (32 CO2 trees at
256,000 windows each, about 16 minutes a tree). Its trees are independent (tree i's seed and window sample depend
only on the seed and i, the normalisation statistics on the first tree's seed:
:meth:`treeopt.segmentation.ForestSegmenter.fit_trees`), so with ``forest_block_trees`` a run is fitted as block
jobs of that many trees (:func:`run_segmentation_block`) and a merge (:func:`fit_and_measure_segmentation` with
``blocks``). Every label map is the arg max of per-pixel class sums. A block saves its trees' sum on each scored
image set (``sums.npz``: float64, images x pixels x classes: 0.29 GB for 250 LFW test images); the merge adds the
blocks' sums in block order; the one-job run with the same ``block_trees`` sums in the same blocks
(:meth:`~treeopt.segmentation.ForestSegmenter.staged_sums`), so the run folder is the same bit for bit outside
timings either way. Forest sizes below the first block's end are scored by the first block itself (its sums from
zero are the one-job sums) and kept in its ``block.json``; every later staged size must end a block (a block size
that is a power of two does that for the sizes 1, 2, 4, ...: :func:`check_block_stages`). Depth stages (a depth
sweep from one level-order fit): :mod:`treeopt.experiments.run.segment_scores`.
"""

from __future__ import annotations

import logging
import time
import zipfile

import numpy as np

from ...trees import save_trees
from ..plan.tree_blocks import N_TRAIN_SCORED, BlockError, check_block_stages, stage_sizes
from . import metrics as _metrics
from .block_sums import read_blocks
from .segment_scores import check_depths, depth_scores, depth_stages, jaccard, other_key, pixel_metrics, score_sums


def _fit_images(split, fit_on):
    """The images and label maps fitted on: the training part, or training and validation (a refit)."""
    if fit_on == "trainval":
        return np.concatenate([split.X_train, split.X_val]), np.concatenate([split.y_train, split.y_val])
    return split.X_train, split.y_train


def _parts(split, fit_on, score_test=True):
    """{"test", "val", "train": (images, label maps)} scored: a refit fits training and validation images and has no
    validation part; "train" is the first 5 fitted images (training images come first, so a merge, which fits
    nothing, needs no copy of the fitted set). Without ``score_test`` (a candidate: its choice reads validation
    only) the test part holds no images."""
    refit = fit_on == "trainval"
    X_val, y_val = (split.X_val[:0], split.y_val[:0]) if refit else (split.X_val, split.y_val)
    if split.X_train.shape[0] >= N_TRAIN_SCORED or not refit:
        X_tr, y_tr = split.X_train[:N_TRAIN_SCORED], split.y_train[:N_TRAIN_SCORED]
    else:
        X_tr, y_tr = (part[:N_TRAIN_SCORED] for part in _fit_images(split, fit_on))
    test = (split.X_test, split.y_test) if score_test else (split.X_test[:0], split.y_test[:0])
    return {"test": test, "val": (X_val, y_val), "train": (X_tr, y_tr)}


def _n_fit(split, fit_on):
    return split.X_train.shape[0] + (split.X_val.shape[0] if fit_on == "trainval" else 0)


def _result(estimator, parts, scores, maps, sizes):
    """The run's metrics from each part's scores ({part: {m: [jaccard, other]}}) and full-forest maps."""
    k = estimator.classes_.shape[0]
    other = other_key(estimator)

    def part_metrics(part):
        return pixel_metrics(estimator, parts[part][1], maps[part], *scores[part][sizes[-1]])

    staged = {"n_trees": sizes}
    result = {"test": {}, "val": {}}
    arrays = {"n_trees": np.asarray(sizes)}
    if parts["test"][0].shape[0]:  # a candidate scores no test images
        staged.update({"test_jaccard": [scores["test"][m][0] for m in sizes],
                       f"test_{other}": [scores["test"][m][1] for m in sizes]})
        result["test"] = part_metrics("test")
        truth = parts["test"][1]
        arrays.update(test_pred=maps["test"].astype(np.int8),
                      test_image_jaccard=np.asarray([jaccard(t, p, k) for t, p in zip(truth, maps["test"])]))
    if parts["val"][0].shape[0]:
        result["val"] = part_metrics("val")
        staged["val_jaccard"] = [scores["val"][m][0] for m in sizes]
    result["train"] = part_metrics("train")
    return result, staged, arrays


def fit_and_measure_segmentation(method, params, seed, split, *, fit_on="train", n_jobs=1, log=None,
                                 block_trees=None, blocks=None, block_check=None, model_path=None, score_test=True,
                                 depths=None):
    """A segmentation run's metrics (see the module docstring) and its fitted estimator (a merge: the estimator
    set up from the data but holding no trees). ``block_trees``: sums made in blocks of that many trees;
    ``blocks``: the folders of the run's tree block jobs, merged instead of fitting (``block_check``: what each
    must share with this run, :data:`treeopt.experiments.run.block_sums.SAME_RUN_KEYS`). ``model_path``: where the
    forest's trees are written (a merge copies them from the blocks, in tree order). Without ``score_test`` (a
    candidate run) no test image is labelled: its ``test`` metrics are empty (the choice reads validation; at LFW
    size the 250 test images were a sixth of a candidate's CPU). ``depths``: also score the forest with its trees cut
    at each of these depths (a level-order fit; "Depth stages" above), recorded under ``stages``."""
    from ..infra.precompile import warm_up_listed as warm_up
    from ..infra.warmup import numba_compile_clock
    from ..plan.methods import make_estimator

    log = log or logging.getLogger(__name__)
    parts = _parts(split, fit_on, score_test)
    estimator = make_estimator(method, params, seed, n_jobs=n_jobs)
    n_trees = int(estimator.n_estimators)
    sizes = stage_sizes(n_trees)
    if block_trees is not None:
        check_block_stages(n_trees, int(block_trees))
    depths = check_depths(estimator, depths)
    by_depth = None
    compiling = None
    if blocks:
        log.info("merging %d tree blocks of %s (%d trees, blocks of %d)", len(blocks), method, n_trees, block_trees)
        compile_seconds = 0.0
        merged = _merge(estimator, parts, sizes, blocks,
                        {**dict(block_check or {}), "n_estimators": n_trees, "block_trees": block_trees}, model_path,
                        log, depths)
        scores, maps, fit_seconds, predict_seconds, tree_stats, by_depth = merged
    else:
        X_fit, y_fit = _fit_images(split, fit_on)
        compile_seconds = warm_up(estimator, X_fit, y_fit, task="segmentation", name=method, log=log)
        log.info("fitting %s on %d images %s (%s), params %s, seed %d", method, X_fit.shape[0], X_fit.shape[1:],
                 fit_on, params, seed)
        with numba_compile_clock() as compiling:
            start = time.perf_counter()
            estimator.fit(X_fit, y_fit)
            fit_seconds = time.perf_counter() - start
        log.info("fit took %.3f s", fit_seconds)
        start = time.perf_counter()
        scores, maps = {}, {}
        for part, (images, truth) in parts.items():
            if images.shape[0]:
                wanted = sizes if part != "train" else sizes[-1:]
                scores[part], maps[part] = score_sums(estimator, truth, estimator.staged_sums(images, wanted,
                                                                                               block_trees),
                                                       sizes[-1])
            if part == "test":
                predict_seconds = time.perf_counter() - start  # the test images' scoring, as before
        if depths:
            by_depth = depth_scores(estimator, parts,
                                    lambda part, images: estimator.depth_sums(images, depths, block_trees), n_trees)
        windows = estimator.sample_windows(split.X_test, 2000, random_state=seed)
        fitted = _metrics.fitted_trees(estimator)
        tree_stats = _metrics.tree_stats(fitted, windows)
        if model_path is not None and fitted:
            save_trees(model_path, fitted)
    result, staged, arrays = _result(estimator, parts, scores, maps, sizes)
    result = {"params": dict(params), "seed": int(seed), "n_train": int(_n_fit(split, fit_on)),
              "n_val": int(parts["val"][0].shape[0]), "n_test": int(split.X_test.shape[0]), **result}
    result.update(fit_seconds=fit_seconds, predict_seconds=predict_seconds, staged=staged,
                  compile_seconds=compile_seconds, fit_compile_seconds=0.0 if compiling is None else compiling.lock)
    result["tree"] = tree_stats
    if depths:
        result["stages"] = depth_stages(estimator, parts, by_depth, n_trees)
        for stage in result["stages"]:
            log.info("depth %d: jaccard train %s | val %s | test %s", stage["max_depth"],
                     *(stage[part].get("jaccard") for part in ("train", "val", "test")))
    result["_arrays"] = arrays
    log.info("train %s | val %s | test %s | staged %s jaccard %s", result["train"], result["val"], result["test"],
             "test" if score_test else "validation",
             dict(zip(sizes, np.round(staged["test_jaccard" if score_test else "val_jaccard"], 2))))
    return result, estimator


def run_segmentation_block(tmp, *, method, params, seed, split, trees, block_trees, fit_on, n_jobs, keep, log,
                           score_test=True, depths=None):
    """Fit trees ``trees`` (a range) of the segmentation run's forest and write the block's files into ``tmp``:
    ``sums.npz`` (``{part}_sum``: the block's class sums on every scored image set; with ``depths``, also
    ``{part}_sum_depth{d}``: its trees cut at depth d) and, when ``keep``, ``model.npz``. Returns the block record's
    segmentation fields (scores of the staged sizes inside the first block, each tree's statistics, timings)."""
    from ..infra.precompile import warm_up_listed as warm_up
    from ..plan.methods import make_estimator

    X_fit, y_fit = _fit_images(split, fit_on)
    parts = _parts(split, fit_on, score_test)
    estimator = make_estimator(method, params, seed, n_jobs=n_jobs)
    n_trees = int(estimator.n_estimators)
    check_block_stages(n_trees, int(block_trees))
    depths = check_depths(estimator, depths)
    sizes = stage_sizes(n_trees)
    inside = [m for m in sizes if trees.start < m < trees.stop]  # the first block's only (check_block_stages)
    compile_seconds = warm_up(estimator, X_fit, y_fit, task="segmentation", name=method, log=log)  # not timed
    log.info("fitting trees %d..%d of %s (%d trees, blocks of %d) on %d images (%s), params %s, seed %d",
             trees.start, trees.stop - 1, method, n_trees, block_trees, X_fit.shape[0], fit_on, params, seed)
    start = time.perf_counter()
    estimator.fit_trees(X_fit, y_fit, trees)
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    arrays, scores = {}, {}
    for part, (images, truth) in parts.items():
        if not images.shape[0]:
            continue
        wanted = [m - trees.start for m in inside] if part != "train" else []
        got = {}
        for m, sums in estimator.staged_sums(images, [*wanted, len(trees)]):  # sums: a buffer, read at once
            if m < len(trees):
                got.update(score_sums(estimator, truth, [(m, sums)], None)[0])
            else:
                arrays[f"{part}_sum"] = sums.copy()
        if got:
            scores[part] = {m + trees.start: v for m, v in got.items()}
        for d, sums in estimator.depth_sums(images, depths) if depths else ():
            arrays[f"{part}_sum_depth{d}"] = sums
    predict_seconds = time.perf_counter() - start
    # compressed: a few trees' sums of mostly pure leaves take few distinct values (LFW: ~0.4 GB a block raw)
    np.savez_compressed(tmp / "sums.npz", **arrays)
    windows = estimator.sample_windows(split.X_test, 2000, random_state=seed)
    fitted = _metrics.fitted_trees(estimator)
    if keep:
        save_trees(tmp / "model.npz", fitted)
    return {"n_estimators": n_trees, "classes": estimator.classes_.tolist(),
            "class_weights": estimator.class_weights_.tolist(),
            "scores": scores,
            "tree_stats": [tree.stats(windows) for tree in fitted],
            "leaves": [_metrics.n_leaves(tree) for tree in fitted], "fit_seconds": fit_seconds,
            "predict_seconds": predict_seconds, "compile_seconds": compile_seconds}


def _merge(estimator, parts, sizes, block_dirs, expect, model_path, log, depths=None):
    """``(scores, maps, fit_seconds, predict_seconds, tree_stats, by_depth)`` of the whole forest from its blocks
    (whose trees are written to ``model_path`` in tree order when it is given); ``by_depth`` as
    :func:`~treeopt.experiments.run.segment_scores.depth_scores` gives it for ``depths`` (None without)."""
    from ...trees import TreeWriter

    blocks = read_blocks(block_dirs, expect)
    classes, weights = blocks[0][1]["classes"], blocks[0][1]["class_weights"]
    # what label_maps reads: the classes and the inverse sampling factors of the training images (every block
    # computed them from the same images)
    estimator.classes_ = np.asarray(classes)
    estimator.class_weights_ = np.asarray(weights, dtype=np.float64)
    writer = TreeWriter(model_path, expect["n_estimators"]) if model_path is not None else None
    try:
        merged = _add_blocks(estimator, parts, sizes, blocks, writer, log, depths)
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    if writer is not None:
        writer.close()
    return merged


def _read_sum(sums, path, key, like):
    """Array ``key`` of a block's open ``sums.npz`` (a :class:`BlockError` when missing, unreadable or not shaped
    ``like``, the other blocks' sum so far)."""
    if key not in sums.files:
        raise BlockError(f"{path}/sums.npz: no {key}")
    try:
        block_sum = sums[key]
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise BlockError(f"{path}/sums.npz: {key} is not readable ({exc}); rerun the block") from None
    if like is not None and block_sum.shape != like.shape:
        raise BlockError(f"{path}/sums.npz: {key} has shape {block_sum.shape}, the other blocks' {like.shape}")
    return block_sum


def _add_blocks(estimator, parts, sizes, blocks, writer, log, depths=None):
    from ...forest.bagging import blocked_sum
    from ...trees import iter_trees

    classes, weights = blocks[0][1]["classes"], blocks[0][1]["class_weights"]
    scores = {part: {} for part in parts}
    maps, done = {}, {}
    fit_seconds = predict_seconds = 0.0
    per_tree, leaves = [], []
    for path, record in blocks:
        if record["classes"] != classes or record["class_weights"] != weights:
            raise BlockError(f"{path}: classes {record['classes']} weighted {record['class_weights']}, the first "
                             f"block's {classes} weighted {weights}")
        first, stop = record["trees"]
        for part, by_size in record.get("scores", {}).items():
            scores[part].update({int(m): v for m, v in by_size.items()})
        with _open_sums(path) as sums:
            for part, (images, truth) in parts.items():
                if not images.shape[0]:
                    continue
                block_sum = _read_sum(sums, path, f"{part}_sum", done.get(part))
                done[part] = block_sum if part not in done else blocked_sum(done[part], block_sum)
                for d in depths or ():
                    key = (part, d)
                    block_sum = _read_sum(sums, path, f"{part}_sum_depth{d}", done.get(key))
                    done[key] = block_sum if key not in done else blocked_sum(done[key], block_sum)
                if stop in sizes and (part != "train" or stop == sizes[-1]):
                    got, kept = score_sums(estimator, truth, [(stop, done[part])], sizes[-1])
                    scores[part].update(got)
                    if kept is not None:
                        maps[part] = kept
        if writer is not None:
            if not (path / "model.npz").is_file():
                raise BlockError(f"{path}: the run keeps its model, the block has no model.npz")
            for tree in iter_trees(path / "model.npz"):
                writer.add(tree)
        per_tree.extend(record["tree_stats"])
        leaves.extend(record["leaves"])
        fit_seconds += record["fit_seconds"]
        predict_seconds += record["predict_seconds"]
        log.info("merged block %s: trees %d..%d, fit %.3f s", path, first, stop - 1, record["fit_seconds"])
    for part, (images, _) in parts.items():
        wanted = sizes if part != "train" else sizes[-1:]
        missing = [m for m in wanted if m not in scores[part]] if images.shape[0] else []
        if missing:
            raise BlockError(f"the blocks give no {part} scores for forest sizes {missing}")
    by_depth = None
    if depths:
        by_depth = depth_scores(estimator, parts, lambda part, _: ((d, done[(part, d)]) for d in depths), sizes[-1])
    return scores, maps, fit_seconds, predict_seconds, _metrics.combine_tree_stats(per_tree, leaves), by_depth


def _open_sums(path):
    """The block's ``sums.npz``, or a :class:`BlockError` naming it when it cannot be read (a damaged file)."""
    try:
        return np.load(path / "sums.npz", allow_pickle=False)
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise BlockError(f"{path}/sums.npz: not readable ({exc}); rerun the block") from None
