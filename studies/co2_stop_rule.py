"""Choosing CO2's stump stopping rule by the paper's validation protocol (never the test set).

The paper stops Alg. 1 "when the surrogate objective has converged" and names no rule, so the rule is ours.
For each candidate rule this fits CO2 Forests of 30 trees on the training part of Letter and SatImage
(the validation split of the paper profile) with each data set's (nu, eta, q) (``co2_targets.chosen_params``)
and reports validation error, fit CPU seconds (one thread) and the mean SGD epochs per optimised node,
over several forest seeds. One rule is then used for every data set.

    python studies/co2_stop_rule.py --datasets letter satimage --seeds 0 1 2
    # writes studies/results/co2_stop_rule.csv
"""

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.experiments.plan.methods import resolve_value
from treeopt.forest import CO2ForestClassifier

from co2_targets import chosen_params  # noqa: E402 (studies/ is on the path when run as a script)

HERE = Path(__file__).resolve().parent
# (n_iter_no_change, tol, max_epochs, tol_reference): the old default first
RULES = [(20, 1e-3, 200, "best"), (10, 1e-3, 200, "best"), (5, 1e-3, 200, "best"), (3, 1e-3, 200, "best"),
         (5, 1e-2, 200, "best"), (5, 1e-3, 50, "best")]


def parse_rules(text):
    """``"10,1e-3,200,initial;20,1e-3,200,best"`` -> rule tuples."""
    return [(int(a), float(b), int(c), d) for a, b, c, d in (r.split(",") for r in text.split(";"))]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=["letter", "satimage"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--n-trees", type=int, default=30)
    ap.add_argument("--rules", type=parse_rules, default=RULES,
                    help='"n_iter_no_change,tol,max_epochs,tol_reference;..." (default: the list in RULES)')
    ap.add_argument("--out", default=str(HERE / "results" / "co2_stop_rule.csv"))
    args = ap.parse_args(argv)
    rows = []
    for name in args.datasets:
        split = load_split(prepare_split(name, load_config(HERE.parent / "config.yaml"), 0))
        params, source = chosen_params(name)
        params["max_features"] = resolve_value(params.get("max_features", "p^0.5"), split.X_train.shape[1])
        print(f"{name}: {params} ({source}); train {split.X_train.shape}, validation {split.X_val.shape}",
              flush=True)
        CO2ForestClassifier(n_estimators=1, max_epochs=2, **params).fit(split.X_train[:300], split.y_train[:300])
        for nic, tol, max_epochs, ref in args.rules:
            for seed in args.seeds:
                model = CO2ForestClassifier(n_estimators=args.n_trees, n_jobs=1, random_state=seed, tol=tol,
                                            tol_reference=ref, n_iter_no_change=nic, max_epochs=max_epochs, **params)
                c0 = time.process_time()
                model.fit(split.X_train, split.y_train)
                cpu = time.process_time() - c0
                epochs = np.concatenate([e.node_epochs_[e.node_epochs_ > 0] for e in model.estimators_])
                err = 100.0 * float(np.mean(model.predict(split.X_val) != split.y_val))
                rows.append({"dataset": name, "n_iter_no_change": nic, "tol": tol, "tol_reference": ref,
                             "max_epochs": max_epochs,
                             "seed": seed, "val_error": err, "fit_cpu_seconds": cpu,
                             "mean_epochs": float(epochs.mean())})
                print(f"{name} nic={nic} tol={tol} ({ref}) max_epochs={max_epochs} seed={seed}: val {err:.2f}%  "
                      f"cpu {cpu:.1f}s  epochs {epochs.mean():.1f}", flush=True)
    table = pd.DataFrame(rows)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    table.round(4).to_csv(args.out, index=False)
    print(table.groupby(["dataset", "n_iter_no_change", "tol", "tol_reference", "max_epochs"])[
        ["val_error", "fit_cpu_seconds", "mean_epochs"]].agg(["mean", "std"]).round(3).to_string())


if __name__ == "__main__":
    main()
