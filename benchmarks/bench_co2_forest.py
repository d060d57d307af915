"""Speed and accuracy of CO2 Forest against the forests a user would pick instead.

Peers: scikit-learn's RandomForestClassifier (criterion="entropy", as the CO2 paper used) and treeple's
ObliqueRandomForestClassifier. treeple needs scikit-learn 1.6.1, so it runs in its own virtual environment
(created on first use under benchmarks/.venv-treeple, git-ignored) through ``_treeple_worker.py``.

All methods run in one invocation on the same split and the same machine, and the table reports ratios
to scikit-learn's random forest (and to treeple), so numbers from different machines stay comparable.

Numba compiles CO2's kernels on first use (or loads them from its cache): the script warms up with a tiny
forest before any timing, so compile time is never measured. CO2 Forest is timed with ``--n-jobs`` threads
and with one, for the scaling of its (GIL-free) tree growth. On a loaded machine wall-clock scaling is
unreliable, so the table also gives CPU-time figures: ``fit_cpu_seconds`` and ``predict_cpu_seconds``
(process CPU time, all threads; prediction is the best of 3) with their ratios, and, for CO2,
``gil_free_fraction`` (share of the forest's CPU time spent inside the tree-growing kernel, which releases
the GIL) with the Amdahl bound ``amdahl_2_workers = 1 / ((1 - f) + f / 2)`` it implies for two workers.
Where CO2's fit wall time goes outside the trees: ``before_first_tree_seconds`` (validation, presort),
``after_last_tree_seconds`` (packing the forest) and ``end_imbalance_seconds`` (the last thread's finish minus
the first thread's: the end of the fit with one thread idle).

    python benchmarks/bench_co2_forest.py --datasets letter satimage --n-trees 30
    # writes benchmarks/results/co2_forest_speed.csv

CO2's (nu, eta, q) are the paper profile's choices on each data set's validation split when the workflow has
made them, else fixed earlier choices (``co2_targets.chosen_params``); scikit-learn's RF uses the same q.
A ``co2_forest_node`` row (stumps in per-node standardised coordinates, not in the paper) is timed at that method's
own validated (nu, eta, q) when its selection exists (``--no-node-variant`` skips it); the issue's target is the
``co2_forest`` row.
``--co2-params '{"letter": {"nu": 4}}'`` overrides them per data set.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier

from treeopt.data import load_split, prepare_split
from treeopt.experiments.config import load_config
from treeopt.experiments.methods import resolve_value
import threading

import treeopt.greedy.co2 as co2_module
from treeopt.forest import CO2ForestClassifier

from co2_settings import chosen_params, has_params  # noqa: E402 (benchmarks/ is on the path when run as a script)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TREEPLE_ENV = HERE / ".venv-treeple"
TREEPLE_REQUIREMENTS = ["scikit-learn==1.6.1", "treeple==0.10.3"]


def treeple_python():
    """Path to the python of treeple's own environment, creating it when missing."""
    python = TREEPLE_ENV / "bin" / "python"
    if not python.exists():
        print(f"creating {TREEPLE_ENV} for treeple ({', '.join(TREEPLE_REQUIREMENTS)})", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(TREEPLE_ENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *TREEPLE_REQUIREMENTS], check=True)
    return python


class KernelClock:
    """Sums the CPU time threads spend inside CO2's tree-growing kernel (which runs without the GIL) and keeps
    a timeline: (thread, start, end) of every kernel call, on the perf_counter clock."""

    def __init__(self):
        self.seconds = 0.0
        self.calls = []
        self._lock = threading.Lock()
        self._kernel = co2_module.grow_co2_tree

    def __enter__(self):
        def timed(*args):
            t0, s0 = time.thread_time(), time.perf_counter()
            out = self._kernel(*args)
            with self._lock:
                self.seconds += time.thread_time() - t0
                self.calls.append((threading.get_ident(), s0, time.perf_counter()))
            return out
        co2_module.grow_co2_tree = timed
        return self

    def __exit__(self, *exc):
        co2_module.grow_co2_tree = self._kernel


def time_estimator(model, split, marks=None):
    X_train = np.vstack([split.X_train, split.X_val])
    y_train = np.concatenate([split.y_train, split.y_val])
    c0, t0 = time.process_time(), time.perf_counter()
    model.fit(X_train, y_train)
    fit_seconds, fit_cpu = time.perf_counter() - t0, time.process_time() - c0
    if marks is not None:
        marks.update(fit_start=t0, fit_end=t0 + fit_seconds)
    predict_seconds = predict_cpu = np.inf
    for _ in range(3):  # best of 3: the machine may be shared
        c0, t0 = time.process_time(), time.perf_counter()
        pred = model.predict(split.X_test)
        predict_seconds = min(predict_seconds, time.perf_counter() - t0)
        predict_cpu = min(predict_cpu, time.process_time() - c0)
    return {"fit_seconds": fit_seconds, "fit_cpu_seconds": fit_cpu, "predict_seconds": predict_seconds,
            "predict_cpu_seconds": predict_cpu, "test_error": 100.0 * float(np.mean(pred != split.y_test))}


def time_co2(params, split, n_trees, n_jobs, seed):
    marks = {}
    with KernelClock() as clock:
        res = time_estimator(CO2ForestClassifier(n_estimators=n_trees, n_jobs=n_jobs, random_state=seed, **params),
                             split, marks)
    f = min(1.0, clock.seconds / res["fit_cpu_seconds"])
    # where the wall time of the fit goes: before the first tree starts, after the last one ends, and the
    # end imbalance (the last thread's finish minus the first thread's, its last tree running alone)
    ends = {}
    for thread, _, end in clock.calls:
        ends[thread] = max(ends.get(thread, end), end)
    first_start = min(start for _, start, _ in clock.calls)
    last_end = max(ends.values())
    return {**res, "gil_free_fraction": f, "amdahl_2_workers": 1.0 / ((1.0 - f) + f / 2.0),
            "before_first_tree_seconds": first_start - marks["fit_start"],
            "after_last_tree_seconds": marks["fit_end"] - last_end,
            "end_imbalance_seconds": last_end - min(ends.values())}


def warm_up(params, split):
    """Compile (or load from numba's cache) every CO2 kernel before anything is timed."""
    small = {**params, "max_epochs": 2}
    model = CO2ForestClassifier(n_estimators=2, n_jobs=1, random_state=0, **small)
    model.fit(split.X_train[:300], split.y_train[:300]).predict(split.X_test[:50])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=["letter", "satimage"])
    ap.add_argument("--n-trees", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--config", default=str(ROOT / "config.yaml"))
    ap.add_argument("--co2-params", default="{}",
                    help="JSON {dataset: {CO2ForestClassifier parameter: value}} overriding DEFAULT_CO2_PARAMS")
    ap.add_argument("--no-treeple", action="store_true")
    ap.add_argument("--no-node-variant", action="store_true",
                    help="skip the row of co2_forest_node (stumps in per-node standardised coordinates; not in the "
                         "paper), timed at its own validated (nu, eta)")
    ap.add_argument("--out", default=str(HERE / "results" / "co2_forest_speed.csv"))
    args = ap.parse_args(argv)

    config = load_config(args.config)
    co2_params = json.loads(args.co2_params)
    rows = []
    for name in args.datasets:
        path = prepare_split(name, config, args.seed)
        split = load_split(path)
        params, source = chosen_params(name)
        params = {**params, **co2_params.get(name, {})}
        params["max_features"] = resolve_value(params.get("max_features", "p^0.5"), split.X_train.shape[1])
        print(f"{name}: CO2 {params} ({source})", file=sys.stderr)
        t0 = time.perf_counter()
        warm_up(params, split)
        print(f"{name}: warm-up (numba compile or cache load) {time.perf_counter() - t0:.1f}s, not timed",
              file=sys.stderr)
        peers = {
            "rf_sklearn": lambda: time_estimator(RandomForestClassifier(
                n_estimators=args.n_trees, criterion="entropy", max_features=params["max_features"],
                n_jobs=args.n_jobs, random_state=args.seed),
                split),
            "co2_forest": lambda: time_co2(params, split, args.n_trees, args.n_jobs, args.seed),
            "co2_forest_1_worker": lambda: time_co2(params, split, args.n_trees, 1, args.seed),
        }
        if not args.no_node_variant and has_params(f"{name}_node"):
            node_params, node_source = chosen_params(f"{name}_node")
            node_params["max_features"] = resolve_value(node_params.get("max_features", "p^0.5"),
                                                        split.X_train.shape[1])
            print(f"{name}: CO2 node variant {node_params} ({node_source})", file=sys.stderr)
            peers["co2_forest_node"] = lambda: time_co2(node_params, split, args.n_trees, args.n_jobs, args.seed)
        if not args.no_treeple:
            def run_treeple():
                out = subprocess.run([str(treeple_python()), str(HERE / "_treeple_worker.py"), str(path),
                                      str(args.n_trees), str(args.seed), str(args.n_jobs)],
                                     check=True, capture_output=True, text=True, env={**os.environ})
                return json.loads(out.stdout.strip().splitlines()[-1])
            peers["oblique_rf_treeple"] = run_treeple
        for method, run in peers.items():
            res = run()
            print(f"{name:10s} {method:20s} fit {res['fit_seconds']:8.2f}s  predict "
                  f"{res['predict_seconds']:6.3f}s  error {res['test_error']:5.2f}%", file=sys.stderr)
            n_jobs = 1 if method.endswith("_1_worker") else args.n_jobs
            rows.append({"dataset": name, "method": method, "n_trees": args.n_trees, "n_jobs": n_jobs, **res})
    table = pd.DataFrame(rows)
    base = table[table.method == "rf_sklearn"].set_index("dataset")
    table["fit_ratio_vs_rf"] = table.fit_seconds / table.dataset.map(base.fit_seconds)
    table["predict_ratio_vs_rf"] = table.predict_seconds / table.dataset.map(base.predict_seconds)
    table["fit_cpu_ratio_vs_rf"] = table.fit_cpu_seconds / table.dataset.map(base.fit_cpu_seconds)
    table["predict_cpu_ratio_vs_rf"] = table.predict_cpu_seconds / table.dataset.map(base.predict_cpu_seconds)
    if "oblique_rf_treeple" in set(table.method):
        tp = table[table.method == "oblique_rf_treeple"].set_index("dataset")
        table["fit_ratio_vs_treeple"] = table.fit_seconds / table.dataset.map(tp.fit_seconds)
        table["fit_cpu_ratio_vs_treeple"] = table.fit_cpu_seconds / table.dataset.map(tp.fit_cpu_seconds)
    one = table[table.method == "co2_forest_1_worker"].set_index("dataset")
    is_co2 = table.method == "co2_forest"
    table.loc[is_co2, "speedup_vs_1_worker"] = (table.dataset.map(one.fit_seconds) / table.fit_seconds)[is_co2]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    table.round(4).to_csv(args.out, index=False)
    print(table.round(3).to_string(index=False))


if __name__ == "__main__":
    main()
