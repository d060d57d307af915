"""The CO2 stump kernel with and without fused epochs (issue #37): CPU nanoseconds per sample-epoch by row size.

``co2_stump_sgd`` reads every row of a node twice per epoch when unfused (the surrogate pass at the epoch's start,
then the mini-batches) and once when fused (``treeopt.greedy._co2_sgd.sgd_epoch_with_pass``). At rows of
thousands of values the node does not fit in cache and a sample-epoch is bound by memory traffic (docs/cost.md
"Inside a CO2 segmentation tree"); at short rows it is bound by its per-point work. This script times one stump
descent both ways on the same synthetic node (float32 values on 256 levels like segmentation windows, 3 classes,
the segmentation defaults nu 1, eta 1e-4, a 30-epoch budget) at several shapes, alternating the two ``--repeats``
times in one process (the kernel compiled or loaded from the cache by a warm-up first), and writes the medians, the
speed-up and how far the two descents' final surrogates are apart (round-off: the fused code adds in another order).

    python benchmarks/bench_co2_fused.py                 # writes benchmarks/results/co2_fused_speed.csv
    python benchmarks/bench_co2_fused.py --smoke --out /tmp/x.csv
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
# (rows, features): segmentation windows (31 x 31 x 3) at a 32,000-window node, Fashion-MNIST-wide rows, two
# narrower widths, Covtype's width (short rows: the automatic rule leaves these unfused) and Letter's
SHAPES = ((32000, 2883), (48000, 784), (60000, 512), (100000, 256), (400000, 54), (20000, 16))
SMOKE_SHAPES = ((600, 300), (2000, 16))


def node(u, p, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 256, size=(u, p)).astype(np.float32) / 255 - 0.5
    y = rng.integers(0, 3, u)
    y[X[:, 0] > 0.2] = 0  # one direction that separates a class: the descent has something to find
    return X, y


def descend(X, y, fuse, epochs):
    from treeopt.greedy._co2_sgd import co2_stump_sgd

    u, p = X.shape
    w, theta, history = np.zeros(p), np.zeros((2, 3)), np.empty(epochs + 1)
    w[0] = 0.9
    started = time.process_time()
    _, n_epochs, _, _ = co2_stump_sgd((X, y, np.arange(u), np.ones(u)), (w, 0.1, theta), (1.0, 1e-4, 0.9, 100, 1, 2),
                                      (epochs, 1e-3, 10, False), np.uint64(0), history, fuse)
    return time.process_time() - started, n_epochs, history[n_epochs]


def main(argv=None):
    from treeopt.greedy._co2_sgd import FUSE_ALWAYS, FUSE_NEVER, fuses

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--smoke", action="store_true", help="two tiny shapes, one repeat")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "co2_fused_speed.csv")
    args = parser.parse_args(argv)
    shapes, repeats = (SMOKE_SHAPES, 1) if args.smoke else (SHAPES, args.repeats)
    import pandas as pd

    X, y = node(300, 8)
    descend(X, y, FUSE_ALWAYS, 2)  # compile (or load) the kernel outside the timings
    rows = []
    for u, p in shapes:
        X, y = node(u, p)
        times = {FUSE_NEVER: [], FUSE_ALWAYS: []}
        final = {}
        for _ in range(repeats):
            for fuse in times:
                seconds, n_epochs, final[fuse] = descend(X, y, fuse, args.epochs)
                times[fuse].append(seconds / (n_epochs * u) * 1e9)
        row_bytes = p * X.itemsize
        auto = fuses(u, p, X.itemsize)  # what the kernel's automatic rule does with this node
        plain, fused = statistics.median(times[FUSE_NEVER]), statistics.median(times[FUSE_ALWAYS])
        rows.append({"rows": u, "features": p, "row_bytes": row_bytes, "node_mb": round(u * row_bytes / 2**20, 1),
                     "epochs": n_epochs, "unfused_ns": round(plain, 1), "fused_ns": round(fused, 1),
                     "speedup": round(plain / fused, 2), "automatic_rule": "fused" if auto else "unfused",
                     "surrogate_difference": abs(final[FUSE_NEVER] - final[FUSE_ALWAYS]),
                     "unfused_runs": " ".join(f"{t:.0f}" for t in times[FUSE_NEVER]),
                     "fused_runs": " ".join(f"{t:.0f}" for t in times[FUSE_ALWAYS])})
        print(rows[-1], flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(args.out, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
