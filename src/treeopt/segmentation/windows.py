"""Image windows as feature vectors (CO2 paper Sec. 6.2) and the class-average Jaccard score.

A pixel's feature vector is the ``w x w`` RGB window centred on it (31 x 31 x 3 = 2,883 values in the
paper), ordered row, column, channel. Labels within ``border`` pixels of the image edge are ignored at
training and test time (15 in the paper, so every window lies inside the image). Windows are cut out by a
numba kernel into a caller-sized buffer: nothing holds all windows of a data set at once.
"""

from __future__ import annotations

import numpy as np
from numba import njit, typed

IGNORE = -1  # label of pixels that are not scored (the border)


@njit(cache=True, nogil=True)
def _extract(images, img, rows, cols, half, mean, inv_std, out):
    for t in range(img.shape[0]):
        i, r, c = img[t], rows[t], cols[t]
        k = 0
        for dy in range(-half, half + 1):
            for dx in range(-half, half + 1):
                for ch in range(3):
                    out[t, k] = (images[i, r + dy, c + dx, ch] - mean[k]) * inv_std[k]
                    k += 1


def window_dim(window_size):
    return window_size * window_size * 3


def extract_windows(images, img, rows, cols, window_size, mean=None, std=None, dtype=np.float64, out=None):
    """Windows centred at ``(img[t], rows[t], cols[t])`` as rows of a ``(m, w*w*3)`` array.

    ``mean``/``std`` (length w*w*3) normalise each value as ``(x - mean) / std``; ``out`` may be a reusable
    buffer of at least m rows.
    """
    half = window_size // 2
    d = window_dim(window_size)
    img, rows, cols = (np.ascontiguousarray(a, dtype=np.int64) for a in (img, rows, cols))
    H, W = images.shape[1:3]
    if img.size and (rows.min() < half or cols.min() < half or rows.max() >= H - half or cols.max() >= W - half):
        raise ValueError(f"a {window_size}x{window_size} window around some centre leaves the {H}x{W} image")
    mean = np.zeros(d) if mean is None else np.asarray(mean, dtype=np.float64)
    inv_std = np.ones(d) if std is None else 1.0 / np.asarray(std, dtype=np.float64)
    out = np.empty((img.shape[0], d), dtype=dtype) if out is None else out[:img.shape[0]]
    _extract(images, img, rows, cols, half, mean, inv_std, out)
    return out


def valid_mask(shape, border):
    """Boolean (H, W) mask of the pixels whose labels count (all but a ``border``-pixel frame)."""
    H, W = shape
    if 2 * border >= min(H, W):
        raise ValueError(f"a {border}-pixel border leaves nothing of a {H}x{W} image")
    mask = np.zeros((H, W), dtype=bool)
    mask[border:H - border, border:W - border] = True
    return mask


def confusion(y_true, y_pred, n_classes):
    """(k x k) pixel counts ``C[true, pred]`` over the pixels whose prediction is not IGNORE."""
    t = np.asarray(y_true).ravel().astype(np.int64)
    p = np.asarray(y_pred).ravel().astype(np.int64)
    keep = (p != IGNORE) & (t >= 0) & (t < n_classes)
    return np.bincount(t[keep] * n_classes + p[keep], minlength=n_classes * n_classes).reshape(n_classes,
                                                                                              n_classes)


def jaccard_from_confusion(C):
    """Class-average Jaccard 100 * tp / (tp + fp + fn) (CO2 paper Sec. 6.2; PASCAL VOC), averaged over the
    classes that occur in the truth or the prediction. Also returns the per-class scores (NaN if absent)."""
    C = np.asarray(C, dtype=np.float64)
    tp = np.diag(C)
    denom = C.sum(axis=0) + C.sum(axis=1) - tp
    per_class = np.where(denom > 0, 100.0 * tp / np.where(denom > 0, denom, 1.0), np.nan)
    return (float(np.nanmean(per_class)) if np.any(denom > 0) else float("nan")), per_class


def jaccard_score(y_true, y_pred, n_classes=None):
    """Class-average Jaccard (%) of label maps; pixels predicted IGNORE (the border) are not scored."""
    if n_classes is None:
        n_classes = int(max(np.max(y_true), np.max(y_pred))) + 1
    return jaccard_from_confusion(confusion(y_true, y_pred, n_classes))[0]


# ------------------------------------------------------------------------------ scored pixels and class pools
def n_valid(shape, border):
    """Pixels inside the border of ``n`` images of ``H x W`` (``shape = (n, H, W)``)."""
    n, H, W = shape
    return n * (H - 2 * border) * (W - 2 * border)


def valid_flat(index, shape, border):
    """Flat pixel indices (into ``n x H x W``) of the pixels numbered ``index`` among those inside the border,
    numbered image by image in row-major order (the order of ``np.flatnonzero`` over the valid masks)."""
    H, W = shape
    h, w = H - 2 * border, W - 2 * border
    img, rem = np.divmod(np.asarray(index, dtype=np.int64), h * w)
    r, c = np.divmod(rem, w)
    return img * (H * W) + (r + border) * W + (c + border)


@njit(cache=True, nogil=True)
def class_counts(inner, k):
    """Pixels of each label ``0..k-1`` in the label maps' inner parts (n, h, w)."""
    counts = np.zeros(k, dtype=np.int64)
    for i in range(inner.shape[0]):
        for r in range(inner.shape[1]):
            for c in range(inner.shape[2]):
                counts[np.int64(inner[i, r, c])] += 1
    return counts


def class_pools(inner, counts, shape, border, dtype):
    """Per class, the flat pixel indices (into ``n x H x W``) of its pixels inside the border, increasing."""
    pools = [np.empty(c, dtype=dtype) for c in counts]
    _fill_pools(inner, shape[0], shape[1], border, typed.List(pools))
    return pools


@njit(cache=True, nogil=True)
def _fill_pools(inner, H, W, border, pools):
    fill = np.zeros(len(pools), dtype=np.int64)
    for i in range(inner.shape[0]):
        for r in range(inner.shape[1]):
            base = i * H * W + (r + border) * W + border
            for c in range(inner.shape[2]):
                label = np.int64(inner[i, r, c])
                pools[label][fill[label]] = base + c
                fill[label] += 1
