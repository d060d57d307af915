"""Speed and accuracy of CO2 Forest against the forests a user would pick instead.

Peers: scikit-learn's RandomForestClassifier (criterion="entropy", as the CO2 paper used) and treeple's
ObliqueRandomForestClassifier. treeple needs scikit-learn 1.6.1, so it runs in its own virtual environment
(created on first use under benchmarks/.venv-treeple, git-ignored) through ``_treeple_worker.py``.

All methods run in one invocation on the same split and the same machine, and the table reports ratios
to scikit-learn's random forest, so numbers from different machines stay comparable.

    python benchmarks/bench_co2_forest.py --datasets letter satimage --n-trees 30
    # writes benchmarks/results/co2_forest_speed.csv

CO2's (nu, eta, q) are the paper profile's choices on each data set's validation split when the workflow has
made them, else fixed earlier choices (``co2_targets.chosen_params``); scikit-learn's RF uses the same q.
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
from treeopt.forest import CO2ForestClassifier

from co2_targets import chosen_params  # noqa: E402 (benchmarks/ is on the path when run as a script)

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


def time_estimator(model, split):
    X_train = np.vstack([split.X_train, split.X_val])
    y_train = np.concatenate([split.y_train, split.y_val])
    t0 = time.perf_counter()
    model.fit(X_train, y_train)
    fit_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = model.predict(split.X_test)
    predict_seconds = time.perf_counter() - t0
    return {"fit_seconds": fit_seconds, "predict_seconds": predict_seconds,
            "test_error": 100.0 * float(np.mean(pred != split.y_test))}


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
        peers = {
            "rf_sklearn": lambda: time_estimator(RandomForestClassifier(
                n_estimators=args.n_trees, criterion="entropy", max_features=params["max_features"],
                n_jobs=args.n_jobs, random_state=args.seed),
                split),
            "co2_forest": lambda: time_estimator(CO2ForestClassifier(
                n_estimators=args.n_trees, n_jobs=args.n_jobs, random_state=args.seed, **params), split),
        }
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
            rows.append({"dataset": name, "method": method, "n_trees": args.n_trees, **res})
    table = pd.DataFrame(rows)
    base = table[table.method == "rf_sklearn"].set_index("dataset")
    table["fit_ratio_vs_rf"] = table.fit_seconds / table.dataset.map(base.fit_seconds)
    table["predict_ratio_vs_rf"] = table.predict_seconds / table.dataset.map(base.predict_seconds)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    table.round(4).to_csv(args.out, index=False)
    print(table.round(3).to_string(index=False))


if __name__ == "__main__":
    main()
