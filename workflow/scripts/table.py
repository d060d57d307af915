"""Snakemake wrapper: aggregate final runs into one report table."""
from treeopt.experiments.warmstart import run_job

sm = snakemake  # noqa: F821
run_job("table", dict(name=sm.wildcards.table, runs=list(sm.input.runs), out=sm.output[0]), log=sm.log)
