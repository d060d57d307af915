"""Snakemake wrapper: draw one report figure (PNG + PDF) from its table."""
from pathlib import Path

from treeopt.experiments.joblog import logged
from treeopt.plots.render import render_figure

sm = snakemake  # noqa: F821
with logged(sm.log):
    dataset = sm.wildcards.get("dataset")
    render_figure(sm.wildcards.figure, sm.input.table, Path(sm.output.png).parent,
                  datasets=[dataset] if dataset else None, profile=sm.params.profile)
