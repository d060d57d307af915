"""The CO2 segmentation tree with and without the presort of all 2,883 window values (issue #37).

    PYTHONPATH=src python benchmarks/seg_lfw_size.py make           # LFW-shaped synthetic faces, once
    PYTHONPATH=src python studies/seg_axis_sort.py --windows 16000 --trees 2 --seeds 0 1 2 3 4

Fits ``ForestSegmenter(split_kind="co2")`` forests (the paper's nu 1, eta 1e-4; one thread) with
``axis_sort="presorted"`` and ``"per_node"`` one after the other for each seed, and scores the validation images.
The two sorts find the same cuts up to the order in which tied points are summed (window values are 256 pixel
levels, so they tie), so the trees differ where two cuts' gains tie to rounding; what must not differ is how
well they do. Prints and appends to ``studies/results/seg_axis_sort.jsonl`` one JSON line per fit: process CPU of
the fit, nodes, peak memory so far, validation Jaccard (class average, re-weighted, as the tables report it).
"""

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from seg_lfw_size import DATA, load, params  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "seg_axis_sort.jsonl"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=16000)
    parser.add_argument("--trees", type=int, default=2)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--val", type=int, default=100, help="validation images scored")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args(argv)
    from treeopt.segmentation import ForestSegmenter
    from treeopt.segmentation.windows import confusion, jaccard_from_confusion

    X, y, X_val, y_val = load(args.data)
    X_val, y_val = X_val[:args.val], y_val[:args.val]
    k = int(y.max()) + 1
    for seed in args.seeds:
        for axis_sort in ("presorted", "per_node"):
            seg = ForestSegmenter(**{**params("co2", args.trees, args.windows, None), "random_state": seed},
                                  axis_sort=axis_sort)
            t = time.process_time()
            seg.fit(X, y)
            fit = time.process_time() - t
            jaccard = jaccard_from_confusion(confusion(y_val, seg.predict(X_val), k))[0]
            row = {"axis_sort": axis_sort, "seed": seed, "windows": args.windows, "trees": args.trees,
                   "fit_cpu": round(fit, 2), "nodes": int(sum(e.tree_.left.shape[0] for e in seg.estimators_)),
                   "val_jaccard": round(float(jaccard), 3), "val_images": int(X_val.shape[0]),
                   "peak_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6, 2),
                   "load": round(os.getloadavg()[0], 2)}
            print(json.dumps(row), flush=True)
            with OUT.open("a") as out:
                out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
