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
_DIGIT_BITS = 11
_DIGIT_MASK = np.uint64((1 << _DIGIT_BITS) - 1)
_N_DIGITS = 3
_N_BUCKETS = 1 << _DIGIT_BITS
_LOW_SHIFT = 64 - _N_DIGITS * _DIGIT_BITS  # 31: the digits cover bits 31..63


@njit(**_NJIT)
def radix_workspace(n):
    """Buffers for sorting up to ``n`` keys: (keys, tags, spare keys, spare tags, histograms)."""
    return (np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.int32), np.empty(n, dtype=np.uint64),
            np.empty(n, dtype=np.int32), np.empty((_N_DIGITS, _N_BUCKETS), dtype=np.int64))


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
    """
    hist[:, :] = 0
    low = np.uint64(_LOW_SHIFT)
    for i in range(n):  # the three histograms in one read (unrolled: _N_DIGITS == 3)
        top = keys[i] >> low
        hist[0, top & _DIGIT_MASK] += 1
        hist[1, (top >> np.uint64(_DIGIT_BITS)) & _DIGIT_MASK] += 1
        hist[2, (top >> np.uint64(2 * _DIGIT_BITS)) & _DIGIT_MASK] += 1
    src_k, src_t, dst_k, dst_t = keys, tags, spare_keys, spare_tags
    for b in range(_N_DIGITS):
        shift = np.uint64(_LOW_SHIFT + _DIGIT_BITS * b)
        if hist[b, (src_k[0] >> shift) & _DIGIT_MASK] == n:
            continue  # every key has this digit: the pass would not move anything
        total = 0
        for v in range(hist.shape[1]):
            count = hist[b, v]
            hist[b, v] = total
            total += count
        for i in range(n):
            key = src_k[i]
            digit = (key >> shift) & _DIGIT_MASK
            pos = hist[b, digit]
            hist[b, digit] = pos + 1
            dst_k[pos] = key
            dst_t[pos] = src_t[i]
        src_k, src_t, dst_k, dst_t = dst_k, dst_t, src_k, src_t
    # keys agreeing in their top 33 bits may still be out of order in the low bits
    for i in range(1, n):
        key = src_k[i]
        if key < src_k[i - 1]:
            tag = src_t[i]
            j = i
            while j > 0 and src_k[j - 1] > key:
                src_k[j] = src_k[j - 1]
                src_t[j] = src_t[j - 1]
                j -= 1
            src_k[j] = key
            src_t[j] = tag
    return src_k, src_t
