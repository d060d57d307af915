"""Snakemake wrapper: draw one report figure (PNG + PDF) from its table."""
import sys
from pathlib import Path

from treeopt.experiments.warm_worker import call

sm = snakemake  # noqa: F821
sys.exit(call("treeopt.experiments.jobs:figure", dict(
    log=sm.log[0], name=sm.wildcards.figure, table=sm.input.table, out_dir=str(Path(sm.output.png).parent),
    dataset=sm.wildcards.get("dataset"), profile=sm.params.profile)))
