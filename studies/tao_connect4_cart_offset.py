"""TAO fixed depth, Connect-4, depth 8: how far is our CART baseline from the published one, and why?

The scorecard's Connect-4 rows compare with DTSemNet's Table 3 (CART 74.03 from the DGT paper, TAO 81.21 from
Zharmagambetov et al. 2021); ours: CART 70.66, TAO 80.15. Our ``cart`` is the project's axis-aligned baseline with
information gain (entropy); the published source does not say which criterion its CART used (scikit-learn's default
is Gini). Per split seed this fits depth-8 trees with both criteria on the training part and on train+validation
(the tao_fixed_depth final refits on train+validation), on both Connect-4 entries: ``connect4`` (the TAO fixed-depth
table's split, 44,000 / 11,000 / 12,557) and ``connect4_43236`` (DTSemNet's sizes), and, from the raw UCI file, on
the 42 cells coded as ordinals instead of 126 one-hot indicators (DTSemNet's sizes, scikit-learn's split).

    python studies/tao_connect4_cart_offset.py > studies/results/tao_connect4_cart_offset.log
"""
import gzip

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config


def accuracy(criterion, X, y, X_test, y_test):
    tree = DecisionTreeClassifier(criterion=criterion, max_depth=8, random_state=0).fit(X, y)
    return 100 * tree.score(X_test, y_test)


def one_hot(config, seeds):
    for dataset in ("connect4", "connect4_43236"):
        means = {}
        for seed in seeds:
            s = load_split(prepare_split(dataset, config, seed))
            X, y = s.train_val()
            row = []
            for criterion in ("entropy", "gini"):
                for part, (Xf, yf) in (("train", (s.X_train, s.y_train)), ("train+val", (X, y))):
                    acc = accuracy(criterion, Xf, yf, s.X_test, s.y_test)
                    means.setdefault((criterion, part), []).append(acc)
                    row.append(f"{criterion}/{part} {acc:.2f}")
            print(f"{dataset} seed {seed} train {s.X_train.shape} test {len(s.y_test)}: " + "  ".join(row), flush=True)
        print(f"{dataset} mean over seeds: " + "  ".join(f"{c}/{p} {np.mean(v):.2f} +- {np.std(v, ddof=1):.2f}"
                                                         for (c, p), v in means.items()), flush=True)


def ordinal(config, seeds):
    mirror = config["data"]["mirror"] if "data" in config and "mirror" in config["data"] else "../shared/datasets"
    with gzip.open(f"{mirror}/connect-4/connect-4.data.gz", "rt") as f:
        cells = np.array([line.strip().split(",") for line in f if line.strip()])
    y = cells[:, -1]
    X = np.vectorize({"b": 0, "x": 1, "o": 2}.get)(cells[:, :-1]).astype(float)
    for seed in seeds:
        X_rest, X_test, y_rest, y_test = train_test_split(X, y, test_size=13512, random_state=seed)
        X_train, _, y_train, _ = train_test_split(X_rest, y_rest, test_size=10809, random_state=seed)
        print(f"ordinal 42 cells seed {seed} train {X_train.shape}: "
              + "  ".join(f"{c}/train {accuracy(c, X_train, y_train, X_test, y_test):.2f}" for c in ("entropy", "gini")),
              flush=True)


if __name__ == "__main__":
    config = load_config("config.yaml")
    one_hot(config, [0, 1, 2])
    ordinal(config, [0, 1, 2])
