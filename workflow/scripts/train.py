"""Snakemake wrapper: one candidate run (fit on the training part); see treeopt.experiments.jobs."""
from treeopt.experiments.warmstart import run_job

sm = snakemake  # noqa: F821
run_job("candidate", dict(out=sm.output.run, dataset=sm.wildcards.dataset, method=sm.wildcards.method,
                          params=dict(sm.params.hyper), seed=int(sm.wildcards.seed), split=sm.input.split,
                          n_jobs=sm.threads, save_model=sm.params.save_model, inherit=dict(sm.params.inherit)),
        log=sm.log)
