"""Snakemake wrapper: prepare one data split with treeopt.data."""
import sys

from treeopt.experiments.warm_worker import call

sm = snakemake  # noqa: F821
sys.exit(call("treeopt.experiments.jobs:prepare_split", dict(
    log=sm.log[0], dataset=sm.wildcards.dataset, config=dict(sm.config), seed=int(sm.wildcards.seed),
    output=sm.output[0])))
