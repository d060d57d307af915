"""Issue 12, cases 3-5 (data side): parsers check what they read; the processed cache follows the raw file's
content; `data status` does not call a missing file cached; killed writers' temporaries are cleaned."""

import gzip
import os
import time
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treeopt.data import (ChecksumError, DataFormatError, DataUnavailableError, DataWarning, availability,
                          load_split, prepare_split)
from treeopt.data.cli import main as data_main
from treeopt.data.cli import status_rows
from treeopt.data.prepare import clean_stale_temporaries

RNG = np.random.default_rng(0)
_X = RNG.normal(size=(40, 3)).round(3)
_Y = (_X[:, 0] > 0).astype(int)
CSV = "".join(f"{a},{b},{c},{'yes' if y else 'no'}\n" for (a, b, c), y in zip(_X, _Y))
LIBSVM = "".join(f"{y} 1:{a} 2:{b} 3:{c}\n" for (a, b, c), y in zip(_X, _Y))


def config(tmp_path, entries):
    return {"data": {"mirror": None, "raw_dir": str(tmp_path / "raw"), "processed_dir": str(tmp_path / "processed"),
                     "lock_file": str(tmp_path / "lock.yaml")}, "datasets": entries}


def local(tmp_path, text, fmt, name="mine.txt", **extra):
    path = tmp_path / name
    path.write_text(text)
    return {"task": "classification", "format": fmt, "path": str(path), "split": "random", **extra}


def processed(tmp_path):
    root = tmp_path / "processed"
    return sorted(p.name for p in root.rglob("*.npz")) if root.exists() else []


# ------------------------------------------------------------------------------------------------ case 3
def test_libsvm_file_declared_uci_csv_stops_naming_file_and_format(tmp_path):
    """Before: prepared with exit 0 into X of shape (n, 0) and one class per row."""
    cfg = config(tmp_path, {"svm": local(tmp_path, LIBSVM, "uci_csv", "svm.txt")})
    with pytest.warns(DataWarning), pytest.raises(DataFormatError) as err:
        prepare_split("svm", cfg, 0)
    message = str(err.value)
    assert str(tmp_path / "svm.txt") in message and "'uci_csv'" in message and "LIBSVM" in message
    assert processed(tmp_path) == []
    # the command line says so in one line, exit code 1
    (tmp_path / "c.yaml").write_text(__import__("yaml").safe_dump(cfg))
    assert data_main(["prepare", "svm", "--config", str(tmp_path / "c.yaml")]) == 1


def test_csv_declared_libsvm_stops_naming_file_and_format(tmp_path):
    cfg = config(tmp_path, {"csv": local(tmp_path, CSV, "libsvm", "c.csv")})
    with pytest.warns(DataWarning), pytest.raises(DataFormatError, match=r"format 'libsvm'.*c\.csv.*not LIBSVM"):
        prepare_split("csv", cfg, 0)
    assert processed(tmp_path) == []


@pytest.mark.parametrize("text, message", [
    (CSV + "1.0,2.0,3.0,4.0,yes\n", "line 41 has 5 fields, the first line 4"),
    (CSV.replace("\n", "\n1.0,no\n", 1), "line 2 has 2 fields, the first line 4"),
    (CSV.replace("\n", "\n1.0,2.0,,no\n", 1), "could not convert string to float: .."),
    ("".join(f"{a},{i}\n" for i, a in enumerate(_X[:, 0])), "distinct values in 40 rows"),
])
def test_rows_of_other_widths_and_labels_that_are_not_labels(tmp_path, text, message):
    cfg = config(tmp_path, {"bad": local(tmp_path, text, "uci_csv", "bad.csv")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        with pytest.raises(DataFormatError, match=message) as err:
            prepare_split("bad", cfg, 0)
    assert str(tmp_path / "bad.csv") in str(err.value) and "uci_csv" in str(err.value)


def test_good_files_still_parse(tmp_path):
    cfg = config(tmp_path, {"csv": local(tmp_path, CSV, "uci_csv", "c.csv"),
                            "svm": local(tmp_path, LIBSVM, "libsvm", "s.txt")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        a, b = load_split(prepare_split("csv", cfg, 0)), load_split(prepare_split("svm", cfg, 0))
    assert a.X_train.shape[1] == b.X_train.shape[1] == 3
    assert np.array_equal(a.X_test, b.X_test)


# ------------------------------------------------------------------------------------------------ case 4
def test_changed_local_file_without_sha256_is_parsed_again(tmp_path):
    """Before: the old parsed cache was kept after the file changed."""
    cfg = config(tmp_path, {"mine": local(tmp_path, CSV, "uci_csv", "m.csv")})
    with pytest.warns(DataWarning, match="pinned"):
        first = load_split(prepare_split("mine", cfg, 0))
    assert availability("mine", cfg) == "cached"
    changed = CSV.replace("yes", "si")  # other class names; a size change too
    (tmp_path / "m.csv").write_text(changed)
    with pytest.warns(DataWarning, match="changed since its sha256 was pinned"):
        second = load_split(prepare_split("mine", cfg, 0))
    assert list(first.classes) == ["no", "yes"] and list(second.classes) == ["no", "si"]
    # same size, new content, mtime moved: hashed again
    same_size = CSV.replace("yes", "abc")
    assert len(same_size.encode()) == len(CSV.encode())
    (tmp_path / "m.csv").write_text(same_size)
    os.utime(tmp_path / "m.csv", ns=(time.time_ns() + 10**9,) * 2)
    with pytest.warns(DataWarning):
        third = load_split(prepare_split("mine", cfg, 0))
    assert list(third.classes) == ["abc", "no"]
    # nothing changed: the cache is used (no warning, no new pin)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)
        again = load_split(prepare_split("mine", cfg, 0))
    assert np.array_equal(again.X_train, third.X_train)


def test_cache_follows_the_entrys_settings(tmp_path):
    entry = local(tmp_path, CSV, "uci_csv", "m.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        a = load_split(prepare_split("mine", config(tmp_path, {"mine": entry}), 0))
        b = load_split(prepare_split("mine", config(tmp_path, {"mine": {**entry, "scale": "standard"}}), 0))
    assert not np.allclose(a.X_train, b.X_train)


# ------------------------------------------------------------------------------------------------ case 5
def test_status_does_not_call_a_missing_local_file_cached(tmp_path):
    cfg = config(tmp_path, {"mine": local(tmp_path, CSV, "uci_csv", "m.csv")})
    with pytest.warns(DataWarning):
        prepare_split("mine", cfg, 0)
    assert availability("mine", cfg) == "cached"
    (tmp_path / "m.csv").unlink()
    assert availability("mine", cfg) == "missing"  # before: "cached"
    assert status_rows(cfg)[0]["availability"] == "missing"
    with pytest.raises(DataUnavailableError, match="not found"):
        prepare_split("mine", cfg, 0)


def test_prepare_out_never_overwrites_a_file_it_did_not_write(tmp_path):
    cfg = config(tmp_path, {"mine": local(tmp_path, CSV, "uci_csv", "m.csv")})
    (tmp_path / "c.yaml").write_text(__import__("yaml").safe_dump(cfg))
    precious = tmp_path / "thesis.tex"
    precious.write_text("mine")
    args = ["prepare", "mine", "--config", str(tmp_path / "c.yaml"), "--out"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        assert data_main([*args, str(precious)]) == 1
        assert precious.read_text() == "mine"
        assert data_main([*args, str(tmp_path / "s.npz")]) == 0
        assert data_main([*args, str(tmp_path / "s.npz")]) == 0  # its own earlier output may be replaced
    assert load_split(tmp_path / "s.npz").X_train.shape[1] == 3


def test_temporaries_of_killed_writers_are_removed_and_nothing_else(tmp_path):
    folder = tmp_path / "processed" / "mine"
    folder.mkdir(parents=True)
    dead = folder / "split0.p999999999.abcd1234.tmp.npz"  # no such pid
    alive = folder / f"split1.p{os.getpid()}.abcd1234.tmp.npz"
    other = folder / "notes.tmp.npz"
    for p in (dead, alive, other):
        p.write_bytes(b"x")
    raw = tmp_path / "raw" / "mine"
    raw.mkdir(parents=True)
    download = raw / "mine.csv.p999999999.xy12ab34.part"
    kept = raw / "mine.csv"
    for p in (download, kept):
        p.write_bytes(b"x")
    assert clean_stale_temporaries(tmp_path / "processed", tmp_path / "raw") == [dead, download]
    assert alive.exists() and other.exists() and kept.exists()


# ------------------------------------------------------------------------------- fuzzing the readers
def _flip(blob, flips, cut):
    blob = bytearray(blob)
    for pos, xor in flips:
        if blob:
            blob[pos % len(blob)] ^= xor
    return bytes(blob[:cut] if cut is not None else blob)


def _idx(array, code):
    header = bytes([0, 0, code, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


IMAGES = _idx((RNG.random((30, 4, 4)) * 255).astype(np.uint8), 0x08)
LABELS = _idx(np.arange(30, dtype=np.uint8) % 3, 0x08)
FUZZ_FORMATS = {
    "uci_csv": lambda tmp, blob: {"path": str(_put(tmp / "f.csv", blob))},
    "libsvm": lambda tmp, blob: {"path": str(_put(tmp / "f.svm", blob))},
    "gz_csv": lambda tmp, blob: {"path": str(_put(tmp / "f.csv.gz", blob))},
}


def _put(path, blob):
    path.write_bytes(blob)
    return path


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fmt=st.sampled_from(["uci_csv", "libsvm", "gz_csv", "idx"]),
       flips=st.lists(st.tuples(st.integers(0, 5000), st.integers(1, 255)), max_size=3),
       cut=st.one_of(st.none(), st.integers(0, 2000)))
def test_damaged_raw_files_give_a_clean_error_or_a_sound_data_set(tmp_path, fmt, flips, cut):
    if fmt == "idx":
        files = {"train_images": _put(tmp_path / "i", _flip(IMAGES, flips, cut)), "train_labels": _put(
            tmp_path / "l", LABELS)}
        entry = {"task": "classification", "format": "idx", "split": "random",
                 "files": {r: {"path": str(p)} for r, p in files.items()}}
    else:
        clean = gzip.compress(CSV.encode(), mtime=0) if fmt == "gz_csv" else (LIBSVM if fmt == "libsvm"
                                                                                else CSV).encode()
        entry = {"task": "classification", "format": "uci_csv" if fmt == "gz_csv" else fmt, "split": "random",
                 **FUZZ_FORMATS[fmt](tmp_path, _flip(clean, flips, cut))}
    cfg = config(tmp_path, {"d": entry})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            split = load_split(prepare_split("d", cfg, 0))
        except (DataFormatError, ChecksumError) as exc:
            assert "'d'" in str(exc) or str(tmp_path) in str(exc)
            return
    for part in ("train", "val", "test"):
        X, y = getattr(split, f"X_{part}"), getattr(split, f"y_{part}")
        assert X.ndim == 2 and X.shape[0] == y.shape[0] and np.all(np.isfinite(X))
    assert split.X_train.shape[1] > 0 and split.n_classes >= 2


def test_damaged_split_files_are_a_clear_error(tmp_path):
    cfg = config(tmp_path, {"mine": local(tmp_path, CSV, "uci_csv", "m.csv")})
    with pytest.warns(DataWarning):
        good = prepare_split("mine", cfg, 0).read_bytes()
    np.save(tmp_path / "a.npy", np.arange(3))
    (tmp_path / "half.npz").write_bytes(good[: len(good) // 2])
    np.savez(tmp_path / "odd.npz", X_train=np.ones((3, 2)), y_train=np.ones(2), X_val=np.ones((0, 2)),
             y_val=np.ones(0), X_test=np.ones((1, 2)), y_test=np.ones(1), task="classification", name="x")
    for name in ("a.npy", "half.npz", "odd.npz"):
        with pytest.raises(DataFormatError, match=name):
            load_split(tmp_path / name)
