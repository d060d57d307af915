"""Numba kernel of the CO2 stump optimiser (Norouzi et al., "CO2 Forest", Sec. 4, Alg. 1).

A stump routes x right iff ``w . x - b >= 0``. In the paper's homogeneous coordinates this is
``w~ . x~ >= 0`` with ``w~ = [w, b]`` and ``x~ = [x, -1]``; the norm constraint of eq. (9),
``||w~||^2 <= nu``, therefore covers the bias too. Leaves hold unnormalised log-probabilities
``theta[0]`` (left) and ``theta[1]`` (right) scored by the log loss of eq. (3).

The kernel runs the convex-concave procedure of Sec. 4.2: every ``tau`` epochs the sign
``s = sgn(w_old . x~)`` is refreshed (the tangent of the concave term ``-|w . x~|``), and in between
the convex subproblem eq. (11) is minimised by projected stochastic subgradient descent with the
paper's practical modifications (mini-batches with averaged gradients, momentum, a learning rate
that is halved when the tracked surrogate oscillates). Labels must already be compressed to
``0..k-1`` for the ``k = theta.shape[1]`` classes that occur at the node.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_NJIT = dict(cache=True, nogil=True)

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
def _refresh_signs(X, w, b, side):
    """CCCP step: ``side[i] = sgn(w_old . x~_i)`` with sgn(0) = +1 (ties go right)."""
    n, p = X.shape
    for i in range(n):
        z = -b
        for j in range(p):
            z += w[j] * X[i, j]
        side[i] = 1.0 if z >= 0.0 else -1.0


@njit(**_NJIT)
def co2_stump_sgd(X, y, w, b, theta, nu, eta, momentum, batch_size, max_epochs, tau, tol,
                  n_iter_no_change, patience, seed, history):
    """Minimise the surrogate eq. (10) subject to ``||[w, b]||^2 <= nu`` (eq. (9)) by CCCP + SGD.

    ``w`` (p,) and ``theta`` (2, k) are updated in place; ``b`` is returned. One epoch is one pass
    over a fresh random permutation in mini-batches of ``batch_size``; a mini-batch step follows
    Alg. 1 lines 8-13 for every point, averages the subgradients of eq. (11), applies momentum and
    projects ``[w, b]`` back onto the ball (lines 15-16).

    The surrogate tracked per epoch is eq. (10) summed over the epoch's points at the parameters in
    force when each point is visited (no extra pass), divided by n; it is stored in
    ``history[epoch]``. Learning-rate rule: every epoch whose surrogate exceeds the previous epoch's
    counts as an oscillation, and after ``patience`` of them ``eta`` is halved and the count reset.
    Stopping: after ``max_epochs``, or when the best epoch surrogate has not dropped by a relative
    ``tol`` for ``n_iter_no_change`` epochs.

    Returns ``(b, n_epochs, max_norm2, eta)``: the final bias, epochs run, the largest
    ``||[w, b]||^2`` seen after any projection step (for checking feasibility), and the final rate.
    """
    n, p = X.shape
    k = theta.shape[1]
    side = np.empty(n)
    perm = np.arange(n)
    state = np.full(1, seed, dtype=np.uint64)
    vw = np.zeros(p)
    vb = 0.0
    vtheta = np.zeros((2, k))
    gw = np.zeros(p)
    prob0 = np.empty(k)
    prob1 = np.empty(k)
    cnt0 = np.zeros(k)
    cnt1 = np.zeros(k)

    max_norm2 = b * b
    for j in range(p):
        max_norm2 += w[j] * w[j]
    best = np.inf
    since_best = 0
    prev = np.inf
    n_up = 0
    n_epochs = 0
    for epoch in range(max_epochs):
        if epoch % tau == 0:
            _refresh_signs(X, w, b, side)  # w_old <- w (Alg. 1 line 4)
        _shuffle(perm, state)
        total = 0.0
        for start in range(0, n, batch_size):
            stop = min(start + batch_size, n)
            lse0 = _softmax_into(theta[0], prob0)
            lse1 = _softmax_into(theta[1], prob1)
            gw[:] = 0.0
            gb = 0.0
            cnt0[:] = 0.0
            cnt1[:] = 0.0
            n0 = 0.0
            n1 = 0.0
            for t in range(start, stop):
                i = perm[t]
                z = -b
                for j in range(p):
                    z += w[j] * X[i, j]
                yi = y[i]
                a0 = -z + lse0 - theta[0, yi]  # -w.x + l(theta0, y)
                a1 = z + lse1 - theta[1, yi]   # +w.x + l(theta1, y)
                s = side[i]
                if a0 >= a1:
                    total += a0 - abs(z)
                    coef = -(1.0 + s)  # d/dw~ of (-z - s z): w <- w + eta (1 + s) x~
                    cnt0[yi] += 1.0
                    n0 += 1.0
                else:
                    total += a1 - abs(z)
                    coef = 1.0 - s     # d/dw~ of (z - s z): w <- w - eta (1 - s) x~
                    cnt1[yi] += 1.0
                    n1 += 1.0
                if coef != 0.0:
                    for j in range(p):
                        gw[j] += coef * X[i, j]
                    gb -= coef  # the homogeneous coordinate of x~ is -1
            inv = 1.0 / (stop - start)
            norm2 = 0.0
            for j in range(p):
                vw[j] = momentum * vw[j] - eta * gw[j] * inv
                w[j] += vw[j]
                norm2 += w[j] * w[j]
            vb = momentum * vb - eta * gb * inv
            b += vb
            norm2 += b * b
            # d l_log / d theta = softmax(theta) - e_y, summed over the points each leaf was active for
            for c in range(k):
                vtheta[0, c] = momentum * vtheta[0, c] - eta * (n0 * prob0[c] - cnt0[c]) * inv
                theta[0, c] += vtheta[0, c]
                vtheta[1, c] = momentum * vtheta[1, c] - eta * (n1 * prob1[c] - cnt1[c]) * inv
                theta[1, c] += vtheta[1, c]
            if norm2 > nu:
                scale = np.sqrt(nu / norm2)
                norm2 = 0.0
                for j in range(p):
                    w[j] *= scale
                    norm2 += w[j] * w[j]
                b *= scale
                norm2 += b * b
            if norm2 > max_norm2:
                max_norm2 = norm2
        mean = total / n
        history[epoch] = mean
        n_epochs = epoch + 1
        if mean > prev:
            n_up += 1
            if n_up >= patience:
                eta *= 0.5
                n_up = 0
        prev = mean
        if mean < best - tol * abs(best) or best == np.inf:
            best = mean
            since_best = 0
        else:
            since_best += 1
            if since_best >= n_iter_no_change:
                break
    return b, n_epochs, max_norm2, eta
