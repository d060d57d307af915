"""TAO's warm-started sparsity path (Sec. 4) read off one fit: ``path_step(i)`` is the fit that stops at the i-th C.

A model selection over C (config ``path: C``) scores every C of the path from the fit at the smallest one; that is
only sound if the path's tree at C is the tree of a fit with that C and the same larger warm-start values.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from treeopt.tao import TAOTreeClassifier

TIMING = {"liblinear_seconds", "init_seconds"}


def _data(seed):
    return make_classification(n_samples=300, n_features=8, n_informative=5, n_classes=3, n_clusters_per_class=1,
                               random_state=seed)


def _same_tree(a, b):
    for name in ("left", "right", "feature", "bias", "value", "n_samples"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert (a.W != b.W).nnz == 0 if hasattr(a.W, "nnz") else np.array_equal(a.W, b.W)


@pytest.mark.parametrize("init, accept, tol, seed", [("cart", "always", 0.0, 0), ("random", "objective", 0.005, 1),
                                                     ("cart", "objective", 0.005, 2)])
def test_each_step_of_a_path_is_the_fit_that_stops_at_its_C(init, accept, tol, seed):
    X, y = _data(seed)
    warm = [10, 3, 1, 0.3]
    params = dict(max_depth=4, init=init, accept=accept, tol=tol, warm_start_C=warm, random_state=seed, n_jobs=1)
    path = TAOTreeClassifier(C=0.1, **params).fit(X, y)
    assert path.stage_sizes_["C"] == [10.0, 3.0, 1.0, 0.3, 0.1]
    for step, C in enumerate([10, 3, 1, 0.3, 0.1]):
        alone = TAOTreeClassifier(C=C, **params).fit(X, y)
        read = path.path_step(step)
        _same_tree(read.tree_, alone.tree_)
        np.testing.assert_array_equal(read.predict_proba(X), alone.predict_proba(X))
        assert read.history_ == alone.history_ and read.n_iter_ == alone.n_iter_
        assert {k: v for k, v in read.fit_stats_.items() if k not in TIMING} == \
            {k: v for k, v in alone.fit_stats_.items() if k not in TIMING}
        assert read.stage_sizes_ == alone.stage_sizes_
        assert [p["C"] for p in read.path_] == [p["C"] for p in alone.path_]
        assert read.get_params()["C"] == C
    # the fit read from is left as it was
    assert path.stage_sizes_["C"][-1] == 0.1 and path.tree_ is path.path_trees_[-1] and len(path.path_) == 5


def test_a_step_outside_the_path_is_an_error():
    X, y = _data(0)
    est = TAOTreeClassifier(C=1, warm_start_C=[10], max_depth=3, random_state=0).fit(X, y)
    with pytest.raises(IndexError, match="path has 2 steps"):
        est.path_step(2)
