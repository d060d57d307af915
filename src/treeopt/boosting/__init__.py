"""Boosted forests: regularized greedy forest (Johnson & Zhang) and the paper's GBDT/AdaBoost baselines."""

from .rgf import RGFClassifier, RGFRegressor

__all__ = ["RGFClassifier", "RGFRegressor"]
