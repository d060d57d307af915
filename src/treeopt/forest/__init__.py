"""Forests: bootstrap bagging of any treeopt tree (OC1 Forest, CO2 Forest)."""

from .bagging import BaggedTreesClassifier, predict_proba_saved
from .co2 import CO2ForestClassifier
from .oc1 import OC1ForestClassifier

__all__ = ["BaggedTreesClassifier", "CO2ForestClassifier", "OC1ForestClassifier", "predict_proba_saved"]
