"""Tree Alternating Optimization (Carreira-Perpinan & Tavallali, NeurIPS 2018).

Given an initial tree (structure and parameters), TAO lowers its training misclassification error (eq. (2))
by alternating over sets of nodes that are not descendants of each other (Theorem 3.1, separability): the
nodes of one depth level, visited bottom to top (reverse breadth-first), repeatedly. Over one node the loss
reduces (Theorem 3.2, eq. (3)) to

- a leaf: the K-class error of its points, solved exactly by majority vote;
- an internal node: the binary 0/1 loss (4) on its *care* points (exactly one child subtree classifies them
  correctly), labelled by the child that does. Axis-aligned nodes solve (4) exactly by enumerating
  (feature, threshold); oblique nodes approximate it by an l1-regularised linear SVM
  (``lambda ||w||_1``, Sec. 3 "Sparse oblique trees"; LIBLINEAR solver 5 with slack C = 1/lambda).

New node parameters are kept only when the care points' 0/1 loss does not increase, so the tree's training
error never increases. Only non-empty nodes are visited (internal nodes only when impure). TAO stops when
the training error falls by less than ``tol`` in an iteration (paper: 0.5%) or after ``max_iter`` (14)
iterations; dead branches (a child that receives no training points) and pure subtrees are then removed,
which leaves the training predictions unchanged ("indirect pruning"). The reported tree also has every subtree
whose leaves all carry one label collapsed into a leaf (``_prune``; no prediction changes).
"""

from __future__ import annotations

import copy
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..base import TreeClassifierMixin, encode_classes, validate_features, validate_training_data
from ..trees import Tree, fitted_trees
from . import _kernels as K
from ._liblinear import l1_svm_rows
from ._prune import collapse_same_label
from ._schedule import run_bottom_up

log = logging.getLogger("treeopt.tao")

NODE_TYPES = ("oblique", "axis")
INIT_NAMES = ("cart", "oc1", "co2", "nongreedy", "optimal", "random")


# ------------------------------------------------------------------------------------------- work tree
class _WorkTree:
    """Mutable flat arrays of the tree being optimised (dense oblique rows kept per node)."""

    def __init__(self, tree: Tree, label):
        self.left = tree.left.copy()
        self.right = tree.right.copy()
        self.feature = tree.feature.copy()
        self.bias = tree.bias.copy()
        self.label = np.asarray(label, dtype=np.int64).copy()
        self.depth = tree.depth.copy()
        self.parent = np.full(self.left.shape[0], -1, dtype=np.int64)
        internal = np.flatnonzero(self.left >= 0)
        self.parent[self.left[internal]] = internal
        self.parent[self.right[internal]] = internal
        self.top_down = np.argsort(self.depth, kind="stable")  # parents before children
        self.n_features = tree.n_features
        W = tree.W.tocsr()
        self.rows = {}
        for i in np.flatnonzero(self.feature == -1):
            sl = slice(W.indptr[i], W.indptr[i + 1])
            self.rows[int(i)] = (W.indices[sl].astype(np.int64), W.data[sl].astype(np.float64))
        self.rebuild()

    @property
    def max_depth(self):
        return int(self.depth.max())

    def rebuild(self):
        """Pack the oblique rows into ``indices``/``data`` with node ``i``'s row at ``lo[i]:hi[i]``."""
        n = self.left.shape[0]
        self.lo = np.zeros(n, dtype=np.int64)
        self.hi = np.zeros(n, dtype=np.int64)
        size = sum(idx.shape[0] for idx, _ in self.rows.values())
        self.indices = np.zeros(max(2 * size, 16), dtype=np.int64)
        self.data = np.zeros(self.indices.shape[0], dtype=np.float64)
        self.used = 0
        for i, (idx, val) in self.rows.items():
            self._store(i, idx, val)

    def _store(self, node, idx, val):
        """Append the row of ``node`` to the buffers and point ``lo/hi[node]`` at it. A full buffer is replaced
        by a larger copy, never written in place, so ``arrays()`` handed to a running solve stay valid: that
        solve only reads the rows of its own subtree, which no other solve changes meanwhile."""
        m = idx.shape[0]
        if self.used + m > self.indices.shape[0]:
            cap = 2 * (self.used + m)
            self.indices = np.concatenate([self.indices[:self.used], np.zeros(cap - self.used, dtype=np.int64)])
            self.data = np.concatenate([self.data[:self.used], np.zeros(cap - self.used)])
        self.indices[self.used:self.used + m] = idx
        self.data[self.used:self.used + m] = val
        self.lo[node], self.hi[node] = self.used, self.used + m
        self.used += m

    def arrays(self):
        return (self.left, self.right, self.feature, self.bias, self.lo, self.hi, self.indices, self.data)

    def set_axis(self, node, f, b):
        self.feature[node] = f
        self.bias[node] = b
        self.rows.pop(node, None)

    def set_oblique(self, node, w, b):
        idx = np.flatnonzero(w).astype(np.int64)
        val = w[idx].astype(np.float64)
        self._store(node, idx, val)  # before feature/bias: the row is in place when the node reads as oblique
        self.feature[node] = -1
        self.bias[node] = b
        self.rows[node] = (idx, val)

    def l1_norm(self, node):
        if self.feature[node] >= 0:
            return 1.0
        row = self.rows.get(int(node))
        return float(np.abs(row[1]).sum()) if row is not None else 0.0

    def penalty(self):
        """Sum of ||w_i||_1 over the internal nodes."""
        return float(sum(self.l1_norm(i) for i in np.flatnonzero(self.left >= 0)))

    def reach(self, X):
        return K.reach_by_depth(X, *self.arrays(), self.max_depth)

    def predict_labels(self, X):
        rows = np.arange(X.shape[0], dtype=np.int64)
        return K.predict_from(X, rows, np.zeros_like(rows), *self.arrays(), self.label)


def _initial_tree(init, X, y, classes, *, node_type, max_depth, random_state, criterion="entropy", init_params=None):
    """The initial tree as (Tree, leaf labels in 0..K-1, the estimator that made it or None); ``init_params`` are
    set on an estimator built or cloned here (not on a fitted one, nor on the "random" tree)."""
    k = classes.shape[0]
    init_params = dict(init_params or {})
    if init_params and (isinstance(init, Tree) or hasattr(init, "tree_") or (isinstance(init, str) and
                                                                               init in ("cart", "random"))
                        or init is None):
        raise ValueError(f"init_params {init_params} given, but init={init!r} is not an estimator built or cloned "
                         f"here (init_params applies to 'oc1', 'co2', 'nongreedy', 'optimal' or an unfitted "
                         f"estimator)")
    est = None
    if init is None or (isinstance(init, str) and init == "cart"):
        from sklearn.tree import DecisionTreeClassifier

        est = DecisionTreeClassifier(criterion=criterion, max_depth=max_depth, random_state=random_state).fit(X, y)
        tree, est_classes = Tree.from_sklearn(est), est.classes_
    elif isinstance(init, str) and init == "oc1":
        from ..greedy import OC1TreeClassifier

        est = OC1TreeClassifier(max_depth=max_depth, random_state=random_state).set_params(**init_params).fit(X, y)
        tree, est_classes = est.tree_, est.classes_
    elif isinstance(init, str) and init == "co2":  # not in the paper: TAO refining a CO2 tree
        from ..greedy import CO2TreeClassifier

        est = CO2TreeClassifier(max_depth=max_depth, standardize="tree", random_state=random_state)
        est = est.set_params(**init_params).fit(X, y)
        tree, est_classes = est.tree_, est.classes_
    elif isinstance(init, str) and init == "nongreedy":  # not in the paper: TAO refining a non-greedy tree
        from ..nongreedy import NonGreedyTreeClassifier

        est = NonGreedyTreeClassifier(max_depth=max_depth, random_state=random_state)
        est = est.set_params(**init_params).fit(X, y)
        tree, est_classes = est.tree_, est.classes_
    elif isinstance(init, str) and init == "optimal":  # not in the paper: TAO refining the optimal axis-aligned tree
        from ..optimal import OptimalTreeClassifier

        est = OptimalTreeClassifier(max_depth=max_depth, random_state=random_state)
        est = est.set_params(**init_params).fit(X, y)
        tree, est_classes = est.tree_, est.classes_
    elif isinstance(init, str) and init == "random":
        tree = _random_tree(X, y, k, node_type=node_type, depth=max_depth, random_state=random_state)
        est_classes = None
    elif isinstance(init, Tree):
        tree, est_classes = init, None
    elif hasattr(init, "tree_") or hasattr(init, "fit"):
        est = init
        if not hasattr(est, "tree_"):
            est = clone(init).set_params(**init_params).fit(X, y)
        trees = fitted_trees(est)
        if len(trees) != 1:
            raise ValueError(f"init must hold exactly one tree, {type(init).__name__} holds {len(trees)}")
        tree, est_classes = trees[0], getattr(est, "classes_", None)
    else:
        raise ValueError(f"init must be None, one of {INIT_NAMES}, a treeopt Tree or a (fitted) tree estimator; "
                         f"got {init!r}")
    if tree.n_features != X.shape[1]:
        raise ValueError(f"init tree has {tree.n_features} features, X has {X.shape[1]}")
    # leaf labels in our class encoding
    col = np.argmax(tree.value, axis=1) if tree.value_kind != "regression" else np.zeros(tree.n_nodes, int)
    if est_classes is not None:
        lookup = {c: i for i, c in enumerate(classes.tolist())}
        label = np.array([lookup.get(c, 0) for c in np.asarray(est_classes)[col].tolist()], dtype=np.int64)
    else:
        label = np.where(col < k, col, 0).astype(np.int64)
    return tree, label, est


def _random_tree(X, y, k, *, node_type, depth, random_state, through="node"):
    """A complete tree of the given depth with random splits (TAO footnote 1: TAO works about as well from random
    initial trees, "having random parameters at the nodes").

    Each split has a random direction (axis: a random feature; oblique: Gaussian weights) and passes through a
    random training point: ``through="node"`` draws it from the points that reach the node (top-down), so every
    node with at least two distinct points splits them and no branch starts dead; ``through="any"`` draws it from
    the whole training set, which sends all of a deep node's points to one side (most of the tree starts dead)."""
    rng = check_random_state(random_state)
    n, p = X.shape
    n_internal = 2 ** depth - 1
    n_nodes = 2 ** (depth + 1) - 1
    ids = np.arange(n_nodes)
    left = np.where(ids < n_internal, 2 * ids + 1, -1)
    right = np.where(ids < n_internal, 2 * ids + 2, -1)
    W = np.zeros((n_nodes, p))
    bias = np.zeros(n_nodes)
    feature = np.full(n_nodes, -2, dtype=np.int64)
    members = {0: np.arange(n)}
    for i in range(n_internal):
        rows = members.pop(i, np.zeros(0, dtype=np.int64))
        pool = rows if through == "node" and rows.shape[0] > 0 else np.arange(n)
        x0 = X[pool[rng.randint(pool.shape[0])]]
        if node_type == "axis":
            f = rng.randint(p)
            W[i, f], bias[i], feature[i] = 1.0, x0[f], f
        else:
            w = rng.standard_normal(p)
            # just below w . x0, so x0 goes right whatever the summation order of the routing
            W[i], bias[i], feature[i] = w, float(w @ x0) - 1e-9 * (float(np.abs(w) @ np.abs(x0)) + 1.0), -1
        go_right = X[rows] @ W[i] - bias[i] >= 0  # DESIGN.md: right iff w . x - b >= 0
        members[2 * i + 1], members[2 * i + 2] = rows[~go_right], rows[go_right]
    label = rng.randint(k, size=n_nodes).astype(np.int64)
    value = np.eye(k)[label]
    return Tree(left, right, W, bias, value, feature=feature, value_kind="probabilities")


# ------------------------------------------------------------------------------------------- estimator
class TAOTreeClassifier(TreeClassifierMixin, ClassifierMixin, BaseEstimator):
    """Decision tree optimised by Tree Alternating Optimization (TAO), axis-aligned or sparse oblique.

    Parameters
    ----------
    node_type : {"oblique", "axis"}, default="oblique"
        How internal nodes solve the reduced problem (4): "oblique" = l1-regularised linear SVM through
        LIBLINEAR (solver 5, with bias; lambda = 1/C), giving sparse oblique trees; "axis" = exact enumeration
        of (feature, threshold).
    C : float, default=1.0
        LIBLINEAR's slack parameter; the l1 penalty is lambda = 1/C (ignored for "axis").
    max_depth : int >= 1, default=8
        Depth of the initial tree when ``init`` is built here ("cart", "oc1", "random"); at least 1, as for
        every tree learner here (scikit-learn's CART refuses 0 too).
    init : None, "cart", "oc1", "co2", "nongreedy", "optimal", "random", a treeopt ``Tree`` or a tree estimator,
        default=None
        The initial tree: None/"cart" = axis-aligned CART of ``max_depth`` (scikit-learn's
        ``DecisionTreeClassifier`` with ``init_criterion``, converted with ``Tree.from_sklearn``); "oc1" = an
        oblique CART-style tree (OC1 coordinate descent with restarts, the paper's oblique initial trees);
        "co2" = a CO2 tree (``treeopt.greedy.CO2TreeClassifier``, default nu, z-scored per tree; not in the paper);
        "nongreedy" = a non-greedy tree of ``max_depth`` (``treeopt.nongreedy.NonGreedyTreeClassifier``, by
        default started from a CO2 tree; not in the paper);
        "optimal" = the optimal axis-aligned tree of ``max_depth`` (``treeopt.optimal.OptimalTreeClassifier``,
        STreeD; not in the paper);
        "random" = a complete tree of ``max_depth`` with random splits, each through a random point of the
        node's own training points (``_random_tree``); or any fitted estimator exposing one
        ``tree_`` (CO2, non-greedy, a previous TAO tree), or an unfitted one to fit here. TAO keeps its
        structure or prunes it.
    init_criterion : {"gini", "entropy"}, default="entropy"
        Impurity of the initial CART tree. "entropy" is the project's ``cart`` baseline (information gain), so
        the CART reported beside TAO is its initial tree. The paper's CART numbers look like Gini (our depth-10
        Letter CART: Gini 69.4%, paper 70.13%, entropy 79%), but TAO from the Gini tree was much worse on Letter
        (81.3% vs 87%, depth 10, C = 10, training part only) and no better on Connect-4.
    init_params : dict or None, default=None
        Parameters set on the initial estimator built here ("oc1", "co2", "nongreedy", "optimal") or cloned from an
        unfitted ``init``, e.g. ``{"time_limit": 300}`` for the optimal tree.
    warm_start_C : sequence of float or None, default=None
        The sparsity path (Sec. 4): C values larger than ``C`` run first, in decreasing order, each started
        from the previous tree; ``C`` is the last step. Each step is recorded in ``path_``.
    max_iter : int, default=14
        Maximum TAO iterations (passes over all depth levels) per C.
    tol : float, default=0.005
        Stop when an iteration lowers the training error by less than this fraction of itself (paper: "decreases
        but by less than 0.5%"; read as relative, which fits the paper's "in practice TAO stops after around 7
        iterations" — an absolute 0.5-point rule stops after 2-4 on our data).
    svm_tol : float, default=0.01
        LIBLINEAR's stopping tolerance ``-e`` (its default for solver 5).
    regularize_bias : bool, default=False
        Whether LIBLINEAR penalises the bias too (its own default, ``-B 1`` without ``-R``). The paper's node
        problem penalises only the weights (Sec. 3: "lambda sum_i ||w_i||_1", b_i is the threshold), which is
        LIBLINEAR's ``-R`` (default here). Only then is the SVM invariant to shifting a feature (LIBLINEAR could
        then be given every feature minus its most frequent value, mostly zeros: ``_liblinear_matrix``).
    accept : {"error", "objective"}, default="error"
        When an oblique node's new hyperplane is kept. "error": the care points' 0/1 loss (4) does not increase,
        so the training error never increases. "objective": also when the l1-penalised objective of Sec. 3,
        care loss + ||w_i||_1 / C, does not increase; along a sparsity path this lets weights shrink at the
        cost of a slowly rising training error, as in the paper's Fig. 1 (iterations then stop when the
        penalised objective, divided by N, falls by less than ``tol``). "always": the surrogate's solution is
        taken at every solved node (the plain reading of Sec. 3; the training error may then rise, and the stop
        rule is applied to the penalised objective, as with "objective"). On Letter (docs/tao.md, Letter chase) it
        matches "objective" from CART starts and gives much smaller trees at the same validation error from
        OC1 and random starts.
    loss : {"squared_hinge", "logistic"}, default="squared_hinge"
        The oblique node's surrogate of (4) (Sec. 3: "l1-regularized linear SVM or logistic regression"):
        LIBLINEAR solver 5 (l1-regularised squared-hinge SVM) or solver 6 (l1-regularised logistic regression),
        both with slack C = 1/lambda. Logistic was worse on Letter validation (docs/tao.md).
    refine_threshold : bool, default=False
        Not in the paper: after the surrogate's solve, replace its threshold b by the exact minimiser of the care
        points' 0/1 loss (4) along its w (``_kernels.best_threshold``; ties: closest to the surrogate's b).
        Lowers the training error at every C on Letter, but not the validation error (docs/tao.md).
    n_jobs : int or None, default=None
        Threads solving nodes in parallel (ctypes and numba release the GIL). A node is solved as soon as its
        whole subtree has been (``_schedule.run_bottom_up``): it then sees exactly the problem of the paper's
        level-by-level pass, so the tree is that of the reverse breadth-first order. A fit repeats exactly only
        with n_jobs=1: LIBLINEAR's coordinate descent draws its coordinate order from the C
        library's global rand(), which the threads share, so with several threads node solutions (and hence the
        tree) can differ slightly between runs with the same random_state.
    random_state : int, RandomState or None
        Seeds the initial tree.

    Attributes
    ----------
    tree_ : treeopt.trees.Tree
        The pruned TAO tree; leaves hold the class frequencies of their training points
        (``value_kind="probabilities"``, the majority label nudged up on ties so ``predict`` returns it).
        Subtrees whose leaves all carry one label are then collapsed into one leaf (``_prune``; no prediction
        changes); the path's next C starts from the tree before that collapse.
    classes_, n_features_in_
    init_tree_ : treeopt.trees.Tree
        The initial tree as given/built.
    history_ : list of float
        Training error (fraction) of the initial tree and after every iteration of the last C.
    n_iter_ : int
        Iterations run for the last C.
    liblinear_seconds_ : float
        Time spent inside LIBLINEAR's ``train`` during the fit (summed over calls and threads).
    path_ : list of dict
        Per C of the path: C, train_error, n_iter, liblinear_seconds, fit_seconds and ``Tree.stats()``.
    path_trees_ : list of Tree
        The tree at each C of the path (the last is ``tree_``).
    pass_stats_ : list of dict
        Per pass (C, iteration): node-solve seconds summed over threads (wall and thread CPU), the largest
        solve, LIBLINEAR seconds, node solves, the pass's wall time.
    stage_sizes_ : dict
        ``{"C": [...], "n_leaves": [...]}``, one entry per path step (for ``staged_predict_proba``).
    """

    _reuse_solves = True  # skip a node whose LIBLINEAR problem is unchanged since its last solve (tests: off)
    # With an unpenalised bias, hand LIBLINEAR X minus its column modes (exact, sparse; see _liblinear_matrix).
    # Off: it cut LIBLINEAR's time 6.5x on Connect-4 (one-hot, 12% non-zero after the shift) but cost 29% more CPU
    # on Fashion-MNIST (50% non-zero; uncentred columns slow coordinate descent), the speed target's data set.
    _shift_features = False
    _record_tasks = False  # log every node solve's thread CPU time in task_log_ (benchmarks only)
    # accept="always" stops on the penalised objective, as accept="objective" does: the surrogate's solutions
    # lower care loss + ||w||_1 / C, not the training error alone (False: the training-error rule, which stopped
    # most path steps after one iteration on Letter; studies/tao_letter_harness.py --always-error-stop)
    _always_objective_stop = True

    _parameter_constraints = {
        "node_type": [StrOptions(set(NODE_TYPES))],
        "C": [Interval(Real, 0, None, closed="neither")],
        # >= 1 as every tree learner of the project (CART's own limit): depth 0 would be a single leaf
        "max_depth": [Interval(Integral, 1, None, closed="left")],
        "init_criterion": [StrOptions({"gini", "entropy"})],
        "init_params": [dict, None],
        "init": [None, StrOptions(set(INIT_NAMES)), Tree, HasMethods("fit")],
        "warm_start_C": ["array-like", None],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "svm_tol": [Interval(Real, 0, None, closed="neither")],
        "regularize_bias": ["boolean"],
        "accept": [StrOptions({"error", "objective", "always"})],
        "loss": [StrOptions({"squared_hinge", "logistic"})],
        "refine_threshold": ["boolean"],
        "n_jobs": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    }

    def __init__(self, node_type="oblique", C=1.0, max_depth=8, init=None, init_criterion="entropy", init_params=None,
                 warm_start_C=None, max_iter=14,
                 tol=0.005, svm_tol=0.01, regularize_bias=False, accept="error", loss="squared_hinge",
                 refine_threshold=False, n_jobs=None, random_state=None):
        self.node_type = node_type
        self.C = C
        self.max_depth = max_depth
        self.init = init
        self.init_criterion = init_criterion
        self.init_params = init_params
        self.warm_start_C = warm_start_C
        self.max_iter = max_iter
        self.tol = tol
        self.svm_tol = svm_tol
        self.regularize_bias = regularize_bias
        self.accept = accept
        self.loss = loss
        self.refine_threshold = refine_threshold
        self.n_jobs = n_jobs
        self.random_state = random_state

    # ------------------------------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X, y = validate_training_data(self, X, y)
        self.classes_, y_enc = encode_classes(y)
        k = self.classes_.shape[0]
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        self._seed = seed
        init_start = time.perf_counter()
        tree, label, init_est = _initial_tree(self.init, X, y, self.classes_, node_type=self.node_type,
                                              max_depth=self.max_depth, criterion=self.init_criterion,
                                              # an int seed is passed as is, so the `cart` run with it is this tree
                                              random_state=self.random_state if isinstance(self.random_state, Integral)
                                              else seed, init_params=self.init_params)
        init_seconds = time.perf_counter() - init_start
        self.init_tree_ = tree
        x_dtype = tree.x_dtype
        Xr = np.ascontiguousarray(X.astype(x_dtype).astype(np.float64)) if x_dtype != "float64" else X
        XL = self._liblinear_matrix(Xr)

        Cs = [float(c) for c in (self.warm_start_C if self.warm_start_C is not None else [])
              if float(c) > float(self.C)]
        Cs = sorted(set(Cs), reverse=True) + [float(self.C)]
        self.path_, self.path_trees_, self._path_histories = [], [], []
        self.pass_stats_, self.task_log_, self.task_parents_ = [], [], {}
        self.liblinear_seconds_ = 0.0
        for step, C in enumerate(Cs):
            start = time.perf_counter()
            work = _WorkTree(tree, label)
            history, ll_seconds = self._optimise(work, Xr, XL, y_enc, k, C, from_init=step == 0)
            tree, label = self._finish(work, Xr, y_enc, k, x_dtype)
            # reported: same predictions, fewer nodes; the next C goes on from `tree`, so the path is unchanged
            shown = collapse_same_label(tree)
            self.liblinear_seconds_ += ll_seconds
            stats = shown.stats()
            stats.pop("active_leaves", None)
            self.path_.append({"C": C, "train_error": history[-1], "init_train_error": history[0],
                               "n_iter": len(history) - 1, "liblinear_seconds": ll_seconds,
                               "node_solves": self._n_solves, "node_solves_skipped": self._n_reused,
                               "fit_seconds": time.perf_counter() - start, **stats})
            self.path_trees_.append(shown)
            self._path_histories.append(history)
            log.info("TAO C=%g done: %d iterations, training error %.4f%%, %d internal nodes, %d non-zero weights, "
                     "%.2f s", C, len(history) - 1, 100 * history[-1], stats["n_internal"], stats["nonzero_weights"],
                     self.path_[-1]["fit_seconds"])
        self._init_seconds = init_seconds
        init_stats = getattr(init_est, "fit_stats_", None) or {}
        # an optimal initial tree: whether it was proven so within its time limit
        self._init_proven_optimal = init_stats.get("proven_optimal")
        self._end_path_at(len(self.path_) - 1)
        return self

    def _end_path_at(self, step):
        """Set the attributes a fit ending at path step ``step`` leaves (``tree_``, ``history_``, ``fit_stats_``, ...)
        from the path recorded so far, keeping only its first ``step + 1`` steps."""
        self.path_, self.path_trees_ = self.path_[:step + 1], self.path_trees_[:step + 1]
        self._path_histories = self._path_histories[:step + 1]
        Cs = {p["C"] for p in self.path_}
        self.pass_stats_ = [s for s in self.pass_stats_ if s["C"] in Cs]
        self.task_log_ = [t for t in self.task_log_ if t[0] in Cs]
        self.task_parents_ = {C: parents for C, parents in self.task_parents_.items() if C in Cs}
        self.history_ = self._path_histories[-1]
        self.n_iter_ = len(self.history_) - 1
        self.tree_ = self.path_trees_[-1]
        self.liblinear_seconds_ = sum(p["liblinear_seconds"] for p in self.path_)
        self.stage_sizes_ = {"C": [p["C"] for p in self.path_], "n_leaves": [p["n_leaves"] for p in self.path_]}
        self.fit_stats_ = {"liblinear_seconds": self.liblinear_seconds_, "n_iter": self.n_iter_,
                           "node_solves": sum(p["node_solves"] for p in self.path_),
                           "node_solves_skipped": sum(p["node_solves_skipped"] for p in self.path_),
                           "init_train_error": 100.0 * self.path_[0]["init_train_error"],
                           "init_seconds": self._init_seconds}
        if self._init_proven_optimal is not None:
            self.fit_stats_["init_proven_optimal"] = self._init_proven_optimal

    def path_step(self, step):
        """The estimator a fit with ``C = path_[step]["C"]`` and the same ``warm_start_C`` values above it would
        give (a copy; this one is unchanged): the warm-started path (Sec. 4) runs the same steps in the same order
        up to that C, each from the previous step's tree with LIBLINEAR's ``rand()`` seeded per call, so with
        ``n_jobs=1`` it is the same tree, bit for bit (``tests/test_tao_path.py``). Only ``fit_seconds`` and the
        LIBLINEAR times inside ``path_`` are those of this fit. A model selection over C reads every C of a path off
        one fit this way (config ``path: C``, :mod:`treeopt.experiments.plan.build`)."""
        check_is_fitted(self)
        if not 0 <= step < len(self.path_):
            raise IndexError(f"path step {step} out of range: the path has {len(self.path_)} steps")
        est = copy.copy(self)
        est.C = self.path_[step]["C"]
        est._end_path_at(step)
        return est

    def _liblinear_matrix(self, X):
        """The matrix whose rows the oblique nodes hand LIBLINEAR (its non-zeros, as LIBLINEAR's sparse rows, written
        straight from the node's rows: ``_liblinear.l1_svm_rows``); sets ``self._shift``.

        With an unpenalised bias the node's SVM is invariant to shifting a feature by a constant
        (w . (x - m) + b' = w . x + (b' - w . m): same loss, same ||w||_1), so LIBLINEAR gets every column minus
        its most frequent value: z-scored pixels / one-hot codes become sparse again, and LIBLINEAR's cost is
        proportional to the non-zeros. ``_solve_node`` maps the bias back (b = b' + w . m).
        """
        self._shift = None
        if self.node_type != "oblique":
            return None
        if self.regularize_bias or not self._shift_features:
            return np.ascontiguousarray(X, dtype=np.float64)
        self._shift = K.column_modes(X)
        return np.ascontiguousarray(X - self._shift)

    def _optimise(self, work, X, XL, y, k, C, from_init=False):
        """TAO iterations (bottom-to-top passes, each node after its subtree) on ``work``; returns (train errors,
        LIBLINEAR s).

        ``from_init``: ``work`` is the initial tree, not yet refined by TAO. Its hyperplanes' scale is arbitrary
        (x_f >= b is s x_f >= s b for any s > 0; an axis node counts ||w||_1 = 1), so the penalised objective of
        the initial tree is not comparable with that of the SVM-solved nodes, and with accept="objective" the
        stop rule is not applied after the first iteration (it could only compare an arbitrary number)."""
        n = X.shape[0]
        err = float(np.mean(work.predict_labels(X) != y))
        history = [err]
        objective = err + work.penalty() / (C * n)
        ll_seconds = 0.0
        self._care_cache = {}  # node -> (care rows, targets) at its last LIBLINEAR solve, for this C only
        self._n_solves = self._n_reused = 0
        if not hasattr(self, "pass_stats_"):  # fit() resets them once for the whole path
            self.pass_stats_, self.task_log_ = [], []
        if self._record_tasks:
            self.task_parents_ = getattr(self, "task_parents_", {}) | {C: work.parent.copy()}
        n_threads = self.n_jobs or 1
        pool = ThreadPoolExecutor(max_workers=n_threads) if n_threads > 1 else None
        try:
            for _ in range(self.max_iter):
                iter_start = time.perf_counter()
                reach = work.reach(X)  # a node's ancestors are not changed before the node is visited
                tasks = {}
                for d in range(work.max_depth, -1, -1):
                    col = reach[:, d]
                    order = np.argsort(col, kind="stable")
                    nodes, starts = np.unique(col[order], return_index=True)
                    bounds = np.append(starts, n)
                    for j, node in enumerate(nodes):
                        if node < 0:
                            continue
                        rows = order[bounds[j]:bounds[j + 1]].astype(np.int64)
                        if work.left[node] < 0:
                            tasks[int(node)] = (int(node), rows, True)
                        elif np.any(y[rows] != y[rows[0]]):  # non-empty impure internal node
                            tasks[int(node)] = (int(node), rows, False)
                # largest path first: a node's priority is the number of points over it and its ancestors, so
                # the branch holding the largest node problems (the ones all later solves wait on) goes first
                cost = np.bincount(reach[reach >= 0], minlength=work.left.shape[0])
                priority = cost.copy()
                for node in work.top_down[1:]:
                    priority[node] += priority[work.parent[node]]
                stats = {"task_seconds": 0.0, "task_cpu_seconds": 0.0, "max_task_seconds": 0.0, "liblinear_seconds": 0.0,
                         "n_solves": 0}

                def run(node, arrays):
                    t0, c0 = time.perf_counter(), time.thread_time()
                    res = self._solve_node(tasks[node], X, XL, y, k, C, work, arrays)
                    return res, time.perf_counter() - t0, time.thread_time() - c0

                def done(node, timed):
                    res, seconds, cpu = timed
                    if self._record_tasks:  # for benchmarks/bench_tao.py's schedule estimate
                        # an oblique node's solve left its care rows in _care_cache
                        solved = self.node_type == "oblique" and res[0] in ("oblique", "keep")
                        self.task_log_.append((C, len(history), node, int(work.parent[node]), int(work.depth[node]),
                                               tasks[node][1].shape[0], int(priority[node]), tasks[node][2], cpu,
                                               self._care_cache[node][0].shape[0] if solved else 0, res[-1]))
                    stats["task_seconds"] += seconds
                    stats["task_cpu_seconds"] += cpu
                    stats["max_task_seconds"] = max(stats["max_task_seconds"], seconds)
                    stats["liblinear_seconds"] += res[-1]
                    stats["n_solves"] += res[0] in ("oblique", "keep", "axis")
                    self._n_solves += res[0] in ("oblique", "keep", "axis")
                    self._n_reused += res[0] == "reused"
                    self._apply(work, res)

                pass_start = time.perf_counter()
                run_bottom_up(list(tasks), work.parent, priority, run, done, pool=pool, n_threads=n_threads,
                              inline=lambda node: tasks[node][2],  # leaves: a majority vote, no thread needed
                              prepare=lambda node: work.arrays())
                ll_seconds += stats["liblinear_seconds"]
                new_err = float(np.mean(work.predict_labels(X) != y))
                history.append(new_err)
                log.info("TAO C=%g iteration %d: training error %.4f%% (before %.4f%%), %d node problems, %.2f s", C,
                         len(history) - 1, 100 * new_err, 100 * history[-2], len(tasks),
                         time.perf_counter() - iter_start)
                self.pass_stats_.append({"C": C, "iteration": len(history) - 1, "n_tasks": len(tasks), **stats,
                                         "pass_seconds": time.perf_counter() - pass_start,
                                         "iteration_seconds": time.perf_counter() - iter_start})
                # stop when the training error falls by less than tol (relative, paper: 0.5%)
                if self.node_type == "oblique" and (self.accept == "objective" or
                                                    (self.accept == "always" and self._always_objective_stop)):
                    new_obj = new_err + work.penalty() / (C * n)
                    if objective - new_obj < self.tol * objective and not (from_init and len(history) == 2):
                        break
                    objective = new_obj
                elif history[-2] - new_err < self.tol * history[-2] or new_err == 0.0:
                    break
        finally:
            if pool is not None:
                pool.shutdown()
        return history, ll_seconds

    def _solve_node(self, task, X, XL, y, k, C, work, arrays):
        node, rows, is_leaf = task
        if is_leaf:  # exact: majority vote over the leaf's points
            best, _ = K.majority(y, rows, k, work.label[node])
            return ("leaf", node, best, 0.0)
        care, target, cur = K.care_points(X, rows, y, node, arrays, work.label)
        if not care.any():
            return ("no_care", node, 0.0)
        cidx = rows[care]
        target = target[care]
        cur_err = int(np.count_nonzero(cur[care] != target))
        if self.node_type == "axis":
            new_err, f, b = K.best_axis_split(X, cidx, target)
            if new_err < cur_err:  # ties keep the current split (loss unchanged either way)
                return ("axis", node, int(f), float(b), 0.0)
            return ("keep", node, 0.0)
        # LIBLINEAR is deterministic for a fixed problem and seed: a node whose care points and targets are the
        # same as at its previous solve would get the same hyperplane and the same accept decision again (its
        # own parameters only change through that decision), so it is skipped (same tree, less time).
        prev = self._care_cache.get(node)
        if self._reuse_solves and prev is not None and np.array_equal(prev[0], cidx) and np.array_equal(prev[1], target):
            return ("reused", node, 0.0)
        self._care_cache[node] = (cidx, target)
        w, b, seconds = l1_svm_rows(XL, cidx, target, C, eps=self.svm_tol, regularize_bias=self.regularize_bias,
                                    seed=self._seed + node, loss=self.loss)
        idx = np.flatnonzero(w)
        if self._shift is not None:  # hyperplane of the shifted features -> original features
            b = b + float(w[idx] @ self._shift[idx])
        if self.refine_threshold and idx.shape[0] > 0:  # the exact best b of (4) along the surrogate's w
            _, b = K.best_threshold(K.oblique_scores(X, cidx, idx.astype(np.int64), w[idx]), target, float(b))
        # routed exactly as the tree will route them (same kernel arithmetic), so the accept test is exact
        new_dec = K.oblique_side(X, cidx, idx.astype(np.int64), w[idx], float(b))
        new_err = int(np.count_nonzero(new_dec != target))
        # the care points' 0/1 loss (4) does not increase, or the surrogate's solution is taken as it is
        if new_err <= cur_err or self.accept == "always":
            return ("oblique", node, w, float(b), seconds)
        if self.accept == "objective" and new_err + np.abs(w).sum() / C <= cur_err + work.l1_norm(node) / C:
            return ("oblique", node, w, float(b), seconds)  # care loss + lambda ||w||_1 does not increase
        return ("keep", node, seconds)

    @staticmethod
    def _apply(work, res):
        kind, node = res[0], res[1]
        if kind == "leaf":
            work.label[node] = res[2]
            return False
        if kind == "axis":
            work.set_axis(node, res[2], res[3])
            return True
        if kind == "oblique":
            work.set_oblique(node, res[2], res[3])
            return True
        return False

    def _finish(self, work, X, y, k, x_dtype):
        """Final majority vote at the leaves, then remove dead branches and pure subtrees (Sec. 3); training
        predictions are unchanged by the removal. Returns (Tree, leaf labels)."""
        reach = work.reach(X)
        n_nodes = work.left.shape[0]
        counts = np.zeros((n_nodes, k), dtype=np.int64)
        for d in range(reach.shape[1]):
            col = reach[:, d]
            ok = col >= 0
            np.add.at(counts, (col[ok], y[ok]), 1)
        total = counts.sum(axis=1)
        for leaf in np.flatnonzero(work.left < 0):
            if total[leaf] > 0:
                work.label[leaf] = K.majority(y, np.flatnonzero(reach[:, work.depth[leaf]] == leaf), k,
                                              work.label[leaf])[0]
        new = {"left": [], "right": [], "feature": [], "bias": [], "label": [], "counts": [], "w": []}

        def add(node, as_leaf_label=None):
            i = len(new["left"])
            for key in new:
                new[key].append(None)
            new["counts"][i] = counts[node]
            if as_leaf_label is not None or work.left[node] < 0:
                new["left"][i] = new["right"][i] = -1
                new["feature"][i], new["bias"][i] = -2, 0.0
                new["label"][i] = work.label[node] if as_leaf_label is None else as_leaf_label
                return i
            new["feature"][i], new["bias"][i], new["label"][i] = work.feature[node], work.bias[node], 0
            new["w"][i] = work.rows.get(int(node))
            return i

        def build(node):
            # skip dead branches: a child that no training point reaches is replaced by its sibling's subtree
            while work.left[node] >= 0 and total[node] > 0:
                lc, rc = work.left[node], work.right[node]
                if total[lc] == 0:
                    node = rc
                elif total[rc] == 0:
                    node = lc
                else:
                    break
            if work.left[node] >= 0 and total[node] > 0 and np.count_nonzero(counts[node]) == 1:
                return add(node, as_leaf_label=int(np.argmax(counts[node])))  # pure subtree -> leaf
            i = add(node)
            if work.left[node] >= 0:
                li = build(work.left[node])
                ri = build(work.right[node])
                new["left"][i], new["right"][i] = li, ri
            return i

        import sys
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 10000))
        try:
            build(0)
        finally:
            sys.setrecursionlimit(limit)
        m = len(new["left"])
        p = work.n_features
        feature = np.array(new["feature"], dtype=np.int64)
        ri, ci, vals = [], [], []
        for i in range(m):
            if feature[i] >= 0:
                ri.append(np.array([i])), ci.append(np.array([feature[i]])), vals.append(np.array([1.0]))
            elif feature[i] == -1 and new["w"][i] is not None:
                idx, val = new["w"][i]
                ri.append(np.full(idx.shape[0], i)), ci.append(idx), vals.append(val)
        W = sp.csr_matrix((np.concatenate(vals) if vals else np.zeros(0),
                           (np.concatenate(ri) if ri else np.zeros(0, int), np.concatenate(ci) if ci else np.zeros(0, int))),
                          shape=(m, p))
        label = np.array(new["label"], dtype=np.int64)
        cnt = np.array(new["counts"], dtype=np.float64)
        value = np.zeros((m, k))
        tot = cnt.sum(axis=1)
        has = tot > 0
        value[has] = cnt[has] / tot[has, None]
        value[np.arange(m), label] += 1e-9  # ties and empty leaves predict the TAO label
        value /= value.sum(axis=1, keepdims=True)
        tree = Tree(np.array(new["left"]), np.array(new["right"]), W, np.array(new["bias"], dtype=np.float64),
                    value, feature=feature, n_samples=tot.astype(np.int64), value_kind="probabilities",
                    x_dtype=x_dtype)
        return tree, label

    # -------------------------------------------------------------------------------------- predict
    def staged_predict_proba(self, X):
        """``predict_proba`` of the tree at each C of the path (``stage_sizes_["C"]``), largest C first."""
        check_is_fitted(self)
        X = validate_features(self, X, reset=False)
        for tree in self.path_trees_:
            yield tree.predict_proba(X)


def tao_path(X, y, Cs, *, eval_sets=None, **params):
    """The sparsity path (Sec. 4): TAO for decreasing ``Cs``, each started from the previous tree.

    Returns a list of dicts, one per C: the estimator's ``path_`` entry plus ``{name}_error`` (percent) for
    each ``eval_sets`` item ``name: (X, y)``, and the fitted estimator of the last C.
    """
    Cs = sorted((float(c) for c in Cs), reverse=True)
    est = TAOTreeClassifier(C=Cs[-1], warm_start_C=Cs[:-1], **params).fit(X, y)
    rows = []
    for entry, tree in zip(est.path_, est.path_trees_):
        row = dict(entry)
        row["train_error"] = 100.0 * row["train_error"]
        for name, (Xe, ye) in (eval_sets or {}).items():
            pred = est.classes_[tree.predict_proba(Xe).argmax(axis=1)]
            row[f"{name}_error"] = 100.0 * float(np.mean(pred != np.asarray(ye)))
        rows.append(row)
    return rows, est
