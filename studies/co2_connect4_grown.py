"""CO2 Table I, Connect-4, 10 trees (ours 18.04, paper 17.1): is the row under-tuned?

Validation chose the corner of the paper's grid (nu = 0.1, the smallest; eta = 0.03, the largest) on every seed. The
one tuning rule of issue #38 (``treeopt.experiments.plan.grow``, as in ``nongreedy_fig2``) grows a grid one step past
a chosen edge, one parameter at a time, half-decades: nu 0.1 -> 0.03 (eta as chosen) and eta 0.03 -> 0.1 (nu as
chosen). This replays that rule outside the workflow: per seed (split s, forest seed s), 30-tree candidates on the
training part scored on validation at 30 trees (the workflow's ``select_at``), the winner refit on
train+validation and tested at 10 and 30 trees. q = p^0.9 (78 of 126, random forest's choice on seed 0,
``benchmarks/co2_settings.py``) on every seed.

    python studies/co2_connect4_grown.py 0 1 2   > studies/results/co2_connect4_grown.log
"""
import sys
import time

import numpy as np

from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.forest import CO2ForestClassifier

CANDIDATES = [(0.1, 0.03), (0.03, 0.03), (0.1, 0.1)]  # the chosen corner, then nu grown, then eta grown


def error(model, X, y, n_trees):
    return 100 * float(np.mean(model.predict(X, n_trees=n_trees) != y))


def main(seeds):
    config = load_config("config.yaml")
    for seed in seeds:
        split = load_split(prepare_split("connect4", config, seed))
        val = {}
        for nu, eta in CANDIDATES:
            t = time.process_time()
            model = CO2ForestClassifier(n_estimators=30, nu=nu, learning_rate=eta, max_features=78, n_jobs=1,
                                        random_state=seed).fit(split.X_train, split.y_train)
            val[nu, eta] = error(model, split.X_val, split.y_val, 30)
            print(f"seed {seed} nu {nu} eta {eta}: validation error {val[nu, eta]:.2f}% "
                  f"({time.process_time() - t:.0f} CPU-s)", flush=True)
        best = min(CANDIDATES, key=lambda c: (val[c], CANDIDATES.index(c)))
        X, y = split.train_val()
        for nu, eta in dict.fromkeys([best, CANDIDATES[0]]):
            model = CO2ForestClassifier(n_estimators=30, nu=nu, learning_rate=eta, max_features=78, n_jobs=1,
                                        random_state=seed).fit(X, y)
            tag = "chosen by the grown grid" if (nu, eta) == best else "the paper grid's corner"
            print(f"seed {seed} test, nu {nu} eta {eta} ({tag}): 10 trees {error(model, split.X_test, split.y_test, 10):.2f}%"
                  f"  30 trees {error(model, split.X_test, split.y_test, 30):.2f}%", flush=True)


if __name__ == "__main__":
    main([int(s) for s in sys.argv[1:]] or [0, 1, 2])
