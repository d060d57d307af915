"""Face-part segmentation (CO2 paper Sec. 6.2): windows, Jaccard, two-probe trees, window forests, data."""

import io
import tarfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treeopt.data.faces import (PART_NAMES, decode_label_image, make_synthetic_faces, parse_name_list,
                                read_lfw_parts)
from treeopt.greedy import TwoProbeTreeClassifier
from treeopt.segmentation import IGNORE, ForestSegmenter, confusion, extract_windows, jaccard_score, valid_mask
from treeopt.segmentation.windows import jaccard_from_confusion


# ---------------------------------------------------------------------------------------------- windows
def test_windows_are_the_pixels_around_each_centre_in_row_column_channel_order():
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (2, 12, 11, 3)).astype(np.uint8)
    centres = ([0, 1, 1], [2, 5, 9], [2, 3, 8])
    Z = extract_windows(images, *centres, 5)
    assert Z.shape == (3, 75)
    for t, (i, r, c) in enumerate(zip(*centres)):
        np.testing.assert_array_equal(Z[t], images[i, r - 2:r + 3, c - 2:c + 3, :].ravel())


def test_windows_are_normalised_with_the_given_statistics_and_refuse_to_leave_the_image():
    images = np.full((1, 9, 9, 3), 10, dtype=np.uint8)
    mean, std = np.full(27, 4.0), np.full(27, 2.0)
    np.testing.assert_allclose(extract_windows(images, [0], [4], [4], 3, mean, std), 3.0)
    with pytest.raises(ValueError, match="leaves"):
        extract_windows(images, [0], [0], [4], 3)


def test_valid_mask_drops_the_border():
    mask = valid_mask((40, 50), 15)
    assert mask.sum() == 10 * 20 and not mask[14].any() and mask[15, 15] and not mask[15, 35]
    with pytest.raises(ValueError):
        valid_mask((30, 40), 15)


# ---------------------------------------------------------------------------------------------- Jaccard
def test_jaccard_is_the_class_average_of_tp_over_tp_fp_fn():
    truth = np.array([0, 0, 1, 1, 2, 2])
    pred = np.array([0, 1, 1, 1, 2, 0])
    # class 0: tp 1, fp 1, fn 1 -> 1/3; class 1: tp 2, fp 1 -> 2/3; class 2: tp 1, fn 1 -> 1/2
    assert jaccard_score(truth, pred, 3) == pytest.approx(100 * (1 / 3 + 2 / 3 + 1 / 2) / 3)
    # ignored pixels do not count
    assert jaccard_score(np.array([0, 1]), np.array([0, IGNORE]), 2) == pytest.approx(100.0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=60))
def test_jaccard_is_100_only_for_a_perfect_labelling_and_never_outside_0_100(pairs):
    truth, pred = (np.array(x) for x in zip(*pairs))
    score, per_class = jaccard_from_confusion(confusion(truth, pred, 4))
    assert 0.0 <= score <= 100.0
    assert (score == 100.0) == bool(np.all(truth == pred))
    present = np.isin(np.arange(4), np.concatenate([truth, pred]))
    assert np.all(np.isnan(per_class) == ~present)


# ---------------------------------------------------------------------------------------------- two-probe
def test_two_probe_splits_are_differences_of_two_features_and_route_as_trained():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 12))
    y = (X[:, 3] - X[:, 7] > 0.2).astype(int) + 2 * (X[:, 1] > X[:, 5])
    tree = TwoProbeTreeClassifier(n_pairs=200, max_depth=6, random_state=0).fit(X, y)
    t = tree.tree_
    internal = np.flatnonzero(~t.is_leaf)
    assert internal.size > 0 and np.all(t.feature[internal] == -1)
    for node in internal:
        row = t.W.getrow(node)
        assert row.nnz == 2 and sorted(row.data) == [-1.0, 1.0]
    # grown to purity on its training set: every training point reaches a leaf of its own class
    assert tree.score(X, y) == 1.0 or t.max_depth == 6
    # the root found the planted pair (3, 7) or (1, 5), the only differences that carry the labels
    root = t.W.getrow(0)
    assert set(root.indices) in ({3, 7}, {1, 5})


def test_two_probe_learns_what_axis_splits_find_hard():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 20))
    y = (X[:, 2] > X[:, 11]).astype(int)
    from sklearn.tree import DecisionTreeClassifier

    X_test = rng.normal(size=(400, 20))
    y_test = (X_test[:, 2] > X_test[:, 11]).astype(int)
    probe = TwoProbeTreeClassifier(n_pairs=400, max_depth=2, random_state=0).fit(X, y).score(X_test, y_test)
    axis = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y).score(X_test, y_test)
    assert probe > 0.97 and probe > axis + 0.1


def test_two_probe_with_one_feature_is_a_single_leaf():
    tree = TwoProbeTreeClassifier().fit(np.arange(4.0)[:, None], [0, 1, 0, 1])
    assert tree.tree_.n_nodes == 1
    np.testing.assert_allclose(tree.predict_proba(np.zeros((2, 1))), 0.5)


# ---------------------------------------------------------------------------------------------- synthetic faces
@pytest.fixture(scope="module")
def faces():
    return make_synthetic_faces(24, 64, random_state=0)


def test_synthetic_faces_have_all_eight_parts_inside_the_border(faces):
    images, labels = faces
    assert images.shape == (24, 64, 64, 3) and images.dtype == np.uint8 and labels.shape == (24, 64, 64)
    inner = labels[:, 15:-15, 15:-15]
    assert set(np.unique(inner)) == set(range(len(PART_NAMES)))
    # background and lower face dominate, as in LFW: the classes are imbalanced
    share = np.bincount(inner.ravel(), minlength=8) / inner.size
    assert share[:2].sum() > 0.7 and share[2:].max() < 0.1


def test_synthetic_faces_vary_and_are_reproducible(faces):
    images, labels = faces
    again = make_synthetic_faces(24, 64, random_state=0)
    np.testing.assert_array_equal(images, again[0])
    # geometry varies: the nose is not at the same place in every image
    centres = [np.argwhere(lab == 2).mean(axis=0) for lab in labels]
    assert np.ptp(np.array(centres), axis=0).max() > 4


def test_synthetic_face_parts_are_not_separable_by_pixel_colour(faces):
    """Left and right eyes look alike, and forehead skin (background) looks like the lower face: a
    classifier of the centre pixel's colour alone cannot tell them apart."""
    from sklearn.ensemble import RandomForestClassifier

    images, labels = faces
    X = images.reshape(-1, 3).astype(float)
    y = labels.ravel()
    half = X.shape[0] // 2
    clf = RandomForestClassifier(n_estimators=20, min_samples_leaf=5, random_state=0, n_jobs=1)
    clf.fit(X[:half], y[:half])
    pred = clf.predict(X[half:])
    assert jaccard_score(y[half:], pred, 8) < 45
    eyes = np.isin(y[half:], [4, 5])
    # left/right confusion: colour alone labels the two eyes no better than chance among them
    assert np.mean(pred[eyes] == y[half:][eyes]) < 0.7


# ---------------------------------------------------------------------------------------------- forests
@pytest.fixture(scope="module")
def small_forest(faces):
    images, labels = faces
    model = ForestSegmenter("two_probe", n_estimators=3, windows_per_tree=400, window_size=15, border=15,
                            n_pairs=30, max_depth=6, n_stats_windows=500, random_state=0, n_jobs=1)
    return model.fit(images[:16], labels[:16])


def test_forest_samples_balanced_windows_and_records_the_inverse_sampling_factors(small_forest, faces):
    images, labels = faces
    model = small_forest
    k = len(PART_NAMES)
    counts = np.bincount(labels[:16, 15:-15, 15:-15].ravel(), minlength=k)
    np.testing.assert_array_equal(model.class_pixels_, counts)
    np.testing.assert_allclose(model.class_weights_, k * counts / counts.sum())
    assert model.n_features_in_ == 15 * 15 * 3
    for est in model.estimators_:  # every tree saw windows_per_tree // k windows of each class
        root = est.tree_
        assert root.n_samples[0] == (400 // k) * k
        np.testing.assert_allclose(root.value[0], np.full(k, 1 / k))


def test_forest_predicts_label_maps_with_an_ignored_border_and_stages_are_prefixes(small_forest, faces):
    images, labels = faces
    staged = small_forest.staged_predict(images[16:19], [1, 3])
    assert staged.shape == (2, 3, 64, 64)
    assert np.all(staged[:, :, :15] == IGNORE) and np.all(staged[:, :, :, -15:] == IGNORE)
    assert np.all(staged[:, :, 15:-15, 15:-15] >= 0)
    np.testing.assert_array_equal(staged[1], small_forest.predict(images[16:19]))
    # the chunk size bounds memory only: it does not change the labels
    other = small_forest.set_params(chunk_size=37)
    np.testing.assert_array_equal(other.predict(images[16:19]), staged[1])
    small_forest.set_params(chunk_size=4096)


def test_reweighting_moves_labels_towards_frequent_classes(small_forest, faces):
    images, _ = faces
    weighted = small_forest.predict(images[16:20])
    small_forest.set_params(reweight=False)
    balanced = small_forest.predict(images[16:20])
    small_forest.set_params(reweight=True)
    inner = (slice(None), slice(15, -15), slice(15, -15))
    # the paper's re-weighting by the inverse sampling factor favours the frequent background and lower face
    assert np.isin(weighted[inner], [0, 1]).mean() > np.isin(balanced[inner], [0, 1]).mean()


@pytest.mark.parametrize("kind", ["axis", "co2"])
def test_every_split_kind_fits_and_beats_chance(kind, faces):
    images, labels = faces
    model = ForestSegmenter(kind, n_estimators=2, windows_per_tree=400, window_size=15, border=15, max_depth=5,
                            max_epochs=3, n_stats_windows=500, random_state=0, n_jobs=1)
    model.fit(images[:16], labels[:16])
    score = model.score(images[16:], labels[16:])
    # chance: every pixel one class gives at most ~ 100 * share / 8 per class on average
    assert score > 100 * 0.55 / 8 + 2


def test_forest_rejects_bad_inputs(faces):
    images, labels = faces
    with pytest.raises(ValueError, match="border"):
        ForestSegmenter(window_size=31, border=10).fit(images, labels)
    with pytest.raises(ValueError, match="shape"):
        ForestSegmenter(window_size=15).fit(images[..., 0], labels)
    with pytest.raises(ValueError, match="class"):
        ForestSegmenter(window_size=15).fit(images, np.zeros_like(labels))


# ---------------------------------------------------------------------------------------------- LFW reader
def _tar_of(files):
    from PIL import Image

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, array, fmt in files:
            data = io.BytesIO()
            Image.fromarray(array).save(data, format=fmt)
            info = tarfile.TarInfo(name)
            info.size = data.tell()
            data.seek(0)
            tar.addfile(info, data)
    return buf.getvalue()


def test_lfw_name_lists_accept_the_usual_spellings():
    text = "Aaron_Eckhart 1\nAaron_Peirsol 0003\n\nZico_0002\nlfw_funneled/Ann_Lee/Ann_Lee_0010.jpg\n"
    assert parse_name_list(text) == ["Aaron_Eckhart_0001", "Aaron_Peirsol_0003", "Zico_0002", "Ann_Lee_0010"]
    with pytest.raises(ValueError):
        parse_name_list("no number here\n")


def test_lfw_part_reader_decodes_colour_labels_and_assigns_parts(tmp_path):
    rng = np.random.default_rng(0)
    palette = [[0, 0, 255], [0, 255, 0], [255, 0, 0]]
    names = ["Ann_Lee_0001", "Ann_Lee_0002", "Bo_Xi_0001"]
    images, label_images, truth = [], [], []
    for name in names:
        img = rng.integers(0, 256, (40, 40, 3)).astype(np.uint8)
        lab = rng.integers(0, 3, (40, 40)).astype(np.uint8)
        images.append((f"lfw_funneled/{name.rsplit('_', 1)[0]}/{name}.jpg", img, "JPEG"))
        label_images.append((f"parts_lfw_funneled_gt_images/{name}.ppm",
                             np.asarray(palette, dtype=np.uint8)[lab], "PPM"))
        truth.append(lab)
    images.append(("lfw_funneled/Other/Other_0001.jpg", np.zeros((40, 40, 3), np.uint8), "JPEG"))  # unlisted
    paths = {"images": tmp_path / "lfw-funneled.tgz", "labels": tmp_path / "gt.tgz",
             "train": tmp_path / "train.txt", "test": tmp_path / "test.txt"}
    paths["images"].write_bytes(_tar_of(images))
    paths["labels"].write_bytes(_tar_of(label_images))
    paths["train"].write_text("Ann_Lee 0001\nBo_Xi 1\n")
    paths["test"].write_text("Ann_Lee 0002\n")
    table = read_lfw_parts(paths, {"palette": palette, "image_size": 40})
    assert table.X.shape == (3, 40, 40, 3) and table.y.shape == (3, 40, 40)
    np.testing.assert_array_equal(table.part, [0, 0, 2])
    np.testing.assert_array_equal(table.y[0], truth[0])  # PPM is lossless: labels exactly back
    np.testing.assert_array_equal(table.y[1], truth[2])
    np.testing.assert_array_equal(table.y[2], truth[1])
    paths["test"].write_text("Ann_Lee 0002\nNobody 0001\n")
    with pytest.raises(ValueError, match="Nobody_0001"):
        read_lfw_parts(paths, {"palette": palette})


def test_label_colours_map_to_the_nearest_palette_entry():
    rgb = np.array([[[250, 3, 2], [1, 1, 240], [10, 240, 12]]], dtype=np.uint8)
    np.testing.assert_array_equal(decode_label_image(rgb, [[0, 0, 255], [0, 255, 0], [255, 0, 0]]), [[2, 0, 1]])


def test_segmentation_splits_keep_images_whole(tmp_path):
    from treeopt.data import load_split, prepare_split

    config = {"data": {"processed_dir": str(tmp_path)}, "datasets": {"faces": {
        "task": "segmentation", "format": "synthetic", "options": {"generator": "faces", "n_images": 12,
                                                                   "image_size": 40},
        "split": {"protocol": "random", "n_test": 3, "n_val": 2}, "scale": "none"}}}
    split = load_split(prepare_split("faces", config, 0))
    assert split.task == "segmentation" and list(split.classes) == list(PART_NAMES)
    assert split.X_train.shape == (7, 40, 40, 3) and split.y_test.shape == (3, 40, 40)
    assert split.X_train.dtype == np.uint8
    config["datasets"]["faces"]["scale"] = "standard"
    with pytest.raises(ValueError, match="scale: none"):
        prepare_split("faces", config, 1)


# ---------------------------------------------------------------------------------------------- runs and reports
@pytest.fixture(scope="module")
def segmentation_runs(tmp_path_factory):
    """Tiny final runs of the three forests (32 trees for the tables, one depth-limited 16-tree forest)."""
    from treeopt.data import prepare_split
    from treeopt.experiments.run.runner import run

    from conftest import faces_config

    root = tmp_path_factory.mktemp("seg")
    split = prepare_split("faces", faces_config(root, n_images=14, n_test=4, n_val=2), 0)
    common = {"windows_per_tree": 160, "window_size": 11, "border": 15, "max_depth": 4, "n_stats_windows": 300}
    runs = {}
    for method, extra in (("seg_rf", {}), ("seg_two_probe", {"n_pairs": 20}), ("seg_co2", {"max_epochs": 2})):
        out = root / "runs" / method / "final-trees" / "seed0"
        run(out, dataset="faces", method=method, params={**common, **extra, "n_estimators": 32}, seed=0,
            split_path=split, fit_on="trainval", provenance={"experiment": "trees", "sweep": {"n_estimators": 32}})
        runs[method] = out
    depth = root / "runs" / "seg_rf" / "final-depth" / "seed0"
    run(depth, dataset="faces", method="seg_rf", params={**common, "max_depth": 2, "n_estimators": 16}, seed=0,
        split_path=split, fit_on="trainval", provenance={"experiment": "depth", "sweep": {"max_depth": 2}})
    return root, runs, depth


def test_segmentation_runs_record_jaccard_staged_scores_and_label_maps(segmentation_runs):
    import json

    _, runs, _ = segmentation_runs
    metrics = json.loads((runs["seg_co2"] / "metrics.json").read_text())
    assert metrics["n_train"] == 10 and metrics["n_test"] == 4 and metrics["val"] == {}
    assert {"jaccard", "jaccard_unweighted", "accuracy", "error"} <= set(metrics["test"])
    assert metrics["staged"]["n_trees"] == [1, 2, 4, 8, 16, 32]
    assert metrics["staged"]["test_jaccard"][-1] == pytest.approx(metrics["test"]["jaccard"])
    assert metrics["tree"]["n_trees"] == 32 and metrics["tree"]["depth"] <= 4
    with np.load(runs["seg_co2"] / "segmentation.npz") as z:
        assert z["test_pred"].shape == (4, 40, 40) and z["test_image_jaccard"].shape == (4,)
        assert np.all(z["test_pred"][:, :15] == IGNORE)


def test_segmentation_tables_and_figures(segmentation_runs, tmp_path):
    from treeopt.experiments.report.tables import load_runs
    from treeopt.experiments.report.tables_co2 import co2_fig3_segmentation, co2_fig4_jaccard, co2_table2_jaccard
    from treeopt.plots.segmentation import jaccard_curves, segmentation_examples
    from treeopt.plots.style import save

    _, runs, depth = segmentation_runs
    loaded = load_runs([*runs.values(), depth])
    table2 = co2_table2_jaccard(loaded[loaded["experiment"] == "trees"])
    assert sorted(set(table2["n_trees"])) == [16, 32] and len(table2) == 6
    assert table2["paper_value"].isna().all()  # synthetic faces are not LFW
    fig4 = co2_fig4_jaccard(loaded)
    trees = fig4[fig4["curve"] == "n_trees"]
    assert sorted(set(trees["n_trees"])) == [1, 2, 4, 8, 16, 32]
    depth_rf = fig4[(fig4["curve"] == "depth") & (fig4["method"] == "seg_rf")]
    # the depth run (max_depth 2) and the 16-tree prefix of the 32-tree run (max_depth 4)
    assert sorted(depth_rf["depth"]) == [2, 4] and set(depth_rf["n_trees"]) == {16}
    fig3 = co2_fig3_segmentation(loaded[loaded["experiment"] == "trees"])
    assert set(fig3["method"]) == {"seg_rf", "seg_two_probe", "seg_co2"}
    assert list(dict.fromkeys(fig3["role"]))[:3] == ["median seg_co2", "median seg_rf", "median seg_two_probe"]
    save(jaccard_curves(fig4, None, "test"), tmp_path / "fig4")
    save(segmentation_examples(fig3, None, "test"), tmp_path / "fig3")
    assert (tmp_path / "fig4.png").stat().st_size > 1000 and (tmp_path / "fig3.png").stat().st_size > 1000
