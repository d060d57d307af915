"""A job waiting for another job's numba compile warms up the kernels of other methods meanwhile.

A run compiles (or loads) its method's kernels before its timed fit, under a lock per method
(:mod:`treeopt.experiments.infra.warmup`). On a fresh clone the first runs of the CO2 and OC1 families compile for
35-75 s each, and Snakemake often starts two runs of one method at once: the second waited for the first's
compile under the lock, and its core stayed idle (59 s and 36 s of such waiting in one fresh-clone run of the
default profile; docs/cost.md).

Now the workflow's ``onstart`` (``workflow/rules/common.smk``, local execution only) writes the list of the first
run of every method the invocation will run (:func:`entries`, :func:`write_list`) and names it in
``TREEOPT_PRECOMPILE_LIST``, which the jobs inherit. A job that finds its method's lock held goes down that list
(:func:`help_while_waiting`): a method whose lock is free and which nobody has warmed up yet is warmed up by this
job, the same call under the same lock as that method's own first run would make, so nothing is compiled twice;
between two methods it checks its own lock and returns as soon as it can have it. A method is taken once its split
is prepared (looked at again every :data:`POLL_SECONDS`), if the split is small (:data:`MAX_SPLIT_BYTES`: a job
does not load a big data set it was not given memory for);
a warm-up that fails is logged and left to the method's own runs. Markers of the methods done live beside the
list (``{list}.done/{method}``). Nothing of a run changes except that its ``compile_seconds`` (lock wait included)
may now hold other methods' compile time instead of idle time. ``TREEOPT_PRECOMPILE=0`` turns it off.
"""

from __future__ import annotations

import logging
import os
import pickle
import time
from pathlib import Path

ENV_LIST = "TREEOPT_PRECOMPILE_LIST"
MAX_SPLIT_BYTES = 200_000_000  # a waiting job loads other methods' splits only up to this size
POLL_SECONDS = 0.5  # how often a waiting job with nothing to warm up looks at its lock and the splits again

_log = logging.getLogger("treeopt.numba")


def enabled(environ=None):
    environ = os.environ if environ is None else environ
    return environ.get("TREEOPT_PRECOMPILE", "1") != "0" and not environ.get("SLURM_JOB_ID")


def entries(jobs, plan):
    """``[{method, params, seed, split}]``: the first run (candidate or final) of each method among ``jobs``
    (Snakemake jobs about to run), taken from ``plan``; runs with inherited parameters are skipped (their
    parameters are read from selection files that do not exist yet)."""
    from ..plan.params import plain_params

    out, seen = [], set()
    for job in jobs:
        if job.rule.name not in ("candidate_run", "final_run"):
            continue
        kind = "run" if job.rule.name == "candidate_run" else "final"
        try:
            spec = plan.lookup(kind, str(job.output[0]))
        except Exception:  # noqa: BLE001 (informative only: a run not found is simply not in the list)
            continue
        params = getattr(spec, "params", None)
        if spec.method in seen or params is None or getattr(spec, "inherit", ()):
            continue
        seen.add(spec.method)
        out.append({"method": spec.method, "params": plain_params(params), "seed": int(spec.seed),
                    "split": str(Path(plan.split_path(spec.dataset, spec.seed)).resolve())})
    return out


def write_list(items, path, environ=None):
    """Write ``items`` to ``path`` (pickle), clear its done markers and name it in ``TREEOPT_PRECOMPILE_LIST`` of
    ``environ`` (default ``os.environ``: the jobs Snakemake starts inherit it). Returns the path, or None when
    turned off or there is nothing to list."""
    environ = os.environ if environ is None else environ
    if not items or not enabled(environ):
        return None
    path = Path(path).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    done = _done_dir(path)
    done.mkdir(exist_ok=True)
    for marker in done.iterdir():
        if marker.is_file() and marker.name in {item["method"] for item in items}:
            marker.unlink()  # this invocation's markers only (names of its own methods, in its own folder)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(pickle.dumps(items))
    os.replace(tmp, path)
    environ[ENV_LIST] = str(path)
    return path


def _done_dir(path):
    return Path(f"{path}.done")


def _current_list():
    path = os.environ.get(ENV_LIST)
    if not path or not enabled():
        return None, []
    try:
        return Path(path), pickle.loads(Path(path).read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError):
        return None, []


def mark_done(method):
    """Record that ``method``'s kernels are warm (compiled into numba's cache) for this invocation."""
    path, _ = _current_list()
    if path is not None:
        try:
            (_done_dir(path) / method).touch()
        except OSError:
            pass


def _is_done(path, method):
    return (_done_dir(path) / method).exists()


def help_while_waiting(name, is_free, log=None):
    """Warm up the listed methods nobody has warmed up yet whose lock is free, one at a time, while ``name``'s lock
    is held by another job; return as soon as ``is_free()`` (which takes ``name``'s lock) succeeds, or when no
    listed method is left to warm up. A method whose split is not prepared yet is looked at again later."""
    from .warmup import kernel_lock_if_free

    log = log or _log
    path, items = _current_list()
    pending = [item for item in items if item["method"] != name]
    while pending and not is_free():
        pending = [item for item in pending if not _is_done(path, item["method"])]
        ready = [item for item in pending if _split_ready(item["split"])]
        pending = [item for item in pending if _split_ready(item["split"]) is not False]  # too big: never
        for item in ready:
            method = item["method"]
            with kernel_lock_if_free(method) as got:
                if not got or _is_done(path, method):  # another job is compiling it, or did meanwhile
                    continue
                log.info("%s's kernels are being compiled by another job: warming up %s's meanwhile", name, method)
                try:
                    warm_one(item, log)
                except Exception as exc:  # noqa: BLE001 (that method's own runs then compile for themselves)
                    log.warning("warm-up of %s failed (%s: %s); its runs compile for themselves", method,
                                type(exc).__name__, exc)
                    mark_done(method)  # not to be tried again by every waiting job
            break  # one method at a time, then look at our own lock again
        else:  # nothing to do now: splits still being prepared, or other jobs compiling the rest
            time.sleep(POLL_SECONDS)


def _split_ready(split):
    """True: the split is there and small enough to load here; None: not prepared yet; False: too big."""
    try:
        return os.path.getsize(split) <= MAX_SPLIT_BYTES
    except OSError:
        return None


def warm_up_listed(estimator, X, y, *, task, name, log=None):
    """:func:`treeopt.experiments.infra.warmup.warm_up` of a workflow run: while another job holds the method's lock it
    warms up the listed methods (:func:`help_while_waiting`); marks the method done for the others."""
    from .warmup import warm_up

    log = log or _log
    seconds = warm_up(estimator, X, y, task=task, name=name, log=log,
                      while_waiting=lambda is_free: help_while_waiting(name, is_free, log))
    mark_done(name)
    return seconds


def warm_one(item, log):
    """Warm up the kernels of one listed run, as that run's own warm-up would (the caller holds its lock)."""
    from ...data import load_split
    from ..plan.methods import get_method, make_estimator
    from .warmup import warm_up

    split = load_split(item["split"])
    task = get_method(item["method"]).task
    X_fit, y_fit = split.X_train, split.y_train  # a first run fits on the training part (run.fit.fit_parts)
    n_features = None if task == "segmentation" else X_fit.shape[1]
    estimator = make_estimator(item["method"], item["params"], item["seed"], n_jobs=1, n_features=n_features)
    seconds = warm_up(estimator, X_fit, y_fit, task=task, name=item["method"], log=log, locked=True)
    mark_done(item["method"])
    return seconds
