"""Test error of CO2 Forest and scikit-learn's random forest (30 trees) per seed: the CO2 issue's targets.

(nu, eta) are the values chosen on each data set's validation split from the paper's grid; the forest is
refit on train+validation and tested, once per seed. Needs the mirror (``data.mirror`` or
``TREEOPT_DATA_MIRROR``).

    python benchmarks/co2_targets.py letter 0,1,2,3,4
    python benchmarks/co2_targets.py connect4_node 0,1     # the per-node standardised variant
"""

import sys

import numpy as np
from sklearn.ensemble import RandomForestClassifier

from treeopt.data import load_split, prepare_split
from treeopt.experiments.config import load_config
from treeopt.forest import CO2ForestClassifier

CHOSEN = {"letter": dict(nu=4.0, learning_rate=0.03), "satimage": dict(nu=43.0, learning_rate=0.003),
          "connect4": dict(nu=0.1, learning_rate=0.03),
          "connect4_node": dict(nu=0.1, learning_rate=0.03, standardize="node")}


def main(setting, seeds, n_trees=30):
    dataset = setting.removesuffix("_node")
    split = load_split(prepare_split(dataset, load_config("config.yaml"), 0))
    X, y = split.train_val()
    co2, rf = [], []
    for seed in seeds:
        model = CO2ForestClassifier(n_estimators=n_trees, max_features="sqrt", n_jobs=2, random_state=seed,
                                    **CHOSEN[setting]).fit(X, y)
        co2.append(100 * np.mean(model.predict(split.X_test) != split.y_test))
        ref = RandomForestClassifier(n_trees, criterion="entropy", n_jobs=2, random_state=seed).fit(X, y)
        rf.append(100 * np.mean(ref.predict(split.X_test) != split.y_test))
        print(f"{setting} seed {seed}: co2_forest {co2[-1]:.2f}%  rf {rf[-1]:.2f}%", flush=True)
    print(f"{setting}: co2_forest mean {np.mean(co2):.2f}%  rf mean {np.mean(rf):.2f}%  (train {X.shape})")


if __name__ == "__main__":
    main(sys.argv[1], [int(s) for s in sys.argv[2].split(",")])
