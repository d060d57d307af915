"""Numba kernel of the CO2 stump optimiser (Norouzi et al., "CO2 Forest", Sec. 4, Alg. 1).

A stump routes x right iff ``w . x - b >= 0``. In the paper's homogeneous coordinates this is
``w~ . x~ >= 0`` with ``w~ = [w, b]`` and ``x~ = [x, -1]``; the norm constraint of eq. (9),
``||w~||^2 <= nu``, therefore covers the bias too. Leaves hold unnormalised log-probabilities
``theta[0]`` (left) and ``theta[1]`` (right) scored by the log loss of eq. (3).

The kernel runs the convex-concave procedure of Sec. 4.2: every ``tau`` epochs the sign
``s = sgn(w_old . x~)`` is refreshed (the tangent of the concave term ``-|w . x~|``), and in between
the convex subproblem eq. (11) is minimised by projected stochastic subgradient descent with the
paper's practical modifications (mini-batches with averaged gradients, momentum, a learning rate
that is halved when the tracked surrogate keeps rising). Labels must already be compressed to
``0..k-1`` for the ``k = theta.shape[1]`` classes that occur at the node.

The kernel's functions pass Alg. 1's quantities in small groups (numba tuples of arrays and numbers: no copies,
unpacked where used, so the compiled loops are the same):

* ``points = (X, y, mult)``: the node's distinct rows x_i, their labels y_i and multiplicities;
* ``params = (wb, theta)``: the stump, ``w~ = [w, b]`` (eq. (9)'s ball) and the leaves' log-probabilities;
* ``moments = (v, vtheta)``: the momentum buffers of ``w~`` and ``theta`` (Sec. 4.2);
* ``step = (eta, momentum, nu)``: learning rate, momentum and the norm bound of eq. (9);
* ``tables = (prob, loss)``: each leaf's softmax(theta) and log loss per class at the current state;
* ``grads = (g, cntl, cnt)``: the summed subgradient w.r.t. ``w~`` and the labels counted at each point's
  winning leaf (packed per lane, then unpacked).

The entry point :func:`co2_stump_sgd` takes ``points = (X, y, rows, mult)``, the start ``(w, b, theta)``, the
optimiser's ``settings`` and the ``stop`` rule. A node of long rows beyond the caches runs each epoch fused with the
surrogate pass at its start (:func:`sgd_epoch_with_pass`, :func:`_fused_epochs`): every row read once per epoch
instead of twice, the same numbers up to round-off (docs/cost.md "One read per sample-epoch").
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import types
from numba.extending import intrinsic

# fastmath without the no-NaN/no-inf assumptions: lets LLVM reassociate the dot products and gradient sums
# (vector instructions) and contract multiply-adds. Results change only by round-off (the order of the
# sums); the kernel is about 25% faster (30 -> 23 ns per sample-epoch at p = 16, k = 26).
_NJIT = dict(cache=True, nogil=True, fastmath={"nsz", "arcp", "contract", "afn", "reassoc"})
_INLINE = dict(_NJIT, inline="always")  # small helpers of the passes: inlined in numba's IR, no call per point

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(**_NJIT)
def _splitmix64(state):
    """Next 64-bit draw of a splitmix64 stream kept in ``state[0]`` (thread-independent, seeded)."""
    state[0] += _GOLDEN
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(**_NJIT)
def _shuffle(perm, state):
    """In-place Fisher-Yates shuffle driven by the splitmix64 stream."""
    for i in range(perm.shape[0] - 1, 0, -1):
        j = np.int64(_splitmix64(state) % np.uint64(i + 1))
        tmp = perm[i]
        perm[i] = perm[j]
        perm[j] = tmp


@njit(**_NJIT)
def shuffle_epoch(perm, state):
    """In-place Fisher-Yates shuffle of one CO2 epoch driven by the splitmix64 stream: each 64-bit draw gives
    two swaps (its high and low 32 bits, each mapped onto ``0..i`` by Lemire's multiply-shift, no division;
    bias below n / 2^32)."""
    i = perm.shape[0] - 1
    while i > 0:
        r = _splitmix64(state)
        j = np.int64(((r >> np.uint64(32)) * np.uint64(i + 1)) >> np.uint64(32))
        tmp = perm[i]
        perm[i] = perm[j]
        perm[j] = tmp
        i -= 1
        if i > 0:
            j = np.int64(((r & np.uint64(0xFFFFFFFF)) * np.uint64(i + 1)) >> np.uint64(32))
            tmp = perm[i]
            perm[i] = perm[j]
            perm[j] = tmp
            i -= 1


@intrinsic
def _bits_to_float(typingctx, bits):
    """The float64 whose IEEE-754 bit pattern is the int64 ``bits`` (an LLVM bitcast: vectorisable)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


_LOG2E = 1.4426950408889634
_LN2_HI = 0.6931471803691238  # ln 2 = _LN2_HI + _LN2_LO; n * _LN2_HI is exact for |n| < 2^21
_LN2_LO = 1.9082149292705877e-10
_INV_FACTORIALS = (1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
                   1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0)


@njit(**_INLINE)
def _exp_nonpositive(x):
    """``exp(x)`` for ``x <= 0`` within 1 ulp of libm's (bit-equal for ~94% of arguments), in straight-line
    arithmetic that LLVM vectorises across a loop (libm's exp is an opaque call per element): x = n ln 2 + r,
    |r| <= ln 2 / 2 (Cody-Waite, two-part ln 2), exp(r) by its degree-13 Taylor polynomial, 2^n from the
    exponent bits. Arguments below -708 give exp(-708) ~ 3e-308 instead of a subnormal or 0 (a class whose
    probability is below 1e-307 either way)."""
    x = max(x, -708.0)
    n = np.floor(x * _LOG2E + 0.5)
    ni = np.int64(n)
    # ni as float again in the low part: the same value as n, but LLVM's reassociation may not fold
    # n * hi + n * lo into n * (hi + lo), which would lose the low part (an error of up to 200 ulp)
    r = (x - n * _LN2_HI) - np.float64(ni) * _LN2_LO
    f = _INV_FACTORIALS  # 1/13!, ..., 1/2!, 1, 1
    # Estrin's scheme: a dependency chain of 5 multiply-adds instead of Horner's 13 (latency, for small k)
    r2 = r * r
    r4 = r2 * r2
    q0 = (1.0 + r) + r2 * (f[11] + r * f[10])
    q1 = (f[9] + r * f[8]) + r2 * (f[7] + r * f[6])
    q2 = (f[5] + r * f[4]) + r2 * (f[3] + r * f[2])
    q3 = f[1] + r * f[0]
    q = (q0 + r4 * q1) + (r4 * r4) * (q2 + r4 * q3)
    return q * _bits_to_float((ni + 1023) << 52)


@njit(**_INLINE)
def _row_max(theta, leaf):
    """The largest ``theta[leaf, c]``, by four running maxima (a max does not depend on the order; one chain of
    compares would wait on each other: the loop cannot be vectorised without assuming no NaN)."""
    k = theta.shape[1]
    m0 = theta[leaf, 0]
    m1 = m0
    m2 = m0
    m3 = m0
    c = 1
    while c + 4 <= k:
        m0 = max(m0, theta[leaf, c])
        m1 = max(m1, theta[leaf, c + 1])
        m2 = max(m2, theta[leaf, c + 2])
        m3 = max(m3, theta[leaf, c + 3])
        c += 4
    while c < k:
        m0 = max(m0, theta[leaf, c])
        c += 1
    return max(max(m0, m1), max(m2, m3))


@njit(**_INLINE)
def _leaf_losses(theta, prob, loss):
    """``prob[l]`` = softmax of leaf l and ``loss[l, c] = logsumexp(theta[l]) - theta[l, c]``, leaf l's log
    loss of class c (eqs. (1), (3)): the per-class tables every point of a pass at this state looks up.
    Indexes the 2-d arrays directly (row views would cost reference counting at every batch). The two leaves
    are computed side by side (each leaf's max -> exp -> sum -> log is a chain of long latencies; a node
    holds few classes, so the chains, not the arithmetic, set the time)."""
    k = theta.shape[1]
    m0 = _row_max(theta, 0)
    m1 = _row_max(theta, 1)
    total0 = 0.0
    total1 = 0.0
    for c in range(k):
        e0 = _exp_nonpositive(theta[0, c] - m0)
        e1 = _exp_nonpositive(theta[1, c] - m1)
        prob[0, c] = e0
        prob[1, c] = e1
        total0 += e0
        total1 += e1
    inv0 = 1.0 / total0
    inv1 = 1.0 / total1
    lse0 = m0 + np.log(total0)
    lse1 = m1 + np.log(total1)
    for c in range(k):
        prob[0, c] *= inv0
        prob[1, c] *= inv1
        loss[0, c] = lse0 - theta[0, c]
        loss[1, c] = lse1 - theta[1, c]


@njit(**_INLINE)
def _margins4(X, i0, i1, i2, i3, wb):
    """``w~ . x~`` of the rows i0..i3: four independent accumulations (the reduction of one margin would
    otherwise be a serial chain of adds)."""
    p = X.shape[1]
    b = wb[p]
    z0 = -b
    z1 = -b
    z2 = -b
    z3 = -b
    for j in range(p):
        wj = wb[j]
        z0 += wj * X[i0, j]
        z1 += wj * X[i1, j]
        z2 += wj * X[i2, j]
        z3 += wj * X[i3, j]
    return z0, z1, z2, z3


@njit(**_INLINE)
def _margin(X, i, wb):
    p = X.shape[1]
    z = -wb[p]
    for j in range(p):
        z += wb[j] * X[i, j]
    return z


@njit(**_INLINE)
def _winner(z, yi, s, loss, cntl, lane, weight):
    """Loss-augmented inference for one point of margin ``z = w~ . x~`` and label ``yi`` (Alg. 1 line 9, the
    arg max of eq. (11)'s first term ``max(-z + loss_0, z + loss_1)``, ties go left): counts the label at
    the winning leaf in ``cntl[lane]`` ``weight`` times (one count table per lane of a block of four points, so
    consecutive points of one class do not wait on each other's count) and returns the point's subgradient coefficient
    on ``x~``: ``-(1 + s)`` when the left leaf wins, ``1 - s`` when the right one does (0, -2 or 2)."""
    a0 = loss[0, yi] - z
    a1 = loss[1, yi] + z
    r = 1.0 if a1 > a0 else 0.0  # a select, no branch (an int here compiles to an unpredictable branch)
    # both leaves' counts of the label in one slot, left + _PACK * right: one read-modify-write per point
    cntl[lane, yi] += weight * (1.0 + (_PACK - 1.0) * r)
    return 1.0 - s - 2.0 * (1.0 - r)


@njit(**_INLINE)
def _winners4(z, rows, y, side, loss, cntl):
    """:func:`_winner` of a block of four points (margins ``z``, row numbers ``rows``), lane by lane."""
    z0, z1, z2, z3 = z
    i0, i1, i2, i3 = rows
    return (_winner(z0, y[i0], side[i0], loss, cntl, 0, 1.0), _winner(z1, y[i1], side[i1], loss, cntl, 1, 1.0),
            _winner(z2, y[i2], side[i2], loss, cntl, 2, 1.0), _winner(z3, y[i3], side[i3], loss, cntl, 3, 1.0))


@njit(**_INLINE)
def _zero(g):
    """Zero the gradient (a loop: a slice assignment would create a view)."""
    for j in range(g.shape[0]):
        g[j] = 0.0


# A lane's count slot holds left + _PACK * right for one label (:func:`_winner`). Counts are integers (weights are
# multiplicities) below 2^26 per node, so every sum stays an integer below 2^53: exact, and the two counts come
# back exactly by a floor of the slot over _PACK (a power of two) -- the same counts as two separate slots.
_PACK = 67108864.0  # 2^26
MAX_POINTS = 1 << 26  # a node of at most this many points (co2_stump_sgd checks)


@njit(**_INLINE)
def _sum_lanes(cntl, cnt):
    """``cnt[r, c]``: the four lanes' packed counts added and unpacked; the lanes are left zeroed for the next
    batch (one pass over them instead of a separate zeroing pass; the lane tables start zeroed)."""
    for c in range(cnt.shape[1]):
        both = (cntl[0, c] + cntl[1, c]) + (cntl[2, c] + cntl[3, c])
        right = np.floor(both * (1.0 / _PACK))
        cnt[1, c] = right
        cnt[0, c] = both - right * _PACK
        cntl[0, c] = 0.0
        cntl[1, c] = 0.0
        cntl[2, c] = 0.0
        cntl[3, c] = 0.0


@njit(**_INLINE)
def _any_nonzero(c0, c1, c2, c3):
    """Whether any of a block's four subgradient coefficients is non-zero (one test for the block). Skipping
    an all-zero block is exact: g[j] + 0.0 == g[j] (up to the sign of a zero, which no later step can see)."""
    return (abs(c0) + abs(c1)) + (abs(c2) + abs(c3)) != 0.0


@njit(**_INLINE)
def _add_block(g, X, i0, i1, i2, i3, c0, c1, c2, c3):
    """Add four points' subgradient terms ``c x`` to ``g`` (one read-modify-write of ``g`` per four points; an
    all-zero block is skipped, see :func:`_any_nonzero`) and return what they add to its bias coordinate (the
    homogeneous coordinate of x~ is -1)."""
    if _any_nonzero(c0, c1, c2, c3):
        for j in range(X.shape[1]):
            g[j] += (c0 * X[i0, j] + c1 * X[i1, j]) + (c2 * X[i2, j] + c3 * X[i3, j])
        return -((c0 + c1) + (c2 + c3))
    return 0.0


@njit(**_INLINE)
def _add_point(g, X, i, c):
    """:func:`_add_block` of one point."""
    if c != 0.0:
        for j in range(X.shape[1]):
            g[j] += c * X[i, j]
        return -c
    return 0.0


@njit(**_INLINE)
def _end_batch(params, moments, grads, prob, m, step, gb, max_norm2):
    """A mini-batch's step from its summed subgradient (bias coordinate ``gb``) and counts: returns the largest
    ``||w~||^2`` so far."""
    g, cntl, cnt = grads
    g[g.shape[0] - 1] = gb
    _sum_lanes(cntl, cnt)
    return max(max_norm2, _momentum_step(params, moments, grads, prob, m, step))


@njit(**_INLINE)
def _term(z, yi, loss):
    """The point's term of eq. (10): ``max(-z + loss_0, z + loss_1) - |z|``."""
    return max(loss[0, yi] - z, loss[1, yi] + z) - abs(z)


@njit(**_INLINE)
def _surrogate_pass(points, n_points, params, side, refresh, tables, zbuf):
    """Mean of eq. (10) over all points at the single parameter state ``(wb, theta)``.

    ``X`` holds the distinct rows of the node's ``n_points`` points, row i standing for ``mult[i]`` of them
    (a bootstrap sample repeats points, and a repeated point has one margin): each row's term counts
    ``mult[i]`` times, so the mean is eq. (10)'s over the points, up to the order of the sum.

    ``wb = [w, b]`` (length p + 1; the paper's homogeneous ``w~`` for ``x~ = [x, -1]``). When ``refresh``
    the CCCP signs are set from the same pass: ``side[u0] = sgn(w~ . x~_i)`` with sgn(0) = +1, i.e.
    ``w_old <- w`` (Alg. 1 line 4). The pass leaves what the next mini-batch, which starts from the same
    state, needs: ``zbuf[u0] = w~ . x~_i``, ``prob`` (2, k) = softmax of each leaf and ``loss`` (2, k) the
    leaves' log losses per class (see ``cached`` in :func:`sgd_epoch`); ``side`` and ``zbuf`` are per row.
    Four rows at a time with four partial sums (fixed order, so deterministic).
    """
    X, y, mult = points
    wb, theta = params
    prob, loss = tables
    n = X.shape[0]
    _leaf_losses(theta, prob, loss)
    t0 = 0.0
    t1 = 0.0
    t2 = 0.0
    t3 = 0.0
    i = 0
    while i + 4 <= n:
        u0 = np.uint64(i)  # unsigned: no negative-index fix-up
        u1 = np.uint64(i + 1)
        u2 = np.uint64(i + 2)
        u3 = np.uint64(i + 3)
        z0, z1, z2, z3 = _margins4(X, u0, u1, u2, u3, wb)
        zbuf[u0] = z0
        zbuf[u1] = z1
        zbuf[u2] = z2
        zbuf[u3] = z3
        t0 += mult[u0] * _term(z0, y[u0], loss)
        t1 += mult[u1] * _term(z1, y[u1], loss)
        t2 += mult[u2] * _term(z2, y[u2], loss)
        t3 += mult[u3] * _term(z3, y[u3], loss)
        if refresh:
            side[u0] = 1.0 if z0 >= 0.0 else -1.0
            side[u1] = 1.0 if z1 >= 0.0 else -1.0
            side[u2] = 1.0 if z2 >= 0.0 else -1.0
            side[u3] = 1.0 if z3 >= 0.0 else -1.0
        i += 4
    while i < n:
        u0 = np.uint64(i)
        z = _margin(X, u0, wb)
        zbuf[u0] = z
        t0 += mult[u0] * _term(z, y[u0], loss)
        if refresh:
            side[u0] = 1.0 if z >= 0.0 else -1.0
        i += 1
    return ((t0 + t1) + (t2 + t3)) / n_points


@njit(**_NJIT)
def batch_bounds(n, batch_size):
    """Number of mini-batches of an epoch over n points: ``ceil(n / batch_size)`` batches of equal size
    (batch i covers ``perm[i n // m : (i + 1) n // m]``), so no batch is a tiny remainder that would get
    a full step; every batch holds at least ``batch_size / 2`` points when ``n >= batch_size``."""
    return max(1, (n + batch_size - 1) // batch_size)


@njit(**_INLINE)
def _momentum_step(params, moments, grads, prob, m, step):
    """One step of Alg. 1 lines 12-15 from a mini-batch of m points: ``g`` (p + 1) is the summed subgradient
    w.r.t. ``w~``, ``cnt`` (2, k) the labels counted at each point's winning leaf and ``prob`` the leaves'
    softmax at the batch's state; averages, momentum (``v <- momentum v - eta g; param <- param + v``) and the
    projection onto ``||w~||^2 <= nu`` (eq. (9)). Returns ``||w~||^2`` after the step."""
    wb, theta = params
    v, vtheta = moments
    g, _, cnt = grads
    eta, momentum, nu = step
    p1 = wb.shape[0]
    k = theta.shape[1]
    inv = 1.0 / m
    n0 = 0.0
    for c in range(k):
        n0 += cnt[0, c]
    n1 = m - n0
    norm2 = 0.0
    for j in range(p1):
        v[j] = momentum * v[j] - eta * g[j] * inv
        wb[j] += v[j]
        norm2 += wb[j] * wb[j]
    for c in range(k):
        vtheta[0, c] = momentum * vtheta[0, c] - eta * (n0 * prob[0, c] - cnt[0, c]) * inv
        theta[0, c] += vtheta[0, c]
        vtheta[1, c] = momentum * vtheta[1, c] - eta * (n1 * prob[1, c] - cnt[1, c]) * inv
        theta[1, c] += vtheta[1, c]
    if norm2 > nu:
        scale = np.sqrt(nu / norm2)
        norm2 = 0.0
        for j in range(p1):
            wb[j] *= scale
            norm2 += wb[j] * wb[j]
    return norm2


@njit(**_INLINE)
def _surrogate_and_gradient(points, n_points, params, side, refresh, tables, grads):
    """:func:`_surrogate_pass` and, from the same margins, the subgradient of one batch holding all the
    points at the same state (what :func:`sgd_epoch` computes for a node of at most ``batch_size`` points):
    one pass per epoch instead of two. A distinct row stands for ``mult[i]`` equal points (same margin,
    label and winner), so its subgradient and its count at the winning leaf are taken ``mult[i]`` times:
    the batch's sums up to their order. Returns the mean of eq. (10); fills ``prob``, ``loss``, ``g`` (p + 1, the
    summed subgradient w.r.t. ``w~``) and ``cnt`` (labels at each point's winning leaf), the signs ``side``
    refreshed first when ``refresh``."""
    X, y, mult = points
    wb, theta = params
    prob, loss = tables
    g, cntl, cnt = grads
    n, p = X.shape
    _leaf_losses(theta, prob, loss)
    _zero(g)
    gb = 0.0
    t0 = 0.0
    t1 = 0.0
    t2 = 0.0
    t3 = 0.0
    i = 0
    while i + 4 <= n:
        u0 = np.uint64(i)  # unsigned: no negative-index fix-up
        u1 = np.uint64(i + 1)
        u2 = np.uint64(i + 2)
        u3 = np.uint64(i + 3)
        z0, z1, z2, z3 = _margins4(X, u0, u1, u2, u3, wb)
        t0 += mult[u0] * _term(z0, y[u0], loss)
        t1 += mult[u1] * _term(z1, y[u1], loss)
        t2 += mult[u2] * _term(z2, y[u2], loss)
        t3 += mult[u3] * _term(z3, y[u3], loss)
        if refresh:
            side[u0] = 1.0 if z0 >= 0.0 else -1.0
            side[u1] = 1.0 if z1 >= 0.0 else -1.0
            side[u2] = 1.0 if z2 >= 0.0 else -1.0
            side[u3] = 1.0 if z3 >= 0.0 else -1.0
        m0 = mult[u0]
        m1 = mult[u1]
        m2 = mult[u2]
        m3 = mult[u3]
        c0 = m0 * _winner(z0, y[u0], side[u0], loss, cntl, 0, m0)
        c1 = m1 * _winner(z1, y[u1], side[u1], loss, cntl, 1, m1)
        c2 = m2 * _winner(z2, y[u2], side[u2], loss, cntl, 2, m2)
        c3 = m3 * _winner(z3, y[u3], side[u3], loss, cntl, 3, m3)
        gb += _add_block(g, X, u0, u1, u2, u3, c0, c1, c2, c3)
        i += 4
    while i < n:
        u0 = np.uint64(i)
        z = _margin(X, u0, wb)
        m0 = mult[u0]
        t0 += m0 * _term(z, y[u0], loss)
        if refresh:
            side[u0] = 1.0 if z >= 0.0 else -1.0
        c = m0 * _winner(z, y[u0], side[u0], loss, cntl, 0, m0)
        gb += _add_point(g, X, u0, c)
        i += 1
    g[p] = gb
    _sum_lanes(cntl, cnt)
    return ((t0 + t1) + (t2 + t3)) / n_points


@njit(**_INLINE)
def sgd_epoch(points, perm, n_batches, params, moments, side, step, tables, grads, cached, zbuf):
    """One epoch of projected mini-batch momentum SGD on eq. (11) (Alg. 1 lines 6-16, Sec. 4.2).

    ``perm`` lists the epoch's points in order as rows of ``X`` (a row repeats when the point does; ``y``,
    ``side`` and ``zbuf`` are per row). For each mini-batch (a slice of ``perm``, see :func:`batch_bounds`),
    at the parameters in force
    before the batch: loss-augmented inference per point (Alg. 1 line 9, the arg max of eq. (11)'s
    first term, ties go left), the subgradient of eq. (11) w.r.t. ``w~`` — ``-(1 + s) x~`` when the
    left leaf wins and ``(1 - s) x~`` when the right one does, ``s = sgn(w_old . x~)`` — and of the winning
    leaf's log loss w.r.t. its theta (``softmax(theta) - e_y``); the gradients are averaged over the
    batch, momentum is applied (``v <- momentum v - eta g; param <- param + v``) and ``w~`` is projected
    onto ``||w~||^2 <= nu`` (eq. (9)) (:func:`_momentum_step`). ``params`` (``wb`` (p + 1), ``theta``) and
    ``moments`` (``v``, ``vtheta`` (2, k)) are updated in place; ``grads`` (``g`` (p + 1), ``cntl`` (4, k) packed,
    see ``_PACK``, ``cnt`` (2, k)) and ``tables`` are scratch. With ``cached``, the first batch takes its margins
    ``zbuf[i]`` and ``tables`` from the :func:`_surrogate_pass` just made at the same state. ``X`` may be float32 (the
    products are accumulated in float64). Four points at a time: independent margins and count tables, one
    read-modify-write of ``g`` per four points. Returns the largest ``||w~||^2`` after any projection.
    """
    X, y, _ = points  # mini-batches draw every point (perm repeats rows), so no multiplicities here
    wb, theta = params
    prob, loss = tables
    g, cntl, cnt = grads
    n = perm.shape[0]
    max_norm2 = 0.0
    for bi in range(n_batches):
        start = bi * n // n_batches
        stop = (bi + 1) * n // n_batches
        use_cache = cached and bi == 0
        if not use_cache:
            _leaf_losses(theta, prob, loss)
        _zero(g)
        gb = 0.0
        t = start
        while t + 4 <= stop:
            i0 = perm[t]
            i1 = perm[t + 1]
            i2 = perm[t + 2]
            i3 = perm[t + 3]
            if use_cache:
                z0 = zbuf[i0]
                z1 = zbuf[i1]
                z2 = zbuf[i2]
                z3 = zbuf[i3]
            else:
                z0, z1, z2, z3 = _margins4(X, i0, i1, i2, i3, wb)
            c0, c1, c2, c3 = _winners4((z0, z1, z2, z3), (i0, i1, i2, i3), y, side, loss, cntl)
            # a point adds coef x~, zero when s agrees with the winner (no branch per point: the winner is
            # unpredictable). A block of four zeros (most blocks once the stump has settled: 79% on Letter,
            # 6% of the points giving a gradient) would add exact zeros, so it is skipped: same g, same forest
            gb += _add_block(g, X, i0, i1, i2, i3, c0, c1, c2, c3)
            t += 4
        while t < stop:
            i = perm[t]
            z = zbuf[i] if use_cache else _margin(X, i, wb)
            c = _winner(z, y[i], side[i], loss, cntl, 0, 1.0)
            gb += _add_point(g, X, i, c)
            t += 1
        max_norm2 = _end_batch(params, moments, grads, prob, stop - start, step, gb, max_norm2)
    return max_norm2


@njit(**_INLINE)
def _pass_margins4(X, i0, i1, i2, i3, wb, tail):
    """The margins of rows i0..i3 by the function :func:`_surrogate_pass` uses for each: a row below ``tail`` (the
    pass's blocks of four) by :func:`_margins4`, a row of its last partial block by :func:`_margin`."""
    z0, z1, z2, z3 = _margins4(X, i0, i1, i2, i3, wb)
    if i0 >= tail:
        z0 = _margin(X, i0, wb)
    if i1 >= tail:
        z1 = _margin(X, i1, wb)
    if i2 >= tail:
        z2 = _margin(X, i2, wb)
    if i3 >= tail:
        z3 = _margin(X, i3, wb)
    return z0, z1, z2, z3


@njit(**_INLINE)
def _margins4_twice(X, i0, i1, i2, i3, wa, wb):
    """:func:`_margins4` of the rows i0..i3 at two states ``wa`` and ``wb`` in one loop: each value is loaded and
    widened once for both (at long rows the fused epoch is bound by these loads, not by memory any more). The sums
    are grouped as LLVM vectorises this loop, which may differ from :func:`_margins4`'s by round-off."""
    p = X.shape[1]
    a0 = -wa[p]
    a1 = a0
    a2 = a0
    a3 = a0
    b0 = -wb[p]
    b1 = b0
    b2 = b0
    b3 = b0
    for j in range(p):
        x0 = np.float64(X[i0, j])
        x1 = np.float64(X[i1, j])
        x2 = np.float64(X[i2, j])
        x3 = np.float64(X[i3, j])
        aj = wa[j]
        bj = wb[j]
        a0 += aj * x0
        a1 += aj * x1
        a2 += aj * x2
        a3 += aj * x3
        b0 += bj * x0
        b1 += bj * x1
        b2 += bj * x2
        b3 += bj * x3
    return a0, a1, a2, a3, b0, b1, b2, b3


@njit(**_INLINE)
def _take_pass_point(i, z, yi, refresh, side, zbuf, terms, loss_then):
    """What :func:`_surrogate_pass` keeps of row i at the epoch's starting state: its margin, its sign when the
    pass refreshes them and its term of eq. (10) (summed later in the pass's order)."""
    zbuf[i] = z
    terms[i] = _term(z, yi, loss_then)
    if refresh:
        side[i] = 1.0 if z >= 0.0 else -1.0


@njit(**_NJIT)  # called once per epoch: a call, not an inlined copy (numba compilation time)
def sgd_epoch_with_pass(points, perm, n_batches, params, moments, side, step, tables, grads, then):
    """:func:`sgd_epoch` from a state whose :func:`_surrogate_pass` has not been made, fused with that pass: every
    point is read from memory once per epoch instead of twice (the node's rows do not fit in cache at p = 2,883: a
    sample-epoch there is bound by memory traffic, docs/cost.md "Inside a CO2 segmentation tree").

    ``then = (wb_then, loss_then, refresh, zbuf, terms)``: ``wb_then``, a copy of the starting ``w~``, and
    ``loss_then``, the starting leaves' log losses. When a point comes up, its margin at the starting state is taken
    as the pass takes it (:func:`_pass_margins4`), its sign refreshed first when ``refresh`` (the pass would have
    refreshed every sign before the epoch; a point's sign is read only at its own turn) and its term of eq. (10)
    kept in ``terms`` (per row); the first batch, at the starting state, uses those margins as :func:`sgd_epoch`
    uses the pass's cached ones; later batches take both margins of a point in one loop (:func:`_margins4_twice`).
    Every step, margin, sign and term is the one the pass followed by :func:`sgd_epoch` computes, up to round-off;
    :func:`_sum_terms` then sums the terms in the pass's order. Returns what :func:`sgd_epoch` returns."""
    X, y, _ = points
    wb, theta = params
    prob, loss = tables
    g, cntl, cnt = grads
    wb_then, loss_then, refresh, zbuf, terms = then
    n = perm.shape[0]
    u = X.shape[0]
    tail = np.uint32(u - u % 4)
    max_norm2 = 0.0
    for bi in range(n_batches):
        start = bi * n // n_batches
        stop = (bi + 1) * n // n_batches
        first = bi == 0
        _leaf_losses(theta, prob, loss)  # the first batch's: the starting state's, as the pass leaves them
        _zero(g)
        gb = 0.0
        t = start
        while t + 4 <= stop:
            i0 = perm[t]
            i1 = perm[t + 1]
            i2 = perm[t + 2]
            i3 = perm[t + 3]
            if first:
                e0, e1, e2, e3 = _pass_margins4(X, i0, i1, i2, i3, wb_then, tail)
                z0, z1, z2, z3 = e0, e1, e2, e3
            else:
                e0, e1, e2, e3, z0, z1, z2, z3 = _margins4_twice(X, i0, i1, i2, i3, wb_then, wb)
            _take_pass_point(i0, e0, y[i0], refresh, side, zbuf, terms, loss_then)
            _take_pass_point(i1, e1, y[i1], refresh, side, zbuf, terms, loss_then)
            _take_pass_point(i2, e2, y[i2], refresh, side, zbuf, terms, loss_then)
            _take_pass_point(i3, e3, y[i3], refresh, side, zbuf, terms, loss_then)
            c0, c1, c2, c3 = _winners4((z0, z1, z2, z3), (i0, i1, i2, i3), y, side, loss, cntl)
            gb += _add_block(g, X, i0, i1, i2, i3, c0, c1, c2, c3)
            t += 4
        while t < stop:
            i = perm[t]
            e, _, _, _ = _pass_margins4(X, i, i, i, i, wb_then, tail)
            _take_pass_point(i, e, y[i], refresh, side, zbuf, terms, loss_then)
            z = e if first else _margin(X, i, wb)
            c = _winner(z, y[i], side[i], loss, cntl, 0, 1.0)
            gb += _add_point(g, X, i, c)
            t += 1
        max_norm2 = _end_batch(params, moments, grads, prob, stop - start, step, gb, max_norm2)
    return max_norm2


@njit(**_INLINE)
def _sum_terms(mult, terms, n_points):
    """:func:`_surrogate_pass`'s mean from the kept terms: the same products, partial sums and order (as written;
    the compiled sums may group differently, round-off)."""
    n = terms.shape[0]
    t0 = 0.0
    t1 = 0.0
    t2 = 0.0
    t3 = 0.0
    i = 0
    while i + 4 <= n:
        t0 += mult[i] * terms[i]
        t1 += mult[i + 1] * terms[i + 1]
        t2 += mult[i + 2] * terms[i + 2]
        t3 += mult[i + 3] * terms[i + 3]
        i += 4
    while i < n:
        t0 += mult[i] * terms[i]
        i += 1
    return ((t0 + t1) + (t2 + t3)) / n_points


@njit(**_NJIT)
def next_learning_rate(eta, n_rises, previous, current, patience):
    """The learning-rate rule of Sec. 4.2 ("when [the surrogate] oscillates for more than a number of
    iterations we reduce the learning rate"): ``n_rises`` counts *consecutive* epochs whose surrogate
    rose; a fall (or no change) resets it; after ``patience`` consecutive rises eta is halved and the count
    starts again. Returns ``(eta, n_rises)``."""
    if current > previous:
        n_rises += 1
        if n_rises >= patience:
            return eta * 0.5, 0
        return eta, n_rises
    return eta, 0


# A node whose distinct rows take at least FUSE_NODE_BYTES, each row at least FUSE_ROW_BYTES, runs its epochs
# fused with the surrogate pass (:func:`sgd_epoch_with_pass`: the rows read once per epoch instead of twice). A
# smaller node stays in cache (L2: 2 MB here), and short rows cost their per-point work, not their traffic: there
# the fused epoch's copies and extra margins cost more than they save (benchmarks/bench_co2_fused.py: 1.47-1.63x
# faster at 1-11.5 KB rows of 98-352 MB nodes; 0.89x at 216-byte rows, 0.73x at 64-byte rows).
FUSE_NODE_BYTES = 1 << 22
FUSE_ROW_BYTES = 1024
FUSE_AUTO, FUSE_NEVER, FUSE_ALWAYS = -1, 0, 1


@njit(**_NJIT)
def fuses(n_rows, n_features, itemsize):
    """Whether ``FUSE_AUTO`` fuses the epochs of a node of ``n_rows`` distinct rows of ``n_features`` values of
    ``itemsize`` bytes."""
    row_bytes = n_features * itemsize
    return row_bytes >= FUSE_ROW_BYTES and n_rows * row_bytes >= FUSE_NODE_BYTES


@njit(**_NJIT)
def co2_stump_sgd(points, start, settings, stop, seed, history, fuse=FUSE_AUTO):
    """Minimise the surrogate eq. (10) subject to ``||[w, b]||^2 <= nu`` (eq. (9)) by CCCP + SGD (Alg. 1).

    ``points = (X, y, rows, mult)``, ``start = (w, b, theta)``, ``settings = (nu, eta, momentum, batch_size,
    tau, patience)``, ``stop = (max_epochs, tol, n_iter_no_change, tol_initial)``; ``seed`` seeds the
    shuffles, ``history`` receives the tracked surrogate.

    The n training points are given as distinct rows: point t is row ``rows[t]`` of ``X`` (u, p) with label
    ``y[rows[t]]``, and ``mult[i]`` (float) counts the points of row i (a bootstrap sample repeats points;
    ``rows = arange(n)``, ``mult = 1`` when none repeats). Repeated points share one margin, so the passes
    over all points at one state (the tracked surrogate, and a single full batch's subgradient) run over the
    rows with weights; mini-batches still draw the n points. The trajectory is the one over the points
    themselves, up to the order of floating-point sums.

    ``w`` (p,) and ``theta`` (2, k) are updated in place; ``b`` is returned. Epoch e shuffles the points
    (splitmix64 stream seeded by ``seed``) and runs :func:`sgd_epoch`. ``w_old`` (the signs ``s`` of
    eq. (11)) is set from the initial parameters and refreshed after every ``tau``-th epoch, so it is
    held fixed for ``tau`` epochs (Alg. 1 line 4).

    The tracked surrogate is eq. (10) averaged over all n points at one parameter state: ``history[0]``
    at the start, ``history[e]`` after epoch e (the pass that evaluates it also refreshes the signs
    when due). Learning rate: :func:`next_learning_rate` with ``patience`` consecutive rises. Stopping:
    after ``max_epochs``, or when the best surrogate has not dropped by ``tol`` times its own value
    (``tol_initial`` false) or times the node's initial surrogate ``history[0]`` (``tol_initial`` true: one
    scale per node, so a nearly pure node whose surrogate approaches 0 is not held to ever smaller steps)
    for ``n_iter_no_change`` epochs. ``history`` needs ``max_epochs + 1`` entries.

    Returns ``(b, n_epochs, max_norm2, eta)``: the final bias, epochs run, the largest
    ``||[w, b]||^2`` seen after any step, and the final rate. Labels are not checked here (callers do):
    a label outside ``0..k-1`` reads outside ``theta``'s tables.

    Fused epochs (``fuse``: ``FUSE_AUTO`` for nodes of at least ``FUSE_NODE_BYTES`` in rows of at least
    ``FUSE_ROW_BYTES``, or ``FUSE_NEVER`` / ``FUSE_ALWAYS``; mini-batches only): each epoch after the first is
    fused with the pass at its starting state (:func:`sgd_epoch_with_pass`) and run at the learning rate in force
    before that pass's surrogate is known; when the surrogate lowers the rate, the epoch is undone and re-run at the
    new rate, and when it stops the descent, the epoch is undone. The same steps, margins, signs and surrogates as
    the unfused loop, up to round-off: the fused code is compiled in another context, where LLVM's reassociation
    (``_NJIT``'s fastmath) groups a sum differently (a few ulp in the surrogate; tests check that whole descents
    keep the same epochs, halvings and stop and stay within 1e-12 relative). The unfused loop is the same machine
    code as before the fused one existed (bit-equal results).
    """
    X, y, rows, mult = points
    w, b, theta = start
    nu, eta, momentum, batch_size, tau, patience = settings
    max_epochs, tol, n_iter_no_change, tol_initial = stop
    u, p = X.shape
    n = rows.shape[0]
    k = theta.shape[1]
    side = np.empty(u)
    # unsigned point indices and labels: indexing with them skips numba's negative-index fix-up (about a
    # third of the instructions of the per-point loops). perm holds rows: shuffling it with the stream's
    # swaps gives rows[permutation of the points] directly
    perm = rows.astype(np.uint32)  # half the memory of uint64 for the shuffle's random swaps
    y = y.astype(np.uint64)  # a copy of any integer labels (a view would misread int32)
    state = np.full(1, seed, dtype=np.uint64)
    wb = np.empty(p + 1)
    wb[:p] = w
    wb[p] = b
    v = np.zeros(p + 1)
    vtheta = np.zeros((2, k))
    n_batches = batch_bounds(n, batch_size)
    g = np.empty(p + 1)
    prob = np.empty((2, k))
    loss = np.empty((2, k))
    cnt = np.empty((2, k))
    if n >= MAX_POINTS:
        raise ValueError("co2_stump_sgd: a node of 2^26 points or more overflows the packed label counts")
    cntl = np.zeros((4, k))  # packed counts (see _PACK), zeroed here, then by _sum_lanes after every use
    zbuf = np.empty(u)
    node = (X, y, mult)
    params = (wb, theta)
    moments = (v, vtheta)
    tables = (prob, loss)
    grads = (g, cntl, cnt)

    max_norm2 = 0.0
    for j in range(p + 1):
        max_norm2 += wb[j] * wb[j]
    single = n_batches == 1  # one batch at the surrogate pass's state: fused (_surrogate_and_gradient)
    if single:
        current = _surrogate_and_gradient(node, n, params, side, True, tables, grads)
    else:
        current = _surrogate_pass(node, n, params, side, True, tables, zbuf)
    history[0] = current
    best = current
    since_best = 0
    n_rises = 0
    n_epochs = 0
    fused = fuses(u, p, X.itemsize) if fuse == FUSE_AUTO else fuse == FUSE_ALWAYS
    if fused and not single:
        n_epochs, max_norm2, eta = _fused_epochs(node, n, (perm, state, n_batches), params, moments, (side, zbuf),
                                                 tables, grads, (eta, momentum, nu, tau, patience), stop,
                                                 (history, max_norm2))
        w[:] = wb[:p]
        return wb[p], n_epochs, max_norm2, eta
    for epoch in range(max_epochs):
        refresh = (epoch + 1) % tau == 0
        step = (eta, momentum, nu)
        if single:  # one full batch: the order of the points does not change the step
            m2 = _momentum_step(params, moments, grads, prob, n, step)
        else:
            shuffle_epoch(perm, state)
            m2 = sgd_epoch(node, perm, n_batches, params, moments, side, step, tables, grads, True, zbuf)
        if m2 > max_norm2:
            max_norm2 = m2
        n_epochs = epoch + 1
        previous = current
        if single:
            current = _surrogate_and_gradient(node, n, params, side, refresh, tables, grads)
        else:
            current = _surrogate_pass(node, n, params, side, refresh, tables, zbuf)
        history[epoch + 1] = current
        eta, n_rises = next_learning_rate(eta, n_rises, previous, current, patience)
        if current < best - tol * (abs(history[0]) if tol_initial else abs(best)):
            best = current
            since_best = 0
        else:
            since_best += 1
            if since_best >= n_iter_no_change:
                break
    w[:] = wb[:p]
    return wb[p], n_epochs, max_norm2, eta


@njit(**_NJIT)
def _copy_into(dst, src):
    """``dst[...] = src`` for 1-d or 2-d arrays (a loop: no temporaries)."""
    a = dst.reshape(-1)
    b = src.reshape(-1)
    for i in range(a.shape[0]):
        a[i] = b[i]


@njit(**_NJIT)
def _fused_epochs(node, n, batches, params, moments, per_row, tables, grads, rates, stop, record):
    """The epochs of :func:`co2_stump_sgd` (mini-batches) with each epoch after the first fused with the pass at
    its starting state (:func:`sgd_epoch_with_pass`). ``batches = (perm, state, n_batches)`` (the points' order and
    its random stream), ``per_row = (side, zbuf)``, ``rates = (eta, momentum, nu, tau, patience)``, ``record =
    (history, max_norm2)``; ``history[0]``, the signs, ``zbuf`` and ``tables`` hold the first pass's results.
    Returns ``(n_epochs, max_norm2, eta)``."""
    perm, state, n_batches = batches
    side, zbuf = per_row
    history, max_norm2 = record
    X, y, mult = node
    wb, theta = params
    v, vtheta = moments
    prob, loss = tables
    eta, momentum, nu, tau, patience = rates
    max_epochs, tol, n_iter_no_change, tol_initial = stop
    u = X.shape[0]
    k = theta.shape[1]
    # the state at an epoch's start, kept to undo the epoch
    wb_then = np.empty_like(wb)
    theta_then = np.empty((2, k))
    v_then = np.empty_like(v)
    vtheta_then = np.empty((2, k))
    perm_then = np.empty_like(perm)
    state_then = np.empty_like(state)
    prob_then = np.empty((2, k))
    loss_then = np.empty((2, k))
    terms = np.zeros(u)
    current = history[0]
    best = current
    since_best = 0
    n_rises = 0
    n_epochs = 0
    stopped = False
    for epoch in range(max_epochs):
        plain = epoch == 0  # the first epoch's starting pass is history[0]'s, already made
        if not plain:
            _copy_into(wb_then, wb)
            _copy_into(theta_then, theta)
            _copy_into(v_then, v)
            _copy_into(vtheta_then, vtheta)
            _copy_into(perm_then, perm)
            state_then[0] = state[0]
            _leaf_losses(theta, prob_then, loss_then)
            shuffle_epoch(perm, state)
            m2 = sgd_epoch_with_pass(node, perm, n_batches, params, moments, side, (eta, momentum, nu), tables, grads,
                                     (wb_then, loss_then, epoch % tau == 0, zbuf, terms))
            # the unfused loop's bookkeeping after the pass of this epoch's start (its previous epoch's end)
            previous = current
            current = _sum_terms(mult, terms, n)
            history[epoch] = current
            new_eta, n_rises = next_learning_rate(eta, n_rises, previous, current, patience)
            if current < best - tol * (abs(history[0]) if tol_initial else abs(best)):
                best = current
                since_best = 0
            else:
                since_best += 1
                stopped = since_best >= n_iter_no_change
            rerun = new_eta != eta
            if stopped or rerun:  # the epoch ran at a rate or past a stop it should not have: undo it
                _copy_into(wb, wb_then)
                _copy_into(theta, theta_then)
                _copy_into(v, v_then)
                _copy_into(vtheta, vtheta_then)
                _copy_into(perm, perm_then)
                state[0] = state_then[0]
            eta = new_eta
            if stopped:
                break
            if rerun:  # at the new rate, from the pass's margins and tables as the unfused loop has them
                _copy_into(prob, prob_then)
                _copy_into(loss, loss_then)
                plain = True
        if plain:  # one call site: each inlined copy of the epoch costs numba compilation on a fresh clone
            shuffle_epoch(perm, state)
            m2 = sgd_epoch(node, perm, n_batches, params, moments, side, (eta, momentum, nu), tables, grads, True,
                           zbuf)
        if m2 > max_norm2:
            max_norm2 = m2
        n_epochs = epoch + 1
    if max_epochs > 0 and not stopped:  # the pass after the last epoch, and the rate it sets, as the loop ends
        previous = current
        current = _surrogate_pass(node, n, params, side, max_epochs % tau == 0, tables, zbuf)
        history[max_epochs] = current
        eta, n_rises = next_learning_rate(eta, n_rises, previous, current, patience)
    return n_epochs, max_norm2, eta
