"""Non-greedy trees in the workflow: the methods' runs, the Fig. 3 / Fig. 4 tables and figures, the config."""

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler

from treeopt.experiments.plan.config import load_config
from treeopt.experiments.plan.methods import make_estimator
from treeopt.experiments.plan.reports import FIGURES, table_of
from treeopt.experiments.report import tables, tables_nongreedy
from treeopt.experiments.report.captions import caption
from treeopt.experiments.run.runner import run
from treeopt.nongreedy.timing import SGDTimingClassifier
from treeopt.plots import nongreedy as ng_plots


def test_nongreedy_run_records_tree_stats_and_the_co2_start(tmp_path, wine_split):
    path, split = wine_split
    out = tmp_path / "run"
    params = {"max_depth": 3, "nu": 1.0, "learning_rate": 0.01, "max_epochs": 5}
    result = run(out, dataset="wine", method="nongreedy_tree", params=params, seed=0, split_path=path)
    saved = json.loads((out / "metrics.json").read_text())
    tree = saved["tree"]
    assert tree["n_leaves"] == 8 and tree["n_internal"] == 7  # complete tree of depth 3
    assert 1 <= tree["active_leaves_train"] <= 8 and 1 <= tree["active_leaves"] <= 8
    assert tree["n_oblique_splits"] == 7
    assert 0 < tree["nonzero_weights"] <= 7 * (split.X_train.shape[1] + 1)
    # active_leaves_train counts the leaves the 100 training points reach in the saved model
    model = make_estimator("nongreedy_tree", params, 0).fit(split.X_train, split.y_train)
    assert tree["active_leaves_train"] == np.unique(model.apply(split.X_train)).size
    assert result["train"]["accuracy"] == pytest.approx(100 * np.mean(model.predict(split.X_train) == split.y_train))
    setup = yaml.safe_load((out / "params.yaml").read_text())
    assert setup["params"] == params and setup["method"] == "nongreedy_tree"
    assert "epoch 1:" in (out / "log.txt").read_text()  # per-epoch progress in the run's log


def test_nongreedy_regressor_is_registered_for_regression(tmp_path):
    est = make_estimator("nongreedy_tree_reg", {"max_depth": 2, "max_epochs": 3}, 0)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = X[:, 0] * 3 + 1
    assert est.fit(X, y).score(X, y) > 0.5


@pytest.fixture(scope="module")
def wine():
    X, y = load_wine(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def test_timing_scales_measured_epochs_to_1000_epochs_of_all_points(wine):
    X, y = wine
    est = SGDTimingClassifier(max_depth=4, timed_epochs=3, max_samples=60, random_state=0).fit(X, y)
    s = est.fit_stats_
    assert (s["timed_epochs"], s["timed_samples"], s["n_samples"]) == (3, 60, X.shape[0])
    for v in ("exact", "fast"):
        assert s[f"{v}_seconds"] == pytest.approx(1000 * s[f"{v}_epoch_seconds"] * X.shape[0] / 60)
        assert 0 < s[f"{v}_epoch_seconds"] * 3 <= s[f"{v}_fit_wall_seconds"]
        share = min(1.0, s[f"{v}_fit_cpu_seconds"] / s[f"{v}_fit_wall_seconds"])
        assert s[f"{v}_cpu_seconds"] == pytest.approx(s[f"{v}_seconds"] * share)
    assert s["speedup"] == pytest.approx(s["exact_seconds"] / s["fast_seconds"])
    assert est.tree_.n_nodes == 31 and set(est.predict(X)) <= set(est.classes_)


def test_timing_with_all_points_and_bad_parameters(wine):
    X, y = wine
    s = SGDTimingClassifier(max_depth=2, timed_epochs=1, epochs_per_report=10, random_state=0).fit(X, y).fit_stats_
    assert s["timed_samples"] == s["n_samples"] == X.shape[0]
    assert s["fast_seconds"] == pytest.approx(10 * s["fast_epoch_seconds"])
    with pytest.raises(ValueError, match="timed_epochs"):
        SGDTimingClassifier(timed_epochs=0).fit(X, y)
    with pytest.raises(ValueError, match="init"):
        SGDTimingClassifier(init="oc1").fit(X, y)


def _fake_run(root, method, seed, params, tree, dataset="digits"):
    d = root / f"{method}-{seed}-{len(list(root.iterdir()))}"
    d.mkdir()
    metrics = {"dataset": dataset, "method": method, "params": params, "seed": seed, "n_train": 10, "n_val": 0,
               "n_test": 5, "train": {"accuracy": 90.0}, "val": {}, "test": {"accuracy": 80.0},
               "fit_seconds": 1.0, "predict_seconds": 0.1, "tree": tree, "versions": {}, "git_commit": None}
    (d / "metrics.json").write_text(json.dumps(metrics))
    (d / "params.yaml").write_text(yaml.safe_dump({"experiment": "e", "sweep": {}}))
    return d


def test_fig4_table_speedup_is_exact_over_fast_of_the_seed_means(tmp_path):
    def timing(depth, seed, exact, fast):
        return _fake_run(tmp_path, "nongreedy_sgd_timing", seed, {"max_depth": depth},
                         {"n_leaves": 2 ** depth, "exact_seconds": exact, "fast_seconds": fast, "timed_epochs": 2,
                          "timed_samples": 100}, dataset="connect4")
    dirs = [timing(4, 0, 10.0, 4.0), timing(4, 1, 30.0, 6.0), timing(8, 0, 100.0, 10.0)]
    table = tables_nongreedy.nongreedy_fig4_runtime(tables.load_runs(dirs))
    assert list(table.columns[:5]) == ["dataset", "depth", "exact_seconds", "fast_seconds", "speedup"]
    assert "cpu_speedup" not in table  # runs without CPU timings
    assert list(table["depth"]) == [4, 8]
    d4 = table.iloc[0]
    assert (d4["exact_seconds"], d4["fast_seconds"], d4["n_seeds"]) == (20.0, 5.0, 2)
    assert d4["speedup"] == pytest.approx(4.0)  # 20 / 5, not the mean of 2.5 and 5
    assert table.iloc[1]["speedup"] == pytest.approx(10.0)
    fig = ng_plots.sgd_time_vs_depth(table, None, "default")
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    assert [list(line.get_ydata()) for line in ax.get_lines()] == [[20.0, 100.0], [5.0, 10.0]]
    assert any("profile: default" in t.get_text() for t in fig.texts)
    with_cpu = [_fake_run(tmp_path, "nongreedy_sgd_timing", 0, {"max_depth": 6},
                          {"exact_seconds": 9.0, "fast_seconds": 3.0, "exact_fit_cpu_seconds": 2.0,
                           "exact_fit_wall_seconds": 2.5, "fast_fit_cpu_seconds": 0.3, "fast_fit_wall_seconds": 0.6,
                           "timed_epochs": 2, "timed_samples": 100}, dataset="connect4")]
    row = tables_nongreedy.nongreedy_fig4_runtime(tables.load_runs(with_cpu)).iloc[0]
    assert (row["exact_cpu_seconds"], row["fast_cpu_seconds"]) == pytest.approx((7.2, 1.5))  # x 0.8, x 0.5
    assert (row["speedup"], row["cpu_speedup"]) == pytest.approx((3.0, 4.8))


def test_fig3_table_counts_training_leaves_per_nu_and_keeps_the_baseline(tmp_path):
    def ng(nu, depth, active):
        return _fake_run(tmp_path, "nongreedy_tree", 0, {"max_depth": depth, "nu": nu},
                         {"n_leaves": 2 ** depth, "active_leaves_train": active, "active_leaves": active - 1})
    dirs = [ng(0.1, 4, 3), ng(0.1, 6, 5), ng(10, 4, 12), ng(10, 6, 40),
            _fake_run(tmp_path, "cart", 0, {"max_depth": 4}, {"n_leaves": 14, "active_leaves_train": 14}),
            _fake_run(tmp_path, "cart", 0, {"max_depth": 6}, {"n_leaves": 30, "active_leaves_train": 30})]
    table = tables_nongreedy.nongreedy_fig3(tables.load_runs(dirs))
    assert list(table.columns[:6]) == ["dataset", "method", "nu", "depth", "active_leaves", "n_leaves"]
    assert len(table) == 6
    row = table[(table["nu"] == 10) & (table["depth"] == 6)].iloc[0]
    assert (row["active_leaves"], row["n_leaves"]) == (40, 64)  # training leaves, not the test-set count
    assert table[table["method"] == "cart"]["nu"].isna().all()
    fig = ng_plots.active_leaves_vs_depth(table, None, "default")
    lines = fig.axes[0].get_lines()
    assert [line.get_label() for line in lines] == ["non-greedy, nu=0.1", "non-greedy, nu=10", "axis-aligned leaves"]
    assert lines[-1].get_linestyle() == ":" and list(lines[-1].get_ydata()) == [14, 30]


def test_reports_and_captions_name_the_paper_figures():
    assert table_of("nongreedy_fig3_nu") == "nongreedy_fig3"
    assert table_of("nongreedy_fig4_runtime") == "nongreedy_fig4_runtime"
    assert not FIGURES["nongreedy_fig3_nu"].per_dataset
    for name, item in (("nongreedy_fig3", "Fig. 3"), ("nongreedy_fig3_nu", "Fig. 3"),
                       ("nongreedy_fig4_runtime", "Fig. 4")):
        assert caption(name).startswith(f"Reproduces **{item}** of the non-greedy trees paper")


@pytest.mark.parametrize("profile", ["default", "paper"])
def test_both_profiles_run_the_three_figures(profile):
    config = load_config(Path(__file__).resolve().parents[1] / "config.yaml", overrides={"profile": profile})
    experiments = config["profiles"][profile]["experiments"]
    fig2 = experiments["nongreedy_fig2"]["methods"]["nongreedy_tree"]["grid"]
    assert "nu" in fig2
    if profile == "paper":
        assert len(fig2["nu"]) >= 2 and len(fig2["learning_rate"]) >= 2  # both chosen on validation per depth
        # one rule for every data set and experiment: beyond_optimal's non-greedy trees use Fig. 2's grid, epoch
        # budget and stop rule
        ng_fig2 = experiments["nongreedy_fig2"]["methods"]["nongreedy_tree"]
        ng_optimal = experiments["beyond_optimal"]["methods"]["nongreedy_tree"]
        assert ng_optimal["grid"] == ng_fig2["grid"] and ng_optimal["params"] == ng_fig2["params"]
        assert experiments["nongreedy_fig4"]["datasets"] == ["connect4"]
    assert "nongreedy_fig3_nu" in experiments["nongreedy_fig3"]["reports"]
    assert "cart" in experiments["nongreedy_fig3"]["methods"]
    assert "nongreedy_sgd_timing" in experiments["nongreedy_fig4"]["methods"]


def test_nongreedy_run_records_where_the_gradients_went_per_depth(tmp_path, wine_split):
    """metrics.json of a non-greedy run has ``per_depth`` (one entry per depth of the tree for each diagnostic)
    and the start's and the result's training error under ``tree``."""
    path, split = wine_split
    out = tmp_path / "run"
    params = {"max_depth": 3, "nu": 10.0, "learning_rate": 0.1, "max_epochs": 5}
    run(out, dataset="wine", method="nongreedy_tree", params=params, seed=0, split_path=path)
    saved = json.loads((out / "metrics.json").read_text())
    per_depth = saved["per_depth"]
    assert set(per_depth) == {"depth_row_grads", "depth_rows_with_grads", "depth_rel_change", "depth_rerouted"}
    assert all(len(v) == 3 for v in per_depth.values())
    assert sum(per_depth["depth_row_grads"]) > 0
    assert sum(per_depth["depth_rerouted"]) <= split.X_train.shape[0]
    assert saved["tree"]["sgd_epochs"] == 5
    assert 0 <= saved["tree"]["start_train_error"] <= 1
