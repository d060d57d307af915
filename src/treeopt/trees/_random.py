"""Random complete trees: test fixtures and initialisations (e.g. the non-greedy paper's random start)."""

import numpy as np

from ._tree import Tree


def random_tree(depth, n_features, n_outputs, *, oblique=True, value_kind="log_scores", random_state=None):
    """A complete binary tree of the given depth with Gaussian weights (oblique) or random axis splits.

    Nodes are numbered breadth-first: children of i are 2i+1 and 2i+2.
    """
    rng = np.random.default_rng(random_state)
    n_internal = 2 ** depth - 1
    n_nodes = 2 ** (depth + 1) - 1
    ids = np.arange(n_nodes)
    left = np.where(ids < n_internal, 2 * ids + 1, -1)
    right = np.where(ids < n_internal, 2 * ids + 2, -1)
    W = np.zeros((n_nodes, n_features))
    if oblique:
        W[:n_internal] = rng.standard_normal((n_internal, n_features))
        bias = np.concatenate([rng.standard_normal(n_internal), np.zeros(n_nodes - n_internal)])
    else:
        W[np.arange(n_internal), rng.integers(0, n_features, n_internal)] = 1.0
        bias = np.concatenate([rng.uniform(-1, 1, n_internal), np.zeros(n_nodes - n_internal)])
    value = rng.standard_normal((n_nodes, n_outputs))
    return Tree(left, right, W, bias, value, value_kind=value_kind)
