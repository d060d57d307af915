"""The parsed data set every reader returns, before it is split (:class:`Table`), and the part codes of its rows.

Its own module so that readers of any format (``readers``, ``faces``) can build one without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PART_CODES = {"data": -1, "train": 0, "val": 1, "test": 2}


@dataclass
class Table:
    """A parsed dataset before splitting.

    ``y`` holds raw labels (strings or numbers); ``part`` is -1 (unassigned), 0 (train),
    1 (validation) or 2 (test) per row; ``group`` an optional integer id per row (e.g. the
    CT-slices patient).
    """

    X: np.ndarray
    y: np.ndarray
    part: np.ndarray
    group: np.ndarray | None = None
    feature_names: list[str] | None = None
