"""Tables of the TAO paper (Carreira-Perpinan & Tavallali 2018, "Alternating optimization of decision trees"):
Table 1, the sparsity path of Fig. 1, the fixed-depth comparison with CART (published in DTSemNet's Table 3) and TAO
from other initial trees."""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..plan import paper_values
from .tables import KEYS, aggregate, chosen_cell, param_column


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
    ``path`` each warm-started run records in metrics.json (mean over seeds). A path is a sweep at fixed settings
    (its keys are the row's settings), so ``chosen_params`` is empty unless a run took a value from a selection."""
    rows = []
    for _, run in runs.iterrows():
        metrics = json.loads((Path(run["run"]) / "metrics.json").read_text())
        for step in metrics.get("path") or []:
            rows.append({"dataset": run["dataset"], "method": run["method"],
                         "init": run["params"].get("init") or "cart", "depth": run["params"].get("max_depth"),
                         "seed": run["seed"], "tuned": run.get("tuned") or {},
                         "tuned_marks": run.get("tuned_marks") or {},
                         **{k: step.get(k) for k in ("C", *_PATH_VALUES)}})
    keys = ["dataset", "method", "init", "depth", "C"]
    if not rows:
        return pd.DataFrame(columns=[*keys, *_PATH_VALUES, "n_seeds", "chosen_params"])
    frame = pd.DataFrame(rows)
    values = [v for v in _PATH_VALUES if frame[v].notna().any()]
    grouped = frame.groupby(keys, sort=True, dropna=False)
    table = grouped[values].mean()
    table["n_seeds"] = grouped["seed"].nunique()
    table["chosen_params"] = grouped[["seed", "tuned", "tuned_marks"]].apply(chosen_cell)
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
