"""Boosted forests: regularized greedy forest (Johnson & Zhang) and the paper's AdaBoost and square-loss GBDT
baselines."""

from .baselines import BestFirstAdaBoostClassifier, SquareLossGBDTClassifier
from .rgf import RGFClassifier, RGFRegressor

__all__ = ["BestFirstAdaBoostClassifier", "RGFClassifier", "RGFRegressor", "SquareLossGBDTClassifier"]
