"""Growing a whole CO2 tree in one numba call (no Python, no GIL, between the root and the last leaf).

The node loop of :func:`treeopt.greedy._grow.grow_tree` with the CO2 split finder of
:mod:`treeopt.greedy.co2` inlined: the training points of a node are a slice of one index array that is
partitioned in place (no ``X[idx]`` row copies per node; a bootstrap sample is just an index array with
repeats), the q candidate features are drawn with a splitmix64 stream, and every node's stump is
optimised by :func:`treeopt.greedy._co2_sgd.co2_stump_sgd`. Because the call releases the GIL, forests
grow in parallel threads.

Per node (CO2 paper Sec. 5):

1. the best information-gain axis split over q random features (the remaining features only when all
   q are constant at the node); none: the node is a leaf;
2. its partition, scaled onto the sphere ``||[w, b]||^2 = nu`` in the stump's coordinates, and the
   add-one-smoothed leaf log-frequencies start Alg. 1;
3. the optimised split, mapped back to input coordinates, is routed with the tree store's arithmetic.
   It is kept when it sends at least ``min_samples_leaf`` points each way. A stump that collapsed onto
   one side cannot split the node: ``axis_fallback`` 0 ("never") makes the node a leaf, 1 ("collapsed")
   splits it with the initial axis split so growth continues to pure leaves, 2 ("no_gain", a safeguard
   not in the paper) also replaces optimised splits without positive information gain (and, with
   ``compare_with_axis``, with less gain than the axis split).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._co2_sgd import _splitmix64, co2_stump_sgd
from ._criteria import _xlogx_table
from ._radix import stable_sort_labelled, stable_sort_workspace

_NJIT = dict(cache=True, nogil=True)

STANDARDIZE_CODES = {"none": 0, "tree": 1, "node": 2}
FALLBACK_CODES = {"never": 0, "collapsed": 1, "no_gain": 2}
UNLIMITED_DEPTH = np.iinfo(np.int64).max  # max_depth=None: a depth no tree reaches (no sentinel to test for)


@njit(**_NJIT)
def feature_order(X):
    """``order[f]``: the row numbers of ``X`` sorted by feature f (uint32: unsigned indices skip numba's
    negative-index fix-up), computed once per forest."""
    n, p = X.shape
    order = np.empty((p, n), dtype=np.uint32)
    feature_order_rows(X, order, 0, p)
    return order


@njit(**_NJIT)
def feature_order_rows(X, order, first, last):
    """Rows ``first..last-1`` of :func:`feature_order` written into ``order`` (a forest's threads share the
    features out)."""
    n = X.shape[0]
    col = np.empty(n)
    for f in range(first, last):
        for i in range(n):
            col[i] = X[i, f]
        o = np.argsort(col)
        for i in range(n):
            order[f, i] = o[i]


@njit(**_NJIT)
def presort(order, idx):
    """``(S, mult)``: ``S[f]`` holds the distinct points of ``idx`` (a bootstrap sample repeats points)
    ordered by feature f, for every feature (uint32 point ids), from the rows' order ``order``
    (:func:`feature_order`) in O(p n) time; ``mult[i]`` counts point i's repeats in ``idx`` (0 when absent).

    :func:`partition_presorted` then keeps every node's slice ``S[:, start:stop]`` sorted, so the axis
    search of a node needs no sort (the classic pre-sorting of CART/C4.5 growers), and it sweeps each
    distinct point once with its multiplicity."""
    p, n_rows = order.shape
    n = idx.shape[0]
    mult = np.zeros(n_rows, dtype=np.int64)
    for t in range(n):
        mult[idx[t]] += 1
    u = 0
    for r in range(n_rows):
        if mult[r] > 0:
            u += 1
    S = np.empty((p, u), dtype=np.uint32)
    for f in range(p):
        pos = 0
        for r in range(n_rows):
            i = order[f, r]
            if mult[i] > 0:
                S[f, pos] = i
                pos += 1
    return S, mult


@njit(**_NJIT)
def partition_presorted(S, start, stop, goes_right, tmp):
    """Stable partition of every feature's slice ``S[f, start:stop]`` by ``goes_right[point id]``: left points
    first, each part still sorted; returns the number of left points."""
    nl = 0
    for f in range(S.shape[0]):
        nl = 0
        nr = 0
        for t in range(start, stop):
            # branch-free: every point is written to both places and only its side's count moves on (a
            # point's side is a coin flip for the branch predictor)
            i = S[f, t]
            r = np.int64(goes_right[i])
            tmp[nr] = i
            S[f, start + nl] = i
            nr += r
            nl += 1 - r
        for t in range(nr):
            S[f, start + nl + t] = tmp[t]
    return nl


@njit(**_NJIT)
def _sweep_axis(zs, ys, ws, u, node, msl, xlogx, counts):
    """The best cut of one feature's sorted distinct points ``zs[:u]`` (labels ``ys``, repeats ``ws``): ``node`` is
    ``(m, total, parent, parent_s)`` (points, class counts, entropy terms of the node), ``counts`` ``(left, right)``
    buffers of k. Returns ``(i, gain)``: the cut falls between distinct points i - 1 and i (-1: none)."""
    m, total, parent, parent_s = node
    left, right = counts
    left[:] = 0
    right[:] = total
    s_left = 0.0
    s_right = parent_s
    bi = -1
    bg = -np.inf
    nl = 0  # points left of the cut after distinct point i - 1
    for i in range(1, u):
        c = ys[i - 1]
        for _ in range(ws[i - 1]):  # one step per repeat: the same sums, in the same order, as over the points
            s_left += xlogx[left[c] + 1] - xlogx[left[c]]
            s_right += xlogx[right[c] - 1] - xlogx[right[c]]
            left[c] += 1
            right[c] -= 1
        nl += ws[i - 1]
        if nl < msl or m - nl < msl or not zs[i - 1] < zs[i]:
            continue
        gain = (parent - (xlogx[nl] - s_left) - (xlogx[m - nl] - s_right)) / m
        if gain > bg:
            bg = gain
            bi = i
    return bi, bg


@njit(**_NJIT)
def _best_axis(data, node, feats, n_feats, msl, scratch, sorting):
    """Exact best information-gain axis split of a node's m points over ``feats[:n_feats]`` (the same sweep and
    midpoint thresholds as :func:`treeopt.greedy._criteria.best_axis_split` over the m points); returns ``(feature,
    threshold, gain)`` with feature -1 when no feature admits a cut. ``data`` is ``(X, y, k, xlogx)``; ``msl`` is
    min_samples_leaf; ``scratch`` ``(zs, ys, ws)`` buffers of the node's size.

    ``node`` is ``(node_sort, S, start, id_mult, pts, pmult, u, m, total)``, the node's u distinct points and their
    class counts ``total``, given one of two ways:

    * presorted (``node_sort`` False): ``S[f, start:start + u]`` holds them sorted by feature f (see :func:`presort`)
      and ``id_mult`` their repeats by point id, so the search sorts nothing;
    * sorted at the node (``node_sort``, ``axis_sort="per_node"``): ``pts[:u]`` in order of first appearance in the
      node's slice, ``pmult`` their repeats, and each candidate feature is sorted here by
      :func:`treeopt.greedy._radix.stable_sort_labelled` (``sorting``: ``(z, tags, perm, workspace)``, ``tags``
      holding 0..n-1), so tied points keep their order of first appearance.

    Cuts fall only between distinct values and a point's repeats lie on one side of every cut (only the running
    entropy sums step through them), so the two ways differ only in the order tied points are summed (the presort's
    is the order the forest's one sort of all rows left them in), i.e. by rounding."""
    X, y, k, xlogx = data
    node_sort, S, start, id_mult, pts, pmult, u, m, total = node
    zs, ys, ws = scratch
    z, tags, perm, work = sorting
    best_f = -1
    best_thr = np.nan
    best_gain = -np.inf
    parent_s = 0.0
    for c in range(k):
        parent_s += xlogx[total[c]]
    terms = (m, total, xlogx[m] - parent_s, parent_s)
    counts = (np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64))
    for jf in range(n_feats):
        f = feats[jf]
        if node_sort:
            for t in range(u):
                z[t] = X[pts[t], f]
            stable_sort_labelled(z[:u], tags[:u], zs, perm, work)
        else:
            for t in range(u):
                i = S[f, start + t]
                zs[t] = X[i, f]
                ys[t] = y[i]
                ws[t] = id_mult[i]
        if not zs[0] < zs[u - 1]:
            continue
        if node_sort:
            for t in range(u):
                j = perm[t]
                ys[t] = y[pts[j]]
                ws[t] = pmult[j]
        bi, bg = _sweep_axis(zs, ys, ws, u, terms, msl, xlogx, counts)
        if bi >= 0 and bg > best_gain:
            a = zs[bi - 1]
            b = zs[bi]
            thr = 0.5 * a + 0.5 * b
            if not thr > a:  # adjacent floats: the midpoint rounds onto a
                thr = b
            best_f = f
            best_thr = thr
            best_gain = max(bg, 0.0)
    return best_f, best_thr, best_gain


@njit(**_NJIT)
def _gain(y, idx, start, stop, go_right, k, xlogx):
    """Information gain of the partition ``go_right[0:m]`` of the points ``idx[start:stop]``."""
    m = stop - start
    left = np.zeros(k, dtype=np.int64)
    right = np.zeros(k, dtype=np.int64)
    for t in range(m):
        if go_right[t]:
            right[y[idx[start + t]]] += 1
        else:
            left[y[idx[start + t]]] += 1
    nl = 0
    sl = 0.0
    sr = 0.0
    sp = 0.0
    for c in range(k):
        nl += left[c]
        sl += xlogx[left[c]]
        sr += xlogx[right[c]]
        sp += xlogx[left[c] + right[c]]
    nr = m - nl
    return ((xlogx[m] - sp) - (xlogx[nl] - sl) - (xlogx[nr] - sr)) / m


@njit(**_NJIT)
def _put(pending, at, node, start, stop, ustart, ustop):
    pending[at, 0] = node
    pending[at, 1] = start
    pending[at, 2] = stop
    pending[at, 3] = ustart
    pending[at, 4] = ustop


@njit(**_NJIT)
def grow_co2_tree(points, settings, stop_rule, growth, seed, order):
    """Grow one CO2 tree on the points ``X[idx]`` (``idx`` may repeat points: a bootstrap sample).

    Arguments in named groups (as :func:`treeopt.greedy._co2_sgd.co2_stump_sgd` takes them):

    * ``points``: ``(X, y, idx, k)``, ``y`` holding labels ``0..k-1``;
    * ``settings``: Alg. 1's optimiser, the same at every node, ``(q, nu, eta, momentum, batch_size, tau,
      patience)``, q the features whose best axis split starts a stump;
    * ``stop_rule``: ``(max_epochs, tol, n_iter_no_change, tol_initial)`` (see ``co2_stump_sgd``);
    * ``growth``: ``(min_samples_split, min_samples_leaf, max_depth, standardize, axis_fallback,
      compare_with_axis, level_order, node_sort)``: ``max_depth`` a number of levels (pass a huge one for no limit);
      ``standardize`` a ``STANDARDIZE_CODES`` value, 0 (inputs as given), 1 (z-scores of the tree's sample) or 2
      (z-scores of each node's points); ``axis_fallback`` a ``FALLBACK_CODES`` value; ``level_order``: split the
      nodes breadth first (a queue) instead of depth first (a stack), so that nodes are numbered level by level
      and the random draws of every node above depth d come in the same order whatever ``max_depth`` is: the tree
      grown to depth d is then the first d levels of any deeper one (:func:`treeopt.greedy._grow.level_order_prefix`;
      each node's work is the same either way, only the order of the nodes and of their draws differs);
      ``node_sort``: sort each node's q candidate features at the node (:func:`_best_axis`) instead of
      presorting every feature once and keeping every node's slice sorted (``order`` is then not read): the
      presort costs O(p n log n) for the tree and O(p n) per level however few features a node tries, which
      dominates when q << p (31 x 31 windows: q = 53 of 2,883 values);
    * ``seed`` (uint64) and ``order``, :func:`feature_order` of ``X`` (shared by the trees of a forest): each
      node's axis search reads its points in sorted order instead of sorting them.

    Returns the node
    arrays ``(left, right, feature, bias, depth, n_samples, value, wrow, W, counts)``: ``wrow[i]`` is the
    row of ``W`` holding node i's oblique weights (-1 otherwise), ``value`` the class frequencies, and
    ``counts = [n_oblique, n_axis_fallbacks, n_collapsed]`` (collapsed: stumps that sent every point one way
    and, without the fallback, made the node a leaf) and ``epochs``, the SGD epochs each node's stump ran
    (0 at leaves).
    """
    X, y, idx, k = points
    q, nu, eta, momentum, batch_size, tau, patience = settings
    max_epochs = stop_rule[0]
    (min_samples_split, min_samples_leaf, max_depth, standardize, axis_fallback, compare_with_axis, level_order,
     node_sort) = growth
    n = idx.shape[0]
    p = X.shape[1]
    idx = idx.astype(np.uint64)  # a copy; unsigned point ids index without numba's negative-index fix-up
    cap = 2 * n + 1
    left = np.full(cap, -1, dtype=np.int64)
    right = np.full(cap, -1, dtype=np.int64)
    feature = np.full(cap, -2, dtype=np.int64)
    bias = np.zeros(cap)
    depth = np.zeros(cap, dtype=np.int64)
    n_samples = np.zeros(cap, dtype=np.int64)
    value = np.zeros((cap, k))
    wrow = np.full(cap, -1, dtype=np.int64)
    W = np.empty((16, p))
    n_w = 0
    counts = np.zeros(3, dtype=np.int64)
    epochs = np.zeros(cap, dtype=np.int64)

    state = np.full(1, seed, dtype=np.uint64)
    xlogx = _xlogx_table(n)
    feats = np.arange(p)
    total = np.empty(k, dtype=np.int64)
    zs = np.empty(n)
    ys = np.empty(n, dtype=np.int64)
    ws = np.empty(n, dtype=np.int64)
    # the node's distinct points by point id (-1: not seen), marked and cleared again wherever a node is scanned: a
    # bootstrap sample repeats about a third of its points, and a repeated point has one margin per state
    # (co2_stump_sgd takes rows, their multiplicities and each point's row)
    slot = np.full(X.shape[0], -1, dtype=np.int64)
    if node_sort:  # no presort: each node sorts its candidate features (_best_axis)
        S, id_mult = np.empty((0, 0), dtype=np.uint32), np.empty(0, dtype=np.int64)
        n_distinct = 0
        for t in range(n):
            if slot[idx[t]] < 0:
                slot[idx[t]] = 0
                n_distinct += 1
        for t in range(n):
            slot[idx[t]] = -1
        n_sort = n
    else:  # S over the distinct points: its node slices are ustart..ustop
        S, id_mult = presort(order, idx)
        n_distinct = S.shape[1]
        n_sort = 1
    goes_right = np.zeros(1 if node_sort else X.shape[0], dtype=np.bool_)  # by point id, for partition_presorted
    pts = np.empty(n_sort, dtype=np.uint64)  # a node's distinct points and their repeats (node_sort)
    pmult = np.empty(n_sort, dtype=np.int64)
    sorting = (np.empty(n_sort), np.arange(n_sort), np.empty(n_sort, dtype=np.int64), stable_sort_workspace(n_sort))
    tmp32 = np.empty(1 if node_sort else n, dtype=np.uint32)
    # the stump's gathered rows, one per distinct point (a bootstrap sample holds ~63% of the rows once or more):
    # float32, half the memory traffic of float64
    Z = np.empty((n_distinct, p), dtype=np.float32)
    yl = np.empty(n, dtype=np.int64)
    rows = np.empty(n, dtype=np.int64)
    mult = np.empty(n)
    yu = np.empty(n, dtype=np.int64)
    row_right = np.empty(n, dtype=np.bool_)
    go_right = np.empty(n, dtype=np.bool_)
    tmp = np.empty(n, dtype=np.uint64)
    local = np.empty(k, dtype=np.int64)
    history = np.empty(max_epochs + 1)
    sgd_settings = (nu, eta, momentum, batch_size, tau, patience)  # Alg. 1's optimiser: the same at every node
    mean = np.zeros(p)
    std = np.ones(p)
    if standardize == 1:  # the tree's training sample (the paper's zero-mean unit-variance scaling)
        for t in range(n):
            for j in range(p):
                mean[j] += X[idx[t], j]
        mean /= n
        var = np.zeros(p)
        for t in range(n):
            for j in range(p):
                d = X[idx[t], j] - mean[j]
                var[j] += d * d
        for j in range(p):
            s = np.sqrt(var[j] / n)
            std[j] = s if s > 0.0 else 1.0

    # the nodes waiting to be split: (node, start, stop, ustart, ustop); a stack (depth first) or, with
    # level_order, a queue (every node enters once, so cap rows hold it)
    pending = np.empty((cap, 5), dtype=np.int64)
    _put(pending, 0, 0, 0, n, 0, S.shape[1])
    head = 0  # the queue's next node (level order)
    top = 1  # one past the last node waiting
    n_nodes = 1
    while top > head:
        if level_order:
            at = head
            head += 1
        else:
            top -= 1
            at = top
        node = pending[at, 0]
        start = pending[at, 1]
        stop = pending[at, 2]
        ustart = pending[at, 3]
        ustop = pending[at, 4]
        m = stop - start
        total[:] = 0
        for t in range(start, stop):
            total[y[idx[t]]] += 1
        n_present = 0
        for c in range(k):
            value[node, c] = total[c] / m
            if total[c] > 0:
                n_present += 1
        n_samples[node] = m
        if m < min_samples_split or n_present <= 1 or depth[node] >= max_depth:
            continue
        # 1. best axis split over q random features (partial Fisher-Yates on feats)
        for j in range(q):
            r = j + np.int64(_splitmix64(state) % np.uint64(p - j))
            a = feats[j]
            feats[j] = feats[r]
            feats[r] = a
        data = (X, y, k, xlogx)
        un = ustop - ustart
        if node_sort:  # the node's distinct points, in order of first appearance
            un = 0
            for t in range(start, stop):
                i = idx[t]
                r = slot[i]
                if r < 0:
                    r = un
                    slot[i] = un
                    pts[un] = i
                    pmult[un] = 0
                    un += 1
                pmult[r] += 1
            for t in range(start, stop):
                slot[idx[t]] = -1
        at_node = (node_sort, S, ustart, id_mult, pts, pmult, un, m, total)
        f, thr, axis_gain = _best_axis(data, at_node, feats, q, min_samples_leaf, (zs, ys, ws), sorting)
        if f < 0 and q < p:
            f, thr, axis_gain = _best_axis(data, at_node, feats[q:], p - q, min_samples_leaf, (zs, ys, ws), sorting)
        if f < 0:
            continue
        # 2. stump start: local labels, smoothed leaf log-frequencies, coordinates, sphere scaling
        kk = 0
        for c in range(k):
            local[c] = kk
            if total[c] > 0:
                kk += 1
        theta = np.zeros((2, kk))
        cnt = np.zeros((2, kk))
        for t in range(m):
            i = idx[start + t]
            yl[t] = local[y[i]]
            cnt[1 if X[i, f] >= thr else 0, yl[t]] += 1.0
        for side in range(2):
            ns = 0.0
            for c in range(kk):
                ns += cnt[side, c]
            for c in range(kk):
                theta[side, c] = np.log((cnt[side, c] + 1.0) / (ns + kk))
        if standardize == 2:
            mean[:] = 0.0
            for t in range(m):
                for j in range(p):
                    mean[j] += X[idx[start + t], j]
            mean /= m
            std[:] = 0.0
            for t in range(m):
                for j in range(p):
                    d = X[idx[start + t], j] - mean[j]
                    std[j] += d * d
            for j in range(p):
                s = np.sqrt(std[j] / m)
                std[j] = s if s > 0.0 else 1.0
        u = 0
        for t in range(m):
            i = idx[start + t]
            r = slot[i]
            if r < 0:
                r = u
                slot[i] = u
                mult[u] = 0.0
                yu[u] = yl[t]
                if standardize == 0:
                    for j in range(p):
                        Z[u, j] = X[i, j]
                else:
                    for j in range(p):
                        Z[u, j] = (X[i, j] - mean[j]) / std[j]
                u += 1
            mult[r] += 1.0
            rows[t] = r
        for t in range(m):
            slot[idx[start + t]] = -1
        tz = thr if standardize == 0 else (thr - mean[f]) / std[f]
        scale = np.sqrt(nu / (1.0 + tz * tz))
        w = np.zeros(p)
        w[f] = scale
        sub_seed = _splitmix64(state)
        b, n_ep, _, _ = co2_stump_sgd((Z[:u], yu[:u], rows[:m], mult[:u]), (w, tz * scale, theta), sgd_settings,
                                      stop_rule, sub_seed, history)
        epochs[node] = n_ep
        if standardize != 0:  # w.(x - mean)/std - b = (w/std).x - (b + w.(mean/std))
            for j in range(p):
                b += w[j] * mean[j] / std[j]
                w[j] = w[j] / std[j]
        # 3. route with the tree store's arithmetic (feature order, zero weights skipped), once per distinct
        # point: rows are numbered in the order of their first point, so row r is new when r == n_new
        n_right = 0
        n_new = 0
        for t in range(m):
            r = rows[t]
            if r == n_new:
                i = idx[start + t]
                s = 0.0
                for j in range(p):
                    if w[j] != 0.0:
                        s += w[j] * X[i, j]
                row_right[r] = s - b >= 0.0
                n_new += 1
            go_right[t] = row_right[r]
            if go_right[t]:
                n_right += 1
        use = 0  # 0 leaf, 1 oblique, 2 axis
        if min(n_right, m - n_right) >= min_samples_leaf:
            use = 1
            if axis_fallback == 2:
                g = _gain(y, idx, start, stop, go_right, k, xlogx)
                if not g > 0.0 or (compare_with_axis and g < axis_gain):
                    use = 2
        elif axis_fallback >= 1:
            use = 2
        else:
            counts[2] += 1
        if use == 0:
            continue
        if use == 1:
            if n_w == W.shape[0]:
                W2 = np.empty((2 * n_w, p))
                W2[:n_w] = W[:n_w]
                W = W2
            W[n_w] = w
            wrow[node] = n_w
            n_w += 1
            feature[node] = -1
            bias[node] = b
            counts[0] += 1
        else:
            feature[node] = f
            bias[node] = thr
            counts[1] += 1
            n_right = 0
            for t in range(m):
                go_right[t] = X[idx[start + t], f] >= thr
                if go_right[t]:
                    n_right += 1
        # in-place stable partition of idx[start:stop]: left points first
        nl = 0
        nr = 0
        for t in range(m):  # branch-free, as in partition_presorted
            i = idx[start + t]
            r = np.int64(go_right[t])
            tmp[nr] = i
            idx[start + nl] = i
            nr += r
            nl += 1 - r
        for t in range(nr):
            idx[start + nl + t] = tmp[t]
        if not node_sort:
            for t in range(start, stop):
                goes_right[idx[t]] = t >= start + nl
        nlu = 0 if node_sort else partition_presorted(S, ustart, ustop, goes_right, tmp32)
        lc = n_nodes
        rc = n_nodes + 1
        n_nodes += 2
        left[node] = lc
        right[node] = rc
        depth[lc] = depth[node] + 1
        depth[rc] = depth[node] + 1
        if level_order:  # first in, first out: the left child is split first, as depth first does
            _put(pending, top, lc, start, start + nl, ustart, ustart + nlu)
            _put(pending, top + 1, rc, start + nl, stop, ustart + nlu, ustop)
        else:  # last in, first out: the left child on top
            _put(pending, top, rc, start + nl, stop, ustart + nlu, ustop)
            _put(pending, top + 1, lc, start, start + nl, ustart, ustart + nlu)
        top += 2
    return (left[:n_nodes], right[:n_nodes], feature[:n_nodes], bias[:n_nodes], depth[:n_nodes],
            n_samples[:n_nodes], value[:n_nodes], wrow[:n_nodes], W[:n_w], counts, epochs[:n_nodes])


@njit(**_NJIT)
def node_csr(feature, wrow, W):
    """CSR pieces ``(indptr, indices, data)`` of the tree store's weight matrix: the unit row e_f for axis
    nodes, the non-zero weights of W's row for oblique nodes, empty rows for leaves."""
    n_nodes = feature.shape[0]
    p = W.shape[1]
    indptr = np.zeros(n_nodes + 1, dtype=np.int64)
    for i in range(n_nodes):
        c = 0
        if feature[i] >= 0:
            c = 1
        elif wrow[i] >= 0:
            for j in range(p):
                if W[wrow[i], j] != 0.0:
                    c += 1
        indptr[i + 1] = indptr[i] + c
    indices = np.empty(indptr[n_nodes], dtype=np.int64)
    data = np.empty(indptr[n_nodes])
    for i in range(n_nodes):
        pos = indptr[i]
        if feature[i] >= 0:
            indices[pos] = feature[i]
            data[pos] = 1.0
        elif wrow[i] >= 0:
            for j in range(p):
                if W[wrow[i], j] != 0.0:
                    indices[pos] = j
                    data[pos] = W[wrow[i], j]
                    pos += 1
    return indptr, indices, data

# Jitted callees in other files (numba caches by this file's stamp only; tests/test_numba_cache_keys.py):
# numba cache key: greedy/_co2_sgd.py a81391cbb6f09af0
# numba cache key: greedy/_criteria.py 4dcab3fc6aaebb4f
# numba cache key: greedy/_radix.py a9670243c6c38a19
