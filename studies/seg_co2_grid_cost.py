"""What one CO2 segmentation tree costs at each point of the paper's (nu, eta) grid (issue #37: the cost model
charges all 36 candidates of ``co2_segmentation_trees`` the tree measured at nu = 1, eta = 1e-4).

    PYTHONPATH=src python benchmarks/seg_lfw_size.py make          # the LFW-shaped images, once
    PYTHONPATH=src python studies/seg_co2_grid_cost.py [--windows 16000] [--out studies/results/seg_co2_grid_cost.csv]

For each grid point: one ``ForestSegmenter`` tree (split_kind "co2", seed 0, depth unbounded, one thread) on
``--windows`` class-balanced windows of the synthetic LFW-shaped faces; process CPU seconds of the fit, the tree's
internal nodes and its stumps' epochs (``node_epochs_``: the sample-epochs are each node's epochs times its points).
One CSV row per point, appended as it finishes (a rerun skips the points already in the file).
"""

import argparse
import csv
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from seg_lfw_size import DATA, load  # noqa: E402

NU = [0.1, 1, 4, 10, 43, 100]
ETA = [0.00001, 0.0001, 0.0003, 0.0006, 0.001, 0.003]
FIELDS = ["nu", "learning_rate", "windows", "fit_cpu", "internal_nodes", "mean_epochs", "sample_epochs",
          "depth", "load"]


def one(X, y, nu, eta, windows):
    from treeopt.segmentation import ForestSegmenter

    seg = ForestSegmenter(split_kind="co2", n_estimators=1, windows_per_tree=windows, nu=nu, learning_rate=eta,
                          n_jobs=1, random_state=0)
    c0 = time.process_time()
    seg.fit(X, y)
    cpu = time.process_time() - c0
    tree = seg.estimators_[0]
    t = tree.tree_
    internal = ~np.asarray(t.is_leaf)
    epochs = np.asarray(tree.node_epochs_, dtype=float)  # 0 at leaves
    return {"nu": nu, "learning_rate": eta, "windows": windows, "fit_cpu": round(cpu, 2),
            "internal_nodes": int(internal.sum()), "mean_epochs": round(float(epochs[internal].mean()), 2),
            "sample_epochs": float(np.sum(epochs * np.asarray(t.n_samples, dtype=float))),
            "depth": int(t.max_depth), "load": round(os.getloadavg()[0], 2)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--windows", type=int, default=16000)
    parser.add_argument("--out", type=Path, default=Path("studies/results/seg_co2_grid_cost.csv"))
    args = parser.parse_args()
    X, y, _, _ = load(args.data)
    done = set()
    if args.out.exists():
        with open(args.out) as f:
            done = {(float(r["nu"]), float(r["learning_rate"]), int(r["windows"])) for r in csv.DictReader(f)}
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "w", newline="") as f:
            csv.DictWriter(f, FIELDS).writeheader()
    one(X[:4], y[:4], 1.0, 1e-4, 300)  # numba kernels compiled or loaded outside the timed fits
    for nu in NU:
        for eta in ETA:
            if (float(nu), float(eta), args.windows) in done:
                continue
            row = one(X, y, nu, eta, args.windows)
            with open(args.out, "a", newline="") as f:
                csv.DictWriter(f, FIELDS).writerow(row)
            print(row, flush=True)


if __name__ == "__main__":
    main()
