"""Numba kernels of non-greedy tree learning (Norouzi et al., NeurIPS 2015, Sec. 4-6, Alg. 1).

The tree is the complete binary tree of depth ``d`` in heap order: internal nodes ``0..m-1``
(``m = 2^d - 1``), node ``i`` has children ``2i+1`` (left) and ``2i+2`` (right), leaf ``j`` is node
``m + j``. Node ``i`` holds ``w_i`` (row of ``W``) and ``b_i``; the split decision is
``h_i = sgn(w_i . x - b_i)`` with sgn(0) = +1 (right), i.e. the paper's ``sgn(W x)`` with the constant
``-1`` appended to ``x`` (Sec. 3), so the norm constraint of eq. (9) covers ``[w_i, b_i]``.
``z_i = w_i . x - b_i`` below.

The kernels take a few small named tuples instead of loose arrays, so that the code reads as Alg. 1:

- ``Data(X, yi, Y)``: the training pairs; ``yi`` class labels (log loss), ``Y`` target rows (squared loss);
- ``Params(W, b, Theta)``: the tree (split rows, offsets, leaf scores); the momentum ``velocity`` is a
  ``Params`` of the same shapes;
- ``Bound(loss, fast, stable)``: which surrogate is optimised. ``loss``: 0 = log loss eq. (2), 1 = squared
  loss eq. (3); ``fast``: the Hamming-ball bound eq. (13), else eq. (7) with exact inference eq. (10)-(12);
  ``stable``: Stable SGD's bound eq. (14) with the leaf assignments ``a(x)``;
- ``Step(eta, momentum, nu, batch_size, stale)``: the update rule (Alg. 1 lines 6-10 with momentum and
  mini-batches, Sec. 6);
- ``EpochState``: what persists across epochs (shuffle, momentum, active sets, per-sample cache, gradient
  counts per split row).

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

from collections import namedtuple

import numpy as np
from numba import njit

from ..greedy.sgd import shuffle as _shuffle

_NJIT = dict(cache=True, nogil=True)

LOG_LOSS = 0
SQUARED_LOSS = 1

Data = namedtuple("Data", ["X", "yi", "Y"])
Params = namedtuple("Params", ["W", "b", "Theta"])
Bound = namedtuple("Bound", ["loss", "fast", "stable"])
Step = namedtuple("Step", ["eta", "momentum", "nu", "batch_size", "stale"])
# rows (or leaves) with a live velocity: ``member[i]``, the list ``items[:count[0]]``, batch of the last gradient
ActiveSet = namedtuple("ActiveSet", ["member", "items", "count", "last"])
# per-sample scratch: z of the nodes this sample visited (``stamp`` marks which), exact inference's path costs
ZCache = namedtuple("ZCache", ["z", "stamp", "cost", "bits"])
# ``counters`` = [batches done, samples done]; ``row_grads[i]``: samples that gave split row i a gradient
EpochState = namedtuple("EpochState", ["perm", "rng", "velocity", "rows", "leaves", "cache", "counters",
                                       "row_grads"])


def data(X, yi, Y):
    return Data(np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(yi, dtype=np.int64),
                np.ascontiguousarray(Y, dtype=np.float64))


def bound(loss, fast, stable=False):
    return Bound(int(loss), bool(fast), bool(stable))


def step(eta, momentum, nu, batch_size, stale):
    return Step(float(eta), float(momentum), float(nu), int(batch_size), int(stale))


def zcache(m):
    return ZCache(np.zeros(m), np.zeros(m, dtype=np.int64), np.zeros(2 * m + 1), np.zeros(64, dtype=np.int64))


def _active_set(size):
    return ActiveSet(np.zeros(size, dtype=np.bool_), np.zeros(size, dtype=np.int64), np.zeros(1, dtype=np.int64),
                     np.zeros(size, dtype=np.int64))


def epoch_state(params, n, seed):
    """Fresh state of an (S)SGD run on ``n`` samples for the tree ``params`` (zero momentum)."""
    m = params.W.shape[0]
    velocity = Params(np.zeros_like(params.W), np.zeros_like(params.b), np.zeros_like(params.Theta))
    return EpochState(np.arange(n, dtype=np.int64), np.full(1, seed, dtype=np.uint64), velocity, _active_set(m),
                      _active_set(m + 1), zcache(m), np.zeros(2, dtype=np.int64), np.zeros(m, dtype=np.int64))


@njit(fastmath={"reassoc", "contract"}, **_NJIT)
def _dot_z(X, r, W, b, node):
    """``z_node = w_node . x_r - b_node``; reassociation lets LLVM vectorise the inner product (SIMD lanes)."""
    s = -b[node]
    for j in range(X.shape[1]):
        s += W[node, j] * X[r, j]
    return s


@njit(**_NJIT)
def _z(X, r, W, b, node, zc, zstamp, stamp):
    """``z_node`` for sample r, computed once per sample (``zstamp`` marks what this sample computed). The hot
    helpers take the arrays themselves, not the named tuples (passing those by value costs time per call)."""
    if zstamp[node] != stamp:
        zc[node] = _dot_z(X, r, W, b, node)
        zstamp[node] = stamp
    return zc[node]


@njit(**_NJIT)
def leaf_loss(Theta, leaf, loss, data, r):
    """``l(theta_leaf, y_r)`` (``leaf`` = leaf index 0..m, the row of Theta): log loss eq. (2) (``loss`` 0) or
    squared loss eq. (3) (``loss`` 1)."""
    return _leaf_loss(Theta, leaf, loss, data.yi, data.Y, r)


@njit(**_NJIT)
def _leaf_loss(Theta, leaf, loss, yi, Y, r):
    k = Theta.shape[1]
    if loss == LOG_LOSS:
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
def _descend(X, r, W, b, node, zc, zstamp, stamp):
    """Leaf index reached from ``node`` following ``sgn(Wx)``."""
    m = W.shape[0]
    while node < m:
        if _z(X, r, W, b, node, zc, zstamp, stamp) >= 0.0:
            node = 2 * node + 2
        else:
            node = 2 * node + 1
    return node - m


@njit(**_NJIT)
def fast_inference(data, r, tree, loss, cache, stamp):
    """Loss-augmented inference over the Hamming ball of radius 1 (eq. (13)), O(d^2 p).

    Returns ``(leaf of g^, flipped node or -1, value, leaf of sgn(Wx))`` with value
    ``max_{g in B1(sgn Wx)} (g - sgn(Wx))^T W x + l(Theta^T f(g), y)``.
    """
    X, W, b, Theta, yi, Y, zc, zstamp = data.X, tree.W, tree.b, tree.Theta, data.yi, data.Y, cache.z, cache.stamp
    m = W.shape[0]
    h_leaf = _descend(X, r, W, b, 0, zc, zstamp, stamp)
    best_leaf = h_leaf
    best_flip = -1
    best = _leaf_loss(Theta, h_leaf, loss, yi, Y, r)
    node = 0
    while node < m:
        z = zc[node]  # on the inference path: computed by _descend
        if z >= 0.0:
            other, nxt = 2 * node + 1, 2 * node + 2
        else:
            other, nxt = 2 * node + 2, 2 * node + 1
        leaf = _descend(X, r, W, b, other, zc, zstamp, stamp)
        val = _leaf_loss(Theta, leaf, loss, yi, Y, r) - 2.0 * abs(z)
        if val > best:
            best, best_leaf, best_flip = val, leaf, node
        node = nxt
    return best_leaf, best_flip, best, h_leaf


@njit(**_NJIT)
def exact_inference(data, r, tree, loss, cache):
    """Exact loss-augmented inference eq. (10)-(12) by one pass over all nodes, O(2^d p).

    ``cache.cost[node]`` = sum of ``2|z_i|`` over the path bits that disagree with ``sgn(Wx)`` on the way to
    ``node``; leaf j scores ``l(theta_j, y) - cost``. Returns ``(leaf, inferred leaf, value)``; every ``z``
    is left in ``cache.z``.
    """
    m = tree.W.shape[0]
    cost, zc = cache.cost, cache.z
    cost[0] = 0.0
    for i in range(m):
        z = _dot_z(data.X, r, tree.W, tree.b, i)
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
    best = leaf_loss(tree.Theta, h_leaf, loss, data, r)
    for j in range(m + 1):
        val = leaf_loss(tree.Theta, j, loss, data, r) - cost[m + j]
        if val > best:
            best, best_leaf = val, j
    return best_leaf, h_leaf, best


@njit(inline="always", **_NJIT)
def _infer(data, r, tree, bound, cache, stamp):
    """Loss-augmented inference of sample r (Alg. 1 line 5), fast (eq. (13)) or exact (eq. (10)-(12)):
    ``(leaf of g^, value, leaf of sgn(Wx))``.

    Afterwards ``cache`` holds every ``z`` that the path walks of :func:`_disagreeing_bits` need."""
    if bound.fast:
        leaf, _, val, h_leaf = fast_inference(data, r, tree, bound.loss, cache, stamp)
        return leaf, val, h_leaf
    leaf, h_leaf, val = exact_inference(data, r, tree, bound.loss, cache)
    for i in range(tree.W.shape[0]):
        cache.stamp[i] = stamp  # every z of this sample is in cache.z
    return leaf, val, h_leaf


@njit(inline="always", **_NJIT)
def _disagreeing_bits(X, r, tree, leaf, cache, stamp):
    """Walk root -> ``leaf``; record in ``cache.bits`` every node whose path direction disagrees with
    ``sgn(z_i)``. Returns (their number, the sum of ``2|z_i|`` over them).

    A code that reaches ``leaf`` with its off-path bits at ``sgn(Wx)`` differs from ``sgn(Wx)`` exactly at
    these bits: the ``g^`` of Alg. 1 line 6, or Stable SGD's ``h`` consistent with ``a(x)`` (eq. (14)), whose
    second max is ``sgn(Wx)^T Wx`` minus the returned sum."""
    W, b, zc, zstamp, bits = tree.W, tree.b, cache.z, cache.stamp, cache.bits
    m = W.shape[0]
    node = m + leaf
    total = 0.0
    count = 0
    while node > 0:
        parent = (node - 1) // 2
        z = _z(X, r, W, b, parent, zc, zstamp, stamp)
        if (node == 2 * parent + 2) != (z >= 0.0):
            total += 2.0 * abs(z)
            bits[count] = parent
            count += 1
        node = parent
    return count, total


@njit(inline="always", **_NJIT)
def _touch(active, item, batch):
    """``item`` got a gradient in ``batch``: keep its velocity alive (add it to the active set if new)."""
    active.last[item] = batch
    if not active.member[item]:
        active.member[item] = True
        active.items[active.count[0]] = item
        active.count[0] += 1


@njit(inline="always", **_NJIT)
def _add_row_grads(X, r, tree, cache, count, coef, velocity, rows, batch, row_grads):
    """Alg. 1 line 6 for the ``count`` bits in ``cache.bits``: ``g_i - sgn(z_i) = -2 sgn(z_i)`` there, so row
    i's velocity gets ``coef * sgn(z_i) * x~`` (``x~ = [x, -1]``; ``coef = 2 eta/B`` for ``g^``, ``-2 eta/B``
    for Stable SGD's ``h``). Registers the rows as active and counts the gradient."""
    for t in range(count):
        row = cache.bits[t]
        c = coef if cache.z[row] >= 0.0 else -coef
        for j in range(X.shape[1]):
            velocity.W[row, j] += c * X[r, j]
        velocity.b[row] -= c
        row_grads[row] += 1
        _touch(rows, row, batch)


@njit(inline="always", **_NJIT)
def _leaf_grad(data, r, tree, leaf, scale, loss, velocity, leaves, batch):
    """Alg. 1 line 10: velocity_theta_leaf -= scale * dl/dtheta (softmax - e_y for eq. (2), 2 (theta - y) for
    eq. (3))."""
    Theta, vT = tree.Theta, velocity.Theta
    k = Theta.shape[1]
    if loss == LOG_LOSS:
        mx = Theta[leaf, 0]
        for c in range(1, k):
            if Theta[leaf, c] > mx:
                mx = Theta[leaf, c]
        s = 0.0
        for c in range(k):
            s += np.exp(Theta[leaf, c] - mx)
        for c in range(k):
            g = np.exp(Theta[leaf, c] - mx) / s
            if c == data.yi[r]:
                g -= 1.0
            vT[leaf, c] -= scale * g
    else:
        for c in range(k):
            vT[leaf, c] -= scale * 2.0 * (Theta[leaf, c] - data.Y[r, c])
    _touch(leaves, leaf, batch)


@njit(**_NJIT)
def _drop(active, idx):
    """Remove ``active.items[idx]`` (its velocity is stale) by moving the last item into its place."""
    active.member[active.items[idx]] = False
    active.count[0] -= 1
    active.items[idx] = active.items[active.count[0]]


@njit(**_NJIT)
def _apply_step(tree, velocity, rows, leaves, step, batch):
    """End of a mini-batch: move the active rows by their velocity and project them onto
    ``||[w_i, b_i]||^2 <= nu`` (Alg. 1 lines 6-8), move the active leaves (line 10), decay the velocities."""
    W, b, vW, vb = tree.W, tree.b, velocity.W, velocity.b
    p = W.shape[1]
    idx = 0
    while idx < rows.count[0]:
        row = rows.items[idx]
        norm2 = 0.0
        for j in range(p):
            W[row, j] += vW[row, j]
            norm2 += W[row, j] * W[row, j]
        b[row] += vb[row]
        norm2 += b[row] * b[row]
        if norm2 > step.nu:
            s = np.sqrt(step.nu / norm2)
            for j in range(p):
                W[row, j] *= s
            b[row] *= s
        if batch - rows.last[row] >= step.stale:
            for j in range(p):
                vW[row, j] = 0.0
            vb[row] = 0.0
            _drop(rows, idx)
            continue
        for j in range(p):
            vW[row, j] *= step.momentum
        vb[row] *= step.momentum
        idx += 1
    Theta, vT = tree.Theta, velocity.Theta
    k = Theta.shape[1]
    idx = 0
    while idx < leaves.count[0]:
        leaf = leaves.items[idx]
        for c in range(k):
            Theta[leaf, c] += vT[leaf, c]
        if batch - leaves.last[leaf] >= step.stale:
            for c in range(k):
                vT[leaf, c] = 0.0
            _drop(leaves, idx)
            continue
        for c in range(k):
            vT[leaf, c] *= step.momentum
        idx += 1


@njit(**_NJIT)
def sgd_epoch(data, tree, assign, bound, step, state):
    """One epoch of (S)SGD on the surrogate eq. (9) (SGD: bound eq. (7)/(13); SSGD: eq. (14)); Alg. 1.

    The inference (``bound.fast``: eq. (13), else eq. (10)-(12)) is the only part that differs between the
    two bounds; the updates (Alg. 1 lines 6, 8, 10) are the same. ``assign[r]`` is a(x_r) (leaf index) for
    Stable SGD (``bound.stable``), ignored otherwise. ``tree`` and ``state`` change in place. Returns the sum
    over the epoch of each sample's bound at the parameters in force when it was visited.
    """
    X = data.X
    n = X.shape[0]
    cache, velocity, counters = state.cache, state.velocity, state.counters
    _shuffle(state.perm, state.rng)
    total = 0.0
    for start in range(0, n, step.batch_size):
        stop = min(start + step.batch_size, n)
        scale = step.eta / (stop - start)
        batch = counters[0]
        for t in range(start, stop):
            r = state.perm[t]  # line 3
            counters[1] += 1
            stamp = counters[1]
            g_leaf, val, _ = _infer(data, r, tree, bound, cache, stamp)  # lines 4-5
            count, _ = _disagreeing_bits(X, r, tree, g_leaf, cache, stamp)  # line 6: -eta (g^ - h^) x~
            _add_row_grads(X, r, tree, cache, count, 2.0 * scale, velocity, state.rows, batch, state.row_grads)
            if bound.stable:  # eq. (14): h^ is the code reaching a(x), so line 6 also moves its bits
                count, slack = _disagreeing_bits(X, r, tree, assign[r], cache, stamp)
                _add_row_grads(X, r, tree, cache, count, -2.0 * scale, velocity, state.rows, batch,
                               state.row_grads)
                val += slack
            total += val
            _leaf_grad(data, r, tree, g_leaf, scale, bound.loss, velocity, state.leaves, batch)  # line 10
        _apply_step(tree, velocity, state.rows, state.leaves, step, batch)  # lines 6-10 (momentum), 8
        counters[0] += 1
    return total


@njit(**_NJIT)
def _route(X, r, W, b):
    m = W.shape[0]
    node = 0
    while node < m:
        node = 2 * node + 2 if _dot_z(X, r, W, b, node) >= 0.0 else 2 * node + 1
    return node - m


@njit(**_NJIT)
def route_all(X, W, b):
    """Leaf index ``f(sgn(Wx))`` of every row of X, O(d p) each."""
    n = X.shape[0]
    out = np.empty(n, dtype=np.int64)
    for r in range(n):
        out[r] = _route(X, r, W, b)
    return out


@njit(**_NJIT)
def losses_at(leaves, Theta, loss, data):
    """Empirical loss eq. (4) per sample: ``l(theta_leaf, y)`` at the given leaf indices."""
    n = leaves.shape[0]
    out = np.empty(n)
    for r in range(n):
        out[r] = leaf_loss(Theta, leaves[r], loss, data, r)
    return out


@njit(**_NJIT)
def evaluate(data, tree, bound, assign, rows):
    """The surrogate at one parameter state, for the samples ``rows``: per sample ``(bound, loss, leaf)``.

    The bound is eq. (13) (``bound.fast``) or eq. (7), plus, for Stable SGD (``bound.stable``), the slack of
    eq. (14) against the assignments ``assign``; ``loss`` is eq. (4) and ``leaf`` is ``f(sgn(Wx))``."""
    n = rows.shape[0]
    m = tree.W.shape[0]
    out, losses, leaves = np.empty(n), np.empty(n), np.empty(n, dtype=np.int64)
    cache = ZCache(np.zeros(m), np.zeros(m, dtype=np.int64), np.zeros(2 * m + 1), np.zeros(64, dtype=np.int64))
    for t in range(n):
        r = rows[t]
        _, val, h_leaf = _infer(data, r, tree, bound, cache, t + 1)
        if bound.stable:
            _, slack = _disagreeing_bits(data.X, r, tree, assign[r], cache, t + 1)
            val += slack
        out[t] = val
        leaves[t] = h_leaf
        losses[t] = leaf_loss(tree.Theta, h_leaf, bound.loss, data, r)
    return out, losses, leaves


# Jitted callees in other files (numba caches by this file's stamp only; tests/test_numba_cache_keys.py):
# numba cache key: greedy/_co2_sgd.py 52fca61715addfa1
