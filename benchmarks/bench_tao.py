"""TAO speed: one C value, to convergence, from a depth-12 initial tree on a 48,000 x 784 training set.

The TAO paper (Sec. 4) reports 1-4 minutes per C on a 2-core laptop for MNIST (48k training points, initial
depths 4-12). MNIST's training images are not mirrored, so Fashion-MNIST (same shape, 48k/12k/10k split of
config.yaml) stands in. The script times the whole ``fit`` (initial CART tree excluded: it is built once and
passed as ``init``), the time spent inside LIBLINEAR's ``train`` (summed over calls), and the wall time with
1 and 2 threads solving the nodes of one depth level. ``liblinear_share`` = LIBLINEAR seconds summed over all
calls / wall seconds of the fit, so with 2 threads it can exceed 1 (both threads inside LIBLINEAR).
``cpu_seconds`` is the CPU time of the fitting process (all threads), which other jobs on a shared machine do
not inflate: on 2 otherwise idle cores the fit takes about cpu_seconds / 2 (2 threads) to cpu_seconds.
``est_idle_wall`` replays the fit's node solves (their thread CPU times) on ``n_jobs`` idle threads in the
fit's own schedule, ``est_idle_wall_level_barriers`` in the previous level-by-level schedule
(``benchmarks/tao_schedule.py``): an estimate of the idle-machine wall time from a run on a loaded machine.
Writes ``benchmarks/results/tao_speed.csv`` and, per TAO pass, ``benchmarks/results/tao_speed_passes.csv``.

    python benchmarks/bench_tao.py --dataset fashion_mnist --depth 12 --C 0.1 --jobs 1,2
    python benchmarks/bench_tao.py --jobs 2 --shift --out benchmarks/results/tao_speed_shift.csv   # comparison
"""

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd

from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.greedy import AxisAlignedTreeClassifier
from treeopt.tao import TAOTreeClassifier

from tao_schedule import COLUMNS, estimate  # noqa: E402  (benchmarks/ is on sys.path when this script runs)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="config.yaml")
    parser.add_argument("--dataset", default="fashion_mnist")
    parser.add_argument("--depth", type=int, default=12)
    parser.add_argument("--C", type=float, default=0.1)
    parser.add_argument("--jobs", default="1,2")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--params", default="{}", help='extra TAOTreeClassifier params as JSON, e.g. \'{"regularize_bias": true}\'')
    parser.add_argument("--shift", action="store_true",
                        help="hand LIBLINEAR X minus its column modes (TAOTreeClassifier._shift_features; default off)")
    parser.add_argument("--out", default="benchmarks/results/tao_speed.csv")
    parser.add_argument("--passes-out", default="benchmarks/results/tao_speed_passes.csv",
                        help="per TAO pass: wall, node-solve seconds summed over threads, largest solve, LIBLINEAR seconds")
    parser.add_argument("--tasks-out", default=None, help="CSV of every node solve (one file per n_jobs)")
    args = parser.parse_args(argv)

    TAOTreeClassifier._shift_features = args.shift
    TAOTreeClassifier._record_tasks = True  # thread CPU per node solve, for the idle-machine wall estimate
    split = load_split(prepare_split(args.dataset, load_config(args.config), args.seed))
    X, y = split.X_train, split.y_train
    print(f"{args.dataset}: train {X.shape}, test {split.X_test.shape}", flush=True)
    start = time.perf_counter()
    cart = AxisAlignedTreeClassifier(max_depth=args.depth, random_state=args.seed).fit(X, y)
    cart_seconds = time.perf_counter() - start
    # warm up numba's compiled kernels on a small problem so compilation is not timed
    TAOTreeClassifier(C=args.C, max_depth=3, max_iter=1).fit(X[:500], y[:500])
    rows, levels = [], []
    for n_jobs in [int(j) for j in args.jobs.split(",")]:
        est = TAOTreeClassifier(C=args.C, init=cart, n_jobs=n_jobs, random_state=args.seed, **json.loads(args.params))
        load_before = os.getloadavg()[0]
        start, cpu_start = time.perf_counter(), time.process_time()
        est.fit(X, y)
        seconds = time.perf_counter() - start
        cpu_seconds = time.process_time() - cpu_start  # all threads of this process: independent of others' load
        stats = est.tree_.stats()
        passes = pd.DataFrame(est.pass_stats_).merge(estimate(est.task_log_, est.task_parents_, est.pass_stats_,
                                                              n_threads=n_jobs), on=["C", "iteration"])
        row = {
            "dataset": args.dataset, "n_train": X.shape[0], "n_features": X.shape[1], "depth": args.depth,
            "C": args.C, "params": args.params, "shift": args.shift, "n_jobs": n_jobs, "fit_seconds": seconds, "cpu_seconds": cpu_seconds, "liblinear_seconds": est.liblinear_seconds_,
            "liblinear_share": est.liblinear_seconds_ / seconds, "n_iter": est.n_iter_,
            "node_solves": est.fit_stats_["node_solves"], "node_solves_skipped": est.fit_stats_["node_solves_skipped"],
            "cart_seconds": cart_seconds, "init_train_error": 100 * est.history_[0],
            "train_error": 100 * est.history_[-1],
            "test_error": 100 * float(np.mean(est.predict(split.X_test) != split.y_test)),
            "cart_test_error": 100 * float(np.mean(cart.predict(split.X_test) != split.y_test)),
            "init_internal": int(cart.tree_.stats()["n_internal"]), "n_internal": stats["n_internal"],
            "nonzero_weights": stats["nonzero_weights"], "cpu_count": os.cpu_count(),
            # the passes replayed on n_jobs otherwise idle threads from the solves' thread CPU (tao_schedule.py)
            "node_cpu_seconds": passes["cpu_seconds"].sum(), "est_idle_wall": passes["tree_wall"].sum(),
            "est_idle_wall_level_barriers": passes["levels_wall"].sum(),
            "load_avg_1min_before": load_before, "load_avg_1min": os.getloadavg()[0], "machine": platform.machine(),
        }
        print(row, flush=True)
        rows.append(row)
        levels.append(passes.assign(n_jobs=n_jobs))
        if args.tasks_out:  # every node solve: depth, points, care points, thread CPU, LIBLINEAR seconds
            pd.DataFrame(est.task_log_, columns=COLUMNS).assign(n_jobs=n_jobs).to_csv(
                args.tasks_out.replace(".csv", f"_jobs{n_jobs}.csv"), index=False, float_format="%.4g")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    table = pd.DataFrame(rows)
    if len(table) > 1:
        table["speedup_vs_1"] = table["fit_seconds"].iloc[0] / table["fit_seconds"]
    table.to_csv(out, index=False, float_format="%.4g")
    print(table.to_string(index=False))
    pd.concat(levels).to_csv(args.passes_out, index=False, float_format="%.4g")


if __name__ == "__main__":
    main()
