"""Provably optimal trees as a reference line: STreeD (NeurIPS 2023, ``pystreed``) over binarised features."""

from .streed import OptimalTreeClassifier

__all__ = ["OptimalTreeClassifier"]
