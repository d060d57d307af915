"""Shared flat-array tree store: one representation for axis-aligned and oblique trees."""

from ._fitted import fitted_trees
from ._kernels import forest_accumulate
from ._random import random_tree
from ._tree import LEAF, OBLIQUE, VALUE_KINDS, Tree, TreeWriter, iter_trees, load_trees, save_trees

__all__ = ["Tree", "fitted_trees", "forest_accumulate", "save_trees", "load_trees", "TreeWriter", "iter_trees",
           "random_tree", "LEAF", "OBLIQUE", "VALUE_KINDS"]
