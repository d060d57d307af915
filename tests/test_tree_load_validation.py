"""Issue 12, case 2: `Tree.load` checks every array before a kernel sees it; foreign or damaged files give one
clear ValueError. Loads that could crash the interpreter run in a subprocess, so a crash fails the test
instead of killing the test session."""

import io
import json
import pickle
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treeopt.trees import Tree, load_trees, random_tree, save_trees


def _oblique_tree():
    rng = np.random.default_rng(0)
    left = [1, 3, -1, -1, -1]
    right = [2, 4, -1, -1, -1]
    W = np.zeros((5, 4))
    W[0] = rng.normal(size=4)
    W[1, 2] = 1.0  # axis-aligned on feature 2
    return Tree(left, right, W, [0.1, 0.3, 0, 0, 0], rng.normal(size=(5, 3)), value_kind="log_scores")


def _arrays(tree):
    return {k: np.array(v) for k, v in tree.to_arrays(prefix="t0_").items()}


def _write(path, arrays, n_trees=1):
    np.savez(path, n_trees=np.array(n_trees), **arrays)
    return path


X = np.random.default_rng(1).normal(size=(50, 4))


def test_column_index_beyond_n_features_is_refused(tmp_path):
    """The issue's crash: a CSR column index past n_features read out of bounds in the kernel."""
    a = _arrays(_oblique_tree())
    a["t0_w_indices"] = a["t0_w_indices"].copy()
    a["t0_w_indices"][1] = 10**6
    with pytest.raises(ValueError, match=r"w_indices must lie in \[0, 4\)"):
        Tree.load(_write(tmp_path / "bad.npz", a))


@pytest.mark.parametrize("key, change, message", [
    ("t0_depth", lambda v: v + 1, "depth"),
    ("t0_left", lambda v: np.array([1, 3, -1, -1, 0]), "left"),          # root as a child
    ("t0_left", lambda v: np.array([1, 3, -1, 4, -1]), "one child"),     # leaf with one link
    ("t0_left", lambda v: np.array([1, 1, -1, -1, -1]), "parents"),      # node 1 twice, node 3 never
    ("t0_left", lambda v: np.array([1, 3, -7, -1, -1]), "child id must be -1"),
    ("t0_left", lambda v: np.array([1, 3, -1, -1, 99]), "child id must be -1"),
    ("t0_left", lambda v: v[:4], "right has shape"),
    ("t0_left", lambda v: v.astype(np.float64), "integer array"),
    ("t0_left", lambda v: np.array(["a"] * 5), "integer array"),
    ("t0_w_indptr", lambda v: v[::-1].copy(), "w_indptr"),
    ("t0_w_indptr", lambda v: v[:-1], "w_indptr"),
    ("t0_w_indptr", lambda v: v + 1, "w_indptr"),
    ("t0_w_indices", lambda v: v[:-1], "entries"),
    ("t0_w_indices", lambda v: -v - 1, "w_indices must lie"),
    ("t0_w_data", lambda v: v * np.nan, "w_data contains NaN"),
    ("t0_bias", lambda v: v[:3], "bias has shape"),
    ("t0_bias", lambda v: np.full(5, np.inf), "bias contains"),
    ("t0_value", lambda v: v[:, :0], "value has shape"),
    ("t0_value", lambda v: v.ravel(), "value has shape"),
    ("t0_value", lambda v: v * np.nan, "value contains NaN"),
    ("t0_feature", lambda v: np.array([-1, 7, -2, -2, -2]), "feature"),
    ("t0_feature", lambda v: np.array([-1, 2, -2, -1, -2]), "feature must be -2 at every leaf"),
    ("t0_feature", lambda v: np.array([-1, 1, -2, -2, -2]), "unit weight row"),
    ("t0_n_samples", lambda v: v - 5, "n_samples"),
    ("t0_meta", lambda v: np.array("{not json"), "JSON"),
    ("t0_meta", lambda v: np.array(json.dumps({"format_version": 1, "value_kind": "log_scores",
                                               "x_dtype": "float64", "n_features": 2})), "w_indices must lie"),
    ("t0_meta", lambda v: np.array(json.dumps({"format_version": 9})), "format version 9"),
    ("t0_meta", lambda v: np.arange(3), "JSON string"),
])
def test_each_inconsistent_array_is_named(tmp_path, key, change, message):
    a = _arrays(_oblique_tree())
    a[key] = change(a[key])
    with pytest.raises(ValueError, match=message) as err:
        Tree.load(_write(tmp_path / "bad.npz", a))
    assert str(tmp_path / "bad.npz") in str(err.value)


def test_a_cycle_with_one_parent_each_is_refused(tmp_path):
    """Every non-root node has exactly one parent, yet node 3 is its own child (with 4): not a tree."""
    a = _arrays(Tree([1, -1, -1], [2, -1, -1], np.zeros((3, 1)), np.zeros(3), np.ones((3, 2))))
    a.update(t0_left=np.array([1, -1, -1, 4, -1]), t0_right=np.array([2, -1, -1, 3, -1]),
             t0_feature=np.array([-1, -2, -2, -1, -2]), t0_depth=np.array([0, 1, 1, 2, 3]),
             t0_n_samples=np.full(5, -1), t0_bias=np.zeros(5), t0_value=np.ones((5, 2)),
             t0_w_indptr=np.zeros(6, dtype=np.int64))
    with pytest.raises(ValueError, match=r"nodes \[3, 4\] are not reachable from the root .*cycle"):
        Tree.load(_write(tmp_path / "cycle.npz", a))


def test_files_from_other_tools_get_one_clear_error(tmp_path):
    good = tmp_path / "good.npz"
    _oblique_tree().save(good)
    np.save(tmp_path / "array.npy", np.arange(10))
    np.savez(tmp_path / "other.npz", X=np.ones((3, 2)), y=np.arange(3))
    np.savez(tmp_path / "part.npz", n_trees=np.array(1), t0_left=np.array([-1]))
    (tmp_path / "model.pkl").write_bytes(pickle.dumps({"tree": [1, 2, 3]}))
    with open(tmp_path / "objects.npz", "wb") as fh:
        np.savez(fh, n_trees=np.array(1), **{**_arrays(_oblique_tree()),
                                             "t0_left": np.array([{"a": 1}] * 5, dtype=object)})
    (tmp_path / "text.npz").write_text("left,right\n1,2\n")
    blob = good.read_bytes()
    (tmp_path / "truncated.npz").write_bytes(blob[: len(blob) // 2])
    corrupt = bytearray(blob)
    corrupt[len(blob) // 3] ^= 0xFF
    (tmp_path / "corrupt.npz").write_bytes(bytes(corrupt))
    (tmp_path / "empty.npz").write_bytes(b"")
    expected = {
        "array.npy": "single array", "other.npz": "no array 'n_trees'", "part.npz": "missing array",
        "model.pkl": "not a readable tree file", "objects.npz": "pickle|Object arrays",
        "text.npz": "not a readable tree file", "truncated.npz": "not a readable tree file",
        "corrupt.npz": ".", "empty.npz": "not a readable tree file",
    }
    for name, message in expected.items():
        with pytest.raises(ValueError, match=message) as err:
            Tree.load(tmp_path / name)
        assert str(tmp_path / name) in str(err.value), name


def test_n_trees_must_be_sane(tmp_path):
    a = _arrays(_oblique_tree())
    for bad in (np.array(10**9), np.array(-1), np.array([1, 2]), np.array(1.5)):
        with pytest.raises(ValueError, match="n_trees"):
            load_trees(_write(tmp_path / "n.npz", a, n_trees=bad))


def test_valid_files_still_load_identically(tmp_path):
    trees = [_oblique_tree(), random_tree(6, 5, 3, random_state=2), random_tree(3, 5, 2, oblique=False, random_state=1)]
    save_trees(tmp_path / "f.npz", trees)
    for a, b in zip(trees, load_trees(tmp_path / "f.npz")):
        Xp = np.random.default_rng(0).normal(size=(30, a.n_features))
        assert np.array_equal(a.apply(Xp), b.apply(Xp)) and np.array_equal(a.depth, b.depth)


def test_constructor_checks_sparse_index_ranges_too():
    import scipy.sparse as sp

    W = sp.csr_matrix((np.array([1.0]), np.array([9]), np.array([0, 1, 1, 1])), shape=(3, 2))
    with pytest.raises(ValueError, match="weights"):
        Tree([1, -1, -1], [2, -1, -1], W, np.zeros(3), np.ones((3, 2)))


# ------------------------------------------------------------------ fuzzing: flips, truncation, wrong values

_GOOD = io.BytesIO()
np.savez(_GOOD, n_trees=np.array(1), **_arrays(_oblique_tree()))  # what save_trees writes
GOOD_BYTES = _GOOD.getvalue()


def _outcome(blob, tmp_path):
    path = tmp_path / "fuzz.npz"
    path.write_bytes(blob)
    try:
        tree = Tree.load(path)
    except ValueError:
        return None
    return tree


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flips=st.lists(st.tuples(st.integers(0, len(GOOD_BYTES) - 1), st.integers(1, 255)), min_size=1, max_size=4),
       cut=st.one_of(st.none(), st.integers(0, len(GOOD_BYTES))))
def test_byte_flips_and_truncations_give_a_clean_error_or_the_same_tree(tmp_path, flips, cut):
    blob = bytearray(GOOD_BYTES)
    for pos, xor in flips:
        blob[pos] ^= xor
    if cut is not None:
        blob = blob[:cut]
    tree = _outcome(bytes(blob), tmp_path)
    if tree is not None:  # accepted: then it is a valid tree the kernels can walk, and usually the same one
        ref = _oblique_tree()
        assert tree.apply(X).shape == (50,)
        assert np.all(tree.is_leaf[tree.apply(X)])
        proba = tree.predict_proba(X) if tree.value_kind != "regression" else tree.predict_value(X)
        assert np.all(np.isfinite(proba))
        same = all(np.array_equal(getattr(tree, k), getattr(ref, k)) for k in ("left", "right", "feature", "bias"))
        if same and (tree.W != ref.W).nnz == 0 and np.array_equal(tree.value, ref.value):
            assert np.array_equal(tree.predict_proba(X), ref.predict_proba(X))


_INT_KEYS = ["t0_left", "t0_right", "t0_feature", "t0_depth", "t0_w_indptr", "t0_w_indices", "t0_n_samples"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(_INT_KEYS), pos=st.integers(0, 20),
       value=st.one_of(st.integers(-3, 8), st.integers(-2**62, 2**62)))
def test_wrong_values_in_valid_zips_are_refused_or_harmless(tmp_path, key, pos, value):
    """CRC checks catch most byte flips; here the zip is valid and an array holds a wrong number."""
    a = _arrays(_oblique_tree())
    arr = a[key].copy()
    if arr.size:
        arr[pos % arr.size] = value
    a[key] = arr
    path = _write(tmp_path / "v.npz", a)
    try:
        tree = Tree.load(path)
    except ValueError:
        return
    leaves = tree.apply(X)  # must not crash or loop: the validation let it through
    assert np.all(tree.is_leaf[leaves])
    tree.decision_path(X)
    tree.stats(X)


def test_fuzzed_loads_never_crash_the_interpreter(tmp_path):
    """Many damaged files loaded and used in a child process: it must exit normally (a segfault or abort
    would show as a negative return code)."""
    code = textwrap.dedent(f"""
        import io, sys, numpy as np
        from treeopt.trees import Tree
        rng = np.random.default_rng(0)
        good = open({str(tmp_path / 'good.npz')!r}, 'rb').read()
        X = rng.normal(size=(20, 4))
        outcomes = {{'error': 0, 'loaded': 0}}
        for i in range(400):
            blob = bytearray(good)
            for _ in range(rng.integers(1, 4)):
                blob[rng.integers(len(blob))] ^= int(rng.integers(1, 256))
            if rng.random() < 0.3:
                blob = blob[: rng.integers(len(blob))]
            path = {str(tmp_path / 'f.npz')!r}
            open(path, 'wb').write(bytes(blob))
            try:
                t = Tree.load(path)
            except ValueError:
                outcomes['error'] += 1
                continue
            t.apply(X); t.stats(X)
            outcomes['loaded'] += 1
        print(outcomes)
    """)
    _oblique_tree().save(tmp_path / "good.npz")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert "'error'" in out.stdout


def test_other_exceptions_do_not_escape_from_a_damaged_zip_member(tmp_path):
    """A zip whose member is compressed and damaged (np.savez_compressed): zlib errors become ValueError."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for k, v in {"n_trees": np.array(1), **_arrays(_oblique_tree())}.items():
            member = io.BytesIO()
            np.save(member, v)
            zf.writestr(f"{k}.npy", member.getvalue())
    blob = bytearray(buf.getvalue())
    for pos in range(40, len(blob) - 200, 97):
        damaged = bytearray(blob)
        damaged[pos] ^= 0x5A
        (tmp_path / "z.npz").write_bytes(bytes(damaged))
        try:
            Tree.load(tmp_path / "z.npz")
        except ValueError:
            pass
