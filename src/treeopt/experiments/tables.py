"""Report tables: final runs in, long-format CSV out (one row per data set, method and setting).

Every table is the mean over seeds with ``n_seeds`` and, for each value column, ``{column}_std`` (sample
standard deviation; empty with one seed). Settings come from what was run, not from the method's name, so a
new learner's runs are simply more rows: ``depth`` is the ``max_depth`` limit, ``n_trees`` the number of
trees actually fitted, ``n_leaves`` the total number of leaves in the model.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from . import paper_values
from .params import params_slug

KEYS = ("dataset", "method")


def _flatten(metrics):
    row = {key: metrics[key] for key in ("dataset", "method", "seed", "n_train", "n_val", "n_test",
                                         "fit_seconds", "predict_seconds")}
    for part in ("train", "val", "test"):
        for name, value in (metrics.get(part) or {}).items():
            row[f"{part}_{name}"] = value
    for name, value in (metrics.get("tree") or {}).items():
        row[f"tree_{name}"] = value
    return row


def load_runs(run_dirs):
    """One row per run folder: its metrics flattened (``test_error``, ``tree_n_leaves``, ...), ``params``
    (dict) and the experiment recorded in ``params.yaml``."""
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
        rows.append(row)
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


def co2_table1(runs):
    """CO2 paper Table I / Fig. 2: forest test error (%) against the number of trees, paper's number beside."""
    runs = runs.assign(n_trees=runs["tree_n_trees"].astype(int))
    table = aggregate(runs, "n_trees", ["test_error"])
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


def variant_column(runs):
    """Label of each run's configuration apart from its size (e.g. GBDT's leaves per tree and shrinkage)."""
    return runs["sweep"].map(lambda sweep: "" if not {k: v for k, v in sweep.items() if k not in SIZE_PARAMS}
                             else params_slug({k: v for k, v in sweep.items() if k not in SIZE_PARAMS}))


def size_curve(runs):
    """RGF paper Figs. 7-10: test RMSE (regression) or test error % (classification) against the model
    size, the total number of leaves over all trees; one curve per configuration (``variant``, e.g.
    ``learning_rate=0.1,max_leaf_nodes=8`` for the paper's 'gb8:s=0.1')."""
    runs = runs.assign(n_leaves=(runs["tree_n_leaves"] * runs["tree_n_trees"]).round().astype(int),
                       variant=variant_column(runs))
    keys = [*KEYS, "variant"]
    parts = [aggregate(runs[runs[value].notna()], "n_leaves", [value], keys=keys)
             for value in ("test_rmse", "test_error") if value in runs]
    table = pd.concat([p for p in parts if not p.empty] or parts[:1], ignore_index=True)
    return table.sort_values([*keys, "n_leaves"], kind="stable").reset_index(drop=True)


def write_table(table, path):
    """Write a table CSV atomically (temporary file, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    table.to_csv(tmp, index=False, float_format="%.6g")
    tmp.replace(path)


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
    runs = runs.assign(C=runs["C"].where(runs["method"].str.startswith("tao"), np.nan))
    table = aggregate(runs, "depth", ["test_error", "inference_seconds", "C", "n_internal", "nonzero_weights"])
    table.insert(4, "paper_value", [paper_values.tao_table1(d, m) for d, m in zip(table["dataset"], table["method"])])
    table.insert(6, "paper_inference_seconds", [paper_values.tao_table1(d, m, "inference_seconds")
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
