"""Face-part segmentation at LFW's size: CPU seconds of one candidate's parts (issue #37).

    PYTHONPATH=src python benchmarks/seg_lfw_size.py make                      # the images, once (~90 CPU-s)
    PYTHONPATH=src python benchmarks/seg_lfw_size.py time co2 --trees 1 --windows 256000 --score 3 [--profile]
    PYTHONPATH=src python benchmarks/seg_lfw_size.py fit co2 --windows 64000 --save /tmp/seg/co2.pkl
    PYTHONPATH=/tmp/base-seg/src python benchmarks/seg_lfw_size.py score --load /tmp/seg/co2.pkl --trees 16 --score 3

Images: synthetic faces (``treeopt.data.faces``) at LFW funneled's shape, 250 x 250, as many as the paper
profile's ``lfw_parts`` split: 2,577 training and 100 validation images. Labels: the generator's 8 parts mapped
onto 3 classes like ``lfw_parts``' (background, skin, hair): background -> 0; lower face, nose and mouth -> 1
("skin"); eyes and eyebrows -> 2 (the dark parts, standing in for hair). Kept in ``--data`` (an .npz).

``time`` fits a ``ForestSegmenter`` of ``--trees`` trees on ``--windows`` windows per tree (one thread) and labels
``--score`` validation images (every pixel inside the border, all forest sizes of a 16-tree run's stages), and
prints one JSON line: process CPU seconds of the window statistics, the fit (per tree) and the scoring (per image),
and the machine's load. ``--profile`` adds a cProfile table (CPU time) of the whole, per function. Run it with
``PYTHONPATH`` naming the code to time (old and new, alternating, for an A/B).

``fit`` does the same and pickles the fitted segmenter; ``score`` loads one and labels ``--score`` validation
images with a forest of ``--trees`` trees made by repeating its trees (the same work per tree as as many
distinct trees of that size: a scoring A/B of old and new code on one fitted forest, without fitting 16 trees).
"""

import argparse
import cProfile
import hashlib
import io
import json
import os
import pstats
import time
from pathlib import Path

import numpy as np

DATA = Path("/tmp/seg/lfw_like.npz")
N_TRAIN, N_VAL, SIZE = 2577, 100, 250
# generator label -> lfw_parts-like class: background, skin (lower face, nose, mouth), dark parts (eyes, brows)
TO_THREE = np.array([0, 1, 1, 1, 2, 2, 2, 2], dtype=np.uint8)


def make(path, n_train=N_TRAIN, n_val=N_VAL, size=SIZE):
    from treeopt.data.faces import make_synthetic_faces

    images, labels = make_synthetic_faces(n_train + n_val, size, random_state=37)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, images=images, labels=TO_THREE[labels], n_train=n_train)


def load(path):
    with np.load(path) as z:
        images, labels = z["images"], z["labels"]
        n_train = int(z["n_train"]) if "n_train" in z.files else N_TRAIN
    return images[:n_train], labels[:n_train], images[n_train:], labels[n_train:]


def params(kind, trees, windows, max_depth, nu=1.0, learning_rate=1e-4):
    base = {"n_estimators": trees, "windows_per_tree": windows, "max_depth": max_depth, "n_jobs": 1,
            "random_state": 0}
    if kind == "axis":
        return {"split_kind": "axis", **base}
    if kind == "two_probe":
        return {"split_kind": "two_probe", "n_pairs": 1000, **base}
    # default: the paper's choice on LFW; other grid points for check runs of the cost model's fit factors
    return {"split_kind": "co2", "nu": nu, "learning_rate": learning_rate, **base}


def time_candidate(args):
    from treeopt.segmentation import ForestSegmenter
    import treeopt

    X, y, X_val, y_val = load(args.data)
    if args.command == "fit":
        args.score = 1
    seg = ForestSegmenter(**params(args.kind, args.trees, args.windows, args.max_depth, args.nu, args.learning_rate))
    load_before = os.getloadavg()[0]
    prof = cProfile.Profile(time.process_time) if args.profile else None
    if prof:
        prof.enable()
    c0 = time.process_time()
    w0 = time.perf_counter()
    seg.fit(X, y)
    c1 = time.process_time()
    w1 = time.perf_counter()
    sizes = [m for m in (1, 2, 4, 8, 16) if m < args.trees] + [args.trees]
    reweighted, balanced = seg.staged_predict_both(X_val[:args.score], sizes)
    c2 = time.process_time()
    w2 = time.perf_counter()
    if prof:
        prof.disable()
    out = {"code": str(Path(treeopt.__file__).parent), "kind": args.kind, "trees": args.trees,
           **({"nu": args.nu, "learning_rate": args.learning_rate} if args.kind == "co2" else {}),
           "windows": args.windows, "max_depth": args.max_depth, "scored_images": args.score,
           "fit_cpu": c1 - c0, "fit_cpu_per_tree": (c1 - c0) / args.trees, "fit_wall": w1 - w0,
           "score_cpu": c2 - c1, "score_cpu_per_image": (c2 - c1) / args.score, "score_wall": w2 - w1,
           "load_before": load_before, "load_after": os.getloadavg()[0],
           "leaves": [int(np.sum(e.tree_.children_left < 0)) if args.kind == "axis" else int(e.tree_.n_nodes)
                      for e in seg.estimators_],
           "checksum": int(np.sum(reweighted.astype(np.int64) * np.arange(1, reweighted[..., 0, 0].size + 1)
                                  .reshape(-1, *[1] * (reweighted.ndim - 1)))),
           "val_labels_first": np.bincount((reweighted[-1] + 1).ravel(), minlength=4).tolist()}
    print(json.dumps(out), flush=True)
    if prof:
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(args.profile)
        print(s.getvalue())
    return seg


def score_saved(args):
    import pickle

    import treeopt

    _, _, X_val, _ = load(args.data)
    with open(args.load, "rb") as f:
        seg = pickle.load(f)
    trees = list(seg.estimators_)
    seg.estimators_ = [trees[t % len(trees)] for t in range(args.trees)]
    sizes = [m for m in (1, 2, 4, 8, 16) if m < args.trees] + [args.trees]
    c1 = time.process_time()
    reweighted, balanced = seg.staged_predict_both(X_val[:args.score], sizes)
    c2 = time.process_time()
    print(json.dumps({"code": str(Path(treeopt.__file__).parent), "forest": str(args.load), "trees": args.trees,
                      "scored_images": args.score, "score_cpu": c2 - c1, "score_cpu_per_image": (c2 - c1) / args.score,
                      "load_before": os.getloadavg()[0],
                      "maps_sha": hashlib.sha256(reweighted.tobytes() + balanced.tobytes()).hexdigest()[:16]}),
          flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["make", "time", "fit", "score"])
    parser.add_argument("kind", nargs="?", choices=["axis", "two_probe", "co2"])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--trees", type=int, default=1)
    parser.add_argument("--windows", type=int, default=256000)
    parser.add_argument("--max-depth", type=int, default=None)
    parser.add_argument("--score", type=int, default=3)
    parser.add_argument("--profile", type=int, default=0, help="print the top N functions by CPU time")
    parser.add_argument("--nu", type=float, default=1.0, help="co2: the norm bound (default: the paper's on LFW)")
    parser.add_argument("--learning-rate", type=float, default=1e-4, help="co2: eta (default: the paper's on LFW)")
    parser.add_argument("--save", type=Path, help="fit: pickle the fitted segmenter here")
    parser.add_argument("--load", type=Path, help="score: the pickled segmenter")
    parser.add_argument("--smoke", action="store_true",
                        help="make: 6 training and 2 validation images of 64 x 64 (a smoke run of this script)")
    args = parser.parse_args(argv)
    if args.command == "make":
        make(args.data, *((6, 2, 64) if args.smoke else ()))
    elif args.command == "score":
        score_saved(args)
    else:
        seg = time_candidate(args)
        if args.save:
            import pickle

            with open(args.save, "wb") as f:
                pickle.dump(seg, f)


if __name__ == "__main__":
    main()
