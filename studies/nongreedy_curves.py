"""Validation curves of non-greedy trees started from their CO2 tree: the grid pass and the stop-rule study.

For one data set, seed and depth: the CO2 start (``--co2 nu,eta``: by default the Connect-4 choice of the CO2
grid, nu 0.1 / eta 0.03) is fitted on the training rows, then a non-greedy tree per (nu, eta, stable) of
``--grid`` is trained for ``--epochs`` epochs *without* early stopping, and after every epoch the validation
accuracy is recorded (``fit(monitor=...)``) beside the tracked bound of the training history. The learning-rate
rule does not depend on the stopping rule, so a run stopped by any rule is a prefix of the long run: the
stopping rules are compared on these curves by ``studies/nongreedy_stop_rule.py`` without refitting. The
test set is never read.

One JSON line per run in ``--out`` (appended): the parameters, the CO2 start's and the final training and
validation accuracy, the curves (``val_curve`` after every epoch, ``bound``/``train_err``/``lr`` with entry 0
at the start) and the per-depth diagnostics of ``fit_stats_``.

    python studies/nongreedy_curves.py --data connect4 --depth 8 --seed 0 \\
        --grid "43:0.1:0 43:0.1:1" --epochs 100 --out studies/results/nongreedy_curves.jsonl
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np

from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.greedy import CO2TreeClassifier
from treeopt.nongreedy import NonGreedyTreeClassifier, _sgd

ROOT = Path(__file__).resolve().parents[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="connect4")
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--co2", default="0.1,0.03", help="nu,eta of the CO2 start")
    ap.add_argument("--grid", default="43:0.1:0", help="space-separated nu:eta:stable triples")
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--bound-samples", type=int, default=10000)
    ap.add_argument("--tag", default="")
    ap.add_argument("--out", default="studies/results/nongreedy_curves.jsonl")
    a = ap.parse_args()
    split = load_split(prepare_split(a.data, load_config(ROOT / "config.yaml"), a.seed))
    X, y, Xv, yv = split.X_train, split.y_train, split.X_val, split.y_val
    co2_nu, co2_eta = (float(v) for v in a.co2.split(","))
    start = time.perf_counter()
    co2 = CO2TreeClassifier(max_depth=a.depth, nu=co2_nu, learning_rate=co2_eta, max_features=None,
                            random_state=a.seed).fit(X, y)
    co2_seconds = time.perf_counter() - start
    co2_train, co2_val = float(np.mean(co2.predict(X) == y)), float(np.mean(co2.predict(Xv) == yv))
    Xv = np.ascontiguousarray(Xv, dtype=np.float64)
    for point in a.grid.split():
        nu, eta, stable = point.split(":")
        clf = NonGreedyTreeClassifier(max_depth=a.depth, nu=float(nu), learning_rate=float(eta), stable=stable == "1",
                                      max_epochs=a.epochs, n_iter_no_change=None, bound_samples=a.bound_samples,
                                      init=co2, random_state=a.seed)
        yv_enc = None
        curve = []

        def monitor(epoch, tree):
            leaves = _sgd.route_all(Xv, tree.W, tree.b)
            curve.append(float(np.mean(tree.Theta.argmax(axis=1)[leaves] == yv_enc)))

        yv_enc = np.searchsorted(np.unique(y), yv)
        wall, cpu = time.perf_counter(), time.process_time()
        clf.fit(X, y, monitor=monitor)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        h = clf.history_
        row = dict(tag=a.tag, data=a.data, depth=a.depth, seed=a.seed, co2=a.co2, nu=float(nu), eta=float(eta),
                   stable=stable == "1", epochs=clf.n_epochs_, wall=wall, cpu=cpu, sgd_seconds=clf.sgd_seconds_,
                   eval_seconds=clf.eval_seconds_, co2_seconds=co2_seconds, co2_train=co2_train, co2_val=co2_val,
                   train=float(np.mean(clf.predict(X) == y)), val=float(np.mean(clf.predict(Xv) == yv)),
                   val_curve=curve, bound=h["surrogate"], train_err=h["train_error"], lr=h["learning_rate"],
                   **clf.fit_stats_)
        print(json.dumps({k: v for k, v in row.items() if not isinstance(v, list) or len(v) <= 20}), flush=True)
        with open(ROOT / a.out, "a") as f:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
