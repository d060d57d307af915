"""Non-greedy paper Fig. 4 as a workflow method: SGD time with exact and with fast loss-augmented inference.

The paper reports "total time to execute 1000 epochs of SGD on the Connect4 dataset using loss-augmented
inference and its fast variant" against depth. Running 1000 epochs per depth is not needed to know that
time: an epoch of SGD (Alg. 1) visits every training point once and its cost does not depend on the epoch,
so :class:`SGDTimingClassifier` measures ``timed_epochs`` epochs of each variant and scales the mean SGD
seconds per epoch to ``epochs_per_report`` (1000) epochs. Exact inference (eq. (10)-(12)) costs
O(2^d p) per point, so at large depths even one epoch is long; ``max_samples`` then times the epochs on a
random subset of the training points and scales by ``n / max_samples`` (the cost per point is the same;
both variants are timed on the same subset, so the speedup is unaffected by the scaling).

Only SGD time is counted (``NonGreedyTreeClassifier.sgd_seconds_``: the epochs' kernel, without the
per-epoch bookkeeping and without the initial tree; wall-clock), after a one-epoch warm-up of both variants on a few
points so that numba's compilation is not timed. Both variants start from the same initial tree (Sec. 7:
``"axis"`` an information-gain tree, ``"co2"`` a CO2 tree), fitted once. Plain SGD (Alg. 1) by default, as
the figure; ``stable=True`` times Stable SGD instead.

The fitted model (``tree_``, ``predict``) is the fast variant after the timed epochs: it is there so the run
is an ordinary classifier run, its accuracy means little. The timings go to ``fit_stats_`` (the run's
``metrics.json`` ``tree`` section): ``exact_seconds``, ``fast_seconds`` (per ``epochs_per_report`` epochs),
``speedup``, the measured seconds per epoch, wall and CPU seconds of each timed fit and the load average
before and after. On a shared machine wall time depends on the load, so ``exact_cpu_seconds`` and
``fast_cpu_seconds`` estimate the same 1000 epochs in CPU seconds: the wall estimate times the share of a
CPU the process got during the timed fit (its CPU seconds / wall seconds; the kernels run on one thread).
(Subtracting the CPU time of a 0-epoch fit instead was tried: at depth 18 the fit's own overhead, building
the 2^18-leaf tree, outweighs the two fast epochs and the difference drowns in noise.)
"""

import os
import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from ..base import TreeClassifierMixin, encode_classes, validate_training_data

VARIANTS = ("exact", "fast")
WARMUP_SAMPLES = 200


def cpu_share(cpu_seconds, wall_seconds):
    """Share of one CPU a single-threaded fit got: CPU / wall seconds, at most 1."""
    return min(1.0, cpu_seconds / wall_seconds) if wall_seconds > 0 else 1.0


class SGDTimingClassifier(TreeClassifierMixin, ClassifierMixin, BaseEstimator):
    """Times ``timed_epochs`` epochs of non-greedy SGD with exact and fast inference (non-greedy paper Fig. 4).

    Parameters
    ----------
    max_depth : int, default=6
        Depth of the complete tree (``2^d - 1`` split rows).
    nu, learning_rate, batch_size, stable : passed to :class:`treeopt.nongreedy.NonGreedyTreeClassifier`.
    timed_epochs : int, default=2
        Epochs measured per variant.
    max_samples : int or None, default=None
        Time the epochs on this many randomly drawn training points and scale to all of them (None: all).
    epochs_per_report : int, default=1000
        The reported time is for this many epochs (the paper's 1000).
    init : {"axis", "co2"}, default="axis"
        Initial tree, fitted once (on the timed points) and shared by both variants.
    random_state : int, RandomState or None
    """

    _parameter_constraints = {
        "max_depth": [Interval(Integral, 1, 24, closed="both")],
        "nu": [Interval(Real, 0, None, closed="neither")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "stable": ["boolean"],
        "timed_epochs": [Interval(Integral, 1, None, closed="left")],
        "max_samples": [Interval(Integral, 1, None, closed="left"), None],
        "epochs_per_report": [Interval(Integral, 1, None, closed="left")],
        "init": [StrOptions({"axis", "co2"})],
        "random_state": ["random_state"],
    }

    def __init__(self, max_depth=6, nu=10.0, learning_rate=0.01, batch_size=100, stable=False, timed_epochs=2,
                 max_samples=None, epochs_per_report=1000, init="axis", random_state=None):
        self.max_depth = max_depth
        self.nu = nu
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.stable = stable
        self.timed_epochs = timed_epochs
        self.max_samples = max_samples
        self.epochs_per_report = epochs_per_report
        self.init = init
        self.random_state = random_state

    def _model(self, inference, epochs, init, seed):
        from .estimator import NonGreedyTreeClassifier

        # n_iter_no_change > epochs: the early stop never cuts a timed fit short
        return NonGreedyTreeClassifier(max_depth=self.max_depth, nu=self.nu, learning_rate=self.learning_rate,
                                       inference=inference, stable=self.stable, max_epochs=epochs,
                                       batch_size=self.batch_size, n_iter_no_change=epochs + 1, init=init,
                                       random_state=seed)

    def _initial_tree(self, X, y, seed):
        from ..greedy import AxisAlignedTreeClassifier, CO2TreeClassifier

        if self.init == "axis":
            est = AxisAlignedTreeClassifier(max_depth=self.max_depth, random_state=seed)
        else:
            est = CO2TreeClassifier(nu=self.nu, learning_rate=self.learning_rate, max_features=None,
                                    max_depth=self.max_depth, random_state=seed)
        return est.fit(X, y).tree_

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        X, y = validate_training_data(self, X, y)
        self.classes_, y_enc = encode_classes(y)
        rs = check_random_state(self.random_state)
        seed = int(rs.randint(np.iinfo(np.int32).max))
        n = X.shape[0]
        if self.max_samples is not None and self.max_samples < n:
            rows = np.sort(rs.choice(n, self.max_samples, replace=False))
            X_t, y_t = X[rows], y_enc[rows]
        else:
            X_t, y_t = X, y_enc
        n_t = X_t.shape[0]
        init = self._initial_tree(X_t, y_t, seed)
        warm = min(WARMUP_SAMPLES, n_t)
        for inference in VARIANTS:  # compile the numba kernels outside the timed fits
            self._model(inference, 1, init, seed).fit(X_t[:warm], y_t[:warm])
        stats = {"load_before": float(os.getloadavg()[0])}
        models = {}
        for inference in VARIANTS:
            wall, cpu = time.perf_counter(), time.process_time()
            model = self._model(inference, self.timed_epochs, init, seed).fit(X_t, y_t)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            per_epoch = model.sgd_seconds_ / model.n_epochs_
            stats[f"{inference}_epoch_seconds"] = per_epoch
            stats[f"{inference}_seconds"] = self.epochs_per_report * per_epoch * n / n_t
            stats[f"{inference}_cpu_seconds"] = stats[f"{inference}_seconds"] * cpu_share(cpu, wall)
            stats[f"{inference}_fit_wall_seconds"] = wall
            stats[f"{inference}_fit_cpu_seconds"] = cpu
            models[inference] = model
        stats["load_after"] = float(os.getloadavg()[0])
        stats["speedup"] = stats["exact_seconds"] / stats["fast_seconds"]
        stats.update(timed_epochs=int(models["fast"].n_epochs_), timed_samples=int(n_t), n_samples=int(n),
                     epochs_per_report=int(self.epochs_per_report))
        self.fit_stats_ = stats
        self.model_ = models["fast"]  # the exact variant's tree is dropped (2^d rows of p weights)
        self.tree_ = self.model_.tree_
        self.classes_ = self.classes_[self.model_.classes_]  # a subset may lack a class: the tree's columns
        return self
