"""Speed and accuracy of CO2 Forest against the forests a user would pick instead.

Peers: scikit-learn's RandomForestClassifier (criterion="entropy", as the CO2 paper used), treeple's
ObliqueRandomForestClassifier and YDF's random forest with sparse oblique splits (``split_axis="SPARSE_OBLIQUE"``).
treeple needs scikit-learn 1.6.1, so it runs in its own Python environment through ``_treeple_worker.py``; YDF runs
the same way through ``_ydf_worker.py`` (each peer in its own process, fit and predict timed inside it). The script
finds each peer's Python by an option or an environment variable:

    python -m venv /work/venv-treeple && /work/venv-treeple/bin/pip install treeple scikit-learn==1.6.1 ydf
    TREEOPT_TREEPLE_PYTHON=/work/venv-treeple/bin/python TREEOPT_YDF_PYTHON=/work/venv-treeple/bin/python \
        python benchmarks/bench_co2_forest.py          # or --treeple-python / --ydf-python

else ``benchmarks/.venv-treeple/bin/python`` (git-ignored) when it exists, and for YDF the running Python when it
imports ``ydf``. A peer whose Python is not found (or lacks the package) is skipped with a message, and its rows and
ratio columns are left out.

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
from treeopt.experiments.plan.config import load_config
from treeopt.experiments.plan.methods import resolve_value
import threading

import treeopt.greedy.co2 as co2_module
from treeopt.forest import CO2ForestClassifier

from co2_settings import chosen_params, has_params  # noqa: E402 (benchmarks/ is on the path when run as a script)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LOCAL_PEER_ENV = HERE / ".venv-treeple"  # git-ignored; looked for when no option or variable names a Python
# peer -> (its package, environment variable naming its Python, worker script, how to install it)
PEERS = {"treeple": ("treeple", "TREEOPT_TREEPLE_PYTHON", "_treeple_worker.py",
                     "pip install treeple scikit-learn==1.6.1 (in its own venv: treeple pins scikit-learn)"),
         "ydf": ("ydf", "TREEOPT_YDF_PYTHON", "_ydf_worker.py", "pip install ydf")}


def peer_python(peer, given=None):
    """The Python that runs ``peer``'s worker, or ``(None, why)`` when none has the package.

    Looked for in order: ``given`` (the command-line option), the peer's environment variable, the git-ignored
    ``benchmarks/.venv-treeple``, and (YDF only: treeple pins another scikit-learn) the running Python. Returns
    ``(python, None)`` or ``(None, message)``."""
    package, variable, _, install = PEERS[peer]
    candidates = [(given, "--" + peer + "-python"), (os.environ.get(variable), variable),
                  (str(LOCAL_PEER_ENV / "bin" / "python"), str(LOCAL_PEER_ENV))]
    if peer == "ydf":
        candidates.append((sys.executable, "this Python"))
    tried = []
    for python, where in candidates:
        if not python:
            continue
        if not Path(python).exists():
            tried.append(f"{where}: {python} does not exist")
            continue
        probe = subprocess.run([python, "-c", f"import {package}"], capture_output=True, text=True)
        if probe.returncode == 0:
            return python, None
        tried.append(f"{where}: {python} cannot import {package}")
    return None, (f"{peer} skipped: no Python with {package} found ({'; '.join(tried) or 'nothing given'}); "
                  f"{install}, then pass --{peer}-python or set {variable}")


def run_peer(peer, python, split_path, n_trees, seed, n_jobs):
    """Fit and predict with ``peer`` in its own process; its worker prints one JSON line of timings."""
    out = subprocess.run([python, str(HERE / PEERS[peer][2]), str(split_path), str(n_trees), str(seed), str(n_jobs)],
                         check=True, capture_output=True, text=True, env={**os.environ})
    return json.loads(out.stdout.strip().splitlines()[-1])


class KernelClock:
    """Sums the CPU time threads spend inside CO2's tree-growing kernel (which runs without the GIL) and keeps
    a timeline: (thread, start, end) of every kernel call, on the perf_counter clock."""

    def __init__(self):
        self.seconds = 0.0
        self.calls = []
        self._lock = threading.Lock()
        self._kernel = co2_module.grow_co2_tree

    def __enter__(self):
        clock = self

        class Timed:
            """The kernel, timed per call; every other attribute (``signatures``, which the fit reads to log a
            first compile) is the kernel's own."""

            def __call__(self, *args):
                t0, s0 = time.thread_time(), time.perf_counter()
                out = clock._kernel(*args)
                with clock._lock:
                    clock.seconds += time.thread_time() - t0
                    clock.calls.append((threading.get_ident(), s0, time.perf_counter()))
                return out

            def __getattr__(self, name):
                return getattr(clock._kernel, name)

        co2_module.grow_co2_tree = Timed()
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
    ap.add_argument("--treeple-python", help="Python of an environment with treeple (else $TREEOPT_TREEPLE_PYTHON, "
                                             "then benchmarks/.venv-treeple)")
    ap.add_argument("--no-ydf", action="store_true")
    ap.add_argument("--ydf-python", help="Python of an environment with ydf (else $TREEOPT_YDF_PYTHON, then "
                                         "benchmarks/.venv-treeple, then this Python)")
    ap.add_argument("--no-node-variant", action="store_true",
                    help="skip the row of co2_forest_node (stumps in per-node standardised coordinates; not in the "
                         "paper), timed at its own validated (nu, eta)")
    ap.add_argument("--out", default=str(HERE / "results" / "co2_forest_speed.csv"))
    args = ap.parse_args(argv)

    config = load_config(args.config)
    co2_params = json.loads(args.co2_params)
    peer_pythons = {}
    for peer, skip, given in (("treeple", args.no_treeple, args.treeple_python),
                              ("ydf", args.no_ydf, args.ydf_python)):
        if skip:
            continue
        python, why = peer_python(peer, given)
        if python is None:
            print(why, file=sys.stderr)
        else:
            print(f"{peer}: {python}", file=sys.stderr)
            peer_pythons[peer] = python
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
        for peer, method in (("treeple", "oblique_rf_treeple"), ("ydf", "oblique_rf_ydf")):
            if peer in peer_pythons:
                peers[method] = (lambda peer=peer: run_peer(peer, peer_pythons[peer], path, args.n_trees, args.seed,
                                                            args.n_jobs))
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
    if "oblique_rf_ydf" in set(table.method):
        yd = table[table.method == "oblique_rf_ydf"].set_index("dataset")
        table["fit_ratio_vs_ydf"] = table.fit_seconds / table.dataset.map(yd.fit_seconds)
        table["fit_cpu_ratio_vs_ydf"] = table.fit_cpu_seconds / table.dataset.map(yd.fit_cpu_seconds)
    one = table[table.method == "co2_forest_1_worker"].set_index("dataset")
    is_co2 = table.method == "co2_forest"
    table.loc[is_co2, "speedup_vs_1_worker"] = (table.dataset.map(one.fit_seconds) / table.fit_seconds)[is_co2]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    table.round(4).to_csv(args.out, index=False)
    print(table.round(3).to_string(index=False))


if __name__ == "__main__":
    main()
