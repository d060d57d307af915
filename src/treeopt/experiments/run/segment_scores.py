"""Scoring a segmentation run's class sums: Jaccard and pixel accuracy of label maps, and depth stages.

**Depth stages** (config ``staged: {max_depth: all}`` with ``grow_order: level``, CO2 paper Fig. 4 left): a forest
grown level by level to depth D holds the forests grown to every smaller depth, tree for tree
(:meth:`treeopt.segmentation.ForestSegmenter.depth_sums`), so a depth sweep is one fit: the run records, under
``stages``, the whole forest's metrics with its trees cut at each depth of the sweep
(:mod:`treeopt.experiments.run.segment_runs` fits, blocks and merges it). Blocks keep each depth's sums
(``{part}_sum_depth{d}``) and the merge adds them in block order, as for the forest sizes.
"""

import numpy as np


def jaccard(truth, maps, k):
    from ...segmentation import confusion, jaccard_from_confusion

    return float(jaccard_from_confusion(confusion(truth, maps, k))[0])


def score_sums(estimator, truth, sized_sums, keep_at):
    """``({m: [jaccard, other rule's jaccard]}, primary label maps at size keep_at or None)`` from ``(m, sums)``
    pairs (:meth:`~treeopt.segmentation.ForestSegmenter.staged_sums`); the primary rule follows ``reweight``."""
    k = estimator.classes_.shape[0]
    reweight = getattr(estimator, "reweight", True)
    scores, kept = {}, None
    for m, sums in sized_sums:
        rw, bal = estimator.label_maps(sums, truth.shape)
        primary, other = (rw, bal) if reweight else (bal, rw)
        scores[int(m)] = [jaccard(truth, primary, k), jaccard(truth, other, k)]
        if m == keep_at:
            kept = primary
    return scores, kept


def other_key(estimator):
    return "jaccard_unweighted" if getattr(estimator, "reweight", True) else "jaccard_reweighted"


def pixel_metrics(estimator, truth, pred, jaccard, other):
    """A part's metrics: Jaccard (both rules) and the pixel accuracy inside the border of the label maps ``pred``."""
    from ...segmentation import IGNORE

    scored = pred != IGNORE
    accuracy = 100.0 * float(np.mean(truth[scored] == pred[scored]))
    return {"jaccard": jaccard, "accuracy": accuracy, "error": 100.0 - accuracy, other_key(estimator): other}


def depth_scores(estimator, parts, cut_sums, n_trees):
    """``{part: {d: (jaccard, other, label maps)}}`` of the whole forest (``n_trees`` trees) with its trees cut at each
    depth: ``cut_sums(part, images)`` gives the ``(d, sums)`` pairs, from the fitted forest
    (:meth:`~treeopt.segmentation.ForestSegmenter.depth_sums`) or added up from its tree blocks."""
    out = {}
    for part, (images, truth) in parts.items():
        if images.shape[0]:
            out[part] = {}
            for d, sums in cut_sums(part, images):
                got, maps = score_sums(estimator, truth, [(n_trees, sums)], n_trees)
                out[part][d] = (*got[n_trees], maps)
    return out


def depth_stages(estimator, parts, by_depth, n_trees):
    """The run's ``stages`` entries (one per depth, as :func:`treeopt.experiments.run.staged.staged_scores` writes
    them) from :func:`depth_scores`' ``by_depth``."""
    depths = sorted({d for scores in by_depth.values() for d in scores})
    stages = []
    for d in depths:
        entry = {"max_depth": d, "stage_value": d}
        for part in ("train", "val", "test"):
            got = by_depth.get(part, {}).get(d)
            entry[part] = {} if got is None else pixel_metrics(estimator, parts[part][1], got[2], got[0], got[1])
        entry["tree"] = {"n_trees": int(n_trees)}
        stages.append(entry)
    return stages


def check_depths(estimator, depths):
    """The depth stages, sorted (None when there are none); a ValueError unless the forest grows level by level to
    the deepest of them."""
    if not depths:
        return None
    depths = sorted({int(d) for d in depths})
    if getattr(estimator, "grow_order", "depth_first") != "level":
        raise ValueError(f"depth stages {depths} need a forest grown level by level (grow_order: level in the "
                         f"method's params)")
    if estimator.max_depth is None or depths[-1] != int(estimator.max_depth):
        raise ValueError(f"depth stages {depths}: the forest must be fitted to the deepest of them, its max_depth is "
                         f"{estimator.max_depth}")
    return depths
