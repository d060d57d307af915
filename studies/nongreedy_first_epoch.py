"""Does the non-greedy tree keep its CO2 start through the first epochs? A check of the depth-14/16 collapse of
Fig. 2 on Connect-4 (docs/nongreedy.md: training accuracy 81.28 -> 65.41% after epoch 1 at nu 10, eta 0.3).

For one data set, seed and depth, the CO2 start (``--co2 nu,eta``; Connect-4's choice, nu 0.1 / eta 0.03) is
fitted once on the rows a run trains on (``--fit-on train``: the training part, as a candidate run; ``trainval``:
training + validation, as the final refit) and cached. Then one non-greedy tree per ``--variants`` entry is trained
with the paper profile's budget and stop rule (80 epochs, stop after 10 without a relative 1e-3 fall) and after
every epoch the training accuracy (all fitted rows) and, for ``train`` fits, the validation accuracy are recorded.
The test set is never read. Variants (``;``-separated, ``key=value`` pairs joined by ``,``):

- ``eta``: learning rate; ``nu``: norm bound;
- ``warmup``: ``warmup_epochs`` (epoch e <= k runs with eta * e / (k + 1));
- ``sphere=1``: the start's rows scaled onto the nu sphere (the pre-#24 start: same partition, larger margins);
- ``scale``: the estimator's ``init_scale`` (every start row times this factor: same partition, margins times
  ``scale``).

    python studies/nongreedy_first_epoch.py --depth 14 --fit-on trainval \\
        --variants "eta=0.3;eta=0.3,warmup=5;eta=0.1" --out studies/results/nongreedy_first_epoch.jsonl
"""

import argparse
import json
import pickle
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.greedy import CO2TreeClassifier
from treeopt.nongreedy import NonGreedyTreeClassifier, _sgd
from treeopt.trees import Tree

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path("/tmp/nongreedy_starts")


def co2_start(X, y, depth, nu, eta, seed, key):
    """The CO2 tree of the workflow's start (same seed and parameters), cached by ``key``."""
    path = CACHE / f"{key}.pkl"
    if path.is_file():
        return pickle.loads(path.read_bytes())
    t0 = time.process_time()
    co2 = CO2TreeClassifier(max_depth=depth, nu=nu, learning_rate=eta, max_features=None, random_state=seed)
    co2.fit(X, y)
    co2.cpu_seconds_ = time.process_time() - t0
    CACHE.mkdir(exist_ok=True)
    path.write_bytes(pickle.dumps(co2))
    return co2


def on_sphere(tree, nu):
    """``tree`` with every split row [w_i, b_i] scaled to squared norm ``nu`` (the partition is unchanged)."""
    W = sp.csr_matrix(tree.W)
    norms = np.sqrt(np.asarray(W.multiply(W).sum(axis=1)).ravel() + tree.bias**2)
    scale = np.where(norms > 0, np.sqrt(nu) / np.where(norms > 0, norms, 1.0), 1.0)
    return Tree(tree.left.copy(), tree.right.copy(), sp.csr_matrix(sp.diags(scale) @ W), tree.bias * scale,
                tree.value.copy(), feature=tree.feature.copy(), depth=tree.depth.copy(),
                n_samples=tree.n_samples.copy(), value_kind=tree.value_kind, x_dtype=tree.x_dtype)


def parse_variant(text):
    out = {"eta": 0.3, "nu": 10.0, "warmup": 0, "sphere": 0, "scale": 1.0}
    for item in filter(None, text.split(",")):
        key, value = item.split("=")
        out[key] = type(out[key])(float(value)) if key in ("warmup", "sphere") else float(value)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="connect4")
    ap.add_argument("--depth", type=int, default=14)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--co2", default="0.1,0.03", help="nu,eta of the CO2 start")
    ap.add_argument("--fit-on", choices=["train", "trainval"], default="train")
    ap.add_argument("--variants", default="eta=0.3")
    ap.add_argument("--epochs", type=int, default=80)
    ap.add_argument("--out", default="studies/results/nongreedy_first_epoch.jsonl")
    a = ap.parse_args()
    split = load_split(prepare_split(a.data, load_config(ROOT / "config.yaml"), a.seed))
    X, y = split.X_train, split.y_train
    if a.fit_on == "trainval":
        X, y = split.train_val()
    Xv, yv = np.ascontiguousarray(split.X_val, dtype=np.float64), split.y_val
    co2_nu, co2_eta = (float(v) for v in a.co2.split(","))
    co2 = co2_start(X, y, a.depth, co2_nu, co2_eta, a.seed,
                    f"{a.data}_s{a.seed}_d{a.depth}_{a.fit_on}_nu{co2_nu}_eta{co2_eta}")
    classes = np.unique(y)
    y_enc, yv_enc = np.searchsorted(classes, y), np.searchsorted(classes, yv)
    Xc = np.ascontiguousarray(X, dtype=np.float64)
    for text in a.variants.split(";"):
        v = parse_variant(text)
        init = on_sphere(co2.tree_, v["nu"]) if v["sphere"] else co2
        clf = NonGreedyTreeClassifier(max_depth=a.depth, nu=v["nu"], learning_rate=v["eta"],
                                      warmup_epochs=v["warmup"], max_epochs=a.epochs, n_iter_no_change=10, tol=1e-3,
                                      init=init, init_scale=v["scale"], random_state=a.seed)
        train_curve, val_curve = [], []

        def monitor(epoch, tree):
            label = tree.Theta.argmax(axis=1)
            train_curve.append(float(np.mean(label[_sgd.route_all(Xc, tree.W, tree.b)] == y_enc)))
            if a.fit_on == "train":
                val_curve.append(float(np.mean(label[_sgd.route_all(Xv, tree.W, tree.b)] == yv_enc)))

        cpu = time.process_time()
        clf.fit(X, y, monitor=monitor)
        cpu = time.process_time() - cpu
        row = dict(data=a.data, depth=a.depth, seed=a.seed, fit_on=a.fit_on, co2=a.co2, variant=text, **v,
                   co2_cpu=getattr(co2, "cpu_seconds_", None), cpu=cpu, epochs=clf.n_epochs_,
                   co2_train=float(np.mean(co2.predict(X) == y)),
                   co2_val=float(np.mean(co2.predict(Xv) == yv)) if a.fit_on == "train" else None,
                   train=train_curve[-1] if train_curve else None, val=val_curve[-1] if val_curve else None,
                   train_curve=train_curve, val_curve=val_curve, bound=clf.history_["surrogate"],
                   lr=clf.history_["learning_rate"], per_depth=clf.depth_stats_)
        print(json.dumps({k: val for k, val in row.items() if not isinstance(val, (list, dict))}), flush=True)
        with open(ROOT / a.out, "a") as f:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
