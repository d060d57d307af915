"""Labelling every pixel of an image with a window forest, reading each feature straight from the image.

A pixel's feature f is a value of the normalised window around it (CO2 paper Sec. 6.2): with f = (dy w + dx) 3
+ ch, ``x_f = (image[r - h + dy, c - h + dx, ch] - mean_f) * inv_std_f`` (h = w // 2). The old path cut every
pixel's 2,883-value window out of the image and routed it through each tree (:func:`extract_windows`, then
``Tree.apply``); here a tree reads only the values its nodes test, computed with the same arithmetic, so routing,
leaves and the summed class probabilities are the same bit for bit:

* axis nodes (random forest, or a CO2 node that fell back to its axis split): one value, ``x_f >= b``; trees of
  scikit-learn come in through :meth:`treeopt.trees.Tree.from_sklearn` (``x_dtype`` float32: the value is rounded
  to float32 first, as scikit-learn's float32 input is);
* sparse oblique nodes (two-probe: ``x_i - x_j``): the tree store's sum over the non-zero weights in feature
  order, ``s - b >= 0``;
* dense oblique nodes (CO2 stumps, all 2,883 weights non-zero): the same sum in a faster order. With the constant
  ``c = sum_f w_f inv_std_f mean_f`` of the node, the window's product is ``sum_f w_f inv_std_f x_f - c`` over the
  raw image values: 31 rows of 93 contiguous values, a vectorised loop, against 2,883 gathered, dependent
  additions. The two sums differ by round-off only: both are within ``(d + 3) u (M P + Q)`` of the exact real
  sum (d the node's weights, u = 2^-53, M the image's largest magnitude, ``P = sum |w_f| inv_std_f``,
  ``Q = sum |w_f mean_f| inv_std_f``; Higham's bound for recursive or reassociated summation). When the fast
  margin ``s' - b`` lies farther from 0 than twice that bound (times a safety factor 2), both sums fall on the
  same side of the threshold; otherwise the node is decided by the store's own sum. The route is therefore the
  old one exactly.

Probabilities are added tree by tree, in tree order, into float64 sums per pixel, as the old path's ``acc +=`` did;
the caller reads the sums at each forest size asked. One tree is packed at a time (its dense rows take as much
memory as its CSR weights), so scoring holds no window matrix (the old path: 4,096 x 2,883 float64 per thread).
"""

from __future__ import annotations

import numpy as np
from numba import njit


_NJIT = dict(cache=True, nogil=True)
# Oblique nodes with at least this many non-zero weights take the image-kernel sum (CO2 stumps: all of them);
# fewer (two-probe: 2) are summed as the tree store does.
DENSE_MIN_WEIGHTS = 32
_UNIT_ROUNDOFF = 2.0 ** -53
_SAFETY = 4.0  # 2 for the two sums' errors, 2 to spare


def _inverse_std(std):
    """``1 / std`` as :func:`treeopt.segmentation.windows.extract_windows` computes it (values equal to the bit)."""
    return 1.0 / np.ascontiguousarray(std, dtype=np.float64)


class PackedTree:
    """One fitted tree in the arrays :func:`_add_tree` reads (see the module docstring).

    ``tree``: a :class:`treeopt.trees.Tree` classifier; ``columns`` the forest class index of each column of its
    leaf rows; ``k`` the forest's classes; ``window_size`` w; ``mean``/``std`` the window normalisation. Dense
    oblique nodes get a ``(w, 3w)`` kernel ``w_f inv_std_f`` (the window's layout), their constant
    ``c = sum_f w_f inv_std_f mean_f`` and the round-off terms ``P``, ``Q`` of the module docstring (times
    ``(d + 4) u`` and the safety factor); the other nodes read the tree store's CSR rows (not copied).
    """

    def __init__(self, tree, columns, k, window_size, mean, std):
        d = window_size * window_size * 3
        if tree.n_features != d:
            raise ValueError(f"the tree was fitted on {tree.n_features} features, the windows have {d}")
        mean = np.ascontiguousarray(mean, dtype=np.float64)
        inv_std = _inverse_std(std)
        if mean.shape != (d,) or inv_std.shape != (d,):
            raise ValueError(f"normalisation statistics must have length {d}")
        self.window_size = window_size
        self.x_float32 = tree.x_dtype == "float32"
        self.left, self.right, self.feature, self.bias = tree.left, tree.right, tree.feature, tree.bias
        W = tree.W.tocsr()
        self.indptr = W.indptr.astype(np.int64)
        self.indices = W.indices
        self.data = W.data
        self.values = np.zeros((tree.n_nodes, k))
        self.values[:, np.asarray(columns, dtype=np.int64)] = tree.leaf_probabilities()
        nnz = np.diff(self.indptr)
        dense = (self.feature < 0) & (self.left >= 0) & (nnz >= DENSE_MIN_WEIGHTS)
        if self.x_float32:  # inputs rounded to float32 first: no kernel sum reproduces that; the store's sum
            dense[:] = False
        nodes = np.flatnonzero(dense)
        self.dense = np.full(tree.n_nodes, -1, dtype=np.int64)
        self.dense[nodes] = np.arange(nodes.shape[0])
        self.kernels = np.zeros((nodes.shape[0], window_size, 3 * window_size))
        self.const = np.empty(nodes.shape[0])
        self.err_p = np.empty(nodes.shape[0])
        self.err_q = np.empty(nodes.shape[0])
        for r, node in enumerate(nodes):
            lo, hi = self.indptr[node], self.indptr[node + 1]
            f = self.indices[lo:hi]
            scaled = self.data[lo:hi] * inv_std[f]
            self.kernels[r].ravel()[f] = scaled
            self.const[r] = np.sum(scaled * mean[f])
            gamma = _SAFETY * (hi - lo + 4) * _UNIT_ROUNDOFF
            self.err_p[r] = gamma * np.sum(np.abs(scaled))
            self.err_q[r] = gamma * np.sum(np.abs(scaled * mean[f]))


class WindowScorer:
    """Adds trees' class probabilities at every scored pixel of a set of images, reading windows from the images.

    ``rows``/``cols``: the scored pixels (the same in every image); ``mean``/``std``: the window normalisation
    (length 3 w^2), ``window_size`` w; ``k`` classes. ``sums`` ``(n_images, m, k)`` accumulates in tree order.
    """

    def __init__(self, images, rows, cols, mean, std, window_size, k):
        images = np.asarray(images)
        if images.ndim != 4 or images.shape[-1] != 3:
            raise ValueError(f"images must have shape (n, H, W, 3), got {images.shape}")
        d = window_size * window_size * 3
        n, H, W = images.shape[:3]
        h = window_size // 2
        self.rows = np.ascontiguousarray(rows, dtype=np.int64)
        self.cols = np.ascontiguousarray(cols, dtype=np.int64)
        if self.rows.size and (self.rows.min() < h or self.cols.min() < h or self.rows.max() >= H - h
                               or self.cols.max() >= W - h):
            raise ValueError(f"a {window_size}x{window_size} window around some pixel leaves the {H}x{W} image")
        self.images = np.ascontiguousarray(images).reshape(n, H * W * 3)
        self.width = W
        self.window_size = window_size
        self.mean = np.ascontiguousarray(mean, dtype=np.float64)
        self.inv_std = _inverse_std(std)
        if self.mean.shape != (d,) or self.inv_std.shape != (d,):
            raise ValueError(f"normalisation statistics must have length {d}")
        # where feature f lies in the image, from the window's top-left value: (dy W + dx) 3 + channel
        cell = np.arange(d) // 3
        self.offsets = ((cell // window_size) * W + cell % window_size) * 3 + np.arange(d) % 3
        # M of the round-off bound, per image, from its extremes (no float64 copy of the images)
        self.magnitude = (np.maximum(np.abs(self.images.max(axis=1).astype(np.float64)),
                                     np.abs(self.images.min(axis=1).astype(np.float64))) if n else np.zeros(0))
        self.sums = np.zeros((n, self.rows.shape[0], k))

    def add(self, tree, first, last):
        """Add ``tree``'s (a :class:`PackedTree`) leaf rows to the sums of images ``first..last-1`` (releases
        the GIL: images can be shared out among threads)."""
        if tree.window_size != self.window_size:
            raise ValueError(f"the tree reads {tree.window_size}-pixel windows, the scorer {self.window_size}")
        scorer = (self.images, self.width, self.window_size, self.rows, self.cols, self.offsets, self.mean,
                  self.inv_std, self.magnitude, self.sums)
        packed = (tree.x_float32, tree.left, tree.right, tree.feature, tree.bias, tree.indptr, tree.indices, tree.data,
                  tree.dense, tree.kernels, tree.const, tree.err_p, tree.err_q, tree.values)
        _add_tree(scorer, packed, first, last)


@njit(**_NJIT)
def _value(image, base, offsets, f, mean, inv_std, x_float32):
    """Feature f of the window whose top-left value is ``image[base]``: ``(x - mean) * inv_std`` as
    :func:`treeopt.segmentation.windows.extract_windows` computes it (rounded to float32 for float32 trees)."""
    v = (image[base + offsets[f]] - mean[f]) * inv_std[f]
    if x_float32:
        return np.float64(np.float32(v))
    return v


@njit(cache=True, nogil=True, fastmath={"nsz", "arcp", "contract", "reassoc"})
def _kernel_sum(image, base, W, kernel):
    """``sum_f kernel_f image[...]`` over a window (rows of 3 w contiguous values), in whatever order LLVM
    vectorises: a dense oblique node's product with the window up to its constant (round-off only; the bound
    is in the module docstring)."""
    s = 0.0
    rw = kernel.shape[1]
    for dy in range(kernel.shape[0]):
        start = base + dy * W * 3
        pixels = image[start:start + rw]  # slices: no negative-index fix-up per read, so LLVM vectorises (3x)
        weights = kernel[dy]
        for j in range(rw):
            s += weights[j] * pixels[j]
    return s


@njit(**_NJIT)
def _add_tree(scorer, packed, first, last):
    """Add the leaf rows of the tree ``packed`` (a :class:`PackedTree`'s arrays, in its attribute order) to the
    sums of images ``first..last-1``; ``scorer``: a :class:`WindowScorer`'s arrays (images, width, window size,
    scored rows and columns, feature offsets, normalisation, image magnitudes, sums)."""
    images, W, w, rows, cols, offsets, mean, inv_std, magnitude, sums = scorer
    (x_float32, left, right, feature, bias, indptr, indices, data, dense, kernels, const, err_p, err_q,
     values) = packed
    k = values.shape[1]
    h = w // 2
    for i in range(first, last):
        image = images[i]
        for p in range(rows.shape[0]):
            base = ((rows[p] - h) * W + (cols[p] - h)) * 3
            node = 0
            while left[node] >= 0:
                f = feature[node]
                if f >= 0:
                    go_right = _value(image, base, offsets, f, mean, inv_std, x_float32) >= bias[node]
                else:
                    r = dense[node]
                    decided = False
                    go_right = False
                    if r >= 0:
                        margin = _kernel_sum(image, base, W, kernels[r]) - const[r] - bias[node]
                        if abs(margin) > err_p[r] * magnitude[i] + err_q[r]:
                            go_right = margin >= 0.0
                            decided = True
                    if not decided:  # the tree store's sum: non-zero weights in feature order, as Tree.apply
                        s = 0.0
                        for jj in range(indptr[node], indptr[node + 1]):
                            s += data[jj] * _value(image, base, offsets, indices[jj], mean, inv_std, x_float32)
                        go_right = s - bias[node] >= 0.0
                node = right[node] if go_right else left[node]
            for c in range(k):
                sums[i, p, c] += values[node, c]
