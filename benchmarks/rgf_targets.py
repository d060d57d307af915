"""The RGF issue's targets, each from one run with fixed seeds (staged scoring: one fit per configuration,
scored at every size).

``fig7``: synthetic regression (Sec. 6.1.1; 2000 training points, the other 10000 for test), 10 data sets per
q. RGF-L2 with lambda in {1, 0.1, 0.01} and GBDT (scikit-learn, best-first trees of J leaves, min 10 points per
leaf) over the paper's grid J in {2, 4, 8, 12, 16, 64} x s in {1, 0.5, 0.1, 0.05, 0.01, 0.005, 0.001}, both up
to ``--max-leaf`` leaves. Test RMSE, mean over the seeds, at every 100 leaves; the target: RGF-L2's best below
the best GBDT configuration's at the same number of leaves (Fig. 7).

``fig15``: training seconds of RGF-L2 (mean over its three lambdas) and of GBDT (mean over the 9 configurations
with the best peak test score on that data set), both grown to the leaf budget, and their ratio beside the
paper's Fig. 15 (1.6-5.9). Timings are wall-clock on a shared machine; the ratio is measured in one run.

    python benchmarks/rgf_targets.py fig7 --datasets rgf_synth_q64_reg --seeds 0-9
    python benchmarks/rgf_targets.py fig15 --datasets rgf_synth_q16_reg,adult --seeds 0

Writes benchmarks/results/rgf_fig7_targets.csv (curves) and rgf_fig7_summary.csv, or rgf_fig15_time.csv.
"""

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

from treeopt.boosting import RGFClassifier, RGFRegressor
from treeopt.data import load_split, prepare_split
from treeopt.experiments.config import load_config
from treeopt.experiments.paper_values import rgf_fig15

ROOT = Path(__file__).resolve().parents[1]
LAMBDAS = (1.0, 0.1, 0.01)
TREE_SIZES = (2, 4, 8, 12, 16, 64)
SHRINKAGE = (1.0, 0.5, 0.1, 0.05, 0.01, 0.005, 0.001)
REGRESSION = ("houses", "ct_slices")


def is_regression(dataset):
    return dataset.endswith("_reg") or dataset in REGRESSION


def metric(regression, y, pred):
    return float(np.sqrt(np.mean((y - pred) ** 2))) if regression else 100.0 * float(np.mean(y != pred))


def on_grid(leaves, values, grid):
    """Value of the largest model with at most g leaves, for each g of the grid (NaN before the first)."""
    leaves, values = np.asarray(leaves), np.asarray(values)
    idx = np.searchsorted(leaves, grid, side="right") - 1
    return np.where(idx >= 0, values[np.maximum(idx, 0)], np.nan)


def rgf_curve(split, regression, l2, max_leaf, seed):
    cls = RGFRegressor if regression else RGFClassifier
    start = time.perf_counter()
    model = cls(max_leaf_nodes=max_leaf, l2=l2, random_state=seed).fit(split.X_train, split.y_train)
    seconds = time.perf_counter() - start
    stages = model.staged_predict(split.X_test)
    values = [metric(regression, split.y_test, p) for p in stages]
    return model.stage_sizes_["n_leaves"], values, seconds


def gbdt_curve(split, regression, J, s, max_leaf, seed):
    n_trees = int(np.ceil(max_leaf / J))
    if regression:
        model = GradientBoostingRegressor(max_leaf_nodes=J, max_depth=None, learning_rate=s, n_estimators=n_trees,
                                          min_samples_leaf=10, random_state=seed)
    else:   # the paper's classification GBDT with exponential loss (Sec. 6.2.2, Newton-step leaf values)
        model = GradientBoostingClassifier(max_leaf_nodes=J, max_depth=None, learning_rate=s, n_estimators=n_trees,
                                           min_samples_leaf=10, random_state=seed, loss="exponential")
    start = time.perf_counter()
    model.fit(split.X_train, split.y_train)
    seconds = time.perf_counter() - start
    leaves = np.cumsum([est.tree_.n_leaves for est in model.estimators_[:, 0]])
    values = [metric(regression, split.y_test, p) for p in model.staged_predict(split.X_test)]
    return leaves, values, seconds


def curves(dataset, seeds, max_leaf, config, log):
    regression = is_regression(dataset)
    grid = np.arange(100, max_leaf + 1, 100)
    rows = []
    for seed in seeds:
        split = load_split(prepare_split(dataset, config, seed))
        configs = [("rgf_l2", f"l2={l2:g}", lambda l2=l2: rgf_curve(split, regression, l2, max_leaf, seed))
                   for l2 in LAMBDAS]
        configs += [("gbdt", f"gb{J}:s={s:g}", lambda J=J, s=s: gbdt_curve(split, regression, J, s, max_leaf, seed))
                    for J in TREE_SIZES for s in SHRINKAGE]
        for method, variant, fit in configs:
            leaves, values, seconds = fit()
            for g, v in zip(grid, on_grid(leaves, values, grid)):
                rows.append({"dataset": dataset, "method": method, "variant": variant, "seed": seed,
                             "n_leaves": int(g), "value": v, "fit_seconds": seconds})
            log(f"{dataset} seed {seed} {method} {variant}: best {np.nanmin(values):.4f} at "
                f"{int(np.asarray(leaves)[int(np.nanargmin(values))])} leaves, fit {seconds:.2f}s")
    return pd.DataFrame(rows)


def fig7(args, config):
    out_dir = Path(args.out_dir)
    frames = [curves(d, args.seeds, args.max_leaf, config, print) for d in args.datasets]
    df = pd.concat(frames, ignore_index=True)
    df.to_csv(out_dir / "rgf_fig7_targets.csv", index=False, float_format="%.6g")
    mean = df.groupby(["dataset", "method", "variant", "n_leaves"])["value"].agg(["mean", "count"]).reset_index()
    summary = []
    for dataset, sub in mean.groupby("dataset"):
        full = sub[sub["count"] == len(args.seeds)]
        best = full.loc[full.groupby("method")["mean"].idxmin()].set_index("method")
        per_size = full.groupby(["n_leaves", "method"])["mean"].min().unstack()
        wins = int((per_size["rgf_l2"] < per_size["gbdt"]).sum())
        rgf_best, gb_best = best.loc["rgf_l2"], best.loc["gbdt"]
        # GBDT's best configuration, at RGF's best number of leaves
        gb_at = full[(full["method"] == "gbdt") & (full["n_leaves"] == rgf_best["n_leaves"])]["mean"].min()
        summary.append({"dataset": dataset, "n_seeds": len(args.seeds), "max_leaf": args.max_leaf,
                        "rgf_best_rmse": rgf_best["mean"], "rgf_best_variant": rgf_best["variant"],
                        "rgf_best_leaves": int(rgf_best["n_leaves"]), "gbdt_best_rmse": gb_best["mean"],
                        "gbdt_best_variant": gb_best["variant"], "gbdt_best_leaves": int(gb_best["n_leaves"]),
                        "gbdt_best_at_rgf_leaves": gb_at,
                        "rgf_below_gbdt": bool(rgf_best["mean"] < gb_best["mean"]),
                        "sizes_rgf_wins": wins, "sizes": int(per_size.shape[0])})
    summary = pd.DataFrame(summary)
    summary.to_csv(out_dir / "rgf_fig7_summary.csv", index=False, float_format="%.6g")
    print(summary.to_string(index=False))


def fig15(args, config):
    rows = []
    for dataset in args.datasets:
        df = curves(dataset, args.seeds, args.max_leaf, config, print)
        peak = df.groupby(["method", "variant", "seed"])["value"].min().groupby(["method", "variant"]).mean()
        times = df.groupby(["method", "variant"])["fit_seconds"].mean()
        best_gb = peak.loc["gbdt"].sort_values(kind="stable").head(9).index
        rgf_s = times.loc["rgf_l2"].mean()
        gb_s = times.loc["gbdt"].loc[best_gb].mean()
        paper = rgf_fig15(dataset) or (None, None, None)
        rows.append({"dataset": dataset, "max_leaf": args.max_leaf, "n_seeds": len(args.seeds),
                     "rgf_seconds": rgf_s, "gbdt_seconds": gb_s, "ratio": rgf_s / gb_s,
                     "gbdt_configs": ";".join(best_gb), "paper_rgf_seconds": paper[0],
                     "paper_gbdt_seconds": paper[1], "paper_value": paper[2]})
        pd.DataFrame(rows).to_csv(Path(args.out_dir) / "rgf_fig15_time.csv", index=False, float_format="%.4g")
        print(rows[-1], flush=True)


def seeds_arg(text):
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", choices=["fig7", "fig15"])
    parser.add_argument("--datasets", default="rgf_synth_q64_reg")
    parser.add_argument("--seeds", type=seeds_arg, default=list(range(10)))
    parser.add_argument("--max-leaf", type=int, default=10000)
    parser.add_argument("--out-dir", default=str(ROOT / "benchmarks/results"))
    args = parser.parse_args()
    args.datasets = args.datasets.split(",")
    config = load_config(ROOT / "config.yaml")
    (fig7 if args.target == "fig7" else fig15)(args, config)


if __name__ == "__main__":
    main()
