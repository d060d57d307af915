"""Snakemake wrapper: prepare one data split with treeopt.data."""
from pathlib import Path

from treeopt.data import prepare_split

written = prepare_split(snakemake.wildcards.dataset, snakemake.config, int(snakemake.wildcards.seed))  # noqa: F821
if Path(written).resolve() != Path(snakemake.output[0]).resolve():  # noqa: F821
    raise RuntimeError(f"treeopt.data wrote {written}, the workflow expected {snakemake.output[0]}")  # noqa: F821
