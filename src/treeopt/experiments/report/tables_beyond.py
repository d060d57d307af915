"""Tables beyond the four papers: the optimal axis-aligned tree (STreeD) as the reference line (docs/optimal.md),
and our trees at the fixed heights of DTSemNet's Table 3 with its published numbers beside (docs/decade.md)."""

import numpy as np
import pandas as pd

from ..plan import paper_values
from .tables import aggregate, param_column


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
