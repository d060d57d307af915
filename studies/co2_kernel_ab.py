"""A/B timing of the CO2 stump kernel between two source trees (used for the kernel's argument grouping).

    PYTHONPATH=<src A or B> python studies/co2_kernel_ab.py forest OUT.npy   # 30-tree Letter forest, one worker
    PYTHONPATH=<src A or B> python studies/co2_kernel_ab.py stump            # the stump kernel alone, p = 16
    PYTHONPATH=<src A or B> python studies/co2_kernel_ab.py nodes            # the kernel as a forest calls it

Run A and B alternately under ``flock /tmp/treeopt-bench.lock``; ``forest`` prints the fit's CPU seconds and saves
``predict_proba`` on the test split (compare the two files for bit-identity), ``stump`` prints CPU ns per
sample-epoch at n = 15000 / 1000 / 300 (random normal rows, float64). ``nodes`` times the kernel as a tree's node calls
it: float32 rows of the real data (Letter p = 16, k = 26 and SatImage p = 36, k = 6, z-scored, train + validation),
n = 15000 / 1000 / 300 (SatImage 4435 / 1000 / 300), started from the axis split on feature 0 at 0 scaled onto
||[w, b]||^2 = nu with add-one-smoothed leaf log-frequencies, 60 epochs, and prints the CPU ns per sample-epoch and
a checksum of the result (identical between A and B when the kernel computes the same thing). Numba compilation is
done by a warm-up call before timing.
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
    from treeopt.experiments.plan.config import load_config
    from treeopt.experiments.plan.methods import resolve_value
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


def nodes():
    from treeopt.data import load_split, prepare_split
    from treeopt.experiments.plan.config import load_config
    from treeopt.greedy._co2_sgd import co2_stump_sgd

    config = load_config(ROOT / "config.yaml")
    res = []
    for name, nu, sizes in (("letter", 4.0, (15000, 1000, 300)), ("satimage", 43.0, (4435, 1000, 300))):
        split = load_split(prepare_split(name, config, 0))
        X_all = np.vstack([split.X_train, split.X_val]).astype(np.float32)
        y_all = np.concatenate([split.y_train, split.y_val])
        for n in sizes:
            X = np.ascontiguousarray(X_all[:n])
            y = np.unique(y_all[:n], return_inverse=True)[1].astype(np.int64)
            k = int(y.max()) + 1
            right = X[:, 0] >= 0.0
            counts = np.stack([np.bincount(y[~right], minlength=k), np.bincount(y[right], minlength=k)]) + 1.0
            theta0 = np.log(counts / counts.sum(1, keepdims=True))
            settings = (nu, 0.01, 0.9, 100, 1, 10**6)
            stop = (60, 1e-3, 10**6, False)

            def run():
                w = np.zeros(X.shape[1])
                w[0] = np.sqrt(nu)
                theta = theta0.copy()
                history = np.empty(61)
                b, n_epochs, _, _ = co2_stump_sgd((X, y, np.arange(n), np.ones(n)), (w, 0.0, theta), settings, stop,
                                                  np.uint64(7), history)
                return float(np.sum(w) + b + np.sum(theta) + np.sum(history)), n_epochs

            run()  # compile or load from numba's cache
            reps = max(1, 60000 // n)
            start = time.process_time()
            for _ in range(reps):
                check, n_epochs = run()
            ns = 1e9 * (time.process_time() - start) / (reps * n * n_epochs)
            res.append(f"{name} n={n} p={X.shape[1]} k={k}: {ns:.2f} ns (check {check:.17g})")
    print("\n".join(res), flush=True)


if __name__ == "__main__":
    {"forest": lambda: forest(sys.argv[2]), "stump": stump, "nodes": nodes}[sys.argv[1]]()
