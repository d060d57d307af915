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

    python studies/rgf_targets.py fig7 --datasets rgf_synth_q64_reg --seeds 0-9
    python studies/rgf_targets.py fig7 --merge a/rgf_fig7_targets.csv,b/rgf_fig7_targets.csv   # split runs
    python studies/rgf_targets.py fig7 --seeds 0-9 --max-leaf 10000 --gbdt-impl lightgbm --suffix _10k_lightgbm
    python studies/rgf_targets.py fig15 --datasets rgf_synth_q16_reg,adult --seeds 0
    python studies/rgf_targets.py fig15 --fast --max-leaf 2000 --datasets adult,nursery   # timing only
    python studies/rgf_targets.py fig12 --datasets rgf_synth_q64_reg --seeds 0-2 --gbdt 8,0.1 --max-leaf 5000

``fig12``: GBDT with L1 post-processing (the lasso path over all its leaves, Friedman & Popescu), test metric
against the number of non-zero weights, beside GBDT itself (Fig. 12).

Writes studies/results/rgf_fig7_targets.csv (curves) and rgf_fig7_summary.csv, rgf_fig12_l1.csv/.png/.pdf,
or rgf_fig15_time.csv.
"""

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

from treeopt.boosting import RGFClassifier, RGFRegressor
from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.experiments.plan.paper_values import rgf_fig15

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


def lightgbm_curve(split, regression, J, s, max_leaf, seed):
    """GBDT by LightGBM (1 thread, leaf-wise = best-first trees of J leaves, min 10 points per leaf, no other
    regularisation), the same model family as scikit-learn's and ~25x faster; test metric at every 100 leaves
    from incremental raw scores (one fit per configuration)."""
    import lightgbm
    n_trees = int(np.ceil(max_leaf / J))
    kw = dict(num_leaves=J, n_estimators=n_trees, learning_rate=s, min_child_samples=10, num_threads=1,
              verbose=-1, random_state=seed)
    model = lightgbm.LGBMRegressor(**kw) if regression else lightgbm.LGBMClassifier(objective="binary", **kw)
    start = time.perf_counter()
    model.fit(split.X_train, split.y_train)
    seconds = time.perf_counter() - start
    sizes = [t["num_leaves"] for t in model.booster_.dump_model()["tree_info"]]
    leaves = np.cumsum(sizes)
    grid = np.arange(100, max_leaf + 1, 100)
    raw, done, out_leaves, values = np.zeros(split.X_test.shape[0]), 0, [], []
    for g in grid:
        k = int(np.searchsorted(leaves, g, side="right"))   # trees whose total stays within g leaves
        if k == 0:
            continue
        if k > done:
            raw += model.booster_.predict(split.X_test, start_iteration=done, num_iteration=k - done)
            done = k
        if regression:
            pred = raw
        else:
            pred = model.classes_[(raw > 0).astype(int)]
        out_leaves.append(int(leaves[k - 1]))
        values.append(metric(regression, split.y_test, pred))
    return out_leaves, values, seconds


def curves(dataset, seeds, max_leaf, config, log, gbdt_impl="sklearn"):
    regression = is_regression(dataset)
    grid = np.arange(100, max_leaf + 1, 100)
    rows = []
    for seed in seeds:
        split = load_split(prepare_split(dataset, config, seed))
        configs = [("rgf_l2", f"l2={l2:g}", lambda l2=l2: rgf_curve(split, regression, l2, max_leaf, seed))
                   for l2 in LAMBDAS]
        gb_fit = lightgbm_curve if gbdt_impl == "lightgbm" else gbdt_curve
        configs += [("gbdt", f"gb{J}:s={s:g}", lambda J=J, s=s: gb_fit(split, regression, J, s, max_leaf, seed))
                    for J in TREE_SIZES for s in SHRINKAGE]
        for method, variant, fit in configs:
            leaves, values, seconds = fit()
            for g, v in zip(grid, on_grid(leaves, values, grid)):
                rows.append({"dataset": dataset, "method": method, "variant": variant, "seed": seed,
                             "n_leaves": int(g), "value": v, "fit_seconds": seconds})
            log(f"{time.strftime('%H:%M:%S')} {dataset} seed {seed} {method} {variant}: best {np.nanmin(values):.4f} at "
                f"{int(np.asarray(leaves)[int(np.nanargmin(values))])} leaves, fit {seconds:.2f}s")
    return pd.DataFrame(rows)


def fig7(args, config):
    out_dir = Path(args.out_dir)
    if args.merge:   # curves written by several processes (e.g. seeds 0-4 and 5-9): summarise them together
        df = pd.concat([pd.read_csv(p) for p in args.merge.split(",")], ignore_index=True)
        args.seeds = sorted(df["seed"].unique().tolist())
    else:
        log = lambda text: print(text, flush=True)  # noqa: E731
        df = pd.concat([curves(d, args.seeds, args.max_leaf, config, log, args.gbdt_impl) for d in args.datasets],
                       ignore_index=True)
    df.to_csv(out_dir / f"rgf_fig7_targets{args.suffix}.csv", index=False, float_format="%.6g")
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
                        "gbdt_impl": args.gbdt_impl,
                        "rgf_best_rmse": rgf_best["mean"], "rgf_best_variant": rgf_best["variant"],
                        "rgf_best_leaves": int(rgf_best["n_leaves"]), "gbdt_best_rmse": gb_best["mean"],
                        "gbdt_best_variant": gb_best["variant"], "gbdt_best_leaves": int(gb_best["n_leaves"]),
                        "gbdt_best_at_rgf_leaves": gb_at,
                        "rgf_below_gbdt": bool(rgf_best["mean"] < gb_best["mean"]),
                        "sizes_rgf_wins": wins, "sizes": int(per_size.shape[0])})
    summary = pd.DataFrame(summary)
    summary.to_csv(out_dir / f"rgf_fig7_summary{args.suffix}.csv", index=False, float_format="%.6g")
    print(summary.to_string(index=False))


def warm_up():
    """A tiny fit first, so no timing includes loading numba's compiled kernels."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 3)), rng.normal(size=200)
    RGFRegressor(max_leaf_nodes=20).fit(X, y).predict(X)
    RGFClassifier(max_leaf_nodes=20).fit(X, y > 0).predict(X)


def fig12(args, config):
    """GBDT (one configuration, ``--gbdt J,s``) with and without the lasso path over its leaves (Fig. 12)."""
    from treeopt.boosting.baselines import l1_post_processing
    J, s = args.gbdt.split(",")
    J, s = int(J), float(s)
    rows = []
    for dataset in args.datasets:
        regression = is_regression(dataset)
        for seed in args.seeds:
            split = load_split(prepare_split(dataset, config, seed))
            cls = GradientBoostingRegressor if regression else GradientBoostingClassifier
            extra = {} if regression else {"loss": "exponential"}
            model = cls(max_leaf_nodes=J, max_depth=None, learning_rate=s, n_estimators=int(np.ceil(args.max_leaf / J)),
                        min_samples_leaf=10, random_state=seed, **extra).fit(split.X_train, split.y_train)
            leaves = np.cumsum([est.tree_.n_leaves for est in model.estimators_[:, 0]])
            for n, p in zip(leaves, model.staged_predict(split.X_test)):
                rows.append({"dataset": dataset, "seed": seed, "method": "gbdt", "n_leaves": int(n),
                             "value": metric(regression, split.y_test, p)})
            y_fit = split.y_train if regression else np.where(split.y_train == model.classes_[1], 1.0, -1.0)
            nnz, outs = l1_post_processing(model, split.X_train, y_fit, split.X_test)
            for n, out in zip(nnz, outs.T):
                pred = out if regression else model.classes_[(out > 0).astype(int)]
                rows.append({"dataset": dataset, "seed": seed, "method": "gbdt_l1", "n_leaves": int(n),
                             "value": metric(regression, split.y_test, pred)})
            print(f"{dataset} seed {seed}: gbdt best {min(r['value'] for r in rows if r['method'] == 'gbdt' and r['seed'] == seed and r['dataset'] == dataset):.4f}, "
                  f"L1 path best {min(r['value'] for r in rows if r['method'] == 'gbdt_l1' and r['seed'] == seed and r['dataset'] == dataset):.4f}", flush=True)
    df = pd.DataFrame(rows)
    df.to_csv(Path(args.out_dir) / "rgf_fig12_l1.csv", index=False, float_format="%.6g")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(args.datasets), figsize=(4.2 * len(args.datasets), 3.4), squeeze=False)
    grid = np.unique(np.round(np.logspace(1, np.log10(args.max_leaf), 40)).astype(int))
    for ax, dataset in zip(axes[0], args.datasets):
        for method, style in (("gbdt_l1", "-"), ("gbdt", ":")):
            sub = df[(df["dataset"] == dataset) & (df["method"] == method)]
            curves_ = [on_grid(*(g.sort_values("n_leaves")[["n_leaves", "value"]].to_numpy().T), grid)
                       for _, g in sub.groupby("seed")]
            ax.plot(grid, np.nanmean(curves_, axis=0), style, color="k",
                    label=f"gb{J}:s={s:g}" + (" + L1 path" if method == "gbdt_l1" else ""))
        ax.set_xscale("log")
        ax.set_xlabel("number of non-zero leaf weights")
        ax.set_ylabel("test RMSE" if is_regression(dataset) else "test error (%)")
        ax.set_title(dataset)
        ax.legend(fontsize=7)
    fig.text(0.99, 0.005, f"data set: {', '.join(args.datasets)}  |  studies/rgf_targets.py fig12  |  seeds: "
             f"{len(args.seeds)}", ha="right", va="bottom", fontsize=7, color="0.35")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    for ext in ("png", "pdf"):
        fig.savefig(Path(args.out_dir) / f"rgf_fig12_l1.{ext}", dpi=150)


def fig15_fast(args, config):
    """Fig. 15 timing only: RGF-L2 for each lambda and GBDT once per tree size J (at s = 0.1: scikit-learn's fit
    time does not depend on the shrinkage), all grown to the same number of leaves. gbdt_seconds is the mean over
    the six tree sizes, standing in for the paper's 9 best configurations (not named in the paper). The same
    GBDT configurations by LightGBM (1 thread, histogram splits, same n trees of J leaves) give lightgbm_seconds
    and ratio_lightgbm, so the ratio is seen against a slow and a fast GBDT implementation."""
    warm_up()
    rows = []
    for dataset in args.datasets:
        regression = is_regression(dataset)
        split = load_split(prepare_split(dataset, config, args.seeds[0]))
        cls = RGFRegressor if regression else RGFClassifier
        rgf_times, gb_times = [], {}
        load_before = os.getloadavg()[0]
        for l2 in LAMBDAS:
            start = time.perf_counter()
            cls(max_leaf_nodes=args.max_leaf, l2=l2).fit(split.X_train, split.y_train)
            rgf_times.append(time.perf_counter() - start)
        import lightgbm
        lgb_times = {}
        for J in TREE_SIZES:
            n_trees = int(np.ceil(args.max_leaf / J))
            gb = (GradientBoostingRegressor if regression else GradientBoostingClassifier)(
                max_leaf_nodes=J, max_depth=None, learning_rate=0.1, n_estimators=n_trees,
                min_samples_leaf=10, random_state=0, **({} if regression else {"loss": "exponential"}))
            start = time.perf_counter()
            gb.fit(split.X_train, split.y_train)
            gb_times[J] = time.perf_counter() - start
            lgb = (lightgbm.LGBMRegressor if regression else lightgbm.LGBMClassifier)(
                num_leaves=J, n_estimators=n_trees, learning_rate=0.1, min_child_samples=10, num_threads=1,
                verbose=-1, random_state=0)
            start = time.perf_counter()
            lgb.fit(split.X_train, split.y_train)
            lgb_times[J] = time.perf_counter() - start
        paper = rgf_fig15(dataset) or (None, None, None)
        rgf_s, gb_s = float(np.mean(rgf_times)), float(np.mean(list(gb_times.values())))
        lgb_s = float(np.mean(list(lgb_times.values())))
        rows.append({"dataset": dataset, "max_leaf": args.max_leaf, "n_train": split.X_train.shape[0],
                     "n_features": split.X_train.shape[1], "rgf_seconds": rgf_s, "gbdt_seconds": gb_s,
                     "ratio": rgf_s / gb_s, "lightgbm_seconds": lgb_s, "ratio_lightgbm": rgf_s / lgb_s,
                     "paper_value": paper[2], **{f"gbdt_J{J}_seconds": t for J, t in gb_times.items()},
                     **{f"lightgbm_J{J}_seconds": t for J, t in lgb_times.items()},
                     **{f"rgf_l2={l2:g}_seconds": t for l2, t in zip(LAMBDAS, rgf_times)},
                     "paper_rgf_seconds": paper[0], "paper_gbdt_seconds": paper[1],
                     "loadavg_1min_before": load_before, "loadavg_1min_after": os.getloadavg()[0]})
        pd.DataFrame(rows).to_csv(Path(args.out_dir) / "rgf_fig15_time.csv", index=False, float_format="%.4g")
        print({k: rows[-1][k] for k in ("dataset", "rgf_seconds", "gbdt_seconds", "ratio", "lightgbm_seconds",
                                        "ratio_lightgbm", "paper_value")}, flush=True)


def fig15(args, config):
    if args.fast:
        return fig15_fast(args, config)
    warm_up()
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
    parser.add_argument("target", choices=["fig7", "fig12", "fig15"])
    parser.add_argument("--fast", action="store_true", help="fig15: time GBDT once per tree size, no grid scoring")
    parser.add_argument("--merge", default="", help="fig7: comma-separated curve CSVs to summarise instead")
    parser.add_argument("--gbdt", default="8,0.1", help="fig12: GBDT tree size J and shrinkage s")
    parser.add_argument("--gbdt-impl", choices=["sklearn", "lightgbm"], default="sklearn",
                        help="fig7: GBDT grid by scikit-learn or by LightGBM (1 thread; same model family, faster)")
    parser.add_argument("--suffix", default="", help="fig7: suffix of the output file names")
    parser.add_argument("--datasets", default="rgf_synth_q64_reg")
    parser.add_argument("--seeds", type=seeds_arg, default=list(range(10)))
    parser.add_argument("--max-leaf", type=int, default=10000)
    parser.add_argument("--out-dir", default=str(ROOT / "studies/results"))
    args = parser.parse_args()
    args.datasets = args.datasets.split(",")
    config = load_config(ROOT / "config.yaml")
    {"fig7": fig7, "fig12": fig12, "fig15": fig15}[args.target](args, config)


if __name__ == "__main__":
    main()
