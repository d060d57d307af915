"""Public entry points: make a split file for a dataset and seed, and read it back.

Layout under ``data.processed_dir``::

    {name}/data.npz          parsed once from the raw files: X, y, part, group, classes
    {name}/split{seed}.npz   X_train, y_train, X_val, y_val, X_test, y_test (+ metadata)

Both files carry a fingerprint of the entry they were made from and of the raw files' content,
and are rebuilt when either changes: files with a ``sha256:`` in the entry are known by it; any
other file by the sha256 of its bytes (remembered in ``{name}/raw_files.json`` with its size and
mtime, so it is hashed again only when those change). Every file is written to a temporary name
and renamed into place, so a failure (e.g. a checksum error) leaves no processed output; the
temporary names carry the writer's pid, so :func:`clean_stale_temporaries` can remove the ones a
killed process left.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import warnings
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .._atomic import atomic_path
from .errors import DataFormatError, DataWarning
from .fetch import Opener, ensure_file, locate, pinned_sha256, sha256_file
from .readers import FORMATS, Table, encode_labels
from .scaling import apply_scaler, fit_scaler
from .spec import DatasetSpec, DataSettings, data_settings, get_spec, mirror_problem
from .splits import make_split
from .synthetic import make_covertype_like, make_rgf_synthetic

# Bump when parsing or splitting changes meaning, so stale caches are rebuilt.
CACHE_VERSION = 1
SPLIT_KEYS = ("X_train", "y_train", "X_val", "y_val", "X_test", "y_test")


@dataclass(frozen=True)
class Split:
    """One train/validation/test split, as stored by :func:`prepare_split`."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    task: str
    name: str
    classes: np.ndarray
    feature_names: np.ndarray
    split_seed: int = 0

    @property
    def n_classes(self) -> int:
        """Number of classes (0 for regression)."""
        return len(self.classes)

    @property
    def n_features(self) -> int:
        return self.X_train.shape[1]

    def train_val(self) -> tuple[np.ndarray, np.ndarray]:
        """Training and validation rows together (for the final refit after selection)."""
        return (np.concatenate([self.X_train, self.X_val]),
                np.concatenate([self.y_train, self.y_val]))


def split_path(name: str, config: Mapping[str, Any], split_seed: int = 0) -> Path:
    return data_settings(config).processed_dir / name / f"split{int(split_seed)}.npz"


def prepare_split(
    name: str, config: Mapping[str, Any], split_seed: int = 0, *, opener: Opener | None = None,
) -> Path:
    """Ensure raw files, parse once, build the split for ``split_seed``; return its path.

    For the ``rgf`` protocol ``split_seed`` is the run index; for synthetic data it also
    seeds the generator (the RGF paper's 10 datasets per q are seeds 0..9).
    """
    settings = data_settings(config)
    spec = get_spec(name, config)
    if any(fs.mirror for fs in spec.files.values()) and mirror_problem(settings):
        warnings.warn(f"dataset {name!r}: {mirror_problem(settings)}", DataWarning, stacklevel=2)
    seed = int(split_seed)
    out = settings.processed_dir / name / f"split{seed}.npz"
    raw = raw_identity(spec, settings)
    fingerprint = _fingerprint(spec, seed=seed, raw=raw)
    if out.is_file() and _stored_fingerprint(out) == fingerprint:
        return out
    table, classes = _load_table(spec, settings, seed, opener, raw)
    train, val, test = make_split(spec.split, table.part, table.group, seed)
    X = table.X
    arrays = {}
    if spec.task == "segmentation":  # images stay uint8; windows are normalised by the segmenter
        if spec.scale != "none":
            raise ValueError(f"dataset {spec.name!r}: segmentation data takes scale: none")
        shift, scale = np.zeros(0), np.zeros(0)
        for key, rows in (("train", train), ("val", val), ("test", test)):
            arrays[f"X_{key}"], arrays[f"y_{key}"] = X[rows], table.y[rows]
    else:
        shift, scale = fit_scaler(np.asarray(X[train], dtype=np.float64), spec.scale)
        for key, rows in (("train", train), ("val", val), ("test", test)):
            arrays[f"X_{key}"] = apply_scaler(X[rows], shift, scale)
            arrays[f"y_{key}"] = table.y[rows]
    arrays.update(
        task=np.array(spec.task), name=np.array(spec.name), classes=classes,
        feature_names=np.array(table.feature_names or [], dtype=str),
        split_seed=np.array(seed), scale_shift=shift, scale_scale=scale,
        fingerprint=np.array(fingerprint),
    )
    _atomic_savez(out, arrays)
    return out


def load_split(path: str | os.PathLike) -> Split:
    """Read a split written by :func:`prepare_split` (no pickle); a damaged or foreign file is a
    :class:`DataFormatError` naming the file."""
    try:
        with np.load(path, allow_pickle=False) as z:
            missing = [k for k in (*SPLIT_KEYS, "task", "name") if k not in z.files]
            if missing:
                raise DataFormatError(f"{path}: not a treeopt split file (missing {missing})")
            arrays = {k: z[k] for k in SPLIT_KEYS if k not in ("X_train", "X_val")}
            arrays["X_train"], arrays["X_val"] = _train_val_block(z["X_train"], z["X_val"])
            split = Split(
                **arrays, task=str(z["task"]), name=str(z["name"]),
                classes=z["classes"] if "classes" in z.files else np.array([], dtype=str),
                feature_names=z["feature_names"] if "feature_names" in z.files else np.array([], dtype=str),
                split_seed=int(z["split_seed"]) if "split_seed" in z.files else 0,
            )
    except (FileNotFoundError, IsADirectoryError, PermissionError, DataFormatError):
        raise
    except Exception as exc:  # noqa: BLE001 - BadZipFile, zlib.error, a bare .npy (no context manager), ...
        raise DataFormatError(f"{path}: not a readable treeopt split file ({type(exc).__name__}: {exc})") from None
    # tabular splits: X (n x p), y (n,); segmentation splits: images (n x H x W x 3), label maps (n x H x W)
    image = split.task == "segmentation"
    for part in ("train", "val", "test"):
        X, y = getattr(split, f"X_{part}"), getattr(split, f"y_{part}")
        fits = (X.ndim == 4 and y.ndim == 3 and X.shape[1:3] == y.shape[1:] if image else X.ndim == 2 and y.ndim == 1)
        if not fits or len(X) != len(y) or X.shape[1:] != split.X_train.shape[1:]:
            raise DataFormatError(f"{path}: X_{part} {X.shape} and y_{part} {y.shape} do not fit together")
    return split


# What each label of :func:`availability` means (``python -m treeopt.data status`` prints it under the table).
AVAILABILITY_LABELS = {
    "generated": "made by code (synthetic data), nothing to fetch",
    "bundled": "ships with scikit-learn",
    "cached": "parsed already (processed_dir) from the raw files as they are now, or every raw file already "
              "downloaded into raw_dir",
    "local": "read in place from its path: file(s), not parsed yet",
    "mirror": "read in place from the offline mirror folder (data.mirror / TREEOPT_DATA_MIRROR)",
    "download": "at least one file is downloaded (and checked) when a job needs the data set",
    "missing": "a path: file does not exist",
}


def _train_val_block(X_train: np.ndarray, X_val: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The training and validation rows as two views of one array, training rows first, so that a final run's
    refit on both (:func:`treeopt.experiments.run.fit.fit_and_measure`) takes their union without a copy (for
    Fashion-MNIST, 376 MB less)."""
    if X_train.ndim != 2 or X_val.ndim != 2 or X_train.shape[1:] != X_val.shape[1:] or X_train.dtype != X_val.dtype:
        return X_train, X_val  # images, or parts that do not fit together (the checks below say so)
    block = np.empty((X_train.shape[0] + X_val.shape[0], X_train.shape[1]), dtype=X_train.dtype)
    block[:X_train.shape[0]] = X_train
    block[X_train.shape[0]:] = X_val
    return block[:X_train.shape[0]], block[X_train.shape[0]:]


def availability(name: str, config: Mapping[str, Any]) -> str:
    """How ``prepare_split`` would get the data, without fetching anything: one of
    :data:`AVAILABILITY_LABELS` (``generated``, ``bundled``, ``cached``, ``local``, ``mirror``, ``download``,
    ``missing``).
    """
    settings = data_settings(config)
    spec = get_spec(name, config)
    if spec.format == "synthetic":
        return "generated"
    if spec.format == "sklearn":
        return "bundled"
    located = [locate(spec, fs, settings) for fs in spec.files.values()]
    if any(where.source == "path" and not where.path.is_file() for where in located):
        return "missing"
    cache = settings.processed_dir / name / "data.npz"
    if cache.is_file() and _stored_fingerprint(cache) == _fingerprint(spec, raw=raw_identity(spec, settings)):
        return "cached"
    sources = {where.source for where in located}
    if "download" in sources:
        return "download"
    if "mirror" in sources:
        return "mirror"
    return "local" if "path" in sources else "cached"  # a path: file never parsed is not cached


def stored_shapes(path: Path, keys=SPLIT_KEYS) -> dict[str, tuple[int, ...]]:
    """Array shapes in an ``.npz`` read from the headers only (no data loaded)."""
    shapes = {}
    with zipfile.ZipFile(path) as zf:
        for key in keys:
            if f"{key}.npy" not in zf.namelist():
                continue
            with zf.open(f"{key}.npy") as fh:
                version = np.lib.format.read_magic(fh)
                read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                               else np.lib.format.read_array_header_2_0)
                shape, _, _ = read_header(fh)
                shapes[key] = shape
    return shapes


# ------------------------------------------------------------------------------ internals


def raw_identity(spec: DatasetSpec, settings: DataSettings) -> dict[str, Any]:
    """What the raw files are, for the cache fingerprints: per role, the entry's sha256 list when it gives
    one, else the sha256 of the file found now (hashed again only when its size or mtime changed), the
    pinned sha256 of a downloaded file no longer on disk, or ``missing:`` for an absent local ``path:``."""
    identity: dict[str, Any] = {}
    memo_path = settings.processed_dir / spec.name / "raw_files.json"
    memo = _read_json(memo_path)
    changed = False
    for role, fs in sorted(spec.files.items()):
        where = locate(spec, fs, settings)
        if where.source == "path" and not where.path.is_file():
            identity[role] = f"missing:{where.path}"
        elif fs.sha256:
            identity[role] = sorted(fs.sha256)
        elif where.source == "download":
            identity[role] = pinned_sha256(settings.lock_file, spec.name, role) or "absent"
        else:
            st = where.path.stat()
            key = str(where.path.resolve())
            seen = memo.get(key)
            if not (isinstance(seen, dict) and seen.get("size") == st.st_size
                    and seen.get("mtime_ns") == st.st_mtime_ns and isinstance(seen.get("sha256"), str)):
                seen = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256_file(where.path)}
                memo[key] = seen
                changed = True
            identity[role] = seen["sha256"]
    if changed:
        with contextlib.suppress(OSError):
            _atomic_write_json(memo_path, memo)
    return identity


def _read_json(path: Path) -> dict:
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _atomic_write_json(path: Path, value: dict) -> None:
    # the temporary's name carries the pid: clean_stale_temporaries removes those of killed processes
    with atomic_path(path, prefix=f"{path.stem}.p{os.getpid()}.", suffix=".tmp.json") as tmp:
        tmp.write_text(json.dumps(value, indent=1, sort_keys=True))


def _load_table(
    spec: DatasetSpec, settings: DataSettings, seed: int, opener: Opener | None,
    raw: dict[str, Any] | None = None,
) -> tuple[Table, np.ndarray]:
    """The parsed table with encoded labels, from the cache or parsed from raw files."""
    if spec.format == "synthetic":
        return _synthetic_table(spec, seed)
    if spec.task == "segmentation":
        from .faces import PART_NAMES

        if spec.format == "lfw_parts" and not spec.options.get("palette"):
            raise ValueError(f"dataset {spec.name!r}: format lfw_parts needs options.palette")
    cache = settings.processed_dir / spec.name / "data.npz"
    fingerprint = _fingerprint(spec, raw=raw_identity(spec, settings) if raw is None else raw)
    if cache.is_file() and _stored_fingerprint(cache) == fingerprint:
        with np.load(cache, allow_pickle=False) as z:
            group = z["group"] if z["group"].size else None
            table = Table(z["X"], z["y"], z["part"], group, list(z["feature_names"]) or None)
            return table, z["classes"]
    paths = {role: ensure_file(spec, fs, settings, opener=opener) for role, fs in spec.files.items()}
    where = f"dataset {spec.name!r} (format {spec.format!r}, file {', '.join(str(p) for p in paths.values())})"
    try:
        table = FORMATS[spec.format].reader(paths, spec.options)
    except (ValueError, KeyError, EOFError, OSError, zlib.error) as exc:
        raise DataFormatError(f"{where}: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - a damaged file can upset a parser in many ways; say which file
        raise DataFormatError(f"{where}: cannot be parsed ({type(exc).__name__}: {exc})") from exc
    if spec.task == "segmentation":  # label images hold 0..k-1 already
        names = spec.options.get("class_names") or PART_NAMES[:len(spec.options["palette"])]
        classes = np.array([str(n) for n in names])
    else:
        try:
            table.y, classes = encode_labels(table.y, spec.task, spec.options.get("positive_labels"))
        except ValueError as exc:
            raise DataFormatError(f"{where}: {exc}") from exc
    _check_table(spec, table, where)
    _atomic_savez(cache, {
        "X": table.X, "y": table.y, "part": table.part,
        "group": table.group if table.group is not None else np.array([], dtype=np.int64),
        "classes": classes, "feature_names": np.array(table.feature_names or [], dtype=str),
        "fingerprint": np.array(fingerprint),
    })
    return table, classes


def _synthetic_table(spec: DatasetSpec, seed: int) -> tuple[Table, np.ndarray]:
    o = spec.options
    if o["generator"] == "faces":
        from .faces import PART_NAMES, synthetic_faces_table

        if spec.task != "segmentation":
            raise ValueError(f"dataset {spec.name!r}: generator faces needs task segmentation")
        return synthetic_faces_table(o, seed), np.array(PART_NAMES)
    if o["generator"] == "covertype_like":
        if spec.task != "classification":
            raise ValueError(f"dataset {spec.name!r}: generator covertype_like needs task classification")
        X, y = make_covertype_like(o["n_samples"], n_classes=o["n_classes"], noise=o["noise"],
                                   random_state=np.random.SeedSequence([int(o["seed"]), seed]))
        names = ([f"x{i}" for i in range(10)] + [f"area{i}" for i in range(4)] + [f"soil{i}" for i in range(40)])
        y, classes = encode_labels(y + 1, spec.task)  # classes 1..k as Covertype's cover types
        return Table(X, y, np.full(len(y), -1, dtype=np.int8), None, names), classes
    if o["generator"] != "rgf_trees":
        raise ValueError(f"dataset {spec.name!r}: unknown generator {o['generator']!r}")
    if not isinstance(o["q"], int) or o["q"] < 1:
        raise ValueError(f"dataset {spec.name!r}: options.q must be a positive integer")
    if o["target"] != spec.task:
        raise ValueError(f"dataset {spec.name!r}: options.target must equal task {spec.task!r}")
    X, y, _ = make_rgf_synthetic(
        o["q"], target=o["target"], n_samples=o["n_samples"], n_trees=o["n_trees"],
        n_features=o["n_features"], n_values=o["n_values"],
        random_state=np.random.SeedSequence([int(o["seed"]), seed]),
    )
    y, classes = encode_labels(y, spec.task)
    table = Table(X, y, np.full(len(y), -1, dtype=np.int8), None,
                  [f"x{i}" for i in range(X.shape[1])])
    return table, classes


def _check_table(spec: DatasetSpec, table: Table, where: str | None = None) -> None:
    """What every parsed data set must be: rows, feature columns, finite values, labels that are labels."""
    where = where or f"dataset {spec.name!r}"
    X = table.X
    if spec.task == "segmentation":
        if X.ndim != 4 or X.shape[-1] != 3 or table.y.shape != X.shape[:3] or X.shape[0] == 0:
            raise ValueError(f"dataset {spec.name!r}: images {X.shape} and label maps {table.y.shape} "
                             "must be (n, H, W, 3) and (n, H, W)")
        return
    if X.ndim != 2 or X.shape[0] != len(table.y) or X.shape[0] == 0:
        raise DataFormatError(f"{where}: parsed X {X.shape} does not match {len(table.y)} labels")
    if X.shape[1] == 0:
        raise DataFormatError(f"{where}: parsed no feature columns; is the format right?")
    if X.dtype.kind == "f" and not np.all(np.isfinite(X)):
        bad = np.argwhere(~np.isfinite(X))[0]
        raise DataFormatError(f"{where}: NaN or inf in the features (row {bad[0]}, column {bad[1]})")
    if spec.task == "classification":
        n, k = len(table.y), len(np.unique(table.y))
        if k < 2:
            raise DataFormatError(f"{where}: only one class in the labels")
        if n >= 20 and k > n / 2:
            raise DataFormatError(
                f"{where}: the label column has {k} distinct values in {n} rows, not class labels; check "
                f"format and options.label_column"
            )


def _fingerprint(spec: DatasetSpec, seed: int | None = None, raw: dict[str, Any] | None = None) -> str:
    """Hash of everything that determines the cached content: the entry and the raw files' identity."""
    content: dict[str, Any] = {
        "version": CACHE_VERSION, "task": spec.task, "format": spec.format,
        "options": spec.options,
        "files": {r: [list(f.sha256), f.mirror, f.path, list(f.urls)] for r, f in sorted(spec.files.items())},
        "raw": raw or {},
    }
    if seed is not None:
        content.update(split=spec.split, scale=spec.scale, seed=seed)
    blob = json.dumps(content, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


def _stored_fingerprint(path: Path) -> str | None:
    try:
        with np.load(path, allow_pickle=False) as z:
            return str(z["fingerprint"]) if "fingerprint" in z.files else None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        return None


def _atomic_savez(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    with atomic_path(path, prefix=f"{path.stem}.p{os.getpid()}.", suffix=".tmp.npz") as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **arrays)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_TMP_FILE = re.compile(r"^[^/]+\.p(?P<pid>\d+)\.[A-Za-z0-9_]{8}\.(tmp\.npz|tmp\.json|part)$")


def clean_stale_temporaries(processed_dir: str | os.PathLike, raw_dir: str | os.PathLike | None = None) -> list[Path]:
    """Remove temporary files that killed processes left; return them.

    Looks in ``processed_dir/{name}/`` (caches being written) and ``raw_dir/{name}/`` (downloads in progress)
    for names this package writes (``{file}.p{pid}.{random}.tmp.npz|.tmp.json|.part``) whose process is gone."""
    removed = []
    for root in (processed_dir, raw_dir):
        if root is None or not Path(root).is_dir():
            continue
        for path in sorted(Path(root).glob("*/*")):
            match = _TMP_FILE.match(path.name)
            if match and path.is_file() and not path.is_symlink() and not _process_alive(int(match["pid"])):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                removed.append(path)
    return removed
