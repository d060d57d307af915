"""The cost of a plan's jobs (:mod:`treeopt.experiments.infra.cost` costs one run): a planned candidate run, final
run, tree block or merge (:func:`estimate_spec`, which :mod:`treeopt.experiments.infra.resources` turns into what a
job asks the scheduler for), and the whole plan summed by experiment (:func:`estimate_plan`, what
``python -m treeopt.experiments plan --estimate`` prints)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from ..plan.methods import get_method
from ..plan.tree_blocks import N_TRAIN_SCORED, stage_sizes
from .cost import Estimate, dataset_shape, estimate_run, load_model


def estimate_spec(spec, profile, threads=1, model=None, processed_dir=None):
    """:func:`estimate_run` of a planned candidate (``RunSpec``), final run (``FinalSpec``) or tree block
    (``BlockSpec``); a candidate read off another's warm-started path (``RunSpec.path_run``), and a final run that
    reads its chosen candidate (:func:`reads_chosen_candidate`), cost a job's start-up.
    A final run whose parameters are chosen by a selection is costed at the most expensive candidate
    of that selection. A final run split into tree blocks is costed as its merge (:func:`estimate_merge`), each block
    as a forest of its trees (no staged sizes: a block only sums). A grown selection's job
    (``GrownSelectionSpec``) is costed by :func:`estimate_growth`."""
    if hasattr(spec, "growth"):
        return estimate_growth(spec, threads, model, processed_dir)
    if hasattr(spec, "first"):  # a tree block (of a final run, or of a candidate: a RunSpec, fitted on train)
        if not hasattr(spec.final, "refit"):
            return estimate_run(spec.final.method, {**dict(spec.final.params), "n_estimators": spec.stop - spec.first},
                                spec.final.dataset, fit_on="train", threads=threads, model=model,
                                processed_dir=processed_dir, score_test=False)
        return _estimate_final(spec.final, threads, model, processed_dir, n_trees=spec.stop - spec.first)
    if getattr(spec, "block_trees", None) is not None:
        return estimate_merge(spec, model, processed_dir)
    if hasattr(spec, "refit"):
        return _estimate_final(spec, threads, model, processed_dir)
    if getattr(spec, "path_run", None):  # read off another candidate's path (plan.paths): a job's start-up
        model = model or load_model()
        return Estimate(float(model.get("start_seconds", 0.0)), float(model["base_mb"]))
    # a candidate (a segmentation candidate labels no test image: jobs.candidate_run)
    return estimate_run(spec.method, dict(spec.params), spec.dataset, fit_on="train", threads=threads, model=model,
                        processed_dir=processed_dir, score_test=False)


def depth_stages(spec):
    """The ``(("max_depth", depths),)`` stages of a segmentation run (its trees cut at each depth), else ()."""
    if get_method(spec.method).task != "segmentation":
        return ()
    return tuple((p, v) for p, v in (getattr(spec, "stages", ()) or ()) if p == "max_depth")


def reads_chosen_candidate(spec):
    """Whether a final run's job reads its chosen candidate's folder instead of fitting (``jobs.final_run``): not
    refitted, no staged sizes or tree blocks, and its sweep values already every candidate's."""
    if spec.selection is None or spec.refit or spec.stages or spec.block_trees is not None:
        return False
    return all(dict(c.params).get(k, object()) == v for c in spec.selection.candidates for k, v in spec.point)


def _estimate_final(spec, threads, model, processed_dir, n_trees=None):
    """A final run's estimate; ``n_trees``: of a forest of that many of its trees instead (a tree block)."""
    if n_trees is None and reads_chosen_candidate(spec):  # a job's start-up: its candidate was fitted and charged
        model = model or load_model()
        return Estimate(float(model.get("start_seconds", 0.0)), float(model["base_mb"]))
    # a block sums only its trees (no staged sizes), but cut at each staged depth (segment_runs' depth stages)
    stages = (getattr(spec, "stages", ()) or ()) if n_trees is None else depth_stages(spec)
    size = {} if n_trees is None else {"n_estimators": n_trees}
    fit_on = "trainval" if spec.refit else "train"
    if spec.params is not None:
        candidates = [dict(spec.params)]
    else:
        candidates = [{**dict(c.params), **dict(spec.point)} for c in spec.selection.candidates]
        # a grown grid (plan.grow) may choose a grown candidate: it may be the costliest
        candidates += [{**dict(g.run.params), **dict(spec.point)} for g in getattr(spec.selection, "growth", ())]
    if getattr(spec, "depth_path", None):
        return _estimate_depth_chained(spec, candidates, fit_on, threads, model, processed_dir)
    best, bound = None, 0.0
    for params in candidates:
        est = estimate_run(spec.method, {**params, **size}, spec.dataset, fit_on=fit_on, stages=stages,
                           threads=threads, model=model, processed_dir=processed_dir)
        best = est if best is None or est.cpu_seconds > best.cpu_seconds else best
        bound = max(bound, est.cpu_bound_seconds)
    # the costliest candidate's expected cost; the bound of the costliest if data decide (Estimate.bound_seconds)
    return best if bound <= best.cpu_bound_seconds else dataclasses.replace(best, bound_seconds=bound)


def _estimate_depth_chained(spec, candidates, fit_on, threads, model, processed_dir):
    """A final run on a depth path below its largest depth (``FinalSpec.depth_path``, ``jobs.final_run``): its job
    reads its tree off a fit with its parameters at the largest depth, fitting that first unless a deeper final
    run of the path made it. A path of m final runs fits at most one deep run per distinct candidate (the deepest
    final run its own, charged as usual: the costliest), so at its worst the i-th final run below the deepest
    fits the (i + 1)-th costliest candidate at the largest depth; beyond the number of candidates, a read."""
    model = model or load_model()
    costs = sorted({json.dumps(p, sort_keys=True, default=str): estimate_run(
        spec.method, {**p, "max_depth": spec.deepest}, spec.dataset, fit_on=fit_on, threads=threads, model=model,
        processed_dir=processed_dir) for p in candidates}.values(), key=lambda est: est.cpu_seconds, reverse=True)
    if spec.depth_rank < len(costs):
        return costs[spec.depth_rank]
    return Estimate(float(model.get("start_seconds", 0.0)), float(model["base_mb"]))


def estimate_growth(spec, threads=1, model=None, processed_dir=None):
    """The job of a grown selection (:mod:`treeopt.experiments.plan.grow`) at its worst: it fits at most one
    candidate per growable axis, in turn, and which one depends on the choice, so each axis is charged its costliest
    possible grown candidate and the job the sum (peak: the largest); with nothing it can grow, a job's start-up. The
    job of one axis (``GrowAxisSpec``) fits at most that axis's candidate; a grown selection whose axes have jobs of
    their own (``axis_jobs``) only reads and chooses."""
    model = model or load_model()
    cpu, bound, peak, parallel = 0.0, 0.0, float(model["base_mb"]), 1
    if getattr(spec, "depth_path", None) is not None or getattr(spec, "axis_jobs", ()):
        # reads the deepest depth's grown runs, or the runs its axes' jobs fitted (estimate_plan charges them)
        return Estimate(float(model.get("start_seconds", 0.0)), peak, 1)
    for param, _ in spec.grow:
        fits = [estimate_run(spec.method, dict(g.run.params), spec.dataset, fit_on="train", threads=threads,
                             model=model, processed_dir=processed_dir) for g in spec.growth if g.param == param]
        if fits:
            worst = max(fits, key=lambda est: est.cpu_seconds)
            cpu, peak, parallel = cpu + worst.cpu_seconds, max(peak, worst.peak_mb), max(parallel, worst.parallel)
            bound += max(est.cpu_bound_seconds for est in fits)
    start = float(model.get("start_seconds", 0.0))
    return Estimate(max(cpu, start), peak, parallel, max(bound, start) if bound > cpu else None)


def grown_axes(spec):
    """How many extra candidates a grown selection's job may fit: one per axis that can grow."""
    return len({g.param for g in spec.growth})


def estimate_merge(spec, model=None, processed_dir=None):
    """CPU seconds and peak memory of merging a final run's tree blocks (:mod:`treeopt.experiments.run.blocks`).

    The merge loads the split and reads every block's probability sums over all rows (one n x k float64 array
    per block, plus one per staged size inside it), adds them and labels the rows at each size: ``start_seconds``,
    ``merge.fixed`` and ``merge.cpu_per_gb`` (``cost_model.yaml``, measured) per GB of sums read. Memory: the split
    plus three n x k arrays (the running sum, a block's sum and a staged one)."""
    model = model or load_model()
    refit = getattr(spec, "refit", False)  # a candidate run (RunSpec) fits on the training part
    shape = dataset_shape(spec.dataset, model, processed_dir)
    merge = model["merge"]
    if get_method(spec.method).task == "segmentation":  # sums per pixel of the scored images (segment_runs)
        candidate = not hasattr(spec, "refit")  # labels no test image (jobs.candidate_run)
        images = (0 if candidate else shape.n_test) + (0 if refit else shape.n_val) + N_TRAIN_SCORED
        per_array = images * shape.p * max(shape.k, 1) * 8 / 1e9  # shape.p: pixels per image
        ends = sum(1 for m in stage_sizes(spec.n_trees) if m % spec.block_trees == 0 or m == spec.n_trees)
        # read every block's sums; two label maps per size scored; with depth stages, each block's sums of its trees
        # cut at each depth and their label maps too
        cuts = sum(len(v) for _, v in depth_stages(spec))
        gb = ((len(spec.blocks) + 2 * ends) + cuts * (len(spec.blocks) + 2)) * per_array
        cpu = float(model.get("start_seconds", 0.0)) + float(merge["fixed"]) + float(merge["cpu_per_gb"]) * gb
        return Estimate(cpu, float(model["base_mb"]) + 3 * per_array * 1e3, 1)
    rows = shape.n_fit("trainval" if refit else "train") + shape.n_test + (0 if refit else shape.n_val)
    sizes = [v for _, values in getattr(spec, "stages", ()) for v in values]
    arrays = len(spec.blocks) + sum(1 for v in sizes if v <= spec.n_trees)
    gb = arrays * rows * max(shape.k, 1) * 8 / 1e9
    cpu = float(model.get("start_seconds", 0.0)) + float(merge["fixed"]) + float(merge["cpu_per_gb"]) * gb
    peak = float(model["base_mb"]) + shape.split_mb + 3 * rows * max(shape.k, 1) * 8 / 1e6
    return Estimate(cpu, peak, 1)


@dataclass
class ExperimentCost:
    """An experiment's jobs: ``n_runs`` runs (a run split into tree blocks counts once, as its merge), ``n_blocks``
    tree-block jobs; CPU of all; the largest peak; the longest job (run, block or merge) and which it is."""

    name: str
    n_runs: int = 0
    cpu_seconds: float = 0.0
    cpu_bound_seconds: float = 0.0  # with every run at its bound (Estimate.bound_seconds)
    peak_mb: float = 0.0
    longest_seconds: float = 0.0
    unknown: int = 0
    n_blocks: int = 0
    longest_job: str = ""
    n_grown: int = 0  # candidates grown grids may add (plan.grow), at most: one per growable axis of each selection


def estimate_plan(plan, threads=1, model=None):
    """``{experiment: ExperimentCost}`` over the plan's jobs: candidate and final runs (each run counted once; a
    candidate shared by experiments is charged to the first that needs it), for a final run split into tree
    blocks, each block job and the merge, and the jobs of grown selections at their worst (:func:`estimate_growth`:
    every growable axis grows, in its costlier direction; counted in ``n_grown``, not ``n_runs``)."""
    model = model or load_model()
    out, seen = {}, set()

    def add(name, spec, block=False):
        if spec.dir in seen:
            return
        seen.add(spec.dir)
        cost = out.setdefault(name, ExperimentCost(name))
        if block:
            cost.n_blocks += 1
        elif hasattr(spec, "axis_jobs"):  # a grown selection (its axes' jobs, counted nowhere, fit what it counts)
            cost.n_grown += grown_axes(spec)
        elif not hasattr(spec, "growth"):
            cost.n_runs += 1
        try:
            est = estimate_spec(spec, plan.profile, threads, model, plan.processed_dir)
        except (KeyError, ValueError):
            cost.unknown += 1
            return
        cost.cpu_seconds += est.cpu_seconds
        cost.cpu_bound_seconds += est.cpu_bound_seconds
        cost.peak_mb = max(cost.peak_mb, est.peak_mb)
        if est.wall_seconds(threads) > cost.longest_seconds:
            cost.longest_seconds, cost.longest_job = est.wall_seconds(threads), spec.dir

    for selection in plan.selections.values():
        for run in selection.candidates:
            add(selection.experiment, plan.runs.get(run.dir, run))  # the spec its job runs (a path read or a fit)
            for first, stop in run.blocks:  # a candidate split into tree blocks
                add(selection.experiment, plan.blocks[run.block_dir(first, stop)], block=True)
    for grown in plan.grown.values():
        for growth in grown.growth:  # a depth path's grown candidates are read off these (their own jobs)
            if grown.depth_path is not None:
                add(grown.experiment, plan.runs[(growth.deep or growth.run).dir])
        for axis in grown.axis_jobs:
            add(grown.experiment, axis)
        add(grown.experiment, grown)
    for final in plan.finals.values():
        add(final.experiment, final)
    for block in plan.blocks.values():
        if hasattr(block.final, "experiment"):  # candidates' blocks are counted with their selection above
            add(block.final.experiment, block, block=True)
    return out
