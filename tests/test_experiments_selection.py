"""Model selection picks the best validation candidate; plans wire candidates, selections and finals."""

import copy
import json
import math

import pytest
import yaml

from treeopt.experiments.plan.build import build_plan
from treeopt.experiments.plan.config import ConfigError
from treeopt.experiments.plan.inherit import inherit_problems
from treeopt.experiments.plan.params import Inherited, plain_params
from treeopt.experiments.run.selection import final_params, select, select_runs


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
    one, = plan.find(experiment="forest", method="rf", dataset="wine", seed=1, n_estimators=10)
    assert one in final_dirs and one.startswith("results/runs/wine/rf/final-") and one.endswith("/seed1")
    assert "_n_estimators-10__" in one and "max_features-best" in one  # readable: sweep value, chosen parameter
    assert not final_dirs & set(plan.runs)


def test_experiment_seeds_replace_the_profile_seeds():
    plan = build_plan(plan_config(seeds=[5, 6, 7]))
    assert {f.seed for f in plan.finals.values()} == {5, 6, 7}


Q_FROM_RF = {"max_features": {"method": "rf", "experiment": "forest"}}


def inherit_config(**forest):
    """Experiment `forest` chooses rf's max_features at 10 trees; `oblique` takes it from there."""
    config = plan_config(sweep={"n_estimators": [1, 10]}, select_at={"n_estimators": 10}, **forest)
    config["datasets"]["iris"] = {"task": "classification"}
    config["profiles"]["p"]["experiments"]["oblique"] = {
        "reports": ["co2_table1"], "datasets": ["wine"], "sweep": {"n_estimators": [1, 3]},
        "select_at": {"n_estimators": 3},
        "methods": {"co2_forest": {"grid": {"nu": [1, 10]}, "inherit": copy.deepcopy(Q_FROM_RF)},
                    "oc1_forest": {"params": {"n_restarts": 2}, "inherit": copy.deepcopy(Q_FROM_RF)}}}
    return config


def test_inheriting_runs_get_the_referenced_selection_as_input_and_a_marker_slug():
    plan = build_plan(inherit_config())
    for seed in (0, 1):
        rf_selection, = plan.find("selection", experiment="forest", method="rf", dataset="wine", seed=seed)
        assert rf_selection in plan.selections
        co2 = sorted((r for r in plan.runs.values() if r.method == "co2_forest" and r.seed == seed),
                     key=lambda r: dict(r.params)["nu"])
        assert [r.dir.rpartition("__")[0] for r in co2] == [
            f"results/runs/wine/co2_forest/max_features-from-rf_n_estimators-3_nu-{nu}" for nu in (1, 10)]
        assert all(r.inherit == (("max_features", rf_selection),) for r in co2)
        key = plan.selections[rf_selection].key  # the marker names the selection it is read from
        assert all(dict(r.params)["max_features"] == Inherited("rf", key) for r in co2)
        finals = [f for f in plan.finals.values() if f.experiment == "oblique" and f.seed == seed]
        assert len(finals) == 2 * 2 and all(f.inherit == (("max_features", rf_selection),) for f in finals)
        # oc1_forest has a single grid point: no selection of its own, its final runs read rf's choice
        oc1 = [f for f in finals if f.method == "oc1_forest"]
        assert all(f.selection is None and plain_params(f.params)["max_features"] == f"from-rf-{key}" for f in oc1)
    # the referenced experiment itself is untouched
    assert not [r for r in plan.runs.values() if r.method == "rf" and r.inherit]


def test_a_value_the_referenced_method_does_not_choose_is_put_in_directly():
    config = inherit_config()
    config["profiles"]["p"]["experiments"]["forest"]["methods"]["rf"] = {
        "params": {"max_features": "p^0.5"}, "grid": {"max_depth": [2, 4]}}
    plan = build_plan(config)
    co2 = [r for r in plan.runs.values() if r.method == "co2_forest"]
    assert co2 and all(dict(r.params)["max_features"] == "p^0.5" and r.inherit == () for r in co2)
    assert all("max_features-p0.5" in r.slug for r in co2)
    # a single-point grid has no selection at all: its value is known from the config
    config["profiles"]["p"]["experiments"]["forest"]["methods"]["rf"] = {"grid": {"max_features": [7]}}
    plan = build_plan(config)
    assert {dict(f.params)["max_features"] for f in plan.finals.values() if f.method == "oc1_forest"} == {7}


def test_inherit_follows_a_chain_of_references_to_the_selection():
    config = inherit_config()
    config["profiles"]["p"]["experiments"]["oblique"]["methods"]["oc1_forest"]["inherit"] = {
        "max_features": {"method": "co2_forest", "experiment": "oblique"}}
    plan = build_plan(config)
    oc1 = [f for f in plan.finals.values() if f.method == "oc1_forest" and f.seed == 0]
    rf_selection, = plan.find("selection", experiment="forest", method="rf", seed=0)
    assert oc1 and all(f.inherit == (("max_features", rf_selection),) for f in oc1)
    # the marker names the selection at the end of the chain (rf's); the legacy text, the reference followed
    assert all(dict(f.params)["max_features"] == Inherited("rf", plan.selections[rf_selection].key) for f in oc1)
    assert all(dict(f.params)["max_features"].legacy == "from-co2_forest-oblique" for f in oc1)


def _co2_entry(config):
    return config["profiles"]["p"]["experiments"]["oblique"]["methods"]["co2_forest"]


@pytest.mark.parametrize("edit, expected", [
    (lambda c: _co2_entry(c)["inherit"]["max_features"].update(experiment="forrest"),
     "profile 'p' has no experiment 'forrest' (did you mean 'forest'?)"),
    (lambda c: _co2_entry(c)["inherit"]["max_features"].update(method="rff"),
     "experiment 'forest' has no method 'rff' (did you mean 'rf'?)"),
    (lambda c: c["profiles"]["p"]["experiments"]["oblique"].update(datasets=["iris"]),
     "'rf' in 'forest' does not run on data set 'iris' (not among its data sets: wine, diabetes)"),
    (lambda c: _co2_entry(c)["grid"].update(max_features=[1, 2]),
     "max_features is also set in the grid of 'co2_forest'"),
    (lambda c: _co2_entry(c).update(params={"max_features": 3}),
     "max_features is also set in the params of 'co2_forest'"),
    (lambda c: c["profiles"]["p"]["experiments"]["forest"].pop("select_at"),
     "experiment 'forest' has no select_at and chooses the parameters of 'rf' afresh at each of its 2 sweep values"),
    (lambda c: _co2_entry(c).update(inherit={"min_samples_leaf": {"method": "rf", "experiment": "forest"}}),
     "'rf' in 'forest' sets no min_samples_leaf"),
    (lambda c: c["profiles"]["p"]["experiments"]["oblique"].update(seeds=[5]),
     "experiment 'forest' does not run seed 5"),
    (lambda c: _co2_entry(c).update(inherit={"max_features": {"method": "co2_forest", "experiment": "oblique"}}),
     "go round in a circle"),
])
def test_a_bad_inherit_reference_names_experiment_method_and_data_set(edit, expected):
    config = inherit_config()
    edit(config)
    with pytest.raises(ConfigError) as info:
        build_plan(config)
    message = str(info.value)
    assert expected in message
    assert "experiment 'oblique', method 'co2_forest', data set " in message
    assert message in inherit_problems(config, "p")  # `check` and the workflow's config check say the same


def test_a_dotted_inherit_takes_the_choice_at_the_same_sweep_value_into_a_dict_parameter():
    """The non-greedy tree starts from the CO2 tree chosen at its own depth: `init_params.nu` reads co2_tree's
    chosen `nu` from the selection at the same max_depth, not one select_at for all depths."""
    config = plan_config(sweep={"max_depth": [2, 4]}, datasets=["wine"], methods={
        "co2_tree": {"grid": {"nu": [1, 10]}},
        "nongreedy_tree": {"grid": {"nu": [1, 10]},
                           "inherit": {"init_params.nu": {"method": "co2_tree", "experiment": "forest"}}}})
    assert inherit_problems(config, "p") == []
    plan = build_plan(config)
    for seed in (0, 1):
        for depth in (2, 4):
            co2, = plan.find("selection", method="co2_tree", seed=seed, max_depth=depth)
            assert co2 in plan.selections
            ng = [r for r in plan.runs.values()
                  if r.method == "nongreedy_tree" and r.seed == seed and dict(r.params)["max_depth"] == depth]
            assert len(ng) == 2 and all(r.inherit == (("init_params.nu", co2),) for r in ng)
            assert all(dict(r.params)["init_params.nu"] == Inherited("co2_tree", plan.selections[co2].key)
                       for r in ng)
            finals = [f for f in plan.finals.values() if f.method == "nongreedy_tree" and f.seed == seed
                      and dict(f.point)["max_depth"] == depth]
            assert len(finals) == 1 and finals[0].inherit == (("init_params.nu", co2),)
