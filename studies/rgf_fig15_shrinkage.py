"""Does scikit-learn GBDT's training time at a fixed tree size J and leaf budget l depend on the shrinkage s?

RGF paper Sec. 6.5 ("Empirical running time", Fig. 15) averages GBDT's time over its 9 best (J, s) pairs, which it
does not list. If the time of a J-leaf, l-leaf fit does not depend on s, a (J, s) pair costs what any (J, s') pair
costs, and the 9 pairs matter only through their tree sizes: the workflow's like-for-like timing experiment
(config.yaml, rgf_fig15_timing*) then times every J at one s. This script fits GBDT with square loss (the paper's
GBDT for both tasks, +-1 targets for classification) to l total leaves (l / J trees, not staged) on a prepared
2000-point training split, for a few J and s, and prints wall and CPU seconds per fit::

    PYTHONPATH=src nice -n 10 python studies/rgf_fig15_shrinkage.py data/processed/nursery/split0.npz \\
        --out studies/results/rgf_fig15_shrinkage_nursery.csv
"""

import argparse
import time

import numpy as np
import pandas as pd
from sklearn.ensemble import GradientBoostingRegressor

from treeopt.data import load_split


def timed_fit(X, y, J, s, leaves, seed):
    """(wall, CPU) seconds of one GBDT fit of ``leaves / J`` trees of ``J`` leaves at shrinkage ``s``."""
    model = GradientBoostingRegressor(max_leaf_nodes=J, max_depth=None, learning_rate=s, min_samples_leaf=10,
                                      n_estimators=leaves // J, random_state=seed)
    wall, cpu = time.perf_counter(), time.process_time()
    model.fit(X, y)
    return time.perf_counter() - wall, time.process_time() - cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("split", help="a prepared split (.npz)")
    parser.add_argument("--sizes", default="2,8,64", help="tree sizes J")
    parser.add_argument("--shrinkage", default="1.0,0.1,0.01", help="shrinkage values s")
    parser.add_argument("--leaves", type=int, default=10000, help="total leaves l (the end of the leaf axis)")
    parser.add_argument("--repeats", type=int, default=2, help="fits per (J, s), interleaved over s")
    parser.add_argument("--out", help="CSV of every fit")
    args = parser.parse_args()
    split = load_split(args.split)
    X, y = split.X_train, split.y_train
    if split.task == "classification":
        y = np.where(y == np.unique(y)[-1], 1.0, -1.0)  # +-1 targets, as the square-loss classifier
    rows = []
    for rep in range(args.repeats):
        for J in map(int, args.sizes.split(",")):
            for s in map(float, args.shrinkage.split(",")):  # s innermost: drifting machine load hits every s alike
                wall, cpu = timed_fit(X, y, J, s, args.leaves, seed=0)
                rows.append({"J": J, "s": s, "repeat": rep, "wall_seconds": wall, "cpu_seconds": cpu})
                print(f"J={J:3d} s={s:<5g} rep {rep}: wall {wall:7.3f} s, CPU {cpu:7.3f} s", flush=True)
    table = pd.DataFrame(rows)
    summary = table.groupby(["J", "s"])[["wall_seconds", "cpu_seconds"]].mean()
    print(summary.round(3).to_string())
    if args.out:
        table.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
