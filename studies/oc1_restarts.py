"""Does Fig. 2's OC1 cost cut (5 restarts instead of OC1's 20) change the comparison? Issue #24.

Refits the paper profile's OC1 final run of one depth and seed (Connect-4 split ``seed``, train+validation,
``max_features`` p^0.5, the workflow's own estimator factory) with ``--restarts`` restarts and prints its CPU
seconds, training and test accuracy, to set beside the committed 5-restart run of the same depth and seed
(``results/paper/nongreedy_fig2.csv``). OC1 has no grid in Fig. 2, so nothing here is chosen on the test set:
the script only measures what the cut costs the baseline.

    python studies/oc1_restarts.py --depth 6 --seed 0 --restarts 20 --out studies/results/oc1_restarts.jsonl
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np

from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.experiments.plan.methods import make_estimator

ROOT = Path(__file__).resolve().parents[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--restarts", type=int, default=20)
    ap.add_argument("--out", default="studies/results/oc1_restarts.jsonl")
    a = ap.parse_args()
    split = load_split(prepare_split("connect4", load_config(ROOT / "config.yaml"), a.seed))
    X, y = split.train_val()
    params = {"max_depth": a.depth, "max_features": "p^0.5", "n_restarts": a.restarts}
    est = make_estimator("oc1_tree", params, a.seed, n_jobs=1, n_features=X.shape[1])
    cpu = time.process_time()
    est.fit(X, y)
    cpu = time.process_time() - cpu
    row = dict(data="connect4", depth=a.depth, seed=a.seed, restarts=a.restarts, cpu=round(cpu, 1),
               train=100 * float(np.mean(est.predict(X) == y)),
               test=100 * float(np.mean(est.predict(split.X_test) == split.y_test)))
    print(json.dumps(row), flush=True)
    with open(ROOT / a.out, "a") as f:
        f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
