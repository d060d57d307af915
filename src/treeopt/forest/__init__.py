"""Forests: bootstrap bagging of any treeopt tree (OC1 Forest, CO2 Forest)."""

from .bagging import BaggedTreesClassifier
from .co2 import CO2ForestClassifier
from .oc1 import OC1ForestClassifier

__all__ = ["BaggedTreesClassifier", "CO2ForestClassifier", "OC1ForestClassifier"]
