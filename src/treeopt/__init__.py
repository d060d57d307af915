"""treeopt: decision trees and forests beyond greedy induction."""

__version__ = "0.1.0"
