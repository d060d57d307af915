"""Boosted forests: regularized greedy forest (Johnson & Zhang) and the paper's AdaBoost baseline."""

from .baselines import BestFirstAdaBoostClassifier
from .rgf import RGFClassifier, RGFRegressor

__all__ = ["BestFirstAdaBoostClassifier", "RGFClassifier", "RGFRegressor"]
