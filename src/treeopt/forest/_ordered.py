"""Results of a function over items, computed in threads and handed out in the items' order, with a bounded
number of results alive at once.

A forest's trees are fitted in threads (the numba kernels release the GIL) and consumed one by one (scored and
dropped, or written to disk): ``ThreadPoolExecutor.map`` submits every item at once, so a slow consumer or one
slow tree would let finished trees pile up without bound. Here at most ``window`` items are submitted and not
yet handed out: memory holds at most ``window`` trees, whatever the forest's size. Items are handed out from one
queue as threads become free, so no thread idles while the window has work.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import ThreadPoolExecutor


def ordered_map(fn, items, n_workers, window=None):
    """Yield ``fn(item)`` for every item, in order; ``n_workers`` threads (1: in this thread, nothing ahead).

    ``window`` (default ``2 * n_workers``) bounds the submitted-but-not-yielded results. Closing the generator
    early (or an error in ``fn``) cancels the queued items and waits for the running ones.
    """
    if n_workers <= 1:
        for item in items:
            yield fn(item)
        return
    window = max(n_workers, int(window or 2 * n_workers))
    items = iter(items)
    pool = ThreadPoolExecutor(max_workers=n_workers)
    pending = deque()
    try:
        for item in items:
            pending.append(pool.submit(fn, item))
            if len(pending) >= window:
                break
        while pending:
            result = pending.popleft().result()
            for item in items:  # refill the window by one
                pending.append(pool.submit(fn, item))
                break
            yield result
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
