"""Radix sort of float64 keys carrying an int32 tag, for the OC1 line search (:mod:`treeopt.greedy._oc1`).

A line search sorts the critical values ``U_j`` of a node's points and then reads, in that order, each
point's class and direction. numba's ``argsort`` is a quicksort with indirect access (``U[order[i]]``): on
a few thousand points it spends ~50-110 ns per point, mostly cache and branch misses. Here the keys are
mapped to unsigned integers whose order is the floats' order, sorted by an LSD radix sort on their top 33
bits (three stable counting passes of 11 bits, each skipped when all keys share that digit), and finished
by one insertion pass on the full 64 bits, which only moves keys that agree in their top 33 bits (values
within a relative 2^-21 of each other: rare, and already in order when equal). Tags move with their keys,
so the sweep after the sort reads both sequentially. ~9-15 ns per point from ~1,000 points up.

Equal floats stay adjacent (``-0.0`` and ``+0.0`` are neighbours in the integer order), but their relative
order is not numba quicksort's; the caller must check that this order cannot matter (see
``_oc1._sweep``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_NJIT = dict(cache=True, nogil=True)
_SIGN = np.uint64(0x8000000000000000)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(**_NJIT)
def radix_workspace(n):
    """Buffers for sorting up to ``n`` keys (the caller holds the tags): (keys, spare keys, spare tags, histograms
    of :func:`radix_sort_pairs`, histograms of :func:`radix_sort_pairs_small`)."""
    return (np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.int32),
            np.empty((3, 2048), dtype=np.int64), np.empty((4, 256), dtype=np.int64))


@njit(**_NJIT)
def float_to_ordered(bits):
    """The IEEE bits of a float64 mapped so that unsigned order is float order (-inf < ... < -0 < +0 < ... < inf)."""
    return bits ^ _ALL if bits & _SIGN else bits | _SIGN


@njit(**_NJIT)
def ordered_to_float_bits(key):
    """Inverse of :func:`float_to_ordered`."""
    return key ^ _SIGN if key & _SIGN else key ^ _ALL


@njit(**_NJIT)
def radix_sort_pairs(keys, tags, n, spare_keys, spare_tags, hist):
    """Sort ``keys[:n]`` (ordered integers, :func:`float_to_ordered`) ascending, moving ``tags[:n]`` with them.

    Returns the arrays that hold the result (the inputs or the spares: passes alternate between them).
    ``hist`` of shape (3, 2048): three 11-bit digits covering bits 31..63; from a thousand keys on.
    """
    _histograms_11(keys, n, hist)
    return _scatter_passes(keys, tags, n, spare_keys, spare_tags, hist, 31, 11)


@njit(**_NJIT)
def radix_sort_pairs_small(keys, tags, n, spare_keys, spare_tags, hist):
    """:func:`radix_sort_pairs` with four 8-bit digits over bits 32..63 (``hist`` of shape (4, 256)): fewer
    buckets to clear and sum, for a few hundred keys."""
    _histograms_8(keys, n, hist)
    return _scatter_passes(keys, tags, n, spare_keys, spare_tags, hist, 32, 8)


@njit(**_NJIT)
def _histograms_11(keys, n, hist):
    """The three 11-bit digit histograms of bits 31..63 of ``keys[:n]``, in one read."""
    hist[:, :] = 0
    low = np.uint64(31)
    for i in range(n):
        top = keys[i] >> low
        hist[0, top & np.uint64(2047)] += 1
        hist[1, (top >> np.uint64(11)) & np.uint64(2047)] += 1
        hist[2, (top >> np.uint64(22)) & np.uint64(2047)] += 1


@njit(**_NJIT)
def _histograms_8(keys, n, hist):
    """The four 8-bit digit histograms of bits 32..63 of ``keys[:n]``, in one read."""
    hist[:, :] = 0
    low = np.uint64(32)
    for i in range(n):
        top = keys[i] >> low
        hist[0, top & np.uint64(255)] += 1
        hist[1, (top >> np.uint64(8)) & np.uint64(255)] += 1
        hist[2, (top >> np.uint64(16)) & np.uint64(255)] += 1
        hist[3, (top >> np.uint64(24)) & np.uint64(255)] += 1


@njit(**_NJIT)
def _scatter_passes(keys, tags, n, spare_keys, spare_tags, hist, low_shift, digit_bits):
    """The counting passes of an LSD radix sort (digit ``b`` covers bits ``low_shift + b digit_bits`` and up),
    given the digits' histograms (:func:`_counting_passes`); then an insertion pass on the full 64-bit keys."""
    src_k, src_t = _counting_passes(keys, tags, n, spare_keys, spare_tags, hist, low_shift, digit_bits)
    _insertion_pass(src_k, src_t, n, np.int64(n) * np.int64(n))  # keys agreeing in the top bits, by the low bits
    return src_k, src_t


@njit(**_NJIT)
def _insertion_pass(keys, tags, n, max_moves):
    """Stable insertion sort of ``keys[:n]`` (with ``tags``) on the full 64 bits, after passes that sorted their top
    bits: it moves only keys that agree in those bits. Gives up once it has moved more than ``max_moves`` keys
    (the arrays are then in no useful order) and returns whether it finished."""
    for i in range(1, n):
        key = keys[i]
        if key < keys[i - 1]:
            tag = tags[i]
            j = i
            while j > 0 and keys[j - 1] > key:
                keys[j] = keys[j - 1]
                tags[j] = tags[j - 1]
                j -= 1
            keys[j] = key
            tags[j] = tag
            max_moves -= i - j
            if max_moves < 0:
                return False
    return True


# numba's quicksort (numba/misc/quicksort.py, the ``kind="quicksort"`` of ``np.argsort``), replayed on key/tag
# pairs: the same pivots, comparisons and swaps, so the same permutation (ties included) as
# ``np.argsort(keys, kind="quicksort")`` inside numba, without the index indirection and allocations.
_SMALL_QUICKSORT = 15
_MAX_STACK = 100


@njit(**_NJIT)
def _swap(keys, tags, a, b):
    keys[a], keys[b] = keys[b], keys[a]
    tags[a], tags[b] = tags[b], tags[a]


@njit(**_NJIT)
def _insertion_sort(keys, tags, low, high):
    for i in range(low + 1, high + 1):
        key = keys[i]
        tag = tags[i]
        j = i
        while j > low and key < keys[j - 1]:
            keys[j] = keys[j - 1]
            tags[j] = tags[j - 1]
            j -= 1
        keys[j] = key
        tags[j] = tag


@njit(**_NJIT)
def _partition(keys, tags, low, high):
    mid = (low + high) >> 1
    if keys[mid] < keys[low]:
        _swap(keys, tags, low, mid)
    if keys[high] < keys[mid]:
        _swap(keys, tags, high, mid)
    if keys[mid] < keys[low]:
        _swap(keys, tags, low, mid)
    pivot = keys[mid]
    _swap(keys, tags, high, mid)
    i = low
    j = high - 1
    while True:
        while i < high and keys[i] < pivot:
            i += 1
        while j >= low and pivot < keys[j]:
            j -= 1
        if i >= j:
            break
        _swap(keys, tags, i, j)
        i += 1
        j -= 1
    _swap(keys, tags, i, high)
    return i


@njit(**_NJIT)
def quicksort_pairs(keys, tags, n, stack):
    """Sort float64 ``keys[:n]`` (no NaN) moving ``tags`` with them, in numba's argsort quicksort order.

    ``stack``: int64 array of at least ``2 * 100`` slots (numba's ``MAX_STACK`` partitions).
    """
    if n < 2:
        return
    stack[0] = 0
    stack[1] = n - 1
    depth = 1
    while depth > 0:
        depth -= 1
        low = stack[2 * depth]
        high = stack[2 * depth + 1]
        while high - low >= _SMALL_QUICKSORT:
            if depth >= _MAX_STACK:
                raise RuntimeError("quicksort stack overflow")
            i = _partition(keys, tags, low, high)
            if high - i > i - low:  # push the larger side, go on with the smaller
                if high > i:
                    stack[2 * depth] = i + 1
                    stack[2 * depth + 1] = high
                    depth += 1
                high = i - 1
            else:
                if i > low:
                    stack[2 * depth] = low
                    stack[2 * depth + 1] = i - 1
                    depth += 1
                low = i + 1
        _insertion_sort(keys, tags, low, high)


# ------------------------------------------------------------------ a stable sort of values with their labels
# The axis searches (best_axis_split of the two-probe and random-forest-like nodes, random oblique projections)
# sort each candidate column with ``np.argsort(kind="mergesort")`` and then gather values and labels through the
# order: ~30-40 ns per value at 10^4-10^5 points (the two-probe segmentation tree spent 70% of its fit there).
# A stable sort's permutation is unique, so an LSD radix sort (stable) on the order-preserving integer image of
# the floats gives the same sorted values and labels, bit for bit, as long as the integer order is the floats'
# order with ties kept as ties: it is, except that -0.0 and +0.0 (equal floats) get different images, so a column
# holding -0.0, or a NaN, is left to the mergesort.
STABLE_RADIX_MIN = 64
_NEG_ZERO = np.uint64(0x8000000000000000)
_EXPONENT = np.uint64(0x7FF0000000000000)
_MANTISSA = np.uint64(0x000FFFFFFFFFFFFF)


@njit(**_NJIT)
def stable_sort_workspace(n):
    """Buffers for :func:`stable_sort_labelled` on up to ``n`` values: (keys, spare keys, tags, spare tags,
    11-bit histograms, 8-bit histograms)."""
    return (np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.int32),
            np.empty(n, dtype=np.int32), np.empty((3, 2048), dtype=np.int64), np.empty((4, 256), dtype=np.int64))


@njit(**_NJIT)
def _counting_passes(keys, tags, n, spare_keys, spare_tags, hist, low_shift, digit_bits):
    """The stable counting passes of an LSD radix sort (digit ``b`` covers bits ``low_shift + b digit_bits`` and
    up), given the digits' histograms; a pass is skipped when every key has the same digit. Returns the arrays
    holding the result (the inputs or the spares: passes alternate between them)."""
    mask = np.uint64((1 << digit_bits) - 1)
    src_k, src_t, dst_k, dst_t = keys, tags, spare_keys, spare_tags
    for b in range(hist.shape[0]):
        shift = np.uint64(low_shift + digit_bits * b)
        if hist[b, (src_k[0] >> shift) & mask] == n:
            continue
        total = 0
        for v in range(hist.shape[1]):
            count = hist[b, v]
            hist[b, v] = total
            total += count
        for i in range(n):
            key = src_k[i]
            digit = (key >> shift) & mask
            pos = hist[b, digit]
            hist[b, digit] = pos + 1
            dst_k[pos] = key
            dst_t[pos] = src_t[i]
        src_k, src_t, dst_k, dst_t = dst_k, dst_t, src_k, src_t
    return src_k, src_t


@njit(**_NJIT)
def stable_sort_labelled(z, y, zs, ys, ws):
    """``zs[:] = z[order]``, ``ys[:] = y[order]`` for ``order = np.argsort(z, kind="mergesort")``, bit for bit.

    ``z``: float64 (contiguous), ``y``: non-negative integer labels below 2**31, ``ws``: a
    :func:`stable_sort_workspace` of at least ``len(z)``. From :data:`STABLE_RADIX_MIN` values on: an LSD radix
    sort of the keys' top 32-33 bits carrying the labels (three 11-bit passes from 1,000 values, four 8-bit
    passes below), then a stable insertion pass on the full keys, which moves only keys that agree in those bits
    (values within a relative 2**-21 of each other); when it would move more than 8 n keys (values crowded that
    closely), and for a column holding -0.0 or NaN, the mergesort does it."""
    n = z.shape[0]
    if n >= STABLE_RADIX_MIN:
        keys, spare_k, tags, spare_t, hist, hist_small = ws
        bits = z.view(np.uint64)
        clean = True
        for i in range(n):
            b = bits[i]
            if b == _NEG_ZERO or ((b & _EXPONENT) == _EXPONENT and (b & _MANTISSA) != 0):
                clean = False
                break
            keys[i] = float_to_ordered(b)
            tags[i] = y[i]
        if clean:
            if n >= 1000:
                _histograms_11(keys, n, hist)
                sk, st = _counting_passes(keys, tags, n, spare_k, spare_t, hist, 31, 11)
            else:
                _histograms_8(keys, n, hist_small)
                sk, st = _counting_passes(keys, tags, n, spare_k, spare_t, hist_small, 32, 8)
            if _insertion_pass(sk, st, n, 8 * n):
                out = zs.view(np.uint64)
                for i in range(n):
                    out[i] = ordered_to_float_bits(sk[i])
                    ys[i] = st[i]
                return
    order = np.argsort(z, kind="mergesort")
    for i in range(n):
        zs[i] = z[order[i]]
        ys[i] = y[order[i]]
