"""Snakemake wrapper: fit the grown candidate of one grid axis of a grown selection, if the choice lies at its edge."""
import sys

from treeopt.experiments.warm_worker import call

sm = snakemake  # noqa: F821
sys.exit(call("treeopt.experiments.jobs:grow_axis", dict(
    log=sm.log[0], selection=sm.input.selection, output=sm.output[0], growth=list(sm.params.growth),
    param=sm.wildcards.axis, grown=sm.params.grown, dataset=sm.wildcards.dataset, method=sm.wildcards.method,
    seed=int(sm.wildcards.seed), split=sm.input.split, n_jobs=sm.threads, save_model=sm.params.save_model,
    inherit=dict(sm.params.inherit))))
