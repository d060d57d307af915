"""Model selection picks the best validation candidate; plans wire candidates, selections and finals."""

import json
import math

import pytest
import yaml

from treeopt.experiments.plan import build_plan
from treeopt.experiments.selection import final_params, select, select_runs


def write_run(root, name, params, val):
    d = root / name
    d.mkdir(parents=True)
    (d / "metrics.json").write_text(json.dumps({"params": params, "val": val, "train": {}, "fit_seconds": 0.1}))
    return d


def test_selects_highest_validation_accuracy(tmp_path):
    runs = [write_run(tmp_path, f"r{i}", {"min_samples_leaf": m}, {"accuracy": a, "error": 100 - a})
            for i, (m, a) in enumerate([(1, 91.0), (5, 94.5), (20, 93.0)])]
    out = select_runs(runs, "accuracy", tmp_path / "sel" / "seed0.yaml", info={"dataset": "wine"})
    assert out["chosen"] == {"min_samples_leaf": 5} and out["chosen_run"] == str(runs[1])
    saved = yaml.safe_load((tmp_path / "sel" / "seed0.yaml").read_text())
    assert saved["chosen"] == {"min_samples_leaf": 5}
    assert [c["val"]["accuracy"] for c in saved["candidates"]] == [91.0, 94.5, 93.0]
    assert saved["dataset"] == "wine"


def test_error_and_rmse_are_minimised_and_ties_go_to_the_first():
    candidates = [{"val": {"error": 3.0, "rmse": 2.0}}, {"val": {"error": 2.0, "rmse": 0.5}},
                  {"val": {"error": 2.0, "rmse": 0.5}}]
    assert select(candidates, "error") == (1, False)
    assert select(candidates, "rmse") == (1, False)
    assert select([{"val": {"accuracy": 90.0}}, {"val": {"accuracy": 90.0}}], "accuracy") == (0, True)


def test_missing_scores_never_win():
    candidates = [{"val": {}}, {"val": {"accuracy": math.nan}}, {"val": {"accuracy": 50.0}}]
    assert select(candidates, "accuracy")[0] == 2
    with pytest.raises(ValueError, match="no candidate has a validation score"):
        select([{"val": {}}], "accuracy")
    with pytest.raises(ValueError, match="unknown selection metric"):
        select(candidates, "auc")


def test_final_params_put_the_sweep_value_over_the_chosen_one():
    selection = {"chosen": {"max_features": 3, "n_estimators": 30}}
    assert final_params(selection, {"n_estimators": 300}) == {"max_features": 3, "n_estimators": 300}


def plan_config(**experiment):
    exp = {"reports": ["co2_table1", "co2_fig2"], "datasets": ["wine", "diabetes"],
           "methods": {"rf": {"grid": {"max_features": ["p^0.5", "p^0.9"]}, "params": {"max_depth": 4}},
                       "gbdt": {"grid": {"max_leaf_nodes": [4]}}}, **experiment}
    return {"profile": "p", "data": {"processed_dir": "proc"},
            "datasets": {"wine": {"task": "classification"}, "diabetes": {"task": "regression"}},
            "profiles": {"p": {"seeds": [0, 1], "experiments": {"forest": exp}}}}


def test_plan_selects_once_at_select_at_and_reuses_the_choice():
    plan = build_plan(plan_config(sweep={"n_estimators": [1, 10, 100]}, select_at={"n_estimators": 10}))
    rf_wine = [f for f in plan.finals.values() if f.method == "rf"]
    assert {f.dataset for f in rf_wine} == {"wine"}  # rf is a classifier: never run on the regression set
    assert len(rf_wine) == 3 * 2  # three sweep values x two seeds
    for seed in (0, 1):
        selections = {f.selection for f in rf_wine if f.seed == seed}
        assert len(selections) == 1
        sel, = selections
        assert dict(sel.at) == {"n_estimators": 10}
        assert [dict(c.params) for c in sel.candidates] == [
            {"max_depth": 4, "max_features": "p^0.5", "n_estimators": 10},
            {"max_depth": 4, "max_features": "p^0.9", "n_estimators": 10}]
        assert all(c.seed == seed for c in sel.candidates)
    assert plan.split_path("wine", 1) == "proc/wine/split1.npz"
    assert set(plan.table_runs) == {"co2_table1"}
    assert plan.figure_datasets == {"co2_fig2": ["wine", "diabetes"]}


def test_plan_without_select_at_selects_at_every_sweep_value_and_single_grids_need_no_selection():
    plan = build_plan(plan_config(sweep={"n_estimators": [1, 10]}))
    rf = [s for s in plan.selections.values() if s.method == "rf"]
    assert len(rf) == 2 * 2 and {dict(s.at)["n_estimators"] for s in rf} == {1, 10}
    assert not [s for s in plan.selections.values() if s.method == "gbdt"]
    gbdt = [f for f in plan.finals.values() if f.method == "gbdt"]
    assert len(gbdt) == 2 * 2 and all(f.dataset == "diabetes" and f.selection is None for f in gbdt)
    assert {dict(f.params)["n_estimators"] for f in gbdt} == {1, 10}
    assert all(dict(f.params)["max_leaf_nodes"] == 4 for f in gbdt)
    assert len(plan.runs) == 2 * 2 * 2  # rf: 2 grid points x 2 sweep values x 2 seeds
    final_dirs = set(plan.finals)
    assert "results/runs/wine/rf/final-forest-n_estimators=10/seed1" in final_dirs
    assert not final_dirs & set(plan.runs)


def test_experiment_seeds_replace_the_profile_seeds():
    plan = build_plan(plan_config(seeds=[5, 6, 7]))
    assert {f.seed for f in plan.finals.values()} == {5, 6, 7}
