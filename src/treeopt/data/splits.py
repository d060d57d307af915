"""Split protocols: which rows are train, validation and test for a given seed.

- ``provided``: the files say which rows are train and test (non-greedy paper, section 5:
  "We use the provided train, validation, test sets when available"); a provided
  validation part is used as is, otherwise ``val_fraction`` (0.2: their 80%/20%) of the
  training rows is drawn at random.
- ``rows``: explicit half-open row ranges, e.g. Letter's UCI rows 1-15000 / 15001-20000.
- ``random``: no split exists: ``test_fraction`` (or ``n_test``) of all rows for test,
  then ``val_fraction`` (or ``n_val``) of the rest; defaults give the 64%/16%/20%.
- ``rgf``: the RGF paper's protocol (section 6.1.2): each run (run index = seed) draws
  ``n_train`` (2,000) training points at random from a pool disjoint from the test set.
  The test set is the provided one, fixed row ranges, a ``holdout`` of ``n_test`` points
  drawn once with ``test_seed`` (the same for every run), the points of odd or even
  ``group`` ids (CT slices: patient id), or the ``rest`` after drawing the training points.

Returned index arrays are sorted, disjoint and reproducible for a given seed.
"""

from __future__ import annotations

import warnings
from typing import Any, Mapping

import numpy as np

from .errors import DataWarning

_SALT = {"provided": 11, "random": 13, "rgf": 17, "holdout": 19}


def _rng(seed: int, protocol: str) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([int(seed), _SALT[protocol]]))


def _draw(rng: np.random.Generator, pool: np.ndarray, n: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n`` rows of ``pool`` without replacement; return (drawn, remaining), sorted."""
    if n > len(pool):
        raise ValueError(f"cannot draw {n} {what} rows from a pool of {len(pool)}")
    chosen = rng.permutation(len(pool))[:n]
    mask = np.zeros(len(pool), dtype=bool)
    mask[chosen] = True
    return np.sort(pool[mask]), np.sort(pool[~mask])


def _count(n_rows: int, fraction: float | None, count: int | None) -> int:
    return int(count) if count is not None else int(round(float(fraction or 0.0) * n_rows))


def make_split(
    split: Mapping[str, Any], part: np.ndarray, group: np.ndarray | None, seed: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(train, val, test)`` row indices for the validated ``split`` mapping."""
    protocol = split["protocol"]
    n = len(part)
    rows = np.arange(n)
    if protocol == "provided":
        train, test = rows[part == 0], rows[part == 2]
        if len(train) == 0 or len(test) == 0:
            raise ValueError(
                "split protocol provided needs files with train and test roles; "
                "use protocol random (no split) or rows"
            )
        if np.any(part == 1):
            return train, rows[part == 1], test
        val, train = _draw(_rng(seed, protocol), train, _count(len(train), split["val_fraction"], None), "validation")
        return train, val, test
    if protocol == "rows":
        out = []
        for key in ("train", "val", "test"):
            rng_ = split.get(key)
            if rng_ is None:
                out.append(np.array([], dtype=np.int64))
                continue
            start, stop = rng_
            if stop > n:
                raise ValueError(f"split.{key} [{start}, {stop}] goes past the {n} rows")
            out.append(rows[start:stop])
        _check_disjoint(out)
        return tuple(out)
    if protocol == "random":
        rng = _rng(seed, protocol)
        test, rest = _draw(rng, rows, _count(n, split["test_fraction"], split["n_test"]), "test")
        val, train = _draw(rng, rest, _count(len(rest), split["val_fraction"], split["n_val"]), "validation")
        return train, val, test
    if protocol == "rgf":
        return _rgf_split(split, part, group, seed)
    raise ValueError(f"unknown split protocol {protocol!r}")


def _rgf_split(split, part, group, seed):
    n = len(part)
    rows = np.arange(n)
    source = split["test"]
    if source == "provided":
        test = rows[part == 2]
        if len(test) == 0:
            raise ValueError("rgf split with test: provided needs a file with role test")
    elif source == "holdout":
        test, _ = _draw(_rng(split["test_seed"], "holdout"), rows, split["n_test"], "test")
    elif source == "rows":
        start, stop = split["test_rows"]
        if stop > n:
            raise ValueError(f"split.test_rows [{start}, {stop}] goes past the {n} rows")
        test = rows[start:stop]
    elif source in ("group_odd", "group_even"):
        if group is None:
            raise ValueError(f"rgf split with test: {source} needs options.group_column")
        test = rows[(group % 2 == 1) == (source == "group_odd")]
    else:  # rest: decided after drawing the training points
        test = np.array([], dtype=np.int64)
    pool = np.setdiff1d(rows, test)
    rng = _rng(seed, "rgf")
    train, pool = _draw(rng, pool, split["n_train"], "training")
    val, pool = _draw(rng, pool, split["n_val"], "validation")
    if source == "rest":
        test = pool
    expected = split.get("expect_test_size")
    if expected is not None and len(test) != expected:
        warnings.warn(
            f"rgf split: test set has {len(test)} rows, the paper reports {expected}",
            DataWarning, stacklevel=3,
        )
    return train, val, test


def _check_disjoint(parts) -> None:
    seen = np.concatenate(parts)
    if len(np.unique(seen)) != len(seen):
        raise ValueError("split row ranges overlap")
