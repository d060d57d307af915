"""Snakemake wrapper: choose the best candidate on the validation set."""
from treeopt.experiments.warmstart import run_job

sm = snakemake  # noqa: F821
run_job("select", dict(runs=list(sm.input.runs), metric=sm.params.metric, out=sm.output[0],
                       info={"experiment": sm.wildcards.experiment, "dataset": sm.wildcards.dataset,
                             "method": sm.wildcards.method, "seed": int(sm.wildcards.seed), "at": sm.params.at}),
        log=sm.log)
