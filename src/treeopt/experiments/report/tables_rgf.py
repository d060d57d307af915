"""Tables of the RGF paper (Johnson & Zhang, "Learning nonlinear functions using regularized greedy forest"):
Figs. 7-13 (test score against model size) and the timings of Figs. 15 and 16."""

import pandas as pd

from ..plan import paper_values
from ..plan.params import params_slug
from .tables import KEYS, aggregate

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


# RGF paper Sec. 6: "we focus on square loss for regression and binary classification"; Figs. 7-10 are square loss
# (Fig. 10's caption says so), Fig. 11 is where exponential loss (gbdt_exp "xgb", xrgf_clf "xrgf") and AdaBoost are
# shown. gbdt_clf is scikit-learn's deviance GBDT, none of the paper's.
NOT_SQUARE_LOSS = frozenset({"gbdt_exp", "gbdt_clf", "xrgf_clf", "adaboost"})


def square_loss_curve(runs):
    """RGF paper Figs. 7-10: :func:`size_curve` of the square-loss methods only (RGF and GBDT alike: GBDT on +-1
    targets, ``gbdt_sq_clf``, for classification), so a curve of another loss cannot stand in for the paper's GBDT."""
    return size_curve(runs[~runs["method"].isin(NOT_SQUARE_LOSS)])


def _largest_runs(runs):
    """Per (dataset, method, variant, seed) the run with the most leaves (the end of a size curve)."""
    runs = runs.assign(n_leaves=total_leaves(runs), variant=variant_column(runs))
    idx = runs.groupby(["dataset", "method", "variant", "seed"])["n_leaves"].idxmax()
    return runs.loc[idx.values]


# RGF paper Sec. 6.5 ("Empirical running time", Fig. 15): "For both, the loss function was square loss". Square-loss
# GBDT is gbdt (regression) and gbdt_sq_clf (+-1 targets); gbdt_clf (deviance) and gbdt_exp (exponential) are not.
FIG15_RGF_METHODS = ("rgf_l2", "rgf_l2_clf")
FIG15_GBDT_METHODS = ("gbdt", "gbdt_sq_clf")


def _fit_clock(*parts):
    """("fit_cpu_seconds", "cpu") when every run of ``parts`` recorded the CPU seconds of its fit, else
    ("fit_seconds", "wall"): one clock for both sides of a ratio."""
    if all("fit_cpu_seconds" in part and part["fit_cpu_seconds"].notna().all() for part in parts):
        return "fit_cpu_seconds", "cpu"
    return "fit_seconds", "wall"


def _configs_label(gbdt):
    """The GBDT configurations timed, e.g. ``J=2,4,8 s=0.1``."""
    sweeps = list(gbdt["sweep"])
    sizes = sorted({s.get("max_leaf_nodes") for s in sweeps if s.get("max_leaf_nodes") is not None})
    rates = sorted({s.get("learning_rate") for s in sweeps if s.get("learning_rate") is not None}, reverse=True)
    return f"J={','.join(f'{j:g}' for j in sizes)} s={','.join(f'{r:g}' for r in rates)}"


def rgf_fig15_time(runs):
    """RGF paper Fig. 15 (Sec. 6.5, "Empirical running time"): training seconds of RGF-L2 and of GBDT, both with
    square loss, both fitted to the same number of leaves l (the paper: the end of the leaf axis of Figs. 7-10), and
    their ratio, with the paper's numbers beside.

    RGF: ``rgf_l2`` / ``rgf_l2_clf``, mean over its configurations (the paper: lambda in {1, 0.1, 0.01}) and seeds of
    the fit at its largest model (a staged run: the fitted size, whose timing is the whole fit's). GBDT: square loss
    only (``FIG15_GBDT_METHODS``); per configuration (J, s) the mean over seeds of its largest fit, then
    ``gbdt_seconds`` the mean over configurations with equal weight, as the paper's mean over its 9 best (J, s).
    Which configurations are timed is the experiments' choice (config.yaml, ``rgf_fig15_timing*``: every J at one s,
    since the fit time does not depend on s); ``gbdt_seconds_fastest`` / ``_slowest`` and ``ratio_low`` /
    ``ratio_high`` (RGF over the slowest / fastest configuration) show how far the choice of configurations alone
    can move the ratio.

    Seconds are the CPU seconds of the fits where every run of the data set recorded them (``clock`` "cpu": on a
    shared machine, what an idle core's wall clock would show for these one-threaded fits), else wall seconds
    (``clock`` "wall")."""
    cols = ["dataset", "rgf_seconds", "gbdt_seconds", "ratio", "gbdt_seconds_fastest", "gbdt_seconds_slowest",
            "ratio_low", "ratio_high", "clock", "rgf_leaves", "gbdt_leaves", "n_rgf_configs", "n_gbdt_configs",
            "gbdt_configs", "n_seeds", "paper_rgf_seconds", "paper_gbdt_seconds", "paper_value"]
    rows = []
    for dataset, sub in runs.groupby("dataset", sort=True):
        rgf = sub[sub["method"].isin(FIG15_RGF_METHODS)]
        gb = sub[sub["method"].isin(FIG15_GBDT_METHODS)]
        if rgf.empty or gb.empty:
            continue
        rgf_end, gb_end = _largest_runs(rgf), _largest_runs(gb)
        seconds, clock = _fit_clock(rgf_end, gb_end)
        rgf_seconds = rgf_end[seconds].mean()
        per_config = gb_end.groupby(["method", "variant"])[seconds].mean()  # each configuration: mean over seeds
        gbdt_seconds = per_config.mean()
        paper = paper_values.rgf_fig15(dataset) or (None, None, None)
        rows.append({"dataset": dataset, "rgf_seconds": rgf_seconds, "gbdt_seconds": gbdt_seconds,
                     "ratio": rgf_seconds / gbdt_seconds, "gbdt_seconds_fastest": per_config.min(),
                     "gbdt_seconds_slowest": per_config.max(), "ratio_low": rgf_seconds / per_config.max(),
                     "ratio_high": rgf_seconds / per_config.min(), "clock": clock,
                     "rgf_leaves": rgf_end["n_leaves"].mean(), "gbdt_leaves": gb_end["n_leaves"].mean(),
                     "n_rgf_configs": rgf_end["variant"].nunique(), "n_gbdt_configs": len(per_config),
                     "gbdt_configs": _configs_label(gb_end),
                     "n_seeds": min(rgf_end["seed"].nunique(), gb_end["seed"].nunique()),
                     "paper_rgf_seconds": paper[0], "paper_gbdt_seconds": paper[1], "paper_value": paper[2]})
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
