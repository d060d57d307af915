"""Snakemake wrapper: a final run - the selected parameters (or the only ones) refit and tested."""
from treeopt.experiments.warmstart import run_job

sm = snakemake  # noqa: F821
run_job("final", dict(out=sm.output.run, dataset=sm.wildcards.dataset, method=sm.wildcards.method,
                      seed=int(sm.wildcards.seed), split=sm.input.split,
                      selection=sm.input.selection if sm.params.fixed is None else None,
                      point=dict(sm.params.point), fixed=None if sm.params.fixed is None else dict(sm.params.fixed),
                      refit=sm.params.refit, n_jobs=sm.threads, save_model=sm.params.save_model,
                      experiment=sm.params.experiment, inherit=dict(sm.params.inherit),
                      stages={k: list(v) for k, v in dict(sm.params.stages).items()}),
        log=sm.log)
