"""Growing one regularized greedy forest (Johnson & Zhang, Algorithm 3 as Sec. 5.3 specifies it).

The forest is an additive model over the leaves of its trees (Sec. 5.1). Repeatedly (Algorithm 3):

* **Structure search (line 2, Sec. 5.3.1)**: every leaf of the most recent ``n_tree_search`` trees may be
  split, or a new tree (a stump) may be started. Each candidate is scored by the Newton step of eq. (7) on the
  regularised loss ``Q = sum_i l(h(x_i), y_i) / n + G(F)`` with all other weights fixed; the candidate that
  reduces Q the most is applied (eq. (6): the children start from the parent's weight plus their Newton
  offsets). The search stops when no candidate reduces Q (line 3) or the leaf budget is spent.
* **Weight correction (line 5, Sec. 5.3.2)**: every ``opt_interval`` new leaves (the grid 100, 200, ...) and
  at the end, all leaf weights are re-optimised by ``n_iter`` sweeps of coordinate descent with Newton steps of
  size ``learning_rate`` (eq. (8)).

Features are pre-binned (every distinct value its own bin up to ``max_bins``, else quantile bins), so a
leaf's candidate splits come from one gradient histogram (:mod:`treeopt.boosting._kernels`). Cached best splits
are kept per leaf; after a split only the two children are scanned (L2) or the split tree's leaves rescanned
(min-penalty regularisers, whose terms depend on the whole tree), and the new-tree candidate's histogram is
updated from the children's. The exponential loss's stabiliser ``mu`` (Sec. 6.2.3) is recomputed after every
weight correction and kept between corrections, so cached gains stay comparable.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np

from . import _kernels as K
from ._reg_kernels import MIN_PENALTY, MIN_PENALTY_SIB, split_terms_all
from ._regularizers import penalty_matrix, split_terms

log = logging.getLogger("treeopt.boosting")

LOSS_CODES = {"squared": K.SQUARE, "exponential": K.EXPONENTIAL, "logistic": K.LOGISTIC}
REG_CODES = {"min_penalty": MIN_PENALTY, "min_penalty_sib": MIN_PENALTY_SIB}


def make_bins(X, max_bins):
    """Binned X: (global bin ids (n, d) int32, thresholds (total bins,), bins per feature, bin offsets).

    Feature f owns the global bins ``offset[f] .. offset[f] + n_bins[f] - 1``. Its local bin ``k`` holds values
    below ``thresholds[offset[f] + k]`` and at or above ``thresholds[offset[f] + k - 1]``; a split "local bins
    <= k go left" is the rule ``x[f] >= thresholds[offset[f] + k]`` goes right. With at most ``max_bins``
    distinct values every value is its own bin and thresholds are midpoints between neighbours (exact splits).
    """
    n, d = X.shape
    Xb = np.zeros((n, d), dtype=np.int32)
    cuts, n_bins = [], np.ones(d, dtype=np.int64)
    for f in range(d):
        col = X[:, f]
        uniq, counts = np.unique(col, return_counts=True)
        if uniq.size <= 1:
            cuts.append(np.full(1, np.inf))
            continue
        lo, hi = uniq[:-1], uniq[1:]
        mids = lo + (hi - lo) / 2.0
        mids = np.where(mids > lo, mids, hi)  # rounding: keep the cut strictly above the lower value
        if uniq.size > max_bins:
            cum = np.cumsum(counts)[:-1]
            targets = n * np.arange(1, max_bins) / max_bins
            pick = np.unique(np.clip(np.searchsorted(cum, targets), 0, mids.size - 1))
            mids = mids[pick]
        n_bins[f] = mids.size + 1
        cuts.append(np.concatenate([mids, [np.inf]]))
    offsets = np.concatenate([[0], np.cumsum(n_bins)[:-1]]).astype(np.int64)
    for f in range(d):
        if n_bins[f] > 1:
            K.bin_column(np.ascontiguousarray(X[:, f]), np.ascontiguousarray(cuts[f][:-1]), Xb, f, offsets[f])
        else:
            Xb[:, f] = offsets[f]
    return Xb, np.concatenate(cuts), n_bins, offsets


def stage_indices(indices, n_stages, name):
    """``indices`` (default: every stage) as an int64 array, checked to be ascending 0-based indices below
    ``n_stages``; ``name`` says whose they are in the error."""
    if indices is None:
        return np.arange(n_stages, dtype=np.int64)
    out = np.asarray(indices, dtype=np.int64).reshape(-1)
    if out.size and (np.any(np.diff(out) <= 0) or out[0] < 0 or out[-1] >= n_stages):
        raise ValueError(f"{name} must be ascending 0-based indices below {n_stages}, got {list(indices)}")
    return out


@dataclass
class _Tree:
    """A tree while it grows. Node fields are lists indexed by local node id (ids grow down every path)."""

    left: list = field(default_factory=lambda: [-1])
    right: list = field(default_factory=lambda: [-1])
    parent: list = field(default_factory=lambda: [-1])
    depth: list = field(default_factory=lambda: [0])
    feature: list = field(default_factory=lambda: [-1])
    bin: list = field(default_factory=lambda: [-1])
    n_samples: list = field(default_factory=list)
    alpha: list = field(default_factory=lambda: [0.0])
    leaves: list = field(default_factory=lambda: [0])        # local leaf index -> node id
    start: list = field(default_factory=lambda: [0])
    end: list = field(default_factory=list)
    row: int = -1                                             # row of the forest's leaf_of buffer
    order: np.ndarray | None = None
    hist: dict = field(default_factory=dict)
    cache: dict = field(default_factory=dict)
    M: np.ndarray | None = None
    fresh: set = field(default_factory=set)                   # leaves added since the last weight correction

    def arrays(self):
        return (np.asarray(self.left, dtype=np.int64), np.asarray(self.right, dtype=np.int64),
                np.asarray(self.parent, dtype=np.int64), np.asarray(self.depth, dtype=np.int64))

    def leaf_alpha(self):
        return np.asarray(self.alpha, dtype=np.float64)[self.leaves]


@dataclass
class GrownForest:
    """A fitted forest in flat arrays (global node ids; trees laid out one after another)."""

    roots: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    parent: np.ndarray
    value: np.ndarray
    n_samples: np.ndarray
    stage_trees: np.ndarray
    stage_limit: np.ndarray
    stage_value: np.ndarray
    stage_budget: list
    stage_leaves: list
    history: list                                  # (n_leaves, regularised loss) after each correction

    @property
    def n_leaves(self):
        return int(np.sum(self.left < 0)) if self.roots.size else 0

    def predict(self, X):
        if self.roots.size == 0:
            return np.zeros(X.shape[0])
        return K.predict_forest(X, self.roots, self.feature, self.threshold, self.left, self.right, self.value)

    def predict_stages(self, X, wanted=None):
        """Output at the stored stages ``wanted`` (ascending 0-based indices; default all), shape
        ``(len(wanted), n)``."""
        wanted = stage_indices(wanted, len(self.stage_budget), "wanted stages")
        if self.roots.size == 0:
            return np.zeros((wanted.size, X.shape[0]))
        values = np.ascontiguousarray(self.stage_value[wanted].T)
        return K.predict_staged(X, self.roots, self.feature, self.threshold, self.left, self.right, self.parent,
                                self.stage_trees, self.stage_limit, wanted, values)


class ForestGrower:
    """Algorithm 3 on pre-binned data for one target vector (regression, or one binary problem)."""

    def __init__(self, *, loss, regularizer, l2, gamma, max_leaf_nodes, min_samples_leaf, opt_interval,
                 n_iter, learning_rate, n_tree_search, max_bins, correction_start="split"):
        self.loss = LOSS_CODES[loss]
        self.regularizer = regularizer
        self.lam = float(l2)
        self.gamma = float(gamma)
        self.max_leaf = int(max_leaf_nodes)
        self.min_leaf = int(min_samples_leaf)
        self.interval = int(opt_interval)
        self.n_iter = int(n_iter)
        self.eta = float(learning_rate)
        self.t = int(n_tree_search)
        self.max_bins = int(max_bins)
        self.correction_start = correction_start

    # ------------------------------------------------------------------ objective
    def penalty(self):
        """G(F) = sum over trees of lambda/2 alpha' M alpha (Sec. 5.4)."""
        total = 0.0
        for tree in self.trees:
            a = tree.leaf_alpha()
            total += float(a @ a) if self.regularizer == "l2" else float(a @ (self._M(tree) @ a))
        return 0.5 * self.lam * total

    def objective(self):
        """Q(F) = sum_i l(h(x_i), y_i) / n + G(F) (eq. (5))."""
        return K.loss_sum(self.loss, self.F, self.y) / self.n + self.penalty()

    def _M(self, tree):
        if tree.M is None:
            left, right, parent, depth = tree.arrays()
            tree.M = penalty_matrix(left, right, parent, depth, tree.leaves, self.regularizer, self.gamma)
        return tree.M

    # ------------------------------------------------------------------ search
    def _lam_eff(self):
        return self.lam * np.exp(self.mu)

    def _scan(self, hist, terms):
        grad, diag, cross, dG0 = terms
        c = self.n * self._lam_eff()
        return K.scan_split(hist[0], hist[1], hist[2], self.n_bins, self.bin_off, self.min_leaf, c * diag,
                            c * cross, c * grad, c * dG0)

    def _leaf_terms(self, tree):
        """split_terms for every leaf of ``tree`` (node id -> terms)."""
        if self.regularizer == "l2":
            return {v: (tree.alpha[v], 1.0, 0.0, 0.5 * tree.alpha[v] ** 2) for v in tree.leaves}
        left, right, parent, depth = tree.arrays()
        terms = split_terms_all(left, right, parent, depth, np.asarray(tree.leaves, dtype=np.int64),
                                tree.leaf_alpha(), REG_CODES[self.regularizer], self.gamma)
        return {v: tuple(float(t[k]) for t in terms) for k, v in enumerate(tree.leaves)}

    def _rescan(self, tree, nodes=None):
        terms = self._leaf_terms(tree)
        for v in (tree.leaves if nodes is None else nodes):
            tree.cache[v] = self._scan(tree.hist[v], terms[v])

    def _hist(self, tree, v):
        return K.build_hist(self.Xb, tree.order, tree.start[v], tree.end[v], self.g, self.h, self.n_total)

    def _refresh(self):
        """After the gradients changed everywhere: rebuild the active trees' histograms and best splits and
        the new-tree candidate's histogram."""
        self.mu = K.stabiliser(self.loss, self.F, self.y)
        K.grad_hess_at(self.loss, self.F, self.y, self.mu, self.all_idx, self.g, self.h)
        for tree in self.active:
            tree.hist = {v: self._hist(tree, v) for v in tree.leaves}
            self._rescan(tree)
        self.root_hist = K.build_hist(self.Xb, self.all_idx, 0, self.n, self.g, self.h, self.n_total)

    def _stump_terms(self):
        if self.regularizer == "l2":
            return (0.0, 1.0, 0.0, 0.0)
        one = np.array([-1])
        return split_terms(one, one, one, np.array([0]), [0], np.zeros(1), 0, self.regularizer, self.gamma)

    # ------------------------------------------------------------------ structure change
    def _new_tree(self):
        tree = _Tree()
        tree.order = self.all_idx.copy()
        tree.end = [self.n]
        tree.n_samples = [self.n]
        if len(self.trees) >= self.leaf_of.shape[0]:
            grown = np.zeros((2 * self.leaf_of.shape[0] + 1, self.n), dtype=np.int64)
            grown[:self.leaf_of.shape[0]] = self.leaf_of
            self.leaf_of = grown
        tree.row = len(self.trees)
        self.leaf_of[tree.row] = 0
        tree.hist = {0: self.root_hist}
        self.trees.append(tree)
        self.active.append(tree)
        if len(self.active) > self.t:
            old = self.active.pop(0)
            old.order, old.hist, old.cache, old.start, old.end = None, {}, {}, [], []
        return tree

    def _split(self, tree, v, f, b, d1, d2):
        start, end = tree.start[v], tree.end[v]
        mid = K.partition(self.Xb, tree.order, start, end, f, self.bin_off[f] + b, self.buf)
        u1, u2 = len(tree.left), len(tree.left) + 1
        for u, s, e, a in ((u1, start, mid, d1), (u2, mid, end, d2)):
            tree.left.append(-1)
            tree.right.append(-1)
            tree.parent.append(v)
            tree.depth.append(tree.depth[v] + 1)
            tree.feature.append(-1)
            tree.bin.append(-1)
            tree.n_samples.append(e - s)
            tree.alpha.append(tree.alpha[v] + a)
            tree.start.append(s)
            tree.end.append(e)
        tree.left[v], tree.right[v], tree.feature[v], tree.bin[v] = u1, u2, f, b
        k = tree.leaves.index(v)
        tree.leaves[k] = u1
        tree.leaves.append(u2)
        tree.fresh.discard(v)
        tree.fresh.update((u1, u2))
        tree.M = None
        K.apply_split(tree.order, start, mid, end, self.F, d1, d2, self.leaf_of[tree.row], len(tree.leaves) - 1)
        seg = tree.order[start:end]
        K.grad_hess_at(self.loss, self.F, self.y, self.mu, seg, self.g, self.h)
        old = tree.hist.pop(v)
        tree.cache.pop(v, None)
        tree.hist[u1], tree.hist[u2] = self._hist(tree, u1), self._hist(tree, u2)
        if self.t == 1:
            if len(tree.left) == 3:    # a new stump: its two leaves partition all points
                self.root_hist = tuple(x + y for x, y in zip(tree.hist[u1], tree.hist[u2]))
            else:
                K.update_total(self.root_hist, old, tree.hist[u1], tree.hist[u2])
            self._rescan(tree, None if self.regularizer != "l2" else (u1, u2))
        else:
            for other in self.active:
                if other is not tree:
                    other.hist = {w: self._hist(other, w) for w in other.leaves}
            for other in self.active:
                self._rescan(other, None if (other is not tree or self.regularizer != "l2") else (u1, u2))
            self.root_hist = K.build_hist(self.Xb, self.all_idx, 0, self.n, self.g, self.h, self.n_total)

    # ------------------------------------------------------------------ weights
    def correct(self):
        """Fully-corrective update of all leaf weights (eq. (8)).

        ``correction_start="split"`` starts coordinate descent from the current weights, the leaves added since
        the last correction at the values their split gave them (Algorithm 3, line 4; Sec. 5.3.2: they are
        "approximately optimum at the moment"). ``"zero"`` starts those new leaves at 0 instead, which is what
        the authors' C++ program (rgf-python) does: its optimiser keeps its own weight vector, in which a leaf
        that appeared since its last call is a new coordinate initialised to 0.
        """
        if not self.trees:
            return
        if self.correction_start == "zero":
            self._zero_fresh_leaves()
        n_leaves = np.array([len(t.leaves) for t in self.trees], dtype=np.int64)
        a_off = np.concatenate([[0], np.cumsum(n_leaves)[:-1]]).astype(np.int64)
        alpha = np.concatenate([t.leaf_alpha() for t in self.trees])
        use_M = self.regularizer != "l2"
        if use_M:
            Ms = [self._M(t).ravel() for t in self.trees]
            m_off = np.concatenate([[0], np.cumsum([m.size for m in Ms])[:-1]]).astype(np.int64)
            M = np.concatenate(Ms)
        else:
            m_off, M = np.zeros(len(self.trees), dtype=np.int64), np.zeros(1)
        K.corrective_pass(self.loss, self.F, self.y, (self.leaf_of[:len(self.trees)], n_leaves, alpha, a_off),
                          (M, m_off, use_M), (self.lam, self.eta, self.n_iter))
        for t, tree in enumerate(self.trees):
            for k, v in enumerate(tree.leaves):
                tree.alpha[v] = float(alpha[a_off[t] + k])
        self.history.append((self.n_leaves, self.objective()))

    def _zero_fresh_leaves(self):
        changed = False
        for tree in self.trees:
            for v in tree.fresh:
                changed |= tree.alpha[v] != 0.0
                tree.alpha[v] = 0.0
            tree.fresh = set()
        if changed:   # the model output, from the weights
            self.F[:] = 0.0
            for tree in self.trees:
                self.F += tree.leaf_alpha()[self.leaf_of[tree.row]]

    def _snapshot(self, budget):
        self.stages.append((len(self.trees), [len(t.left) for t in self.trees],
                            [np.asarray(t.alpha, dtype=np.float64) for t in self.trees], budget, self.n_leaves))
        if self.n_leaves >= self._next_log:
            self._log_progress()
            self._next_log = (self.n_leaves // self._log_every + 1) * self._log_every

    def _log_progress(self):
        """One line at every tenth of the leaf budget and at the end (INFO: a run folder's log.txt records it)."""
        if self._logged_leaves == self.n_leaves:
            return
        self._logged_leaves = self.n_leaves
        log.info("RGF: %d/%d leaves, %d trees, objective Q %.6g (eq. (5)), %.1f s", self.n_leaves, self.max_leaf,
                 len(self.trees), self.objective(), time.perf_counter() - self._start)

    # ------------------------------------------------------------------ main loop
    def fit(self, Xb, n_bins, bin_off, thresholds, y):
        """Grow on binned ``Xb`` (:func:`make_bins`) for targets ``y`` (centred, or +-1); a GrownForest."""
        self.Xb, self.n_bins, self.bin_off, self.y = Xb, n_bins, bin_off, np.ascontiguousarray(y, dtype=np.float64)
        self.thresholds = thresholds
        self.n_total = int(n_bins.sum())
        self.n = Xb.shape[0]
        self.all_idx = np.arange(self.n, dtype=np.int64)
        self.buf = np.empty(self.n, dtype=np.int64)
        self.F = np.zeros(self.n)
        self.g, self.h = np.empty(self.n), np.empty(self.n)
        self.trees, self.active, self.stages, self.history = [], [], [], []
        self.leaf_of = np.zeros((8, self.n), dtype=np.int64)
        self.n_leaves = 0
        stump = self._stump_terms()
        self._start = time.perf_counter()
        self._log_every = max(self.interval, self.max_leaf // 10)
        self._next_log = self._log_every
        self._logged_leaves = -1
        next_check = self.interval
        since = 0
        self._refresh()
        while self.n_leaves < self.max_leaf:
            best = self._scan(self.root_hist, stump)
            where = None
            for tree in self.active:
                for v in tree.leaves:
                    cand = tree.cache[v]
                    if cand[0] > best[0]:
                        best, where = cand, (tree, v)
            gain, f, b, d1, d2 = best
            if not gain > 0.0:          # Algorithm 3, line 3: no structure change reduces Q
                break
            if where is None:
                tree, v = self._new_tree(), 0
                self.n_leaves += 2
                since += 2
            else:
                (tree, v) = where
                self.n_leaves += 1
                since += 1
            self._split(tree, v, int(f), int(b), float(d1), float(d2))
            if self.n_leaves >= self.max_leaf:
                break
            if self.n_leaves >= next_check:
                self.correct()
                self._snapshot(next_check)
                since = 0
                next_check = (self.n_leaves // self.interval + 1) * self.interval
                self._refresh()
        if since > 0 or not self.stages:
            self.correct()
            self._snapshot(self.max_leaf)
        else:  # stopped right after a checkpoint: that model is the final one, for any larger budget
            n_trees, sizes, values, _, leaves = self.stages[-1]
            self.stages[-1] = (n_trees, sizes, values, self.max_leaf, leaves)
        self._log_progress()
        return self._export()

    def _export(self):
        sizes = np.array([len(t.left) for t in self.trees], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64) if sizes.size else sizes
        total = int(sizes.sum())

        def glob(values, off):
            arr = np.asarray(values, dtype=np.int64)
            return np.where(arr >= 0, arr + off, -1)

        left = np.concatenate([glob(t.left, o) for t, o in zip(self.trees, offsets)]) if total else \
            np.zeros(0, np.int64)
        right = np.concatenate([glob(t.right, o) for t, o in zip(self.trees, offsets)]) if total else left
        parent = np.concatenate([glob(t.parent, o) for t, o in zip(self.trees, offsets)]) if total else left
        feature = np.concatenate([np.asarray(t.feature, dtype=np.int64) for t in self.trees]) if total else left
        bins = np.concatenate([np.asarray(t.bin, dtype=np.int64) for t in self.trees]) if total else left
        n_samples = np.concatenate([np.asarray(t.n_samples, dtype=np.int64) for t in self.trees]) if total else left
        value = np.concatenate([np.asarray(t.alpha, dtype=np.float64) for t in self.trees]) if total else \
            np.zeros(0)
        value = np.where(left < 0, value, 0.0)
        threshold = np.where(left >= 0, self.thresholds[self.bin_off[np.maximum(feature, 0)] + np.maximum(bins, 0)],
                             0.0)
        S = len(self.stages)
        stage_trees = np.array([s[0] for s in self.stages], dtype=np.int64)
        stage_limit = np.zeros((S, sizes.size), dtype=np.int64)
        stage_value = np.zeros((S, total))
        for s, (n_trees, node_counts, values, _, _) in enumerate(self.stages):
            for t in range(n_trees):
                stage_limit[s, t] = offsets[t] + node_counts[t]
                stage_value[s, offsets[t]:offsets[t] + node_counts[t]] = values[t]
        return GrownForest(offsets, feature, threshold, left, right, parent, value, n_samples,
                           stage_trees, stage_limit, stage_value, [s[3] for s in self.stages],
                           [s[4] for s in self.stages], list(self.history))


def warm_up():
    """Call every kernel once on tiny inputs, so numba loads (or compiles) them now rather than inside the
    first ``fit`` (whose ``fit_seconds`` the RGF paper's Fig. 15 compares). Not called at import: on a fresh
    install it compiles for about 40 s, which every ``import treeopt.boosting`` (Snakemake's config check included)
    paid before any job ran; the workflow's runs warm up their own kernels (:mod:`treeopt.experiments.infra.warmup`)
    and a timing script calls this itself (``benchmarks/bench_rgf.py``)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    Xb, thresholds, n_bins, offsets = make_bins(X, 255)
    quiet, log.disabled = log.disabled, True  # no progress lines from these tiny fits
    try:
        for loss, reg in (("squared", "l2"), ("exponential", "l2"), ("logistic", "l2"), ("squared", "min_penalty"),
                          ("squared", "min_penalty_sib")):
            grower = ForestGrower(loss=loss, regularizer=reg, l2=0.1, gamma=2.0, max_leaf_nodes=6,
                                  min_samples_leaf=5, opt_interval=2, n_iter=1, learning_rate=0.5, n_tree_search=1,
                                  max_bins=255)
            forest = grower.fit(Xb, n_bins, offsets, thresholds, y)
            forest.predict(X)
            forest.predict_stages(X)
    finally:
        log.disabled = quiet
