"""Issue #26: the 1000-tree CO2 Forest of the streamed memory run, fitted whole (``estimator.fit`` holds every tree).

Same data (Connect-4 split 0, train+validation), parameters and seed as

    python benchmarks/run_memory.py connect4 co2_forest \\
        '{"nu": 0.1, "learning_rate": 0.03, "max_features": "p^0.9", "n_estimators": 1000}' \\
        --stages 10 30 100 300 1000 --fit-on trainval --n-jobs 2

(which prepares the split); prints the test error after 10/30/100/300/1000 trees and the peak RSS, to compare with
the streamed run's staged errors and peak.
"""

import argparse
import json
import resource
import time

import numpy as np

from treeopt.data import load_split
from treeopt.experiments.plan.methods import make_estimator

STAGES = (10, 30, 100, 300, 1000)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="data/processed/connect4/split0.npz")
    parser.add_argument("--n-trees", type=int, default=STAGES[-1])
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args(argv)
    split = load_split(args.split)
    X, y = split.train_val()
    params = {"nu": 0.1, "learning_rate": 0.03, "max_features": "p^0.9", "n_estimators": args.n_trees}
    est = make_estimator("co2_forest", params, 0, n_jobs=args.n_jobs, n_features=X.shape[1])
    start = time.perf_counter()
    est.fit(X, y)
    fit_seconds = time.perf_counter() - start
    proba = np.zeros((split.X_test.shape[0], len(est.classes_)))
    errors = {}
    for i, tree_est in enumerate(est.estimators_, 1):  # the forest's own trees, summed in order
        proba += tree_est.predict_proba(split.X_test)
        if i in STAGES or i == args.n_trees:
            errors[i] = 100 * float(np.mean(est.classes_[proba.argmax(1)] != split.y_test))
    errors["full_predict"] = 100 * float(np.mean(est.predict(split.X_test) != split.y_test))
    print(json.dumps({"whole_fit_seconds": round(fit_seconds, 1), "test_error": errors,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3}))


if __name__ == "__main__":
    main()
