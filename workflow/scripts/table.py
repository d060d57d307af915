"""Snakemake wrapper: aggregate final runs into one report table."""
from treeopt.experiments.joblog import logged
from treeopt.experiments.reports import TABLES
from treeopt.experiments.tables import load_runs, write_table

sm = snakemake  # noqa: F821
with logged(sm.log):
    write_table(TABLES[sm.wildcards.table].builder()(load_runs(sm.input.runs)), sm.output[0])
