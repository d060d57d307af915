"""Kernels compiled in the background while a local workflow runs (treeopt.experiments.infra.precompile, issue #37)."""

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from treeopt.experiments.infra import precompile
from treeopt.experiments.plan.params import Inherited

ROOT = Path(__file__).resolve().parents[1]


def _job(rule, output):
    return SimpleNamespace(rule=SimpleNamespace(name=rule), output=[output])


class _Plan:
    def __init__(self, specs):
        self.specs = specs

    def lookup(self, kind, path):
        return self.specs[(kind, path)]

    def split_path(self, dataset, seed):
        return f"data/processed/{dataset}/split{seed}.npz"


def _spec(method, dataset="wine", params=(("max_depth", 3),), inherit=()):
    return SimpleNamespace(method=method, dataset=dataset, seed=0, params=params, inherit=inherit)


def test_entries_take_the_first_run_of_each_method():
    plan = _Plan({
        ("run", "r1"): _spec("co2_tree", params=(("max_depth", 2), ("nu", 1.0))),
        ("run", "r2"): _spec("co2_tree", dataset="digits"),
        ("final", "f1"): _spec("seg_co2", params=(("nu", Inherited("seg_co2", "sel.yaml")),), inherit=(("nu", "sel.yaml"),)),
        ("final", "f2"): _spec("oc1_tree", dataset="digits", params=None),  # chosen by a selection: skipped
        ("final", "f3"): _spec("oc1_tree", dataset="letter"),
        ("run", "r3"): _spec("cart"),
    })
    jobs = [_job("prepare_split", "data/x"), _job("candidate_run", "r1"), _job("candidate_run", "r2"),
            _job("final_run", "f1"), _job("final_run", "f2"), _job("final_run", "f3"), _job("select", "s"),
            _job("candidate_run", "r3")]
    items = precompile.entries(jobs, plan)
    assert [(i["method"], str(Path(i["split"]).relative_to(Path.cwd()))) for i in items] == [
        ("co2_tree", "data/processed/wine/split0.npz"), ("oc1_tree", "data/processed/letter/split0.npz"),
        ("cart", "data/processed/wine/split0.npz")]
    assert items[0]["params"] == {"max_depth": 2, "nu": 1.0}


def test_turned_off_by_the_environment(tmp_path):
    assert not precompile.enabled({"TREEOPT_PRECOMPILE": "0"})
    assert not precompile.enabled({"SLURM_JOB_ID": "7"})
    assert precompile.enabled({})
    environ = {"TREEOPT_PRECOMPILE": "0"}
    assert precompile.write_list([{"method": "cart"}], tmp_path / "list.pkl", environ) is None
    assert precompile.ENV_LIST not in environ and not (tmp_path / "list.pkl").exists()


WAITER = """
import logging, sys
from treeopt.experiments.infra import precompile
from treeopt.experiments.plan.methods import make_estimator
from sklearn.datasets import load_wine
logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
X, y = load_wine(return_X_y=True)
precompile.warm_up_listed(make_estimator("cart", {"max_depth": 3}, 0), X, y, task="classification", name="cart")
"""


def test_a_waiting_job_warms_up_other_methods(tmp_path, monkeypatch):
    """While another process holds cart's kernel lock, a cart job warms up the listed tao_axis run instead of
    idling (its kernels land in numba's cache, its marker is set), skips a method whose split is not there,
    then takes cart's lock when it is released."""
    import fcntl
    import threading

    from treeopt.data import prepare_split
    from treeopt.experiments.infra.warmup import _lock_path
    from treeopt.experiments.plan.config import load_config

    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "numba-cache"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
    split = prepare_split("wine", load_config(ROOT / "config.yaml"), 0)
    items = [{"method": "oc1_tree", "params": {}, "seed": 0, "split": str(tmp_path / "missing.npz")},
             {"method": "tao_axis", "params": {"max_depth": 2}, "seed": 0, "split": str(split.resolve())}]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    listed = precompile.write_list(items, tmp_path / "logs" / "first_runs.pkl", env)
    assert env[precompile.ENV_LIST] == str(listed)
    with open(_lock_path("cart"), "a") as held:  # another job compiling cart's kernels
        fcntl.flock(held, fcntl.LOCK_EX)
        # released once the waiter says it found the lock held (a fixed 5 s failed when the waiter's imports took
        # longer on a loaded machine), or after 300 s at the latest
        job = subprocess.Popen([sys.executable, "-c", WAITER], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        timer = threading.Timer(300.0, lambda: fcntl.flock(held, fcntl.LOCK_UN))
        timer.start()
        lines = []
        for line in job.stdout:
            lines.append(line)
            if "being compiled by another job" in line:
                fcntl.flock(held, fcntl.LOCK_UN)
        job.wait(timeout=900)
        timer.cancel()
        out = subprocess.CompletedProcess(job.args, job.returncode, "".join(lines), job.stderr.read())
    assert out.returncode == 0, out.stderr
    assert "cart's kernels are being compiled by another job: warming up tao_axis's meanwhile" in out.stdout
    assert "oc1_tree" not in out.stdout  # its split is not there: left to its own runs
    assert (tmp_path / "logs" / "first_runs.pkl.done" / "tao_axis").exists()
    assert (tmp_path / "logs" / "first_runs.pkl.done" / "cart").exists()
    assert out.stdout.rstrip().splitlines()[-1].startswith("compiling numba kernels for cart ...")
    # the listed method's kernels are in the cache: its own first run only loads them
    code = ("import sys; from treeopt.experiments.run.runner import run; run(sys.argv[1], dataset='wine', "
            "method='tao_axis', params={'max_depth': 2}, seed=0, split_path=sys.argv[2])")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "run"), str(split)], env=env, check=True,
                   timeout=900)
    assert "(compiled 0.0 s" in (tmp_path / "run" / "log.txt").read_text()
