"""Snakemake wrapper: the reproduction scorecard (every paper number of the profile beside ours) from its tables."""
from pathlib import Path

import pandas as pd

from treeopt.experiments.joblog import logged
from treeopt.experiments.plan import build_plan
from treeopt.experiments.scorecard import build_scorecard, write_scorecard

sm = snakemake  # noqa: F821
with logged(sm.log):
    tables = {Path(path).stem: (pd.read_csv(path), str(path)) for path in sm.input.tables}
    card = build_scorecard(tables, build_plan(sm.config), sm.config, profile=sm.params.profile)
    write_scorecard(card, Path(sm.output.csv).parent, Path(sm.output.png).parent, profile=sm.params.profile,
                    command=f"snakemake {sm.output.md}")
