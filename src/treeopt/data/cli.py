"""Command line: ``python -m treeopt.data prepare NAME ...`` and ``... status``."""

from __future__ import annotations

import argparse
import shutil
import sys
import zipfile
from pathlib import Path

import yaml

from .._atomic import atomic_path
from .errors import ChecksumError, DataConfigError, DataFormatError, DataUnavailableError
from .prepare import AVAILABILITY_LABELS, SPLIT_KEYS, availability, prepare_split, stored_shapes
from .spec import data_settings, load_config_datasets, mirror_problem


def _read_config(path: str) -> dict:
    with open(path) as fh:
        return yaml.safe_load(fh) or {}


def _copy_atomic(src: Path, dst: Path) -> None:
    with atomic_path(dst) as tmp:
        shutil.copyfile(src, tmp)


def _is_split_file(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
    except (OSError, zipfile.BadZipFile):
        return False
    return {f"{k}.npy" for k in (*SPLIT_KEYS, "fingerprint")} <= names


def cmd_prepare(args) -> int:
    config = _read_config(args.config)
    out = Path(args.out) if args.out else None
    if out is not None and (out.is_dir() or (out.exists() and not _is_split_file(out))):
        # --out replaces only a split file written earlier, never another file (or a folder)
        raise DataConfigError(f"--out {out}: exists and is not a split file written by treeopt.data; "
                              f"choose a new file name")
    path = prepare_split(args.name, config, args.seed)
    if args.out and Path(args.out).resolve() != path.resolve():
        _copy_atomic(path, Path(args.out))
        path = Path(args.out)
    print(path)
    return 0


def status_rows(config: dict, seed: int = 0) -> list[dict]:
    """One row per dataset: availability and, when cached, the shapes."""
    settings = data_settings(config)
    rows = []
    for name, spec in load_config_datasets(config).items():
        row = {"dataset": name, "task": spec.task, "format": spec.format,
               "protocol": spec.protocol, "availability": availability(name, config),
               "rows": "", "train": "", "val": "", "test": "", "features": ""}
        data = settings.processed_dir / name / "data.npz"
        if data.is_file():
            shape = stored_shapes(data, ("X",)).get("X")
            if shape:
                row["rows"], row["features"] = shape[0], shape[1]
        split = settings.processed_dir / name / f"split{seed}.npz"
        if split.is_file():
            shapes = stored_shapes(split)
            row["train"] = shapes["X_train"][0]
            row["val"] = shapes["X_val"][0]
            row["test"] = shapes["X_test"][0]
            row["features"] = shapes["X_train"][1]
        rows.append(row)
    return rows


def cmd_status(args) -> int:
    config = _read_config(args.config)
    problem = mirror_problem(data_settings(config))
    if problem:
        print(f"warning: {problem}", file=sys.stderr)
    rows = status_rows(config, args.seed)
    if not rows:
        print("no datasets in config")
        return 0
    cols = list(rows[0])
    width = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    print("  ".join(c.ljust(width[c]) for c in cols))
    for r in rows:
        print("  ".join(str(r[c]).ljust(width[c]) for c in cols))
    print("\navailability (where prepare would get the data; nothing is fetched by status):")
    shown = {r["availability"] for r in rows}
    for label, meaning in AVAILABILITY_LABELS.items():
        if label in shown:
            print(f"  {label:9s} {meaning}")
    print(f"rows/features: the parsed table, when cached; train/val/test: split {args.seed}'s sizes, when "
          f"prepared (--seed picks the split)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m treeopt.data", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="fetch, verify, parse and split one dataset")
    p.add_argument("name")
    p.add_argument("--config", default="config.yaml")
    p.add_argument("--seed", type=int, default=0, help="split seed (RGF: run index)")
    p.add_argument("--out", help="also write the split file here")
    p.set_defaults(func=cmd_prepare)
    s = sub.add_parser("status", help="table of datasets: availability, shapes if cached")
    s.add_argument("--config", default="config.yaml")
    s.add_argument("--seed", type=int, default=0, help="which split's shapes to show")
    s.set_defaults(func=cmd_status)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ChecksumError, DataConfigError, DataFormatError, DataUnavailableError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
