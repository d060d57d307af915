"""Issue #8, lead 2, by hand: on a TAO tree for Letter, recompute a few internal nodes' care points in plain numpy
(independent of the numba kernels) and compare the care 0/1 loss of the node's current hyperplane, of our LIBLINEAR
wrapper's solution (``l1_svm_rows``, -R: bias not penalised) and of scikit-learn's LinearSVC (the same LIBLINEAR
solver 5, its intercept penalised but scaled by 100, so nearly unpenalised).

Usage: python studies/tao_node_check.py [C] [depth] [n_nodes]
"""
import sys

import numpy as np
from sklearn.svm import LinearSVC

from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.tao import TAOTreeClassifier
from treeopt.tao._liblinear import l1_svm_rows

C = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
depth = int(sys.argv[2]) if len(sys.argv) > 2 else 10
n_nodes = int(sys.argv[3]) if len(sys.argv) > 3 else 8
s = load_split(prepare_split("letter", load_config("config.yaml"), 0))
X, y = s.X_train, s.y_train
est = TAOTreeClassifier(C=C, warm_start_C=[100], max_depth=depth, accept="objective", random_state=0, n_jobs=1).fit(X, y)
t = est.tree_
W = t.W.toarray()
yk = np.searchsorted(est.classes_, y)
leaf_label = t.value.argmax(axis=1)


def right(i, Xs):
    return Xs @ W[i] - t.bias[i] >= 0


def subtree_predict(i, Xs):
    out = np.empty(Xs.shape[0], dtype=int)
    idx = np.arange(Xs.shape[0])
    stack = [(i, idx)]
    while stack:
        node, rows = stack.pop()
        if t.left[node] < 0:
            out[rows] = leaf_label[node]
            continue
        r = right(node, Xs[rows])
        stack += [(t.left[node], rows[~r]), (t.right[node], rows[r])]
    return out


# points reaching each node, by plain routing from the root
reach = {0: np.arange(X.shape[0])}
order = [0]
for node in order:
    if t.left[node] >= 0:
        rows = reach[node]
        r = right(node, X[rows])
        reach[t.left[node]], reach[t.right[node]] = rows[~r], rows[r]
        order += [t.left[node], t.right[node]]
internal = [i for i in order if t.left[i] >= 0]
internal.sort(key=lambda i: -reach[i].shape[0])
print(f"C={C} depth={depth}: {len(internal)} internal nodes, train error {100 * np.mean(est.predict(X) != y):.2f}%")
print("node points care target_right cur_loss ours_loss ours_nnz svc_loss svc_nnz")
for i in internal[:n_nodes // 2] + internal[len(internal) // 2:len(internal) // 2 + n_nodes // 2]:
    rows = reach[i]
    zl, zr = subtree_predict(t.left[i], X[rows]), subtree_predict(t.right[i], X[rows])
    ok_l, ok_r = zl == yk[rows], zr == yk[rows]
    care = ok_l != ok_r
    cidx, target = rows[care], ok_r[care]
    cur = int(np.count_nonzero(right(i, X[cidx]) != target))
    if target.all() or not target.any():
        print(f"{i:4d} {rows.shape[0]:6d} {cidx.shape[0]:5d} one-sided care set")
        continue
    w, b, _ = l1_svm_rows(np.ascontiguousarray(X), cidx, target, C, regularize_bias=False, seed=0)
    ours = int(np.count_nonzero((X[cidx] @ w - b >= 0) != target))
    svc = LinearSVC(penalty="l1", loss="squared_hinge", dual=False, C=C, intercept_scaling=100, tol=1e-2,
                    max_iter=10000).fit(X[cidx], target)
    svc_loss = int(np.count_nonzero(svc.predict(X[cidx]) != target))
    print(f"{i:4d} {rows.shape[0]:6d} {cidx.shape[0]:5d} {int(target.sum()):5d} {cur:6d} {ours:6d} {np.count_nonzero(w):3d}"
          f" {svc_loss:6d} {np.count_nonzero(svc.coef_):3d}")
