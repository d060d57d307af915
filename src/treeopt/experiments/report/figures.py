"""Draw a registered figure from its table CSV and save PNG + PDF (the experiment layer's side of the figures: the
registry in :mod:`treeopt.experiments.plan.reports` names each figure's drawing function in :mod:`treeopt.plots`, which
draws from a table and imports nothing of the experiment layer)."""

from pathlib import Path

import pandas as pd

from ...plots.style import save
from ..plan.reports import FIGURES


def render_figure(name, table_csv, out_dir, *, datasets=None, profile="default"):
    """Write ``{out_dir}/{name}_{dataset}.png/.pdf`` per data set (or ``{name}.png/.pdf``); returns the stems."""
    spec = FIGURES[name]
    table = pd.read_csv(table_csv)
    draw = spec.renderer()
    stems = []
    for dataset in (datasets if spec.per_dataset else [None]):
        stem = Path(out_dir) / (f"{name}_{dataset}" if dataset is not None else name)
        save(draw(table, dataset, profile), stem)
        stems.append(stem)
    return stems
