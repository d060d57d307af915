"""A big forest as several jobs: tree blocks fitted apart, merged into the run one job would have written.

The trees of a bagged forest are independent: tree i is grown from its own seed, which depends only on
``(random_state, i)`` (:func:`treeopt.forest.bagging.tree_seeds`), so trees ``a..b-1`` can be fitted by one job
and the rest by others. A forest of T trees split into blocks of s trees (``forest_block_trees`` in the config)
is T / s **block jobs** (:func:`run_block`: trees ``j s .. (j+1) s - 1``, the data and parameters of the final run)
and one **merge** (the final run itself, :func:`treeopt.experiments.runner.run` with ``blocks=``), which reads
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
:mod:`treeopt.experiments.runner`'s, so stale ones of killed jobs are cleaned the same way) and renamed into
place at the end: an interrupted block leaves nothing that looks finished.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import warnings
from pathlib import Path

import numpy as np

BLOCK_FILES = frozenset({"block.json", "sums.npz", "model.npz", "log.txt"})
# what a block must share with the run that merges it (and with the other blocks)
SAME_RUN_KEYS = ("dataset", "method", "params", "seed", "fit_on", "split_sha256", "n_estimators", "block_trees")


class BlockError(ValueError):
    """Blocks that do not make up the run asked for (missing, overlapping, of another run, damaged)."""


def block_ranges(n_trees, block_trees):
    """The tree ranges of a forest of ``n_trees`` split into blocks of ``block_trees`` (the last may be smaller)."""
    n_trees, block_trees = int(n_trees), int(block_trees)
    if n_trees < 1 or block_trees < 1:
        raise ValueError(f"n_trees and block_trees must be positive, got {n_trees} and {block_trees}")
    return [range(start, min(start + block_trees, n_trees)) for start in range(0, n_trees, block_trees)]


def is_block_folder(path):
    """True when ``path`` is a folder :func:`run_block` wrote (``block.json`` and nothing but block files)."""
    path = Path(path)
    if path.is_symlink() or not path.is_dir():
        return False
    names = {p.name for p in path.iterdir()} - {".snakemake_timestamp"}
    return "block.json" in names and names <= BLOCK_FILES and not any((path / n).is_dir() for n in names)


def _logger(tmp):
    """A logger writing to ``tmp/log.txt`` (with treeopt's library lines), and a function that detaches it."""
    logger = logging.getLogger(f"treeopt.block.{tmp.name}")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    handler = logging.FileHandler(tmp / "log.txt")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    library = logging.getLogger("treeopt")
    level = library.level
    library.setLevel(logging.INFO)
    library.addHandler(handler)

    def detach():
        handler.close()
        logger.removeHandler(handler)
        library.removeHandler(handler)
        library.setLevel(level)

    return logger, detach


def run_block(block_dir, *, dataset, method, params, seed, split_path, trees, block_trees, fit_on="trainval",
              n_jobs=1, save_model=None, inherit=None, stages=None):
    """Fit trees ``trees`` (a (start, stop) pair or range: one block) of the forest the run ``method`` /
    ``params`` / ``seed`` on ``split_path`` fits, and write the block folder ``block_dir``; returns its record.

    The arguments are those of the final run that merges the block (:func:`treeopt.experiments.runner.run`);
    ``stages`` ({"n_estimators": [sizes]}) names the staged sizes whose sums the block keeps.
    """
    from . import runner as _runner
    from .methods import get_method, make_estimator
    from .streamed import fit_streamed, streams

    trees = range(*trees) if not isinstance(trees, range) else trees
    params, inherited = _runner.resolve_inherited(params, inherit)
    block_dir = Path(os.path.abspath(block_dir))
    if block_dir.exists() and not (is_block_folder(block_dir) or (block_dir.is_dir() and not any(block_dir.iterdir()))):
        raise BlockError(f"{block_dir}: exists and is not a block folder; it is left alone")
    block_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = _runner._make_temporary(block_dir)
    logger, detach = _logger(tmp)
    try:
        split = _runner._load_split(split_path)
        spec = get_method(method)
        X_fit, y_fit, parts, X_stats = _runner.fit_parts(split, fit_on)
        estimator = make_estimator(method, params, seed, n_jobs=n_jobs, n_features=X_fit.shape[1])
        if not streams(estimator, spec.task):
            raise BlockError(f"method {method!r} cannot be split into tree blocks: only treeopt's bagged forests "
                             f"(CO2 Forest, OC1 Forest) are fitted tree by tree")
        n_estimators = int(estimator.n_estimators)
        sizes = {v for values in dict(stages or {}).values() for v in values}
        wanted = _runner._streamed_stage_indices(estimator, sizes)
        keep = spec.keeps_model if save_model is None else save_model
        logger.info("fitting trees %d..%d of %s (%d trees, blocks of %d) on %d x %d points (%s), params %s, "
                    "seed %d", trees.start, trees.stop - 1, method, n_estimators, block_trees, *X_fit.shape, fit_on,
                    params, seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fitted = fit_streamed(estimator, X_fit, y_fit, {part: X for part, (X, _) in parts.items()}, X_stats,
                                  stage_sizes=wanted, model_path=tmp / "model.npz" if keep else None,
                                  block_trees=int(block_trees), trees=trees)
        for w in caught:
            logger.warning("%s: %s", w.category.__name__, w.message)
        arrays = {f"{part}_sum": total for part, total in fitted["block_sum"].items()}
        arrays.update({f"{part}_m{m}": total for part, by_m in fitted["partial"].items() for m, total in by_m.items()})
        np.savez(tmp / "sums.npz", **arrays)
        record = {
            "dataset": dataset, "method": method, "params": _runner._plain(dict(params)), "seed": int(seed),
            "fit_on": fit_on, "split_sha256": _runner._sha256(split_path), "n_estimators": n_estimators,
            "block_trees": int(block_trees), "trees": [trees.start, trees.stop],
            "stages": sorted(int(m) for m in wanted if trees.start < m <= trees.stop),
            "classes": _runner._plain(estimator.classes_.tolist()), "model": bool(keep),
            "tree_stats": _runner._plain(fitted["tree_stats"]), "leaves": _runner._plain(fitted["leaves"]),
            "oblique": _runner._plain(fitted["oblique"]), "fallbacks": _runner._plain(fitted["fallbacks"]),
            "fit_seconds": fitted["fit_seconds"], "predict_seconds": fitted["predict_seconds"],
            **({"inherited": inherited} if inherited else {}),
        }
        (tmp / "block.json").write_text(json.dumps(record, indent=1) + "\n")
        logger.info("block done: %d trees, fit %.3f s", len(trees), fitted["fit_seconds"])
        detach()
        _replace(tmp, block_dir)
        return record
    except BaseException:
        logger.exception("block failed")
        detach()
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _replace(tmp, block_dir):
    """Rename the finished temporary into place (an earlier block folder there is replaced)."""
    (tmp / _runner_marker()).unlink()
    if block_dir.exists():
        if not (is_block_folder(block_dir) or not any(block_dir.iterdir())):
            raise BlockError(f"{block_dir}: exists and is not a block folder; left alone (the block is not saved)")
        shutil.rmtree(block_dir)
    os.rename(tmp, block_dir)


def _runner_marker():
    from .runner import TMP_MARKER

    return TMP_MARKER


def read_blocks(block_dirs, expect):
    """The records of ``block_dirs`` in tree order, checked: each a finished block of the run ``expect`` (the
    :data:`SAME_RUN_KEYS` of the merging run), together covering trees 0..n_estimators-1 once, in blocks of
    ``block_trees``. Raises :class:`BlockError` naming the first problem."""
    records = []
    for path in block_dirs:
        path = Path(path)
        if not is_block_folder(path):
            raise BlockError(f"{path}: not a finished tree block (no block.json, or other files in it)")
        try:
            record = json.loads((path / "block.json").read_text())
        except (OSError, ValueError) as exc:
            raise BlockError(f"{path}/block.json: not readable ({exc})") from None
        for key in SAME_RUN_KEYS:
            if record.get(key) != expect[key]:
                raise BlockError(f"{path}: a block of another run: its {key} is {record.get(key)!r}, the run's "
                                 f"{expect[key]!r}")
        records.append((record["trees"][0], path, record))
    records.sort(key=lambda item: item[0])
    wanted = [[r.start, r.stop] for r in block_ranges(expect["n_estimators"], expect["block_trees"])]
    got = [record["trees"] for _, _, record in records]
    if got != wanted:
        raise BlockError(f"the blocks hold trees {got}; the run needs exactly {wanted} (n_estimators "
                         f"{expect['n_estimators']} in blocks of {expect['block_trees']})")
    return [(path, record) for _, path, record in records]


def merge_blocks(block_dirs, expect, classes, parts, stage_sizes=(), model_path=None, log=None):
    """What :func:`treeopt.experiments.streamed.fit_streamed` returns for the whole forest, from its blocks.

    ``parts``: {part: number of rows} of the run (the rows the blocks summed over); ``classes``: the forest's
    ``classes_``; ``stage_sizes``: the staged forest sizes to label. Block sums are added in tree order through
    :func:`~treeopt.forest.bagging.blocked_sum`, as a one-job run with the same ``block_trees`` adds them.
    """
    from ..forest.bagging import blocked_sum
    from ..trees import TreeWriter, iter_trees

    log = log or logging.getLogger(__name__)
    blocks = read_blocks(block_dirs, expect)
    n_trees = expect["n_estimators"]
    classes = np.asarray(classes)
    wanted = {int(m) for m in stage_sizes if 1 <= int(m) <= n_trees}
    out = {"labels": {}, "staged": {part: {} for part in parts}, "tree_stats": [], "leaves": [], "oblique": [],
           "fallbacks": [], "first_tree": None, "fit_seconds": 0.0, "predict_seconds": 0.0}
    done = {part: np.zeros((rows, classes.shape[0])) for part, rows in parts.items()}
    keep = model_path is not None
    writer = TreeWriter(model_path, n_trees) if keep else None
    try:
        for path, record in blocks:
            if record["classes"] != classes.tolist():
                raise BlockError(f"{path}: classes {record['classes']}, the run's {classes.tolist()}")
            start, stop = record["trees"]
            inside = sorted(m for m in wanted | {n_trees} if start < m <= stop)
            with np.load(path / "sums.npz", allow_pickle=False) as sums:
                for part in parts:
                    block_sum = _array(sums, f"{part}_sum", done[part].shape, path)
                    for m in inside:
                        partial = block_sum if m == stop else _array(sums, f"{part}_m{m}", done[part].shape, path)
                        labels = classes[(blocked_sum(done[part], partial) / m).argmax(axis=1)]  # as predict does
                        if m in wanted:
                            out["staged"][part][m] = labels
                        if m == n_trees:
                            out["labels"][part] = labels
                    done[part] = blocked_sum(done[part], block_sum)
            for key in ("tree_stats", "leaves", "oblique", "fallbacks"):
                out[key].extend(record[key])
            out["fit_seconds"] += record["fit_seconds"]
            out["predict_seconds"] += record["predict_seconds"]
            if keep:
                if not (path / "model.npz").is_file():
                    raise BlockError(f"{path}: the run keeps its model, the block has no model.npz")
                for tree in iter_trees(path / "model.npz"):
                    writer.add(tree)
            log.info("merged block %s: trees %d..%d, fit %.3f s", path, start, stop - 1, record["fit_seconds"])
        if keep:
            writer.close()
    except BaseException:
        if keep:
            writer.abort()
        raise
    return out


def _array(sums, key, shape, path):
    if key not in sums.files:
        raise BlockError(f"{path}/sums.npz: no {key} (the block was fitted for other staged sizes?)")
    array = sums[key]
    if array.shape != shape or array.dtype != np.float64:
        raise BlockError(f"{path}/sums.npz: {key} is {array.dtype} {array.shape}, the run's rows need float64 {shape}")
    return array


def block_setup(block_dir):
    """The ``block.json`` record of a finished block (for inspection and tests)."""
    return json.loads((Path(block_dir) / "block.json").read_text())
