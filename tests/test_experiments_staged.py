"""Staged sweeps: one fit scored at every size must give what separate fits (or truncated models) give."""

import copy
import json
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.datasets import load_diabetes, load_wine
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor, RandomForestClassifier

from treeopt.experiments.plan.build import build_plan, staged_fits
from treeopt.experiments.plan.config import ConfigError, validate_config
from treeopt.experiments.report.tables import load_runs
from treeopt.experiments.report.tables_co2 import co2_table1
from treeopt.experiments.report.tables_rgf import size_curve
from treeopt.experiments.run import runner
from treeopt.experiments.run.metrics import task_metrics
from treeopt.experiments.run.staged import staged_scores
from treeopt.forest import BaggedTreesClassifier


def wine_parts():
    X, y = load_wine(return_X_y=True)
    order = np.random.default_rng(1).permutation(len(y))
    X, y = X[order], y[order]
    return {"train": (X[:100], y[:100]), "val": (X[100:140], y[100:140]), "test": (X[140:], y[140:])}


def truncated(forest, m):
    small = copy.copy(forest)
    small.estimators_ = forest.estimators_[:m]
    small.n_estimators = m
    return small


def test_random_forest_prefixes_score_like_the_truncated_forests():
    parts = wine_parts()
    forest = RandomForestClassifier(n_estimators=20, max_features=2, random_state=0).fit(*parts["train"])
    stages = staged_scores(forest, "classification", "n_estimators", [1, 3, 7, 20], parts)
    assert [s["n_estimators"] for s in stages] == [1, 3, 7, 20]
    accuracies = set()
    for stage in stages:
        small = truncated(forest, stage["n_estimators"])
        for part, (X, y) in parts.items():
            assert stage[part] == task_metrics("classification", y, small.predict(X))
        assert stage["tree"]["n_trees"] == stage["n_estimators"]
        assert stage["tree"]["n_leaves_total"] == sum(t.tree_.n_leaves for t in small.estimators_)
        accuracies.add(stage["test"]["accuracy"])
    assert len(accuracies) > 1  # the sizes really differ (else the comparison above proves little)


def test_gradient_boosting_stages_equal_separate_fits_with_fewer_iterations():
    X, y = load_diabetes(return_X_y=True)
    parts = {"train": (X[:300], y[:300]), "val": (X[:0], y[:0]), "test": (X[300:], y[300:])}
    kw = dict(max_leaf_nodes=4, learning_rate=0.1, random_state=0)
    full = GradientBoostingRegressor(n_estimators=30, **kw).fit(*parts["train"])
    stages = staged_scores(full, "regression", "n_estimators", [5, 30], parts)
    for stage in stages:
        alone = GradientBoostingRegressor(n_estimators=stage["n_estimators"], **kw).fit(*parts["train"])
        assert stage["test"]["rmse"] == pytest.approx(task_metrics("regression", parts["test"][1],
                                                                   alone.predict(parts["test"][0]))["rmse"])
        assert stage["val"] == {}
    assert stages[0]["test"]["rmse"] != stages[1]["test"]["rmse"]


def test_multiclass_boosting_counts_every_class_tree_of_a_stage():
    parts = wine_parts()
    model = GradientBoostingClassifier(n_estimators=6, max_leaf_nodes=3, random_state=0).fit(*parts["train"])
    stage, = staged_scores(model, "classification", "n_estimators", [4], parts)
    assert stage["tree"]["n_trees"] == 4 * 3  # one tree per class per iteration
    X, y = parts["test"]
    expected = list(model.staged_predict(X))[3]
    assert stage["test"] == task_metrics("classification", y, expected)


def test_bagged_forests_are_given_the_sizes_and_match_predict_with_n_trees():
    parts = wine_parts()
    from treeopt.greedy import AxisAlignedTreeClassifier
    forest = BaggedTreesClassifier(AxisAlignedTreeClassifier(max_features=3), n_estimators=9,
                                   random_state=0).fit(*parts["train"])
    stages = staged_scores(forest, "classification", "n_estimators", [2, 9], parts)
    for stage in stages:
        X, y = parts["test"]
        assert stage["test"] == task_metrics("classification", y, forest.predict(X, n_trees=stage["n_estimators"]))


class LeafStaged:
    """A stand-in for RGF: stages every 100 leaves, declared through stage_sizes_."""

    classes_ = np.array([0, 1])
    stage_sizes_ = {"max_leaf_nodes": [100, 200, 300], "n_leaves": [100, 200, 300], "n_trees": [1, 2, 2]}

    def staged_predict_proba(self, X):
        for k in range(3):
            p = np.zeros((X.shape[0], 2))
            p[: (k + 1), 1] = 1  # stage k puts class 1 on the first k+1 points
            p[(k + 1):, 0] = 1
            yield p


def test_declared_stage_sizes_pick_the_last_stage_not_above_each_value():
    X, y = np.zeros((4, 1)), np.array([1, 1, 0, 0])
    parts = {"train": (X, y), "val": (X[:0], y[:0]), "test": (X, y)}
    stages = staged_scores(LeafStaged(), "classification", "max_leaf_nodes", [150, 300, 1000], parts)
    # 150 -> the 100-leaf stage; 1000 -> the last (300)
    assert [(s["max_leaf_nodes"], s["stage_value"]) for s in stages] == [(150, 100), (300, 300), (1000, 300)]
    assert [s["test"]["accuracy"] for s in stages] == [75.0, 75.0, 75.0]
    assert stages[1]["tree"] == {"n_trees": 2, "n_leaves_total": 300}
    assert [s["train"]["error"] for s in stages] == [25.0, 25.0, 25.0]
    # a value below every stage (50 leaves; n_estimators 0) has nothing to be scored at: an error, not a row
    # that silently goes missing from the table
    with pytest.raises(ValueError, match="max_leaf_nodes=50 is below the smallest stage"):
        staged_scores(LeafStaged(), "classification", "max_leaf_nodes", [50, 150], parts)


def test_fit_sizes_group_the_sweep_values_and_bad_entries_are_errors():
    sweep = {"n_estimators": [1, 3, 10, 30, 100, 1000], "max_depth": [2]}
    assert staged_fits({"n_estimators": "all"}, sweep) == {"n_estimators": {1000: (1, 3, 10, 30, 100, 1000)}}
    assert staged_fits({"n_estimators": [30, 1000]}, sweep) == {"n_estimators": {30: (1, 3, 10, 30),
                                                                                 1000: (100, 1000)}}
    with pytest.raises(ConfigError, match="do not reach the largest sweep value 1000"):
        staged_fits({"n_estimators": [30]}, sweep)
    with pytest.raises(ConfigError, match="not a sweep parameter"):
        staged_fits({"n_trees": "all"}, sweep)


def staged_config(**experiment):
    exp = {"reports": ["co2_table1"], "datasets": ["wine"], "sweep": {"n_estimators": [1, 3, 10, 30]},
           "select_at": {"n_estimators": 10}, "staged": {"n_estimators": "all"},
           "methods": {"rf": {"grid": {"max_features": ["p^0.5", "p^0.9"]}}}, **experiment}
    return {"profile": "p", "data": {"processed_dir": "proc"}, "datasets": {"wine": {"task": "classification"}},
            "profiles": {"p": {"seeds": [0], "experiments": {"forest": exp}}}}


def test_a_staged_plan_has_one_final_run_per_fit_size():
    plan = build_plan(staged_config())
    final, = plan.finals.values()
    assert final.dir.startswith("results/runs/wine/rf/final-max_features-best_n_estimators-staged30__")
    assert dict(final.point) == {"n_estimators": 30} and final.stages == (("n_estimators", (1, 3, 10, 30)),)
    assert dict(final.selection.at) == {"n_estimators": 10}  # selection unchanged by staging
    plan = build_plan(staged_config(staged={"n_estimators": [3, 30]}))
    assert sorted(d.rpartition("__")[0] for d in plan.finals) == [
        "results/runs/wine/rf/final-max_features-best_n_estimators-staged3",
        "results/runs/wine/rf/final-max_features-best_n_estimators-staged30"]


def test_the_config_check_names_a_bad_staged_entry():
    config = staged_config(staged={"n_estimators": [3]})
    config["profiles"]["p"]["experiments"]["forest"]["methods"] = {"cart": None}
    config["profiles"]["p"]["experiments"]["forest"].pop("select_at")
    with pytest.raises(ConfigError, match=r"forest\.staged: .*do not reach the largest sweep value 30"):
        validate_config(config)


def test_a_staged_run_makes_the_same_table_rows_as_separate_runs(tmp_path, monkeypatch):
    parts = wine_parts()
    split = SimpleNamespace(X_train=parts["train"][0], y_train=parts["train"][1], X_val=parts["val"][0],
                            y_val=parts["val"][1], X_test=parts["test"][0], y_test=parts["test"][1],
                            task="classification")
    path = tmp_path / "split0.npz"
    np.savez(path, X_train=split.X_train)
    monkeypatch.setattr(runner, "_load_split", lambda p: split)
    common = dict(dataset="wine", method="rf", seed=0, split_path=path, fit_on="trainval")
    staged_dir = tmp_path / "staged"
    result = runner.run(staged_dir, params={"n_estimators": 12, "max_features": 3}, stages={"n_estimators": [2, 12]},
                        provenance={"experiment": "e", "sweep": {"n_estimators": 12}}, **common)
    assert [s["n_estimators"] for s in result["stages"]] == [2, 12]
    separate = []
    for m in (2, 12):
        separate.append(tmp_path / f"m{m}")
        runner.run(separate[-1], params={"n_estimators": m, "max_features": 3},
                   provenance={"experiment": "e", "sweep": {"n_estimators": m}}, **common)
    ours, theirs = co2_table1(load_runs([staged_dir])), co2_table1(load_runs(separate))
    assert list(ours["n_trees"]) == [2, 12]
    # scikit-learn seeds tree i the same way whatever the forest size, so a prefix is the smaller forest
    assert list(ours["test_error"]) == pytest.approx(list(theirs["test_error"]))
    rows = load_runs([staged_dir])
    assert np.isnan(rows["fit_seconds"].iloc[0]) and rows["fit_seconds"].iloc[1] == result["fit_seconds"]
    curve = size_curve(rows)
    assert list(curve["n_leaves"]) == [s["tree"]["n_leaves_total"] for s in result["stages"]]
    saved = json.loads((staged_dir / "metrics.json").read_text())
    assert saved["stages"] == json.loads(json.dumps(result["stages"]))


def test_split_counts_read_boosting_members_held_in_an_array():
    from treeopt.experiments.run.metrics import fitted_trees, split_counts
    parts = wine_parts()
    model = GradientBoostingClassifier(n_estimators=3, max_leaf_nodes=3, random_state=0).fit(*parts["train"])
    counts = split_counts(model, fitted_trees(model))  # estimators_ is a 3 x 3 array of regression trees
    assert counts == {"n_oblique_splits": 0.0, "n_axis_fallbacks": 0.0}
