"""Window forests score pixels from the images themselves (treeopt.segmentation.scoring): the same sums and label
maps, to the bit, as the old path that cut every window out (extract_windows) and routed it through each tree."""

import numpy as np
import pytest
import scipy.sparse as sp

from treeopt.data.faces import make_synthetic_faces
from treeopt.segmentation import IGNORE, ForestSegmenter, extract_windows, valid_mask
from treeopt.segmentation import scoring
from treeopt.segmentation.scoring import PackedTree, WindowScorer
from treeopt.segmentation.windows import class_counts, class_pools, n_valid, valid_flat
from treeopt.trees import Tree

PARAMS = dict(n_estimators=4, windows_per_tree=900, window_size=11, border=6, max_depth=9, n_stats_windows=800,
              random_state=3, n_jobs=2)
KIND_PARAMS = {"axis": {}, "two_probe": {"n_pairs": 60}, "co2": {"max_epochs": 4, "learning_rate": 0.003}}


@pytest.fixture(scope="module")
def faces():
    return make_synthetic_faces(14, 48, random_state=5)


@pytest.fixture(scope="module", params=["axis", "two_probe", "co2"])
def forest(request, faces):
    images, labels = faces
    model = ForestSegmenter(request.param, **PARAMS, **KIND_PARAMS[request.param])
    return model.fit(images[:10], labels[:10])


def window_path(model, images, sizes):
    """The old scoring, written out: each image's windows cut out, every tree's ``predict_proba`` added in tree
    order; returns the summed probabilities at the full forest and both label maps at each size."""
    n, H, W = images.shape[:3]
    flat = np.flatnonzero(valid_mask((H, W), model.border))
    rows, cols = np.divmod(flat, W)
    maps = np.full((2, len(sizes), n, H * W), IGNORE, dtype=np.int16)
    sums = np.zeros((n, flat.size, model.classes_.shape[0]))
    dtype = np.float32 if model.split_kind == "axis" else np.float64
    for i in range(n):
        Z = extract_windows(images[i:i + 1], np.zeros_like(rows), rows, cols, model.window_size, model.window_mean_,
                            model.window_std_, dtype=dtype)
        done = 0
        for s, m in enumerate(sizes):
            for est in model.estimators_[done:m]:
                proba = est.predict_proba(Z) if model.split_kind == "axis" else est.tree_.predict_proba(Z)
                row = np.zeros_like(sums[i])
                row[:, est.classes_] = proba
                sums[i] += row
            done = m
            maps[0, s, i, flat] = (sums[i] * model.class_weights_).argmax(axis=1)
            maps[1, s, i, flat] = sums[i].argmax(axis=1)
    return sums, maps.reshape(2, len(sizes), n, H, W)


def image_path_sums(model, images):
    n, H, W = images.shape[:3]
    rows, cols = np.divmod(np.flatnonzero(valid_mask((H, W), model.border)), W)
    scorer = WindowScorer(images, rows, cols, model.window_mean_, model.window_std_, model.window_size,
                          model.classes_.shape[0])
    for est in model.estimators_:
        tree = Tree.from_sklearn(est) if model.split_kind == "axis" else est.tree_
        scorer.add(PackedTree(tree, est.classes_, model.classes_.shape[0], model.window_size, model.window_mean_,
                              model.window_std_), 0, n)
    return scorer.sums


def test_label_maps_and_probabilities_are_the_window_paths_bit_for_bit(forest, faces):
    images = faces[0][10:]
    sizes = [1, 2, 4]
    sums, (reweighted, balanced) = window_path(forest, images, sizes)
    new_reweighted, new_balanced = forest.staged_predict_both(images, sizes)
    np.testing.assert_array_equal(new_reweighted, reweighted)
    np.testing.assert_array_equal(new_balanced, balanced)
    np.testing.assert_array_equal(image_path_sums(forest, images), sums)  # float64 sums: equal, not close


def test_co2_nodes_take_the_image_kernel_sum_and_trees_are_routed_as_the_store_does(faces):
    images, labels = faces
    model = ForestSegmenter("co2", **PARAMS, **KIND_PARAMS["co2"]).fit(images[:10], labels[:10])
    packed = [PackedTree(est.tree_, est.classes_, model.classes_.shape[0], model.window_size, model.window_mean_,
                         model.window_std_) for est in model.estimators_]
    assert sum(int(np.sum(t.dense >= 0)) for t in packed) > 0  # the fast sum is exercised, not only the fallback
    n, H, W = images[10:].shape[:3]
    flat = np.flatnonzero(valid_mask((H, W), model.border))
    rows, cols = np.divmod(flat, W)
    for est in model.estimators_:  # the leaf each pixel reaches: value rows one-hot by leaf id
        tree = est.tree_
        leaves = Tree(tree.left, tree.right, tree.W, tree.bias, np.eye(tree.n_nodes), feature=tree.feature)
        scorer = WindowScorer(images[10:], rows, cols, model.window_mean_, model.window_std_, model.window_size,
                              tree.n_nodes)
        scorer.add(PackedTree(leaves, np.arange(tree.n_nodes), tree.n_nodes, model.window_size, model.window_mean_,
                              model.window_std_), 0, n)
        for i in range(n):
            Z = extract_windows(images[10 + i:11 + i], np.zeros_like(rows), rows, cols, model.window_size,
                                model.window_mean_, model.window_std_)
            np.testing.assert_array_equal(scorer.sums[i].argmax(axis=1), tree.apply(Z))


@pytest.mark.parametrize("seed", range(8))
def test_a_window_on_a_dense_nodes_threshold_is_decided_by_the_exact_sum(seed):
    """A dense node whose threshold is the window's exact (store-order) product, or the float just above or below
    it: the old path sends the window right, left and right. The kernel sum alone rounds differently (with the
    fallback switched off, 21 of 60 such routes over 20 seeds went wrong), so only the fallback gets all right."""
    rng = np.random.default_rng(seed)
    w, d = 7, 7 * 7 * 3
    image = rng.integers(0, 256, (1, 9, 9, 3)).astype(np.uint8)
    mean, std = rng.normal(100, 30, d), rng.uniform(20, 80, d)
    x = extract_windows(image, [0], [4], [4], w, mean, std)[0]
    weights = rng.normal(size=d) * rng.choice([1e-3, 1.0, 1e3], d)
    exact = 0.0
    for j in range(d):  # the tree store's arithmetic (Tree.apply): feature order
        exact += weights[j] * x[j]
    for bias, right in ((exact, True), (np.nextafter(exact, np.inf), False), (np.nextafter(exact, -np.inf), True)):
        W = sp.csr_matrix(np.vstack([weights, 0 * weights, 0 * weights]))
        tree = Tree(np.array([1, -1, -1]), np.array([2, -1, -1]), W, np.array([bias, 0.0, 0.0]),
                    np.array([[0.5, 0.5], [1.0, 0.0], [0.0, 1.0]]), feature=np.array([-1, -2, -2]))
        assert tree.apply(x[None])[0] == (2 if right else 1)
        scorer = WindowScorer(image, [4], [4], mean, std, w, 2)
        packed = PackedTree(tree, [0, 1], 2, w, mean, std)
        assert packed.dense[0] == 0
        scorer.add(packed, 0, 1)
        assert scorer.sums[0, 0, 1] == (1.0 if right else 0.0), (bias, right)


def test_scorer_refuses_windows_that_leave_the_image_and_mismatched_statistics():
    images = np.zeros((1, 20, 20, 3), dtype=np.uint8)
    with pytest.raises(ValueError, match="leaves"):
        WindowScorer(images, [4], [10], np.zeros(363), np.ones(363), 11, 2)
    with pytest.raises(ValueError, match="length 363"):
        WindowScorer(images, [10], [10], np.zeros(362), np.ones(362), 11, 2)
    with pytest.raises(ValueError, match="shape"):
        WindowScorer(images[..., :2], [10], [10], np.zeros(363), np.ones(363), 11, 2)
    tree = Tree(np.array([-1]), np.array([-1]), sp.csr_matrix((1, 30)), np.zeros(1), np.ones((1, 2)) / 2)
    with pytest.raises(ValueError, match="30 features"):
        PackedTree(tree, [0, 1], 2, 11, np.zeros(363), np.ones(363))


def test_class_pools_and_pixel_numbering_are_the_old_argsort_and_flatnonzero():
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 4, (3, 17, 13)).astype(np.uint8)
    b = 3
    n, H, W = labels.shape
    flat_valid = (np.arange(n)[:, None] * (H * W) + np.flatnonzero(valid_mask((H, W), b))[None, :]).ravel()
    lab = labels.reshape(-1)[flat_valid].astype(np.int64)
    counts = np.bincount(lab, minlength=4)
    old = np.split(flat_valid[np.argsort(lab, kind="stable")], np.cumsum(counts)[:-1])
    inner = labels[:, b:H - b, b:W - b]
    np.testing.assert_array_equal(class_counts(inner, 4), counts)
    for pool, want in zip(class_pools(inner, counts, (H, W), b, np.int32), old):
        np.testing.assert_array_equal(pool, want)
    assert n_valid(labels.shape, b) == flat_valid.size
    pick = rng.choice(flat_valid.size, 50, replace=False)
    np.testing.assert_array_equal(valid_flat(pick, (H, W), b), flat_valid[pick])


def test_a_huge_safety_factor_sends_every_dense_node_to_the_exact_sum_with_the_same_maps(faces, monkeypatch):
    images, labels = faces
    model = ForestSegmenter("co2", **PARAMS, **KIND_PARAMS["co2"]).fit(images[:10], labels[:10])
    fast = model.staged_predict_both(images[10:], [4])
    monkeypatch.setattr(scoring, "_SAFETY", 1e300)
    exact = model.staged_predict_both(images[10:], [4])
    np.testing.assert_array_equal(fast[0], exact[0])
    np.testing.assert_array_equal(fast[1], exact[1])
