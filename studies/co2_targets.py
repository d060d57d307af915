"""Test error of CO2 Forest and scikit-learn's random forest (30 trees) per seed: the CO2 issue's targets.

The parameters are the paper profile's own choices when its selections exist (``snakemake ... --config
profile=paper`` has run the 30-tree validation of co2_forest and the 1000-tree q validation of rf):
(nu, eta) from the 30-tree selection of co2_forest in co2_forest_size_oblique (``benchmarks/co2_settings.py`` finds it)
and q from rf's selection, as the paper does. Otherwise the fixed seed-0 choices of ``benchmarks/co2_settings.py``.
The forest is refit on train+validation and tested once per seed; RF uses the same q.
Needs the mirror (``data.mirror`` or ``TREEOPT_DATA_MIRROR``).

    python studies/co2_targets.py letter 0,1,2,3,4
    python studies/co2_targets.py connect4_node 0,1     # the per-node standardised variant
"""

import sys
from pathlib import Path

import numpy as np
from sklearn.ensemble import RandomForestClassifier

from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.experiments.plan.methods import resolve_value
from treeopt.forest import CO2ForestClassifier

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from co2_settings import ROOT, chosen_params  # noqa: E402 (the benchmark's setting, shared)

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
