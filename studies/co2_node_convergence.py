"""Issue #11: how far a CO2 stump's optimisation has got after 5 ... 200 epochs, on Letter nodes of 200-700 points.

The nodes are the internal nodes of that size of one scikit-learn entropy tree (max_features=4, seed 0) grown on
Letter's training part (the validation and test rows are never read). Each stump starts as the forest's does (the
node's axis split scaled onto the sphere ``||[w, b]||^2 = nu``, add-one-smoothed leaf log-frequencies) and runs Alg. 1
with the forest's settings (nu = 4, eta = 0.01, the validated seed-0 choice) for a fixed number of epochs with early
stopping off, so the runs with 5, 10, ... 200 epochs are prefixes of one trajectory. Per prefix: the tracked
surrogate, the learning rate, the information gain (bits) of the stump's partition of the node's training points
and the share sent right; and the epoch at which the forest's stop rule (10 epochs, tol 1e-3, cap 200) ends.

    python studies/co2_node_convergence.py > studies/results/co2_node_convergence.log
"""

import sys
from pathlib import Path
import numpy as np
from scipy.stats import entropy as scipy_entropy
from sklearn.tree import DecisionTreeClassifier

from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.greedy.co2 import optimize_co2_stump

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from co2_settings import ROOT  # noqa: E402 (the benchmark's setting, shared)

NU, ETA, EPOCHS = 4.0, 0.01, (5, 10, 20, 50, 100, 200)


def entropy(labels, k):
    """Entropy (bits) of the labels' class distribution; 0 for no labels."""
    return float(scipy_entropy(np.bincount(labels, minlength=k), base=2)) if labels.size else 0.0


def main():
    split = load_split(prepare_split("letter", load_config(ROOT / "config.yaml"), 0))
    X, y = split.X_train, split.y_train
    tree = DecisionTreeClassifier(criterion="entropy", max_features=4, random_state=0).fit(X, y)
    path = tree.decision_path(X).tocsc()
    sizes = np.asarray(path.sum(0)).ravel()
    nodes = np.where((sizes > 200) & (sizes < 700) & (tree.tree_.children_left >= 0))[0][:8]
    print(f"# Letter training part, nu={NU}, eta={ETA}; nodes of one entropy tree (seed 0) with 200-700 points")
    for node in nodes:
        idx = path[:, node].nonzero()[0]
        Xn = X[idx]
        classes, yl = np.unique(y[idx], return_inverse=True)
        k = classes.size
        f, thr = tree.tree_.feature[node], tree.tree_.threshold[node]
        right = Xn[:, f] >= thr
        theta = np.zeros((2, k))
        for side in (0, 1):
            c = np.bincount(yl[right == side], minlength=k).astype(float)
            theta[side] = np.log((c + 1.0) / (c.sum() + k))
        w = np.zeros(X.shape[1])
        scale = np.sqrt(NU / (1.0 + thr * thr))
        w[f] = scale
        parts = []
        for epochs in EPOCHS:
            st = optimize_co2_stump(Xn, yl, w, thr * scale, theta, nu=NU, learning_rate=ETA, max_epochs=epochs,
                                    n_iter_no_change=10**6, seed=3)
            go = Xn @ st.weights - st.bias >= 0
            gain = entropy(yl, k) - go.mean() * entropy(yl[go], k) - (1 - go.mean()) * entropy(yl[~go], k)
            parts.append(f"E{epochs}: surrogate {st.surrogate[-1]:.4f} eta {st.learning_rate:.4g} gain {gain:.3f} "
                         f"right {go.mean():.2f}")
        rule = optimize_co2_stump(Xn, yl, w, thr * scale, theta, nu=NU, learning_rate=ETA, max_epochs=200,
                                  n_iter_no_change=10, seed=3)
        print(f"node of {idx.size} points, {k} classes, forest rule stops at epoch {rule.n_epochs}: "
              + " | ".join(parts))


if __name__ == "__main__":
    main()
