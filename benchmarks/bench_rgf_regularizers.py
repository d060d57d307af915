"""Fit time of RGF by regulariser: L2 against min-penalty (Sec. 5.4.2) and min-penalty with sum-to-zero siblings
(Sec. 5.4.3), the paper's settings (gamma = 2, lambda = 0.01 / gamma for the min-penalty ones, 0.01 for L2).

Reports wall and CPU seconds per fit (after a warm-up fit, so numba's loading is not timed) and the test RMSE /
error, so a faster implementation can be checked to give the same model. ``--label`` names the code version,
to compare runs of two checkouts (``PYTHONPATH=<checkout>/src``):

    flock /tmp/treeopt-bench.lock python benchmarks/bench_rgf_regularizers.py --label after

Appends to benchmarks/results/rgf_regularizer_speed.csv.
"""

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from treeopt.boosting import RGFClassifier, RGFRegressor
from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = (("l2", 1.0, 0.01), ("min_penalty", 2.0, 0.005), ("min_penalty_sib", 2.0, 0.005))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="rgf_synth_q4_reg,rgf_synth_q64_reg")
    parser.add_argument("--max-leaf", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--label", default="")
    parser.add_argument("--out", default=str(ROOT / "benchmarks/results/rgf_regularizer_speed.csv"))
    args = parser.parse_args(argv)
    config = load_config(ROOT / "config.yaml")
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 3)), rng.normal(size=200)
    for reg, gamma, _ in SETTINGS:
        RGFRegressor(max_leaf_nodes=30, regularizer=reg, gamma=gamma).fit(X, y)
    rows = []
    for dataset in args.datasets.split(","):
        split = load_split(prepare_split(dataset, config, args.seed))
        regression = dataset.endswith("_reg")
        cls = RGFRegressor if regression else RGFClassifier
        for reg, gamma, l2 in SETTINGS:
            load_before = os.getloadavg()[0]
            wall, cpu = time.perf_counter(), time.process_time()
            model = cls(max_leaf_nodes=args.max_leaf, l2=l2, regularizer=reg, gamma=gamma).fit(split.X_train,
                                                                                                split.y_train)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            pred = model.predict(split.X_test)
            value = (float(np.sqrt(np.mean((pred - split.y_test) ** 2))) if regression
                     else 100.0 * float(np.mean(pred != split.y_test)))
            rows.append({"label": args.label, "dataset": dataset, "regularizer": reg, "gamma": gamma, "l2": l2,
                         "max_leaf": args.max_leaf, "seed": args.seed, "wall_seconds": wall, "cpu_seconds": cpu,
                         "test_value": value, "n_trees": model.n_trees_, "loadavg_1min_before": load_before,
                         "loadavg_1min_after": os.getloadavg()[0]})
            print(rows[-1], flush=True)
    out = Path(args.out)
    df = pd.DataFrame(rows)
    if out.is_file():
        df = pd.concat([pd.read_csv(out), df], ignore_index=True)
    df.to_csv(out, index=False, float_format="%.6g")


if __name__ == "__main__":
    main()
