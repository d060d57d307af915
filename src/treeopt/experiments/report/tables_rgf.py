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
