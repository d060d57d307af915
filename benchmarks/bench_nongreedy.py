"""Non-greedy trees (Norouzi et al. 2015): SGD throughput against depth, and fast vs exact epoch time (Fig. 4).

``throughput``: samples per second of one (Stable) SGD epoch with fast loss-augmented inference (eq. (13)) at
depths 6-18, for p = 126 (Connect-4) and p = 784 (Fashion-MNIST, standing in for MNIST whose training images
are not mirrored). W is a random complete tree (heap order, so the depth-d tree is the first 2^d - 1 rows of
the depth-18 one): every sample then walks full-depth paths, the worst case and the paper's d^2 p count.
Fast inference computes d(d+1)/2 inner products ``w_i . x`` (the inference path, d, plus below each of its
d nodes the sgn-path from the other child, d-1-t) of 2p FLOPs each: ``d (d+1) p`` FLOPs per sample. It is
reported beside the throughput as achieved GFLOP/s and as a fraction of one core's peak, measured in the
same run as the GFLOP/s of a single-threaded numpy (BLAS) float64 matrix product.

``fast-vs-exact``: wall and CPU seconds of one full SGD epoch (Alg. 1 with momentum, mini-batches of 100) on
the Connect-4 training set (44,000 x 126) with fast (eq. (13)) and exact (eq. (10)-(12)) inference, from the
same initial tree (information-gain axis-aligned tree of that depth, padded to the complete tree), so both
epochs start from identical W, Theta. The issue's target: >= 50x at depth 14.

Timings are meant to run at normal priority under ``flock /tmp/treeopt-bench.lock`` (the machine is shared);
``/proc/loadavg`` before and after and the CPU time of the process are recorded beside wall time.

    flock /tmp/treeopt-bench.lock python benchmarks/bench_nongreedy.py throughput
    flock /tmp/treeopt-bench.lock python benchmarks/bench_nongreedy.py fast-vs-exact --depths 14
"""

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.greedy import AxisAlignedTreeClassifier
from treeopt.nongreedy import _init, _sgd
from treeopt.nongreedy.estimator import run_epoch

ROOT = Path(__file__).resolve().parents[1]
DATASETS = {126: "connect4", 784: "fashion_mnist"}


def loadavg():
    return Path("/proc/loadavg").read_text().split()[0]


def peak_gflops(n=1500, repeats=5):
    """Best single-thread float64 GEMM GFLOP/s over a few repeats (2 n^3 FLOPs each)."""
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(n, n)), rng.normal(size=(n, n))
    best = np.inf
    with threadpool_limits(1):
        a @ b
        for _ in range(repeats):
            start = time.perf_counter()
            a @ b
            best = min(best, time.perf_counter() - start)
    return 2 * n**3 / best / 1e9


def training_data(dataset):
    split = load_split(prepare_split(dataset, load_config(ROOT / "config.yaml"), 0))
    X = np.ascontiguousarray(split.X_train, dtype=np.float64)
    _, y = np.unique(split.y_train, return_inverse=True)
    return X, y.astype(np.int64), int(y.max()) + 1


def timed_epoch(X, y, W, b, Theta, depth, *, fast, stable, seed=0, eta=0.01, nu=1.0):
    n = X.shape[0]
    tree = _sgd.Params(W, b, Theta)
    state = _sgd.epoch_state(tree, n, seed)
    assign = _sgd.route_all(X, W, b)
    data = _sgd.data(X, y, np.zeros((n, 1)))
    before = loadavg()
    start, cpu = time.perf_counter(), time.process_time()
    run_epoch(state, data, tree, assign, loss=_sgd.LOG_LOSS, fast=fast, stable=stable, nu=nu, eta=eta, momentum=0.9,
              batch_size=100)
    return time.perf_counter() - start, time.process_time() - cpu, before, loadavg()


def warm_up():
    """Compile the kernels (both inferences, both SGD variants) outside the timings."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 5)), rng.integers(0, 3, 200).astype(np.int64)
    for fast in (True, False):
        for stable in (True, False):
            W, b, T = rng.normal(size=(7, 5)), rng.normal(size=7), rng.normal(size=(8, 3))
            timed_epoch(X, y, W, b, T, 3, fast=fast, stable=stable)


def throughput(args):
    peak = peak_gflops(args.gemm_size)
    print(f"one core: {peak:.2f} GFLOP/s (single-thread float64 GEMM)", flush=True)
    rows = []
    for p in [int(v) for v in args.p.split(",")]:
        X, y, k = training_data(args.dataset or DATASETS[p])
        p = X.shape[1]
        n = min(args.n, X.shape[0])
        X, y = np.ascontiguousarray(X[:n]), y[:n]
        depths = [int(d) for d in args.depths.split(",")]
        rng = np.random.default_rng(0)
        m_max = 2 ** max(depths) - 1
        W_all = rng.random((m_max, p))  # random hyperplanes through the (z-scored) data cloud
        W_all -= 0.5  # in place: at d = 18, p = 784 W is 1.6 GB
        b_all = rng.normal(scale=0.1, size=m_max)
        for depth in depths:
            m = 2**depth - 1
            for stable in (False, True):
                W, b = W_all[:m].copy(), b_all[:m].copy()
                Theta = rng.normal(size=(m + 1, k))
                wall, cpu, la0, la1 = timed_epoch(X, y, W, b, Theta, depth, fast=True, stable=stable)
                flops = depth * (depth + 1) * p
                gflops = flops * n / cpu / 1e9
                row = {"dataset": args.dataset or DATASETS[p], "p": p, "depth": depth, "split_rows": m,
                       "sgd": "ssgd" if stable else "sgd", "inference": "fast", "n_samples": n,
                       "wall_seconds": wall, "cpu_seconds": cpu, "samples_per_second_wall": n / wall,
                       "samples_per_second_cpu": n / cpu, "fast_inference_flops_per_sample": flops,
                       "inference_gflops_per_cpu_second": gflops, "core_peak_gflops": peak,
                       "fraction_of_core_peak": gflops / peak, "loadavg_before": la0, "loadavg_after": la1,
                       "machine": platform.processor() or platform.machine(), "cpu_count": os.cpu_count()}
                rows.append(row)
                print(f"p={p} d={depth} {row['sgd']}: {n / cpu:,.0f} samples/s (CPU), {n / wall:,.0f} (wall), "
                      f"{flops:,} FLOP/sample, {gflops:.2f} GFLOP/s = {100 * gflops / peak:.1f}% of one core "
                      f"(load {la0} -> {la1})", flush=True)
        del W_all
    out = Path(args.out or "benchmarks/results/nongreedy_throughput.csv")
    pd.DataFrame(rows).to_csv(out, index=False)
    print(f"wrote {out}")


def fast_vs_exact(args):
    dataset = args.dataset or "connect4"
    X, y, k = training_data(dataset)
    rows = []
    for depth in [int(d) for d in args.depths.split(",")]:
        tree = AxisAlignedTreeClassifier(max_depth=depth, random_state=0).fit(X, y).tree_
        W0, b0, T0, _ = _init.start(tree, depth, X, _sgd.LOG_LOSS, y, np.zeros((len(y), 1)), k, args.nu)
        times = {}
        for inference, repeats in (("fast", args.fast_repeats), ("exact", 1)):
            for _ in range(repeats):
                wall, cpu, la0, la1 = timed_epoch(X, y, W0.copy(), b0.copy(), T0.copy(), depth,
                                                  fast=inference == "fast", stable=False, nu=args.nu)
                times.setdefault(inference, []).append((wall, cpu))
                rows.append({"dataset": dataset, "n_train": X.shape[0], "p": X.shape[1], "depth": depth,
                             "inference": inference, "sgd": "sgd", "wall_seconds": wall, "cpu_seconds": cpu,
                             "loadavg_before": la0, "loadavg_after": la1})
                print(f"d={depth} {inference}: epoch {wall:.2f} s wall, {cpu:.2f} s CPU (load {la0} -> {la1})",
                      flush=True)
        fast_cpu = min(c for _, c in times["fast"])
        fast_wall = min(w for w, _ in times["fast"])
        exact_wall, exact_cpu = times["exact"][0]
        print(f"d={depth}: exact/fast = {exact_cpu / fast_cpu:.1f}x (CPU), {exact_wall / fast_wall:.1f}x (wall)",
              flush=True)
        for row in rows:
            if row["depth"] == depth:
                row["speedup_cpu"] = exact_cpu / fast_cpu
                row["speedup_wall"] = exact_wall / fast_wall
    out = Path(args.out or "benchmarks/results/nongreedy_fast_vs_exact.csv")
    pd.DataFrame(rows).to_csv(out, index=False)
    print(f"wrote {out}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["throughput", "fast-vs-exact"])
    parser.add_argument("--p", default="126,784", help="throughput: feature counts (126 Connect-4, 784 F-MNIST)")
    parser.add_argument("--depths", default=None)
    parser.add_argument("--n", type=int, default=10000, help="throughput: samples in the timed epoch")
    parser.add_argument("--nu", type=float, default=1.0)
    parser.add_argument("--fast-repeats", type=int, default=3)
    parser.add_argument("--out", default=None)
    parser.add_argument("--dataset", default=None, help="another data set than Connect-4 / Fashion-MNIST (its own p)")
    parser.add_argument("--gemm-size", type=int, default=1500, help="throughput: matrix size of the GEMM peak")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny run in the current folder (digits, depths 2-3, 300 samples): the script works; "
                             "needs --out")
    args = parser.parse_args(argv)
    if args.smoke:
        if args.out is None:
            parser.error("--smoke needs --out (never writes over the committed results)")
        args.dataset, args.depths, args.p = args.dataset or "digits", args.depths or "2,3", "0"
        args.n, args.fast_repeats, args.gemm_size = min(args.n, 300), 1, 200
    else:
        os.chdir(ROOT)
    warm_up()
    if args.what == "throughput":
        args.depths = args.depths or "6,8,10,12,14,16,18"
        throughput(args)
    else:
        args.depths = args.depths or "14"
        fast_vs_exact(args)


if __name__ == "__main__":
    main()
