"""One TAO pass with the node solves ordered by the tree instead of by depth levels.

TAO's reverse breadth-first pass (Sec. 3) visits the nodes of one depth at a time, deepest first. What the
pass needs is weaker: a node's reduced problem (Theorem 3.2) depends on the points that reach it (set by its
ancestors, which are visited after it) and on its two subtrees (visited before it), and on nothing else. So
a node may be solved as soon as every node below it is done, whatever is still running elsewhere in the
tree: each node then sees exactly the problem it sees in the level-by-level pass and the result is the same
tree. It keeps both threads busy while one branch still works on a large node, where a barrier after every
level would leave a thread idle (Fashion-MNIST depth 12: the large nodes of depths 0-2 took most of a pass).
"""

import heapq
from concurrent.futures import FIRST_COMPLETED, wait


def pending_below(tasks, parent):
    """``{node: number of task nodes strictly below it}`` for every ancestor of a task node."""
    pending = {}
    for t in tasks:
        a = parent[t]
        while a >= 0:
            pending[a] = pending.get(a, 0) + 1
            a = parent[a]
    return pending


def release(node, parent, pending, is_task):
    """Mark ``node`` finished in ``pending``; returns the task ancestors that have nothing left below them."""
    now_ready = []
    a = parent[node]
    while a >= 0:
        pending[a] -= 1
        if pending[a] == 0 and a in is_task:
            now_ready.append(a)
        a = parent[a]
    return now_ready


def run_bottom_up(tasks, parent, priority, run, done, *, pool=None, n_threads=1, inline=None, prepare=None):
    """Run ``run(node, prepare(node))`` for every node of ``tasks``, each after all task nodes in its subtree have finished,
    and call ``done(node, result)`` in the calling thread as each finishes (in completion order).

    ``parent[i]`` is the parent of node ``i`` (-1 at the root). Among the ready nodes the one with the largest
    ``priority[node]`` starts first. With a ``pool``, up to ``n_threads`` nodes run at once in it; nodes for
    which ``inline(node)`` is true (cheap ones) run in the calling thread. ``done`` may change the tree the
    later ``run`` calls read; ``prepare`` (default: None for every node) is called in the calling thread when the
    node starts, e.g. to hand ``run`` a consistent view of that tree.
    """
    prepare = prepare or (lambda node: None)
    is_task = set(tasks)
    pending = pending_below(tasks, parent)
    ready = [(-priority[t], t) for t in tasks if pending.get(t, 0) == 0]
    heapq.heapify(ready)

    def finish(node, result):
        done(node, result)
        for a in release(node, parent, pending, is_task):
            heapq.heappush(ready, (-priority[a], a))

    running = {}
    while ready or running:
        while ready:
            node = ready[0][1]
            if pool is None or (inline is not None and inline(node)):
                heapq.heappop(ready)
                finish(node, run(node, prepare(node)))
            elif len(running) < n_threads:
                heapq.heappop(ready)
                running[pool.submit(run, node, prepare(node))] = node
            else:
                break
        if running:
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                finish(running.pop(future), future.result())
