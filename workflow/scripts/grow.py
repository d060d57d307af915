"""Snakemake wrapper: grow a selection's grid one step past the chosen edge and choose again (issue #38)."""
import sys

from treeopt.experiments.warm_worker import call

sm = snakemake  # noqa: F821
sys.exit(call("treeopt.experiments.jobs:grow_selection", dict(
    log=sm.log[0], selection=sm.input.selection, output=sm.output[0], growth=list(sm.params.growth),
    steps=dict(sm.params.steps), dataset=sm.wildcards.dataset, method=sm.wildcards.method,
    seed=int(sm.wildcards.seed), split=sm.input.split, n_jobs=sm.threads, save_model=sm.params.save_model,
    inherit=dict(sm.params.inherit), axis_files=list(sm.input.get("axes", [])))))
