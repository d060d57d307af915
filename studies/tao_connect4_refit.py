"""Connect-4 depth 8, tao_fixed_depth protocol by hand: the C chosen on validation by
`tao_path_check.py connect4 8 cart objective 100,10,1,0.1,0.01` (C = 0.1) refitted on train+validation along the
same warm-started path; test accuracy beside the entropy CART of depth 8 (its initial tree) fitted on the same data.
Optional argv[1]: extra TAOTreeClassifier params as JSON; argv[2] = "shift" hands LIBLINEAR X minus its column modes.
"""
import json
import sys
import time
import numpy as np
from sklearn.tree import DecisionTreeClassifier
from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.tao import TAOTreeClassifier
s = load_split(prepare_split("connect4", load_config("config.yaml"), 0))
X = np.vstack([s.X_train, s.X_val]); y = np.concatenate([s.y_train, s.y_val])
t = time.time()
extra = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
TAOTreeClassifier._shift_features = len(sys.argv) > 2 and sys.argv[2] == "shift"
est = TAOTreeClassifier(C=0.1, warm_start_C=[100, 10, 1, 0.1], accept="objective", max_depth=8,
                        random_state=0, **extra).fit(X, y)
print(extra, "shift", TAOTreeClassifier._shift_features)
cart = DecisionTreeClassifier(criterion="entropy", max_depth=8, random_state=0).fit(X, y)
print("refit train+val", X.shape, "seconds", round(time.time() - t), flush=True)
print("TAO test acc", 100 * np.mean(est.predict(s.X_test) == s.y_test), "train acc", 100 * np.mean(est.predict(X) == y),
      "internal", est.tree_.stats()["n_internal"], "liblinear s", round(est.liblinear_seconds_),
      "init CART test acc", 100 * cart.score(s.X_test, s.y_test))
for p in est.path_:
    print({k: p[k] for k in ("C", "train_error", "n_iter", "node_solves", "node_solves_skipped", "n_internal")})
