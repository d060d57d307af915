"""Snakemake wrapper: prepare one data split with treeopt.data."""
from treeopt.experiments.warmstart import run_job

sm = snakemake  # noqa: F821
run_job("prepare", dict(dataset=sm.wildcards.dataset, config=dict(sm.config), seed=int(sm.wildcards.seed),
                        out=sm.output[0]), log=sm.log)
