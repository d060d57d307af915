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
"""

from __future__ import annotations

import numpy as np
from numba import njit

# fastmath without the no-NaN/no-inf assumptions: lets LLVM reassociate the dot products and gradient sums
# (vector instructions) and contract multiply-adds. Results change only by round-off (the order of the
# sums); the kernel is about 25% faster (30 -> 23 ns per sample-epoch at p = 16, k = 26).
_NJIT = dict(cache=True, nogil=True, fastmath={"nsz", "arcp", "contract", "afn", "reassoc"})

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


@njit(**_NJIT)
def _softmax_into(theta_row, out):
    """Write softmax(theta_row) into ``out`` and return logsumexp(theta_row) (eq. (1), (3))."""
    m = theta_row[0]
    for c in range(1, theta_row.shape[0]):
        if theta_row[c] > m:
            m = theta_row[c]
    total = 0.0
    for c in range(theta_row.shape[0]):
        out[c] = np.exp(theta_row[c] - m)
        total += out[c]
    for c in range(theta_row.shape[0]):
        out[c] /= total
    return m + np.log(total)


@njit(**_NJIT)
def _surrogate_pass(X, y, wb, theta, side, refresh, prob, lse, zbuf):
    """Mean of eq. (10) over all points at the single parameter state ``(wb, theta)``.

    ``wb = [w, b]`` (length p + 1; the paper's homogeneous ``w~`` for ``x~ = [x, -1]``). When ``refresh``
    the CCCP signs are set from the same pass: ``side[i] = sgn(w~ . x~_i)`` with sgn(0) = +1, i.e.
    ``w_old <- w`` (Alg. 1 line 4). The pass leaves what the next mini-batch, which starts from the same
    state, needs: ``zbuf[i] = w~ . x~_i``, ``prob`` (2, k) = softmax of each leaf and ``lse`` (2,) their
    log-sum-exps (see ``cached`` in :func:`sgd_epoch`).
    """
    n, p = X.shape
    lse0 = _softmax_into(theta[0], prob[0])
    lse1 = _softmax_into(theta[1], prob[1])
    lse[0] = lse0
    lse[1] = lse1
    b = wb[p]
    total = 0.0
    for i in range(n):
        z = -b
        for j in range(p):
            z += wb[j] * X[i, j]
        zbuf[i] = z
        yi = y[i]
        a0 = -z + lse0 - theta[0, yi]
        a1 = z + lse1 - theta[1, yi]
        total += max(a0, a1) - abs(z)
        if refresh:
            side[i] = 1.0 if z >= 0.0 else -1.0
    return total / n


@njit(**_NJIT)
def batch_bounds(n, batch_size):
    """Number of mini-batches of an epoch over n points: ``ceil(n / batch_size)`` batches of equal size
    (batch i covers ``perm[i n // m : (i + 1) n // m]``), so no batch is a tiny remainder that would get
    a full step; every batch holds at least ``batch_size / 2`` points when ``n >= batch_size``."""
    return max(1, (n + batch_size - 1) // batch_size)


@njit(**_NJIT)
def _winner_coef(z, yi, s, lse0, lse1, theta, cnt):
    """Loss-augmented inference for one point of margin ``z = w~ . x~`` (Alg. 1 line 9, the arg max of
    eq. (11)'s first term, ties go left): counts the point's label at the winning leaf in ``cnt`` and
    returns its subgradient coefficient on ``x~``, ``-(1 + s)`` when the left leaf wins and ``1 - s`` when
    the right one does."""
    a0 = -z + lse0 - theta[0, yi]
    a1 = z + lse1 - theta[1, yi]
    r = 1.0 if a1 > a0 else 0.0  # the right leaf wins (ties go left); selects, no branch
    cnt[0, yi] += 1.0 - r
    cnt[1, yi] += r
    return 1.0 - s - 2.0 * (1.0 - r)


@njit(**_NJIT)
def sgd_epoch(X, y, perm, n_batches, wb, theta, side, v, vtheta, eta, momentum, nu, g, prob, cnt, cached, lse, zbuf):
    """One epoch of projected mini-batch momentum SGD on eq. (11) (Alg. 1 lines 6-16, Sec. 4.2).

    For each mini-batch (a slice of ``perm``, see :func:`batch_bounds`), at the parameters in force
    before the batch: loss-augmented inference per point (Alg. 1 line 9, the arg max of eq. (11)'s
    first term, ties go left), the subgradient of eq. (11) w.r.t. ``w~`` — ``-(1 + s) x~`` when the
    left leaf wins and ``(1 - s) x~`` when the right one does, ``s = sgn(w_old . x~)`` — and of the winning
    leaf's log loss w.r.t. its theta (``softmax(theta) - e_y``); the gradients are averaged over the
    batch, momentum is applied (``v <- momentum v - eta g; param <- param + v``) and ``w~`` is projected
    onto ``||w~||^2 <= nu`` (eq. (9)). ``wb``, ``theta``, ``v`` (p + 1) and ``vtheta`` (2, k) are updated in
    place; ``g`` (p + 1), ``prob`` and ``cnt`` (2, k) are scratch. With ``cached``, the first batch takes
    its margins ``zbuf[i]``, ``prob`` and ``lse`` from the :func:`_surrogate_pass` just made at the same state
    (the same arithmetic, so the same numbers; a node of at most ``batch_size`` points, one batch per
    epoch, then computes each margin once per epoch instead of twice). ``X`` may be float32 (the products are
    accumulated in float64). Returns the largest ``||w~||^2`` after any projection.
    """
    n, p = X.shape
    k = theta.shape[1]
    max_norm2 = 0.0
    for bi in range(n_batches):
        start = bi * n // n_batches
        stop = (bi + 1) * n // n_batches
        use_cache = cached and bi == 0
        if use_cache:
            lse0 = lse[0]
            lse1 = lse[1]
        else:
            lse0 = _softmax_into(theta[0], prob[0])
            lse1 = _softmax_into(theta[1], prob[1])
        g[:] = 0.0
        cnt[:] = 0.0
        b = wb[p]
        gb = 0.0
        # four points at a time: four independent margins, and one read-modify-write of g per four points
        # instead of per point (g's loop-carried load/store and the margin's reduction were the bottleneck)
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
            c0 = _winner_coef(z0, y[i0], side[i0], lse0, lse1, theta, cnt)
            c1 = _winner_coef(z1, y[i1], side[i1], lse0, lse1, theta, cnt)
            c2 = _winner_coef(z2, y[i2], side[i2], lse0, lse1, theta, cnt)
            c3 = _winner_coef(z3, y[i3], side[i3], lse0, lse1, theta, cnt)
            # every point adds coef x~ (zero when s agrees with the winner): branch-free, so the
            # unpredictable winner costs no pipeline flush
            for j in range(p):
                g[j] += (c0 * X[i0, j] + c1 * X[i1, j]) + (c2 * X[i2, j] + c3 * X[i3, j])
            gb -= (c0 + c1) + (c2 + c3)  # the homogeneous coordinate of x~ is -1
            t += 4
        while t < stop:
            i = perm[t]
            if use_cache:
                z = zbuf[i]
            else:
                z = -b
                for j in range(p):
                    z += wb[j] * X[i, j]
            coef = _winner_coef(z, y[i], side[i], lse0, lse1, theta, cnt)
            for j in range(p):
                g[j] += coef * X[i, j]
            gb -= coef
            t += 1
        g[p] = gb
        m = stop - start
        inv = 1.0 / m
        n0 = 0.0
        for c in range(k):
            n0 += cnt[0, c]
        n1 = m - n0
        norm2 = 0.0
        for j in range(p + 1):
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
            for j in range(p + 1):
                wb[j] *= scale
                norm2 += wb[j] * wb[j]
        if norm2 > max_norm2:
            max_norm2 = norm2
    return max_norm2


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


@njit(**_NJIT)
def co2_stump_sgd(X, y, w, b, theta, nu, eta, momentum, batch_size, max_epochs, tau, tol,
                  n_iter_no_change, patience, seed, history, tol_initial=False):
    """Minimise the surrogate eq. (10) subject to ``||[w, b]||^2 <= nu`` (eq. (9)) by CCCP + SGD.

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
    ``||[w, b]||^2`` seen after any step, and the final rate.
    """
    n, p = X.shape
    k = theta.shape[1]
    side = np.empty(n)
    perm = np.arange(n)
    state = np.full(1, seed, dtype=np.uint64)
    wb = np.empty(p + 1)
    wb[:p] = w
    wb[p] = b
    v = np.zeros(p + 1)
    vtheta = np.zeros((2, k))
    n_batches = batch_bounds(n, batch_size)
    g = np.empty(p + 1)
    prob = np.empty((2, k))
    cnt = np.empty((2, k))
    lse = np.empty(2)
    zbuf = np.empty(n)

    max_norm2 = 0.0
    for j in range(p + 1):
        max_norm2 += wb[j] * wb[j]
    current = _surrogate_pass(X, y, wb, theta, side, True, prob, lse, zbuf)
    history[0] = current
    best = current
    since_best = 0
    n_rises = 0
    n_epochs = 0
    for epoch in range(max_epochs):
        if n_batches > 1:  # one full batch: the order of the points does not change the step
            shuffle_epoch(perm, state)
        m2 = sgd_epoch(X, y, perm, n_batches, wb, theta, side, v, vtheta, eta, momentum, nu, g, prob, cnt, True, lse,
                       zbuf)
        if m2 > max_norm2:
            max_norm2 = m2
        n_epochs = epoch + 1
        previous = current
        current = _surrogate_pass(X, y, wb, theta, side, (epoch + 1) % tau == 0, prob, lse, zbuf)
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
