"""Which CO2 Forest setting (nu, eta, q) the speed benchmark and the CO2 studies use.

The paper profile's own choices when its (git-ignored) selections exist (``snakemake ... --config profile=paper``
has run the 30-tree validation of co2_forest and the 1000-tree q validation of rf), else :data:`FALLBACK`: the
same seed-0 choices, copied from the last Table I run, so a fresh clone benchmarks the same setting.
"""

from pathlib import Path

from treeopt.experiments.plan.build import build_plan
from treeopt.experiments.plan.config import load_config
from treeopt.experiments.plan.methods import get_method
from treeopt.experiments.run.selection import read_selection

# The paper profile's seed-0 choices of the Table I run at the 10-epoch stop rule (results/paper/co2_table1.csv,
# stop 19), so a clone without the git-ignored selection files benchmarks the same setting as this machine.
FALLBACK = {"letter": dict(nu=4.0, learning_rate=0.01, max_features="p^0.5"),
            "satimage": dict(nu=43.0, learning_rate=0.01, max_features="p^0.6"),
            "connect4": dict(nu=0.1, learning_rate=0.03, max_features="p^0.9"),
            "connect4_node": dict(nu=0.1, learning_rate=0.03, max_features="p^0.9", standardize="node"),
            # co2_forest_node's seed-0 choices in the paper-profile run of 2026-11-24 (library f58e1bf)
            "letter_node": dict(nu=0.3, learning_rate=0.01, max_features="p^0.5", standardize="node"),
            "satimage_node": dict(nu=0.1, learning_rate=0.03, max_features="p^0.6", standardize="node"),
            # not a validated choice: the smoke runs of the benchmarks (tests/test_benchmarks_smoke.py) on a data set
            # that needs no download
            "digits": dict(nu=1.0, learning_rate=0.01, max_features="p^0.5")}
ROOT = Path(__file__).resolve().parents[1]
_PLANS = {}


def paper_plan():
    """The paper profile's plan: run folders and selection files are named by identity, found by experiment."""
    if "paper" not in _PLANS:
        _PLANS["paper"] = build_plan(load_config(ROOT / "config.yaml", ["profile=paper"]))
    return _PLANS["paper"]


def selection_path(setting, seed=0):
    """``(method, path)``: the workflow's 30-tree (nu, eta) selection file of a setting such as ``letter`` or
    ``connect4_node`` (method co2_forest_node) for one forest seed (co2_forest_size_oblique of the paper
    profile); the file may not exist."""
    dataset = setting.removesuffix("_node")
    method = "co2_forest_node" if setting.endswith("_node") else "co2_forest"
    found = paper_plan().find("selection", experiment="co2_forest_size_oblique", method=method, dataset=dataset,
                              seed=seed)
    return method, ROOT / (found[0] if found else f"results/selection/{dataset}/{method}/not-planned/seed{seed}.yaml")


def has_params(setting):
    """Whether :func:`chosen_params` knows ``setting`` (a selection file or a fixed fallback)."""
    return selection_path(setting)[1].is_file() or setting in FALLBACK


def chosen_params(setting):
    """(params, where they came from) for a setting such as ``letter`` or ``connect4_node``."""
    method, co2 = selection_path(setting)
    if not co2.is_file():
        return dict(FALLBACK[setting]), "fixed values in benchmarks/co2_settings.py"
    chosen = {k: v for k, v in read_selection(co2)["chosen"].items() if k != "n_estimators"}
    return {**get_method(method).fixed, **chosen}, str(co2)
