"""Parsers from raw files to one table ``(X, y, part, group)``.

Each format lists the ``options:`` it accepts (with defaults) and the file roles it reads.
Roles name the part a file's rows belong to: ``data`` (no split given), ``train``,
``val``, ``test``; IDX files come in image/label pairs (``train_images``,
``train_labels``, ...). A split protocol later turns parts into train/val/test rows.
"""

from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from .streams import open_stream, read_bytes
from .table import PART_CODES, Table

PLAIN_ROLES = tuple(PART_CODES)
IDX_ROLES = tuple(f"{p}_{kind}" for p in PLAIN_ROLES for kind in ("images", "labels"))


@dataclass(frozen=True)
class FormatInfo:
    reader: Callable[[Mapping[str, Path], Mapping[str, Any]], Table] | None
    options: dict[str, Any]
    roles: tuple[str, ...] | None
    needs_files: bool = True
    doc: str = ""


def _concat_parts(role_arrays: list[tuple[str, np.ndarray, np.ndarray]]):
    X = np.concatenate([a for _, a, _ in role_arrays], axis=0)
    y = np.concatenate([b for _, _, b in role_arrays], axis=0)
    part = np.concatenate(
        [np.full(len(b), PART_CODES[r], dtype=np.int8) for r, _, b in role_arrays]
    )
    return X, y, part


def _ordered(paths: Mapping[str, Path], roles=PLAIN_ROLES) -> list[tuple[str, Path]]:
    return [(r, paths[r]) for r in roles if r in paths]


# -------------------------------------------------------------------------------- libsvm


def read_libsvm(paths: Mapping[str, Path], options: Mapping[str, Any]) -> Table:
    """LIBSVM/svmlight text: ``label idx:value ...``; absent indices are zeros.

    ``zero_based: auto`` treats the indices as 1-based unless some file uses index 0
    (scikit-learn's rule, applied to all files together so they share columns);
    ``n_features`` fixes the width when the highest index is absent from every row.
    """
    from sklearn.datasets import load_svmlight_files

    zero_based = options["zero_based"]
    if zero_based not in ("auto", True, False):
        raise ValueError(f"options.zero_based must be auto, true or false, got {zero_based!r}")
    ordered = _ordered(paths)
    names = ", ".join(str(p) for _, p in ordered)
    with contextlib.ExitStack() as stack:
        streams = [stack.enter_context(open_stream(p, options.get("member"))) for _, p in ordered]
        try:
            loaded = load_svmlight_files(
                streams, n_features=options["n_features"], dtype=np.float64, zero_based=zero_based
            )
        except ValueError as exc:
            raise ValueError(f"{names}: not LIBSVM/svmlight text ('label idx:value ...' per line): {exc}") from None
    if loaded[0].shape[1] == 0:
        raise ValueError(f"{names}: no 'idx:value' feature entries on any line; not LIBSVM text")
    arrays = [
        (role, loaded[2 * i].toarray(), np.asarray(loaded[2 * i + 1]))
        for i, (role, _) in enumerate(ordered)
    ]
    X, y, part = _concat_parts(arrays)
    return Table(X, y, part)


# ----------------------------------------------------------------------------------- idx

_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def parse_idx(blob: bytes, name: str = "IDX file") -> np.ndarray:
    """Parse one IDX file (LeCun's MNIST format): magic ``00 00 type ndim``, big-endian dims."""
    if len(blob) < 4 or blob[0] != 0 or blob[1] != 0 or blob[2] not in _IDX_DTYPES:
        raise ValueError(f"{name}: not an IDX file (bad magic {blob[:4].hex()})")
    ndim = blob[3]
    header = 4 + 4 * ndim
    if len(blob) < header:
        raise ValueError(f"{name}: truncated IDX header")
    dims = tuple(int(d) for d in np.frombuffer(blob, dtype=">u4", count=ndim, offset=4))
    dtype = np.dtype(_IDX_DTYPES[blob[2]])
    expected = int(np.prod(dims)) * dtype.itemsize
    if len(blob) - header != expected:
        raise ValueError(
            f"{name}: IDX header says {dims} ({expected} bytes of data) but the file has "
            f"{len(blob) - header}; the file is truncated or corrupt"
        )
    return np.frombuffer(blob, dtype=dtype, offset=header).reshape(dims).astype(dtype.newbyteorder("="))


def pool_images(images: np.ndarray, k: int) -> np.ndarray:
    """Average non-overlapping ``k x k`` blocks (the RGF paper's "MNIST shrunk" 7x7)."""
    n, h, w = images.shape
    if h % k or w % k:
        raise ValueError(f"options.pool={k} does not divide the {h}x{w} images")
    return images.reshape(n, h // k, k, w // k, k).mean(axis=(2, 4))


def read_idx(paths: Mapping[str, Path], options: Mapping[str, Any]) -> Table:
    """Pairs of IDX image and label files per part (``train_images``/``train_labels``, ...)."""
    pool = int(options["pool"])
    arrays = []
    for part in PLAIN_ROLES:
        img_role, lab_role = f"{part}_images", f"{part}_labels"
        if img_role not in paths and lab_role not in paths:
            continue
        if img_role not in paths or lab_role not in paths:
            raise ValueError(f"IDX files come in pairs: {part} needs both {img_role} and {lab_role}")
        images = parse_idx(read_bytes(paths[img_role]), str(paths[img_role]))
        labels = parse_idx(read_bytes(paths[lab_role]), str(paths[lab_role]))
        if labels.ndim != 1 or len(labels) != len(images):
            raise ValueError(
                f"{paths[lab_role]}: {labels.shape} labels do not match {len(images)} images"
            )
        if pool > 1:
            if images.ndim != 3:
                raise ValueError("options.pool needs 3-D IDX images (n, height, width)")
            images = pool_images(images.astype(np.float64), pool)
        arrays.append((part, images.reshape(len(images), -1), labels))
    if not arrays:
        raise ValueError(f"no IDX image/label pair among roles {sorted(paths)}")
    X, y, part = _concat_parts(arrays)
    return Table(X, y, part)


# ----------------------------------------------------------------------------------- csv


def _column_index(ref, names: list[str], what: str) -> int:
    if isinstance(ref, bool):
        raise ValueError(f"options.{what}: {ref!r} is not a column")
    if isinstance(ref, int):
        if not -len(names) <= ref < len(names):
            raise ValueError(f"options.{what}: column {ref} out of range for {len(names)} columns")
        return ref % len(names)
    if ref in names:
        return names.index(ref)
    raise ValueError(f"options.{what}: no column named {ref!r}; columns: {names[:12]}...")


def _first_line(path: Path, options: Mapping[str, Any]) -> list[str]:
    comment = options["comment"]
    with open_stream(path, options.get("member")) as fh:
        for raw in io.TextIOWrapper(fh, encoding="utf-8", errors="replace"):
            line = raw.strip()
            if line and not (comment and line.startswith(comment)):
                return [c.strip() for c in line.split(options["delimiter"])]
    raise ValueError(f"{path}: no data lines")


def _check_widths(path: Path, options: Mapping[str, Any], n_fields: int) -> None:
    """Raise naming the first line whose number of fields differs from the first line's (a diagnosis run
    only when parsing failed, so the fast path stays pandas')."""
    comment, delimiter = options["comment"], options["delimiter"]
    with open_stream(path, options.get("member")) as fh:
        for number, raw in enumerate(io.TextIOWrapper(fh, encoding="utf-8", errors="replace"), start=1):
            line = raw.strip()
            if not line or (comment and line.startswith(comment)):
                continue
            width = len(line.split(delimiter))
            if width != n_fields:
                raise ValueError(f"{path}: line {number} has {width} fields, the first line {n_fields}; rows "
                                 f"must have equal widths")


def read_delimited(paths: Mapping[str, Path], options: Mapping[str, Any]) -> Table:
    """Delimited text (UCI ``.data``, PMLB ``.tsv``): one row per line.

    Categorical columns are one-hot encoded in place, with categories taken from all
    files together (sorted), so train and test share columns; a missing-value marker
    such as ``'?'`` is kept as a category of its own. Other feature columns must parse as
    numbers.
    """
    import pandas as pd

    ordered = _ordered(paths)
    first = _first_line(ordered[0][1], options)
    if len(first) < 2:
        looks = " (it looks like LIBSVM text: 'label idx:value ...')" if re.search(r"\s\d+:\S", first[0]) else ""
        raise ValueError(
            f"{ordered[0][1]}: the first line has a single field when split at {options['delimiter']!r}, so "
            f"there is no feature column beside the label; is the file in another format{looks}?"
        )
    names = first if options["header"] else [str(i) for i in range(len(first))]
    label = _column_index(options["label_column"], names, "label_column")
    drop = {_column_index(c, names, "drop_columns") for c in options["drop_columns"] or []}
    group = (
        _column_index(options["group_column"], names, "group_column")
        if options["group_column"] is not None else None
    )
    cat_opt = options["categorical"]
    feature_cols = [i for i in range(len(names)) if i not in drop | {label, group}]
    if cat_opt == "all":
        categorical = set(feature_cols)
    elif isinstance(cat_opt, str):
        raise ValueError(f"options.categorical must be 'all' or a list of columns, got {cat_opt!r}")
    else:
        categorical = {_column_index(c, names, "categorical") for c in cat_opt or []}
    dtypes = {i: (str if (i in categorical or i == label) else np.float64) for i in range(len(names))}

    frames = []
    for role, path in ordered:
        with open_stream(path, options.get("member")) as fh:
            try:
                frame = pd.read_csv(
                    fh, sep=options["delimiter"], header=0 if options["header"] else None,
                    names=None if options["header"] else list(range(len(names))),
                    dtype={(names[i] if options["header"] else i): t for i, t in dtypes.items()},
                    comment=options["comment"] or None, skipinitialspace=True,
                    keep_default_na=False, na_filter=False, skip_blank_lines=True,
                )
            except ValueError as exc:  # pandas' ParserError is a ValueError
                _check_widths(path, options, len(names))
                raise ValueError(
                    f"{path}: could not parse a numeric column ({exc}); list non-numeric "
                    "feature columns in options.categorical"
                ) from None
        frame.columns = range(len(names))
        if frame.shape[0] == 0:
            raise ValueError(f"{path}: no data rows")
        short = frame.isna().any(axis=1).to_numpy()
        if short.any():
            _check_widths(path, options, len(names))
            raise ValueError(f"{path}: data row {int(np.flatnonzero(short)[0]) + 1} has an empty or NaN value")
        frames.append((role, frame))

    all_rows = pd.concat([f for _, f in frames], ignore_index=True)
    blocks, feature_names = [], []
    for i in feature_cols:
        column = all_rows[i]
        if i in categorical:
            values = column.astype(str).str.strip().to_numpy()
            cats, codes = np.unique(values, return_inverse=True)
            blocks.append(np.eye(len(cats))[codes])
            feature_names += [f"{names[i]}={c}" for c in cats]
        else:
            blocks.append(column.to_numpy(dtype=np.float64)[:, None])
            feature_names.append(names[i])
    X = np.hstack(blocks) if blocks else np.empty((len(all_rows), 0))
    y = all_rows[label].astype(str).str.strip().to_numpy()
    suffix = options["label_suffix"]
    if suffix:
        y = np.array([v[: -len(suffix)] if v.endswith(suffix) else v for v in y], dtype=object)
    part = np.concatenate([np.full(len(f), PART_CODES[r], dtype=np.int8) for r, f in frames])
    groups = None
    if group is not None:
        groups = pd.to_numeric(all_rows[group]).to_numpy()
        if not np.all(groups == np.round(groups)):
            raise ValueError("options.group_column must hold integer ids")
        groups = groups.astype(np.int64)
    return Table(X, y, part, groups, feature_names)


# ---------------------------------------------------------------------------- cal_housing

_CAL_COLUMNS = ("longitude", "latitude", "housing_median_age", "total_rooms", "total_bedrooms",
                "population", "households", "median_income", "median_house_value")


def read_cal_housing(paths: Mapping[str, Path], options: Mapping[str, Any]) -> Table:
    """StatLib ``cal_housing.data`` (also inside ``cal_housing.tgz``): 9 numeric columns.

    ``features: rgf`` builds the RGF paper's six features (section 6.1.2): median income,
    median house age, total rooms/population, total bedrooms/population,
    population/households and households; ``features: all`` keeps the eight raw columns.
    ``log_target`` predicts log(median house value), "as suggested by the creators".
    """
    if set(paths) != {"data"}:
        raise ValueError("format cal_housing reads one file (role data)")
    text = read_bytes(paths["data"], options.get("member")).decode()
    rows = [ln for ln in text.splitlines() if ln.strip()]
    if rows and re.search(r"[A-Za-z]", rows[0]):
        rows = rows[1:]  # a column-name header line added by some copies
    widths = {len(ln.split(",")) for ln in rows}
    if widths != {9}:
        raise ValueError(f"{paths['data']}: expected 9 comma-separated columns on every line, found "
                         f"{sorted(widths)[:5]}")
    try:
        data = np.array([[float(v) for v in ln.split(",")] for ln in rows])
    except ValueError as exc:
        raise ValueError(f"{paths['data']}: not numbers ({exc})") from None
    if data.ndim != 2 or data.shape[1] != 9:
        raise ValueError(f"{paths['data']}: expected 9 comma-separated columns, got {data.shape}")
    c = {name: data[:, i] for i, name in enumerate(_CAL_COLUMNS)}
    if options["features"] == "rgf":
        names = ["median_income", "housing_median_age", "rooms_per_person",
                 "bedrooms_per_person", "persons_per_household", "households"]
        X = np.column_stack([
            c["median_income"], c["housing_median_age"], c["total_rooms"] / c["population"],
            c["total_bedrooms"] / c["population"], c["population"] / c["households"],
            c["households"],
        ])
    elif options["features"] == "all":
        names = list(_CAL_COLUMNS[:8])
        X = data[:, :8]
    else:
        raise ValueError(f"options.features must be rgf or all, got {options['features']!r}")
    y = np.log(c["median_house_value"]) if options["log_target"] else c["median_house_value"]
    return Table(X, y, np.full(len(y), -1, dtype=np.int8), None, names)


# ------------------------------------------------------------------------ sklearn and npz

SKLEARN_LOADERS = ("digits", "wine", "breast_cancer", "iris", "diabetes")


def read_sklearn(paths: Mapping[str, Path], options: Mapping[str, Any]) -> Table:
    """A dataset bundled with scikit-learn (no download): ``options.loader``."""
    from sklearn import datasets

    loader = options["loader"]
    if loader not in SKLEARN_LOADERS:
        raise ValueError(f"options.loader must be one of {SKLEARN_LOADERS}, got {loader!r}")
    bunch = getattr(datasets, f"load_{loader}")()
    names = [str(n) for n in getattr(bunch, "feature_names", [])] or None
    y = bunch.target
    if getattr(bunch, "target_names", None) is not None and loader != "diabetes":
        y = np.asarray(bunch.target_names)[y]
    return Table(np.asarray(bunch.data, dtype=np.float64), np.asarray(y),
                 np.full(len(y), -1, dtype=np.int8), None, names)


def read_npz(paths: Mapping[str, Path], options: Mapping[str, Any]) -> Table:
    """``.npz`` files with arrays ``X`` and ``y`` (optionally ``group``), one per role."""
    arrays, groups = [], []
    for role, path in _ordered(paths):
        with np.load(path, allow_pickle=False) as z:
            missing = {"X", "y"} - set(z.files)
            if missing:
                raise ValueError(f"{path}: npz needs arrays X and y; missing {sorted(missing)}")
            X, y = z["X"], z["y"]
            if X.ndim != 2 or X.shape[1] == 0 or X.dtype.kind not in "biuf":
                raise ValueError(f"{path}: X must be a 2-D numeric array with columns, got {X.dtype} {X.shape}")
            if y.ndim != 1 or len(y) != len(X):
                raise ValueError(f"{path}: y must be 1-D with one label per row of X, got {y.shape} for {X.shape}")
            arrays.append((role, np.asarray(X, dtype=np.float64), y))
            groups.append(z["group"] if "group" in z.files else None)
    X, y, part = _concat_parts(arrays)
    group = np.concatenate(groups) if all(g is not None for g in groups) else None
    return Table(X, y, part, group)


_CSV_OPTIONS = {"delimiter": ",", "header": False, "label_column": -1, "categorical": None,
                "drop_columns": None, "group_column": None, "comment": None,
                "label_suffix": None, "member": None}

def _read_lfw_parts(paths: Mapping[str, Path], options: Mapping[str, Any]) -> Table:
    from .faces import read_lfw_parts  # images: Pillow is imported only here

    return read_lfw_parts(paths, options)


FORMATS: dict[str, FormatInfo] = {
    "libsvm": FormatInfo(read_libsvm, {"n_features": None, "zero_based": "auto", "member": None},
                         PLAIN_ROLES, doc="LIBSVM/svmlight sparse text"),
    "idx": FormatInfo(read_idx, {"pool": 1}, IDX_ROLES, doc="LeCun IDX image/label pairs"),
    "uci_csv": FormatInfo(read_delimited, dict(_CSV_OPTIONS), PLAIN_ROLES,
                          doc="delimited text, categorical columns one-hot"),
    "pmlb_tsv": FormatInfo(read_delimited, {**_CSV_OPTIONS, "delimiter": "\t", "header": True},
                           PLAIN_ROLES, doc="PMLB tab-separated with header, label last"),
    "cal_housing": FormatInfo(read_cal_housing, {"features": "rgf", "log_target": True,
                                                 "member": None}, ("data",)),
    "sklearn": FormatInfo(read_sklearn, {"loader": None}, (), needs_files=False),
    "npz": FormatInfo(read_npz, {}, PLAIN_ROLES),
    "synthetic": FormatInfo(None, {"generator": "rgf_trees", "q": None, "target": None,
                                   "n_samples": 12000, "n_trees": 100, "n_features": 10,
                                   "n_values": 100, "seed": 0, "n_images": 120, "image_size": 80,
                                   "n_classes": 7, "noise": 0.02},
                           (), needs_files=False),
    # face-part segmentation (treeopt.data.faces): rows are images, labels are images
    "lfw_parts": FormatInfo(_read_lfw_parts, {"palette": None, "class_names": None, "image_size": None},
                            ("images", "labels", "train", "val", "test"),
                            doc="funneled LFW JPEGs + colour-coded part-label images, split lists"),
}


# -------------------------------------------------------------------------------- labels


def label_string(value) -> str:
    """Canonical text of a label: ``1``, ``1.0`` and ``"1"`` all read ``"1"``."""
    if isinstance(value, (bytes, np.bytes_)):
        value = value.decode()
    if isinstance(value, str):
        value = value.strip()
        try:
            as_float = float(value)
        except ValueError:
            return value
        value = as_float
    if isinstance(value, (bool, np.bool_)):
        return str(int(value))
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


def encode_labels(
    y: np.ndarray, task: str, positive_labels=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(y_encoded, classes)``.

    Classification labels become ``0..k-1`` in sorted order (numeric order when every
    label is a number); ``positive_labels`` first maps them to a binary task with
    classes ``["negative", "positive"]``. Regression targets must be finite numbers and
    ``classes`` is empty.
    """
    if task == "regression":
        try:
            values = np.asarray(y, dtype=np.float64)
        except ValueError:
            raise ValueError("regression targets must be numbers") from None
        if not np.all(np.isfinite(values)):
            raise ValueError("regression targets contain NaN or inf")
        return values, np.array([], dtype=str)
    text = np.array([label_string(v) for v in np.asarray(y).ravel()], dtype=str)
    if positive_labels is not None:
        wanted = {label_string(v) for v in positive_labels}
        unseen = wanted - set(np.unique(text))
        if unseen:
            raise ValueError(f"options.positive_labels {sorted(unseen)} never occur in the labels")
        return np.isin(text, list(wanted)).astype(np.int64), np.array(["negative", "positive"])
    uniq = np.unique(text)
    try:
        order = np.argsort([float(u) for u in uniq], kind="stable")
        uniq = uniq[order]
    except ValueError:
        pass
    lookup = {c: i for i, c in enumerate(uniq)}
    return np.array([lookup[t] for t in text], dtype=np.int64), uniq
