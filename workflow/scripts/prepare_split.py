"""Snakemake wrapper: prepare one data split with treeopt.data."""
from pathlib import Path

from treeopt.data import prepare_split
from treeopt.experiments.joblog import logged

sm = snakemake  # noqa: F821
with logged(sm.log):
    written = prepare_split(sm.wildcards.dataset, sm.config, int(sm.wildcards.seed))
    if Path(written).resolve() != Path(sm.output[0]).resolve():
        raise RuntimeError(f"treeopt.data wrote {written}, the workflow expected {sm.output[0]}")
