"""Level-order growth (``grow_order="level"``, treeopt.greedy._grow): a tree grown to depth D contains the tree
grown to every smaller depth with the same seed, node for node, so a depth sweep reads every depth off one fit
(config ``path: max_depth``). The default depth-first order keeps the trees of earlier versions bit for bit, and
level order only re-assigns the random draws to nodes: the same accuracy distribution over seeds."""

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits, load_wine
from sklearn.model_selection import train_test_split

from treeopt.greedy import OC1TreeClassifier, RandomObliqueTreeClassifier
from treeopt.greedy import level_order_prefix

DIGITS = load_digits(return_X_y=True)
LEARNERS = {"oc1": (OC1TreeClassifier, {"n_restarts": 2, "n_perturbations": 2, "max_features": "sqrt"}),
            "random_oblique": (RandomObliqueTreeClassifier, {"n_hyperplanes": 15})}


def _arrays(tree):
    a = tree.to_arrays()
    return {k: v for k, v in a.items() if k != "meta"}, str(a["meta"])


def _same_tree(a, b):
    (x, mx), (y, my) = _arrays(a), _arrays(b)
    return mx == my and x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) for k in x)


@settings(max_examples=12, deadline=None)
@given(learner=st.sampled_from(sorted(LEARNERS)), seed=st.integers(0, 2**31 - 1), depth=st.integers(1, 7),
       min_samples_leaf=st.sampled_from([1, 3]))
def test_the_tree_limited_to_a_smaller_depth_is_the_fit_at_that_depth(learner, seed, depth, min_samples_leaf):
    cls, params = LEARNERS[learner]
    X, y = load_wine(return_X_y=True)
    deep = cls(max_depth=8, random_state=seed, grow_order="level", min_samples_leaf=min_samples_leaf,
               **params).fit(X, y)
    alone = cls(max_depth=depth, random_state=seed, grow_order="level", min_samples_leaf=min_samples_leaf,
                **params).fit(X, y)
    step = deep.depth_step(depth)
    assert _same_tree(step.tree_, alone.tree_)
    assert np.array_equal(step.predict_proba(X), alone.predict_proba(X))
    assert (step.n_oblique_splits_, step.n_axis_splits_) == (alone.n_oblique_splits_, alone.n_axis_splits_)
    assert step.max_depth == depth and deep.max_depth == 8  # a copy: the deep fit is unchanged
    assert 0 <= step.growing_seconds() <= deep.growing_seconds()


def test_every_depth_of_a_digits_tree_is_its_own_fit():
    X, y = DIGITS
    for learner, (cls, params) in LEARNERS.items():
        deep = cls(max_depth=9, random_state=5, grow_order="level", **params).fit(X, y)
        times = [deep.growing_seconds(d) for d in range(1, 10)]
        assert times == sorted(times)
        for depth in range(1, 9):
            alone = cls(max_depth=depth, random_state=5, grow_order="level", **params).fit(X, y)
            assert _same_tree(deep.depth_step(depth).tree_, alone.tree_), (learner, depth)


def test_depth_first_growth_keeps_the_trees_of_earlier_versions():
    """Digests of these two fits made at ed01351, before level order existed (the default must not move)."""
    X, y = DIGITS

    def digest(tree):
        arrays, _ = _arrays(tree)
        h = hashlib.sha256()
        for k in sorted(arrays):
            h.update(np.ascontiguousarray(arrays[k]).tobytes())
        return h.hexdigest()[:16]

    assert digest(OC1TreeClassifier(n_restarts=3, max_depth=6, random_state=0).fit(X, y).tree_) == "446a53528dd69b85"
    assert digest(RandomObliqueTreeClassifier(n_hyperplanes=20, max_depth=6, random_state=0)
                  .fit(X, y).tree_) == "acd68f4f95f20942"


@pytest.mark.parametrize("learner", sorted(LEARNERS))
def test_level_order_gives_the_same_accuracy_distribution_over_seeds(learner):
    """12 seeds each: the mean test accuracies of the two orders within 2 standard errors of their difference
    (measured: random oblique 69.4 / 69.5%, OC1 83.6 / 84.1% on this split; 0.1 and 0.8 standard errors)."""
    cls, params = LEARNERS[learner]
    params = {**params, "n_hyperplanes": 20} if learner == "random_oblique" else params
    depth = 8 if learner == "random_oblique" else 6
    X, y = DIGITS
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.5, random_state=0)
    acc = {order: np.array([cls(max_depth=depth, random_state=s, grow_order=order, **params).fit(Xa, ya)
                            .score(Xb, yb) for s in range(12)]) for order in ("depth_first", "level")}
    a, b = acc["depth_first"], acc["level"]
    assert not np.array_equal(a, b)  # the orders do draw differently
    se = np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert abs(a.mean() - b.mean()) <= 2 * se


def test_a_depth_is_read_only_off_a_level_order_fit_deep_enough():
    X, y = load_wine(return_X_y=True)
    depth_first = OC1TreeClassifier(max_depth=4, n_restarts=1, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="grow_order='level'"):
        depth_first.depth_step(2)
    with pytest.raises(ValueError, match="grow_order='level'"):
        depth_first.growing_seconds()
    level = OC1TreeClassifier(max_depth=4, n_restarts=1, random_state=0, grow_order="level").fit(X, y)
    with pytest.raises(ValueError, match="not a depth of this fit"):
        level.depth_step(5)
    with pytest.raises(ValueError, match="not a depth of this fit"):
        level.depth_step(0)
    tree = RandomObliqueTreeClassifier(max_depth=6, n_hyperplanes=5, random_state=0).fit(*DIGITS).tree_
    assert np.any(np.diff(tree.depth) < 0)  # depth first numbers a deep left subtree before its right sibling
    with pytest.raises(ValueError, match="level by level"):
        level_order_prefix(tree, 3)
    with pytest.raises(ValueError, match="grow_order"):
        OC1TreeClassifier(grow_order="breadth").fit(X, y)
