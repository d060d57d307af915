"""Progress of a forest fit, as log lines (a 1000-tree CO2 Forest on Connect-4 takes half an hour).

Lines go to the ``treeopt.forest`` logger at INFO, which a run folder's ``log.txt`` records; a library user
sees them after ``logging.basicConfig(level=logging.INFO)`` and nothing otherwise.
"""

from __future__ import annotations

import logging
import threading
import time

log = logging.getLogger("treeopt.forest")


class TreeProgress:
    """Counts fitted trees (from any thread) and logs at every tenth of the forest and at the last tree."""

    def __init__(self, name, n_trees):
        self.name = name
        self.n_trees = int(n_trees)
        self.step = max(1, self.n_trees // 10)
        self.done = 0
        self._lock = threading.Lock()
        self._start = time.perf_counter()

    def tree_done(self):
        with self._lock:
            self.done += 1
            done = self.done
        if done % self.step == 0 or done == self.n_trees:
            elapsed = time.perf_counter() - self._start
            left = elapsed / done * (self.n_trees - done)
            log.info("%s: %d/%d trees fitted, %.1f s elapsed, about %.0f s left", self.name, done, self.n_trees,
                     elapsed, left)
