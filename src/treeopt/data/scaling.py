"""Feature scaling fitted on the training part only.

The CO2 paper (section 6.1) scales features "so that either the feature dimensions are in
the range of [0,1], or they have a zero mean and a unit standard deviation". The affine
map is estimated from ``X_train`` alone and then applied unchanged to validation and test
rows, so test values may fall outside [0, 1].
"""

from __future__ import annotations

import numpy as np

SCALERS = {
    "none": "leave features as parsed",
    "minmax": "per feature: (x - min) / (max - min) over the training rows",
    "standard": "per feature: (x - mean) / std over the training rows",
    "global_minmax": "one (min, max) over all training values, e.g. pixels / 255",
}


def fit_scaler(X_train: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(shift, scale)`` so that the scaled data is ``(X - shift) / scale``.

    Constant features get scale 1 (they map to 0) instead of a division by zero.
    """
    if kind not in SCALERS:
        raise ValueError(f"unknown scaling {kind!r}; use one of {sorted(SCALERS)}")
    p = X_train.shape[1]
    if kind == "none" or X_train.shape[0] == 0:
        return np.zeros(p), np.ones(p)
    if kind == "minmax":
        lo, hi = X_train.min(axis=0), X_train.max(axis=0)
        shift, scale = lo, hi - lo
    elif kind == "standard":
        shift, scale = X_train.mean(axis=0), X_train.std(axis=0)
    else:  # global_minmax
        lo, hi = float(X_train.min()), float(X_train.max())
        shift, scale = np.full(p, lo), np.full(p, hi - lo)
    scale = np.where(scale > 0, scale, 1.0)
    return np.asarray(shift, dtype=np.float64), np.asarray(scale, dtype=np.float64)


def apply_scaler(X: np.ndarray, shift: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Apply a fitted ``(shift, scale)``; returns a new float64 array."""
    return (np.asarray(X, dtype=np.float64) - shift) / scale
