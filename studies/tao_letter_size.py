"""Issue #8, lead 1: why TAO trees from CART starts stay large (Letter, validation only; test never read).

Fits one TAO sparsity path (as studies/tao_letter_harness.py) and, for each tree of the path at the chosen Cs,
counts on the training points: internal nodes by the number of training points reaching them (histogram),
dead nodes (a child no training point reaches) and pure nodes (all points one class) that the final pruning
should have removed, subtrees whose leaves all carry one label (collapsible without changing any prediction),
and "useless" subtrees: replacing the subtree by a majority leaf raises the training errors by <= t points
(t = 0, 1, 5); for each t the internal nodes inside maximal such subtrees and the validation error of the
tree with them collapsed (diagnostic only, never used to choose).

The path's trees are ``path_trees_``, which since ea849a2 are reported with same-label subtrees already collapsed
(``treeopt.tao._prune``), so a re-run counts 0 of them; the committed CSV was made before that change.

Usage: python studies/tao_letter_size.py --init cart --depth 12 --seed 0 --at 1,0.5 [--params JSON]
       [--out studies/results/tao_letter_size.csv]
"""
import argparse
import csv
import json
import os

import numpy as np

from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.tao import TAOTreeClassifier

GRID = [100, 30, 10, 3, 1.7, 1, 0.7, 0.5, 0.3, 0.2, 0.1]
BINS = [0, 1, 5, 10, 20, 50, 100, 10 ** 9]  # training points per internal node: [0,1), [1,5), [5,10), ...


def node_counts(tree, X, y, k):
    """(n_nodes, k) training class counts per node."""
    path = tree.decision_path(X).tocsc()
    counts = np.zeros((tree.n_nodes, k), dtype=np.int64)
    for c in range(k):
        counts[:, c] = np.asarray(path[y == c].sum(axis=0)).ravel()
    return counts


def analyse(tree, X, y, Xv, yv, k):
    left, right = tree.left, tree.right
    internal = np.flatnonzero(left >= 0)
    counts = node_counts(tree, X, y, k)
    total = counts.sum(axis=1)
    leaf_label = np.argmax(tree.value, axis=1)  # TAO's label (nudged up on ties)
    # bottom-up: subtree training errors, and the set of leaf labels below each node
    order = np.argsort(tree.depth)[::-1]
    sub_err = np.zeros(tree.n_nodes, dtype=np.int64)
    labels = [None] * tree.n_nodes
    for i in order:
        if left[i] < 0:
            sub_err[i] = total[i] - counts[i, leaf_label[i]]
            labels[i] = {int(leaf_label[i])}
        else:
            sub_err[i] = sub_err[left[i]] + sub_err[right[i]]
            labels[i] = labels[left[i]] | labels[right[i]]
    leaf_err = total - counts.max(axis=1)  # errors of a majority leaf in place of the subtree
    gain = leaf_err - sub_err  # training errors the subtree saves
    n_below = np.zeros(tree.n_nodes, dtype=np.int64)  # internal nodes in the subtree, itself included
    for i in order:
        if left[i] >= 0:
            n_below[i] = 1 + n_below[left[i]] + n_below[right[i]]
    parent = np.full(tree.n_nodes, -1)
    parent[left[internal]] = internal
    parent[right[internal]] = internal

    def maximal(mask):
        """Internal nodes of mask whose ancestors are all outside mask; internal nodes inside them."""
        top = [i for i in internal if mask[i] and not any_anc(i, mask)]
        return top, int(sum(n_below[i] for i in top))

    def any_anc(i, mask):
        j = parent[i]
        while j >= 0:
            if mask[j]:
                return True
            j = parent[j]
        return False

    def collapsed_val(top):
        """Validation error with the subtrees at ``top`` replaced by majority leaves (diagnostic)."""
        path = tree.decision_path(Xv).tocsc()
        pred = leaf_label[tree.apply(Xv)].copy()
        for i in top:
            hit = path[:, i].toarray().ravel() > 0
            pred[hit] = int(np.argmax(counts[i]))
        return 100 * float(np.mean(pred != yv))

    hist = np.histogram(total[internal], bins=BINS)[0]
    dead = int(sum(1 for i in internal if total[left[i]] == 0 or total[right[i]] == 0))
    pure = int(sum(1 for i in internal if np.count_nonzero(counts[i]) <= 1))
    same_top, same_n = maximal(np.array([left[i] >= 0 and len(labels[i]) == 1 for i in range(tree.n_nodes)]))
    val = 100 * float(np.mean(leaf_label[tree.apply(Xv)] != yv))
    row = {"n_internal": int(internal.size), "val_error": val,
           "train_error": 100 * float(sub_err[0]) / X.shape[0],
           "dead": dead, "pure": pure, "same_label_subtrees": len(same_top), "same_label_nodes": same_n,
           "median_pts_internal": float(np.median(total[internal])),
           "median_pts_leaf": float(np.median(total[left < 0]))}
    for lo, hi, h in zip(BINS[:-1], BINS[1:], hist):
        row[f"int_pts_{lo}-{hi - 1 if hi < 10 ** 9 else 'inf'}"] = int(h)
    for t in (0, 1, 5):
        top, n = maximal((left >= 0) & (gain <= t))
        row[f"useless_t{t}_subtrees"] = len(top)
        row[f"useless_t{t}_nodes"] = n
        row[f"useless_t{t}_val"] = collapsed_val(top)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--init", default="cart")
    ap.add_argument("--depth", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0, help="random_state (split 0, as the harness)")
    ap.add_argument("--at", default="1,0.7,0.5")
    ap.add_argument("--Cs", default=",".join(str(c) for c in GRID))
    ap.add_argument("--params", default="{}")
    ap.add_argument("--tag", default="")
    ap.add_argument("--out", default="studies/results/tao_letter_size.csv")
    a = ap.parse_args()
    Cs = sorted((float(c) for c in a.Cs.split(",")), reverse=True)
    at = {float(c) for c in a.at.split(",")}
    s = load_split(prepare_split("letter", load_config("config.yaml"), 0))
    X, Xv = np.ascontiguousarray(s.X_train, dtype=np.float64), np.ascontiguousarray(s.X_val, dtype=np.float64)
    classes = np.unique(s.y_train)
    y, yv = np.searchsorted(classes, s.y_train), np.searchsorted(classes, s.y_val)
    params = {"accept": "always", "n_jobs": 1, "random_state": a.seed, **json.loads(a.params)}
    est = TAOTreeClassifier(C=Cs[-1], warm_start_C=Cs[:-1], max_depth=a.depth, init=a.init, **params)
    est.fit(X, y)
    rows = []
    for p, tree in zip(est.path_, est.path_trees_):
        if p["C"] not in at:
            continue
        row = {"tag": a.tag, "init": a.init, "depth": a.depth, "seed": a.seed, "params": json.dumps(params),
               "C": p["C"], **analyse(tree, X, y, Xv, yv, classes.shape[0])}
        print(" ".join(f"{k_}={v:.4g}" if isinstance(v, float) else f"{k_}={v}" for k_, v in row.items()
                       if k_ != "params"), flush=True)
        rows.append(row)
    new = not os.path.exists(a.out)
    with open(a.out, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        if new:
            w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
