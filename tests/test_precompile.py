"""Kernels compiled in the background while a local workflow runs (treeopt.experiments.precompile, issue #37)."""

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from treeopt.experiments import precompile
from treeopt.experiments.params import Inherited

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
    assert [(i["method"], i["split"]) for i in items] == [
        ("co2_tree", "data/processed/wine/split0.npz"), ("oc1_tree", "data/processed/letter/split0.npz"),
        ("cart", "data/processed/wine/split0.npz")]
    assert items[0]["params"] == {"max_depth": 2, "nu": 1.0}


def test_turned_off_by_the_environment():
    assert not precompile.enabled({"TREEOPT_PRECOMPILE": "0"})
    assert not precompile.enabled({"SLURM_JOB_ID": "7"})
    assert precompile.enabled({})
    assert precompile.start([{"method": "cart"}], environ={"TREEOPT_PRECOMPILE": "0"}) is None


def test_background_compile_fills_the_cache_a_run_then_loads(tmp_path, monkeypatch):
    """The detached process compiles a run's kernels into numba's cache at low priority and skips a run whose
    split never appears; a run of that method afterwards compiles nothing (its warm-up only loads)."""
    from treeopt.data import prepare_split
    from treeopt.experiments.config import load_config

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba-cache"))
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "src"))
    monkeypatch.setenv("TREEOPT_PRECOMPILE_WAIT_SECONDS", "1")
    split = prepare_split("wine", load_config(ROOT / "config.yaml"), 0)
    proc = precompile.start([{"method": "cart", "params": {}, "seed": 0, "split": "no/such/split.npz"},
                             {"method": "cart", "params": {"max_depth": 3}, "seed": 0, "split": str(split)}],
                            workdir=tmp_path)
    assert proc.wait(timeout=600) == 0
    log = (tmp_path / precompile.LOG_FILE).read_text()
    assert "split no/such/split.npz not there: skipped" in log
    assert "compiling numba kernels for cart ..." in log and log.rstrip().endswith("done"), log
    assert any(p.suffix == ".nbi" for p in (tmp_path / "numba-cache").rglob("*"))
    assert os.getpriority(os.PRIO_PROCESS, os.getpid()) < 19  # only the background process was reniced

    code = ("import sys; from treeopt.experiments.runner import run; "
            "run(sys.argv[1], dataset='wine', method='cart', params={'max_depth': 3}, seed=0, split_path=sys.argv[2])")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "run"), str(split)], check=True, timeout=600)
    assert "(compiled 0.0 s" in (tmp_path / "run" / "log.txt").read_text()
