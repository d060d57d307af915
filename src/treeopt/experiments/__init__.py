"""Experiment machinery behind the Snakemake workflow: config checking, the methods registry, runs, model
selection, and the report tables. ``python -m treeopt.experiments --help`` lists the command-line helpers."""
