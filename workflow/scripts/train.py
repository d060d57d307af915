"""Snakemake wrapper: one candidate run (fit on the training part)."""
from treeopt.experiments.joblog import logged
from treeopt.experiments.runner import run

sm = snakemake  # noqa: F821
with logged(sm.log):
    run(sm.output.run, dataset=sm.wildcards.dataset, method=sm.wildcards.method, params=sm.params.hyper,
        seed=int(sm.wildcards.seed), split_path=sm.input.split, fit_on="train", n_jobs=sm.threads,
        save_model=sm.params.save_model, provenance={"role": "candidate"}, inherit=sm.params.inherit)
