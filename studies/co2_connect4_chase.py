"""Issue #11, Connect-4: why CO2 Forest does not beat random forest (validation split only; test rows never read).

Connect-4 split 0 of the workflow (``treeopt.data``): 44,000 training / 11,000 validation rows, 126 one-hot
indicators z-scored (``scale: standard``). Two commands:

``nodes``: the top of one CO2 tree (all training rows, no bootstrap), node by node down to ``--depth``, for every
``--nu``: the start of Alg. 1 as the library builds it (best information-gain axis split over q = p^0.9 = 78 random
features, scaled onto the sphere ``||[w, b]||^2 = nu``, add-one-smoothed leaf log-frequencies theta) and, before
and after :func:`treeopt.greedy.co2.optimize_co2_stump` (the library kernel, forest stop rule n_iter_no_change=5):
``||w||``, |bias|, margin quantiles |w.x - b|, the leaf loss gap |l(theta_0, y) - l(theta_1, y)|, and the number of
*active* points, whose loss-augmented winner (eq. (11)'s arg max, Alg. 1 line 8) is not their own side -- the
only points whose w-subgradient ``-(1 + s) x~`` / ``(1 - s) x~`` is non-zero (s = own side). After the optimisation:
how far w left the axis (share of ||w||^2 off the start feature, non-zero and large weights), and the information
gain of the optimised split vs the axis split. ``--scale 01`` uses the {0, 1} indicators as they are (min-max);
``--init unit`` starts from w = e_f, b = threshold (projected onto the ball only when outside) instead of the sphere.
The tree descends along the optimised split of the first ``--nu`` (axis split when it collapsed).

``forest``: validation error of CO2 forests (and, with ``--rf``, scikit-learn's entropy random forest with the same
q) at 10 / 30 trees for (nu, eta) under ``--scale`` and ``--init`` (``--init unit`` via a patched copy of the
grower, :func:`unit_init_grower`), with the forest's oblique-split / fallback counts and CPU seconds.

    python studies/co2_connect4_chase.py nodes --nu 0.1 1 4 10 43 100 --depth 2
    python studies/co2_connect4_chase.py nodes --scale 01 --nu 0.1 1 4 10 43 100 --depth 2
    python studies/co2_connect4_chase.py forest --nu 1 --eta 0.03 --trees 10
    python studies/co2_connect4_chase.py forest --scale 01 --nu 1 10 --eta 0.03 --trees 10

``trees``: single trees on all training rows (CO2 with q = 78 and scikit-learn entropy trees with q = 78 / all p):
validation error and, per depth, axis fallbacks, unmoved and moved stumps and the split's information gain
against the best axis split over all features.

One JSON line per node x nu (``nodes``), per forest (``forest``) or per tree (``trees``).
Results: ``studies/results/co2_connect4_chase.log``.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import treeopt.greedy.co2 as co2_module  # noqa: E402
from treeopt.data import load_split, prepare_split  # noqa: E402
from treeopt.experiments.plan.config import load_config  # noqa: E402
from treeopt.greedy.co2 import _log_losses, leaf_log_frequencies, optimize_co2_stump  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
Q = 78  # round(126 ** 0.9): the q the workflow's random forest validation chose


def load(scale):
    """Split 0 (train 44,000 / validation 11,000); ``scale='01'`` maps the z-scores back onto the {0, 1}
    indicators (each feature's training range onto [0, 1])."""
    split = load_split(prepare_split("connect4", load_config(ROOT / "config.yaml"), 0))
    Xtr, Xva = split.X_train, split.X_val
    if scale == "01":
        lo, hi = Xtr.min(0), Xtr.max(0)
        span = np.where(hi > lo, hi - lo, 1.0)
        Xtr, Xva = (Xtr - lo) / span, (Xva - lo) / span
    return (np.ascontiguousarray(Xtr), split.y_train.astype(np.int64), np.ascontiguousarray(Xva),
            split.y_val.astype(np.int64))


def entropy(y, k):
    c = np.bincount(y, minlength=k).astype(float)
    pr = c[c > 0] / c.sum()
    return float(-(pr * np.log2(pr)).sum())


def gain(y, right, k):
    n = y.size
    nr = int(right.sum())
    if nr in (0, n):
        return 0.0
    return entropy(y, k) - nr / n * entropy(y[right], k) - (n - nr) / n * entropy(y[~right], k)


def best_axis(X, y, k, feats):
    """Best information-gain axis split over ``feats`` (thresholds at midpoints of consecutive distinct values)."""
    best = (-1.0, None, None)
    for f in feats:
        vals = np.unique(X[:, f])
        for t in (vals[:-1] + vals[1:]) / 2:
            g = gain(y, X[:, f] >= t, k)
            if g > best[0]:
                best = (g, f, float(t))
    return best


def active_points(z, y, theta):
    """Points whose loss-augmented winner (Alg. 1 line 8, ties left) differs from their own side (z >= 0 right)."""
    losses = _log_losses(y, theta)
    right_wins = z + losses[:, 1] > -z + losses[:, 0]
    return int(np.sum(right_wins != (z >= 0))), losses


def q3(a):
    return [round(float(v), 3) for v in np.quantile(a, [0.1, 0.5, 0.9])]


def node_report(X, y, k, nu, eta, init, seed, rng_feats):
    g_axis, f, t = best_axis(X, y, k, rng_feats)
    right0 = X[:, f] >= t
    theta0 = leaf_log_frequencies(y, right0, k)
    w = np.zeros(X.shape[1])
    if init == "sphere":
        s = np.sqrt(nu / (1 + t * t))
    else:
        s = min(1.0, np.sqrt(nu / (1 + t * t)))
    w[f], b = s, t * s
    z0 = X @ w - b
    act0, losses0 = active_points(z0, y, theta0)
    st = optimize_co2_stump(X, y, w, b, theta0, nu=nu, learning_rate=eta, n_iter_no_change=5, seed=seed)
    z1 = X @ st.weights - st.bias
    act1, _ = active_points(z1, y, st.theta)
    right1 = z1 >= 0
    w1 = st.weights
    wn2 = float(w1 @ w1)
    off = 1 - w1[f] ** 2 / wn2 if wn2 > 0 else 0.0
    amax = np.abs(w1).max()
    return dict(
        nu=nu, eta=eta, init=init, n=int(y.size), feature=int(f), thr=round(t, 3), gain_axis=round(g_axis, 4),
        w0=round(s, 3), b0=round(b, 3), margin0_q10_50_90=q3(np.abs(z0)),
        loss_gap_q10_50_90=q3(np.abs(losses0[:, 0] - losses0[:, 1])), active0=act0,
        theta0=np.round(theta0, 2).tolist(), epochs=st.n_epochs,
        w1=round(float(np.sqrt(wn2)), 3), b1=round(st.bias, 3), norm2_1=round(wn2 + st.bias ** 2, 3),
        margin1_q10_50_90=q3(np.abs(z1)), active1=act1, theta1=np.round(st.theta, 2).tolist(),
        off_axis_share=round(float(off), 4), nnz=int(np.sum(np.abs(w1) > 1e-6)),
        n_large=int(np.sum(np.abs(w1) > 0.1 * amax)), gain_opt=round(gain(y, right1, k), 4),
        right_share=round(float(right1.mean()), 3), changed_side=int(np.sum(right1 != right0)),
        surrogate0=round(float(st.surrogate[0]), 4), surrogate_end=round(float(st.surrogate[-1]), 4),
        eta_end=st.learning_rate), right1, right0


def cmd_nodes(a):
    X, y, _, _ = load(a.scale)
    k = 3
    rng = np.random.default_rng(a.seed)
    frontier = [(np.arange(y.size), 0, "r")]
    while frontier:
        idx, depth, path = frontier.pop(0)
        Xn, yn = X[idx], y[idx]
        if np.unique(yn).size < 2:
            continue
        feats = rng.choice(X.shape[1], Q, replace=False)
        keep = None
        for nu in a.nu:
            for eta in a.eta:
                rep, right1, right0 = node_report(Xn, yn, k, nu, eta, a.init, a.seed, feats)
                print(json.dumps(dict(tag=a.tag, scale=a.scale, depth=depth, path=path, **rep)), flush=True)
                if keep is None:
                    keep = right1 if 0 < right1.sum() < right1.size else right0
        if depth + 1 <= a.depth:
            frontier.append((idx[~keep], depth + 1, path + "L"))
            frontier.append((idx[keep], depth + 1, path + "R"))


def unit_init_grower(cap=1.0):
    """``grow_co2_tree`` of a patched copy of the library's grower (the library file is not touched) whose stumps
    start from the univariate split as it is, ``w = e_f, b = threshold`` (projected onto the ball only when
    ``1 + threshold^2 > nu``), instead of scaled onto the sphere ``||[w, b]||^2 = nu``; ``cap`` < 1 scales that
    start down further (``w = cap e_f, b = cap threshold``)."""
    import importlib.util
    import tempfile

    source = (ROOT / "src" / "treeopt" / "greedy" / "_co2_grow.py").read_text()
    edits = [("from ._co2_sgd import", "from treeopt.greedy._co2_sgd import"),
             ("from ._criteria import", "from treeopt.greedy._criteria import"),
             ("_NJIT = dict(cache=True", "_NJIT = dict(cache=False"),
             ("scale = np.sqrt(nu / (1.0 + tz * tz))", f"scale = min({float(cap)!r}, np.sqrt(nu / (1.0 + tz * tz)))")]
    for old, new in edits:
        if old not in source:
            raise RuntimeError(f"_co2_grow.py changed; cannot apply {old!r}")
        source = source.replace(old, new)
    path = Path(tempfile.mkdtemp()) / "co2_grow_unit_init.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("co2_grow_unit_init", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.grow_co2_tree


def cmd_forest(a):
    from sklearn.ensemble import RandomForestClassifier

    from treeopt.forest import CO2ForestClassifier

    X, y, Xv, yv = load(a.scale)
    co2_module.OSCILLATION_PATIENCE = a.patience  # read by the CO2 trees at fit time
    if a.init != "sphere":
        co2_module.grow_co2_tree = unit_init_grower(a.init_cap)
    for seed in a.seeds:
        if a.rf:
            c0 = time.process_time()
            rf = RandomForestClassifier(n_estimators=max(a.sizes), criterion="entropy", max_features=Q,
                                        random_state=seed, n_jobs=1).fit(X, y)
            err = {}
            for m in a.sizes:
                proba = np.mean([t.predict_proba(Xv) for t in rf.estimators_[:m]], axis=0)
                err[m] = round(100 * float(np.mean(proba.argmax(1) != yv)), 3)
            print(json.dumps(dict(tag=a.tag, method="rf_entropy", scale=a.scale, seed=seed, q=Q, val_error_at=err,
                                  cpu_seconds=round(time.process_time() - c0, 1))), flush=True)
        for nu in a.nu:
            for eta in a.eta:
                c0 = time.process_time()
                model = CO2ForestClassifier(n_estimators=max(a.sizes), nu=nu, learning_rate=eta, max_features=Q,
                                            n_iter_no_change=a.nic, tau=a.tau, bootstrap=not a.no_bootstrap,
                                            random_state=seed, n_jobs=1).fit(X, y)
                err = {m: round(100 * float(np.mean(
                    model.classes_[model.predict_proba(Xv, n_trees=m).argmax(1)] != yv)), 3) for m in a.sizes}
                print(json.dumps(dict(tag=a.tag, method="co2_forest", scale=a.scale, init=a.init,
                                      init_cap=a.init_cap if a.init == "unit" else None, nic=a.nic, tau=a.tau,
                                      patience=a.patience, bootstrap=not a.no_bootstrap, seed=seed, nu=nu,
                                      eta=eta, q=Q, val_error_at=err, oblique_per_tree=model.n_oblique_splits_,
                                      fallbacks_per_tree=model.n_axis_fallbacks_,
                                      cpu_seconds=round(time.process_time() - c0, 1))), flush=True)


DEPTH_BINS = [(0, 0), (1, 1), (2, 2), (3, 3), (4, 5), (6, 9), (10, 14), (15, 99)]


def split_stats(tree, X, y, k):
    """Per depth bin: internal nodes, axis fallbacks, oblique stumps that never left their axis start (one non-zero
    weight), moved ones (share of ||w||^2 off the largest weight, non-zero / large weights) and the information gain
    of the node's split minus the best axis gain over all 126 features on the node's training points."""
    paths = tree.decision_path(X).tocsc()
    W = tree.W.tocsr() if hasattr(tree.W, "tocsr") else None
    hi = X > X.mean(0)  # binary indicators: the upper of the two values
    Y = np.eye(k)[y]
    rows = {b: [] for b in DEPTH_BINS}
    for node in np.flatnonzero(tree.left >= 0):
        idx = paths.indices[paths.indptr[node]:paths.indptr[node + 1]]
        yn = y[idx]
        cnt_hi = hi[idx].T.astype(float) @ Y[idx]  # (p, k)
        tot = Y[idx].sum(0)
        n = idx.size
        best = 0.0
        h = entropy(yn, k)
        for c in cnt_hi:
            nr = c.sum()
            if 0 < nr < n:
                pr, pl = c[c > 0] / nr, (tot - c)[(tot - c) > 0] / (n - nr)
                g = h - nr / n * float(-(pr * np.log2(pr)).sum()) - (n - nr) / n * float(-(pl * np.log2(pl)).sum())
                best = max(best, g)
        f = tree.feature[node]
        if f >= 0:
            right = X[idx, f] >= tree.bias[node]
            kind, nnz, nlarge, off = "axis", 1, 1, 0.0
        else:
            row = W[node]
            w = row.data
            right = (X[idx][:, row.indices] @ w - tree.bias[node]) >= 0
            amax = np.abs(w).max()
            nnz = int(np.sum(np.abs(w) > 1e-9))
            nlarge = int(np.sum(np.abs(w) > 0.1 * amax))
            off = 1 - amax ** 2 / float(w @ w)
            kind = "unmoved" if nnz == 1 or off < 1e-6 else "moved"
        d = tree.depth[node]
        b = next(b for b in DEPTH_BINS if b[0] <= d <= b[1])
        rows[b].append((kind, nnz, nlarge, off, gain(yn, right, k) - best))
    out = []
    for b, r in rows.items():
        if not r:
            continue
        kinds = [x[0] for x in r]
        moved = [x for x in r if x[0] == "moved"]
        out.append(dict(depth=f"{b[0]}-{b[1]}", internal=len(r), axis_fallback=kinds.count("axis"),
                        unmoved=kinds.count("unmoved"), moved=len(moved),
                        moved_nnz_median=float(np.median([x[1] for x in moved])) if moved else None,
                        moved_large_median=float(np.median([x[2] for x in moved])) if moved else None,
                        moved_off_axis_mean=round(float(np.mean([x[3] for x in moved])), 3) if moved else None,
                        gain_minus_best_axis_mean=round(float(np.mean([x[4] for x in r])), 4),
                        share_below_best_axis=round(float(np.mean([x[4] < -1e-9 for x in r])), 3)))
    return out


def cmd_trees(a):
    from sklearn.tree import DecisionTreeClassifier

    from treeopt.greedy.co2 import CO2TreeClassifier

    X, y, Xv, yv = load(a.scale)
    for seed in a.seeds:
        for q in (Q, None):
            t = DecisionTreeClassifier(criterion="entropy", max_features=q, random_state=seed).fit(X, y)
            print(json.dumps(dict(tag=a.tag, method="entropy_tree", scale=a.scale, seed=seed, q=q,
                                  val_error=round(100 * float(np.mean(t.predict(Xv) != yv)), 3),
                                  leaves=int(t.get_n_leaves()))), flush=True)
        for nu in a.nu:
            for eta in a.eta:
                c0 = time.process_time()
                m = CO2TreeClassifier(nu=nu, learning_rate=eta, max_features=Q, n_iter_no_change=5,
                                      random_state=seed).fit(X, y)
                cpu = time.process_time() - c0
                print(json.dumps(dict(tag=a.tag, method="co2_tree", scale=a.scale, seed=seed, nu=nu, eta=eta, q=Q,
                                      val_error=round(100 * float(np.mean(m.predict(Xv) != yv)), 3),
                                      oblique=m.n_oblique_splits_, fallbacks=m.n_axis_fallbacks_,
                                      leaves=int(np.sum(m.tree_.left < 0)), cpu_seconds=round(cpu, 1),
                                      per_depth=split_stats(m.tree_, X, y, 3))), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["nodes", "forest", "trees"])
    ap.add_argument("--tag", default="")
    ap.add_argument("--nu", type=float, nargs="+", default=[1.0])
    ap.add_argument("--eta", type=float, nargs="+", default=[0.03])
    ap.add_argument("--scale", choices=["z", "01"], default="z")
    ap.add_argument("--init", choices=["sphere", "unit"], default="sphere")
    ap.add_argument("--init-cap", type=float, default=1.0, help="with --init unit: start from cap * (e_f, threshold)")
    ap.add_argument("--depth", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10])
    ap.add_argument("--rf", action="store_true")
    ap.add_argument("--nic", type=int, default=5, help="stump stop rule: epochs without a relative fall (forest: 5)")
    ap.add_argument("--no-bootstrap", action="store_true", help="CO2 trees on all training rows (the paper bags)")
    ap.add_argument("--tau", type=int, default=1, help="epochs between CCCP refreshes of w_old (eq. (11))")
    ap.add_argument("--patience", type=int, default=co2_module.OSCILLATION_PATIENCE,
                    help="consecutive surrogate rises before eta is halved (1000000: never)")
    a = ap.parse_args(argv)
    {"nodes": cmd_nodes, "forest": cmd_forest, "trees": cmd_trees}[a.command](a)


if __name__ == "__main__":
    sys.exit(main())
