"""Issue #26: a 1000-tree CO2 Forest on Connect-4 split 0 fitted whole (estimator.fit holds every tree), same parameters and
seed as the runner's streamed run; prints the test error at 10/30/100/300/1000 trees and the peak RSS."""
import json
import resource
import time

import numpy as np
from treeopt.data import load_split
from treeopt.experiments.runner import make_estimator
split = load_split("data/processed/connect4/split0.npz")  # made by the workflow or benchmarks/run_memory.py
X, y = split.train_val()
params = {"nu": 0.1, "learning_rate": 0.03, "max_features": "p^0.9", "n_estimators": 1000}
from treeopt.experiments.runner import make_estimator
est = make_estimator("co2_forest", params, 0, n_jobs=2, n_features=X.shape[1])
t = time.perf_counter(); est.fit(X, y); fit = time.perf_counter() - t
proba = np.zeros((split.X_test.shape[0], len(est.classes_)))
out = {}
for i, tree_est in enumerate(est.estimators_, 1):
    proba += tree_est.predict_proba(split.X_test)
    if i in (10, 30, 100, 300, 1000):
        out[i] = 100 * float(np.mean(est.classes_[proba.argmax(1)] != split.y_test))
out["full_predict"] = 100 * float(np.mean(est.predict(split.X_test) != split.y_test))
print(json.dumps({"whole_fit_seconds": round(fit, 1), "test_error": out,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3}))
