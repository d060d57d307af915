"""Choose the non-greedy epoch budget and stopping rule on validation, from the curves of nongreedy_curves.py.

A rule is (``max_epochs``, ``n_iter_no_change``, ``tol``): stop after ``max_epochs``, or when the best tracked
bound has not fallen by a relative ``tol`` for ``n_iter_no_change`` epochs (None: never early), exactly as
``NonGreedyTreeClassifier`` stops. The learning-rate rule does not depend on the stopping rule, so the run a rule
would make is a prefix of the long run: its stopping epoch is found by replaying the rule on the recorded bound,
and its validation accuracy is read from the curve at that epoch.

Per data set, seed and depth, each rule then selects the grid candidate (nu, eta, stable) with the best
validation accuracy (as the workflow does); the rule's score on a data set is the mean over depths of that
selected accuracy, per seed; ``mean``/``sd`` are over seeds. The chosen rule is the cheapest (fewest epochs
summed over all candidates, i.e. the grid's cost) whose mean is within one SD of the best rule's mean on every
data set; one rule for all data sets. Only training and validation numbers are read.

    python studies/nongreedy_stop_rule.py studies/results/nongreedy_curves.jsonl \\
        --out studies/results/nongreedy_stop_rule.csv
"""

import argparse
import itertools
import json
from pathlib import Path

import pandas as pd

BUDGETS = (20, 30, 40, 60, 80, 100)
PATIENCE = (None, 5, 10, 20)
TOLS = (1e-4, 1e-3)


def stop_epoch(bound, max_epochs, patience, tol):
    """Epochs the estimator runs on this bound history (entry 0 = start) under the rule."""
    best, since = bound[0], 0
    last = min(max_epochs, len(bound) - 1)
    for epoch in range(1, last + 1):
        if bound[epoch] < best - tol * abs(best):
            best, since = bound[epoch], 0
        else:
            since += 1
            if patience is not None and since >= patience:
                return epoch
    return last


def evaluate(runs, rules):
    rows = []
    for max_epochs, patience, tol in rules:
        if patience is None and tol != TOLS[0]:
            continue  # tol only matters with early stopping
        for run in runs:
            if len(run["val_curve"]) < max_epochs:
                continue
            e = stop_epoch(run["bound"], max_epochs, patience, tol)
            rows.append(dict(max_epochs=max_epochs, n_iter_no_change=patience if patience is not None else -1,
                             tol=tol, data=run["data"], seed=run["seed"], depth=run["depth"], nu=run["nu"],
                             eta=run["eta"], stable=run["stable"], epochs=e, val=100 * run["val_curve"][e - 1]))
    return pd.DataFrame(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("curves", nargs="+")
    ap.add_argument("--out", default="studies/results/nongreedy_stop_rule.csv")
    a = ap.parse_args()
    runs = [json.loads(line) for path in a.curves for line in Path(path).read_text().splitlines() if line.strip()]
    df = evaluate(runs, itertools.product(BUDGETS, PATIENCE, TOLS))
    rule = ["max_epochs", "n_iter_no_change", "tol"]
    # each rule selects per (data, seed, depth) the candidate with the best validation accuracy; its cost is the
    # epochs of all candidates
    sel = df.loc[df.groupby(rule + ["data", "seed", "depth"])["val"].idxmax()]
    cost = df.groupby(rule + ["data", "seed", "depth"])["epochs"].sum().rename("grid_epochs")
    sel = sel.join(cost, on=rule + ["data", "seed", "depth"])
    per_seed = sel.groupby(rule + ["data", "seed"]).agg(val=("val", "mean"), grid_epochs=("grid_epochs", "mean"))
    summary = per_seed.groupby(rule + ["data"]).agg(mean=("val", "mean"), sd=("val", "std"),
                                                     n_seeds=("val", "size"), grid_epochs=("grid_epochs", "mean"))
    summary = summary.reset_index()
    summary["sd"] = summary["sd"].fillna(0.0)
    best = summary.loc[summary.groupby("data")["mean"].idxmax()].set_index("data")
    summary["within_one_sd"] = [m >= best.loc[d, "mean"] - best.loc[d, "sd"] for m, d in
                                zip(summary["mean"], summary["data"])]
    ok = summary.groupby(rule).agg(all_ok=("within_one_sd", "all"), cost=("grid_epochs", "sum"),
                                   n_data=("data", "nunique")).reset_index()
    ok = ok[ok.n_data == summary["data"].nunique()]
    chosen = ok[ok.all_ok].sort_values("cost").iloc[0]
    summary["chosen"] = [all(r[k] == chosen[k] for k in rule) for _, r in summary.iterrows()]
    out = Path(a.out)
    summary.to_csv(out, index=False)
    pd.set_option("display.width", 200)
    print(summary.sort_values(["data", "mean"], ascending=[True, False]).to_string(index=False))
    print(f"\nbest per data set:\n{best[rule + ['mean', 'sd']]}")
    print(f"\nchosen (cheapest within one SD of the best on every data set): "
          f"max_epochs={chosen.max_epochs}, n_iter_no_change={chosen.n_iter_no_change}, tol={chosen.tol}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
