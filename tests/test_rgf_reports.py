"""RGF report tables (Figs. 15, 16), size axis of RGF runs, and the paper's baselines."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import GradientBoostingRegressor

from sklearn.utils.estimator_checks import parametrize_with_checks

from treeopt.boosting import BestFirstAdaBoostClassifier, SquareLossGBDTClassifier
from treeopt.boosting.baselines import l1_post_processing
from treeopt.experiments.plan.methods import make_estimator
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
    """RGF: mean over lambdas at the largest model; GBDT: mean over its (J, s) configurations, each at its largest
    model, with equal weight; the spread over configurations bounds the ratio."""
    table = tables_rgf.rgf_fig15_time(fake_runs())
    row = table.iloc[0]
    assert row["rgf_seconds"] == pytest.approx(4.0)         # RGF at its largest model, mean over lambdas
    assert row["gbdt_seconds"] == pytest.approx(0.375)      # (0.25 + 0.25 + 0.5 + 0.5) / 4 configurations
    assert row["ratio"] == pytest.approx(4.0 / 0.375)
    assert (row["gbdt_seconds_fastest"], row["gbdt_seconds_slowest"]) == (pytest.approx(0.25), pytest.approx(0.5))
    assert (row["ratio_low"], row["ratio_high"]) == (pytest.approx(8.0), pytest.approx(16.0))
    assert row["n_gbdt_configs"] == 4 and row["gbdt_configs"] == "J=2,8 s=1,0.1"
    assert row["gbdt_leaves"] == pytest.approx(50 * 5) and row["rgf_leaves"] == pytest.approx(200)
    assert row["clock"] == "wall" and row["n_seeds"] == 2
    assert row["paper_value"] == pytest.approx(2.9)         # Fig. 15, 16-leaf (R)


def test_fig15_time_is_square_loss_gbdt_only_and_prefers_cpu_seconds():
    """Sec. 6.5: "For both, the loss function was square loss": exponential-loss GBDT (gbdt_exp) and deviance GBDT
    (gbdt_clf) runs of a data set are not timed; CPU seconds are used when every run has them (one clock for both
    sides), wall seconds otherwise."""
    runs = fake_runs()
    slow_exp = runs[runs["method"] == "gbdt"].assign(method="gbdt_exp", fit_seconds=100.0)
    slow_dev = runs[runs["method"] == "gbdt"].assign(method="gbdt_clf", fit_seconds=100.0)
    runs = pd.concat([runs, slow_exp, slow_dev], ignore_index=True)
    assert tables_rgf.rgf_fig15_time(runs).iloc[0]["gbdt_seconds"] == pytest.approx(0.375)
    runs["fit_cpu_seconds"] = runs["fit_seconds"] / 2
    row = tables_rgf.rgf_fig15_time(runs).iloc[0]
    assert row["clock"] == "cpu" and row["rgf_seconds"] == pytest.approx(2.0)
    assert row["gbdt_seconds"] == pytest.approx(0.1875)
    runs.loc[runs["method"] == "rgf_l2", "fit_cpu_seconds"] = np.nan  # RGF without CPU seconds: both on the wall
    row = tables_rgf.rgf_fig15_time(runs).iloc[0]
    assert row["clock"] == "wall" and row["ratio"] == pytest.approx(4.0 / 0.375)


def test_fig15_time_of_staged_runs_is_the_fitted_size():
    """A staged RGF run gives one row per leaf budget; only the fitted size keeps the fit's timing, and the smaller
    stages carry the whole fit's tree counts: the largest model is found by the stage's own total leaves."""
    runs = fake_runs()
    rgf = runs["method"] == "rgf_l2"
    runs.loc[rgf, "tree_n_leaves_total"] = [s["max_leaf_nodes"] for s in runs.loc[rgf, "sweep"]]
    runs.loc[rgf, "tree_n_leaves"] = 20.0  # the whole fit's mean leaves per tree on every stage row
    runs.loc[rgf & runs["sweep"].map(lambda s: s["max_leaf_nodes"] == 100), "fit_seconds"] = np.nan
    row = tables_rgf.rgf_fig15_time(runs).iloc[0]
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


def test_square_loss_gbdt_classifier_is_the_regressor_on_pm1_targets():
    """gbdt_sq_clf (RGF paper Sec. 6: square loss for binary classification) is GradientBoostingRegressor fitted to
    +1 / -1 for classes_[1] / classes_[0]: the same raw output, predict its sign, predict_proba clip((f + 1) / 2)."""
    X, y = make_classification(n_samples=300, random_state=0)
    labels = np.where(y == 1, "yes", "no")  # classes_ in sorted order: "no" is -1, "yes" is +1
    params = dict(max_leaf_nodes=8, n_estimators=30, learning_rate=0.3, max_depth=None, min_samples_leaf=10,
                  random_state=0)
    model = SquareLossGBDTClassifier(**params).fit(X, labels)
    reference = GradientBoostingRegressor(loss="squared_error", **params).fit(X, np.where(y == 1, 1.0, -1.0))
    f = model.decision_function(X)
    np.testing.assert_array_equal(f, reference.predict(X))
    assert list(model.classes_) == ["no", "yes"]
    np.testing.assert_array_equal(model.predict(X), np.where(f > 0, "yes", "no"))
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba[:, 1], np.clip((f + 1) / 2, 0, 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.classes_[proba.argmax(axis=1)], model.predict(X))  # staged scoring's argmax
    assert np.mean(model.predict(X) == labels) > 0.9
    staged = list(model.staged_predict_proba(X))
    assert len(staged) == 30 and len(fitted_trees(model)) == 30
    np.testing.assert_allclose(staged[-1], proba)
    np.testing.assert_array_equal(list(model.staged_predict(X))[4], np.where(staged[4][:, 1] > 0.5, "yes", "no"))
    assert max(t.leaves.size for t in fitted_trees(model)) == 8


def test_square_loss_gbdt_classifier_is_binary_only():
    X, y = make_classification(n_samples=150, n_informative=4, n_classes=3, random_state=0)
    with pytest.raises(ValueError, match="Only binary classification"):
        SquareLossGBDTClassifier(n_estimators=3).fit(X, y)


def test_square_loss_gbdt_method_is_the_paper_gbdt():
    """The registered method grows best-first trees of max_leaf_nodes leaves (max_depth None), as gbdt."""
    model = make_estimator("gbdt_sq_clf", {"max_leaf_nodes": 4, "n_estimators": 5}, seed=3)
    assert isinstance(model, SquareLossGBDTClassifier)
    assert model.max_depth is None and model.random_state == 3
    assert make_estimator("gbdt", {"max_leaf_nodes": 4}, seed=3).max_depth is None


@parametrize_with_checks([SquareLossGBDTClassifier(n_estimators=5, min_samples_leaf=1)])
def test_square_loss_gbdt_classifier_sklearn_conventions(estimator, check):
    check(estimator)


def test_l1_path_reaches_the_least_squares_fit_of_the_leaves():
    X, y = make_regression(n_samples=200, n_features=4, noise=1.0, random_state=0)
    gbdt = GradientBoostingRegressor(max_leaf_nodes=4, max_depth=None, n_estimators=5, random_state=0).fit(X, y)
    nnz, out = l1_post_processing(gbdt, X, y, X, n_alphas=50, eps=1e-6)
    assert nnz[0] == 0 and np.all(np.diff(nnz) >= -2)          # the path starts empty and grows
    rmse = np.sqrt(np.mean((out - y[:, None]) ** 2, axis=0))
    assert rmse[-1] <= np.sqrt(np.mean((gbdt.predict(X) - y) ** 2)) + 1e-6   # refit weights fit at least as well


def test_figs_7_to_10_tables_hold_square_loss_curves_only():
    """Figs. 7-10 are square loss (Sec. 6; Fig. 10's caption): the registered tables drop Fig. 11's exponential-loss
    GBDT and RGF and AdaBoost, and keep square-loss GBDT on +-1 targets (gbdt_sq_clf) beside RGF."""
    from treeopt.experiments.plan.reports import TABLES

    runs = fake_runs()
    extra = runs[runs["method"] == "gbdt"]
    runs = pd.concat([runs, *(extra.assign(method=m) for m in ("gbdt_exp", "gbdt_sq_clf", "xrgf_clf", "adaboost"))],
                     ignore_index=True)
    table = tables_rgf.square_loss_curve(runs)
    assert set(table["method"]) == {"rgf_l2", "gbdt", "gbdt_sq_clf"}
    assert set(tables_rgf.size_curve(runs)["method"]) == {"rgf_l2", "gbdt", "gbdt_exp", "gbdt_sq_clf", "xrgf_clf",
                                                          "adaboost"}          # Fig. 11's table keeps them all
    for name in ("rgf_fig7_synthetic", "rgf_fig8_synthetic", "rgf_fig9_synthetic", "rgf_fig10_real"):
        assert TABLES[name].build.endswith("tables_rgf:square_loss_curve")
