"""Snakemake wrapper: one tree block of a final run's forest, run by treeopt.experiments.jobs."""
import sys

from treeopt.experiments.warm_worker import call

sm = snakemake  # noqa: F821
sys.exit(call("treeopt.experiments.jobs:forest_block", dict(
    log=sm.log[0], output=sm.output.block, dataset=sm.wildcards.dataset, method=sm.wildcards.method,
    seed=int(sm.wildcards.seed), split=sm.input.split, selection=sm.input.get("selection"), n_jobs=sm.threads,
    **sm.params.job)))
