"""Report tables aggregate final runs over seeds; figures draw one line per method and say what made them."""

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from treeopt.experiments.report import tables, tables_beyond, tables_co2, tables_nongreedy, tables_rgf
from treeopt.experiments.plan.paper_values import co2_table1, paper_key
from treeopt.plots import curves
from treeopt.experiments.report.figures import render_figure


def fake_run(root, dataset, method, seed, params, sweep, test, train=None, tree=None):
    d = root / f"{dataset}-{method}-{seed}-{len(list(root.iterdir()))}"
    d.mkdir()
    metrics = {"dataset": dataset, "method": method, "params": params, "seed": seed, "n_train": 10, "n_val": 0,
               "n_test": 5, "train": train or {}, "val": {}, "test": test, "fit_seconds": 0.1,
               "predict_seconds": 0.01, "tree": tree or {"n_leaves": 4, "n_trees": 1}, "versions": {},
               "git_commit": None}
    (d / "metrics.json").write_text(json.dumps(metrics))
    (d / "params.yaml").write_text(yaml.safe_dump({"experiment": "e", "sweep": sweep}))
    return d


def test_depth_table_is_the_mean_over_seeds(tmp_path):
    dirs = [fake_run(tmp_path, "wine", "cart", seed, {"max_depth": 4, "min_samples_leaf": 1}, {"max_depth": 4},
                     {"accuracy": acc}, {"accuracy": 100.0})
            for seed, acc in ((0, 90.0), (1, 94.0))]
    dirs.append(fake_run(tmp_path, "wine", "co2_tree", 0, {"max_depth": 4}, {"max_depth": 4},
                         {"accuracy": 97.0}, {"accuracy": 99.0}))
    table = tables_nongreedy.nongreedy_fig2(tables.load_runs(dirs))
    assert list(table.columns[:5]) == ["dataset", "method", "depth", "train_accuracy", "test_accuracy"]
    cart = table[table["method"] == "cart"].iloc[0]
    assert (cart["depth"], cart["test_accuracy"], cart["n_seeds"]) == (4, 92.0, 2)
    assert cart["test_accuracy_std"] == pytest.approx(np.std([90.0, 94.0], ddof=1))
    assert len(table) == 2  # a new method is one more row, nothing else to change


def test_forest_table_puts_the_paper_number_beside_ours(tmp_path):
    dirs = [fake_run(tmp_path, ds, "rf", 0, {"n_estimators": n}, {"n_estimators": n}, {"error": e},
                     tree={"n_leaves": 50.0, "n_trees": n})
            for ds, n, e in (("letter", 10, 6.9), ("letter", 30, 4.8), ("digits", 10, 7.0))]
    table = tables_co2.co2_table1(tables.load_runs(dirs))
    assert list(table.columns[:5]) == ["dataset", "method", "n_trees", "test_error", "paper_value"]
    by_key = table.set_index(["dataset", "n_trees"])
    assert by_key.loc[("letter", 10), "paper_value"] == 6.6
    assert by_key.loc[("letter", 30), "paper_value"] == 4.7
    assert np.isnan(by_key.loc[("digits", 10), "paper_value"])


def test_paper_names_ignore_spelling_but_not_stand_ins():
    assert paper_key("Connect-4") == paper_key("connect4") == "connect4"
    assert co2_table1("connect4", "co2_forest", 1000) == 14.7
    assert co2_table1("fashion_mnist", "rf", 10) is None
    assert co2_table1("connect4", "oc1_forest", 10) is None  # N/A in the paper


def test_size_curve_counts_all_leaves_and_keeps_configurations_apart(tmp_path):
    dirs = [fake_run(tmp_path, "synth", "gbdt", 0, {}, {"max_leaf_nodes": leaves, "n_estimators": n},
                     {"rmse": 1.0 / n}, tree={"n_leaves": float(leaves), "n_trees": n})
            for leaves in (4, 16) for n in (10, 30)]
    table = tables_rgf.size_curve(tables.load_runs(dirs))
    assert set(table["variant"]) == {"max_leaf_nodes=4", "max_leaf_nodes=16"}
    assert sorted(table["n_leaves"]) == [40, 120, 160, 480]
    assert "test_error" not in table  # regression only: no empty classification column


def test_figures_stamp_provenance_and_draw_a_line_per_method(tmp_path):
    table = pd.DataFrame({"dataset": "letter", "method": ["rf", "rf", "co2_forest", "co2_forest"],
                          "n_trees": [10, 30, 10, 30], "test_error": [7.0, 5.0, 3.5, 2.5],
                          "paper_value": [6.6, 4.7, 3.2, 2.3], "test_error_std": np.nan, "n_seeds": 2})
    fig = curves.error_vs_trees(table, "letter", "paper")
    stamp = " ".join(t.get_text() for t in fig.texts)
    assert "letter" in stamp and "profile: paper" in stamp and "seeds: 2" in stamp
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert set(labels) == {"Random Forest", "CO2 Forest", "Random Forest (paper)", "CO2 Forest (paper)"}
    csv = tmp_path / "co2_table1.csv"
    table.to_csv(csv, index=False)
    render_figure("co2_fig2", csv, tmp_path / "figures", datasets=["letter"], profile="paper")
    for ext in ("png", "pdf"):
        assert (tmp_path / "figures" / f"co2_fig2_letter.{ext}").stat().st_size > 1000


def test_best_variants_keeps_the_best_peaks():
    rows = pd.DataFrame({"method": "gbdt", "variant": ["a", "a", "b", "b", "c", "c"],
                         "test_rmse": [1.0, 0.5, 0.9, 0.8, 0.3, 2.0]})
    kept = curves.best_variants(rows, "test_rmse", k=2)
    assert set(kept["variant"]) == {"a", "c"}


def fake_val_run(root, method, seed, params, train_error, val_error):
    d = fake_run(root, "digits", method, seed, params, params, {"error": 0.0}, {"error": train_error})
    metrics = json.loads((d / "metrics.json").read_text())
    metrics["val"] = {"error": val_error}
    (d / "metrics.json").write_text(json.dumps(metrics))
    return d


def test_co2_fig1_keeps_the_baseline_without_nu_and_separates_nu(tmp_path):
    dirs = [fake_val_run(tmp_path, "cart", 0, {"max_depth": 4}, 10.0, 20.0),
            fake_val_run(tmp_path, "co2_tree", 0, {"max_depth": 4, "nu": 1}, 8.0, 15.0),
            fake_val_run(tmp_path, "co2_tree", 1, {"max_depth": 4, "nu": 1}, 6.0, 17.0),
            fake_val_run(tmp_path, "co2_tree", 0, {"max_depth": 4, "nu": 10}, 5.0, 12.0)]
    table = tables_co2.co2_fig1(tables.load_runs(dirs))
    assert list(table.columns[:6]) == ["dataset", "method", "nu", "depth", "train_error", "val_error"]
    assert len(table) == 3
    base = table[table["method"] == "cart"].iloc[0]
    assert np.isnan(base["nu"]) and base["val_error"] == 20.0
    nu1 = table[table["nu"] == 1].iloc[0]
    assert (nu1["train_error"], nu1["val_error"], nu1["n_seeds"]) == (7.0, 16.0, 2)
    fig = curves.error_vs_depth_by_nu(table, "digits", "default")
    labels = [line.get_label() for line in fig.axes[1].get_lines()]
    assert labels == ["axis-aligned", "CO2, nu=1", "CO2, nu=10"]
    assert fig.axes[1].get_lines()[0].get_linestyle() == "--"


def test_beyond_optimal_table_separates_the_start_and_counts_proofs(tmp_path):
    """TAO from CART and TAO from the optimal tree are two rows (``init``); ``proven`` is the fraction of seeds
    whose optimal tree was proven; the figure draws every row and says which points are unproven."""
    dirs = []
    for seed, proven in ((0, True), (1, False)):
        gap = 0.0 if proven else None
        dirs.append(fake_run(tmp_path, "satimage", "optimal_axis", seed, {"max_depth": 4}, {"max_depth": 4},
                             {"accuracy": 84.0}, {"accuracy": 86.0},
                             tree={"n_leaves": 16, "proven_optimal": proven, "optimality_gap": gap}))
        dirs.append(fake_run(tmp_path, "satimage", "tao_axis", seed, {"max_depth": 4}, {"max_depth": 4},
                             {"accuracy": 81.0}, {"accuracy": 82.0}, tree={"n_leaves": 16, "init_train_error": 20.0}))
        dirs.append(fake_run(tmp_path, "satimage", "tao_axis", seed, {"max_depth": 4, "init": "optimal"},
                             {"max_depth": 4}, {"accuracy": 84.5}, {"accuracy": 86.5},
                             tree={"n_leaves": 16, "init_train_error": 14.0, "init_proven_optimal": proven}))
        dirs.append(fake_run(tmp_path, "satimage", "cart", seed, {"max_depth": 4}, {"max_depth": 4},
                             {"accuracy": 80.0}, {"accuracy": 80.0 + seed}))
    table = tables_beyond.beyond_optimal(tables.load_runs(dirs))
    assert list(table.columns[:7]) == ["dataset", "method", "init", "depth", "train_accuracy", "test_accuracy",
                                       "fit_seconds"]
    rows = table.set_index(["method", "init"])
    assert rows.loc[("optimal_axis", ""), "proven"] == 0.5
    assert rows.loc[("optimal_axis", ""), "gap"] == 0.0  # the mean over the seeds where it is known
    assert rows.loc[("tao_axis", "optimal"), "proven"] == 0.5
    assert rows.loc[("tao_axis", "optimal"), "init_train_accuracy"] == 86.0
    assert rows.loc[("tao_axis", "cart"), "init_train_accuracy"] == 80.0
    assert np.isnan(rows.loc[("cart", ""), "proven"]) and rows.loc[("cart", ""), "train_accuracy"] == 80.5
    csv = tmp_path / "beyond_optimal.csv"
    table.to_csv(csv, index=False)
    stems = render_figure("beyond_optimal", csv, tmp_path / "figures", datasets=["satimage"], profile="paper")
    assert (tmp_path / "figures" / "beyond_optimal_satimage.png").exists() and len(stems) == 1


def test_every_registered_builder_and_renderer_can_be_imported():
    """The registry names its tables' builders and figures' renderers as "module:function" strings, imported only
    when a report is made: each must name a function that exists."""
    from treeopt.experiments.plan.reports import FIGURES, TABLES

    assert all(callable(spec.builder()) for spec in TABLES.values())
    assert all(callable(spec.renderer()) for spec in FIGURES.values())


def _final_with_selection(root, seed, chosen_nu, candidates_nu, inherited=None):
    """A final run under ``root/results/runs`` whose selection file (under ``root/results/selection``) chose
    ``nu = chosen_nu`` among ``candidates_nu`` at learning rate 0.1 (shared by every candidate)."""
    run = root / "results/runs/wine/co2_tree/final-nu-best__0123456789" / f"seed{seed}"
    run.mkdir(parents=True)
    selection = f"results/selection/wine/co2_tree/nu-best__0123456789/seed{seed}.yaml"
    (root / selection).parent.mkdir(parents=True, exist_ok=True)
    candidates = [{"params": {"nu": nu, "learning_rate": 0.1, "max_depth": 4}, "val": 90.0} for nu in candidates_nu]
    (root / selection).write_text(yaml.safe_dump({"chosen": {"nu": chosen_nu}, "candidates": candidates}))
    params = {"nu": chosen_nu, "learning_rate": 0.1, "max_depth": 4, "init_scale": 2}
    metrics = {"dataset": "wine", "method": "co2_tree", "params": params, "seed": seed, "n_train": 10, "n_val": 0,
               "n_test": 5, "train": {"accuracy": 99.0}, "val": {}, "test": {"accuracy": 95.0}, "fit_seconds": 0.1,
               "predict_seconds": 0.01, "tree": {"n_leaves": 4, "n_trees": 1}}
    (run / "metrics.json").write_text(json.dumps(metrics))
    setup = {"experiment": "e", "sweep": {"max_depth": 4}, "selection": selection, "inherited": inherited or {}}
    (run / "params.yaml").write_text(yaml.safe_dump(setup))
    return run


def test_a_row_names_the_hyper_parameters_validation_chose(tmp_path):
    """Issue #38: each row carries what validation chose for its runs (the parameters the selection's candidates
    vary, and the inherited ones), written once when the seeds agree and per seed (in seed order) when not;
    parameters every candidate shares, and runs without a selection, add nothing."""
    inherited = {"init_scale": "results/selection/wine/nongreedy_tree/x/seed0.yaml"}
    dirs = [_final_with_selection(tmp_path, 1, 10.0, [1.0, 10.0]),
            _final_with_selection(tmp_path, 0, 1.0, [1.0, 10.0], inherited)]
    dirs.append(fake_run(tmp_path, "wine", "cart", 0, {"max_depth": 4}, {"max_depth": 4}, {"accuracy": 90.0}))
    table = tables_nongreedy.nongreedy_fig2(tables.load_runs(dirs))
    chosen = dict(zip(table["method"], table["chosen_params"]))
    assert chosen["co2_tree"] == "init_scale=2|None; nu=1|10"
    assert chosen["cart"] == ""
    same = tables.chosen_text([{"nu": 4.0, "learning_rate": 0.03}, {"nu": 4.0, "learning_rate": 0.03}])
    assert same == "learning_rate=0.03; nu=4"


def test_committed_records_give_the_chosen_hyper_parameters_of_their_selections():
    """The records committed beside the paper tables (results/paper/runs, results/paper/selection) say what was
    chosen: for the non-greedy trees of decade_fixed_height on Letter, every value the column names is the one the
    seed's selection file chose."""
    from pathlib import Path

    paper = Path(__file__).resolve().parents[1] / "results/paper"
    runs = sorted(p.parent for p in (paper / "runs/letter/nongreedy_tree").glob("*/seed*/params.yaml"))
    assert len(runs) == 3
    for run in runs:
        setup = yaml.safe_load((run / "params.yaml").read_text())
        selection = yaml.safe_load((paper / Path(setup["selection"]).relative_to("results")).read_text())
        tuned = tables.tuned_params(setup, run, json.loads((run / "metrics.json").read_text())["params"])
        assert {"nu", "learning_rate", "init_params.nu"} <= set(tuned)
        assert all(selection["chosen"][key] == value for key, value in tuned.items())
