"""A segmentation forest split into tree blocks (treeopt.experiments.run.segment_runs): the block jobs merged give the
run folder one job gives with the same block size, bit for bit outside timings (metrics, staged Jaccard, label maps,
trees); a block size that would leave staged sizes inside later blocks is refused; fit_trees grows fit's trees."""

import json

import numpy as np
import pytest
import yaml

from treeopt.experiments.plan.tree_blocks import BlockError, block_ranges
from treeopt.experiments.run.blocks import run_block
from treeopt.experiments.run.runner import run
from treeopt.experiments.plan.tree_blocks import check_block_stages
from treeopt.segmentation import ForestSegmenter
from treeopt.trees import load_trees

TIMINGS = ("fit_seconds", "predict_seconds", "compile_seconds", "fit_compile_seconds", "git_commit", "versions")
COMMON = {"windows_per_tree": 160, "window_size": 11, "border": 15, "max_depth": 4, "n_stats_windows": 300,
          "n_estimators": 10}
METHODS = [("seg_co2", {"max_epochs": 2}), ("seg_two_probe", {"n_pairs": 20}), ("seg_rf", {})]


@pytest.fixture(scope="module")
def faces_split(tmp_path_factory):
    from treeopt.data import load_split, prepare_split

    from conftest import faces_config

    # 13 training images: every class appears in the training part (candidates fit on it alone)
    path = prepare_split("faces", faces_config(tmp_path_factory.mktemp("segblocks"), n_images=20, n_test=4,
                                               n_val=3), 0)
    return path, load_split(path)


def _without_timings(metrics):
    return {k: v for k, v in metrics.items() if k not in TIMINGS}


@pytest.mark.parametrize("fit_on", ["train", "trainval"])
@pytest.mark.parametrize("method, extra", METHODS)
def test_segmentation_blocks_merged_give_the_run_one_job_gives(tmp_path, faces_split, method, extra, fit_on):
    split_path, _ = faces_split
    kwargs = dict(dataset="faces", method=method, params={**COMMON, **extra}, seed=2, split_path=split_path,
                  fit_on=fit_on, n_jobs=2, save_model=True)
    one_job = run(tmp_path / "one", block_trees=4, **kwargs)
    dirs = []
    for trees in block_ranges(10, 4):  # trees 0-3, 4-7, 8-9
        dirs.append(tmp_path / "blocks" / f"trees{trees.start}-{trees.stop}")
        run_block(dirs[-1], trees=trees, block_trees=4, **kwargs)
    merged = run(tmp_path / "merged", block_trees=4, blocks=list(reversed(dirs)), **kwargs)  # any order given
    assert _without_timings(merged) == _without_timings(one_job)
    assert merged["staged"]["n_trees"] == [1, 2, 4, 8, 10] and merged["tree"]["n_trees"] == 10
    assert (merged["val"] != {}) == (fit_on == "train") and merged["fit_seconds"] > 0
    on_disk = [json.loads((tmp_path / name / "metrics.json").read_text()) for name in ("one", "merged")]
    assert _without_timings(on_disk[0]) == _without_timings(on_disk[1])
    with np.load(tmp_path / "one" / "segmentation.npz") as a, np.load(tmp_path / "merged" / "segmentation.npz") as b:
        assert sorted(a.files) == sorted(b.files)
        for key in a.files:
            assert np.array_equal(a[key], b[key]), key
    setup = yaml.safe_load((tmp_path / "merged" / "params.yaml").read_text())
    assert setup["block_trees"] == 4 and len(setup["merged_blocks"]) == 3
    one_trees, merged_trees = (load_trees(tmp_path / name / "model.npz") for name in ("one", "merged"))
    assert len(one_trees) == len(merged_trees) == 10
    for a, b in zip(one_trees, merged_trees):
        assert np.array_equal(a.left, b.left) and np.array_equal(a.bias, b.bias)
        assert np.array_equal(a.value, b.value) and np.array_equal(a.W.toarray(), b.W.toarray())


def test_blocked_sums_label_like_the_plain_sum(faces_split):
    """Summing in blocks changes at most last bits: the label maps of the blocked and the plain sums agree on
    (almost) every pixel, and the first block's sizes are the plain ones exactly."""
    _, split = faces_split
    seg = ForestSegmenter(split_kind="axis", n_estimators=8, windows_per_tree=160, window_size=11, max_depth=4,
                          n_stats_windows=300, random_state=1).fit(split.X_train, split.y_train)
    plain = {m: s.copy() for m, s in seg.staged_sums(split.X_test, [1, 2, 4, 8])}
    blocked = {m: s.copy() for m, s in seg.staged_sums(split.X_test, [1, 2, 4, 8], block_trees=2)}
    assert np.array_equal(plain[1], blocked[1]) and np.array_equal(plain[2], blocked[2])
    np.testing.assert_allclose(blocked[8], plain[8], rtol=1e-12, atol=1e-12)
    assert np.mean(seg.label_maps(plain[8], split.y_test.shape)[0] ==
                   seg.label_maps(blocked[8], split.y_test.shape)[0]) > 0.999


def test_fit_trees_grows_the_trees_fit_grows(faces_split):
    _, split = faces_split
    params = dict(split_kind="two_probe", n_estimators=6, windows_per_tree=160, window_size=11, max_depth=3,
                  n_pairs=10, n_stats_windows=300, random_state=4)
    whole = ForestSegmenter(**params).fit(split.X_train, split.y_train)
    part = ForestSegmenter(**params).fit_trees(split.X_train, split.y_train, range(2, 5))
    assert part.first_tree_ == 2 and len(part.estimators_) == 3 and whole.first_tree_ == 0
    assert np.array_equal(part.window_mean_, whole.window_mean_)
    assert np.array_equal(part.class_weights_, whole.class_weights_)
    for est, ref in zip(part.estimators_, whole.estimators_[2:5]):
        assert np.array_equal(est.tree_.left, ref.tree_.left) and np.array_equal(est.tree_.bias, ref.tree_.bias)
        assert np.array_equal(est.tree_.W.toarray(), ref.tree_.W.toarray())
    with pytest.raises(ValueError):
        ForestSegmenter(**params).fit_trees(split.X_train, split.y_train, range(4, 9))


def test_block_sizes_that_cut_a_staged_size_are_refused(tmp_path, faces_split):
    check_block_stages(32, 8)  # 1, 2, 4 inside the first block; 8, 16, 32 end blocks
    check_block_stages(10, 4)  # 8 ends a block, 10 the forest
    with pytest.raises(BlockError, match=r"staged sizes \[4, 8\]"):
        check_block_stages(10, 3)
    split_path, _ = faces_split
    with pytest.raises(BlockError, match="power of two"):
        run_block(tmp_path / "b", dataset="faces", method="seg_rf", params=COMMON, seed=0, split_path=split_path,
                  trees=range(3, 6), block_trees=3, fit_on="train")
    assert not (tmp_path / "b").exists()


def test_a_block_of_another_run_is_refused(tmp_path, faces_split):
    split_path, _ = faces_split
    params = {**COMMON, "n_estimators": 4}
    kwargs = dict(dataset="faces", method="seg_rf", params=params, split_path=split_path, fit_on="train")
    first = tmp_path / "trees0-2"
    run_block(first, trees=range(0, 2), block_trees=2, seed=0, **kwargs)
    other = tmp_path / "trees2-4"
    run_block(other, trees=range(2, 4), block_trees=2, seed=1, **kwargs)  # another seed
    with pytest.raises(BlockError, match="another run"):
        run(tmp_path / "merged", block_trees=2, blocks=[first, other], seed=0, **kwargs)
    assert not (tmp_path / "merged").exists()


def test_a_damaged_block_is_refused_and_an_interrupted_block_leaves_nothing(tmp_path, faces_split, monkeypatch):
    split_path, _ = faces_split
    params = {**COMMON, "n_estimators": 4}
    kwargs = dict(dataset="faces", method="seg_rf", params=params, split_path=split_path, fit_on="train", seed=0)
    dirs = [tmp_path / "trees0-2", tmp_path / "trees2-4"]
    for path, trees in zip(dirs, (range(0, 2), range(2, 4))):
        run_block(path, trees=trees, block_trees=2, **kwargs)
    sums = dirs[1] / "sums.npz"
    sums.write_bytes(sums.read_bytes()[:100])  # cut short, as by a full disk
    with pytest.raises(BlockError, match="sums.npz.*not readable"):
        run(tmp_path / "merged", block_trees=2, blocks=dirs, **kwargs)
    assert not (tmp_path / "merged").exists()

    def interrupted(self, X, y, trees):
        raise KeyboardInterrupt

    monkeypatch.setattr(ForestSegmenter, "fit_trees", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_block(tmp_path / "late" / "trees0-2", trees=range(0, 2), block_trees=2, **kwargs)
    assert not (tmp_path / "late" / "trees0-2").exists()
    assert not [p for p in (tmp_path / "late").iterdir()]  # no temporary left either


@pytest.mark.parametrize("method, extra", METHODS[:2])
def test_a_candidate_labels_no_test_image_and_scores_validation_as_a_run_that_does(tmp_path, faces_split, method,
                                                                                     extra):
    """A segmentation candidate (score_test=False; jobs.candidate_run) skips the test images, whose labelling is a
    sixth of a candidate's CPU at LFW size and which no choice reads: its validation and training scores, staged
    validation Jaccard and trees are those of the same run scoring test, in one job and merged from blocks; its
    rerun repeats it."""
    split_path, _ = faces_split
    kwargs = dict(dataset="faces", method=method, params={**COMMON, **extra}, seed=2, split_path=split_path,
                  fit_on="train", n_jobs=2, save_model=True, block_trees=4)
    full = run(tmp_path / "full", **kwargs)
    alone = run(tmp_path / "alone", score_test=False, **kwargs)
    dirs = []
    for trees in block_ranges(10, 4):
        dirs.append(tmp_path / "blocks" / f"trees{trees.start}-{trees.stop}")
        run_block(dirs[-1], trees=trees, score_test=False, **{k: v for k, v in kwargs.items()})
    merged = run(tmp_path / "merged", score_test=False, blocks=dirs, **kwargs)
    with np.load(dirs[0] / "sums.npz") as sums:
        assert "test_sum" not in sums.files and "val_sum" in sums.files
    for candidate in (alone, merged):
        assert candidate["test"] == {} and "test_jaccard" not in candidate["staged"]
        assert candidate["val"] == full["val"] and candidate["train"] == full["train"] and candidate["val"]
        assert candidate["staged"]["val_jaccard"] == full["staged"]["val_jaccard"]
        assert candidate["tree"] == full["tree"]
    assert _without_timings(merged) == _without_timings(alone)
    with np.load(tmp_path / "alone" / "segmentation.npz") as arrays:
        assert "test_pred" not in arrays.files
    assert yaml.safe_load((tmp_path / "alone" / "params.yaml").read_text())["score_test"] is False
    from treeopt.experiments.run.runner import rerun

    again = rerun(tmp_path / "alone" / "params.yaml", tmp_path / "again")
    assert _without_timings(again) == _without_timings(alone)
