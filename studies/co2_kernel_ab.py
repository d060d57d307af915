"""A/B timing of the CO2 stump kernel between two source trees (used for the kernel's argument grouping).

    PYTHONPATH=<src A or B> python studies/co2_kernel_ab.py forest OUT.npy   # 30-tree Letter forest, one worker
    PYTHONPATH=<src A or B> python studies/co2_kernel_ab.py stump            # the stump kernel alone, p = 16

Run A and B alternately under ``flock /tmp/treeopt-bench.lock``; ``forest`` prints the fit's CPU seconds and saves
``predict_proba`` on the test split (compare the two files for bit-identity), ``stump`` prints CPU ns per
sample-epoch at n = 15000 / 1000 / 300. Numba compilation is done by a warm-up call before timing.
"""
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def forest(out):
    from co2_settings import chosen_params  # noqa: E402 (the benchmark's setting, shared)

    from treeopt.data import load_split, prepare_split
    from treeopt.experiments.config import load_config
    from treeopt.experiments.methods import resolve_value
    from treeopt.forest import CO2ForestClassifier

    split = load_split(prepare_split("letter", load_config(ROOT / "config.yaml"), 0))
    params, _ = chosen_params("letter")
    params["max_features"] = resolve_value(params["max_features"], split.X_train.shape[1])
    CO2ForestClassifier(n_estimators=2, n_jobs=1, random_state=0, **params).fit(split.X_train[:500],
                                                                                 split.y_train[:500])
    start = time.process_time()
    model = CO2ForestClassifier(n_estimators=30, n_jobs=1, random_state=0, **params).fit(split.X_train,
                                                                                          split.y_train)
    cpu = time.process_time() - start
    proba = model.predict_proba(split.X_test)
    np.save(out, proba)
    print(f"cpu={cpu:.3f} err={100 * np.mean(model.classes_[proba.argmax(1)] != split.y_test):.2f}", flush=True)


def stump():
    from treeopt.greedy.co2 import optimize_co2_stump

    rng = np.random.default_rng(0)
    res = []
    for n, k in ((15000, 26), (1000, 26), (300, 10)):
        X = rng.normal(size=(n, 16))
        y = rng.integers(0, k, n)
        args = dict(nu=4.0, learning_rate=0.01, max_epochs=60, n_iter_no_change=10**6, patience=10**6, seed=0)
        optimize_co2_stump(X[:50], y[:50], np.ones(16) * 0.1, 0.0, np.zeros((2, k)), **args)  # compile
        reps = max(1, 30000 // n)
        start = time.process_time()
        for _ in range(reps):
            optimize_co2_stump(X, y, np.ones(16) * 0.1, 0.0, np.zeros((2, k)), **args)
        res.append(f"n={n}: {1e9 * (time.process_time() - start) / (reps * n * 60):.2f} ns/sample-epoch")
    print("; ".join(res), flush=True)


if __name__ == "__main__":
    forest(sys.argv[2]) if sys.argv[1] == "forest" else stump()
