"""TAO's bottom-up pass scheduler: every node after its whole subtree, once; threads give the serial tree."""

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits

import treeopt.tao.tao as tao_module
from treeopt.tao import TAOTreeClassifier
from treeopt.tao._schedule import run_bottom_up


def _random_tree(rng, n_nodes):
    """Parent array of a random binary tree with n_nodes nodes (a parent's id is below its children's)."""
    parent = [-1]
    free = [0, 0]  # open child slots, one entry per slot (node id)
    for i in range(1, n_nodes):
        slot = free.pop(rng.integers(len(free)))
        parent.append(slot)
        free += [i, i]
    return np.array(parent)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n_nodes=st.integers(1, 60), n_threads=st.integers(1, 3),
       frac=st.floats(0.1, 1.0))
def test_every_task_runs_once_after_its_subtree(seed, n_nodes, n_threads, frac):
    rng = np.random.default_rng(seed)
    parent = _random_tree(rng, n_nodes)
    tasks = [int(i) for i in np.flatnonzero(rng.random(n_nodes) < frac)]
    priority = rng.integers(0, 100, n_nodes)
    started, finished, lock = [], [], threading.Lock()

    def below(i):  # task nodes strictly below i
        out = []
        for t in tasks:
            a = parent[t]
            while a >= 0:
                if a == i:
                    out.append(t)
                    break
                a = parent[a]
        return out

    def run(node, state):
        assert state == ("prepared", node)
        with lock:
            started.append(node)
            # every task below it has already been reported done
            assert set(below(node)) <= set(finished)
        return node * 2

    def done(node, result):
        assert result == node * 2
        finished.append(node)

    pool = ThreadPoolExecutor(n_threads) if n_threads > 1 else None
    try:
        run_bottom_up(tasks, parent, priority, run, done, pool=pool, n_threads=n_threads,
                      inline=lambda node: node % 3 == 0, prepare=lambda node: ("prepared", node))
    finally:
        if pool is not None:
            pool.shutdown()
    assert sorted(finished) == sorted(tasks)
    assert sorted(started) == sorted(tasks)


def test_serial_order_follows_priority_among_ready_nodes():
    # root 0 with children 1, 2; 2 has children 3, 4. Leaves 1, 3, 4 are ready at once.
    parent = np.array([-1, 0, 0, 2, 2])
    order = []
    run_bottom_up([0, 1, 2, 3, 4], parent, np.array([0, 5, 1, 9, 3]), lambda node, _: order.append(node),
                  lambda node, _: None)
    assert order == [3, 1, 4, 2, 0]  # 2 becomes ready only after 3 and 4, and then it is the only one


@pytest.mark.parametrize("node_type", ["axis", "oblique"])
def test_threads_give_the_serial_tree(monkeypatch, node_type):
    """With LIBLINEAR's calls serialised (its rand() is shared between threads), two threads solving the nodes
    in a different order must produce the very tree of the one-thread fit: each node sees the same problem."""
    X, y = load_digits(return_X_y=True)
    X, y = X[:800] / 16.0, y[:800]
    lock = threading.Lock()
    l1_svm_rows = tao_module.l1_svm_rows

    def locked(*args, **kwargs):
        with lock:
            return l1_svm_rows(*args, **kwargs)

    monkeypatch.setattr(tao_module, "l1_svm_rows", locked)
    trees = [TAOTreeClassifier(node_type=node_type, C=1.0, max_depth=6, random_state=0, n_jobs=jobs,
                               max_iter=3).fit(X, y).tree_ for jobs in (1, 2)]
    a, b = trees
    assert a.n_nodes == b.n_nodes > 30
    np.testing.assert_array_equal(a.left, b.left)
    np.testing.assert_array_equal(a.bias, b.bias)
    assert (a.W != b.W).nnz == 0
    np.testing.assert_array_equal(a.value, b.value)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n_updates=st.integers(1, 60))
def test_work_tree_rows_after_in_place_updates(seed, n_updates):
    """Replacing node rows one at a time (the buffers grow by copying) keeps every node's row at lo:hi, and a
    snapshot taken before an update still holds the old rows of the other nodes."""
    from treeopt.tao.tao import _WorkTree
    from treeopt.trees import Tree

    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(60, 7)), rng.integers(0, 3, 60)
    from sklearn.tree import DecisionTreeClassifier

    tree = Tree.from_sklearn(DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y))
    work = _WorkTree(tree, np.zeros(tree.n_nodes, dtype=int))
    internal = np.flatnonzero(work.left >= 0)
    for _ in range(n_updates):
        node = int(rng.choice(internal))
        before = work.arrays()
        others = {i: (before[6][before[4][i]:before[5][i]].copy(), before[7][before[4][i]:before[5][i]].copy())
                  for i in work.rows if i != node}
        w = rng.normal(size=7) * (rng.random(7) < 0.6)
        work.set_oblique(node, w, 0.5)
        for i, (idx, val) in others.items():  # the old snapshot is untouched for the other nodes
            np.testing.assert_array_equal(before[6][before[4][i]:before[5][i]], idx)
            np.testing.assert_array_equal(before[7][before[4][i]:before[5][i]], val)
    lo, hi, indices, data = work.arrays()[4:]
    for i, (idx, val) in work.rows.items():
        np.testing.assert_array_equal(indices[lo[i]:hi[i]], idx)
        np.testing.assert_array_equal(data[lo[i]:hi[i]], val)
        assert work.feature[i] == -1
    # the routing kernels read exactly these rows: each point goes right at an oblique node iff w . x - b >= 0
    from treeopt.tao import _kernels as K

    reach = K.reach_by_depth(X, *work.arrays(), work.max_depth)
    for r in range(60):
        for d in range(reach.shape[1] - 1):
            node, nxt = reach[r, d], reach[r, d + 1]
            if nxt < 0 or work.feature[node] != -1:
                continue
            idx, val = work.rows[int(node)]
            s = 0.0
            for j, v in zip(idx, val):  # the kernel's order of summation
                s += v * X[r, j]
            assert (nxt == work.right[node]) == (s - work.bias[node] >= 0.0)
