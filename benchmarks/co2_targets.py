"""Test error of CO2 Forest and scikit-learn's random forest (30 trees) per seed: the CO2 issue's targets.

The parameters are the paper profile's own choices when its selections exist (``snakemake ... --config
profile=paper`` has run the 30-tree validation of co2_forest and the 1000-tree q validation of rf):
(nu, eta) from the 30-tree selection of co2_forest in co2_forest_size_oblique (``results/selection/{dataset}/co2_forest/
...``, looked up in the paper profile's plan) and q from rf's selection, as the paper does. Otherwise the values below: the same seed-0 choices, copied from
the last Table I run. The forest is refit on train+validation and tested once per seed; RF uses the same q.
Needs the mirror (``data.mirror`` or ``TREEOPT_DATA_MIRROR``).

    python benchmarks/co2_targets.py letter 0,1,2,3,4
    python benchmarks/co2_targets.py connect4_node 0,1     # the per-node standardised variant
"""

import sys
from pathlib import Path

import numpy as np
from sklearn.ensemble import RandomForestClassifier

from treeopt.data import load_split, prepare_split
from treeopt.experiments.config import load_config
from treeopt.experiments.methods import get_method, resolve_value
from treeopt.experiments.plan import build_plan
from treeopt.experiments.selection import read_selection
from treeopt.forest import CO2ForestClassifier

# The paper profile's seed-0 choices of the Table I run at the 10-epoch stop rule (results/paper/co2_table1.csv,
# stop 19), so a clone without the git-ignored selection files benchmarks the same setting as this machine.
FALLBACK = {"letter": dict(nu=4.0, learning_rate=0.01, max_features="p^0.5"),
            "satimage": dict(nu=43.0, learning_rate=0.01, max_features="p^0.6"),
            "connect4": dict(nu=0.1, learning_rate=0.03, max_features="p^0.9"),
            "connect4_node": dict(nu=0.1, learning_rate=0.03, max_features="p^0.9", standardize="node"),
            # co2_forest_node's seed-0 choices in the paper-profile run of 2026-11-24 (library f58e1bf)
            "letter_node": dict(nu=0.3, learning_rate=0.01, max_features="p^0.5", standardize="node"),
            "satimage_node": dict(nu=0.1, learning_rate=0.03, max_features="p^0.6", standardize="node")}
ROOT = Path(__file__).resolve().parents[1]
_PLANS = {}


def paper_plan():
    """The paper profile's plan: run folders and selection files are named by identity, found by experiment."""
    if "paper" not in _PLANS:
        _PLANS["paper"] = build_plan(load_config(ROOT / "config.yaml", ["profile=paper"]))
    return _PLANS["paper"]


def selection_path(setting, seed=0):
    """``(method, path)``: the workflow's 30-tree (nu, eta) selection file of a setting such as ``letter`` or
    ``connect4_node`` (method co2_forest_node) for one forest seed; the file may not exist."""
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
        return dict(FALLBACK[setting]), "fixed values in benchmarks/co2_targets.py"
    chosen = {k: v for k, v in read_selection(co2)["chosen"].items() if k != "n_estimators"}
    return {**get_method(method).fixed, **chosen}, str(co2)


def main(setting, seeds, n_trees=30):
    dataset = setting.removesuffix("_node")
    split = load_split(prepare_split(dataset, load_config(ROOT / "config.yaml"), 0))
    X, y = split.train_val()
    params, source = chosen_params(setting)
    params["max_features"] = resolve_value(params["max_features"], X.shape[1])
    print(f"{setting}: {params} from {source}", flush=True)
    co2, rf = [], []
    for seed in seeds:
        model = CO2ForestClassifier(n_estimators=n_trees, n_jobs=2, random_state=seed, **params).fit(X, y)
        co2.append(100 * np.mean(model.predict(split.X_test) != split.y_test))
        ref = RandomForestClassifier(n_trees, criterion="entropy", max_features=params["max_features"], n_jobs=2,
                                     random_state=seed).fit(X, y)
        rf.append(100 * np.mean(ref.predict(split.X_test) != split.y_test))
        print(f"{setting} seed {seed}: co2_forest {co2[-1]:.2f}%  rf {rf[-1]:.2f}%", flush=True)
    print(f"{setting}: co2_forest mean {np.mean(co2):.2f}%  rf mean {np.mean(rf):.2f}%  (train {X.shape})")


if __name__ == "__main__":
    main(sys.argv[1], [int(s) for s in sys.argv[2].split(",")])
