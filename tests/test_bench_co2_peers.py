"""benchmarks/bench_co2_forest.py: how it finds the peers' Pythons (treeple, YDF) and skips a missing one, and its
kernel clock keeps the kernel's attributes (the fit reads ``signatures`` before its first kernel call)."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def bench(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import bench_co2_forest

    monkeypatch.setattr(bench_co2_forest, "LOCAL_PEER_ENV", tmp_path / "no-venv")
    for variable in ("TREEOPT_TREEPLE_PYTHON", "TREEOPT_YDF_PYTHON"):
        monkeypatch.delenv(variable, raising=False)
    return bench_co2_forest


def test_a_missing_peer_is_skipped_with_a_message(bench, tmp_path):
    python, why = bench.peer_python("treeple", str(tmp_path / "nowhere" / "python"))
    assert python is None
    assert "treeple skipped" in why and "does not exist" in why and "TREEOPT_TREEPLE_PYTHON" in why


def test_a_python_without_the_package_is_skipped(bench, monkeypatch):
    package, variable, worker, install = bench.PEERS["ydf"]
    monkeypatch.setitem(bench.PEERS, "ydf", ("no_such_package_treeopt", variable, worker, install))
    python, why = bench.peer_python("ydf", sys.executable)
    assert python is None and "cannot import no_such_package_treeopt" in why


def test_the_environment_variable_names_the_peer_python(bench, monkeypatch):
    package, variable, worker, install = bench.PEERS["treeple"]
    monkeypatch.setitem(bench.PEERS, "treeple", ("json", variable, worker, install))  # json: always importable
    monkeypatch.setenv(variable, sys.executable)
    assert bench.peer_python("treeple") == (sys.executable, None)


def test_the_kernel_clock_keeps_the_kernel_attributes(bench):
    import treeopt.greedy.co2 as co2_module

    kernel = co2_module.grow_co2_tree
    with bench.KernelClock():
        assert co2_module.grow_co2_tree is not kernel
        assert co2_module.grow_co2_tree.signatures == kernel.signatures
    assert co2_module.grow_co2_tree is kernel
