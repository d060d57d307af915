"""Wall time of a TAO fit on an otherwise idle machine, estimated from its node solves' thread CPU times.

On a shared machine the wall time of a fit says little (other jobs take the cores), but the CPU time of each
node solve (``time.thread_time``, logged in ``TAOTreeClassifier.task_log_`` when ``_record_tasks`` is set) does
not depend on the load. Replaying the fit's node solves on ``n_threads`` simulated threads gives the wall time
the passes would take with the cores to themselves (memory-bandwidth contention between the threads and the
GIL-held Python between solves are not modelled; the per-iteration work outside the passes is added as
measured). Two schedules: ``levels`` (a barrier after each depth level, the nodes of a level handed out in
node order: the pass before the tree-ordered scheduler) and ``tree`` (``treeopt.tao._schedule``: a node
starts once its subtree is done, highest priority first).
"""

import heapq

import pandas as pd

from treeopt.tao._schedule import pending_below, release

COLUMNS = ["C", "iteration", "node", "parent", "depth", "n_rows", "priority", "is_leaf", "cpu_seconds", "n_care",
           "liblinear_seconds"]


def _levels(tasks, n_threads):
    wall = 0.0
    for _, level in tasks.groupby("depth", sort=True):
        free = [0.0] * n_threads
        for cpu in level.sort_values("node")["cpu_seconds"]:
            t = heapq.heappop(free)
            heapq.heappush(free, t + cpu)
        wall += max(free)
    return wall


def _tree(tasks, parent, n_threads):
    cpu = dict(zip(tasks["node"], tasks["cpu_seconds"]))
    prio = dict(zip(tasks["node"], tasks["priority"]))
    leaf = dict(zip(tasks["node"], tasks["is_leaf"]))
    pending = pending_below(cpu, parent)
    ready = [(-prio[n], n) for n in cpu if pending.get(n, 0) == 0]
    heapq.heapify(ready)
    running, now = [], 0.0

    def finish(node):
        for a in release(node, parent, pending, cpu):
            heapq.heappush(ready, (-prio[a], a))

    while ready or running:
        while ready:
            node = ready[0][1]
            if leaf[node]:
                heapq.heappop(ready)
                finish(node)
            elif len(running) < n_threads:
                heapq.heappop(ready)
                heapq.heappush(running, (now + cpu[node], node))
            else:
                break
        if running:
            now, node = heapq.heappop(running)
            finish(node)
    return now


def estimate(task_log, task_parents, pass_stats, n_threads=2):
    """``task_parents``: the work tree's parent array per C (``TAOTreeClassifier.task_parents_``). Per iteration: summed node-solve CPU and the simulated wall of both schedules (seconds)."""
    tasks = pd.DataFrame(task_log, columns=COLUMNS)
    passes = pd.DataFrame(pass_stats).set_index(["C", "iteration"])
    rows = []
    for (C, it), group in tasks.groupby(["C", "iteration"]):
        outside = passes.loc[(C, it), "iteration_seconds"] - passes.loc[(C, it), "pass_seconds"]
        rows.append({"C": C, "iteration": it, "cpu_seconds": group["cpu_seconds"].sum(), "outside_seconds": outside,
                     "levels_wall": _levels(group, n_threads) + outside, "tree_wall": _tree(group, task_parents[C], n_threads) + outside,
                     "root_cpu": group.loc[group["parent"] < 0, "cpu_seconds"].sum()})
    return pd.DataFrame(rows)
