"""Tree Alternating Optimization (Carreira-Perpinan & Tavallali, NeurIPS 2018): axis-aligned and sparse
oblique trees refined from an initial tree."""

from .tao import TAOTreeClassifier, tao_path

__all__ = ["TAOTreeClassifier", "tao_path"]
