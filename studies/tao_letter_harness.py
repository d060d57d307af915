"""Issue #8 harness: TAO sparsity path on Letter (train 10,500 / validation 4,500; test never read), printing per
TAO iteration the training and validation error, live internal nodes, non-zero weights, node solves accepted
(by the care 0/1 loss / by the penalised objective) or rejected, and the care points' share of the node's points.

Usage: python studies/tao_letter_harness.py --depth 12 --init cart --Cs 100,30,10,3,1,0.3 [--params JSON]
       [--out studies/results/tao_letter_harness.csv] [--tag NAME]
Validation only: every choice made from this output must be made on val_error.
"""
import argparse
import csv
import json
import os
import time

import numpy as np

from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.tao import TAOTreeClassifier
from treeopt.tao import _kernels as K


class Probe(TAOTreeClassifier):
    """TAOTreeClassifier that tallies node-solve outcomes and records one row per iteration."""

    def _solve_node(self, task, X, XL, y, k, C, work, arrays):
        node, rows, is_leaf = task
        if is_leaf:
            return super()._solve_node(task, X, XL, y, k, C, work, arrays)
        care, target, cur = K.care_points(X, rows, y, node, arrays, work.label)
        t = self._tally
        t["care_share"].append(care.sum() / max(len(rows), 1))
        res = super()._solve_node(task, X, XL, y, k, C, work, arrays)
        if res[0] == "oblique":
            cidx = rows[care]
            cur_err = int(np.count_nonzero(cur[care] != target[care]))
            w, b = res[2], res[3]
            idx = np.flatnonzero(w)
            new_err = int(np.count_nonzero(K.oblique_side(X, cidx, idx.astype(np.int64), w[idx], float(b)) != target[care]))
            t["acc_err" if new_err <= cur_err else "acc_obj"] += 1
            t["d_care_loss"] += new_err - cur_err
        elif res[0] == "keep":
            t["rejected"] += 1
        elif res[0] == "reused":
            t["reused"] += 1
        elif res[0] == "no_care":
            t["no_care"] += 1
        return res


def live_stats(work, X):
    """Internal nodes that split the training points (both children reached), and their non-zero weights."""
    reach = work.reach(X)
    total = np.bincount(reach[reach >= 0], minlength=work.left.shape[0])
    internal = np.flatnonzero((work.left >= 0) & (total > 0))
    live = [i for i in internal if total[work.left[i]] > 0 and total[work.right[i]] > 0]
    nnz = sum(1 if work.feature[i] >= 0 else len(work.rows.get(int(i), ((), ()))[0]) for i in live)
    return len(live), nnz


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--depth", type=int, default=12)
    ap.add_argument("--init", default="cart")
    ap.add_argument("--Cs", default="100,30,10,3,1,0.3")
    ap.add_argument("--params", default="{}")
    ap.add_argument("--out", default="studies/results/tao_letter_harness.csv")
    ap.add_argument("--tag", default="")
    ap.add_argument("--cart", default=None, help="JSON kwargs of a scikit-learn DecisionTreeClassifier used as init")
    ap.add_argument("--oc1", default=None,
                    help="JSON kwargs of the OC1TreeClassifier used as init (max_depth defaults to --depth; "
                         "null grows it fully; random_state defaults to the run's)")
    ap.add_argument("--rescale", choices=["none", "minmax"], default="none",
                    help="minmax: map each feature to [-1, 1] over the training rows (as LIBSVM letter.scale)")
    ap.add_argument("--always-error-stop", action="store_true",
                    help="with accept=always, stop on the training error instead of the library's penalised objective "
                         "(runs tagged always* without alwobj)")
    a = ap.parse_args()
    Probe._always_objective_stop = not a.always_error_stop
    Cs = sorted((float(c) for c in a.Cs.split(",")), reverse=True)
    extra = json.loads(a.params)
    s = load_split(prepare_split("letter", load_config("config.yaml"), 0))
    Xt, Xv, yv = s.X_train, s.X_val, s.y_val
    if a.rescale == "minmax":  # an affine map per feature: same CART structure, other l1 weighting and C scale
        lo, hi = Xt.min(axis=0), Xt.max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        Xt, Xv = 2 * (Xt - lo) / span - 1, 2 * (Xv - lo) / span - 1
    rows_out = []
    init = a.init
    init_name = a.cart or (a.oc1 and "oc1" + a.oc1) or a.init  # the runs' "init" column
    if a.cart:
        from sklearn.tree import DecisionTreeClassifier
        init = DecisionTreeClassifier(**{"random_state": extra.get("random_state", 0), **json.loads(a.cart)})
    elif a.oc1:
        from treeopt.greedy import OC1TreeClassifier
        init = OC1TreeClassifier(**{"max_depth": a.depth, "random_state": extra.get("random_state", 0),
                                    **json.loads(a.oc1)})
    elif a.init == "random_any":  # the old random tree: splits through random points of the whole training set
        from treeopt.tao.tao import _random_tree
        init = _random_tree(Xt, s.y_train, np.unique(s.y_train).shape[0], node_type="oblique", depth=a.depth,
                            random_state=extra.get("random_state", 0), through="any")
    est = Probe(C=Cs[-1], warm_start_C=Cs[:-1], max_depth=a.depth, init=init, **{"accept": "objective", "random_state": 0, "n_jobs": 1, **extra})
    est._tally = None
    yv_enc = np.searchsorted(np.unique(s.y_train), yv)
    orig_opt = Probe._optimise

    def optimise(self, work, X, XL, y, k, C, **kw):
        # re-enter the pass loop one iteration at a time would need library changes; instead wrap the per-pass
        # training-error evaluation, which _optimise calls exactly once after each pass
        state = {"it": 0}
        orig_pred = work.predict_labels

        def pred(Xq):
            out = orig_pred(Xq)
            if Xq is X:
                tr = float(np.mean(out != y))
                va = float(np.mean(orig_pred(np.ascontiguousarray(Xv)) != yv_enc))
                n_int, nnz = live_stats(work, X)
                t = self._tally
                row = {"tag": a.tag, "params": a.params, "rescale": a.rescale, "depth": a.depth, "init": init_name, "C": C, "iteration": state["it"],
                       "train_error": 100 * tr, "val_error": 100 * va, "live_internal": n_int, "nonzero": nnz,
                       "acc_by_error": t["acc_err"], "acc_by_objective": t["acc_obj"], "rejected": t["rejected"],
                       "reused": t["reused"], "no_care": t["no_care"], "care_loss_change": t["d_care_loss"],
                       "care_share_mean": float(np.mean(t["care_share"])) if t["care_share"] else float("nan"),
                       "penalty": work.penalty(), "seconds": time.perf_counter() - t0}
                rows_out.append(row)
                print(" ".join(f"{k_}={v:.4g}" if isinstance(v, float) else f"{k_}={v}" for k_, v in row.items()
                               if k_ not in ("tag", "depth", "init")), flush=True)
                state["it"] += 1
                self._tally = fresh()
            return out

        work.predict_labels = pred
        self._tally = fresh()
        return orig_opt(self, work, X, XL, y, k, C, **kw)

    def fresh():
        return {"acc_err": 0, "acc_obj": 0, "rejected": 0, "reused": 0, "no_care": 0, "d_care_loss": 0,
                "care_share": []}

    Probe._optimise = optimise
    t0 = time.perf_counter()
    est.fit(Xt, s.y_train)
    print(f"init internal nodes {est.init_tree_.stats()['n_internal']}", flush=True)
    for p, tree in zip(est.path_, est.path_trees_):
        va = 100 * float(np.mean(est.classes_[tree.predict_proba(Xv).argmax(1)] != yv))
        print(f"PATH tag={a.tag} C={p['C']:g} it={p['n_iter']} train={100 * p['train_error']:.2f} val={va:.2f} "
              f"internal={p['n_internal']} nnz={p.get('nonzero_weights')}", flush=True)
        rows_out.append({"tag": a.tag, "params": a.params, "rescale": a.rescale, "depth": a.depth, "init": init_name, "C": p["C"], "iteration": "final",
                         "train_error": 100 * p["train_error"], "val_error": va, "live_internal": p["n_internal"],
                         "nonzero": p.get("nonzero_weights"), "seconds": time.perf_counter() - t0})
    new = not os.path.exists(a.out)
    keys = list(rows_out[0].keys())
    with open(a.out, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        if new:
            w.writeheader()
        w.writerows(rows_out)


if __name__ == "__main__":
    main()
