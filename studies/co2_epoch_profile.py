"""Issue #11: where a CO2 Forest's SGD epochs go, by node size (Letter, 30 trees, the validated setting).

Fits the benchmark's forest (``bench_co2_forest.py``: train+validation of split 0, (nu, eta, q) from
``co2_targets.chosen_params``, forest seed 0) with one worker and reads each tree's ``node_epochs_`` beside
``tree_.n_samples``: per node-size bin the stumps per tree, their mean epochs, their share of the forest's
sample-epochs (points x (epochs + 1): the epoch passes plus the start's surrogate pass) and the share that stop at
the ``max_epochs`` cap; then the share of the sample-epochs a lower cap would keep (a bound: trees grown with
another cap differ).

    python studies/co2_epoch_profile.py > studies/results/co2_epoch_profile.log
"""

import sys
from pathlib import Path
import time

import numpy as np

from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.experiments.plan.methods import resolve_value
from treeopt.forest import CO2ForestClassifier

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from co2_settings import ROOT, chosen_params  # noqa: E402 (the benchmark's setting, shared)

BINS = (0, 100, 1000, 5000, np.inf)


def main(dataset="letter", n_trees=30):
    split = load_split(prepare_split(dataset, load_config(ROOT / "config.yaml"), 0))
    X, y = split.train_val()
    params, source = chosen_params(dataset)
    params["max_features"] = resolve_value(params["max_features"], X.shape[1])
    CO2ForestClassifier(n_estimators=2, n_jobs=1, random_state=0, **{**params, "max_epochs": 2}).fit(X[:300], y[:300])
    t0 = time.process_time()
    forest = CO2ForestClassifier(n_estimators=n_trees, n_jobs=1, random_state=0, **params).fit(X, y)
    cpu = time.process_time() - t0
    cap = forest.max_epochs
    epochs = np.concatenate([tree.node_epochs_ for tree in forest.estimators_])
    points = np.concatenate([tree.tree_.n_samples for tree in forest.estimators_])
    stump = epochs > 0
    work = np.where(stump, points * (epochs + 1), 0)
    print(f"# {dataset}, {X.shape[0]} rows, {n_trees} trees, one worker, {params} ({source}); "
          f"fit {cpu:.2f} CPU-s, {cpu / work.sum() * 1e9:.1f} ns per sample-epoch (all of the fit)")
    for lo, hi in zip(BINS[:-1], BINS[1:]):
        sel = stump & (points > lo) & (points <= hi)
        print(f"nodes of ({lo}, {hi}] points: {sel.sum() / n_trees:.0f} stumps per tree, mean epochs "
              f"{epochs[sel].mean():.1f}, {100 * work[sel].sum() / work.sum():.0f}% of the sample-epochs, "
              f"{100 * np.mean(epochs[sel] >= cap):.0f}% stop at the cap of {cap}")
    for lower in (50, 75, 100, 150):
        kept = np.where(stump, points * (np.minimum(epochs, lower) + 1), 0).sum() / work.sum()
        print(f"a cap of {lower} epochs would keep {100 * kept:.0f}% of the sample-epochs")


if __name__ == "__main__":
    main()
