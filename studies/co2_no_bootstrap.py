"""Issue #11, Letter CO2F-1000 gap: the paper-profile Table I forests refit without bagging (not the paper's protocol).

Any Table I data set with workflow runs (``letter``, ``satimage``, ...); Letter is the one with the gap.

For each forest seed s: the split of the paper profile's seed s (``prepare_split(dataset, config, s)``), the (nu, eta)
that the workflow's 30-tree validation chose for seed s and the q that random forest's validation chose
(``results/selection``, git-ignored: run the workflow's ``co2_forest_size_oblique`` jobs of the set first), refit on
train+validation with ``bootstrap=False`` and ``random_state=s``, scored on the test rows at 10 / 30 / 100 / 300 /
1000 trees. Nothing is chosen here: the test error is reported beside the bagged Table I row of the same seed
(the final runs of ``co2_forest_size_oblique``, looked up in the paper profile's plan). The paper bags ("each tree is
built by using a new data set sampled uniformly with replacement", Sec. 5), so this is a diagnosis, not a Table I row.

    python studies/co2_no_bootstrap.py letter 0 1 2 > studies/results/co2_letter_no_bootstrap_seeds.log
    python studies/co2_no_bootstrap.py satimage 0 1 2 > studies/results/co2_satimage_no_bootstrap_seeds.log
"""

import json
from pathlib import Path
import sys
import time

import numpy as np

from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.experiments.plan.methods import resolve_value
from treeopt.experiments.run.selection import read_selection
from treeopt.experiments.report.tables import load_runs
from treeopt.forest import CO2ForestClassifier

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from co2_settings import ROOT, paper_plan, selection_path  # noqa: E402 (the benchmark's setting, shared)

SIZES = (10, 30, 100, 300, 1000)


def bagged_row(dataset, seed):
    """Test error by forest size of the workflow's bagged Table I runs of this seed (None where missing)."""
    runs = [ROOT / run for run in paper_plan().find(experiment="co2_forest_size_oblique", method="co2_forest",
                                                    dataset=dataset, seed=seed)]
    table = load_runs([run for run in runs if (run / "metrics.json").is_file()])
    errors = {int(p["n_estimators"]): e for p, e in zip(table.get("params", []), table.get("test_error", []))}
    return {n: errors.get(n) for n in SIZES}


def main(dataset, seeds):
    config = load_config(ROOT / "config.yaml")
    for seed in seeds:
        split = load_split(prepare_split(dataset, config, seed))
        X, y = split.train_val()
        co2 = read_selection(selection_path(dataset, seed)[1])["chosen"]
        params = {k: v for k, v in co2.items() if k != "n_estimators"}
        params["max_features"] = resolve_value(params["max_features"], X.shape[1])
        t0 = time.process_time()
        model = CO2ForestClassifier(n_estimators=max(SIZES), n_jobs=2, random_state=seed, bootstrap=False,
                                    **params).fit(X, y)
        errors = {n: 100.0 * float(np.mean(model.classes_[P.argmax(1)] != split.y_test))
                  for n, P in zip(SIZES, model.staged_predict_proba(split.X_test, SIZES))}
        print(json.dumps({"dataset": dataset, "seed": seed, "params": params, "no_bootstrap_test_error": errors,
                          "bagged_table1_test_error": bagged_row(dataset, seed),
                          "fit_cpu_seconds": round(time.process_time() - t0, 1)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], [int(s) for s in sys.argv[2:]])
