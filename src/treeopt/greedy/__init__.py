"""Greedy top-down tree learners: axis-aligned, random oblique, OC1, CO2."""

from ._grow import level_order_prefix
from .axis import AxisAlignedTreeClassifier
from .co2 import CO2TreeClassifier
from .oc1 import OC1TreeClassifier
from .random_oblique import RandomObliqueTreeClassifier
from .two_probe import TwoProbeTreeClassifier

__all__ = ["AxisAlignedTreeClassifier", "CO2TreeClassifier", "OC1TreeClassifier", "RandomObliqueTreeClassifier",
           "TwoProbeTreeClassifier", "level_order_prefix"]
