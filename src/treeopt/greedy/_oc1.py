"""OC1 hyperplane search at one node (Murthy, Kasif & Salzberg, JAIR 1994), maximising information gain.

A hyperplane ``(w, b)`` sends point j right iff ``V_j = w . x_j - b >= 0``. Moving the hyperplane along a
direction ``r = (r_w, r_b)`` gives ``V_j(alpha) = V_j + alpha d_j`` with ``d_j = r_w . x_j - r_b``, so each
point switches side at the critical value ``U_j = -V_j / d_j`` (Murthy et al.'s ``U_j``, their eq. (1)).
Sorting the ``U_j`` and sweeping them finds the best ``alpha`` exactly (``_line_search``). OC1 uses this
line search along

* each coordinate ``w_m`` in turn (``d_j = x_jm``) and the offset ``b`` (``d_j = -1``) -- deterministic
  coordinate descent, cycled until no coefficient improves the gain;
* random directions ("random perturbations", their §2.3) to leave local maxima; a successful jump restarts
  coordinate descent;
* from several starting hyperplanes ("random restarts"): the first is the given initial split (the CO2
  paper initialises with the best axis-aligned split on q sampled features), the others random.

Only strict improvements are accepted (OC1's stochastic "stagnation" moves are not implemented), so the
returned gain is never below the gain of the initial hyperplane.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._criteria import _sweep_sorted, _xlogx_table, class_counts
from ._grow import project_into
from ._radix import (float_to_ordered, ordered_to_float_bits, quicksort_pairs, radix_sort_pairs,
                     radix_sort_pairs_small, radix_workspace)

_NJIT = dict(cache=True, nogil=True)
_TOL = 1e-12  # gains closer than this count as ties (guards against rounding cycles)


@njit(**_NJIT)
def _gain_of_sides(V, y, k, min_samples_leaf, total, xlogx):
    """Information gain of the partition ``V >= 0 -> right`` (-inf if a side is too small). The search uses
    :func:`_gain_of_sides_multi` (this with multiplicities); this rows form is the definition it must equal, and
    the 071be0e reference search of the tests calls it."""
    n = V.shape[0]
    right = np.zeros(k, dtype=np.int64)
    for j in range(n):
        if V[j] >= 0.0:
            right[y[j]] += 1
    n_right = right.sum()
    n_left = n - n_right
    if n_right < min_samples_leaf or n_left < min_samples_leaf:
        return -np.inf
    s = 0.0
    s_left = 0.0
    s_right = 0.0
    for c in range(k):
        s += xlogx[total[c]]
        s_left += xlogx[total[c] - right[c]]
        s_right += xlogx[right[c]]
    parent = xlogx[n] - s
    return (parent - (xlogx[n_left] - s_left) - (xlogx[n_right] - s_right)) / n


@njit(**_NJIT)
def _gain_of_sides_multi(V, y, mult, n, k, min_samples_leaf, total, xlogx):
    """:func:`_gain_of_sides` of ``n`` points given as distinct points ``V``, ``y`` with multiplicities ``mult``: the
    same class counts (integers), so the same gain to the bit."""
    right = np.zeros(k, dtype=np.int64)
    for j in range(V.shape[0]):
        if V[j] >= 0.0:
            right[y[j]] += mult[j]
    n_right = right.sum()
    n_left = n - n_right
    if n_right < min_samples_leaf or n_left < min_samples_leaf:
        return -np.inf
    s = 0.0
    s_left = 0.0
    s_right = 0.0
    for c in range(k):
        s += xlogx[total[c]]
        s_left += xlogx[total[c] - right[c]]
        s_right += xlogx[right[c]]
    parent = xlogx[n] - s
    return (parent - (xlogx[n_left] - s_left) - (xlogx[n_right] - s_right)) / n


@njit(**_NJIT)
def _line_search_quicksort(V, d, y, k, min_samples_leaf, total, xlogx):
    """Best step ``alpha`` for ``V + alpha d >= 0 -> right``; returns (alpha, gain), gain -inf if none valid.

    The plain form of the line search (numba's argsort, then a sweep through ``order``): kept as the
    fallback of :func:`_line_search_into` when the order inside a group of equal ``U`` could change the
    rounding (see :func:`_sweep`), and as the definition the fast form must reproduce bit for bit.

    Points with ``d_j > 0`` are right iff ``alpha >= U_j``, points with ``d_j < 0`` iff ``alpha <= U_j``,
    points with ``d_j = 0`` never move. Candidates are midpoints between consecutive distinct ``U``
    values plus one step beyond each end.
    """
    n = V.shape[0]
    U = np.empty(n)
    ev = np.empty(n, dtype=np.int64)
    n_ev = 0
    right = np.zeros(k, dtype=np.int64)
    for j in range(n):
        if d[j] != 0.0:
            U[n_ev] = -V[j] / d[j]
            ev[n_ev] = j
            n_ev += 1
            if d[j] < 0.0:
                right[y[j]] += 1  # alpha -> -inf: all d<0 points are right
        elif V[j] >= 0.0:
            right[y[j]] += 1
    if n_ev == 0:
        return 0.0, -np.inf
    U = U[:n_ev]
    order = np.argsort(U, kind="quicksort")
    left = total - right
    n_right = right.sum()
    s_left = 0.0
    s_right = 0.0
    s = 0.0
    for c in range(k):
        s_left += xlogx[left[c]]
        s_right += xlogx[right[c]]
        s += xlogx[total[c]]
    parent = xlogx[n] - s
    lo = U[order[0]]
    hi = U[order[n_ev - 1]]
    step = (hi - lo) / n_ev if hi > lo else 1.0

    best_gain = -np.inf
    best_alpha = 0.0
    n_left = n - n_right
    if n_left >= min_samples_leaf and n_right >= min_samples_leaf:
        best_gain = (parent - (xlogx[n_left] - s_left) - (xlogx[n_right] - s_right)) / n
        best_alpha = lo - step
    i = 0
    while i < n_ev:
        u = U[order[i]]
        while i < n_ev and U[order[i]] == u:  # all points switching at this critical value
            j = ev[order[i]]
            c = y[j]
            if d[j] > 0.0:  # left -> right
                s_left += xlogx[left[c] - 1] - xlogx[left[c]]
                s_right += xlogx[right[c] + 1] - xlogx[right[c]]
                left[c] -= 1
                right[c] += 1
                n_right += 1
            else:  # right -> left
                s_right += xlogx[right[c] - 1] - xlogx[right[c]]
                s_left += xlogx[left[c] + 1] - xlogx[left[c]]
                right[c] -= 1
                left[c] += 1
                n_right -= 1
            i += 1
        n_left = n - n_right
        if n_left < min_samples_leaf or n_right < min_samples_leaf:
            continue
        gain = (parent - (xlogx[n_left] - s_left) - (xlogx[n_right] - s_right)) / n
        if gain > best_gain:
            best_gain = gain
            if i < n_ev:
                nxt = U[order[i]]
                alpha = 0.5 * u + 0.5 * nxt
                best_alpha = alpha if alpha > u else nxt
            else:
                best_alpha = u + step
    return best_alpha, best_gain



# Sort by size (moving points): below 64 numba's quicksort replayed on the pairs (a radix pass costs its histogram
# clearing there); up to 1000 four 8-bit radix passes; from 1000 three 11-bit passes. On this machine (loaded) the
# radix sorts took 9-15 ns per point from ~1000 points on against 50-110 for numba's argsort, and were even with it
# at ~300 (/tmp timings of this session, summarised in docs/co2.md "OC1 speed").
RADIX_MIN_POINTS = 64
RADIX_WIDE_POINTS = 1000  # from here on 11-bit digits (3 passes) rather than 8-bit ones (4 passes)
# after this many radix-path line searches at a node, if more than half fell back on the quicksort form (tie groups
# mixing tags), the node's next TIE_PRONE_SKIP searches take the quicksort form directly (the same results, without
# paying both), then the radix path is tried again: a node ties while its hyperplane is axis-aligned on integer
# features (Letter: the first restart) and stops tying once the search has turned it; judged once for the whole node,
# Letter's trees took 3x as long (15.2 vs 4.9-5.2 CPU-s a tree)
TIE_PRONE_AFTER = 16
TIE_PRONE_SKIP = 64


@njit(**_NJIT)
def line_search_workspace(n, k, xlogx):
    """Buffers :func:`_line_search_into` reuses across the line searches of one node (no allocation per call), and
    the node's table of ``xlogx[c + 1] - xlogx[c]`` (``xlogx``: the node's :func:`_xlogx_table`)."""
    keys, spare_keys, spare_tags, hist, hist_small = radix_workspace(n)
    # tally: radix-path line searches of the node's current window, how many of them fell back (a tie group mixing
    # tags), searches since then that took the quicksort form directly (TIE_PRONE_AFTER, TIE_PRONE_SKIP)
    return (np.empty(n), np.empty(n, dtype=np.int32), np.zeros(k, dtype=np.int64), np.zeros(2 * k, dtype=np.int64),
            keys, spare_keys, spare_tags, hist, hist_small, np.empty(2 * 100, dtype=np.int64),
            np.zeros(3, dtype=np.int64), xlogx[1:] - xlogx[:-1])


@njit(**_NJIT)
def _radix_sorted_floats(keys, tags, n, spare_keys, spare_tags, hist, hist_small):
    """Sort ``n`` pairs of ordered keys (:func:`float_to_ordered`) and tags by radix, 8-bit digits below
    ``RADIX_WIDE_POINTS`` keys and 11-bit ones from there, and turn the sorted keys back into float64 bits in place;
    returns (sorted keys, to be viewed as float64, and their tags): the arrays holding them (inputs or spares)."""
    if n < RADIX_WIDE_POINTS:
        sorted_keys, sorted_tags = radix_sort_pairs_small(keys, tags, n, spare_keys, spare_tags, hist_small)
    else:
        sorted_keys, sorted_tags = radix_sort_pairs(keys, tags, n, spare_keys, spare_tags, hist)
    for i in range(n):
        sorted_keys[i] = ordered_to_float_bits(sorted_keys[i])
    return sorted_keys, sorted_tags


@njit(**_NJIT)
def _line_search(V, d, y, k, min_samples_leaf, total, xlogx):
    """:func:`_line_search_into` with its own buffers (for tests and one-off calls)."""
    ws = line_search_workspace(V.shape[0], k, xlogx)
    return _line_search_into(V, d, y, k, min_samples_leaf, total, xlogx, ws)


@njit(**_NJIT)
def _line_search_into(V, d, y, k, min_samples_leaf, total, xlogx, ws):
    """Best step ``alpha`` for ``V + alpha d >= 0 -> right``; returns (alpha, gain), gain -inf if none valid.

    Computes exactly what :func:`_line_search_quicksort` computes (same alpha and gain, bit for bit), faster:
    each moving point's critical value ``U_j = -V_j / d_j`` (Murthy et al.'s eq. (1)) is stored with a tag
    ``2 y_j + [d_j > 0]`` (its class and the way it switches), so the sweep reads class and direction
    sequentially instead of through ``order``, ``y`` and ``d``. Below ``RADIX_MIN_POINTS`` moving points the
    pairs are sorted in place by :func:`quicksort_pairs` (numba's quicksort replayed: the same order, without
    indirection or allocation); from there on by :func:`radix_sort_pairs`. The sweep adds each switching
    point's entropy change in sorted order, so inside a group of equal ``U`` the order can change the rounding
    when the group mixes tags; the radix order is kept only when no group does (``_sweep`` checks it), else
    the quicksort form runs (~1% of Letter's line searches).
    ``ws``: :func:`line_search_workspace` of at least ``len(V)`` points and ``k`` classes.
    """
    U, tags, right, left, keys, spare_keys, spare_tags, hist, hist_small, stack, tally, step_up = ws
    n = V.shape[0]
    right[:k] = 0
    n_ev = 0
    nan_seen = False
    for j in range(n):
        dj = d[j]
        if dj != 0.0:
            u = -V[j] / dj
            nan_seen |= u != u
            U[n_ev] = u
            tags[n_ev] = 2 * y[j] + (dj > 0.0)
            n_ev += 1
            right[y[j]] += dj < 0.0  # alpha -> -inf: all d<0 points are right (no branch: signs are mixed)
        elif V[j] >= 0.0:
            right[y[j]] += 1
    if n_ev == 0:
        return 0.0, -np.inf
    if nan_seen:  # no NaN from finite inputs; numba's sort orders NaN last, which only the plain form copies
        return _line_search_quicksort(V, d, y, k, min_samples_leaf, total, xlogx)
    if n_ev < RADIX_MIN_POINTS:
        # numba's quicksort replayed on the pairs: the plain form's order, ties included, so no check is needed
        return _quicksort_form(U, tags, n_ev, n, k, min_samples_leaf, total, xlogx, step_up, right, left, stack)
    if tally[0] >= TIE_PRONE_AFTER:
        if 2 * tally[1] > tally[0]:
            # a node whose projections tie across classes (one-hot or integer features, e.g. Connect-4) falls back on
            # most searches: the radix sort and its sweep would only be paid on top of the quicksort form
            tally[2] += 1
            if tally[2] >= TIE_PRONE_SKIP:
                tally[:] = 0  # judge again from the next search on
            return _quicksort_form(U, tags, n_ev, n, k, min_samples_leaf, total, xlogx, step_up, right, left, stack)
        tally[:] = 0  # not tie-prone now: a fresh window, so that a node that starts tying is seen soon
    tally[0] += 1
    bits = U.view(np.uint64)
    for i in range(n_ev):
        keys[i] = float_to_ordered(bits[i])
    sorted_keys, sorted_tags = _radix_sorted_floats(keys, tags, n_ev, spare_keys, spare_tags, hist, hist_small)
    alpha, gain, mixed = _sweep(sorted_keys.view(np.float64), sorted_tags, n_ev, n, k, min_samples_leaf, total,
                                xlogx, step_up, right, left, True)
    if mixed:
        tally[1] += 1
        # the radix passes moved the tags; U is as filled above, so the quicksort form sees the same input
        i = 0
        for j in range(n):
            if d[j] != 0.0:
                tags[i] = 2 * y[j] + (d[j] > 0.0)
                i += 1
        return _quicksort_form(U, tags, n_ev, n, k, min_samples_leaf, total, xlogx, step_up, right, left, stack)
    return alpha, gain


@njit(**_NJIT)
def _quicksort_form(U, tags, n_ev, n, k, min_samples_leaf, total, xlogx, step_up, right, left, stack):
    """:func:`_line_search_quicksort`'s result from the filled pairs (``U``, ``tags``; ``right`` as filled): numba's
    quicksort replayed on the pairs gives its argsort's order, ties included (:func:`quicksort_pairs`), and the sweep
    adds the same terms in that order, so no tie check is needed; without the plain form's allocations and its
    reads through ``order``."""
    quicksort_pairs(U, tags, n_ev, stack)
    alpha, gain, mixed = _sweep(U, tags, n_ev, n, k, min_samples_leaf, total, xlogx, step_up, right, left, False)
    return alpha, gain


@njit(**_NJIT)
def _sweep(sorted_U, sorted_tags, n_ev, n, k, min_samples_leaf, total, xlogx, step_up, right, left, check_ties):
    """The sweep of :func:`_line_search_quicksort` over presorted critical values; returns (alpha, gain, mixed).

    ``right`` holds the class counts on the right side at ``alpha -> -inf``; ``left`` (2k slots) is scratch.
    Same arithmetic, in the same order,
    as the plain form, so the same result whenever the points come in the plain form's order up to reordering
    inside groups of equal ``U`` whose points all have one tag (then every order adds the same terms).
    With ``check_ties``, a group mixing tags stops the sweep and returns ``mixed = True`` (result unusable).
    ``step_up``: ``xlogx[c + 1] - xlogx[c]`` for c < n (made by :func:`line_search_workspace`).

    Two exact shortcuts: a switching point's entropy changes are read from the table of differences
    ``xlogx[c + 1] - xlogx[c]`` (the plain form's ``xlogx[c - 1] - xlogx[c]`` is the negated difference, and
    IEEE subtraction is antisymmetric: the same numbers); and a state's gain is divided by n only when its
    numerator beats the best numerator so far (division by n > 0 is monotone, so a numerator that does not beat
    it cannot give a larger gain; one that does is divided and compared as the plain form compares).
    """
    counts = left  # 2k slots: left counts, then right counts
    n_right = 0
    s_left = 0.0
    s_right = 0.0
    s = 0.0
    for c in range(k):
        counts[c] = total[c] - right[c]
        counts[k + c] = right[c]
        n_right += right[c]
        s_left += xlogx[counts[c]]
        s_right += xlogx[right[c]]
        s += xlogx[total[c]]
    parent = xlogx[n] - s
    lo = sorted_U[0]
    hi = sorted_U[n_ev - 1]
    step = (hi - lo) / n_ev if hi > lo else 1.0

    best_gain = -np.inf
    best_numerator = -np.inf
    best_alpha = 0.0
    n_left = n - n_right
    if n_left >= min_samples_leaf and n_right >= min_samples_leaf:
        best_numerator = parent - (xlogx[n_left] - s_left) - (xlogx[n_right] - s_right)
        best_gain = best_numerator / n
        best_alpha = lo - step
    i = 0
    while i < n_ev:
        u = sorted_U[i]
        first_tag = sorted_tags[i]
        while i < n_ev and sorted_U[i] == u:  # all points switching at this critical value
            tag = sorted_tags[i]
            if check_ties and tag != first_tag:
                return 0.0, -np.inf, True
            # the plain form's two branches without a branch (directions are unpredictable): the point leaves
            # side `src` and joins `dst`; the same two differences are added to the same sums
            c = tag >> 1
            to_right = tag & 1
            src = c + k * (1 - to_right)  # counts[:k] = left, counts[k:] = right
            dst = c + k * to_right
            leave = -step_up[counts[src] - 1]
            join = step_up[counts[dst]]
            s_left += join if to_right == 0 else leave
            s_right += leave if to_right == 0 else join
            counts[src] -= 1
            counts[dst] += 1
            n_right += 2 * to_right - 1
            i += 1
        n_left = n - n_right
        if n_left < min_samples_leaf or n_right < min_samples_leaf:
            continue
        numerator = parent - (xlogx[n_left] - s_left) - (xlogx[n_right] - s_right)
        if numerator <= best_numerator:
            continue
        gain = numerator / n
        if gain > best_gain:
            best_gain = gain
            best_numerator = numerator
            if i < n_ev:
                nxt = sorted_U[i]
                alpha = 0.5 * u + 0.5 * nxt
                best_alpha = alpha if alpha > u else nxt
            else:
                best_alpha = u + step
    return best_alpha, best_gain, False


# Distinct points with multiplicities (a bootstrap sample repeats about a third of its rows, and a repeated row is one
# point: same V_j, d_j, class, critical value). The line search sorts each distinct point once and its sweep adds the
# point's entropy changes once per copy, in a row: the terms the search over all rows adds, in the same order, since
# copies are equal critical values of one tag (any order inside such a group adds the same terms; groups that mix
# tags go to the quicksort form over all rows, as without multiplicities). A point's multiplicity rides in its radix
# tag above the class-and-direction bits.
TAG_BITS = 16
_TAG_MASK = (1 << TAG_BITS) - 1
MAX_MULTIPLICITY = (1 << (31 - TAG_BITS)) - 1  # the packed tag stays a positive int32
MAX_TAG_CLASSES = (1 << (TAG_BITS - 1)) - 1


@njit(**_NJIT)
def _expand(values, inv, out):
    """``out[j] = values[inv[j]]``: a per-point array of the node's rows (row j is point ``inv[j]``)."""
    for j in range(inv.shape[0]):
        out[j] = values[inv[j]]


@njit(**_NJIT)
def _line_search_multi(V, d, y, mult, k, min_samples_leaf, total, xlogx, ws, rows):
    """:func:`_line_search_into` over the node's rows, given as distinct points ``V``, ``d``, ``y`` with multiplicities
    ``mult`` (``rows = (inv, y_rows, V_rows, d_rows)``: each row's point, the rows' labels, and two buffers of a row
    each): the same (alpha, gain) bit for bit, the same decisions (quicksort form below ``RADIX_MIN_POINTS`` moving
    rows, the tie-prone tally) and the same fallbacks, which run over the rows themselves; the radix sort and the
    fill before it see each distinct point once."""
    U, tags, right, left, keys, spare_keys, spare_tags, hist, hist_small, stack, tally, step_up = ws
    inv, y_rows, V_rows, d_rows = rows
    n = inv.shape[0]
    right[:k] = 0
    n_entries = 0
    n_ev = 0  # moving rows, as the search over rows counts them
    nan_seen = False
    for j in range(V.shape[0]):
        dj = d[j]
        m = mult[j]
        if dj != 0.0:
            u = -V[j] / dj
            nan_seen |= u != u
            U[n_entries] = u
            tags[n_entries] = (m << TAG_BITS) | (2 * y[j] + (dj > 0.0))
            n_entries += 1
            n_ev += m
            right[y[j]] += m * (dj < 0.0)  # no branch: signs are mixed
        elif V[j] >= 0.0:
            right[y[j]] += m
    if n_ev == 0:
        return 0.0, -np.inf
    tie_prone = tally[0] >= TIE_PRONE_AFTER and 2 * tally[1] > tally[0]
    if nan_seen or n_ev < RADIX_MIN_POINTS or tie_prone:  # the search over rows takes these, deciding as it would
        _expand(V, inv, V_rows)
        _expand(d, inv, d_rows)
        return _line_search_into(V_rows, d_rows, y_rows, k, min_samples_leaf, total, xlogx, ws)
    if tally[0] >= TIE_PRONE_AFTER:
        tally[:] = 0  # not tie-prone now (as _line_search_into)
    tally[0] += 1
    bits = U.view(np.uint64)
    for i in range(n_entries):
        keys[i] = float_to_ordered(bits[i])
    sorted_keys, sorted_tags = _radix_sorted_floats(keys, tags, n_entries, spare_keys, spare_tags, hist, hist_small)
    alpha, gain, mixed = _sweep_multi(sorted_keys.view(np.float64), sorted_tags, n_entries, n_ev, n, k,
                                      min_samples_leaf, total, xlogx, step_up, right, left)
    if mixed:
        tally[1] += 1
        _expand(V, inv, V_rows)
        _expand(d, inv, d_rows)
        i = 0
        for j in range(n):  # the rows' pairs, in row order, as _line_search_into filled them
            if d_rows[j] != 0.0:
                U[i] = -V_rows[j] / d_rows[j]
                tags[i] = 2 * y_rows[j] + (d_rows[j] > 0.0)
                i += 1
        return _quicksort_form(U, tags, n_ev, n, k, min_samples_leaf, total, xlogx, step_up, right, left, stack)
    return alpha, gain


@njit(**_NJIT)
def _sweep_multi(sorted_U, sorted_tags, n_entries, n_ev, n, k, min_samples_leaf, total, xlogx, step_up, right, left):
    """:func:`_sweep` with ``check_ties`` over ``n_entries`` sorted distinct points whose tags carry their
    multiplicities (``n_ev`` moving rows in all): each point's change is added once per copy, in a row. The start
    and the step after a group repeat :func:`_sweep`'s: shared through inlined helpers returning the best state as a
    tuple, both sweeps measured 15-20% slower (a `/tmp` micro-benchmark of one line search, 17,766 rows)."""
    counts = left  # 2k slots: left counts, then right counts
    n_right = 0
    s_left = 0.0
    s_right = 0.0
    s = 0.0
    for c in range(k):
        counts[c] = total[c] - right[c]
        counts[k + c] = right[c]
        n_right += right[c]
        s_left += xlogx[counts[c]]
        s_right += xlogx[right[c]]
        s += xlogx[total[c]]
    parent = xlogx[n] - s
    lo = sorted_U[0]
    hi = sorted_U[n_entries - 1]
    step = (hi - lo) / n_ev if hi > lo else 1.0

    best_gain = -np.inf
    best_numerator = -np.inf
    best_alpha = 0.0
    n_left = n - n_right
    if n_left >= min_samples_leaf and n_right >= min_samples_leaf:
        best_numerator = parent - (xlogx[n_left] - s_left) - (xlogx[n_right] - s_right)
        best_gain = best_numerator / n
        best_alpha = lo - step
    i = 0
    while i < n_entries:
        u = sorted_U[i]
        first_tag = sorted_tags[i] & _TAG_MASK
        while i < n_entries and sorted_U[i] == u:
            packed = sorted_tags[i]
            tag = packed & _TAG_MASK
            if tag != first_tag:
                return 0.0, -np.inf, True
            c = tag >> 1
            to_right = tag & 1
            src = c + k * (1 - to_right)
            dst = c + k * to_right
            m = packed >> TAG_BITS
            from_count = counts[src]  # the two counts in registers while the point's copies move
            to_count = counts[dst]
            for _ in range(m):  # the point's copies: the terms the rows add, in a row
                leave = -step_up[from_count - 1]
                join = step_up[to_count]
                s_left += join if to_right == 0 else leave
                s_right += leave if to_right == 0 else join
                from_count -= 1
                to_count += 1
            counts[src] = from_count
            counts[dst] = to_count
            n_right += m * (2 * to_right - 1)
            i += 1
        n_left = n - n_right
        if n_left < min_samples_leaf or n_right < min_samples_leaf:
            continue
        numerator = parent - (xlogx[n_left] - s_left) - (xlogx[n_right] - s_right)
        if numerator <= best_numerator:
            continue
        gain = numerator / n
        if gain > best_gain:
            best_gain = gain
            best_numerator = numerator
            if i < n_entries:
                nxt = sorted_U[i]
                alpha = 0.5 * u + 0.5 * nxt
                best_alpha = alpha if alpha > u else nxt
            else:
                best_alpha = u + step
    return best_alpha, best_gain, False


@njit(**_NJIT)
def _best_offset(X, w, y, k, min_samples_leaf, total, xlogx, z):
    """Best ``b`` for fixed ``w`` (exhaustive over thresholds of ``z = X w``); returns (b, gain)."""
    project_into(X, w, z)
    order = np.argsort(z, kind="quicksort")
    return _sweep_sorted(z[order], y[order], k, min_samples_leaf, total, xlogx)


@njit(**_NJIT)
def _best_offset_into(X, w, y, k, min_samples_leaf, total, xlogx, z, ws):
    """:func:`_best_offset`, the same (b, gain) bit for bit, with ``z`` sorted by the line search's radix sort
    from ``RADIX_MIN_POINTS`` points on (``ws``: :func:`line_search_workspace`) instead of an argsort.

    ``_sweep_sorted`` adds each point's entropy change in sorted order and cuts only between distinct values, so
    inside a group of equal ``z`` the order can change the result only through the rounding of the sums, and only
    when the group mixes classes (points of one class add the same terms in any order); the bounds of a cut are
    the same values in any order (no -0.0: ``project_into``'s sums start at +0.0). A group mixing classes, or fewer
    points, sends the search to the argsort's order (numba's quicksort replayed on the pairs); a NaN (none from
    finite inputs) to the argsort form itself.
    """
    project_into(X, w, z)
    return _best_offset_of(z, X, w, y, k, min_samples_leaf, total, xlogx, ws)


@njit(**_NJIT)
def _best_offset_of(z, X, w, y, k, min_samples_leaf, total, xlogx, ws):
    """:func:`_best_offset_into` given ``z = X w`` (projected by the caller; ``X``, ``w``: for the NaN form)."""
    n = z.shape[0]
    U, tags, right, left, keys, spare_keys, spare_tags, hist, hist_small, stack, tally, step_up = ws
    if n < RADIX_MIN_POINTS:
        return _best_offset_quicksort_form(z, y, k, min_samples_leaf, total, xlogx, U, tags, stack)
    bits = z.view(np.uint64)
    nan_seen = False
    for i in range(n):
        nan_seen |= z[i] != z[i]
        keys[i] = float_to_ordered(bits[i])
        tags[i] = y[i]
    if nan_seen:
        return _best_offset(X, w, y, k, min_samples_leaf, total, xlogx, z)
    sorted_keys, sorted_tags = _radix_sorted_floats(keys, tags, n, spare_keys, spare_tags, hist, hist_small)
    zs = sorted_keys[:n].view(np.float64)
    for i in range(1, n):
        if zs[i] == zs[i - 1] and sorted_tags[i] != sorted_tags[i - 1]:
            return _best_offset_quicksort_form(z, y, k, min_samples_leaf, total, xlogx, U, tags, stack)
    return _sweep_sorted(zs, sorted_tags[:n], k, min_samples_leaf, total, xlogx)


@njit(**_NJIT)
def _best_offset_quicksort_form(z, y, k, min_samples_leaf, total, xlogx, U, tags, stack):
    """:func:`_best_offset`'s sweep over ``z`` (projected already, no NaN): numba's quicksort replayed on the pairs
    (z, label) in the buffers ``U`` and ``tags`` gives its argsort's order, ties included (:func:`quicksort_pairs`),
    so ``_sweep_sorted`` reads the same values and labels in the same order as after the argsort and its gathers."""
    n = z.shape[0]
    for i in range(n):
        U[i] = z[i]
        tags[i] = y[i]
    quicksort_pairs(U, tags, n, stack)
    return _sweep_sorted(U[:n], tags[:n], k, min_samples_leaf, total, xlogx)


@njit(**_NJIT)
def _feature_scales(X):
    """Per-feature standard deviation (0 for constant features), to draw directions in standardised units."""
    n, p = X.shape
    scale = np.zeros(p)
    for j in range(p):
        mean = 0.0
        for i in range(n):
            mean += X[i, j]
        mean /= n
        var = 0.0
        for i in range(n):
            var += (X[i, j] - mean) ** 2
        scale[j] = np.sqrt(var / n)
    return scale


@njit(**_NJIT)
def oc1_search(X, y, k, w0, b0, restart_normals, jump_normals, min_samples_leaf, max_cycles):
    """OC1 search for the hyperplane of maximal information gain at one node.

    Parameters
    ----------
    X : (n, p) float64 C-contiguous; y : (n,) int64 labels in 0..k-1.
    w0, b0 : the initial hyperplane (first restart), e.g. the best axis-aligned split.
    restart_normals : (R - 1, p) standard normals; restart r >= 1 starts from direction
        ``restart_normals[r-1] / scale`` (scale = per-feature std, so directions are random in standardised
        units) with its best offset.
    jump_normals : (R, J, p + 1) standard normals: the J random perturbation directions of each restart
        (last entry: offset component, in units of the projection's spread).
    max_cycles : cap on coordinate-descent sweeps between random perturbations.

    Returns ``(w, b, gain)`` of the best hyperplane found, gain evaluated on ``V = X w - b >= 0`` with
    the tree store's arithmetic; ``gain`` is never below that of ``(w0, b0)``.
    """
    n = X.shape[0]
    return _search((X, X, y, y, np.ones(n, dtype=np.int64), np.arange(n)), k, w0, b0, restart_normals, jump_normals,
                   min_samples_leaf, max_cycles)


@njit(**_NJIT)
def oc1_search_multi(X, y, first, inv, k, w0, b0, restart_normals, jump_normals, min_samples_leaf, max_cycles):
    """:func:`oc1_search` of the rows ``X``, ``y`` (a node of a bootstrap sample: some rows are copies of one point),
    given each distinct point's first row ``first`` and each row's point ``inv`` (``X[first[inv[j]]]`` is row j's
    copy; every row its own point is the search over rows). The same ``(w, b, gain)`` bit for bit; the line searches
    and projections run over the distinct points, each counted as often as it occurs (:func:`_line_search_multi`).
    The caller keeps multiplicities below
    ``MAX_MULTIPLICITY`` and ``2 k`` below ``2 ** TAG_BITS``."""
    u = first.shape[0]
    n = X.shape[0]
    if u == n:  # no copies: the rows themselves are the points (no copy of X)
        return _search((X, X, y, y, np.ones(n, dtype=np.int64), np.arange(n)), k, w0, b0, restart_normals,
                       jump_normals, min_samples_leaf, max_cycles)
    Xd = np.empty((u, X.shape[1]))
    yd = np.empty(u, dtype=np.int64)
    for i in range(u):
        Xd[i] = X[first[i]]
        yd[i] = y[first[i]]
    mult = np.zeros(u, dtype=np.int64)
    for j in range(inv.shape[0]):
        mult[inv[j]] += 1
    return _search((X, Xd, y, yd, mult, inv), k, w0, b0, restart_normals, jump_normals, min_samples_leaf, max_cycles)


@njit(**_NJIT)
def _search(node, k, w0, b0, restart_normals, jump_normals, min_samples_leaf, max_cycles):
    """The OC1 search over the node's rows ``X``, ``y``, computed on its distinct points ``Xd``, ``yd`` (multiplicities
    ``mult``, row j is point ``inv[j]``; the rows themselves when there are as many points as rows; ``node = (X, Xd,
    y, yd, mult, inv)``). Every quantity the search over rows sums or sorts (gains, line searches, the offset's sort,
    a perturbation's spread) is taken over the rows, in row order where the order can change a rounding: the same
    hyperplane bit for bit."""
    X, Xd, y, yd, mult, inv = node
    n, p = X.shape
    u = Xd.shape[0]
    multi = u < n
    msl = max(min_samples_leaf, 1)
    total = class_counts(y, k)
    xlogx = _xlogx_table(n)
    XT = np.ascontiguousarray(Xd.T)  # columns as contiguous rows for the coordinate steps
    scale = _feature_scales(X)  # over the rows (a sum's rounding depends on its terms)
    inv_scale = np.zeros(p)
    for j in range(p):
        if scale[j] > 0.0:
            inv_scale[j] = 1.0 / scale[j]
    parent = xlogx[n]
    for c in range(k):
        parent -= xlogx[total[c]]
    max_gain = parent / n  # H(parent): a perfect split cannot be improved

    V = np.empty(u)
    d = np.empty(u)
    z = np.empty(u)
    minus_one = -np.ones(u)
    ws = line_search_workspace(n, k, xlogx)
    V_rows = np.empty(n)  # per-row buffers: the searches' fallbacks, the offset's sort, a perturbation's spread
    d_rows = np.empty(n)
    rows = (inv, y, V_rows, d_rows)

    best_w = w0.copy()
    best_b = b0
    project_into(Xd, best_w, V)
    for i in range(u):
        V[i] -= best_b
    best_gain = _gain_of_sides_multi(V, yd, mult, n, k, msl, total, xlogx)
    n_restarts = jump_normals.shape[0]
    n_jumps = jump_normals.shape[1]

    for r in range(n_restarts):
        if best_gain >= max_gain - _TOL:
            break
        if r == 0:
            w = w0.copy()
            b = b0
        else:
            w = restart_normals[r - 1] * inv_scale
            b, g = _offset(X, Xd, w, y, k, msl, total, xlogx, z, ws, rows, multi)
            if not np.isfinite(g):
                continue
        project_into(Xd, w, V)
        for i in range(u):
            V[i] -= b
        gain = _gain_of_sides_multi(V, yd, mult, n, k, msl, total, xlogx)
        if not np.isfinite(gain):
            continue
        jump = 0
        while True:
            # deterministic coordinate descent over w_1..w_p and b
            for _ in range(max_cycles):
                improved = False
                for m in range(p + 1):
                    col = XT[m] if m < p else minus_one
                    if multi:
                        alpha, g = _line_search_multi(V, col, yd, mult, k, msl, total, xlogx, ws, rows)
                    else:
                        alpha, g = _line_search_into(V, col, yd, k, msl, total, xlogx, ws)
                    if g > gain + _TOL:
                        for i in range(u):
                            d[i] = V[i] + alpha * col[i]
                        g_true = _gain_of_sides_multi(d, yd, mult, n, k, msl, total, xlogx)
                        if g_true > gain + _TOL:
                            if m < p:
                                w[m] += alpha
                            else:
                                b += alpha
                            V[:] = d
                            gain = g_true
                            improved = True
                if not improved or gain >= max_gain - _TOL:
                    break
                # rescale to unit standardised norm and recompute V exactly, so rounding does not drift
                norm = np.sqrt(np.sum((w * scale) ** 2))
                if norm > 0.0:
                    w /= norm
                    b /= norm
                project_into(Xd, w, V)
                for i in range(u):
                    V[i] -= b
                gain = _gain_of_sides_multi(V, yd, mult, n, k, msl, total, xlogx)
            # random perturbations: the first direction that improves the gain restarts coordinate descent
            moved = False
            while jump < n_jumps and not moved and gain < max_gain - _TOL:
                rw = jump_normals[r, jump, :p] * inv_scale
                project_into(Xd, rw, d)
                if multi:  # the spread of the rows' projections, summed in row order
                    _expand(d, inv, d_rows)
                    spread = np.std(d_rows)
                else:
                    spread = np.std(d)
                rb = jump_normals[r, jump, p] * (spread if spread > 0.0 else 1.0)
                jump += 1
                for i in range(u):
                    d[i] -= rb
                if multi:
                    alpha, g = _line_search_multi(V, d, yd, mult, k, msl, total, xlogx, ws, rows)
                else:
                    alpha, g = _line_search_into(V, d, yd, k, msl, total, xlogx, ws)
                if g > gain + _TOL:
                    w_new = w + alpha * rw
                    b_new = b + alpha * rb
                    project_into(Xd, w_new, z)
                    for i in range(u):
                        z[i] -= b_new
                    g_true = _gain_of_sides_multi(z, yd, mult, n, k, msl, total, xlogx)
                    if g_true > gain + _TOL:
                        w = w_new
                        b = b_new
                        V[:] = z
                        gain = g_true
                        moved = True
            if not moved:
                break
        # the gain of the hyperplane as the tree store will route it: V was updated by V + alpha d, which can part
        # from X w - b by rounding (w_m + alpha cancelling to ~1e-17 left a "perfect" split of rounding noise)
        project_into(Xd, w, V)
        for i in range(u):
            V[i] -= b
        gain = _gain_of_sides_multi(V, yd, mult, n, k, msl, total, xlogx)
        # the offset is re-optimised exactly on the final direction
        b_opt, g_opt = _offset(X, Xd, w, y, k, msl, total, xlogx, z, ws, rows, multi)
        if g_opt > gain:
            b = b_opt
            gain = g_opt
        if gain > best_gain + _TOL:
            best_w = w.copy()
            best_b = b
            best_gain = gain
    return best_w, best_b, best_gain


@njit(**_NJIT)
def _offset(X, Xd, w, y, k, msl, total, xlogx, z, ws, rows, multi):
    """:func:`_best_offset_into` of the rows: the distinct points projected, the rows' values sorted."""
    if not multi:
        return _best_offset_into(X, w, y, k, msl, total, xlogx, z, ws)
    inv, _, V_rows, _ = rows
    project_into(Xd, w, z)
    _expand(z, inv, V_rows)
    return _best_offset_of(V_rows, X, w, y, k, msl, total, xlogx, ws)

# Jitted callees in other files (numba caches by this file's stamp only; tests/test_numba_cache_keys.py):
# numba cache key: greedy/_criteria.py 4dcab3fc6aaebb4f
# numba cache key: greedy/_grow.py d6bb969f416b02cb
# numba cache key: greedy/_radix.py a9670243c6c38a19
