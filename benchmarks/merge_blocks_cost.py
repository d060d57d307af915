"""CPU seconds of merging a forest's tree blocks (treeopt.experiments.run.block_sums.merge_blocks) per GB of block sums
read: the cost model's ``merge`` entry (cost_model.yaml).

    PYTHONPATH=src python benchmarks/merge_blocks_cost.py ROWS CLASSES [--dir /tmp/merge_bench]

Writes 20 synthetic blocks of 50 trees (a 1000-tree forest, staged sizes 100 and 300 inside blocks) with random
sums of ROWS x CLASSES, merges them three times in this process and prints the process CPU seconds of each merge (the
first one includes the imports and numba kernels a merge job loads once). The folder is removed at the end.
"""

import argparse
import json
import shutil
import time
from pathlib import Path

import numpy as np

from treeopt.experiments.plan.tree_blocks import block_ranges
from treeopt.experiments.run.block_sums import merge_blocks


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", type=int)
    parser.add_argument("classes", type=int)
    parser.add_argument("--dir", default="/tmp/merge_bench")
    args = parser.parse_args(argv)
    root, rows, k, n_trees, block = Path(args.dir), args.rows, args.classes, 1000, 50
    shutil.rmtree(root, ignore_errors=True)
    rng = np.random.default_rng(0)
    expect = dict(dataset="d", method="oc1_forest", params={}, seed=0, fit_on="trainval", split_sha256="x",
                  n_estimators=n_trees, block_trees=block)
    dirs, stages = [], [100, 300]
    try:
        for trees in block_ranges(n_trees, block):
            path = root / f"trees{trees.start}-{trees.stop}"
            path.mkdir(parents=True)
            inside = [m for m in stages if trees.start < m < trees.stop]
            np.savez(path / "sums.npz", train_sum=rng.random((rows, k)),
                     **{f"train_m{m}": rng.random((rows, k)) for m in inside})
            record = dict(expect, trees=[trees.start, trees.stop], stages=inside, classes=list(range(k)),
                          model=False, tree_stats=[{"depth": 3.0}] * len(trees), leaves=[5] * len(trees),
                          oblique=[2] * len(trees), fallbacks=[], fit_seconds=1.0, predict_seconds=0.1)
            (path / "block.json").write_text(json.dumps(record))
            dirs.append(path)
        gb = (len(dirs) + len(stages)) * rows * k * 8 / 1e9
        for _ in range(3):
            start = time.process_time()
            merge_blocks(dirs, expect, np.arange(k), {"train": rows}, [*stages, n_trees])
            cpu = time.process_time() - start
            print(f"rows {rows} x {k} classes: {gb:.3f} GB of sums, {cpu:.3f} CPU-s, {cpu / gb:.2f} CPU-s per GB")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
