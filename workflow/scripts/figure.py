"""Snakemake wrapper: draw one report figure (PNG + PDF) from its table."""
from treeopt.experiments.warmstart import run_job

sm = snakemake  # noqa: F821
run_job("figure", dict(name=sm.wildcards.figure, table_csv=sm.input.table, png=sm.output.png,
                       dataset=sm.wildcards.get("dataset"), profile=sm.params.profile), log=sm.log)
