"""Forests scored tree by tree (treeopt.experiments.run.streamed): the same numbers as the whole forest, few trees
alive at once, models written and read back one tree at a time."""

import gc
import threading
import weakref

import numpy as np
import pytest

from treeopt.experiments.run import fit, streamed
from treeopt.experiments.run.runner import run
from treeopt.forest import CO2ForestClassifier, OC1ForestClassifier
from treeopt.forest._ordered import ordered_map
from treeopt.forest.bagging import RunningProba, predict_proba_saved
from treeopt.trees import load_trees

TIMINGS = ("fit_seconds", "fit_cpu_seconds", "predict_seconds", "compile_seconds", "fit_compile_seconds", "git_commit",
           "versions")


def _without_timings(metrics):
    return {k: v for k, v in metrics.items() if k not in TIMINGS}


def _run_both(tmp_path, monkeypatch, method, params, stages, fit_on="train"):
    """The run folder's metrics scored tree by tree, and the same run fitted whole then scored."""
    kwargs = dict(dataset="wine", method=method, params=params, seed=3, split_path=tmp_path / "split0.npz",
                  fit_on=fit_on, n_jobs=2, save_model=True, stages={"n_estimators": stages})
    streamed_run = run(tmp_path / "streamed", **kwargs)
    with monkeypatch.context() as m:
        m.setattr(fit, "streams", lambda estimator, task: False)
        whole_run = run(tmp_path / "whole", **kwargs)
    return streamed_run, whole_run


@pytest.mark.parametrize("method, params", [
    ("co2_forest", {"n_estimators": 9, "nu": 1.0, "learning_rate": 0.03, "max_features": 3}),
    ("oc1_forest", {"n_estimators": 7, "n_restarts": 2, "max_features": 3}),
])
def test_a_forest_scored_tree_by_tree_measures_what_the_whole_forest_measures(tmp_path, monkeypatch, wine_split,
                                                                              method, params):
    streamed_run, whole_run = _run_both(tmp_path, monkeypatch, method, params, [1, 2, 4, 5, 100])
    assert _without_timings(streamed_run) == _without_timings(whole_run)
    assert [s["n_estimators"] for s in streamed_run["stages"]] == [1, 2, 4, 5, 100]
    assert streamed_run["stages"][-1]["stage_value"] == params["n_estimators"]
    assert streamed_run["fit_seconds"] > 0 and streamed_run["predict_seconds"] > 0
    # the same trees in model.npz, and the saved forest, read one tree at a time, predicts the measured test error
    saved = load_trees(tmp_path / "streamed" / "model.npz")
    assert len(saved) == params["n_estimators"]
    for a, b in zip(saved, load_trees(tmp_path / "whole" / "model.npz")):
        assert np.array_equal(a.left, b.left) and np.array_equal(a.bias, b.bias) and a.n_outputs == 3
    split = wine_split[1]
    proba = predict_proba_saved(tmp_path / "streamed" / "model.npz", split.X_test)
    error = 100 * np.mean(proba.argmax(axis=1) != split.y_test)
    assert error == streamed_run["test"]["error"]
    stage = streamed_run["stages"][2]  # 4 trees
    proba = predict_proba_saved(tmp_path / "streamed" / "model.npz", split.X_test, n_trees=4)
    assert 100 * np.mean(proba.argmax(axis=1) != split.y_test) == stage["test"]["error"]


def test_a_one_tree_forest_also_reports_the_leaves_its_training_data_reach(tmp_path, monkeypatch, wine_split):
    params = {"n_estimators": 1, "nu": 1.0, "learning_rate": 0.03, "max_features": 3}
    streamed_run, whole_run = _run_both(tmp_path, monkeypatch, "co2_forest", params, [1], fit_on="trainval")
    assert "active_leaves_train" in streamed_run["tree"]
    assert _without_timings(streamed_run) == _without_timings(whole_run)


def test_a_saved_forest_predicts_tree_by_tree_in_the_forest_columns(tmp_path, wine_split):
    """A bootstrap sample that misses a class gives a tree with fewer outputs; the streamed writer stores it in
    the forest's columns, so averaging the saved trees' probabilities is the forest's predict_proba."""
    path, split = wine_split
    X, y = split.X_train[:30], np.where(split.y_train[:30] == 2, 1, split.y_train[:30])
    y[0] = 2  # a class of one point, which about a third of the bootstrap samples miss
    forest = OC1ForestClassifier(n_estimators=12, n_restarts=1, random_state=0).fit(X, y)
    assert any(len(est.classes_) < 3 for est in forest.estimators_)
    from treeopt.trees import TreeWriter

    with TreeWriter(tmp_path / "m.npz", len(forest.estimators_)) as writer:
        for est in forest.estimators_:
            writer.add(streamed._tree_in_forest_columns(est, 3))
    assert np.array_equal(predict_proba_saved(tmp_path / "m.npz", split.X_test), forest.predict_proba(split.X_test))
    with pytest.raises(ValueError, match="features"):
        predict_proba_saved(tmp_path / "m.npz", split.X_test[:, :3])


def test_running_sums_equal_the_forests_staged_probabilities_bit_for_bit(wine_split):
    _, split = wine_split
    forest = CO2ForestClassifier(n_estimators=6, nu=1.0, learning_rate=0.03, max_features=3, random_state=1)
    forest.fit(split.X_train, split.y_train)
    running = RunningProba(forest, split.X_test)
    for m, est in enumerate(forest.estimators_, start=1):
        running.add(est)
        assert np.array_equal(running.proba(), forest.predict_proba(split.X_test, n_trees=m))


def test_fit_iter_yields_the_trees_fit_grows_and_never_holds_many(wine_split):
    _, split = wine_split
    forest = CO2ForestClassifier(n_estimators=20, nu=1.0, learning_rate=0.03, max_features=3, random_state=2,
                                 n_jobs=2)
    whole = CO2ForestClassifier(**forest.get_params()).fit(split.X_train, split.y_train)
    alive, most = [], 0
    for i, est in enumerate(forest.fit_iter(split.X_train, split.y_train)):
        assert np.array_equal(est.tree_.bias, whole.estimators_[i].tree_.bias)
        alive.append(weakref.ref(est))
        del est
        gc.collect()
        most = max(most, sum(r() is not None for r in alive))
    assert i == 19 and not hasattr(forest, "estimators_")
    assert most <= 1  # each tree is gone once the consumer drops it


def test_ordered_map_keeps_at_most_the_window_ahead_and_stops_cleanly():
    started, lock = [], threading.Lock()

    def work(i):
        with lock:
            started.append(i)
        return i * i

    gen = ordered_map(work, range(100), n_workers=2, window=4)
    assert [next(gen) for _ in range(3)] == [0, 1, 4]
    assert len(started) <= 3 + 4  # handed out + the window, never the whole list
    gen.close()
    assert len(started) < 100
    assert list(ordered_map(work, range(10), n_workers=3)) == [i * i for i in range(10)]
    with pytest.raises(ZeroDivisionError):
        list(ordered_map(lambda i: 1 // (i - 5), range(10), n_workers=2))
