"""Snakemake wrapper: a final run - the selected parameters (or the only ones) refit and tested."""
import sys

from treeopt.experiments.warm_worker import call

sm = snakemake  # noqa: F821
sys.exit(call("treeopt.experiments.jobs:final_run", dict(
    log=sm.log[0], output=sm.output.run, dataset=sm.wildcards.dataset, method=sm.wildcards.method,
    seed=int(sm.wildcards.seed), split=sm.input.split, selection=sm.input.get("selection"), point=sm.params.point,
    fixed=sm.params.fixed, refit=sm.params.refit, n_jobs=sm.threads, save_model=sm.params.save_model,
    inherit=sm.params.inherit, stages=sm.params.stages, blocks=[str(b) for b in sm.input.get("blocks", [])],
    depth_path=sm.input.get("depth_path"))))
