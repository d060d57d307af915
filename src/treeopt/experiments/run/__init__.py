"""Running: a run fitted, measured and written to its folder (``runner``), forests scored tree by tree or split into
tree blocks and merged, model selection on the validation set, and earlier versions' folders renamed (``migrate``).
Imports :mod:`treeopt.experiments.plan` and :mod:`treeopt.experiments.infra`, never the reports.
"""
