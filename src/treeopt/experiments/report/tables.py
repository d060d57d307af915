"""Report tables: final runs in, long-format CSV out (one row per data set, method and setting).

Every table is the mean over seeds with ``n_seeds`` and, for each value column, ``{column}_std`` (sample
standard deviation; empty with one seed). Settings come from what was run, not from the method's name, so a
new learner's runs are simply more rows: ``depth`` is the ``max_depth`` limit, ``n_trees`` the number of
trees actually fitted, ``n_leaves`` the total number of leaves in the model.

A staged run (one fit scored at several sizes, :mod:`treeopt.experiments.run.staged`) gives one row per size, as if
each size had been its own run: its metrics, ``n_trees`` and ``n_leaves`` are the stage's; the fit and
predict timings belong to the whole fit and stay only on the row of the fitted size.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ..plan import paper_values
from ..plan.params import params_slug

KEYS = ("dataset", "method")


def _flatten(metrics, parts_only=False):
    row = {} if parts_only else {key: metrics[key] for key in ("dataset", "method", "seed", "n_train", "n_val",
                                                                 "n_test", "fit_seconds", "predict_seconds")}
    for part in ("train", "val", "test"):
        for name, value in (metrics.get(part) or {}).items():
            row[f"{part}_{name}"] = value
    if parts_only:
        return row
    for name, value in (metrics.get("tree") or {}).items():
        row[f"tree_{name}"] = value
    return row


def _stage_rows(row, metrics):
    """The rows of a staged run: one per scored size (``metrics["stages"]``)."""
    rows = []
    for stage in metrics["stages"]:
        (param, value), = ((k, v) for k, v in stage.items() if k not in ("stage_value", "train", "val", "test",
                                                                           "tree"))
        staged = {k: v for k, v in row.items() if not k.startswith(("train_", "val_", "test_"))}
        staged.update(_flatten({**metrics, **{part: stage.get(part) or {} for part in ("train", "val", "test")}},
                               parts_only=True))
        for name, tree_value in (stage.get("tree") or {}).items():
            staged[f"tree_{name}"] = tree_value
        if "n_leaves_total" in (stage.get("tree") or {}) and stage["tree"].get("n_trees"):
            staged["tree_n_leaves"] = stage["tree"]["n_leaves_total"] / stage["tree"]["n_trees"]
        if stage.get("stage_value") != metrics["params"].get(param):
            staged["fit_seconds"] = staged["predict_seconds"] = np.nan  # timings are the whole fit's
        staged["params"] = {**row["params"], param: value}
        staged["sweep"] = {**row["sweep"], param: value}
        rows.append(staged)
    return rows


def load_runs(run_dirs):
    """One row per run folder (per scored size of a staged run): its metrics flattened (``test_error``,
    ``tree_n_leaves``, ...), ``params`` (dict) and the experiment recorded in ``params.yaml``."""
    rows = []
    for run_dir in run_dirs:
        run_dir = Path(run_dir)
        metrics = json.loads((run_dir / "metrics.json").read_text())
        setup = yaml.safe_load((run_dir / "params.yaml").read_text())
        row = _flatten(metrics)
        row["params"] = metrics["params"]
        row["experiment"] = setup.get("experiment")
        row["sweep"] = setup.get("sweep") or {}
        row["run"] = str(run_dir)
        rows.extend(_stage_rows(row, metrics) if metrics.get("stages") else [row])
    return pd.DataFrame(rows)


def param_column(runs, *names):
    """The first of ``names`` present in each run's params (e.g. max_depth), as a column."""
    def pick(params):
        for name in names:
            if params.get(name) is not None:
                return params[name]
        return np.nan
    return runs["params"].map(pick)


def aggregate(runs, setting, values, keys=KEYS):
    """Mean over seeds of ``values`` per (*keys, setting), with ``_std`` columns and n_seeds."""
    keys = list(keys)
    if runs.empty:
        return pd.DataFrame(columns=[*keys, setting, *values, "n_seeds"])
    missing = [v for v in values if v not in runs]
    if missing:
        raise ValueError(f"runs lack {', '.join(missing)} (wrong task for this table?)")
    # dropna=False keeps rows whose key is empty, e.g. the baseline's ``nu`` in co2_fig1
    grouped = runs.groupby([*keys, setting], sort=True, dropna=False)
    table = grouped[list(values)].mean()
    std = grouped[list(values)].std(ddof=1).add_suffix("_std")
    table = table.join(std)
    table["n_seeds"] = grouped["seed"].nunique()
    table = table.reset_index()
    return table[[*keys, setting, *values, *std.columns, "n_seeds"]]


def nongreedy_fig2(runs):
    """Non-greedy paper Fig. 2: training and test accuracy (%) of single trees against the depth limit."""
    runs = runs.assign(depth=param_column(runs, "max_depth", "depth"))
    return aggregate(runs, "depth", ["train_accuracy", "test_accuracy"])


def nongreedy_fig3(runs):
    """Non-greedy paper Fig. 3: leaves that training points reach (``active_leaves``) against depth, one curve
    per norm bound ``nu`` (eq. (9)); ``n_leaves`` is the tree's number of leaves (2^depth for a non-greedy tree).
    Methods without ``nu`` (the axis-aligned baseline, the figure's dotted line) have it empty."""
    runs = runs.assign(depth=param_column(runs, "max_depth"), nu=param_column(runs, "nu"),
                       active_leaves=runs["tree_active_leaves_train"], n_leaves=runs["tree_n_leaves"])
    return aggregate(runs, "depth", ["active_leaves", "n_leaves"], keys=("dataset", "method", "nu"))


FIG4_TIMINGS = ("exact_seconds", "fast_seconds")


def nongreedy_fig4_runtime(runs):
    """Non-greedy paper Fig. 4: seconds for 1000 epochs of SGD with exact (eq. (10)-(12)) and fast (eq. (13))
    loss-augmented inference against depth (runs of ``nongreedy_sgd_timing``), ``speedup`` = exact / fast of
    the means over seeds; ``exact_cpu_seconds``, ``fast_cpu_seconds`` and ``cpu_speedup`` the same in CPU time;
    ``timed_epochs`` and ``timed_samples`` say what was measured to estimate them."""
    from ...nongreedy.timing import cpu_share

    cpu = {}
    for v in ("exact", "fast"):  # wall estimate x the CPU share of the timed fit (treeopt.nongreedy.timing)
        if f"tree_{v}_fit_cpu_seconds" in runs:
            share = [cpu_share(c, w) for c, w in zip(runs[f"tree_{v}_fit_cpu_seconds"],
                                                     runs[f"tree_{v}_fit_wall_seconds"])]
            cpu[f"{v}_cpu_seconds"] = runs[f"tree_{v}_seconds"] * share
    extra = list(cpu) if len(cpu) == 2 else []
    names = [*FIG4_TIMINGS, *extra, "timed_epochs", "timed_samples"]
    runs = runs.assign(depth=param_column(runs, "max_depth"), **cpu,
                       **{name: runs[f"tree_{name}"] for name in names if name not in cpu})
    table = aggregate(runs, "depth", names, keys=("dataset",))
    table.insert(4, "speedup", table["exact_seconds"] / table["fast_seconds"])
    if len(extra) == 2:  # the same ratio in CPU time (robust to the machine's load)
        table.insert(7, "cpu_speedup", table["exact_cpu_seconds"] / table["fast_cpu_seconds"])
    return table


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


# Sweep parameters that set a model's size: they move a point along a curve rather than start a new curve.
SIZE_PARAMS = frozenset({"n_estimators", "max_leaf", "max_leaf_forest", "n_iter"})


# RGF's leaf budget is its size (GBDT's max_leaf_nodes is the size of each tree, a configuration).
METHOD_SIZE_PARAMS = {"rgf": frozenset({"max_leaf_nodes"}), "xrgf": frozenset({"max_leaf_nodes"})}


def size_params(method):
    """Sweep parameters that set the size of ``method``'s model (SIZE_PARAMS plus per-family ones)."""
    return SIZE_PARAMS | METHOD_SIZE_PARAMS.get(str(method).split("_")[0], frozenset())


def variant_column(runs):
    """Label of each run's configuration apart from its size (e.g. GBDT's leaves per tree and shrinkage)."""
    def label(sweep, method):
        rest = {k: v for k, v in sweep.items() if k not in size_params(method)}
        return params_slug(rest) if rest else ""
    return pd.Series([label(s, m) for s, m in zip(runs["sweep"], runs["method"])], index=runs.index,
                     dtype=object)


def total_leaves(runs):
    """Leaves summed over a model's trees: ``tree_n_leaves_total`` where recorded (exact, and the stage's own for
    a staged run's smaller sizes), else the mean leaves per tree x the number of trees (older runs)."""
    total = runs["tree_n_leaves"] * runs["tree_n_trees"]
    if "tree_n_leaves_total" in runs:
        total = runs["tree_n_leaves_total"].fillna(total)
    return total.round().astype(int)


def size_curve(runs):
    """RGF paper Figs. 7-10: test RMSE (regression) or test error % (classification) against the model
    size, the total number of leaves over all trees; one curve per configuration (``variant``, e.g.
    ``learning_rate=0.1,max_leaf_nodes=8`` for the paper's 'gb8:s=0.1')."""
    runs = runs.assign(n_leaves=total_leaves(runs), variant=variant_column(runs))
    keys = [*KEYS, "variant"]
    parts = [aggregate(runs[runs[value].notna()], "n_leaves", [value], keys=keys)
             for value in ("test_rmse", "test_error") if value in runs]
    table = pd.concat([p for p in parts if not p.empty] or parts[:1], ignore_index=True)
    return table.sort_values([*keys, "n_leaves"], kind="stable").reset_index(drop=True)


def _largest_runs(runs):
    """Per (dataset, method, variant, seed) the run with the most leaves (the end of a size curve)."""
    runs = runs.assign(n_leaves=total_leaves(runs), variant=variant_column(runs))
    idx = runs.groupby(["dataset", "method", "variant", "seed"])["n_leaves"].idxmax()
    return runs.loc[idx.values]


def rgf_fig15_time(runs, n_best=9):
    """RGF paper Fig. 15: training seconds of RGF-L2 (mean over its configurations, at their largest model: the
    end of the figures' leaf axis) and of GBDT (mean over the ``n_best`` configurations with the best peak test
    score, each at the run closest to RGF's number of leaves), with the ratio and the paper's numbers beside.
    Timings are whatever the machine gave."""
    cols = ["dataset", "rgf_seconds", "gbdt_seconds", "ratio", "rgf_leaves", "gbdt_leaves", "n_rgf_configs",
            "n_gbdt_configs", "n_seeds", "paper_rgf_seconds", "paper_gbdt_seconds", "paper_value"]
    rows = []
    for dataset, sub in runs.groupby("dataset", sort=True):
        rgf = sub[sub["method"].isin(["rgf_l2", "rgf_l2_clf"])]
        gb = sub[sub["method"].isin(["gbdt", "gbdt_clf", "gbdt_exp"])]
        if rgf.empty or gb.empty:
            continue
        metric = "test_rmse" if "test_rmse" in sub and sub["test_rmse"].notna().any() else "test_error"
        gb = gb.assign(variant=variant_column(gb))
        peak = gb.groupby(["method", "variant", "seed"])[metric].min().groupby(["method", "variant"]).mean()
        best = peak.sort_values(kind="stable").head(n_best).index
        rgf_end = _largest_runs(rgf)
        # GBDT at the same number of leaves as RGF's largest models (the paper's l): per configuration and seed
        # the run whose leaf count is closest to it
        target = rgf_end["n_leaves"].mean()
        gb = gb.assign(n_leaves=total_leaves(gb))
        gb = gb[[(m, v) in set(best) for m, v in zip(gb["method"], gb["variant"])]]
        closest = (gb["n_leaves"] - target).abs().groupby([gb["method"], gb["variant"], gb["seed"]]).idxmin()
        gb_end = gb.loc[closest.values]
        paper = paper_values.rgf_fig15(dataset) or (None, None, None)
        rows.append({"dataset": dataset, "rgf_seconds": rgf_end["fit_seconds"].mean(),
                     "gbdt_seconds": gb_end["fit_seconds"].mean(),
                     "ratio": rgf_end["fit_seconds"].mean() / gb_end["fit_seconds"].mean(),
                     "rgf_leaves": rgf_end["n_leaves"].mean(), "gbdt_leaves": gb_end["n_leaves"].mean(),
                     "n_rgf_configs": rgf_end["variant"].nunique(), "n_gbdt_configs": len(best),
                     "n_seeds": rgf_end["seed"].nunique(), "paper_rgf_seconds": paper[0],
                     "paper_gbdt_seconds": paper[1], "paper_value": paper[2]})
    return pd.DataFrame(rows, columns=cols)


def rgf_fig16_time(runs):
    """RGF paper Fig. 16: training seconds of RGF against the average tree size (leaves per tree), one row per
    RGF configuration at its largest model."""
    rgf = runs[runs["method"].str.match(r"^x?rgf_")]
    if rgf.empty:
        return pd.DataFrame(columns=["dataset", "method", "variant", "tree_size", "n_leaves", "fit_seconds",
                                     "n_seeds"])
    end = _largest_runs(rgf).assign(tree_size=lambda r: r["tree_n_leaves"])
    table = aggregate(end, "variant", ["tree_size", "n_leaves", "fit_seconds"])
    return table


def write_table(table, path):
    """Write a table CSV atomically (temporary file, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    table.to_csv(tmp, index=False, float_format="%.6g")
    tmp.replace(path)


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

# ---- TAO (Carreira-Perpinan & Tavallali 2018) -----------------------------------------------------------
def _tao_init(runs):
    """The initial tree of each run: "cart" (default), "oc1", "co2", "random" or "given"."""
    return runs["params"].map(lambda p: p.get("init") or ("cart" if "init" not in p or p.get("init") is None
                                                         else "given"))


def tao_fixed_depth(runs):
    """TAO fixed-depth comparison with CART: test accuracy (%) per depth, the paper's number beside."""
    runs = runs.assign(depth=param_column(runs, "max_depth"))
    table = aggregate(runs, "depth", ["test_accuracy", "train_accuracy"])
    table.insert(4, "paper_value", [paper_values.tao_fixed_depth(d, m, dep) for d, m, dep in
                                    zip(table["dataset"], table["method"], table["depth"])])
    return table


def tao_table1(runs):
    """TAO Table 1: test error (%) and inference time on the whole test set (s), C chosen on validation;
    the paper's test error (``paper_value``) and inference time beside, with the chosen C and tree size."""
    runs = runs.assign(depth=param_column(runs, "max_depth"), inference_seconds=runs["predict_seconds"],
                       C=param_column(runs, "C"), n_internal=runs["tree_n_internal"],
                       nonzero_weights=runs["tree_nonzero_weights"])
    runs = runs.assign(C=runs["C"].where(runs["method"].str.startswith("tao"), np.nan),
                       init=_tao_init(runs))  # the initial tree chosen on validation (cart / oc1)
    table = aggregate(runs, "depth", ["test_error", "inference_seconds", "C", "n_internal", "nonzero_weights"],
                      keys=(*KEYS, "init"))
    table.insert(5, "paper_value", [paper_values.tao_table1(d, m) for d, m in zip(table["dataset"], table["method"])])
    table.insert(7, "paper_inference_seconds", [paper_values.tao_table1(d, m, "inference_seconds")
                                                for d, m in zip(table["dataset"], table["method"])])
    table["paper_C"] = [paper_values.tao_table1(d, m, "C") for d, m in zip(table["dataset"], table["method"])]
    return table


_PATH_VALUES = ("train_error", "val_error", "test_error", "nonzero_pct", "nonzero_weights", "n_internal",
                "n_leaves", "path_length_mean", "path_length_min", "path_length_max", "inference_ops",
                "n_iter", "liblinear_seconds", "fit_seconds")


def tao_fig1_path(runs):
    """TAO Fig. 1: the sparsity path, one row per (data set, method, initial tree, initial depth, C), from the
    ``path`` each warm-started run records in metrics.json (mean over seeds)."""
    rows = []
    for _, run in runs.iterrows():
        metrics = json.loads((Path(run["run"]) / "metrics.json").read_text())
        for step in metrics.get("path") or []:
            rows.append({"dataset": run["dataset"], "method": run["method"],
                         "init": run["params"].get("init") or "cart", "depth": run["params"].get("max_depth"),
                         "seed": run["seed"], **{k: step.get(k) for k in ("C", *_PATH_VALUES)}})
    keys = ["dataset", "method", "init", "depth", "C"]
    if not rows:
        return pd.DataFrame(columns=[*keys, *_PATH_VALUES, "n_seeds"])
    frame = pd.DataFrame(rows)
    values = [v for v in _PATH_VALUES if frame[v].notna().any()]
    grouped = frame.groupby(keys, sort=True, dropna=False)
    table = grouped[values].mean()
    table["n_seeds"] = grouped["seed"].nunique()
    table = table.reset_index()
    return table.sort_values(["dataset", "method", "init", "depth", "C"], ascending=[True, True, True, True, False],
                             kind="stable").reset_index(drop=True)


def tao_init(runs):
    """Not in any paper: TAO refining different initial trees (CART -> TAO vs CO2 -> TAO), test and training
    error (%) of the refined tree beside the initial tree's training error."""
    runs = runs.assign(depth=param_column(runs, "max_depth"), init=_tao_init(runs),
                       init_train_error=runs.get("tree_init_train_error", np.nan),
                       n_internal=runs["tree_n_internal"])
    return aggregate(runs, "depth", ["test_error", "train_error", "init_train_error", "n_internal"],
                     keys=("dataset", "method", "init"))


# ---- Beyond the papers: the optimal tree as the reference line (docs/optimal.md) ----------------------------
def _start(method, params):
    """The initial tree a run started from: TAO's ``init`` (None = CART), the non-greedy learner's (default
    CO2); empty for learners that do not start from a tree."""
    if method.startswith("tao"):
        init = params.get("init")
        return "cart" if init is None else init if isinstance(init, str) else "given"
    if method.startswith("nongreedy"):
        init = params.get("init", "co2")
        return init if isinstance(init, str) else "given"
    return ""


def beyond_optimal(runs):
    """Not in any paper: training and test accuracy (%) and fit time (s) against the depth limit for CART, TAO
    (from CART and from the optimal tree: ``init``), CO2 and non-greedy trees beside the optimal axis-aligned
    tree of the same depth (STreeD). ``proven`` is the fraction of seeds whose optimal tree was proven optimal
    within its time limit (for TAO from the optimal tree: its initial tree); ``gap`` the optimality gap (0 when
    proven; empty when not: pystreed reports no lower bound); ``init_train_accuracy`` TAO's initial tree's
    training accuracy, to read what TAO added to it."""
    def column(name):
        return runs[name] if name in runs else pd.Series(np.nan, index=runs.index)

    proven = column("tree_proven_optimal").where(runs["method"] == "optimal_axis",
                                                 column("tree_init_proven_optimal"))
    runs = runs.assign(depth=param_column(runs, "max_depth"),
                       init=[_start(m, p) for m, p in zip(runs["method"], runs["params"])],
                       proven=proven.astype(float), gap=column("tree_optimality_gap").astype(float),
                       init_train_accuracy=100.0 - column("tree_init_train_error").astype(float))
    values = ["train_accuracy", "test_accuracy", "fit_seconds", "proven", "gap", "init_train_accuracy"]
    table = aggregate(runs, "depth", values, keys=("dataset", "method", "init"))
    return table.drop(columns=["proven_std", "gap_std"])


# ---- Beyond the papers: our trees at DTSemNet's fixed heights (issue #39) -----------------------------------------
PUBLISHED_COLUMNS = tuple(f"published_{name}" for name in paper_values.DTSEMNET_TABLE3_METHODS)


def decade_fixed_height(runs):
    """Not in any paper: test and training accuracy (%) of our single trees (CART, CO2, non-greedy, TAO from CART
    and from the non-greedy tree: ``init``; the optimal tree) at a fixed height, with the training rows they were
    fitted on (``n_train``). Beside them, per data set and height, the test accuracies *published* in DTSemNet's
    Table 3 (ECAI 2024) for DTSemNet, TAO, DGT and CART (``published_*``, cited in ``published_source``; empty at
    other heights): reference numbers from another paper, not ours and not a reproduction target (no
    ``paper_value``)."""
    runs = runs.assign(depth=param_column(runs, "max_depth"),
                       init=[_start(m, p) for m, p in zip(runs["method"], runs["params"])])
    table = aggregate(runs, "depth", ["test_accuracy", "train_accuracy", "n_train"],
                      keys=("dataset", "method", "init")).drop(columns="n_train_std")
    published = [paper_values.dtsemnet_table3(d, depth) or {} for d, depth in zip(table["dataset"], table["depth"])]
    for name, column in zip(paper_values.DTSEMNET_TABLE3_METHODS, PUBLISHED_COLUMNS):
        table[column] = [values.get(name) for values in published]
    table["published_source"] = [paper_values.DTSEMNET_TABLE3_SOURCE if values else None for values in published]
    return table
