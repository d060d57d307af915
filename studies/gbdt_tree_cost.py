"""Issue #37: why the cost model misses scikit-learn's GBDT on RGF Fig. 10's real sets (2000 training points).

Two measurements, in one process each, on split 0 of each data set (prepared by ``treeopt.data`` from the mirror):

* ``collapse``: exponential-loss GBDT (``gbdt_exp``: J 64, s 0.1, 1000 trees, min_samples_leaf 10) — the first
  tree that is a single leaf (once every training margin passes ~18 the residuals' variance is below the tree
  builder's impurity floor) and the fit's CPU seconds; the cost model charges every tree its J leaves.
* ``collapse-grid``: the same at J = 2 / 8 / 64 and s = 1 / 0.1 (the paper grid's corners where a collapse can
  come before 1000 trees): the first one-leaf tree and the effective trees, sum over trees of log2(leaves) / log2 J
  (the share of the model's ``T n p log2 J`` the fit did).
* ``leaves``: square-loss GBDT (``gbdt``: s 0.1, 200 trees) at J = 2 ... 64 — CPU per unit of the model's work
  ``n p log2 J`` and the trees' mean depth (best-first trees are unbalanced: deeper than log2 J).

    python studies/gbdt_tree_cost.py collapse musk2 adult waveform40 nursery letter_am
    python studies/gbdt_tree_cost.py collapse-grid musk2 adult waveform40 nursery letter_am rgf_synth_q4_cls \
        rgf_synth_q64_cls
    python studies/gbdt_tree_cost.py collapse-grid rgf_synth_q16_cls rgf_synth_q2_cls --leaves 4 12 16 \
        --shrinkages 0.5 0.05
    python studies/gbdt_tree_cost.py leaves musk2 rgf_synth_q64_reg

Writes one line per fit to ``studies/results/gbdt_tree_cost.log`` (appends) and prints it.
"""

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "studies/results/gbdt_tree_cost.log"


def _split(config, name):
    split = load_split(prepare_split(name, config, 0))
    return split.X_train, split.y_train


def _exponential_fit(X, y, J, s):
    """One exponential-loss GBDT of 1000 trees: the model, its fit's CPU seconds, each tree's leaves and the first
    tree that is one leaf (1000: none)."""
    model = GradientBoostingClassifier(loss="exponential", max_leaf_nodes=J, max_depth=None, learning_rate=s,
                                       n_estimators=1000, min_samples_leaf=10, random_state=0)
    start = time.process_time()
    model.fit(X, y)
    cpu = time.process_time() - start
    tree_leaves = np.array([tree.tree_.n_leaves for tree in model.estimators_[:, 0]])
    first = int(np.argmax(tree_leaves < 2)) if (tree_leaves < 2).any() else len(tree_leaves)
    return model, cpu, tree_leaves, first


def collapse(name, X, y):
    model, cpu, leaves, first = _exponential_fit(X, y, 64, 0.1)
    per_100 = [round(float(leaves[a:a + 100].mean()), 1) for a in range(0, len(leaves), 100)]
    return (f"collapse {name} {X.shape}: fit {cpu:.1f} CPU-s, first one-leaf tree {first} of 1000, mean leaves "
            f"{leaves.mean():.1f}, final training loss {model.train_score_[-1]:.3g}, mean leaves per 100 trees {per_100}")


def collapse_grid(name, X, y, leaves=(2, 8, 64), shrinkages=(1.0, 0.1)):
    lines = []
    for J in leaves:
        for s in shrinkages:
            model, cpu, tree_leaves, first = _exponential_fit(X, y, J, s)
            effective = float(np.log2(tree_leaves).sum() / np.log2(J))
            lines.append(f"collapse-grid {name} {X.shape} J {J} s {s}: fit {cpu:.1f} CPU-s, first one-leaf tree "
                         f"{first} of 1000, effective trees {effective:.0f}, final training loss "
                         f"{model.train_score_[-1]:.3g}")
            print(lines[-1], flush=True)  # progress: the fits of a large set take minutes
    return "\n".join(lines)


def leaves_shape(name, X, y):
    lines = []
    for J in (2, 4, 8, 16, 64):
        model = GradientBoostingRegressor(max_leaf_nodes=J, max_depth=None, learning_rate=0.1, n_estimators=200,
                                          min_samples_leaf=10, random_state=0)
        cpu = []
        for _ in range(2):  # the faster of two fits: the other jobs on a shared machine add to one of them
            start = time.process_time()
            model.fit(X, y.astype(float))
            cpu.append(time.process_time() - start)
        depth = np.mean([tree.tree_.max_depth for tree in model.estimators_[:, 0]])
        unit = min(cpu) / (200 * X.shape[0] * X.shape[1] * np.log2(J)) * 1e9
        lines.append(f"leaves {name} {X.shape} J {J}: fit {min(cpu):.2f} CPU-s, {unit:.1f} ns per unit of n p log2 J, "
                     f"mean tree depth {depth:.1f}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("collapse", "collapse-grid", "leaves"))
    parser.add_argument("datasets", nargs="+")
    parser.add_argument("--leaves", type=int, nargs="+", default=[2, 8, 64], help="collapse-grid: J values")
    parser.add_argument("--shrinkages", type=float, nargs="+", default=[1.0, 0.1], help="collapse-grid: s values")
    args = parser.parse_args(argv)
    config = load_config(ROOT / "config.yaml")
    LOG.parent.mkdir(exist_ok=True)
    for name in args.datasets:
        X, y = _split(config, name)
        if args.what == "collapse-grid":
            line = collapse_grid(name, X, y, args.leaves, args.shrinkages)
        else:
            line = (collapse if args.what == "collapse" else leaves_shape)(name, X, y)
            print(line, flush=True)
        with open(LOG, "a") as log:
            log.write(f"{time.strftime('%Y-%m-%d %H:%M')} {line}\n")


if __name__ == "__main__":
    main()
