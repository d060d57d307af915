"""A forest split into tree blocks (treeopt.experiments.run.blocks): block jobs merged give the run one job gives, bit
for bit (trees, probabilities, staged errors, metrics.json); interrupted blocks leave nothing; wrong blocks are
refused."""

import json

import numpy as np
import pytest
import yaml

from treeopt.experiments.run import runner
from treeopt.experiments.plan.tree_blocks import BlockError, block_ranges
from treeopt.experiments.run.block_sums import block_setup, is_block_folder
from treeopt.experiments.run.blocks import run_block
from treeopt.experiments.run.runner import run
from treeopt.forest import CO2ForestClassifier, OC1ForestClassifier
from treeopt.forest.bagging import RunningProba, blocked_sum, predict_proba_saved
from treeopt.trees import load_trees

TIMINGS = ("fit_seconds", "predict_seconds", "compile_seconds", "fit_compile_seconds", "git_commit", "versions")
FORESTS = [
    ("co2_forest", {"n_estimators": 10, "nu": 1.0, "learning_rate": 0.03, "max_features": 3}),
    ("oc1_forest", {"n_estimators": 10, "n_restarts": 2, "max_features": "p^0.5"}),  # p^a needs the data's p
]
STAGES = {"n_estimators": [1, 2, 3, 4, 5, 8, 10, 100]}


def _without_timings(metrics):
    return {k: v for k, v in metrics.items() if k not in TIMINGS}


def _kwargs(split_path, method, params, seed=3):
    return dict(dataset="wine", method=method, params=params, seed=seed, split_path=split_path, fit_on="trainval",
                n_jobs=2, save_model=True, stages=STAGES)


def _blocks(tmp_path, kwargs, block_trees, n_trees):
    dirs = []
    for trees in block_ranges(n_trees, block_trees):
        path = tmp_path / "blocks" / f"trees{trees.start}-{trees.stop}"
        run_block(path, trees=trees, block_trees=block_trees, **kwargs)
        dirs.append(path)
    return dirs


@pytest.mark.parametrize("method, params", FORESTS)
def test_blocks_merged_give_the_run_one_job_gives(tmp_path, wine_split, method, params):
    split_path, split = wine_split
    kwargs = _kwargs(split_path, method, params)
    one_job = run(tmp_path / "one", block_trees=4, **kwargs)
    dirs = _blocks(tmp_path, kwargs, 4, params["n_estimators"])  # trees 0-3, 4-7, 8-9
    merged = run(tmp_path / "merged", block_trees=4, blocks=list(reversed(dirs)), **kwargs)  # any order given
    assert _without_timings(merged) == _without_timings(one_job)
    assert [s["n_estimators"] for s in merged["stages"]] == STAGES["n_estimators"]
    assert merged["tree"]["n_trees"] == 10 and merged["fit_seconds"] > 0
    on_disk = json.loads((tmp_path / "merged" / "metrics.json").read_text())
    assert _without_timings(on_disk) == _without_timings(json.loads((tmp_path / "one" / "metrics.json").read_text()))
    setup = yaml.safe_load((tmp_path / "merged" / "params.yaml").read_text())
    assert setup["block_trees"] == 4 and len(setup["merged_blocks"]) == 3
    # the same trees, in order, and the same probabilities from the saved forest at every size
    one_trees, merged_trees = load_trees(tmp_path / "one" / "model.npz"), load_trees(tmp_path / "merged" / "model.npz")
    assert len(merged_trees) == len(one_trees) == 10
    for a, b in zip(one_trees, merged_trees):
        assert np.array_equal(a.left, b.left) and np.array_equal(a.bias, b.bias)
        assert np.array_equal(a.value, b.value) and np.array_equal(a.W.toarray(), b.W.toarray())
    for m in (3, 10):
        assert np.array_equal(predict_proba_saved(tmp_path / "one" / "model.npz", split.X_test, n_trees=m),
                              predict_proba_saved(tmp_path / "merged" / "model.npz", split.X_test, n_trees=m))


@pytest.mark.parametrize("method, params", FORESTS[:1])
def test_blocks_hold_the_whole_forests_trees(wine_split, method, params):
    """Tree i of a block is tree i of the whole forest (its seed depends only on random_state and i)."""
    _, split = wine_split
    whole = CO2ForestClassifier(n_estimators=7, nu=1.0, max_features=3, random_state=5).fit(split.X_train,
                                                                                           split.y_train)
    part = CO2ForestClassifier(n_estimators=7, nu=1.0, max_features=3, random_state=5)
    got = list(part.fit_iter(split.X_train, split.y_train, trees=range(3, 6)))
    assert len(got) == 3
    for est, ref in zip(got, whole.estimators_[3:6]):
        assert np.array_equal(est.tree_.bias, ref.tree_.bias) and np.array_equal(est.tree_.left, ref.tree_.left)
    oc1 = OC1ForestClassifier(n_estimators=5, n_restarts=1, random_state=2).fit(split.X_train, split.y_train)
    tail = list(OC1ForestClassifier(n_estimators=5, n_restarts=1, random_state=2).fit_iter(
        split.X_train, split.y_train, trees=range(4, 5)))
    assert np.array_equal(tail[0].tree_.bias, oc1.estimators_[4].tree_.bias)
    for bad in (range(5, 9), range(2, 2), range(0, 4, 2), (0, 3)):
        with pytest.raises(ValueError, match="trees"):
            list(part.fit_iter(split.X_train, split.y_train, trees=bad))


def test_summing_in_blocks_is_the_merge_and_only_that(wine_split):
    """RunningProba with block_trees adds block sums in block order (what the merge does): equal bits to sums made
    block by block from zero. Summing tree by tree without blocks is another rounding: on these rows the two differ
    in the last bits somewhere (depth-2 trees: fractional leaf probabilities), which is why one job sums in blocks
    too (a forest not split keeps the plain sum)."""
    _, split = wine_split
    X = np.vstack([split.X_train, split.X_val, split.X_test])
    y = np.concatenate([split.y_train, split.y_val, split.y_test])
    forest = CO2ForestClassifier(n_estimators=40, nu=1.0, max_features=3, max_depth=2, random_state=0).fit(X, y)
    plain, blocked = RunningProba(forest, X), RunningProba(forest, X, block_trees=7)
    done = np.zeros((X.shape[0], 3))
    for start in range(0, 40, 7):
        block = RunningProba(forest, X)
        for est in forest.estimators_[start:start + 7]:
            block.add(est)
            blocked.add(est)
            plain.add(est)
            assert np.array_equal(blocked.sum(), blocked_sum(done, block.total))
        done = blocked_sum(done, block.total)
    assert np.array_equal(plain.proba(), forest.predict_proba(X))
    assert not np.array_equal(plain.sum(), blocked.sum())  # the order of additions shows in the bits
    assert np.allclose(plain.sum(), blocked.sum(), rtol=1e-13, atol=0)
    small = RunningProba(forest, X, block_trees=100)  # one block: the plain sum, bit for bit
    for est in forest.estimators_:
        small.add(est)
    assert np.array_equal(small.proba(), plain.proba())
    with pytest.raises(ValueError, match="block_trees"):
        RunningProba(forest, X, block_trees=0)


def test_a_forest_within_one_block_keeps_its_numbers(tmp_path, wine_split):
    """block_trees at or above the forest's size changes nothing (default-profile runs stay as they were)."""
    split_path, _ = wine_split
    kwargs = _kwargs(split_path, *FORESTS[0])
    plain = run(tmp_path / "plain", **kwargs)
    within = run(tmp_path / "within", block_trees=10, **kwargs)
    assert _without_timings(plain) == _without_timings(within)


def test_wrong_blocks_are_refused(tmp_path, wine_split):
    split_path, _ = wine_split
    method, params = FORESTS[0]
    kwargs = _kwargs(split_path, method, params)
    dirs = _blocks(tmp_path, kwargs, 4, 10)
    with pytest.raises(BlockError, match="the run needs exactly"):
        run(tmp_path / "missing", block_trees=4, blocks=dirs[:2], **kwargs)
    assert not (tmp_path / "missing").exists()
    other = run_block(tmp_path / "other" / "b", trees=(8, 10), block_trees=4, **_kwargs(split_path, method, params,
                                                                                        seed=4))
    assert other["seed"] == 4
    with pytest.raises(BlockError, match="another run: its seed"):
        run(tmp_path / "mixed", block_trees=4, blocks=[*dirs[:2], tmp_path / "other" / "b"], **kwargs)
    with pytest.raises(BlockError, match="another run: its block_trees"):
        run(tmp_path / "resized", block_trees=5, blocks=dirs, **kwargs)
    (dirs[0] / "block.json").unlink()
    with pytest.raises(BlockError, match="not a finished tree block"):
        run(tmp_path / "broken", block_trees=4, blocks=dirs, **kwargs)
    with pytest.raises(ValueError, match="one block of block_trees=4"):
        run_block(tmp_path / "straddle", trees=(2, 6), block_trees=4, **kwargs)
    with pytest.raises(ValueError, match="cannot be s"):
        run_block(tmp_path / "cart", trees=(0, 1), block_trees=4, **{**kwargs, "method": "cart", "params": {},
                                                                     "stages": None})


def test_an_interrupted_block_leaves_nothing(tmp_path, wine_split, monkeypatch):
    split_path, _ = wine_split
    kwargs = _kwargs(split_path, *FORESTS[0])

    def interrupted(*args, **kw):
        raise KeyboardInterrupt

    import treeopt.experiments.run.streamed as streamed

    monkeypatch.setattr(streamed, "fit_streamed", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_block(tmp_path / "blocks" / "trees0-4", trees=(0, 4), block_trees=4, **kwargs)
    assert list((tmp_path / "blocks").iterdir()) == []  # no block, no temporary
    monkeypatch.undo()  # also the fixture's split reader: put it back
    monkeypatch.setattr(runner, "_load_split", lambda p: wine_split[1])
    block = tmp_path / "blocks" / "trees0-4"
    run_block(block, trees=(0, 4), block_trees=4, **kwargs)
    assert is_block_folder(block) and sorted(p.name for p in block.iterdir()) == [
        "block.json", "log.txt", "model.npz", "sums.npz"]
    assert block_setup(block)["trees"] == [0, 4]
