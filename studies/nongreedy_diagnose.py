"""Why Stable SGD barely moves a CO2 start on Connect-4: the bound, the loss and the errors before/after SGD per nu.

Diagnosis for issue #7 (training and validation numbers only; the test set is not read). One CO2 tree of depth
``d`` is fitted on the 44,000 training rows (``--co2-nu``/``--co2-eta``: by default the CO2 grid point that
``nongreedy_targets.py`` chose on validation, nu 0.1 / eta 0.03 at depths 10 and 12); for every nu of the
paper's grid the start is made exactly as ``NonGreedyTreeClassifier`` makes it (``_init.start``; before issue
#24 the rows were scaled onto ``||[w_i, b_i]||^2 = nu``, which is how the numbers below were made),
and the row of the CSV records, before and after ``--epochs`` epochs of Stable SGD (fast inference eq. (13),
``--eta``):

- ``bound``: mean surrogate eq. (13) over the training rows at one parameter state; ``loss``: mean empirical
  log loss eq. (4) at the same state (``bound >= loss`` always; their gap is the slack SGD can remove);
- ``in_margin``: fraction of training rows whose bound exceeds their loss (loss-augmented inference picks a leaf
  other than ``f(sgn(Wx))``): only these rows give ``W`` a gradient (Alg. 1 line 6);
- ``train_err``, ``val_acc`` (percent), ``active`` leaves.

    python studies/nongreedy_diagnose.py --depth 10 --out studies/results/nongreedy_diagnose.csv
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.greedy import CO2TreeClassifier
from treeopt.nongreedy import NonGreedyTreeClassifier
from treeopt.nongreedy import _init
from treeopt.nongreedy.estimator import empirical_losses, surrogate_bounds

ROOT = Path(__file__).resolve().parents[1]
NU = (0.1, 1.0, 4.0, 10.0, 43.0, 100.0)


def state_row(X, yi, Xv, yvi, W, b, Theta):
    """Bound, loss, margin fraction and errors of one (W, b, Theta) on the training rows (validation: accuracy)."""
    Y = np.zeros((X.shape[0], 1))
    bnd = surrogate_bounds(X, W, b, Theta, kind=0, y_int=yi, Y=Y)
    los = empirical_losses(X, W, b, Theta, kind=0, y_int=yi, Y=Y)
    leaves = _init.route_all(X, W, b)
    lv = _init.route_all(np.ascontiguousarray(Xv), W, b)
    pred = Theta.argmax(axis=1)
    return dict(bound=float(bnd.mean()), loss=float(los.mean()), in_margin=float(np.mean(bnd > los + 1e-12)),
                train_err=100 * float(np.mean(pred[leaves] != yi)), val_acc=100 * float(np.mean(pred[lv] == yvi)),
                active=int(np.unique(leaves).size))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--co2-nu", type=float, default=0.1)
    parser.add_argument("--co2-eta", type=float, default=0.03)
    parser.add_argument("--eta", type=float, default=0.01)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--nu", default=",".join(str(v) for v in NU))
    parser.add_argument("--out", default="studies/results/nongreedy_diagnose.csv")
    args = parser.parse_args()
    split = load_split(prepare_split("connect4", load_config(ROOT / "config.yaml"), args.seed))
    X, y, Xv, yv = split.X_train, split.y_train, split.X_val, split.y_val
    classes, yi = np.unique(y, return_inverse=True)
    yvi = np.searchsorted(classes, yv)
    co2 = CO2TreeClassifier(max_depth=args.depth, nu=args.co2_nu, learning_rate=args.co2_eta, max_features=None,
                            random_state=args.seed).fit(X, y)
    rows = []
    for nu in [float(v) for v in args.nu.split(",")]:
        W, b, Theta, _ = _init.start(co2.tree_, args.depth, X, 0, yi, np.zeros((X.shape[0], 1)), classes.size, nu)
        before = state_row(X, yi, Xv, yvi, W, b, Theta)
        start, cpu = time.perf_counter(), time.process_time()
        model = NonGreedyTreeClassifier(max_depth=args.depth, nu=nu, learning_rate=args.eta, max_epochs=args.epochs,
                                        init=co2, random_state=args.seed).fit(X, y)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        after = state_row(X, yi, Xv, yvi, model.W_, model.b_, model.theta_)
        row = dict(depth=args.depth, nu=nu, eta=args.eta, co2_nu=args.co2_nu, co2_eta=args.co2_eta,
                   **{f"{k}_before": v for k, v in before.items()}, **{f"{k}_after": v for k, v in after.items()},
                   epochs=model.n_epochs_, eta_end=model.history_["learning_rate"][-1], fit_wall_s=wall,
                   fit_cpu_s=cpu)
        rows.append(row)
        print(json.dumps(row), flush=True)
        out = ROOT / args.out
        old = pd.read_csv(out) if out.exists() else pd.DataFrame()
        if not old.empty:  # keep other depths' rows
            old = old[~((old.depth == args.depth) & (old.eta == args.eta))]
        pd.concat([old, pd.DataFrame(rows)]).to_csv(out, index=False)


if __name__ == "__main__":
    main()
