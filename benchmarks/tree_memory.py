"""Peak memory of growing oblique trees against the size of the data they are grown on.

    python benchmarks/tree_memory.py --datasets fashion_mnist covtype_like --learners co2 oc1 random_oblique \
        [--max-depth 4] [--n-trees 1] [--n-jobs 1] [--out benchmarks/results/tree_memory.csv]

Each measurement runs in its own process (so the peaks do not mix): it loads the split, joins training and
validation rows as a final run does (float64, C order: the ``data_mb`` column), notes the resident memory
(``loaded_mb``, after a warm-up fit on 300 rows has loaded the numba kernels), then grows ``--n-trees`` bagged trees of the learner (one bootstrap sample each, as in a
forest) with ``--n-jobs`` threads and keeps none of them (:meth:`BaggedTreesClassifier.fit_iter`). ``peak_mb``
is the process's high-water mark (``getrusage``); ``extra_mb = peak_mb - loaded_mb`` is what growing took;
``extra_per_worker`` is ``extra_mb / (n_jobs * data_mb)``, the memory a tree being grown costs as a multiple
of the data matrix. ``--max-depth`` caps the trees (OC1 and random-oblique trees on these sets take hours to
grow to purity; memory is largest at the root, whose node holds every sampled point).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
LEARNERS = {
    "co2": ("treeopt.forest:CO2ForestClassifier", {"nu": 1.0, "learning_rate": 0.01}),
    "oc1": ("treeopt.forest:OC1ForestClassifier", {"n_restarts": 2}),
    "random_oblique": ("treeopt.forest:BaggedTreesClassifier", {}),
}


def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def measure(dataset, learner, max_depth, n_trees, n_jobs, processed_dir=ROOT / "data/processed"):
    import importlib

    from treeopt.data import load_split

    split = load_split(Path(processed_dir) / dataset / "split0.npz")
    X = np.ascontiguousarray(np.vstack([split.X_train, split.X_val]))
    y = np.concatenate([split.y_train, split.y_val])
    del split
    path, params = LEARNERS[learner]
    module, _, name = path.partition(":")
    cls = getattr(importlib.import_module(module), name)
    q = max(1, int(round(X.shape[1] ** 0.5)))
    if learner == "random_oblique":
        from treeopt.greedy import RandomObliqueTreeClassifier

        forest = cls(RandomObliqueTreeClassifier(n_hyperplanes=100, max_depth=max_depth), n_estimators=n_trees,
                     n_jobs=n_jobs, random_state=0)
    else:
        forest = cls(n_estimators=n_trees, max_depth=max_depth, max_features=q, n_jobs=n_jobs, random_state=0,
                     **params)
    # warm up on 300 rows first: loading or compiling the numba kernels takes tens of MB that are not the tree's
    warm = cls(**{**forest.get_params(deep=False), "n_estimators": 1, "n_jobs": 1})
    for _ in warm.fit_iter(X[:300], y[:300]):
        pass
    loaded = rss_mb()
    start, cpu = time.perf_counter(), time.process_time()
    nodes = []
    for est in forest.fit_iter(X, y):
        nodes.append(int(est.tree_.n_nodes))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
    data_mb = X.nbytes / 1e6
    return {"dataset": dataset, "learner": learner, "n": X.shape[0], "p": X.shape[1], "max_depth": max_depth,
            "n_trees": n_trees, "n_jobs": n_jobs, "data_mb": round(data_mb, 1), "loaded_mb": round(loaded, 1),
            "peak_mb": round(peak, 1), "extra_mb": round(peak - loaded, 1),
            "extra_per_worker": round((peak - loaded) / (n_jobs * data_mb), 3),
            "nodes_per_tree": float(np.mean(nodes)), "seconds": round(time.perf_counter() - start, 1),
            "cpu_seconds": round(time.process_time() - cpu, 1)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["fashion_mnist", "covtype_like"])
    parser.add_argument("--learners", nargs="+", default=list(LEARNERS), choices=list(LEARNERS))
    parser.add_argument("--max-depth", type=int, default=None)
    parser.add_argument("--n-trees", type=int, default=1)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--out", default=None, help="CSV to append the rows to")
    parser.add_argument("--processed-dir", default=str(ROOT / "data/processed"),
                        help="prepared splits ({dataset}/split0.npz)")
    parser.add_argument("--one", nargs=2, metavar=("DATASET", "LEARNER"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure(*args.one, args.max_depth, args.n_trees, args.n_jobs, args.processed_dir)))
        return 0
    rows = []
    for dataset in args.datasets:
        for learner in args.learners:
            cmd = [sys.executable, __file__, "--one", dataset, learner, "--n-trees", str(args.n_trees),
                   "--n-jobs", str(args.n_jobs), "--processed-dir", args.processed_dir]
            if args.max_depth is not None:
                cmd += ["--max-depth", str(args.max_depth)]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            row = json.loads(out.strip().splitlines()[-1])
            print(json.dumps(row), flush=True)
            rows.append(row)
    if args.out:
        import pandas as pd

        table = pd.DataFrame(rows)
        header = not Path(args.out).exists()
        table.to_csv(args.out, mode="a", header=header, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
