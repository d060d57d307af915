"""Numba kernels of non-greedy tree learning (Norouzi et al., NeurIPS 2015, Sec. 4-6, Alg. 1).

The tree is the complete binary tree of depth ``d`` in heap order: internal nodes ``0..m-1``
(``m = 2^d - 1``), node ``i`` has children ``2i+1`` (left) and ``2i+2`` (right), leaf ``j`` is node
``m + j``. Node ``i`` holds ``w_i`` (row of ``W``) and ``b_i``; the split decision is
``h_i = sgn(w_i . x - b_i)`` with sgn(0) = +1 (right), i.e. the paper's ``sgn(W x)`` with the constant
``-1`` appended to ``x`` (Sec. 3), so the norm constraint of eq. (9) covers ``[w_i, b_i]``.
``z_i = w_i . x - b_i`` below.

Losses (``kind``): 0 = log loss eq. (2) on class labels ``yi``, 1 = squared loss eq. (3) on rows of ``Y``.

Loss-augmented inference eq. (10) returns the leaf of ``g^`` and its value relative to inference,
``max_g (g - sgn(Wx))^T W x + l(Theta^T f(g), y)`` (eq. (12)); flipping bit ``i`` costs ``2 |z_i|``:

- exact (eq. (10)-(12)): one pass over all internal nodes computes every ``z_i`` (O(2^d p)); the cost of
  reaching each leaf accumulates down the tree and the best leaf wins (ties: the inferred leaf);
- fast (eq. (13)): the Hamming ball of radius 1 around ``sgn(Wx)``: flipping a bit off the inference path
  does not change the leaf, flipping path bit ``t`` leads to the leaf reached by ``sgn`` below the other
  child, so ``d + 1`` leaves and ``O(d^2 p)`` work. Only ``z`` on the visited paths is computed (cached
  per sample).

One mini-batch step (Alg. 1 with momentum and mini-batches, Sec. 6): every sample adds
``-(eta/B) (g^_i - h^_i) x~`` to the velocity of the rows where ``g^`` and ``h^`` differ (line 6) and
``-(eta/B) dl/dtheta`` at the leaf of ``g^`` (line 10); at the end of the batch the rows that received a
gradient recently move by their velocity and are projected onto ``||[w_i, b_i]||^2 <= nu`` (line 8).
SGD uses ``h^ = sgn(Wx)``; Stable SGD uses the ``h`` consistent with the fixed leaf assignment ``a(x)``
(eq. (14)): path bits set towards ``a(x)``, off-path bits ``sgn(Wx)``.

Momentum is kept only for rows touched in the last ``stale`` batches (a row's velocity is dropped after
that, when ``momentum^stale`` has made it negligible), so a step costs O(rows touched recently x p),
not O(m p).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..greedy._co2_sgd import _shuffle

_NJIT = dict(cache=True, nogil=True)

LOG_LOSS = 0
SQUARED_LOSS = 1


@njit(fastmath={"reassoc", "contract"}, **_NJIT)
def _dot_z(X, r, W, b, node):
    """``z_node = w_node . x_r - b_node``; reassociation lets LLVM vectorise the inner product (SIMD lanes)."""
    s = -b[node]
    for j in range(X.shape[1]):
        s += W[node, j] * X[r, j]
    return s


@njit(**_NJIT)
def _z(X, r, W, b, node, zc, zstamp, stamp):
    """``z_node`` for sample r, computed once per sample (``zstamp`` marks what this sample computed)."""
    if zstamp[node] != stamp:
        zc[node] = _dot_z(X, r, W, b, node)
        zstamp[node] = stamp
    return zc[node]


@njit(**_NJIT)
def leaf_loss(Theta, leaf, kind, yi, Y, r):
    """``l(theta_leaf, y_r)`` (``leaf`` = leaf index 0..m, the row of Theta): log loss eq. (2) (kind 0) or squared loss eq. (3) (kind 1)."""
    k = Theta.shape[1]
    if kind == LOG_LOSS:
        mx = Theta[leaf, 0]
        for c in range(1, k):
            if Theta[leaf, c] > mx:
                mx = Theta[leaf, c]
        s = 0.0
        for c in range(k):
            s += np.exp(Theta[leaf, c] - mx)
        return mx + np.log(s) - Theta[leaf, yi[r]]
    s = 0.0
    for c in range(k):
        d = Theta[leaf, c] - Y[r, c]
        s += d * d
    return s


@njit(**_NJIT)
def _descend(X, r, W, b, node, m, zc, zstamp, stamp):
    """Leaf index reached from ``node`` following ``sgn(Wx)``."""
    while node < m:
        if _z(X, r, W, b, node, zc, zstamp, stamp) >= 0.0:
            node = 2 * node + 2
        else:
            node = 2 * node + 1
    return node - m


@njit(**_NJIT)
def fast_inference(X, r, W, b, Theta, depth, kind, yi, Y, zc, zstamp, stamp):
    """Loss-augmented inference over the Hamming ball of radius 1 (eq. (13)), O(d^2 p).

    Returns ``(leaf of g^, flipped node or -1, value)`` with value
    ``max_{g in B1(sgn Wx)} (g - sgn(Wx))^T W x + l(Theta^T f(g), y)``.
    """
    m = W.shape[0]
    h_leaf = _descend(X, r, W, b, 0, m, zc, zstamp, stamp)
    best_leaf = h_leaf
    best_flip = -1
    best = leaf_loss(Theta, h_leaf, kind, yi, Y, r)
    node = 0
    while node < m:
        z = zc[node]  # on the inference path: computed by _descend
        if z >= 0.0:
            other, nxt = 2 * node + 1, 2 * node + 2
        else:
            other, nxt = 2 * node + 2, 2 * node + 1
        leaf = _descend(X, r, W, b, other, m, zc, zstamp, stamp)
        val = leaf_loss(Theta, leaf, kind, yi, Y, r) - 2.0 * abs(z)
        if val > best:
            best, best_leaf, best_flip = val, leaf, node
        node = nxt
    return best_leaf, best_flip, best


@njit(**_NJIT)
def exact_inference(X, r, W, b, Theta, depth, kind, yi, Y, zc, cost):
    """Exact loss-augmented inference eq. (10)-(12) by one pass over all nodes, O(2^d p).

    ``cost[node]`` = sum of ``2|z_i|`` over the path bits that disagree with ``sgn(Wx)`` on the way to
    ``node``; leaf j scores ``l(theta_j, y) - cost``. Returns ``(leaf, inferred leaf, value)``; every ``z``
    is left in ``zc``.
    """
    m = W.shape[0]
    cost[0] = 0.0
    for i in range(m):
        z = _dot_z(X, r, W, b, i)
        zc[i] = z
        c = cost[i]
        if z >= 0.0:
            cost[2 * i + 1] = c + 2.0 * z
            cost[2 * i + 2] = c
        else:
            cost[2 * i + 1] = c
            cost[2 * i + 2] = c - 2.0 * z
    node = 0
    while node < m:
        node = 2 * node + 2 if zc[node] >= 0.0 else 2 * node + 1
    h_leaf = node - m
    best_leaf = h_leaf
    best = leaf_loss(Theta, h_leaf, kind, yi, Y, r)
    for j in range(m + 1):
        val = leaf_loss(Theta, j, kind, yi, Y, r) - cost[m + j]
        if val > best:
            best, best_leaf = val, j
    return best_leaf, h_leaf, best


@njit(**_NJIT)
def _add_row_grad(vW, vb, W, row, coef, X, r, inW, actW, nact, lastW, batch):
    """velocity_row += coef * x~ (x~ = [x, -1]); registers the row as active."""
    for j in range(X.shape[1]):
        vW[row, j] += coef * X[r, j]
    vb[row] -= coef
    lastW[row] = batch
    if not inW[row]:
        inW[row] = True
        actW[nact[0]] = row
        nact[0] += 1


@njit(**_NJIT)
def _leaf_grad(vT, Theta, leaf, scale, kind, yi, Y, r, inT, actT, nact, lastT, batch):
    """velocity_theta_leaf -= scale * dl/dtheta (softmax - e_y for eq. (2), 2 (theta - y) for eq. (3))."""
    k = Theta.shape[1]
    if kind == LOG_LOSS:
        mx = Theta[leaf, 0]
        for c in range(1, k):
            if Theta[leaf, c] > mx:
                mx = Theta[leaf, c]
        s = 0.0
        for c in range(k):
            s += np.exp(Theta[leaf, c] - mx)
        for c in range(k):
            g = np.exp(Theta[leaf, c] - mx) / s
            if c == yi[r]:
                g -= 1.0
            vT[leaf, c] -= scale * g
    else:
        for c in range(k):
            vT[leaf, c] -= scale * 2.0 * (Theta[leaf, c] - Y[r, c])
    lastT[leaf] = batch
    if not inT[leaf]:
        inT[leaf] = True
        actT[nact[0]] = leaf
        nact[0] += 1


@njit(**_NJIT)
def _apply_step(W, b, vW, vb, Theta, vT, nu, momentum, inW, actW, nactW, lastW, inT, actT, nactT, lastT,
                batch, stale):
    """End of a mini-batch: move active rows by their velocity, project rows (Alg. 1 line 8), decay velocity."""
    p = W.shape[1]
    idx = 0
    while idx < nactW[0]:
        row = actW[idx]
        norm2 = 0.0
        for j in range(p):
            W[row, j] += vW[row, j]
            norm2 += W[row, j] * W[row, j]
        b[row] += vb[row]
        norm2 += b[row] * b[row]
        if norm2 > nu:
            s = np.sqrt(nu / norm2)
            for j in range(p):
                W[row, j] *= s
            b[row] *= s
        if batch - lastW[row] >= stale:
            for j in range(p):
                vW[row, j] = 0.0
            vb[row] = 0.0
            inW[row] = False
            nactW[0] -= 1
            actW[idx] = actW[nactW[0]]
            continue
        for j in range(p):
            vW[row, j] *= momentum
        vb[row] *= momentum
        idx += 1
    k = Theta.shape[1]
    idx = 0
    while idx < nactT[0]:
        leaf = actT[idx]
        for c in range(k):
            Theta[leaf, c] += vT[leaf, c]
        if batch - lastT[leaf] >= stale:
            for c in range(k):
                vT[leaf, c] = 0.0
            inT[leaf] = False
            nactT[0] -= 1
            actT[idx] = actT[nactT[0]]
            continue
        for c in range(k):
            vT[leaf, c] *= momentum
        idx += 1


@njit(**_NJIT)
def _infer(fast, X, r, W, b, Theta, depth, kind, yi, Y, zc, zstamp, stamp, cost):
    """Loss-augmented inference of sample r, fast (eq. (13)) or exact (eq. (10)-(12)): ``(leaf of g^, value)``.

    Afterwards ``zc``/``zstamp`` hold every ``z`` that the path walks of :func:`_path_grad` need."""
    if fast:
        leaf, _, val = fast_inference(X, r, W, b, Theta, depth, kind, yi, Y, zc, zstamp, stamp)
        return leaf, val
    leaf, _, val = exact_inference(X, r, W, b, Theta, depth, kind, yi, Y, zc, cost)
    for i in range(W.shape[0]):
        zstamp[i] = stamp  # every z of this sample is in zc
    return leaf, val


@njit(**_NJIT)
def _path_grad(X, r, W, b, leaf, coef, zc, zstamp, stamp, vW, vb, inW, actW, nactW, lastW, batch):
    """Walk root -> ``leaf``; at every bit i whose direction disagrees with ``sgn(z_i)`` add
    ``coef * sgn(z_i) * x~`` to row i's velocity. Returns the sum of ``2|z_i|`` over those bits.

    A code g reaching ``leaf`` with its off-path bits at ``sgn(Wx)`` differs from ``sgn(Wx)`` exactly at
    these bits, where ``g_i - sgn(z_i) = -2 sgn(z_i)``: ``coef = 2 eta/B`` is the step ``-eta (g^ - h^) x~``
    of Alg. 1 line 6 for g^ (``h^ = sgn(Wx)``); ``coef = -2 eta/B`` the ``+eta (h - sgn(Wx)) x~`` part of
    Stable SGD's ``h`` consistent with a(x) (eq. (14)), whose second max is ``sgn(Wx)^T Wx`` minus the sum.
    """
    m = W.shape[0]
    node = m + leaf
    total = 0.0
    while node > 0:
        parent = (node - 1) // 2
        z = _z(X, r, W, b, parent, zc, zstamp, stamp)
        if (node == 2 * parent + 2) != (z >= 0.0):
            total += 2.0 * abs(z)
            _add_row_grad(vW, vb, W, parent, coef if z >= 0.0 else -coef, X, r, inW, actW, nactW, lastW, batch)
        node = parent
    return total


@njit(**_NJIT)
def sgd_epoch(X, yi, Y, W, b, Theta, depth, kind, fast, stable, assign, nu, eta, momentum, batch_size, perm,
              rng, vW, vb, vT, inW, actW, nactW, lastW, inT, actT, nactT, lastT, counters, stale, zc, zstamp,
              cost):
    """One epoch of (S)SGD on the surrogate eq. (9) (SGD: bound eq. (7)/(13); SSGD: eq. (14)).

    The inference (``fast``: eq. (13), else eq. (10)-(12)) is the only part that differs between the two
    bounds; the updates (Alg. 1 lines 6, 8, 10) are the same. ``assign[r]`` is a(x_r) (leaf index) for
    Stable SGD (``stable``), ignored otherwise. ``counters`` = [batches done, samples done] persists across
    epochs (momentum staleness, z-cache stamps). Returns the sum over the epoch of each sample's bound at the
    parameters in force when it was visited.
    """
    n = X.shape[0]
    _shuffle(perm, rng)
    total = 0.0
    for start in range(0, n, batch_size):
        stop = min(start + batch_size, n)
        scale = eta / (stop - start)
        batch = counters[0]
        for t in range(start, stop):
            r = perm[t]
            counters[1] += 1
            stamp = counters[1]
            g_leaf, val = _infer(fast, X, r, W, b, Theta, depth, kind, yi, Y, zc, zstamp, stamp, cost)
            _path_grad(X, r, W, b, g_leaf, 2.0 * scale, zc, zstamp, stamp, vW, vb, inW, actW, nactW, lastW, batch)
            if stable:
                val += _path_grad(X, r, W, b, assign[r], -2.0 * scale, zc, zstamp, stamp, vW, vb, inW, actW,
                                  nactW, lastW, batch)
            total += val
            _leaf_grad(vT, Theta, g_leaf, scale, kind, yi, Y, r, inT, actT, nactT, lastT, batch)
        _apply_step(W, b, vW, vb, Theta, vT, nu, momentum, inW, actW, nactW, lastW, inT, actT, nactT, lastT,
                    batch, stale)
        counters[0] += 1
    return total


@njit(**_NJIT)
def _route(X, r, W, b, m):
    node = 0
    while node < m:
        node = 2 * node + 2 if _dot_z(X, r, W, b, node) >= 0.0 else 2 * node + 1
    return node - m


@njit(**_NJIT)
def route_all(X, W, b):
    """Leaf index ``f(sgn(Wx))`` of every row of X, O(d p) each."""
    n = X.shape[0]
    m = W.shape[0]
    out = np.empty(n, dtype=np.int64)
    for r in range(n):
        out[r] = _route(X, r, W, b, m)
    return out


@njit(**_NJIT)
def losses_at(leaves, Theta, kind, yi, Y):
    """Empirical loss eq. (4) per sample: ``l(theta_leaf, y)`` at the given leaf indices."""
    n = leaves.shape[0]
    out = np.empty(n)
    for r in range(n):
        out[r] = leaf_loss(Theta, leaves[r], kind, yi, Y, r)
    return out


@njit(**_NJIT)
def bounds(X, yi, Y, W, b, Theta, depth, kind, fast):
    """Per-sample upper bound at fixed parameters: eq. (13) (fast) or eq. (7) (exact)."""
    n = X.shape[0]
    m = W.shape[0]
    out = np.empty(n)
    zc = np.zeros(m)
    zstamp = np.zeros(m, dtype=np.int64)
    cost = np.zeros(2 * m + 1)
    for r in range(n):
        if fast:
            _, _, val = fast_inference(X, r, W, b, Theta, depth, kind, yi, Y, zc, zstamp, r + 1)
        else:
            _, _, val = exact_inference(X, r, W, b, Theta, depth, kind, yi, Y, zc, cost)
        out[r] = val
    return out

# Jitted callees in other files (numba caches by this file's stamp only; tests/test_numba_cache_keys.py):
# numba cache key: greedy/_co2_sgd.py 52fca61715addfa1
