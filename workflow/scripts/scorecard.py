"""Snakemake wrapper: the reproduction scorecard (every paper number of the profile beside ours) from its tables."""
import sys

from treeopt.experiments.warm_worker import call

sm = snakemake  # noqa: F821
sys.exit(call("treeopt.experiments.jobs:scorecard", dict(
    log=sm.log[0], tables=list(sm.input.tables), config=dict(sm.config), profile=sm.params.profile,
    csv=sm.output.csv, png=sm.output.png, md=sm.output.md)))
