"""Face-part segmentation with window forests (CO2 paper Sec. 6.2)."""

from .forest import SPLIT_KINDS, ForestSegmenter
from .windows import IGNORE, confusion, extract_windows, jaccard_from_confusion, jaccard_score, valid_mask

__all__ = ["IGNORE", "SPLIT_KINDS", "ForestSegmenter", "confusion", "extract_windows", "jaccard_from_confusion",
           "jaccard_score", "valid_mask"]
