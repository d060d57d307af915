"""One run folder: DESIGN.md metrics keys, consistent numbers, atomic writes, repeatable."""

import json

import numpy as np
import pytest
import yaml
from sklearn.tree import DecisionTreeClassifier

from treeopt.experiments.plan import methods
from treeopt.experiments.run import runner
from treeopt.experiments.run.runner import METRICS_KEYS, run
from treeopt.trees import load_trees

DESIGN_KEYS = {"dataset", "method", "params", "seed", "n_train", "n_val", "n_test", "train", "val", "test",
               "fit_seconds", "predict_seconds", "compile_seconds", "fit_compile_seconds", "tree", "versions",
               "git_commit"}
TREE_KEYS = {"depth", "n_internal", "n_leaves", "active_leaves", "nonzero_weights", "path_length_mean",
             "path_length_min", "path_length_max", "inference_ops", "n_trees", "n_leaves_total",
             "n_oblique_splits", "n_axis_fallbacks", "active_leaves_train"}


class ExplodingTree(DecisionTreeClassifier):
    def fit(self, X, y, sample_weight=None, check_input=True):
        raise RuntimeError("boom")


def test_metrics_json_has_exactly_the_design_keys(tmp_path, wine_split):
    path, split = wine_split
    out = tmp_path / "runs" / "wine" / "cart" / "max_depth=3" / "seed0"
    result = run(out, dataset="wine", method="cart", params={"max_depth": 3}, seed=0, split_path=path)
    saved = json.loads((out / "metrics.json").read_text())
    # plus fit_cpu_seconds, an optional key recorded for every fit made in one call (as this one): CPU time in the fit
    assert set(saved) == DESIGN_KEYS | {"fit_cpu_seconds"} and DESIGN_KEYS == set(METRICS_KEYS)
    assert 0 <= saved["fit_cpu_seconds"] < saved["fit_seconds"] + 1.0
    assert saved == json.loads(json.dumps(result))
    assert set(saved["tree"]) == TREE_KEYS
    assert {"treeopt", "numpy", "scikit-learn"} <= set(saved["versions"])
    assert (saved["n_train"], saved["n_val"], saved["n_test"]) == (100, 40, 38)
    assert saved["tree"]["n_oblique_splits"] == 0 and saved["tree"]["n_axis_fallbacks"] == 0  # CART
    assert saved["tree"]["depth"] <= 3 and saved["tree"]["n_trees"] == 1
    assert {p.name for p in out.iterdir()} == {"params.yaml", "metrics.json", "model.npz", "log.txt"}
    # the saved tree predicts what the run measured
    tree, = load_trees(out / "model.npz")
    test_acc = 100 * np.mean(tree.predict_proba(split.X_test).argmax(1) == split.y_test)
    assert test_acc == pytest.approx(saved["test"]["accuracy"])
    assert 100 - test_acc == pytest.approx(saved["test"]["error"])


def test_refit_on_train_and_validation(tmp_path, wine_split):
    path, _ = wine_split
    result = run(tmp_path / "r", dataset="wine", method="cart", params={"max_depth": 2}, seed=0,
                 split_path=path, fit_on="trainval")
    assert (result["n_train"], result["n_val"], result["val"]) == (140, 0, {})


def test_forest_stats_are_means_over_trees(tmp_path, wine_split):
    path, _ = wine_split
    result = run(tmp_path / "r", dataset="wine", method="rf", params={"n_estimators": 5, "max_depth": 2},
                 seed=0, split_path=path)
    assert result["tree"]["n_trees"] == 5
    assert 1 < result["tree"]["n_leaves"] <= 4
    assert not (tmp_path / "r" / "model.npz").exists()  # ensembles are not kept by default


def test_failed_fit_leaves_no_run_folder(tmp_path, wine_split, monkeypatch):
    path, _ = wine_split
    monkeypatch.setitem(methods.METHODS, "exploding", methods.Method("exploding", ExplodingTree, "classification"))
    out = tmp_path / "runs" / "seed0"
    with pytest.raises(RuntimeError, match="boom"):
        run(out, dataset="wine", method="exploding", params={}, seed=0, split_path=path)
    assert not out.exists()
    assert list((tmp_path / "runs").iterdir()) == []  # no temporary folder left either


def test_wrong_task_is_refused(tmp_path, wine_split):
    path, _ = wine_split
    with pytest.raises(ValueError, match="solves regression"):
        run(tmp_path / "r", dataset="wine", method="cart_reg", params={}, seed=0, split_path=path)
    assert not (tmp_path / "r").exists()


def test_params_yaml_repeats_the_run(tmp_path, wine_split):
    path, _ = wine_split
    first = run(tmp_path / "a", dataset="wine", method="rf", params={"n_estimators": 3, "max_features": "p^0.5"},
                seed=4, split_path=path)
    setup = yaml.safe_load((tmp_path / "a" / "params.yaml").read_text())
    assert setup["params"] == {"n_estimators": 3, "max_features": "p^0.5"} and setup["seed"] == 4
    again = runner.rerun(tmp_path / "a" / "params.yaml", tmp_path / "b")
    for key in ("train", "val", "test", "tree", "params", "n_train"):
        assert again[key] == first[key]


def test_make_estimator_resolves_powers_of_p_and_rejects_unknown_params():
    est = methods.make_estimator("rf", {"max_features": "p^0.5", "n_estimators": 2}, seed=3, n_features=64)
    assert est.max_features == 8 and est.random_state == 3 and est.criterion == "entropy"
    with pytest.raises(ValueError, match="no parameter.*'max_dept'"):
        methods.make_estimator("cart", {"max_dept": 3}, seed=0)
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        methods.make_estimator("nope", {}, seed=0)


def test_job_log_keeps_output_and_the_failure(tmp_path):
    from treeopt.experiments.infra.joblog import logged

    log = tmp_path / "logs" / "job.log"
    with pytest.raises(KeyError):
        with logged([str(log)]):
            print("loading split")
            raise KeyError("missing array")
    text = log.read_text()
    assert "loading split" in text and "KeyError: 'missing array'" in text


def write_selection(path, chosen):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"experiment": "forest", "method": "rf", "chosen": chosen}))
    return path


def test_inherited_parameter_is_read_from_the_selection_and_recorded(tmp_path, wine_split):
    path, _ = wine_split
    selection = write_selection(tmp_path / "selection" / "seed0.yaml", {"max_features": 2, "n_estimators": 30})
    out = tmp_path / "runs" / "max_features=from-rf-forest,n_estimators=3" / "seed0"
    result = run(out, dataset="wine", method="rf", params={"max_features": "from-rf-forest", "n_estimators": 3},
                 seed=1, split_path=path, inherit={"max_features": str(selection)})
    direct = run(tmp_path / "direct", dataset="wine", method="rf", params={"max_features": 2, "n_estimators": 3},
                 seed=1, split_path=path)
    default = run(tmp_path / "default", dataset="wine", method="rf", params={"n_estimators": 3}, seed=1,
                  split_path=path)
    assert result["params"] == {"max_features": 2, "n_estimators": 3}
    assert json.loads((out / "metrics.json").read_text())["params"] == result["params"]
    for key in ("train", "val", "test", "tree"):  # the estimator was built with the chosen value
        assert result[key] == direct[key]
    assert result["tree"] != default["tree"]  # ...which makes a difference (sqrt(13) -> 3 features by default)
    setup = yaml.safe_load((out / "params.yaml").read_text())
    assert setup["params"] == {"max_features": 2, "n_estimators": 3}
    assert setup["inherited"] == {"max_features": str(selection)}
    # rerun repeats it from params.yaml alone: the selection file is not needed any more
    selection.unlink()
    again = runner.rerun(out / "params.yaml", tmp_path / "again")
    for key in ("params", "train", "val", "test", "tree"):
        assert again[key] == result[key]
    assert yaml.safe_load((tmp_path / "again" / "params.yaml").read_text())["inherited"] == setup["inherited"]


def test_final_run_may_carry_the_chosen_value_but_not_another(tmp_path, wine_split):
    path, _ = wine_split
    selection = write_selection(tmp_path / "sel.yaml", {"max_features": 2})
    result = run(tmp_path / "same", dataset="wine", method="rf", params={"max_features": 2, "n_estimators": 2},
                 seed=0, split_path=path, inherit={"max_features": selection})
    assert result["params"]["max_features"] == 2
    with pytest.raises(ValueError, match="max_features=5 disagrees with 2 chosen in"):
        run(tmp_path / "other", dataset="wine", method="rf", params={"max_features": 5, "n_estimators": 2},
            seed=0, split_path=path, inherit={"max_features": selection})
    assert not (tmp_path / "other").exists()


def test_an_inherited_value_needs_a_selection_that_chose_it(tmp_path, wine_split):
    path, _ = wine_split
    with pytest.raises(ValueError, match="max_features=from-rf-forest: inherited from another method's selection"):
        run(tmp_path / "a", dataset="wine", method="rf", params={"max_features": "from-rf-forest"}, seed=0,
            split_path=path)
    selection = write_selection(tmp_path / "sel.yaml", {"max_depth": 3})
    with pytest.raises(ValueError, match="the selection chose no 'max_features'"):
        run(tmp_path / "b", dataset="wine", method="rf", params={"max_features": "from-rf-forest"}, seed=0,
            split_path=path, inherit={"max_features": selection})
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_dotted_parameter_goes_inside_the_dict_parameter_and_reads_the_inner_name(tmp_path):
    """`init_params.nu` (config inherit:) sets init_params["nu"] from the selection's chosen `nu`."""
    est = methods.make_estimator("nongreedy_tree", {"nu": 1.0, "init_params.nu": 0.1,
                                                    "init_params.learning_rate": 0.03}, seed=0)
    assert est.nu == 1.0 and est.init_params == {"nu": 0.1, "learning_rate": 0.03}
    assert methods.nest_params({"init_params": {"max_epochs": 5}, "init_params.nu": 4}) == {
        "init_params": {"max_epochs": 5, "nu": 4}}
    with pytest.raises(ValueError, match="has no parameter"):
        methods.make_estimator("nongreedy_tree", {"init_parms.nu": 0.1}, seed=0)
    selection = write_selection(tmp_path / "sel.yaml", {"nu": 10, "learning_rate": 0.01})
    params, inherited = runner.resolve_inherited({"nu": 1.0, "init_params.nu": "from-co2_tree-fig2"},
                                                 {"init_params.nu": str(selection)})
    assert params == {"nu": 1.0, "init_params.nu": 10} and inherited == {"init_params.nu": str(selection)}


def test_a_refit_takes_the_loaded_training_and_validation_rows_without_a_copy(tmp_path):
    from treeopt.data import load_split, prepare_split
    from treeopt.experiments.run.fit import _stacked

    config = {"data": {"processed_dir": str(tmp_path / "processed"), "raw_dir": str(tmp_path / "raw")},
              "datasets": {"wine": {"task": "classification", "format": "sklearn", "options": {"loader": "wine"},
                                    "split": {"protocol": "random"}, "scale": "none"}}}
    split = load_split(prepare_split("wine", config, 0))
    joined = _stacked(split.X_train, split.X_val)
    assert joined is split.X_train.base and np.shares_memory(joined, split.X_val)
    assert np.array_equal(joined, np.vstack([split.X_train, split.X_val]))
    # any other pair of arrays is stacked by copying
    a, b = np.ones((3, 2)), np.zeros((2, 2))
    assert np.array_equal(_stacked(a, b), np.vstack([a, b]))
    block = np.empty((5, 2))
    assert np.array_equal(_stacked(block[3:], block[:3]), np.vstack([block[3:], block[:3]]))
