"""Numba compilation stays out of a run's ``fit_seconds`` (treeopt.experiments.infra.warmup, issue #37)."""

import json
import logging
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from treeopt.base import note_kernel_compile
from treeopt.experiments.infra import warmup
from treeopt.experiments.plan.methods import make_estimator
from treeopt.experiments.run.runner import run

SRC = Path(__file__).resolve().parents[1] / "src"


def test_note_kernel_compile_accepts_a_wrapped_kernel(caplog):
    """A benchmark's timing wrapper (a plain function standing in for the dispatcher) is not a crash."""
    @njit
    def kernel(x):
        return x + 1

    def wrapped(x):
        return kernel(x)

    with caplog.at_level(logging.INFO, logger="treeopt.numba"):
        note_kernel_compile("Wrapped", wrapped)
        assert not caplog.records  # nothing to compile in a plain function
        note_kernel_compile("Jitted", wrapped, kernel)
    assert [r.getMessage().split(":")[0] for r in caplog.records] == ["Jitted"]  # kernel has no signature yet


def test_warmup_rows_keep_every_class():
    y = np.repeat([0, 1, 2], [500, 3, 400])
    rows = warmup.warmup_rows(y, "classification", max_rows=30)
    assert set(y[rows]) == {0, 1, 2} and len(rows) <= 30
    assert np.array_equal(warmup.warmup_rows(np.arange(500.0), "regression", max_rows=30), np.arange(30))


def test_shrunk_params_cap_only_the_size_parameters():
    forest = make_estimator("co2_forest", {"n_estimators": 1000, "max_depth": 18, "nu": 0.1}, 0)
    assert warmup.shrunk_params(forest) == {"n_estimators": 2, "max_depth": 4}
    small = make_estimator("cart", {"max_depth": 2}, 0)
    assert warmup.shrunk_params(small) == {}
    rgf = make_estimator("rgf_l2", {"max_leaf_nodes": 10000, "l2": 0.1}, 0)
    assert warmup.shrunk_params(rgf) == {"max_leaf_nodes": 16}


def test_learners_without_kernels_are_not_warmed_up():
    rf = make_estimator("rf", {"n_estimators": 5}, 0)
    assert not warmup.has_kernels(rf)
    assert warmup.warm_up(rf, np.zeros((4, 2)), np.array([0, 1, 0, 1]), task="classification", name="rf") == 0.0
    assert warmup.has_kernels(make_estimator("co2_tree", {}, 0))


def test_kernel_lock_makes_a_second_job_wait(tmp_path, monkeypatch):
    """flock locks belong to the open file, so a second opener (another job) blocks until the first lets go."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    waited = []

    def second_job():
        with warmup.kernel_lock("co2_tree") as seconds:
            waited.append(seconds)

    with warmup.kernel_lock("co2_tree"):
        other = threading.Thread(target=second_job)
        other.start()
        time.sleep(0.5)
        assert not waited  # still waiting
    other.join(10)
    assert waited and waited[0] >= 0.4
    with warmup.kernel_lock("co2_forest") as seconds:  # another method's lock is free
        assert seconds < 0.4


def test_compile_clock_sees_a_compilation():
    @njit
    def add_one(x):
        return x + 1

    with warmup.numba_compile_clock() as clock:
        add_one(1.0)
    assert clock.compile > 0 and clock.lock >= clock.compile
    with warmup.numba_compile_clock() as again:
        add_one(2.0)  # compiled already
    assert again.compile == 0 and again.lock == 0


FIRST_RUN = textwrap.dedent("""
    import json, sys
    import numpy as np
    from sklearn.datasets import load_wine
    from treeopt.experiments.run import runner
    from types import SimpleNamespace
    X, y = load_wine(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    X, y = X[order], y[order]
    split = SimpleNamespace(X_train=X[:100], y_train=y[:100], X_val=X[100:140], y_val=y[100:140],
                            X_test=X[140:], y_test=y[140:], task="classification", n_classes=3)
    runner._load_split = lambda path: split
    np.savez(sys.argv[2], X_train=X[:100])
    result = runner.run(sys.argv[1], dataset="wine", method="cart", params={"max_depth": 3}, seed=0,
                        split_path=sys.argv[2])
    print(json.dumps({k: result[k] for k in ("fit_seconds", "compile_seconds", "fit_compile_seconds")}))
""")


def test_first_run_on_an_empty_numba_cache_times_no_compilation(tmp_path):
    """With an empty numba cache, the first run compiles the kernels in the warm-up: ``compile_seconds`` holds
    it, ``fit_seconds`` does not (before, that run's fit_seconds was the compile time). The axis-aligned tree's
    kernels compile fastest (seconds; CO2's take a minute), the mechanism is the same for every learner."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache"), "PYTHONPATH": str(SRC)}
    out = subprocess.run([sys.executable, "-c", FIRST_RUN, str(tmp_path / "run"), str(tmp_path / "split0.npz")],
                         env=env, capture_output=True, text=True, check=True, timeout=900)
    timing = json.loads(out.stdout.strip().splitlines()[-1])
    assert timing["fit_compile_seconds"] < 0.05  # nothing left to compile or load inside the timed fit
    assert timing["compile_seconds"] > 1.0  # the kernels compiled from scratch
    assert timing["fit_seconds"] < timing["compile_seconds"] / 5
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["compile_seconds"] == pytest.approx(timing["compile_seconds"])
    log = (tmp_path / "run" / "log.txt").read_text()
    assert "compiling numba kernels for cart ..." in log and "not part of fit_seconds" in log
    assert any(p.suffix == ".nbi" for p in (tmp_path / "numba-cache").rglob("*"))  # compiled into the tmp cache


def test_runs_record_compile_seconds(wine_split, tmp_path):
    path, _ = wine_split
    result = run(tmp_path / "run", dataset="wine", method="cart", params={"max_depth": 3}, seed=0, split_path=path)
    assert result["compile_seconds"] > 0 and result["fit_compile_seconds"] < 0.05
    rf = run(tmp_path / "rf", dataset="wine", method="rf", params={"n_estimators": 3}, seed=0, split_path=path)
    assert rf["compile_seconds"] == 0.0  # scikit-learn: no kernels
