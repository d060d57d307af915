"""Collapse subtrees whose leaves all predict one label (a prediction-preserving simplification of a TAO tree).

Sec. 3 removes dead branches and pure subtrees (all *points* of one label) after convergence
(``TAOTreeClassifier._finish``). A subtree whose *leaves* all carry one label predicts that label for any input,
whatever its points, so it can be a single leaf with no prediction changed; on Letter 3-9 such subtrees remain
per tree (docs/tao.md, Letter chase). The fitted estimator reports the collapsed tree; the sparsity path goes on
from the uncollapsed one, so the path and every prediction are as before.
"""

import numpy as np
import scipy.sparse as sp

from ..trees import Tree


def collapse_same_label(tree: Tree) -> Tree:
    """``tree`` with every maximal subtree whose leaves share their predicted label replaced by one leaf.

    The new leaf's row is the leaves' probability rows weighted by their training points (+1e-3, so empty leaves
    count and the shared label stays the strict argmax: each leaf's row has it as strict argmax), so ``predict``
    is unchanged for every input; ``predict_proba`` inside a collapsed subtree becomes that blend.
    Returns ``tree`` itself when nothing collapses.
    """
    left, right = tree.left, tree.right
    prob = tree.leaf_probabilities()
    pred = prob.argmax(axis=1)
    weight = np.maximum(tree.n_samples, 0).astype(np.float64) + 1e-3
    common = np.full(tree.n_nodes, -1, dtype=np.int64)
    acc = np.zeros_like(prob)
    for i in np.argsort(tree.depth, kind="stable")[::-1]:  # children before parents
        if left[i] < 0:
            common[i] = pred[i]
            acc[i] = weight[i] * prob[i]
        else:
            acc[i] = acc[left[i]] + acc[right[i]]
            if common[left[i]] >= 0 and common[left[i]] == common[right[i]]:
                common[i] = common[left[i]]
    collapse = (left >= 0) & (common >= 0)
    if not collapse.any():
        return tree
    keep, stack = [], [0]  # pre-order, not entering collapsed subtrees
    while stack:
        i = stack.pop()
        keep.append(i)
        if left[i] >= 0 and not collapse[i]:
            stack += [right[i], left[i]]
    keep = np.array(keep)
    new_id = np.full(tree.n_nodes, -1, dtype=np.int64)
    new_id[keep] = np.arange(keep.shape[0])
    leaf = (left[keep] < 0) | collapse[keep]
    new_left = np.where(leaf, -1, new_id[left[keep]])
    new_right = np.where(leaf, -1, new_id[right[keep]])
    value = tree.value[keep].copy()
    c = collapse[keep]
    value[c] = acc[keep][c] / acc[keep][c].sum(axis=1, keepdims=True)
    feature = np.where(leaf, -2, tree.feature[keep])
    W = sp.csr_matrix(tree.W)[keep]
    return Tree(new_left, new_right, W, np.where(leaf, 0.0, tree.bias[keep]), value, feature=feature,
                n_samples=tree.n_samples[keep], value_kind=tree.value_kind, x_dtype=tree.x_dtype)
