"""Numba kernels compiled (or loaded from numba's on-disk cache) before a run's timed fit, so ``fit_seconds``
holds no compilation.

treeopt's kernels are ``@njit(cache=True)``: the first process after an install or a code change compiles them
(about 2.5 minutes for all families on this machine; one CO2 tree candidate of the paper profile recorded
182.6 s of ``fit_seconds`` against <= 1 s for its siblings), later processes load them from numba's cache in
seconds. Both used to land inside the timed fit, and from there in the runtime tables and the cost model.

:func:`warm_up` fits a copy of the run's estimator, with its own parameters but at most
:data:`SHRUNK` trees and depth, on at most :data:`MAX_ROWS` rows of the run's own training data (every class
kept), then predicts with it: the same kernels, with the same argument types, are compiled before the clock of
the real fit starts.
It runs under a file lock per method (:func:`kernel_lock`): when the workflow starts several jobs at once, one
compiles and the others wait, then load what it wrote to numba's cache, instead of all compiling at once.
The runner records the warm-up's seconds (lock wait included) as ``compile_seconds`` in ``metrics.json``, and,
as a check, the seconds numba still spent compiling or loading kernels inside the timed fit as
``fit_compile_seconds`` (:func:`numba_compile_clock`; 0 when the warm-up covered everything).
"""

import contextlib
import fcntl
import logging
import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

MAX_ROWS = 200  # enough for every learner to split a few nodes; the fit itself then takes milliseconds
# size parameters capped for the warm-up: the kernels' argument types do not depend on them, their cost does
# (a depth-18 non-greedy tree holds 2^18 hyperplanes; RGF grows to its leaf budget even on 200 rows, by adding
# trees: 10,000 leaves took ~4 CPU-s, most of a 2,000-row run's fit)
SHRUNK = {"n_estimators": 2, "max_depth": 4, "max_leaf_nodes": 16}
# estimator packages of treeopt without numba kernels (STreeD is a compiled extension; the RGF paper's baselines are
# scikit-learn's boosting inside a wrapper): nothing to warm up
NO_KERNELS = ("treeopt.optimal", "treeopt.boosting.baselines")

_log = logging.getLogger("treeopt.numba")


def has_kernels(estimator):
    """True for treeopt's learners, which call numba kernels (scikit-learn's and STreeD's do not)."""
    module = type(estimator).__module__
    return module.startswith("treeopt.") and not module.startswith(NO_KERNELS)


def lock_dir():
    """Where the lock files live: beside numba's cache when ``NUMBA_CACHE_DIR`` places it, else the system's
    temporary folder (numba's default cache is ``__pycache__`` beside each source file)."""
    return Path(os.environ.get("NUMBA_CACHE_DIR") or tempfile.gettempdir())


def _lock_path(name):
    folder = lock_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"treeopt-kernels-{name}-uid{os.getuid()}.lock"


@contextlib.contextmanager
def kernel_lock(name, while_waiting=None):
    """Hold an exclusive ``flock`` on ``treeopt-kernels-{name}.lock`` (:func:`lock_dir`); yields the seconds
    waited for it. The lock is the kernel file's own: the operating system releases it when its holder dies.

    When another process holds it, ``while_waiting(is_free)`` runs first (if given): work to do instead of
    idling, which calls ``is_free()`` to learn whether the lock can be had now (it then holds it) and returns
    when it does or has nothing left to do; then the lock is waited for as usual."""
    start = time.perf_counter()
    with open(_lock_path(name), "a") as handle:
        if not _try_flock(handle):
            if while_waiting is not None:
                while_waiting(lambda: _try_flock(handle))
            fcntl.flock(handle, fcntl.LOCK_EX)  # at once when is_free() got it: flock on a held lock is a no-op
        try:
            yield time.perf_counter() - start
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _try_flock(handle):
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextlib.contextmanager
def kernel_lock_if_free(name):
    """Yield True holding ``name``'s kernel lock if no other process holds it now, else yield False at once."""
    with open(_lock_path(name), "a") as handle:
        got = _try_flock(handle)
        try:
            yield got
        finally:
            if got:
                fcntl.flock(handle, fcntl.LOCK_UN)


class CompileClock:
    """Seconds numba spends compiling kernels (``compile``) and holding its compiler lock (``lock``: compiling,
    or loading a kernel from the on-disk cache) while the clock runs; listens to numba's own events."""

    def __init__(self):
        self.compile = 0.0
        self.lock = 0.0

    def _add(self, field):
        def add(seconds):
            setattr(self, field, getattr(self, field) + seconds)
        return add


@contextlib.contextmanager
def numba_compile_clock():
    """A :class:`CompileClock` counting while the block runs (numba's ``numba:compile`` and
    ``numba:compiler_lock`` events, outermost only, so a kernel compiled inside another is not counted twice)."""
    from numba.core import event

    clock = CompileClock()
    with event.install_timer("numba:compile", clock._add("compile")), \
            event.install_timer("numba:compiler_lock", clock._add("lock")):
        yield clock


def warmup_rows(y, task, max_rows=MAX_ROWS):
    """Row indices of the warm-up fit: the first rows of every class (classification: at least 2 each, so
    every class is seen); segmentation (rows are images): the first 2 images; else the first ``max_rows`` rows."""
    n = len(y)
    if task == "segmentation":
        return np.arange(min(n, 2))
    if task != "classification":
        return np.arange(min(n, max_rows))
    classes, first = np.unique(y, return_inverse=True)
    per_class = max(2, max_rows // max(1, classes.shape[0]))
    keep = np.zeros(n, dtype=bool)
    for k in range(classes.shape[0]):
        keep[np.flatnonzero(first == k)[:per_class]] = True
    return np.flatnonzero(keep)


def shrunk_params(estimator):
    """The estimator's size parameters capped at :data:`SHRUNK` (only those it has and sets above the cap)."""
    params = estimator.get_params(deep=False)
    return {name: cap for name, cap in SHRUNK.items()
            if isinstance(params.get(name), (int, np.integer)) and params[name] > cap}


def exercise_prediction(estimator, X):
    """Compile the kernels the run calls after the fit too: prediction and the fitted trees' statistics (a
    streamed forest scores its trees inside the timed loop)."""
    from ...trees import fitted_trees

    estimator.predict(X)
    if hasattr(estimator, "predict_proba"):
        estimator.predict_proba(X)
    if X.ndim == 2:  # rows of features (a segmentation forest's rows are images, its trees see windows)
        for tree in fitted_trees(estimator)[:1]:
            tree.stats(X)
            tree.apply(X)


def warm_up(estimator, X, y, *, task, name, log=None, locked=False, while_waiting=None):
    """Compile (or load) the kernels ``estimator.fit`` will call, by a small fit of a copy of it (see the module
    docstring); returns the seconds spent, lock wait included (0.0 for an estimator without kernels).

    ``while_waiting``: see :func:`kernel_lock` (the workflow's runs pass other methods' warm-ups:
    :func:`treeopt.experiments.infra.precompile.warm_up_listed`); ``locked``: the caller holds the lock already.

    A failing warm-up fit is logged and ignored: the real fit then compiles what it needs, and the run's
    ``fit_compile_seconds`` shows it.
    """
    from sklearn.base import clone

    log = log or _log
    if not has_kernels(estimator):
        return 0.0
    rows = warmup_rows(y, task)
    small = clone(estimator).set_params(**shrunk_params(estimator))
    start = time.perf_counter()
    lock = contextlib.nullcontext(0.0) if locked else kernel_lock(name, while_waiting=while_waiting)
    with lock as waited, numba_compile_clock() as clock:
        log.info("compiling numba kernels for %s (or loading them from numba's cache) ...", name)
        library = logging.getLogger("treeopt")
        level = library.level
        library.setLevel(logging.WARNING)  # the small fit's progress lines (epochs, trees) would read as the run's
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a 200-row fit's warnings (few points per class...) are not the run's
                small.fit(X[rows], y[rows])
                exercise_prediction(small, X[rows])
        except Exception as exc:  # noqa: BLE001 (any failure only means the real fit compiles for itself)
            log.warning("warm-up fit of %s failed (%s: %s); the timed fit may include numba compilation",
                        name, type(exc).__name__, exc)
        finally:
            library.setLevel(level)
    seconds = time.perf_counter() - start
    log.info("compiling numba kernels for %s ... %.1f s (compiled %.1f s, compiled or loaded %.1f s, waited %.1f s "
             "for another job's compile; not part of fit_seconds)", name, seconds, clock.compile, clock.lock, waited)
    return seconds
