"""Snakemake wrapper: choose the best candidate on the validation set."""
from treeopt.experiments.joblog import logged
from treeopt.experiments.selection import select_runs

sm = snakemake  # noqa: F821
with logged(sm.log):
    select_runs(list(sm.input.runs), sm.params.metric, sm.output[0],
                info={"dataset": sm.wildcards.dataset, "method": sm.wildcards.method, "seed": int(sm.wildcards.seed)})
