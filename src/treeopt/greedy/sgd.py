"""The pieces of the CO2 stump optimiser that other learners build on (a public door to
:mod:`treeopt.greedy._co2_sgd`): the non-greedy trees (Norouzi et al. 2015b) take CO2's learning-rate rule (CO2 paper
Sec. 4.2) and its epoch shuffle, so both papers' SGD draws and decays the same way."""

from ._co2_sgd import _shuffle as shuffle  # numba: an epoch's in-place Fisher-Yates shuffle from a splitmix64 state
from ._co2_sgd import next_learning_rate

__all__ = ["next_learning_rate", "shuffle"]
