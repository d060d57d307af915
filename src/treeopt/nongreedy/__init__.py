"""Non-greedy oblique decision trees (Norouzi et al., NeurIPS 2015): SGD and Stable SGD on the surrogate eq. (9)."""

from .estimator import NonGreedyTreeClassifier, NonGreedyTreeRegressor

__all__ = ["NonGreedyTreeClassifier", "NonGreedyTreeRegressor"]
