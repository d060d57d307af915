"""Would the non-greedy tree keep a better state than its last epoch? A check of one suspected cause of the
depth-14 collapse of Fig. 2 on Connect-4 (docs/nongreedy.md).

Refits the estimator of a finished run folder exactly as the run did (its ``params.yaml``: method, parameters,
seed, split, training part) and records after every epoch (``fit(monitor=...)``) the training and test accuracy
of the current parameters beside the tracked bound of ``history_``. It then compares the last epoch (what the
estimator returns) with the epoch of the lowest tracked bound (a rule that reads only the training objective,
the quantity the stop rule already watches). The test accuracy is only reported, it chooses nothing.

    python studies/nongreedy_best_iterate.py RUN_FOLDER [RUN_FOLDER ...] --out studies/results/nongreedy_best_iterate.jsonl
"""

import argparse
import json
from pathlib import Path

import numpy as np
import yaml

from treeopt.data import load_split
from treeopt.experiments.plan.methods import make_estimator
from treeopt.nongreedy import _sgd


def refit(run_dir):
    setup = yaml.safe_load((Path(run_dir) / "params.yaml").read_text())
    split = load_split(setup["split"])
    X, y = split.X_train, split.y_train
    if setup["fit_on"] == "trainval":
        X, y = np.vstack([split.X_train, split.X_val]), np.concatenate([split.y_train, split.y_val])
    # dotted keys (init_params.nu) as the run folder records them: make_estimator nests them as the runner does
    est = make_estimator(setup["method"], setup["params"], setup["seed"], n_features=X.shape[1])
    classes = np.unique(y)
    y_enc, yt_enc = np.searchsorted(classes, y), np.searchsorted(classes, split.y_test)
    train_acc, test_acc = [], []

    def monitor(epoch, tree):
        label = tree.Theta.argmax(axis=1)
        train_acc.append(float(np.mean(label[_sgd.route_all(X, tree.W, tree.b)] == y_enc)))
        test_acc.append(float(np.mean(label[_sgd.route_all(split.X_test, tree.W, tree.b)] == yt_enc)))

    est.fit(X, y, monitor=monitor)
    bound = est.history_["surrogate"][1:]  # entry 0 is the start
    best = int(np.argmin(bound))
    recorded = json.loads((Path(run_dir) / "metrics.json").read_text())
    return dict(run=str(run_dir), params=setup["params"], seed=setup["seed"], epochs=len(bound),
                recorded_test=recorded["test"]["accuracy"], last_test=100 * test_acc[-1],
                last_train=100 * train_acc[-1], best_bound_epoch=best + 1, best_bound_test=100 * test_acc[best],
                best_bound_train=100 * train_acc[best], bound=bound, train_curve=train_acc, test_curve=test_acc)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--out", default="studies/results/nongreedy_best_iterate.jsonl")
    a = ap.parse_args()
    for run_dir in a.runs:
        row = refit(run_dir)
        print(json.dumps({k: v for k, v in row.items() if not isinstance(v, list)}), flush=True)
        with open(a.out, "a") as f:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
