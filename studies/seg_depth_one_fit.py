"""One level-order fit instead of five: what the segmentation depth sweep (CO2 paper Fig. 4 left) saves (issue #37).

    PYTHONPATH=src python benchmarks/seg_lfw_size.py make           # LFW-shaped synthetic faces, once
    PYTHONPATH=src python studies/seg_depth_one_fit.py --kind co2 --windows 16000 [--depths 10 15 20 25 30]

Fits one tree of a ``ForestSegmenter`` (one thread, the paper's nu 1, eta 1e-4 for CO2; 1,000 pairs for two-probe)
grown level by level to each depth of the sweep, separately, as the sweep did before (five fits), and checks that
the deepest fit cut at each depth is the shallower fit (the same tree store, node for node). Prints one JSON line
per depth: process CPU of the fit, CPU of scoring ``--score`` validation images with the tree cut at that depth, the
tree's nodes; then the totals: five fits against one fit plus the cuts' scoring. Appends the lines to
``studies/results/seg_depth_one_fit.jsonl``.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from seg_lfw_size import DATA, load, params  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "seg_depth_one_fit.jsonl"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=["co2", "two_probe"], default="co2")
    parser.add_argument("--windows", type=int, default=16000)
    parser.add_argument("--depths", type=int, nargs="+", default=[10, 15, 20, 25, 30])
    parser.add_argument("--score", type=int, default=2)
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args(argv)
    from treeopt.greedy._grow import level_order_prefix
    from treeopt.segmentation import ForestSegmenter

    X, y, X_val, _ = load(args.data)
    depths = sorted(args.depths)
    lines, fitted = [], {}
    for depth in depths:
        seg = ForestSegmenter(**params(args.kind, 1, args.windows, depth), grow_order="level")
        c0 = time.process_time()
        seg.fit(X, y)
        fit_cpu = time.process_time() - c0
        c0 = time.process_time()
        (_, sums), = seg.staged_sums(X_val[:args.score], [1])
        score_cpu = (time.process_time() - c0) / args.score
        fitted[depth] = (seg, sums.copy())
        lines.append({"kind": args.kind, "windows": args.windows, "depth": depth, "fit_cpu": round(fit_cpu, 2),
                      "score_cpu_per_image": round(score_cpu, 3), "nodes": int(seg.estimators_[0].tree_.left.size),
                      "load": round(os.getloadavg()[0], 2)})
        print(json.dumps(lines[-1]), flush=True)
    deep, _ = fitted[depths[-1]]
    cut_ok = {}
    for depth in depths:
        cut = level_order_prefix(deep.estimators_[0].tree_, depth)
        tree = fitted[depth][0].estimators_[0].tree_
        cut_ok[depth] = bool(np.array_equal(cut.left, tree.left) and np.array_equal(cut.bias, tree.bias)
                             and (cut.W != tree.W).nnz == 0)
    sums = {d: s.copy() for d, s in deep.depth_sums(X_val[:args.score], depths)}
    same_sums = all(np.array_equal(sums[d], fitted[d][1]) for d in depths)
    five = sum(line["fit_cpu"] + line["score_cpu_per_image"] for line in lines)
    one = lines[-1]["fit_cpu"] + sum(line["score_cpu_per_image"] for line in lines)
    total = {"kind": args.kind, "windows": args.windows, "depths": depths, "five_fits_cpu": round(five, 2),
             "one_fit_and_cuts_cpu": round(one, 2), "saved": round(1 - one / five, 3), "cut_is_the_fit": cut_ok,
             "sums_equal": same_sums, "note": "per tree and per scored image (CPU-s); load in the lines"}
    print(json.dumps(total), flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("a") as f:
        for line in [*lines, total]:
            f.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
