"""Fit time of one OC1 tree, as the OC1 Forest grows it, against scikit-learn's tree and (optionally) older code.

The tree is ``OC1ForestClassifier(n_estimators=1, max_features="sqrt", n_jobs=1, random_state=0)`` (a bootstrap
sample, OC1's defaults of 20 restarts and 5 perturbations per node, grown to purity): the unit of work of the OC1
Forest runs of the paper profile. Data sets:

* ``letter``: Letter's training part (10,500 x 16, 26 classes) from treeopt's data layer (``prepare_split``);
* ``protein_like``: a Protein-shaped synthetic set, ``make_classification(n_samples=17766 + 6621, n_features=357,
  n_informative=60, n_classes=3, random_state=0)``, fitted on the first 17,766 rows (Protein's training size)
  and tested on the other 6,621.

Each fit runs in its own process (``--worker``) and is timed as that process's CPU seconds around ``fit`` (numba
kernels are compiled or loaded from the cache by a tiny warm-up fit first), so a loaded machine inflates the
numbers less than wall time would. ``--baseline-src PATH`` times the same fit with another source tree first
(``PYTHONPATH=PATH``, e.g. ``git archive 071be0e src | tar -x -C /tmp/base``), alternating old and new
``--repeats`` times; the table then gives ``speedup_vs_baseline`` (baseline CPU / this code's CPU, medians) and
whether the two trees are identical (a hash of every array of the tree). The peer is scikit-learn's
``DecisionTreeClassifier(criterion="entropy", max_features="sqrt")`` on the same bootstrap-free training rows.

    python benchmarks/bench_oc1.py --datasets letter protein_like --baseline-src /tmp/base/src --repeats 3
    python benchmarks/bench_oc1.py --smoke          # a few seconds: small subsets, no baseline
    # writes benchmarks/results/oc1_speed.csv
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATASETS = ("letter", "protein_like")
PROTEIN_TRAIN, PROTEIN_TEST = 17766, 6621


def load(name, config_path, max_rows=None):
    """(X_train, y_train, X_test, y_test) of a benchmark data set; ``max_rows`` keeps the first rows (smoke runs)."""
    if name == "letter":
        from treeopt.data import load_split, prepare_split
        try:
            from treeopt.experiments.plan.config import load_config
        except ImportError:  # a baseline older than the experiment layer's rooms (--baseline-src)
            from treeopt.experiments.config import load_config

        split = load_split(prepare_split("letter", load_config(config_path), 0))
        data = split.X_train, split.y_train, split.X_test, split.y_test
    elif name == "protein_like":
        from sklearn.datasets import make_classification

        X, y = make_classification(n_samples=PROTEIN_TRAIN + PROTEIN_TEST, n_features=357, n_informative=60,
                                   n_classes=3, random_state=0)
        data = X[:PROTEIN_TRAIN], y[:PROTEIN_TRAIN], X[PROTEIN_TRAIN:], y[PROTEIN_TRAIN:]
    else:
        raise ValueError(f"unknown data set {name!r}; expected one of {DATASETS}")
    if max_rows is not None:
        data = data[0][:max_rows], data[1][:max_rows], data[2][:max_rows], data[3][:max_rows]
    return data


def tree_hash(tree):
    """Hash of every array of a fitted tree: equal hashes mean the same tree (same splits, same leaves)."""
    h = hashlib.sha256()
    for a in (tree.left, tree.right, tree.feature, tree.bias, tree.W.indptr, tree.W.indices, tree.W.data, tree.value):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def worker(name, config_path, max_rows, peer):
    """Fit once in this process and print one JSON line (the parent reads it)."""
    X, y, X_test, y_test = load(name, config_path, max_rows)
    if peer:
        from sklearn.tree import DecisionTreeClassifier

        make = lambda: DecisionTreeClassifier(criterion="entropy", max_features="sqrt", random_state=0)
    else:
        from treeopt.forest import OC1ForestClassifier

        make = lambda: OC1ForestClassifier(n_estimators=1, max_features="sqrt", n_jobs=1, random_state=0)
    make().fit(X[:200], y[:200])  # compile or load the numba kernels outside the timing
    model = make()
    cpu, wall = time.process_time(), time.perf_counter()
    model.fit(X, y)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    row = {"fit_cpu_seconds": cpu, "fit_wall_seconds": wall,
           "test_accuracy": 100.0 * float(np.mean(model.predict(X_test) == y_test))}
    if not peer:
        row["tree_hash"] = tree_hash(model.estimators_[0].tree_)
        row["n_nodes"] = int(model.estimators_[0].tree_.n_nodes)
    print(json.dumps(row))


def run_worker(name, args, src=None, peer=False):
    """One fit in a fresh process with ``PYTHONPATH=src`` (this checkout's src when None)."""
    env = dict(os.environ, PYTHONPATH=str(src or ROOT / "src"))
    cmd = [sys.executable, __file__, "--worker", name, "--config", args.config]
    if args.max_rows:
        cmd += ["--max-rows", str(args.max_rows)]
    if peer:
        cmd.append("--peer")
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def load_average():
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    ap.add_argument("--baseline-src", help="a source tree (its src/ folder) to time first, e.g. main's older code")
    ap.add_argument("--repeats", type=int, default=1, help="fits per code version (alternating with the baseline)")
    ap.add_argument("--max-rows", type=int, help="fit on the first rows only (and test on as many)")
    ap.add_argument("--smoke", action="store_true",
                    help="a few seconds: 300 rows, one repeat, no baseline, written to a temporary folder")
    ap.add_argument("--append", action="store_true",
                    help="keep the rows of other data sets already in --out (replace only those timed now)")
    ap.add_argument("--config", default=str(ROOT / "config.yaml"))
    ap.add_argument("--out", default=str(HERE / "results" / "oc1_speed.csv"))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--peer", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    if args.worker:
        worker(args.worker, args.config, args.max_rows, args.peer)
        return
    if args.smoke:
        args.max_rows, args.repeats, args.baseline_src = 300, 1, None
        if args.out == ap.get_default("out"):
            import tempfile

            args.out = str(Path(tempfile.mkdtemp(prefix="bench_oc1_")) / "oc1_speed.csv")
    if args.baseline_src and not (Path(args.baseline_src) / "treeopt").is_dir():
        ap.error(f"--baseline-src {args.baseline_src}: no treeopt package there (give the src/ folder)")

    import pandas as pd

    rows = []
    for name in args.datasets:
        X, y, _, _ = load(name, args.config, args.max_rows)
        new, old = [], []
        for r in range(args.repeats):
            if args.baseline_src:
                old.append(run_worker(name, args, args.baseline_src) | {"load": load_average()})
                print(f"{name} baseline #{r}: {old[-1]}", file=sys.stderr)
            new.append(run_worker(name, args) | {"load": load_average()})
            print(f"{name} this code #{r}: {new[-1]}", file=sys.stderr)
        peer = run_worker(name, args, peer=True)
        cpu = statistics.median(m["fit_cpu_seconds"] for m in new)
        row = {"dataset": name, "n": X.shape[0], "p": X.shape[1], "n_classes": len(np.unique(y)),
               "method": "oc1_tree", "repeats": args.repeats, "fit_cpu_seconds": round(cpu, 3),
               "fit_cpu_seconds_all": " ".join(f"{m['fit_cpu_seconds']:.2f}" for m in new),
               "test_accuracy": round(new[0]["test_accuracy"], 4), "n_nodes": new[0]["n_nodes"],
               "tree_hash": new[0]["tree_hash"],
               "sklearn_tree_fit_cpu_seconds": round(peer["fit_cpu_seconds"], 4),
               "ratio_vs_sklearn_tree": round(cpu / peer["fit_cpu_seconds"], 1),
               "load_min": round(min(m["load"] for m in new + old), 2),
               "load_max": round(max(m["load"] for m in new + old), 2)}
        if old:
            old_cpu = statistics.median(m["fit_cpu_seconds"] for m in old)
            row |= {"baseline_fit_cpu_seconds": round(old_cpu, 3),
                    "baseline_fit_cpu_seconds_all": " ".join(f"{m['fit_cpu_seconds']:.2f}" for m in old),
                    "baseline_test_accuracy": round(old[0]["test_accuracy"], 4),
                    "speedup_vs_baseline": round(old_cpu / cpu, 2),
                    "same_tree_as_baseline": all(m["tree_hash"] == old[0]["tree_hash"] for m in old + new)}
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    table = pd.DataFrame(rows)
    if args.append and out.exists():
        kept = pd.read_csv(out)
        table = pd.concat([kept[~kept["dataset"].isin(args.datasets)], table], ignore_index=True)
    table.to_csv(out, index=False)
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
