"""Tables of the CO2 Forest paper (Norouzi et al. 2015, "CO2 Forest: improved random forest by continuous
optimization of oblique splits"): Table I and Fig. 1-2 on rows, and its face-part segmentation (Sec. 6.2: Table II,
Figs. 3 and 4)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..plan import paper_values
from .tables import aggregate, param_column


def co2_table1(runs):
    """CO2 paper Table I / Fig. 2: forest test error (%) against the number of trees, paper's number beside."""
    runs = runs.assign(n_trees=runs["tree_n_trees"].astype(int))
    for column in ("tree_n_oblique_splits", "tree_n_axis_fallbacks"):  # per tree; absent in older runs
        if column not in runs:
            runs = runs.assign(**{column: np.nan})
    table = aggregate(runs, "n_trees", ["test_error", "tree_n_oblique_splits", "tree_n_axis_fallbacks"])
    table = table.rename(columns=lambda c: c.replace("tree_n_", "n_"))
    table.insert(4, "paper_value", [paper_values.co2_table1(d, m, n) for d, m, n in
                                    zip(table["dataset"], table["method"], table["n_trees"])])
    return table


def co2_fig1(runs):
    """CO2 paper Fig. 1: training and validation error (%) of single trees against the depth limit, one
    curve per norm bound ``nu`` (eq. (9)); baselines without ``nu`` (axis-aligned trees) have it empty."""
    runs = runs.assign(depth=param_column(runs, "max_depth"), nu=param_column(runs, "nu"))
    return aggregate(runs, "depth", ["train_error", "val_error"], keys=("dataset", "method", "nu"))


# ---- CO2 paper Sec. 6.2: face-part segmentation (segmentation runs carry ``staged`` Jaccard scores) -------
def _staged(run_dir):
    return json.loads((Path(run_dir) / "metrics.json").read_text()).get("staged") or {}


def _staged_rows(runs):
    """One row per run and forest size m: the test Jaccard of the forest of the first m trees. Only the
    largest forest of each (data set, method, seed) counts: smaller ones are its prefixes."""
    rows = []
    if len(runs):
        runs = runs.sort_values("tree_n_trees").groupby(["dataset", "method", "seed"], sort=True).tail(1)
    for _, run in runs.iterrows():
        staged = _staged(run["run"])
        unweighted = staged.get("test_jaccard_unweighted") or [np.nan] * len(staged.get("n_trees", []))
        for n_trees, jaccard, other in zip(staged.get("n_trees", []), staged.get("test_jaccard", []), unweighted):
            rows.append({"dataset": run["dataset"], "method": run["method"], "seed": run["seed"],
                         "n_trees": int(n_trees), "depth": run["params"].get("max_depth"), "jaccard": jaccard,
                         "jaccard_unweighted": other})
    return pd.DataFrame(rows, columns=["dataset", "method", "seed", "n_trees", "depth", "jaccard",
                                       "jaccard_unweighted"])


def co2_table2_jaccard(runs):
    """CO2 paper Table II: test class-average Jaccard (%) of forests of 16 and 32 trees, paper's beside.

    ``jaccard`` applies the paper's re-weighting of class probabilities by the inverse sampling factor,
    ``jaccard_unweighted`` is the same forest without it. Read from the runs' staged scores, so both sizes
    come from one 32-tree fit per method and seed."""
    staged = _staged_rows(runs)
    staged = staged[staged["n_trees"].isin([16, 32])]
    table = aggregate(staged, "n_trees", ["jaccard", "jaccard_unweighted"])
    table.insert(4, "paper_value", [paper_values.co2_table2(d, m, n) for d, m, n in
                                    zip(table["dataset"], table["method"], table["n_trees"])])
    return table


def co2_fig4_jaccard(runs):
    """CO2 paper Fig. 4: test Jaccard (%) against the maximum depth for 16 trees (``curve`` depth; runs
    whose sweep sets max_depth) and against the number of trees (``curve`` n_trees; staged scores of the
    other runs). The first m trees of a larger forest are a forest of m trees, so a larger forest's staged
    score at the depth runs' size adds its depth to the depth curve (unless a depth run has it already)."""
    has_depth = runs["sweep"].map(lambda sweep: "max_depth" in sweep) if len(runs) else runs.get("sweep")
    depth_runs, tree_runs = (runs[has_depth], runs[~has_depth]) if len(runs) else (runs, runs)
    parts = []
    if len(depth_runs):
        unweighted = (depth_runs["test_jaccard_unweighted"] if "test_jaccard_unweighted" in depth_runs
                      else np.nan)
        d = depth_runs.assign(depth=param_column(depth_runs, "max_depth"), jaccard=depth_runs["test_jaccard"],
                              jaccard_unweighted=unweighted, n_trees=depth_runs["tree_n_trees"].astype(int))
        d = d[["dataset", "method", "seed", "n_trees", "depth", "jaccard", "jaccard_unweighted"]]
        if len(tree_runs):
            extra = _staged_rows(tree_runs)
            extra = extra[extra["n_trees"].isin(set(d["n_trees"])) & extra["depth"].notna()]
            have = set(zip(d["dataset"], d["method"], d["depth"].astype(float)))
            keep = [(ds, m, float(dp)) not in have for ds, m, dp in zip(extra["dataset"], extra["method"],
                                                                        extra["depth"])]
            d = pd.concat([d, extra[keep]], ignore_index=True)
        t = aggregate(d, "depth", ["jaccard", "jaccard_unweighted"], keys=("dataset", "method", "n_trees"))
        parts.append(t.assign(curve="depth"))
    if len(tree_runs):
        s = _staged_rows(tree_runs)
        s["depth"] = s["depth"].astype(float)
        t = aggregate(s, "n_trees", ["jaccard", "jaccard_unweighted"], keys=("dataset", "method", "depth"))
        parts.append(t.assign(curve="n_trees"))
    columns = ["curve", "dataset", "method", "depth", "n_trees", "jaccard", "jaccard_unweighted", "jaccard_std",
               "jaccard_unweighted_std", "n_seeds"]
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True)[columns]


def co2_fig3_segmentation(runs, n_random=5, random_seed=0):
    """CO2 paper Fig. 3: which test images to show. As the paper: for each method its median image by
    Jaccard, then the images with the highest mean and the highest variance of the scores across methods,
    then ``n_random`` random images; one row per (image, method) with that image's Jaccard and the run
    whose ``segmentation.npz`` holds the labelling. Uses the first seed present."""
    columns = ["dataset", "seed", "order", "role", "image", "method", "jaccard", "run"]
    if runs.empty:
        return pd.DataFrame(columns=columns)
    runs = runs[runs["seed"] == runs["seed"].min()]
    runs = runs.sort_values("tree_n_trees").groupby("method", sort=True).tail(1)  # the largest forest
    scores = {}
    for _, run in runs.iterrows():
        with np.load(Path(run["run"]) / "segmentation.npz") as z:
            scores[run["method"]] = np.nan_to_num(z["test_image_jaccard"], nan=0.0)
    methods = sorted(scores)
    S = np.vstack([scores[m] for m in methods])
    picks = []
    for i, method in enumerate(methods):
        order = np.argsort(S[i], kind="stable")
        picks.append((f"median {method}", int(order[len(order) // 2])))
    picks.append(("highest mean", int(np.argmax(S.mean(axis=0)))))
    picks.append(("highest variance", int(np.argmax(S.var(axis=0)))))
    rng = np.random.default_rng(random_seed)
    for image in rng.choice(S.shape[1], min(n_random, S.shape[1]), replace=False):
        picks.append(("random", int(image)))
    run_of = dict(zip(runs["method"], runs["run"]))
    rows = [{"dataset": runs["dataset"].iloc[0], "seed": int(runs["seed"].iloc[0]), "order": k, "role": role,
             "image": image, "method": m, "jaccard": S[i, image], "run": run_of[m]}
            for k, (role, image) in enumerate(picks) for i, m in enumerate(methods)]
    return pd.DataFrame(rows, columns=columns)
