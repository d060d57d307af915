"""Forests split into tree blocks, as the plan, the cost model and the block jobs see them: which runs are split
(:func:`block_size`, ``forest_block_trees`` on a profile), the tree ranges of the blocks (:func:`block_ranges`), and
the forest sizes a segmentation run scores (:func:`stage_sizes`), which later blocks must not cut
(:func:`check_block_stages`). The block jobs themselves are :mod:`treeopt.experiments.run.blocks` (rows) and
:mod:`treeopt.experiments.run.segment_runs` (images).
"""

from .methods import fits_tree_ranges

N_TRAIN_SCORED = 5  # training images a segmentation run scores (the whole forest only)


class BlockError(ValueError):
    """Blocks that do not make up the run asked for (missing, overlapping, of another run, damaged)."""


def block_ranges(n_trees, block_trees):
    """The tree ranges of a forest of ``n_trees`` split into blocks of ``block_trees`` (the last may be smaller)."""
    n_trees, block_trees = int(n_trees), int(block_trees)
    if n_trees < 1 or block_trees < 1:
        raise ValueError(f"n_trees and block_trees must be positive, got {n_trees} and {block_trees}")
    return [range(start, min(start + block_trees, n_trees)) for start in range(0, n_trees, block_trees)]


def stage_sizes(n_trees):
    """Forest sizes a segmentation run scores along the way: 1, 2, 4, ... up to ``n_trees`` (always included)."""
    sizes = [1 << i for i in range(int(n_trees).bit_length()) if (1 << i) < n_trees]
    return [*sizes, int(n_trees)]


def check_block_stages(n_trees, block_trees):
    """Raise :class:`BlockError` unless every staged size of a forest of ``n_trees`` split in blocks of
    ``block_trees`` lies inside the first block or ends a block (later blocks cannot score sizes inside them: the
    sum of the blocks before is not theirs)."""
    inside = [m for m in stage_sizes(n_trees) if m > block_trees and m % block_trees and m != n_trees]
    if inside:
        raise BlockError(f"a segmentation forest of {n_trees} trees in blocks of {block_trees}: staged sizes {inside} "
                         "fall inside later blocks; use a block size that is a power of two")


def fit_size(method, params):
    """The number of trees a final run's forest grows, or None when the method is not a treeopt bagged forest (only
    those are fitted tree by tree and can be split) or the size is not a number."""
    n_trees = params.get("n_estimators")
    if not isinstance(n_trees, int) or isinstance(n_trees, bool):
        return None
    return n_trees if fits_tree_ranges(method) else None


def block_size(profile, method, n_trees):
    """The block size of a forest of ``n_trees`` trees of ``method`` under the profile's ``forest_block_trees``
    (None: fitted in one job, when the method has no entry, is not a treeopt bagged forest or fits in one block)."""
    block = (profile.get("forest_block_trees") or {}).get(method)
    if block is None or n_trees is None or n_trees <= block:
        return None
    return int(block)

