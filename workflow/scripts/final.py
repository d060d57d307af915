"""Snakemake wrapper: a final run - the selected parameters (or the only ones) refit and tested."""
from treeopt.experiments.joblog import logged
from treeopt.experiments.runner import run
from treeopt.experiments.selection import final_params, read_selection

sm = snakemake  # noqa: F821
with logged(sm.log):
    if sm.params.fixed is None:
        params, selection = final_params(read_selection(sm.input.selection), sm.params.point), sm.input.selection
    else:
        params, selection = sm.params.fixed, None
    # no experiment name in the record: identical final runs of several experiments or profiles share the folder
    run(sm.output.run, dataset=sm.wildcards.dataset, method=sm.wildcards.method, params=params,
        seed=int(sm.wildcards.seed), split_path=sm.input.split, fit_on="trainval" if sm.params.refit else "train",
        n_jobs=sm.threads, save_model=sm.params.save_model,
        provenance={"role": "final", "sweep": sm.params.point, "selection": selection},
        inherit=sm.params.inherit, stages=sm.params.stages)
