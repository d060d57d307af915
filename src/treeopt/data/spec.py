"""Validated dataset entries from ``config.yaml``.

A dataset entry uses only the top-level keys in :data:`ENTRY_KEYS`. ``split:`` and
``options:`` are mappings whose allowed keys depend on the split protocol and the file
format; every unknown key is an error that names the key and the dataset.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Mapping
from urllib.parse import urlparse

from .errors import DataConfigError
from .readers import FORMATS
from .scaling import SCALERS

ENTRY_KEYS = frozenset(
    {"task", "format", "url", "path", "sha256", "files", "split", "scale", "options",
     "description", "papers", "paper_dataset"}
)
FILE_KEYS = frozenset({"url", "sha256", "mirror", "path"})
TASKS = ("classification", "regression", "segmentation")  # segmentation: rows are images
MIRROR_ENV = "TREEOPT_DATA_MIRROR"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")

# Allowed keys (with defaults) per split protocol; see treeopt.data.splits.
SPLIT_PROTOCOLS: dict[str, dict[str, Any]] = {
    # Files (or parts) give train/test; validation from them, else val_fraction of train.
    "provided": {"val_fraction": 0.2},
    # Explicit half-open row ranges [start, stop) of the parsed table.
    "rows": {"train": None, "val": None, "test": None},
    # No split exists: test first (fraction or count), then validation from the rest.
    # Defaults give the non-greedy paper's 64/16/20.
    "random": {"test_fraction": 0.2, "n_test": None, "val_fraction": 0.2, "n_val": None},
    # RGF paper section 6.1.2: n_train points drawn per run from a pool disjoint from test.
    "rgf": {"n_train": 2000, "n_val": 0, "test": "provided", "n_test": None,
            "test_seed": 0, "test_rows": None, "expect_test_size": None},
}
RGF_TEST_SOURCES = ("provided", "rest", "holdout", "rows", "group_odd", "group_even")


@dataclass(frozen=True)
class DataSettings:
    """The ``data:`` section: where raw files, processed caches and pins live."""

    mirror: Path | None
    raw_dir: Path
    processed_dir: Path
    lock_file: Path


@dataclass(frozen=True)
class FileSpec:
    """One raw file of a dataset, found by local ``path``, ``mirror`` or ``url``."""

    role: str
    urls: tuple[str, ...] = ()
    sha256: tuple[str, ...] = ()
    mirror: str | None = None
    path: str | None = None

    @property
    def filename(self) -> str:
        """Name under ``raw_dir/{dataset}/`` for a downloaded copy (the first URL's)."""
        names = [PurePosixPath(urlparse(u).path).name for u in self.urls[:1]]
        names += [PurePosixPath(s).name for s in (self.path, self.mirror) if s]
        return next((n for n in names if n), f"{self.role}.raw")


@dataclass(frozen=True)
class DatasetSpec:
    """A validated ``datasets:`` entry."""

    name: str
    task: str
    format: str
    files: dict[str, FileSpec]
    split: dict[str, Any]
    scale: str
    options: dict[str, Any]
    description: str = ""
    papers: tuple[str, ...] = field(default_factory=tuple)

    @property
    def protocol(self) -> str:
        return self.split["protocol"]


def data_settings(config: Mapping[str, Any]) -> DataSettings:
    """Read the ``data:`` section; env ``TREEOPT_DATA_MIRROR`` wins over ``data.mirror``."""
    data = dict(config.get("data") or {})
    unknown = set(data) - {"mirror", "raw_dir", "processed_dir", "lock_file"}
    if unknown:
        raise DataConfigError(f"unknown key(s) in data: section: {sorted(unknown)}")
    mirror = os.environ.get(MIRROR_ENV) or data.get("mirror")
    return DataSettings(
        mirror=Path(mirror).expanduser() if mirror else None,
        raw_dir=Path(data.get("raw_dir", "data/raw")),
        processed_dir=Path(data.get("processed_dir", "data/processed")),
        lock_file=Path(data.get("lock_file", "data/checksums.lock.yaml")),
    )


def mirror_problem(settings: DataSettings) -> str | None:
    """A warning when a mirror folder is set (env ``TREEOPT_DATA_MIRROR`` or ``data.mirror``) but does not exist;
    None when it exists or none is set. Files with a ``mirror:`` key are then looked for in ``raw_dir`` and
    downloaded, which a user of the mirror wants to know before a download starts."""
    if settings.mirror is None or settings.mirror.is_dir():
        return None
    source = f"env {MIRROR_ENV}" if os.environ.get(MIRROR_ENV) else "data.mirror in the config"
    return (f"the data mirror folder {settings.mirror} ({source}) does not exist: files with a mirror: key are "
            f"looked for in {settings.raw_dir} and else downloaded")


def load_config_datasets(config: Mapping[str, Any]) -> dict[str, DatasetSpec]:
    """Validate every ``datasets:`` entry of ``config`` and return them by name."""
    entries = config.get("datasets") or {}
    if not isinstance(entries, Mapping):
        raise DataConfigError("datasets: must be a mapping of name -> entry")
    return {name: parse_entry(name, entry) for name, entry in entries.items()}


def get_spec(name: str, config: Mapping[str, Any]) -> DatasetSpec:
    entries = config.get("datasets") or {}
    if name not in entries:
        raise DataConfigError(
            f"unknown dataset {name!r}; config.yaml datasets: has {sorted(entries)}"
        )
    return parse_entry(name, entries[name])


def parse_entry(name: str, entry: Mapping[str, Any]) -> DatasetSpec:
    """Validate one entry; every error names the dataset and the offending key."""
    where = f"dataset {name!r}"
    if not re.fullmatch(r"[A-Za-z0-9_.\-]+", str(name)):
        raise DataConfigError(f"{where}: names may use letters, digits, '_', '-', '.' only")
    if not isinstance(entry, Mapping):
        raise DataConfigError(f"{where}: entry must be a mapping")
    _reject_unknown(entry, ENTRY_KEYS, where)

    task = entry.get("task")
    if task not in TASKS:
        raise DataConfigError(f"{where}: task must be one of {TASKS}, got {task!r}")
    fmt = entry.get("format")
    if fmt not in FORMATS:
        raise DataConfigError(f"{where}: format must be one of {sorted(FORMATS)}, got {fmt!r}")
    info = FORMATS[fmt]

    files = _parse_files(entry, where, needs_files=info.needs_files)
    if info.roles is not None:
        bad = set(files) - set(info.roles)
        if bad:
            raise DataConfigError(
                f"{where}: file role(s) {sorted(bad)} not known to format {fmt!r}; "
                f"use {list(info.roles)}"
            )

    options = dict(entry.get("options") or {})
    _reject_unknown(options, set(info.options) | {"positive_labels"}, f"{where} options")
    options = {**info.options, **options}
    if options.get("positive_labels") is not None:
        if task != "classification":
            raise DataConfigError(f"{where}: options.positive_labels needs task classification")
        if not isinstance(options["positive_labels"], (list, tuple)) or not options[
            "positive_labels"
        ]:
            raise DataConfigError(f"{where}: options.positive_labels must be a non-empty list")

    split = _parse_split(entry.get("split"), files, fmt, where)
    scale = entry.get("scale", "none") or "none"
    if scale not in SCALERS:
        raise DataConfigError(f"{where}: scale must be one of {sorted(SCALERS)}, got {scale!r}")
    papers = entry.get("papers") or ()
    if isinstance(papers, str):
        papers = (papers,)
    return DatasetSpec(
        name=str(name), task=task, format=fmt, files=files, split=split, scale=scale,
        options=options, description=str(entry.get("description") or ""),
        papers=tuple(str(p) for p in papers),
    )


def data_identity(spec: DatasetSpec) -> dict[str, Any]:
    """What an entry's data is, for the identity of the runs made on it: everything that changes the prepared
    arrays (task, format, options, split, scale with their defaults filled in, and each file's ``sha256``, or
    its ``url``/``path`` where it has none); not where a copy is found (``mirror``) nor the description."""
    files = {
        role: {"sha256": sorted(fs.sha256)} if fs.sha256 else {"url": list(fs.urls), "path": fs.path}
        for role, fs in sorted(spec.files.items())
    }
    return {"task": spec.task, "format": spec.format, "options": spec.options, "split": spec.split,
            "scale": spec.scale, "files": files}


def _reject_unknown(mapping: Mapping[str, Any], allowed, where: str) -> None:
    if not isinstance(mapping, Mapping):
        raise DataConfigError(f"{where}: must be a mapping")
    unknown = sorted(set(mapping) - set(allowed))
    if unknown:
        raise DataConfigError(
            f"{where}: unknown key {unknown[0]!r}" + (f" (and {unknown[1:]})" if unknown[1:] else "")
            + f"; allowed keys: {sorted(allowed)}"
        )


def _as_tuple(value, what: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise DataConfigError(f"{where}: {what} must be a string or a list of strings")
    return tuple(value)


def _file_spec(role: str, raw: Mapping[str, Any], where: str) -> FileSpec:
    _reject_unknown(raw, FILE_KEYS, where)
    urls = _as_tuple(raw.get("url"), "url", where)
    hashes = tuple(h.lower() for h in _as_tuple(raw.get("sha256"), "sha256", where))
    for h in hashes:
        if not _SHA256.match(h):
            raise DataConfigError(f"{where}: sha256 {h!r} is not 64 hex digits")
    mirror, path = raw.get("mirror"), raw.get("path")
    if not (urls or mirror or path):
        raise DataConfigError(f"{where}: give at least one of url, path, mirror")
    return FileSpec(role=role, urls=urls, sha256=hashes, mirror=mirror, path=path)


def _parse_files(entry: Mapping[str, Any], where: str, *, needs_files: bool) -> dict[str, FileSpec]:
    top = {k: entry[k] for k in ("url", "path", "sha256") if entry.get(k) is not None}
    files = entry.get("files")
    if files and top:
        raise DataConfigError(
            f"{where}: use either top-level url/path/sha256 (one file) or files: (several), "
            f"not both (found {sorted(top)} and files)"
        )
    if files:
        if not isinstance(files, Mapping):
            raise DataConfigError(f"{where}: files must map role -> {{url, sha256, mirror}}")
        return {
            str(role): _file_spec(str(role), spec or {}, f"{where} files.{role}")
            for role, spec in files.items()
        }
    if top:
        return {"data": _file_spec("data", top, where)}
    if needs_files:
        raise DataConfigError(f"{where}: needs url:, path: or files:")
    return {}


def _parse_split(raw, files: Mapping[str, FileSpec], fmt: str, where: str) -> dict[str, Any]:
    if raw is None:
        has_test = any(r.startswith("test") for r in files)
        raw = {"protocol": "provided" if has_test else "random"}
    if isinstance(raw, str):
        raw = {"protocol": raw}
    if not isinstance(raw, Mapping):
        raise DataConfigError(f"{where}: split must be a mapping with a protocol")
    protocol = raw.get("protocol")
    if protocol not in SPLIT_PROTOCOLS:
        raise DataConfigError(
            f"{where}: split.protocol must be one of {sorted(SPLIT_PROTOCOLS)}, got {protocol!r}"
        )
    allowed = SPLIT_PROTOCOLS[protocol]
    _reject_unknown(raw, set(allowed) | {"protocol"}, f"{where} split ({protocol})")
    split = {"protocol": protocol, **allowed, **{k: v for k, v in raw.items() if v is not None}}
    sw = f"{where} split"
    for key in ("val_fraction", "test_fraction"):
        if key in split and split[key] is not None and not 0.0 <= float(split[key]) < 1.0:
            raise DataConfigError(f"{sw}: {key} must be in [0, 1), got {split[key]!r}")
    for key in ("n_train", "n_val", "n_test", "test_seed", "expect_test_size"):
        value = split.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise DataConfigError(f"{sw}: {key} must be a non-negative integer, got {value!r}")
    if protocol == "rows":
        for key in ("train", "test"):
            if split[key] is None:
                raise DataConfigError(f"{sw}: protocol rows needs {key}: [start, stop]")
        for key in ("train", "val", "test"):
            if split[key] is not None:
                split[key] = _row_range(split[key], f"{sw}.{key}")
    if protocol == "rgf":
        if split["test"] not in RGF_TEST_SOURCES:
            raise DataConfigError(f"{sw}: test must be one of {RGF_TEST_SOURCES}, got {split['test']!r}")
        if split["n_train"] < 1:
            raise DataConfigError(f"{sw}: n_train must be >= 1")
        if split["test"] == "holdout" and split["n_test"] is None:
            raise DataConfigError(f"{sw}: test: holdout needs n_test")
        if split["test"] == "rows":
            if split["test_rows"] is None:
                raise DataConfigError(f"{sw}: test: rows needs test_rows: [start, stop]")
            split["test_rows"] = _row_range(split["test_rows"], f"{sw}.test_rows")
    return split


def _row_range(value, where: str) -> tuple[int, int]:
    if (
        not isinstance(value, (list, tuple)) or len(value) != 2
        or not all(isinstance(v, int) and v >= 0 for v in value) or value[0] >= value[1]
    ):
        raise DataConfigError(f"{where}: must be [start, stop] with 0 <= start < stop, got {value!r}")
    return (int(value[0]), int(value[1]))
