"""RGF report tables (Figs. 15, 16), size axis of RGF runs, and the paper's baselines."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import GradientBoostingRegressor

from treeopt.boosting import BestFirstAdaBoostClassifier
from treeopt.boosting.baselines import l1_post_processing
from treeopt.experiments.report import tables_rgf
from treeopt.experiments.run.metrics import fitted_trees


def fake_runs():
    rows = []
    for seed in (0, 1):
        for l2 in (1, 0.1, 0.01):
            for size in (100, 200):
                rows.append({"dataset": "rgf_synth_q16_reg", "method": "rgf_l2", "seed": seed,
                             "sweep": {"l2": l2, "max_leaf_nodes": size}, "params": {"l2": l2},
                             "tree_n_leaves": size / 10, "tree_n_trees": 10, "test_rmse": 1.0 - l2 / 10 - size / 1e3,
                             "fit_seconds": 2.0 * size / 100})
        for J in (2, 8):
            for s in (0.1, 1.0):
                for n in (10, 50):
                    rows.append({"dataset": "rgf_synth_q16_reg", "method": "gbdt", "seed": seed,
                                 "sweep": {"max_leaf_nodes": J, "learning_rate": s, "n_estimators": n},
                                 "params": {}, "tree_n_leaves": J, "tree_n_trees": n, "test_rmse": 1.0 - J / 100,
                                 "fit_seconds": 0.5 if J == 8 else 0.25})
    return pd.DataFrame(rows)


def test_rgf_budget_is_the_size_axis_but_gbdt_tree_size_is_a_variant():
    runs = fake_runs()
    variants = tables_rgf.variant_column(runs)
    assert set(variants[runs["method"] == "rgf_l2"]) == {"l2=1", "l2=0.1", "l2=0.01"}
    assert "learning_rate=0.1,max_leaf_nodes=8" in set(variants[runs["method"] == "gbdt"])
    curve = tables_rgf.size_curve(runs)
    assert sorted(curve[curve["method"] == "rgf_l2"]["n_leaves"].unique()) == [100, 200]


def test_fig15_time_table():
    table = tables_rgf.rgf_fig15_time(fake_runs(), n_best=2)
    row = table.iloc[0]
    assert row["rgf_seconds"] == pytest.approx(4.0)         # RGF at its largest model, mean over lambdas
    assert row["gbdt_seconds"] == pytest.approx(0.5)        # the 2 best GBDT configurations (J = 8)
    assert row["ratio"] == pytest.approx(8.0)
    assert row["paper_value"] == pytest.approx(2.9)         # Fig. 15, 16-leaf (R)


def test_fig15_time_of_staged_runs_is_the_fitted_size():
    """A staged RGF run gives one row per leaf budget; only the fitted size keeps the fit's timing, and the smaller
    stages carry the whole fit's tree counts: the largest model is found by the stage's own total leaves."""
    runs = fake_runs()
    rgf = runs["method"] == "rgf_l2"
    runs.loc[rgf, "tree_n_leaves_total"] = [s["max_leaf_nodes"] for s in runs.loc[rgf, "sweep"]]
    runs.loc[rgf, "tree_n_leaves"] = 20.0  # the whole fit's mean leaves per tree on every stage row
    runs.loc[rgf & runs["sweep"].map(lambda s: s["max_leaf_nodes"] == 100), "fit_seconds"] = np.nan
    row = tables_rgf.rgf_fig15_time(runs, n_best=2).iloc[0]
    assert row["rgf_seconds"] == pytest.approx(4.0) and row["rgf_leaves"] == pytest.approx(200)


def test_fig16_time_table():
    table = tables_rgf.rgf_fig16_time(fake_runs())
    assert set(table["variant"]) == {"l2=1", "l2=0.1", "l2=0.01"}
    assert np.allclose(table["tree_size"], 20.0)


def test_adaboost_best_first_trees():
    X, y = make_classification(n_samples=300, random_state=0)
    model = BestFirstAdaBoostClassifier(max_leaf_nodes=4, n_estimators=20, random_state=0).fit(X, y)
    trees = fitted_trees(model)
    assert len(trees) == len(model.estimators_) and max(t.leaves.size for t in trees) <= 4
    assert np.mean(model.predict(X) == y) > 0.85
    staged = list(model.staged_predict_proba(X))
    np.testing.assert_allclose(staged[-1], model.predict_proba(X))


def test_l1_path_reaches_the_least_squares_fit_of_the_leaves():
    X, y = make_regression(n_samples=200, n_features=4, noise=1.0, random_state=0)
    gbdt = GradientBoostingRegressor(max_leaf_nodes=4, max_depth=None, n_estimators=5, random_state=0).fit(X, y)
    nnz, out = l1_post_processing(gbdt, X, y, X, n_alphas=50, eps=1e-6)
    assert nnz[0] == 0 and np.all(np.diff(nnz) >= -2)          # the path starts empty and grows
    rmse = np.sqrt(np.mean((out - y[:, None]) ** 2, axis=0))
    assert rmse[-1] <= np.sqrt(np.mean((gbdt.predict(X) - y) ** 2)) + 1e-6   # refit weights fit at least as well
