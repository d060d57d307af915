"""Issue #11: candidate causes of the Letter CO2 Forest gap, one at a time, on the validation split only.

Fits CO2 Forests on Letter's training part (10,500 rows) and scores the validation part (4,500 rows) at 10 / 30 /
100 ... trees; the test rows are never read. Every variant changes one thing against the library as it is:

- ``--scale pm1``: LIBSVM ``letter.scale`` scaling (each feature's training range onto [-1, 1]) instead of z-scores;
- ``--nic N``: the stump stop rule (epochs without a relative fall of 1e-3 of the best surrogate; forest default 5);
- ``--tau N``: epochs between CCCP refreshes of w_old (eq. (11); default 1);
- ``--patience N``: consecutive surrogate rises before eta is halved (Sec. 4.2; default 2; 1000000 = never);
- ``--init unit``: the initial univariate split as it is (w = e_f, b = threshold, projected onto the ball only when
  ``1 + threshold^2 > nu``) instead of scaled up onto the sphere ``||[w, b]||^2 = nu``;
- ``--subspace``: SGD over the q candidate features only, not all p;
- ``--free-bias``: the norm bound of eq. (9) on w alone, the bias unconstrained (the library bounds ``||[w, b]||``,
  reading the paper's ``w^T x`` with a constant input); stumps start on the sphere ``||w||^2 = nu``.

The last three change the tree grower and kernel (``treeopt.greedy._co2_grow``, ``_co2_sgd``, owned by the
CO2-speed work): this script builds patched copies of those modules' sources in a temporary folder at run time and
routes ``CO2TreeClassifier`` through them; the library files are not touched.

    python studies/co2_letter_gap.py --tag base --nu 0.1 1 4 10 43 100 --eta 0.03 0.01 0.003
    python studies/co2_letter_gap.py --tag unit --init unit --nu 0.1 1 4 10 43 100 --eta 0.03 0.01 0.003
    python studies/co2_letter_gap.py --tag nic20 --nic 20 --trees 100 --seeds 0 1

One JSON line per (nu, eta) (mean over ``--seeds``) and, with more than 30 trees, one per seed with the validation
error at every forest size. Results of 2026-11-24: ``studies/results/co2_letter_gap.log``.
"""

import argparse
import dataclasses
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import treeopt.greedy.co2 as co2_module
from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.forest import CO2ForestClassifier

ROOT = Path(__file__).resolve().parents[1]
GROW = ROOT / "src" / "treeopt" / "greedy" / "_co2_grow.py"
SGD = ROOT / "src" / "treeopt" / "greedy" / "_co2_sgd.py"

# (old, new) source edits of _co2_grow.py for the two grower variants
_EDITS = [
    ("from ._co2_sgd import _splitmix64, co2_stump_sgd\nfrom ._criteria import _xlogx_table",
     "from co2_sgd_variant import _splitmix64, co2_stump_sgd\nfrom treeopt.greedy._criteria import _xlogx_table"),
    ("compare_with_axis, seed, tol_initial=False):",
     "compare_with_axis, seed, tol_initial=False, init_mode=0, subspace=False):"),
    ("""        scale = np.sqrt(nu / (1.0 + tz * tz))
        w = np.zeros(p)""",
     """        if init_mode == 0:
            scale = np.sqrt(nu / (1.0 + tz * tz))
        elif init_mode == 2:  # bias outside the bound: the sphere ||w||^2 = nu
            scale = np.sqrt(nu)
        else:  # the univariate split as it is, projected only when outside the ball
            scale = min(1.0, np.sqrt(nu / (1.0 + tz * tz)))
        w = np.zeros(p)"""),
    ("""        b, n_ep, _, _ = co2_stump_sgd(Z[:m], yl[:m], w, tz * scale, theta, nu, eta, momentum, batch_size,
                                      max_epochs, tau, tol, n_iter_no_change, patience, sub_seed, history,
                                      tol_initial)""",
     """        in_q = False
        for jj in range(q):
            if feats[jj] == f:
                in_q = True
        if subspace and in_q:  # SGD over the q candidate features only
            Zq = np.empty((m, q), dtype=np.float32)
            wq = np.zeros(q)
            for jj in range(q):
                for t in range(m):
                    Zq[t, jj] = Z[t, feats[jj]]
                if feats[jj] == f:
                    wq[jj] = w[f]
            b, n_ep, _, _ = co2_stump_sgd(Zq, yl[:m], wq, tz * scale, theta, nu, eta, momentum, batch_size,
                                          max_epochs, tau, tol, n_iter_no_change, patience, sub_seed, history,
                                          tol_initial)
            w[:] = 0.0
            for jj in range(q):
                w[feats[jj]] = wq[jj]
        else:
            b, n_ep, _, _ = co2_stump_sgd(Z[:m], yl[:m], w, tz * scale, theta, nu, eta, momentum, batch_size,
                                          max_epochs, tau, tol, n_iter_no_change, patience, sub_seed, history,
                                          tol_initial)"""),
    ("_NJIT = dict(cache=True, nogil=True)", "_NJIT = dict(cache=False, nogil=True)"),
]
# kernel edits for --free-bias: the projection of eq. (9) over w only (wb[p] is the bias)
_FREE_BIAS = [
    ("""            wb[j] += v[j]
            norm2 += wb[j] * wb[j]""",
     """            wb[j] += v[j]
            if j < p:
                norm2 += wb[j] * wb[j]"""),
    ("""            for j in range(p + 1):
                wb[j] *= scale
                norm2 += wb[j] * wb[j]""",
     """            for j in range(p):
                wb[j] *= scale
                norm2 += wb[j] * wb[j]"""),
]


def _patched_source(path, edits):
    source = path.read_text()
    for old, new in edits:
        if old not in source:
            raise RuntimeError(f"{path} changed; cannot apply the variant edit starting {old[:60]!r}")
        source = source.replace(old, new)
    return source


def patched_grower(init_mode, subspace, free_bias):
    """``grow_co2_tree`` of patched copies of the library's grower and kernel, with the variant's flags bound."""
    folder = Path(tempfile.mkdtemp())
    sgd_edits = list(_FREE_BIAS) if free_bias else []
    sgd_edits.append(("cache=True, nogil=True, fastmath", "cache=False, nogil=True, fastmath"))
    (folder / "co2_sgd_variant.py").write_text(_patched_source(SGD, sgd_edits))
    sys.path.insert(0, str(folder))
    path = folder / "co2_grow_variant.py"
    path.write_text(_patched_source(GROW, _EDITS))
    spec = importlib.util.spec_from_file_location("co2_grow_variant", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return lambda *args: module.grow_co2_tree(*args, init_mode, subspace)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tag", default="")
    ap.add_argument("--nu", type=float, nargs="+", default=[4.0])
    ap.add_argument("--eta", type=float, nargs="+", default=[0.01])
    ap.add_argument("--q", type=int, default=4, help="max_features (the workflow's random forest chose p^0.5 = 4)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--trees", type=int, default=30)
    ap.add_argument("--nic", type=int, default=5)
    ap.add_argument("--tau", type=int, default=1)
    ap.add_argument("--patience", type=int, default=co2_module.OSCILLATION_PATIENCE)
    ap.add_argument("--scale", choices=["z", "pm1"], default="z")
    ap.add_argument("--init", choices=["sphere", "unit"], default="sphere")
    ap.add_argument("--subspace", action="store_true")
    ap.add_argument("--free-bias", action="store_true")
    a = ap.parse_args(argv)
    co2_module.OSCILLATION_PATIENCE = a.patience  # read by CO2TreeClassifier at fit time
    if a.init != "sphere" or a.subspace or a.free_bias:
        init_mode = 2 if a.free_bias else int(a.init == "unit")
        co2_module.grow_co2_tree = patched_grower(init_mode, a.subspace, a.free_bias)
    split = load_split(prepare_split("letter", load_config(ROOT / "config.yaml"), 0))
    if a.scale == "pm1":  # svm-scale: each feature's training range onto [-1, 1] (affine, so from the z-scores)
        lo, hi = split.X_train.min(0), split.X_train.max(0)
        pm1 = lambda Z: 2 * (Z - lo) / np.where(hi > lo, hi - lo, 1) - 1  # noqa: E731
        split = dataclasses.replace(split, X_train=pm1(split.X_train), X_val=pm1(split.X_val))
    for nu in a.nu:
        for eta in a.eta:
            errors = []
            c0 = time.process_time()
            for seed in a.seeds:
                model = CO2ForestClassifier(n_estimators=a.trees, nu=nu, learning_rate=eta, max_features=a.q,
                                            n_iter_no_change=a.nic, tau=a.tau, random_state=seed)
                model.fit(split.X_train, split.y_train)
                errors.append(100 * float(np.mean(model.predict(split.X_val) != split.y_val)))
                if a.trees > 30:
                    staged = {m: round(100 * float(np.mean(
                        model.classes_[model.predict_proba(split.X_val, n_trees=m).argmax(1)] != split.y_val)), 3)
                        for m in (10, 30, 100, 300, 1000) if m <= a.trees}
                    print(json.dumps(dict(tag=a.tag, nu=nu, eta=eta, seed=seed, val_error_at=staged)), flush=True)
            print(json.dumps(dict(tag=a.tag, nu=nu, eta=eta, q=a.q, trees=a.trees, seeds=a.seeds, nic=a.nic, tau=a.tau,
                                  patience=a.patience, scale=a.scale, init=a.init, subspace=a.subspace, free_bias=a.free_bias,
                                  val_errors=[round(e, 3) for e in errors], mean=round(float(np.mean(errors)), 3),
                                  oblique_per_tree=model.n_oblique_splits_, fallbacks_per_tree=model.n_axis_fallbacks_,
                                  cpu_seconds=round(time.process_time() - c0, 1))), flush=True)


if __name__ == "__main__":
    sys.exit(main())
