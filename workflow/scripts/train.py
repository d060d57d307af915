"""Snakemake wrapper: one candidate run (fit on the training part), run by treeopt.experiments.jobs."""
import sys

from treeopt.experiments.warm_worker import call

sm = snakemake  # noqa: F821
sys.exit(call("treeopt.experiments.jobs:candidate_run", dict(
    log=sm.log[0], output=sm.output.run, dataset=sm.wildcards.dataset, method=sm.wildcards.method,
    params=sm.params.hyper, seed=int(sm.wildcards.seed), split=sm.input.split, n_jobs=sm.threads,
    save_model=sm.params.save_model, inherit=sm.params.inherit, blocks=[str(b) for b in sm.input.get("blocks", [])],
    path_run=sm.input.get("path_run"))))
