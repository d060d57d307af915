"""A segmentation depth sweep read off one level-order fit (CO2 paper Fig. 4 left; issue #37).

A forest grown level by level (``grow_order="level"``) to depth D, its trees cut at depth d, is the forest grown to
depth d with the same seed, tree for tree: ``ForestSegmenter.depth_sums`` equals the shallower fit's sums bit for bit,
for CO2 and two-probe trees. A run with depth stages records each depth's metrics as the shallower run would, in one
job or merged from tree blocks. CO2 trees grown level by level are the first levels of deeper ones."""

import json

import numpy as np
import pytest
from sklearn.datasets import make_classification

from treeopt.experiments.plan.tree_blocks import block_ranges
from treeopt.experiments.run.blocks import run_block
from treeopt.experiments.run.runner import run
from treeopt.greedy._grow import level_order_prefix
from treeopt.greedy.co2 import CO2TreeClassifier
from treeopt.greedy.two_probe import TwoProbeTreeClassifier
from treeopt.segmentation import ForestSegmenter

COMMON = {"windows_per_tree": 300, "window_size": 11, "border": 15, "n_stats_windows": 300, "n_estimators": 4}
KINDS = [("co2", {"max_epochs": 3, "nu": 1.0, "learning_rate": 0.01}), ("two_probe", {"n_pairs": 30})]


@pytest.fixture(scope="module")
def faces_split(tmp_path_factory):
    from treeopt.data import load_split, prepare_split

    from conftest import faces_config

    path = prepare_split("faces", faces_config(tmp_path_factory.mktemp("segdepths"), n_images=14, n_test=3,
                                               n_val=2), 0)
    return path, load_split(path)


def _same_tree(a, b):
    return (np.array_equal(a.left, b.left) and np.array_equal(a.right, b.right) and np.array_equal(a.bias, b.bias)
            and np.array_equal(a.feature, b.feature) and (a.W != b.W).nnz == 0 and np.array_equal(a.value, b.value))


@pytest.mark.parametrize("Est, kwargs", [(CO2TreeClassifier, {"nu": 1.0, "learning_rate": 0.01, "standardize": "tree"}),
                                         (CO2TreeClassifier, {"nu": 4.0, "learning_rate": 0.03, "max_features": None}),
                                         (TwoProbeTreeClassifier, {"n_pairs": 40})])
def test_level_order_tree_is_the_first_levels_of_a_deeper_one(Est, kwargs):
    X, y = make_classification(1200, 12, n_informative=6, n_classes=3, random_state=1)
    deep = Est(max_depth=10, random_state=4, grow_order="level", **kwargs).fit(X, y)
    assert np.all(np.diff(deep.tree_.depth) >= 0)  # numbered level by level
    for depth in (1, 2, 5, 8):
        shallow = Est(max_depth=depth, random_state=4, grow_order="level", **kwargs).fit(X, y)
        assert _same_tree(level_order_prefix(deep.tree_, depth), shallow.tree_), depth
    # depth first draws in another order: a different tree (so the test above can tell the orders apart)
    first = Est(max_depth=10, random_state=4, **kwargs).fit(X, y)
    assert not _same_tree(first.tree_, deep.tree_)


def test_co2_depth_first_growth_is_unchanged_by_the_level_option():
    """The depth-first order (every committed CO2 result) still grows the trees it grew before the level option:
    a digest of CO2 trees' and a CO2 Forest's probabilities made at 5dce976, and the same tree whether grow_order is
    left out or given as "depth_first"."""
    import hashlib

    from treeopt.forest.co2 import CO2ForestClassifier

    X, y = make_classification(1500, 30, n_informative=10, n_classes=4, random_state=0)
    h = hashlib.sha256()
    for nu in (0.1, 1, 10):
        tree = CO2TreeClassifier(nu=nu, learning_rate=0.01, standardize="tree", random_state=1).fit(X, y)
        h.update(tree.predict_proba(X).tobytes())
    h.update(CO2ForestClassifier(n_estimators=5, nu=1, random_state=2, n_jobs=1).fit(X, y).predict_proba(X).tobytes())
    assert h.hexdigest()[:16] == "9cf1b6c886b2ff0f"
    a = CO2TreeClassifier(nu=1.0, random_state=0).fit(X, y)
    b = CO2TreeClassifier(nu=1.0, random_state=0, grow_order="depth_first").fit(X, y)
    assert _same_tree(a.tree_, b.tree_)


@pytest.mark.parametrize("kind, extra", KINDS)
def test_depth_sums_equal_the_shallower_forests_sums(faces_split, kind, extra):
    _, split = faces_split
    deep = ForestSegmenter(split_kind=kind, max_depth=6, grow_order="level", random_state=3, **COMMON, **extra)
    deep.fit(split.X_train, split.y_train)
    got = {d: sums.copy() for d, sums in deep.depth_sums(split.X_test, [2, 4, 6], block_trees=2)}
    assert sorted(got) == [2, 4, 6]
    for d in (2, 4, 6):
        shallow = ForestSegmenter(split_kind=kind, max_depth=d, grow_order="level", random_state=3, **COMMON, **extra)
        shallow.fit(split.X_train, split.y_train)
        (_, sums), = shallow.staged_sums(split.X_test, [4], block_trees=2)
        assert np.array_equal(got[d], sums), d
    assert not np.array_equal(got[2], got[6])  # the cut changes what is summed


def test_depth_sums_refuse_depth_first_forests_and_axis_level(faces_split):
    _, split = faces_split
    forest = ForestSegmenter(split_kind="two_probe", max_depth=3, n_pairs=10, random_state=0, **COMMON)
    forest.fit(split.X_train, split.y_train)
    with pytest.raises(ValueError, match="level by level"):
        next(forest.depth_sums(split.X_test, [2]))
    with pytest.raises(ValueError, match="grow_order='level'"):
        ForestSegmenter(split_kind="axis", grow_order="level", **COMMON).fit(split.X_train, split.y_train)


@pytest.mark.parametrize("kind, extra", KINDS)
def test_a_run_with_depth_stages_records_what_each_depth_run_records(tmp_path, faces_split, kind, extra):
    split_path, _ = faces_split
    method = f"seg_{kind}"
    base = dict(dataset="faces", method=method, seed=1, split_path=split_path, fit_on="trainval", n_jobs=1)
    params = {**COMMON, **extra, "grow_order": "level"}
    staged = run(tmp_path / "staged", params={**params, "max_depth": 5}, stages={"max_depth": [2, 3, 5]}, **base)
    assert [s["max_depth"] for s in staged["stages"]] == [2, 3, 5]
    for stage in staged["stages"]:
        alone = run(tmp_path / f"d{stage['max_depth']}", params={**params, "max_depth": stage["max_depth"]}, **base)
        assert stage["test"] == alone["test"] and stage["train"] == alone["train"], stage["max_depth"]
        assert stage["tree"]["n_trees"] == 4
    assert staged["stages"][-1]["test"] == staged["test"]
    on_disk = json.loads((tmp_path / "staged" / "metrics.json").read_text())
    assert on_disk["stages"] == staged["stages"]
    # the tables read one row per depth (CO2 paper Fig. 4 left): the staged run's rows are the depth runs' rows
    from treeopt.experiments.report.tables import load_runs
    from treeopt.experiments.report.tables_co2 import co2_fig4_jaccard

    from_one = co2_fig4_jaccard(load_runs([tmp_path / "staged"]))
    from_each = co2_fig4_jaccard(load_runs([tmp_path / f"d{d}" for d in (2, 3, 5)]).assign(
        sweep=lambda runs: [{"max_depth": p["max_depth"]} for p in runs["params"]]))
    assert list(from_one["depth"]) == [2, 3, 5] and set(from_one["curve"]) == {"depth"}
    assert list(from_one["jaccard"]) == list(from_each["jaccard"]) and list(from_one["n_trees"]) == [4, 4, 4]


def test_depth_stages_merged_from_blocks_equal_one_job(tmp_path, faces_split):
    split_path, _ = faces_split
    kwargs = dict(dataset="faces", method="seg_co2", seed=2, split_path=split_path, fit_on="train", n_jobs=1,
                  params={**COMMON, **KINDS[0][1], "grow_order": "level", "max_depth": 4},
                  stages={"max_depth": [1, 3, 4]})
    one_job = run(tmp_path / "one", block_trees=2, **kwargs)
    dirs = []
    for trees in block_ranges(4, 2):
        dirs.append(tmp_path / "blocks" / f"trees{trees.start}-{trees.stop}")
        run_block(dirs[-1], trees=trees, block_trees=2, **kwargs)
    merged = run(tmp_path / "merged", block_trees=2, blocks=dirs, **kwargs)
    assert merged["stages"] == one_job["stages"] and len(merged["stages"]) == 3
    assert merged["stages"][0]["val"]["jaccard"] != merged["stages"][-1]["val"]["jaccard"]
    # a block made without the depth stages cannot be merged into a run that has them
    plain = dict(kwargs, stages=None)
    run_block(tmp_path / "plain" / "trees0-2", trees=range(0, 2), block_trees=2, **plain)
    from treeopt.experiments.plan.tree_blocks import BlockError

    with pytest.raises(BlockError, match="sum_depth"):
        run(tmp_path / "bad", block_trees=2, blocks=[tmp_path / "plain" / "trees0-2", dirs[1]], **kwargs)


def test_depth_stages_need_a_level_order_fit_to_the_deepest_depth(tmp_path, faces_split):
    split_path, _ = faces_split
    base = dict(dataset="faces", method="seg_two_probe", seed=0, split_path=split_path, fit_on="train", n_jobs=1)
    with pytest.raises(ValueError, match="level by level"):
        run(tmp_path / "a", params={**COMMON, "n_pairs": 10, "max_depth": 3}, stages={"max_depth": [2, 3]}, **base)
    with pytest.raises(ValueError, match="deepest"):
        run(tmp_path / "b", params={**COMMON, "n_pairs": 10, "max_depth": 4, "grow_order": "level"},
            stages={"max_depth": [2, 3]}, **base)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.parametrize("method, change, message", [
    ("seg_co2", lambda entry: entry["params"].pop("grow_order"), "needs grow_order: level"),
    ("seg_rf", lambda entry: entry.update(staged={"max_depth": "all"}), "needs grow_order: level"),
])
def test_a_depth_stage_config_that_cannot_hold_fails_before_any_job(method, change, message):
    import copy
    from pathlib import Path

    from treeopt.experiments.plan.build import build_plan
    from treeopt.experiments.plan.config import ConfigError, load_config

    config = load_config(Path(__file__).resolve().parents[1] / "config.yaml", [])
    build_plan(config)  # the shipped config holds
    bad = copy.deepcopy(config)
    change(bad["profiles"]["default"]["experiments"]["co2_segmentation_depth"]["methods"][method])
    with pytest.raises(ConfigError, match=message):
        build_plan(bad)


def test_depth_stages_are_refused_for_a_classifier():
    from treeopt.experiments.plan.build import _check_depth_stages
    from treeopt.experiments.plan.config import ConfigError

    with pytest.raises(ConfigError, match="path: max_depth"):
        _check_depth_stages("experiments.x.methods.oc1_tree", "oc1_tree", {"params": {"grow_order": "level"}})
    _check_depth_stages("experiments.x.methods.seg_co2", "seg_co2", {"params": {"grow_order": "level"}})
