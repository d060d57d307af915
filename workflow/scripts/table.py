"""Snakemake wrapper: aggregate final runs into one report table."""
import sys

from treeopt.experiments.warm_worker import call

sm = snakemake  # noqa: F821
sys.exit(call("treeopt.experiments.jobs:table", dict(
    log=sm.log[0], name=sm.wildcards.table, runs=list(sm.input.runs), output=sm.output[0],
    paper_links=dict(sm.params.paper_links))))
