"""Snakemake wrapper: choose the best candidate on the validation set."""
import sys

from treeopt.experiments.warm_worker import call

sm = snakemake  # noqa: F821
sys.exit(call("treeopt.experiments.jobs:select", dict(
    log=sm.log[0], runs=list(sm.input.runs), metric=sm.params.metric, output=sm.output[0],
    info={"dataset": sm.wildcards.dataset, "method": sm.wildcards.method, "seed": int(sm.wildcards.seed)})))
