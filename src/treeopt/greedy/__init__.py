"""Greedy top-down tree learners: axis-aligned, random oblique, OC1, CO2."""

from .axis import AxisAlignedTreeClassifier

__all__ = ["AxisAlignedTreeClassifier"]
