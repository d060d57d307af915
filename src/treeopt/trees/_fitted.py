"""The fitted trees of any estimator, in the shared format."""

import numpy as np

from ._tree import Tree


def fitted_trees(estimator):
    """The fitted trees of an estimator as treeopt ``Tree`` objects (one for a tree, all for an ensemble): its
    ``tree_`` (a ``Tree``, or a scikit-learn tree converted with ``Tree.from_sklearn``), else those of its
    ``estimators_``, recursively."""
    tree = getattr(estimator, "tree_", None)
    if isinstance(tree, Tree):
        return [tree]
    if tree is not None and hasattr(tree, "children_left"):
        return [Tree.from_sklearn(estimator)]
    members = getattr(estimator, "estimators_", None)
    if members is None:
        return []
    return [t for member in np.ravel(np.asarray(members, dtype=object)) for t in fitted_trees(member)]
