"""Our RGF against rgf-python (the authors' C++ program), with LightGBM (1 thread) and scikit-learn GBDT beside.

Same data split, same lambda (``l2``, also rgf-python's ``sl2``: one lambda for search and correction, as in the
paper), same leaf budget (``max_leaf``), min 10 points per leaf, square loss (classification on +-1 targets,
both implementations), weight correction every 100 leaves with 10 sweeps of step 0.5, regression targets
centred (rgf-python's ``normalize``), the search limited to the newest tree. For each data set and lambda the
script fits both RGFs in the same process, one after the other, and reports test error (%) or test RMSE and the
fit-time ratio ours / rgf-python.

One difference cannot be set by a parameter of rgf-python: at a weight correction its optimiser starts the
leaves added since its previous call at 0, where the paper (and ``treeopt``'s default) keeps the weights their
splits gave them (Algorithm 3, line 4; Sec. 5.3.2). ``treeopt_zero_start`` (``correction_start="zero"``) is our
RGF with rgf-python's start, the like-for-like check: it grows the same forest as rgf-python. GBDT (LightGBM and scikit-learn) use J = 8 leaves per
tree, shrinkage 0.1 and budget / 8 trees: the same number of leaves, for scale. Timings are wall-clock seconds
on whatever else the machine is doing; ratios from one run are the comparable numbers.

    python benchmarks/bench_rgf.py                      # Adult + the synthetic sets, seed 0
    python benchmarks/bench_rgf.py --datasets adult --l2 0.1 --max-leaf 1000

Writes benchmarks/results/rgf_speed.csv.
"""

import argparse
import importlib.util
import time
from pathlib import Path

import numpy as np
import pandas as pd

from treeopt.boosting import RGFClassifier, RGFRegressor
from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ["adult", "rgf_synth_q64_reg", "rgf_synth_q16_reg", "rgf_synth_q4_reg", "rgf_synth_q2_reg",
            "rgf_synth_q64_cls", "rgf_synth_q4_cls"]


def installed(module):
    """Whether an optional peer (``rgf`` = rgf-python, ``lightgbm``) is importable; absent peers are skipped."""
    return importlib.util.find_spec(module) is not None


def score(task, y, pred):
    if task == "regression":
        return "test_rmse", float(np.sqrt(np.mean((y - pred) ** 2)))
    return "test_error", 100.0 * float(np.mean(y != pred))


def timed(fit):
    start = time.perf_counter()
    model = fit()
    return model, time.perf_counter() - start


def run(dataset, l2_values, max_leaf, seed, config):
    split = load_split(prepare_split(dataset, config, seed))
    X, y, Xt, yt = split.X_train, split.y_train, split.X_test, split.y_test
    task = "regression" if dataset.endswith("_reg") or dataset in ("houses", "ct_slices") else "classification"
    rows = []

    def add(impl, l2, model, seconds, n_leaves):
        metric, value = score(task, yt, model.predict(Xt))
        rows.append({"dataset": dataset, "task": task, "impl": impl, "l2": l2, "max_leaf": max_leaf, "seed": seed,
                     "metric": metric, "value": value, "fit_seconds": seconds, "n_leaves": n_leaves,
                     "n_train": X.shape[0], "n_features": X.shape[1]})
        print(f"{dataset:18s} {impl:14s} l2={l2!s:6s} {metric}={value:.4f} fit={seconds:.2f}s leaves={n_leaves}",
              flush=True)

    ours_cls = RGFRegressor if task == "regression" else RGFClassifier
    for l2 in l2_values:
        ours, sec = timed(lambda: ours_cls(max_leaf_nodes=max_leaf, l2=l2, min_samples_leaf=10,
                                           random_state=seed).fit(X, y))
        add("treeopt", l2, ours, sec, ours.n_leaves_)
        ours, sec = timed(lambda: ours_cls(max_leaf_nodes=max_leaf, l2=l2, min_samples_leaf=10,
                                           correction_start="zero", random_state=seed).fit(X, y))
        add("treeopt_zero_start", l2, ours, sec, ours.n_leaves_)
        if not installed("rgf"):
            continue
        from rgf.sklearn import RGFClassifier as TheirClf
        from rgf.sklearn import RGFRegressor as TheirReg

        kw = dict(max_leaf=max_leaf, l2=float(l2), algorithm="RGF", loss="LS", min_samples_leaf=10,
                  test_interval=100, opt_interval=100, learning_rate=0.5)
        if task == "regression":
            theirs, sec = timed(lambda: TheirReg(normalize=True, **kw).fit(X, y))
        else:
            theirs, sec = timed(lambda: TheirClf(normalize=False, n_jobs=1, **kw).fit(X, y))
        add("rgf-python", l2, theirs, sec, max_leaf)

    from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
    J, n_trees = 8, max(1, max_leaf // 8)
    if task == "regression":
        skl = GradientBoostingRegressor(max_leaf_nodes=J, max_depth=None, learning_rate=0.1, n_estimators=n_trees,
                                        min_samples_leaf=10, random_state=seed)
    else:
        skl = GradientBoostingClassifier(max_leaf_nodes=J, max_depth=None, learning_rate=0.1, n_estimators=n_trees,
                                         min_samples_leaf=10, random_state=seed, loss="exponential")
    if installed("lightgbm"):
        import lightgbm

        lgb = lightgbm.LGBMRegressor if task == "regression" else lightgbm.LGBMClassifier
        model, sec = timed(lambda: lgb(num_leaves=J, n_estimators=n_trees, learning_rate=0.1, min_child_samples=10,
                                       num_threads=1, verbose=-1, random_state=seed).fit(X, y))
        add("lightgbm", None, model, sec, J * n_trees)
    model, sec = timed(lambda: skl.fit(X, y))
    add("sklearn_gbdt", None, model, sec, J * n_trees)
    return rows


def warm_up():
    """One tiny fit of each implementation first, so no timing below includes loading numba's compiled kernels
    or rgf-python's first start."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 3)), rng.normal(size=200)
    RGFRegressor(max_leaf_nodes=20).fit(X, y).predict(X)
    RGFClassifier(max_leaf_nodes=20).fit(X, y > 0).predict(X)
    if installed("rgf"):
        from rgf.sklearn import RGFRegressor as TheirReg

        TheirReg(max_leaf=20).fit(X, y).predict(X)


def summarise(rows):
    """Per data set and lambda: ours vs rgf-python, the metric difference and the fit-time ratio."""
    df = pd.DataFrame(rows)
    out = []
    if "rgf-python" not in set(df["impl"]):  # rgf-python not installed: nothing to compare with
        return pd.DataFrame(out)
    for (dataset, l2), sub in df[df["l2"].notna()].groupby(["dataset", "l2"], sort=False):
        ours = sub[sub["impl"] == "treeopt"].iloc[0]
        zero = sub[sub["impl"] == "treeopt_zero_start"].iloc[0]
        theirs = sub[sub["impl"] == "rgf-python"].iloc[0]
        diff = ours["value"] - theirs["value"]
        rel = diff / theirs["value"] if theirs["value"] else np.nan
        ok = abs(diff) <= 1.0 if ours["metric"] == "test_error" else abs(rel) <= 0.03
        out.append({"dataset": dataset, "l2": l2, "metric": ours["metric"], "treeopt": ours["value"],
                    "rgf_python": theirs["value"], "difference": diff, "relative_difference": rel,
                    "within_target": bool(ok), "treeopt_zero_start": zero["value"],
                    "zero_start_relative_difference": (zero["value"] - theirs["value"]) / theirs["value"],
                    "treeopt_seconds": ours["fit_seconds"],
                    "rgf_python_seconds": theirs["fit_seconds"],
                    "time_ratio": ours["fit_seconds"] / theirs["fit_seconds"]})
    return pd.DataFrame(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--l2", default="1,0.1,0.01")
    parser.add_argument("--max-leaf", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(ROOT / "benchmarks/results/rgf_speed.csv"))
    args = parser.parse_args(argv)
    missing = [name for module, name in (("rgf", "rgf-python"), ("lightgbm", "lightgbm")) if not installed(module)]
    if missing:
        print(f"not installed, skipped: {', '.join(missing)} (pip install rgf_python lightgbm)", flush=True)
    config = load_config(ROOT / "config.yaml")
    warm_up()
    rows = []
    for dataset in args.datasets.split(","):
        rows += run(dataset, [float(v) for v in args.l2.split(",")], args.max_leaf, args.seed, config)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(out, index=False, float_format="%.6g")
    summary = summarise(rows)
    summary.to_csv(out.with_name(out.stem + "_summary.csv"), index=False, float_format="%.6g")
    print(summary.to_string(index=False))


if __name__ == "__main__":
    main()
