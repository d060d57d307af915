"""Fit treeple's oblique random forest on one split; runs inside treeple's own environment.

treeple pins scikit-learn 1.6.1, so it cannot share treeopt's environment. This worker reads a split .npz,
times fit and predict, and prints one JSON line.
"""

import json
import sys
import time

import numpy as np
from treeple import ObliqueRandomForestClassifier

split_path, n_trees, seed, n_jobs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
with np.load(split_path, allow_pickle=False) as f:
    X_train = np.vstack([f["X_train"], f["X_val"]])
    y_train = np.concatenate([f["y_train"], f["y_val"]])
    X_test, y_test = f["X_test"], f["y_test"]
model = ObliqueRandomForestClassifier(n_estimators=n_trees, random_state=seed, n_jobs=n_jobs)
c0, t0 = time.process_time(), time.perf_counter()
model.fit(X_train, y_train)
fit_seconds, fit_cpu = time.perf_counter() - t0, time.process_time() - c0
predict_seconds = predict_cpu = float("inf")
for _ in range(3):  # best of 3, as for the other methods
    c0, t0 = time.process_time(), time.perf_counter()
    pred = model.predict(X_test)
    predict_seconds = min(predict_seconds, time.perf_counter() - t0)
    predict_cpu = min(predict_cpu, time.process_time() - c0)
print(json.dumps({"fit_seconds": fit_seconds, "fit_cpu_seconds": fit_cpu, "predict_seconds": predict_seconds,
                  "predict_cpu_seconds": predict_cpu,
                  "test_error": 100.0 * float(np.mean(pred != y_test))}))
