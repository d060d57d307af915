"""What a depth sweep saves when every depth is read off one level-order fit (issue #37, ``path: max_depth``).

Fits OC1 trees grown level by level (``grow_order="level"``) on a Connect-4 training part at depths 6-18 one by one,
and once at depth 18, and prints each depth's node count, test accuracy and whether ``depth_step`` of the deep fit
is that depth's own tree (every array equal), then the process CPU of the seven fits against the one.

    python studies/oc1_depth_path.py --rows 11000 --restarts 1 --out studies/results/oc1_depth_path.jsonl
    python studies/oc1_depth_path.py --restarts 1 --out studies/results/oc1_depth_path.jsonl
"""

import argparse
import json
import time

import numpy as np

from treeopt.data import load_split
from treeopt.greedy import OC1TreeClassifier

DEPTHS = (6, 8, 10, 12, 14, 16, 18)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="data/processed/connect4/split0.npz")
    parser.add_argument("--rows", type=int, default=None, help="the first ROWS training rows (default: all)")
    parser.add_argument("--restarts", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="append the summary as a JSON line to this file")
    args = parser.parse_args()
    split = load_split(args.split)
    X, y = split.X_train[:args.rows], split.y_train[:args.rows]
    params = dict(n_restarts=args.restarts, n_perturbations=5, max_features="sqrt", grow_order="level",
                  random_state=args.seed)
    OC1TreeClassifier(max_depth=2, **params).fit(X[:500], y[:500])  # compile the kernels outside the timings
    start = time.process_time()
    deep = OC1TreeClassifier(max_depth=max(DEPTHS), **params).fit(X, y)
    one = time.process_time() - start
    seven, same = 0.0, []
    for depth in DEPTHS:
        start = time.process_time()
        alone = OC1TreeClassifier(max_depth=depth, **params).fit(X, y)
        seven += time.process_time() - start
        a, b = alone.tree_.to_arrays(), deep.depth_step(depth).tree_.to_arrays()
        same.append(all(np.array_equal(a[k], b[k]) for k in a if k != "meta"))
        print(depth, alone.tree_.n_nodes, round(100 * alone.score(split.X_test, split.y_test), 2), same[-1], flush=True)
    summary = {"rows": int(X.shape[0]), "restarts": args.restarts, "seed": args.seed, "one_fit_cpu_s": round(one, 2),
               "seven_fits_cpu_s": round(seven, 2), "ratio": round(seven / one, 2), "all_same": all(same)}
    print(json.dumps(summary))
    if args.out:
        with open(args.out, "a") as f:
            f.write(json.dumps(summary) + "\n")


if __name__ == "__main__":
    main()
