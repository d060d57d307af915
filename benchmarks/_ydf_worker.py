"""Fit YDF's random forest with sparse oblique splits on one split; runs in any Python that has ``ydf``.

Called by bench_co2_forest.py in its own process (as treeple's worker): reads a split .npz, times fit and predict,
and prints one JSON line. YDF's defaults otherwise (its random forest grows trees to depth 16 with
``winner_take_all`` votes); the out-of-bag evaluation YDF makes by default is turned off, since no other method in
the table computes one.
"""

import json
import sys
import time

import numpy as np
import ydf

split_path, n_trees, seed, n_jobs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
with np.load(split_path, allow_pickle=False) as f:
    X_train = np.vstack([f["X_train"], f["X_val"]])
    y_train = np.concatenate([f["y_train"], f["y_val"]])
    X_test, y_test = f["X_test"], f["y_test"]


def columns(X, y=None):
    data = {f"x{j}": X[:, j] for j in range(X.shape[1])}
    if y is not None:
        data["label"] = y.astype(str)  # a categorical label: YDF classifies
    return data


train, test = columns(X_train, y_train), columns(X_test)
learner = ydf.RandomForestLearner(label="label", task=ydf.Task.CLASSIFICATION, num_trees=n_trees,
                                  split_axis="SPARSE_OBLIQUE", compute_oob_performances=False, random_seed=seed,
                                  num_threads=n_jobs)
c0, t0 = time.process_time(), time.perf_counter()
model = learner.train(train, verbose=0)
fit_seconds, fit_cpu = time.perf_counter() - t0, time.process_time() - c0
predict_seconds = predict_cpu = float("inf")
for _ in range(3):  # best of 3, as for the other methods
    c0, t0 = time.process_time(), time.perf_counter()
    proba = model.predict(test)
    predict_seconds = min(predict_seconds, time.perf_counter() - t0)
    predict_cpu = min(predict_cpu, time.process_time() - c0)
classes = np.asarray(model.label_classes())
proba = proba.reshape(len(X_test), -1)
# several classes: one probability column per class; two: the probability of the second class only
pred = classes[proba.argmax(1)] if proba.shape[1] == len(classes) else np.where(proba[:, 0] >= 0.5, *classes[::-1])
print(json.dumps({"fit_seconds": fit_seconds, "fit_cpu_seconds": fit_cpu, "predict_seconds": predict_seconds,
                  "predict_cpu_seconds": predict_cpu,
                  "test_error": 100.0 * float(np.mean(pred.astype(y_test.dtype) != y_test))}))
