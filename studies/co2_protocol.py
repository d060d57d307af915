"""CO2 Forest's Table I protocol for one data set, outside the workflow (for quick reruns after a code change).

As the paper (Sec. 5-6) and the workflow's ``co2_forest_size_oblique`` experiment: (nu, eta) from the 18-point grid
by the validation error of a 30-tree forest fitted on the training part (forest seed 0); then forests refit on
train+validation and tested once: seed 0 with ``--n-trees`` trees (one fit, scored at every prefix in
``--report``), seeds 1.. with 30. q is fixed to the workflow's earlier random-forest choice
(``co2_targets.FALLBACK``; the 1000-tree RF validation of q is too heavy to redo here). Never looks at the test
set before the refit.

    python studies/co2_protocol.py letter --n-trees 1000 --seeds 0 1 2
    # writes studies/results/co2_protocol_letter.csv (grid) and co2_protocol_letter_test.csv
"""

import sys
import argparse
import itertools
import time
from pathlib import Path

import numpy as np
import pandas as pd

from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.experiments.plan.methods import resolve_value
from treeopt.forest import CO2ForestClassifier

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from co2_settings import FALLBACK  # noqa: E402 (the benchmark's setting, shared)

HERE = Path(__file__).resolve().parent
NU = [0.1, 1, 4, 10, 43, 100]
ETA = [0.03, 0.01, 0.003]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset")
    ap.add_argument("--n-trees", type=int, default=30, help="trees of the seed-0 refit (scored at every prefix)")
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--report", nargs="+", type=int, default=[10, 30, 100, 300, 1000])
    ap.add_argument("--n-jobs", type=int, default=1)
    args = ap.parse_args(argv)
    split = load_split(prepare_split(args.dataset, load_config(HERE.parent / "config.yaml"), 0))
    q = resolve_value(FALLBACK[args.dataset]["max_features"], split.X_train.shape[1])
    print(f"{args.dataset}: q = {q}; train {split.X_train.shape}, validation {split.X_val.shape}", flush=True)
    grid = []
    for nu, eta in itertools.product(NU, ETA):
        c0 = time.process_time()
        model = CO2ForestClassifier(n_estimators=30, nu=nu, learning_rate=eta, max_features=q, n_jobs=args.n_jobs,
                                    random_state=0).fit(split.X_train, split.y_train)
        err = 100.0 * float(np.mean(model.predict(split.X_val) != split.y_val))
        grid.append({"nu": nu, "learning_rate": eta, "val_error": err, "fit_cpu_seconds": time.process_time() - c0})
        print(f"  nu={nu:<5} eta={eta:<6} validation {err:.2f}%  ({grid[-1]['fit_cpu_seconds']:.1f} CPU-s)",
              flush=True)
    grid = pd.DataFrame(grid)
    grid.to_csv(HERE / "results" / f"co2_protocol_{args.dataset}.csv", index=False)
    best = grid.loc[grid.val_error.idxmin()]  # first of equals, in grid order
    params = dict(nu=float(best.nu), learning_rate=float(best.learning_rate), max_features=q)
    print(f"{args.dataset}: chosen {params} (validation {best.val_error:.2f}%)", flush=True)
    X, y = split.train_val()
    rows = []
    for seed in args.seeds:
        n_trees = args.n_trees if seed == args.seeds[0] else 30
        c0 = time.process_time()
        model = CO2ForestClassifier(n_estimators=n_trees, n_jobs=args.n_jobs, random_state=seed, **params).fit(X, y)
        cpu = time.process_time() - c0
        for m in [m for m in args.report if m <= n_trees]:
            pred = model.classes_[model.predict_proba(split.X_test, n_trees=m).argmax(1)]
            err = 100.0 * float(np.mean(pred != split.y_test))
            rows.append({"dataset": args.dataset, "seed": seed, "n_trees": m, "test_error": err, **params,
                         "fit_cpu_seconds": cpu})
            print(f"{args.dataset} seed {seed}: {m} trees test error {err:.2f}%", flush=True)
    table = pd.DataFrame(rows)
    table.to_csv(HERE / "results" / f"co2_protocol_{args.dataset}_test.csv", index=False)
    print(table.groupby("n_trees").test_error.agg(["mean", "std", "count"]).round(3).to_string())


if __name__ == "__main__":
    main()
