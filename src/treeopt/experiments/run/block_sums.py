"""Tree blocks on disk: their folders, checks and merge (the arithmetic side of :mod:`treeopt.experiments.run.blocks`).

A block folder holds ``block.json`` (the run it belongs to, its trees' statistics), ``sums.npz`` (its probability
sums) and, when the model is kept, ``model.npz``. :func:`merge_blocks` adds the blocks' sums in tree order, as a
one-job run with the same ``block_trees`` adds them (:class:`treeopt.forest.bagging.RunningProba`), and returns what
:func:`treeopt.experiments.run.streamed.fit_streamed` returns, so the runner scores a merged forest as a fitted one.
This module does not import the runner (the runner imports it).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np

from ..plan.tree_blocks import BlockError, block_ranges

BLOCK_FILES = frozenset({"block.json", "sums.npz", "model.npz", "log.txt"})
# what a block must share with the run that merges it (and with the other blocks)
SAME_RUN_KEYS = ("dataset", "method", "params", "seed", "fit_on", "split_sha256", "n_estimators", "block_trees")


def is_block_folder(path):
    """True when ``path`` is a folder :func:`run_block` wrote (``block.json`` and nothing but block files)."""
    path = Path(path)
    if path.is_symlink() or not path.is_dir():
        return False
    names = {p.name for p in path.iterdir()} - {".snakemake_timestamp"}
    return "block.json" in names and names <= BLOCK_FILES and not any((path / n).is_dir() for n in names)


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
    """What :func:`treeopt.experiments.run.streamed.fit_streamed` returns for the whole forest, from its blocks.

    ``parts``: {part: number of rows} of the run (the rows the blocks summed over); ``classes``: the forest's
    ``classes_``; ``stage_sizes``: the staged forest sizes to label. Block sums are added in tree order through
    :func:`~treeopt.forest.bagging.blocked_sum`, as a one-job run with the same ``block_trees`` adds them.
    """
    from ...forest.bagging import blocked_sum
    from ...trees import TreeWriter, iter_trees

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
