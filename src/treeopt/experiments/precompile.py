"""Numba kernels compiled in the background while a local workflow runs, on the cores its jobs leave idle.

A run compiles (or loads) its method's kernels before its timed fit, under a lock per method
(:mod:`treeopt.experiments.warmup`). On a fresh clone the first runs of the CO2 and OC1 families compile for
40-75 s each, and Snakemake often starts two runs of one method at once: the second waits for the first's
compile under the lock, and its core stays idle. Two fresh-clone runs of the default profile differed by two
minutes (504 s and 626 s) depending on how often that happened (55 s and 41 s of waiting in the slower one).

Here the workflow's ``onstart`` (``workflow/rules/common.smk``, local execution only) starts one detached
process at the lowest CPU priority (``nice`` 19) that warms up, one method after the other, the kernels of the
first run of every method the invocation will run (:func:`entries`): the same call, under the same lock, as the
run's own warm-up, so nothing is compiled twice and nothing in a run changes (its ``compile_seconds`` only gets
shorter). While both cores are busy with jobs this process gets almost no CPU; when a job waits for a lock, or
Snakemake has fewer jobs than cores, it compiles the kernels later jobs would have compiled. It writes no
result, only its log (``results/logs/precompile.log``), waits for each run's split to be prepared, skips a run
whose split does not appear or whose warm-up fails (that run then compiles for itself, as before), and exits when
its list is done or Snakemake has gone. ``TREEOPT_PRECOMPILE=0`` turns it off.
"""

from __future__ import annotations

import pickle
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

# how long to wait for a run's split (prepare_split jobs make them early)
SPLIT_WAIT_SECONDS = float(os.environ.get("TREEOPT_PRECOMPILE_WAIT_SECONDS", 900.0))
LOG_FILE = "results/logs/precompile.log"


def enabled(environ=None):
    environ = os.environ if environ is None else environ
    return environ.get("TREEOPT_PRECOMPILE", "1") != "0" and not environ.get("SLURM_JOB_ID")


def entries(jobs, plan):
    """``[{method, params, seed, split}]``: the first run (candidate or final) of each method among ``jobs``
    (Snakemake jobs about to run), taken from ``plan``; runs with inherited parameters are skipped (their
    parameters are read from selection files that do not exist yet)."""
    from .params import plain_params

    out, seen = [], set()
    for job in jobs:
        if job.rule.name not in ("candidate_run", "final_run"):
            continue
        kind = "run" if job.rule.name == "candidate_run" else "final"
        try:
            spec = plan.lookup(kind, str(job.output[0]))
        except Exception:  # noqa: BLE001 (informative only: a run not found is simply not precompiled)
            continue
        params = getattr(spec, "params", None)
        if spec.method in seen or params is None or getattr(spec, "inherit", ()):
            continue
        seen.add(spec.method)
        out.append({"method": spec.method, "params": plain_params(params), "seed": int(spec.seed),
                    "split": str(plan.split_path(spec.dataset, spec.seed))})
    return out


def start(items, workdir=".", environ=None):
    """Start the background process for ``items`` (:func:`entries`); returns its ``Popen`` (None: nothing to do,
    or turned off)."""
    if not items or not enabled(environ):
        return None
    log = Path(workdir) / LOG_FILE
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a") as out:
        proc = subprocess.Popen([sys.executable, "-m", "treeopt.experiments.precompile", str(os.getpid())],
                                stdin=subprocess.PIPE, stdout=out, stderr=out, cwd=workdir, start_new_session=True,
                                close_fds=True)
    proc.stdin.write(pickle.dumps(items))
    proc.stdin.close()
    return proc


def _parent_alive(pid):
    return os.getppid() == pid


def _wait_for(path, parent):
    deadline = time.monotonic() + SPLIT_WAIT_SECONDS
    while not Path(path).exists():
        if time.monotonic() > deadline or not _parent_alive(parent):
            return False
        time.sleep(0.5)
    return True


def warm_one(item, log):
    """Warm up the kernels of one run (:func:`treeopt.experiments.warmup.warm_up`, as the run itself calls it)."""
    from ..data import load_split
    from .methods import get_method, make_estimator
    from .runner import fit_parts
    from .warmup import warm_up

    split = load_split(item["split"])
    task = get_method(item["method"]).task
    if task == "segmentation":
        X_fit, y_fit, n_features = split.X_train, split.y_train, None
    else:
        X_fit, y_fit, _, _ = fit_parts(split, "train")
        n_features = X_fit.shape[1]
    estimator = make_estimator(item["method"], item["params"], item["seed"], n_jobs=1, n_features=n_features)
    return warm_up(estimator, X_fit, y_fit, task=task, name=item["method"], log=log)


def main(parent, items):
    os.nice(19)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stdout)
    log = logging.getLogger("treeopt.precompile")
    log.info("warming up the kernels of %d methods: %s", len(items), ", ".join(i["method"] for i in items))
    for item in items:
        if not _parent_alive(parent):
            log.info("Snakemake has ended: stopping")
            return
        if not _wait_for(item["split"], parent):
            log.info("%s: split %s not there: skipped", item["method"], item["split"])
            continue
        try:
            warm_one(item, log)
        except Exception as exc:  # noqa: BLE001 (the run then compiles for itself)
            log.warning("%s: warm-up failed (%s: %s); its runs compile for themselves", item["method"],
                        type(exc).__name__, exc)
    log.info("done")


if __name__ == "__main__":
    main(int(sys.argv[1]), pickle.loads(sys.stdin.buffer.read()))
