"""A big forest as several jobs: tree blocks fitted apart, merged into the run one job would have written.

The trees of a bagged forest are independent: tree i is grown from its own seed, which depends only on
``(random_state, i)`` (:func:`treeopt.forest.bagging.tree_seeds`), so trees ``a..b-1`` can be fitted by one job
and the rest by others. A forest of T trees split into blocks of s trees (``forest_block_trees`` in the config)
is T / s **block jobs** (:func:`run_block`: trees ``j s .. (j+1) s - 1``, the data and parameters of the final run)
and one **merge** (the final run itself, :func:`treeopt.experiments.run.runner.run` with ``blocks=``), which reads
the blocks in tree order and writes the run folder.

Same numbers as one job: a run's scores come from the sum of its trees' class probabilities on the training,
validation and test rows, read off at every staged size. Floating-point addition is not associative, so the
sums are made in blocks in both cases: within a block from zero, tree by tree in tree order, and the finished
blocks' sums added in block order (:class:`treeopt.forest.bagging.RunningProba` with ``block_trees`` in one
job; here from each block's saved sums, through the same :func:`~treeopt.forest.bagging.blocked_sum`). A block
saves its sum at every staged size inside it and at its end (``sums.npz``), its trees' statistics
(``block.json``) and, when the model is kept, its trees (``model.npz``; the merge writes them in order into the
run's ``model.npz``). The run folder is therefore the same for any split, bit for bit outside timings
(``fit_seconds`` and ``predict_seconds`` are the blocks' sums), and ``rerun`` of it in one job gives the same
numbers (``params.yaml`` records ``block_trees``). ``tests/test_forest_blocks.py`` checks this for CO2 and OC1
forests.

A block folder is written like a run folder: into a hidden temporary sibling (same names and marker as
:mod:`treeopt.experiments.run.folders`, so stale ones of killed jobs are cleaned the same way) and renamed into
place at the end: an interrupted block leaves nothing that looks finished. This module fits blocks; their folders'
checks and the merge are in :mod:`treeopt.experiments.run.block_sums` (which the runner imports: no import circle).
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

import numpy as np

from ..plan.tree_blocks import BlockError
from .block_sums import is_block_folder
from .folders import TMP_MARKER, write_through_temporary


def run_block(block_dir, *, dataset, method, params, seed, split_path, trees, block_trees, fit_on="trainval",
              n_jobs=1, save_model=None, inherit=None, stages=None, score_test=True):
    """Fit trees ``trees`` (a (start, stop) pair or range: one block) of the forest the run ``method`` /
    ``params`` / ``seed`` on ``split_path`` fits, and write the block folder ``block_dir``; returns its record.

    The arguments are those of the final run that merges the block (:func:`treeopt.experiments.run.runner.run`);
    ``stages`` ({"n_estimators": [sizes]}) names the staged sizes whose sums the block keeps (a segmentation forest's
    ``max_depth`` stages: the depths its trees are cut at, each depth's sums kept); ``score_test=False``
    (a segmentation candidate's block) sums no test image.
    """
    from ..plan.methods import get_method
    from . import runner as _runner

    trees = range(*trees) if not isinstance(trees, range) else trees
    params, inherited = _runner.resolve_inherited(params, inherit)
    block_dir = Path(os.path.abspath(block_dir))
    if block_dir.exists() and not (is_block_folder(block_dir) or (block_dir.is_dir() and not any(block_dir.iterdir()))):
        raise BlockError(f"{block_dir}: exists and is not a block folder; it is left alone")

    def fill(tmp, logger):
        split = _runner._load_split(split_path)
        spec = get_method(method)
        keep = spec.keeps_model if save_model is None else save_model
        record = {
            "dataset": dataset, "method": method, "params": _runner._plain(dict(params)), "seed": int(seed),
            "fit_on": fit_on, "split_sha256": _runner._sha256(split_path),
            "n_estimators": None,  # the estimator's, below (made with the data's number of features: p^a values)
            "block_trees": int(block_trees), "trees": [trees.start, trees.stop], "model": bool(keep),
        }
        if spec.task == "segmentation":  # scored on images: sums per pixel (treeopt.experiments.run.segment_runs)
            from .segment_runs import run_segmentation_block

            record.update(_runner._plain(run_segmentation_block(
                tmp, method=method, params=params, seed=seed, split=split, trees=trees, block_trees=block_trees,
                fit_on=fit_on, n_jobs=n_jobs, keep=keep, log=logger, score_test=score_test,
                depths=dict(stages or {}).get("max_depth"))))
        else:
            record.update(_fit_rows_block(tmp, split, spec, method=method, params=params, seed=seed, trees=trees,
                                          block_trees=block_trees, fit_on=fit_on, n_jobs=n_jobs, keep=keep,
                                          stages=stages, log=logger))
        if inherited:
            record["inherited"] = inherited
        (tmp / "block.json").write_text(json.dumps(record, indent=1) + "\n")
        logger.info("block done: %d trees, fit %.3f s", len(trees), record["fit_seconds"])
        return record

    return write_through_temporary(block_dir, fill, "block", _replace)


def _fit_rows_block(tmp, split, spec, *, method, params, seed, trees, block_trees, fit_on, n_jobs, keep, stages, log):
    """A bagged forest's block on a table of rows (CO2 Forest, OC1 Forest): fitted and summed tree by tree
    (:func:`treeopt.experiments.run.streamed.fit_streamed`); writes ``sums.npz`` (and ``model.npz``) into ``tmp``
    and returns the block record's other fields."""
    from ..infra.precompile import warm_up_listed as warm_up
    from ..plan.methods import make_estimator
    from . import runner as _runner
    from .fit import fit_parts, streamed_stage_indices
    from .streamed import fit_streamed, streams

    X_fit, y_fit, parts, X_stats = fit_parts(split, fit_on)
    estimator = make_estimator(method, params, seed, n_jobs=n_jobs, n_features=X_fit.shape[1])
    if not streams(estimator, spec.task):
        raise BlockError(f"method {method!r} cannot be split into tree blocks: only treeopt's bagged forests "
                         f"(CO2 Forest, OC1 Forest) and segmentation forests are fitted tree by tree")
    n_estimators = int(estimator.n_estimators)
    sizes = {v for values in dict(stages or {}).values() for v in values}
    wanted = streamed_stage_indices(estimator, sizes)
    compile_seconds = warm_up(estimator, X_fit, y_fit, task=spec.task, name=method, log=log)  # not timed
    log.info("fitting trees %d..%d of %s (%d trees, blocks of %d) on %d x %d points (%s), params %s, seed %d",
             trees.start, trees.stop - 1, method, n_estimators, block_trees, *X_fit.shape, fit_on, params, seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fitted = fit_streamed(estimator, X_fit, y_fit, {part: X for part, (X, _) in parts.items()}, X_stats,
                              stage_sizes=wanted, model_path=tmp / "model.npz" if keep else None,
                              block_trees=int(block_trees), trees=trees)
    for w in caught:
        log.warning("%s: %s", w.category.__name__, w.message)
    arrays = {f"{part}_sum": total for part, total in fitted["block_sum"].items()}
    arrays.update({f"{part}_m{m}": total for part, by_m in fitted["partial"].items() for m, total in by_m.items()})
    np.savez(tmp / "sums.npz", **arrays)
    return {
        "n_estimators": n_estimators, "stages": sorted(int(m) for m in wanted if trees.start < m <= trees.stop),
        "classes": _runner._plain(estimator.classes_.tolist()),
        "tree_stats": _runner._plain(fitted["tree_stats"]), "leaves": _runner._plain(fitted["leaves"]),
        "oblique": _runner._plain(fitted["oblique"]), "fallbacks": _runner._plain(fitted["fallbacks"]),
        "fit_seconds": fitted["fit_seconds"], "predict_seconds": fitted["predict_seconds"],
        "compile_seconds": compile_seconds,
    }


def _replace(tmp, block_dir):
    """Rename the finished temporary into place (an earlier block folder there is replaced)."""
    (tmp / TMP_MARKER).unlink()
    if block_dir.exists():
        if not (is_block_folder(block_dir) or not any(block_dir.iterdir())):
            raise BlockError(f"{block_dir}: exists and is not a block folder; left alone (the block is not saved)")
        shutil.rmtree(block_dir)
    os.rename(tmp, block_dir)
