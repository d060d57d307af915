"""Split protocols, scaling on training rows only, split files, entry validation."""

import numpy as np
import pytest

from treeopt.data import DataConfigError, load_config_datasets, load_split, prepare_split
from treeopt.data.scaling import apply_scaler, fit_scaler
from treeopt.data.spec import parse_entry
from treeopt.data.splits import make_split


@pytest.fixture(autouse=True)
def no_env_mirror(monkeypatch):
    monkeypatch.delenv("TREEOPT_DATA_MIRROR", raising=False)


def split_of(raw: dict, fmt="uci_csv", files=None):
    entry = {"task": "classification", "format": fmt, "split": raw,
             "files": files or {"data": {"path": "x"}}}
    return parse_entry("d", entry).split


def sizes(parts):
    return tuple(len(p) for p in parts)


def assert_partition(parts, n=None):
    allrows = np.concatenate(parts)
    assert len(np.unique(allrows)) == len(allrows), "train/val/test overlap"
    if n is not None:
        assert len(allrows) == n
    for p in parts:
        assert np.all(np.diff(p) > 0), "indices are sorted"


def test_provided_draws_20_percent_validation_from_train_only():
    part = np.array([0] * 1000 + [2] * 300, dtype=np.int8)
    parts = make_split(split_of({"protocol": "provided"}, files={"train": {"path": "a"}, "test": {"path": "b"}}),
                       part, None, seed=0)
    assert sizes(parts) == (800, 200, 300)
    assert_partition(parts, 1300)
    assert np.all(part[parts[1]] == 0) and np.all(part[parts[2]] == 2)
    other = make_split(split_of({"protocol": "provided"}), part, None, seed=1)
    assert not np.array_equal(parts[1], other[1])


def test_provided_validation_part_is_used_as_is():
    part = np.array([0] * 10 + [1] * 4 + [2] * 6, dtype=np.int8)
    train, val, test = make_split(split_of({"protocol": "provided"}), part, None, seed=5)
    assert train.tolist() == list(range(10)) and val.tolist() == list(range(10, 14))
    assert test.tolist() == list(range(14, 20))


def test_random_default_is_64_16_20_and_reproducible():
    part = np.full(1000, -1, dtype=np.int8)
    parts = make_split(split_of({"protocol": "random"}), part, None, seed=7)
    assert sizes(parts) == (640, 160, 200)
    assert_partition(parts, 1000)
    again = make_split(split_of({"protocol": "random"}), part, None, seed=7)
    assert all(np.array_equal(a, b) for a, b in zip(parts, again))


def test_random_with_test_count_as_connect4():
    part = np.full(67557, -1, dtype=np.int8)
    parts = make_split(split_of({"protocol": "random", "n_test": 12557}), part, None, seed=0)
    assert sizes(parts) == (44000, 11000, 12557)


def test_rows_protocol_uses_exact_ranges():
    part = np.full(20, -1, dtype=np.int8)
    split = split_of({"protocol": "rows", "train": [0, 10], "val": [10, 15], "test": [15, 20]})
    train, val, test = make_split(split, part, None, seed=3)
    assert (train.tolist(), val.tolist(), test.tolist()) == (list(range(10)), list(range(10, 15)), list(range(15, 20)))
    with pytest.raises(ValueError, match="past"):
        make_split(split, np.full(18, -1, dtype=np.int8), None, seed=0)


@pytest.mark.parametrize("test_source, extra", [
    ("provided", {}), ("holdout", {"n_test": 300}), ("rest", {}), ("rows", {"test_rows": [700, 1000]}),
    ("group_odd", {}), ("group_even", {}),
])
def test_rgf_training_points_come_from_a_pool_disjoint_from_test(test_source, extra):
    n = 1000
    part = np.array([0] * 800 + [2] * 200, dtype=np.int8)
    group = np.arange(n) // 10
    split = split_of({"protocol": "rgf", "n_train": 150, "n_val": 50, "test": test_source, **extra})
    runs = [make_split(split, part, group, seed) for seed in range(3)]
    for train, val, test in runs:
        assert sizes((train, val)) == (150, 50)
        assert_partition((train, val, test))
    expected_test = {
        "provided": 200, "holdout": 300, "rest": n - 200, "rows": 300, "group_odd": 500, "group_even": 500,
    }[test_source]
    assert len(runs[0][2]) == expected_test
    if test_source != "rest":
        # The test set is the same in every run; only the 2,000-style training draw changes.
        assert all(np.array_equal(runs[0][2], r[2]) for r in runs)
    assert not np.array_equal(runs[0][0], runs[1][0])
    if test_source == "group_odd":
        assert np.all(group[runs[0][2]] % 2 == 1) and np.all(group[runs[0][0]] % 2 == 0)


def test_rgf_pool_too_small_and_expected_test_size_warning():
    part = np.full(100, -1, dtype=np.int8)
    with pytest.raises(ValueError, match="pool of 100"):
        make_split(split_of({"protocol": "rgf", "n_train": 101, "test": "rest"}), part, None, 0)
    with pytest.warns(UserWarning, match="paper reports 99"):
        make_split(split_of({"protocol": "rgf", "n_train": 10, "test": "rest", "expect_test_size": 99}),
                   part, None, 0)


def test_scaling_is_fitted_on_training_rows_only():
    rng = np.random.default_rng(0)
    X_train, X_test = rng.normal(size=(50, 3)), rng.normal(5.0, 3.0, size=(20, 3))
    shift, scale = fit_scaler(X_train, "minmax")
    tr, te = apply_scaler(X_train, shift, scale), apply_scaler(X_test, shift, scale)
    np.testing.assert_allclose(tr.min(axis=0), 0)
    np.testing.assert_allclose(tr.max(axis=0), 1)
    assert te.max() > 1  # test rows are not refitted, so they may leave [0, 1]
    shift, scale = fit_scaler(X_train, "standard")
    np.testing.assert_allclose(apply_scaler(X_train, shift, scale).std(axis=0), 1)
    const = np.column_stack([np.ones(5), np.arange(5.0)])
    shift, scale = fit_scaler(const, "minmax")
    assert np.all(np.isfinite(apply_scaler(const, shift, scale)))
    g_shift, g_scale = fit_scaler(np.array([[0.0, 255.0], [10.0, 0.0]]), "global_minmax")
    assert g_shift.tolist() == [0.0, 0.0] and g_scale.tolist() == [255.0, 255.0]


def test_prepared_split_file_has_the_agreed_arrays_and_train_only_scaling(tmp_path):
    cfg = {"data": {"raw_dir": str(tmp_path / "raw"), "processed_dir": str(tmp_path / "p"),
                    "lock_file": str(tmp_path / "l.yaml")},
           "datasets": {"bc": {"task": "classification", "format": "sklearn",
                               "options": {"loader": "breast_cancer"}, "scale": "minmax"}}}
    path = prepare_split("bc", cfg, 2)
    assert path == tmp_path / "p" / "bc" / "split2.npz"
    with np.load(path) as z:
        assert {"X_train", "y_train", "X_val", "y_val", "X_test", "y_test"} <= set(z.files)
    s = load_split(path)
    assert (s.task, s.name, s.n_classes, s.n_features) == ("classification", "bc", 2, 30)
    np.testing.assert_allclose(s.X_train.min(axis=0), 0)
    np.testing.assert_allclose(s.X_train.max(axis=0), 1)
    assert s.X_train.dtype == np.float64 and s.y_train.dtype == np.int64
    # Scaling undone with the training rows' min/max gives back the raw features.
    from sklearn.datasets import load_breast_cancer
    raw = load_breast_cancer().data
    with np.load(path) as z:
        restored = s.X_test * z["scale_scale"] + z["scale_shift"]
    assert all(any(np.allclose(r, row) for row in raw) for r in restored[:5])
    X_all, y_all = s.train_val()
    assert len(X_all) == len(s.X_train) + len(s.X_val) == len(y_all)


def test_split_cache_is_reused_and_rebuilt_when_the_entry_changes(tmp_path):
    entry = {"task": "classification", "format": "sklearn", "options": {"loader": "wine"}}
    cfg = {"data": {"processed_dir": str(tmp_path / "p"), "raw_dir": str(tmp_path / "r"),
                    "lock_file": str(tmp_path / "l")}, "datasets": {"wine": entry}}
    path = prepare_split("wine", cfg, 0)
    mtime = path.stat().st_mtime_ns
    assert prepare_split("wine", cfg, 0).stat().st_mtime_ns == mtime
    entry["scale"] = "standard"
    prepare_split("wine", cfg, 0)
    np.testing.assert_allclose(load_split(path).X_train.mean(axis=0), 0, atol=1e-12)


# ---------------------------------------------------------------------- validation


BASE = {"task": "classification", "format": "uci_csv", "url": "https://example.org/x.data"}


@pytest.mark.parametrize("entry, key", [
    ({**BASE, "colour": 1}, "colour"),
    ({**BASE, "split": {"protocol": "random", "n_tst": 3}}, "n_tst"),
    ({**BASE, "options": {"delimeter": ";"}}, "delimeter"),
    ({"task": "classification", "format": "uci_csv", "files": {"data": {"url": "u", "md5": "x"}}}, "md5"),
])
def test_unknown_keys_are_named(entry, key):
    with pytest.raises(DataConfigError, match=f"unknown key '{key}'") as err:
        load_config_datasets({"datasets": {"bad": entry}})
    assert "'bad'" in str(err.value)


@pytest.mark.parametrize("entry, message", [
    ({**BASE, "task": "ranking"}, "task must be"),
    ({**BASE, "format": "arff"}, "format must be"),
    ({**BASE, "split": {"protocol": "kfold"}}, "split.protocol"),
    ({**BASE, "split": {"protocol": "rgf", "test": "holdout"}}, "needs n_test"),
    ({**BASE, "split": {"protocol": "rows", "train": [5, 2], "test": [5, 6]}}, r"\[start, stop\]"),
    ({**BASE, "split": {"protocol": "random", "val_fraction": 1.5}}, "val_fraction"),
    ({**BASE, "sha256": "abc"}, "64 hex"),
    ({**BASE, "scale": "zscore"}, "scale must be"),
    ({**BASE, "files": {"data": {"url": "u"}}}, "not both"),
    ({"task": "classification", "format": "uci_csv"}, "needs url"),
    ({**BASE, "format": "idx", "url": None, "files": {"images": {"url": "u"}}}, "role"),
    ({**BASE, "task": "regression", "options": {"positive_labels": [1]}}, "positive_labels"),
])
def test_invalid_entries_give_clear_errors(entry, message):
    with pytest.raises(DataConfigError, match=message):
        parse_entry("bad", entry)


def test_single_file_entry_becomes_role_data_and_defaults_apply():
    spec = parse_entry("u", {**BASE, "sha256": "A" * 64})
    assert list(spec.files) == ["data"] and spec.files["data"].sha256 == ("a" * 64,)
    assert spec.files["data"].filename == "x.data"
    assert spec.split["protocol"] == "random" and spec.split["val_fraction"] == 0.2
    assert spec.scale == "none" and spec.options["delimiter"] == ","


def test_the_repository_config_validates():
    import pathlib

    import yaml

    config = yaml.safe_load((pathlib.Path(__file__).parents[1] / "config.yaml").read_text())
    specs = load_config_datasets(config)
    required = {"mnist", "sensit", "connect4", "protein", "letter", "satimage", "usps", "pendigits",
                "covtype", "houses", "ct_slices", "adult", "letter_am", "mnist_oe", "musk2", "nursery",
                "waveform40", "fashion_mnist", "digits", "wine", "breast_cancer"}
    required |= {f"rgf_synth_q{q}_{t}" for q in (2, 4, 16, 64) for t in ("reg", "cls")}
    assert required <= set(specs)
    for spec in specs.values():
        for fs in spec.files.values():
            assert fs.urls, f"{spec.name} {fs.role} has no canonical URL"
