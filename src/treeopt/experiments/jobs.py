"""The workflow's jobs as functions of plain values: what each ``workflow/scripts`` wrapper runs.

A wrapper reads its Snakemake job (wildcards, inputs, params, log) into keyword arguments and hands them to
:func:`treeopt.experiments.warm_worker.call`, which runs the function here in a warm worker's child (or in the wrapper's
own process). Each job writes its output and traceback to its log file
(:func:`~treeopt.experiments.infra.joblog.logged`).
"""

import json
from pathlib import Path

from treeopt.experiments.infra.joblog import logged


def prepare_split(*, log, dataset, config, seed, output):
    from treeopt.data import prepare_split as prepare

    with logged([log]):
        written = prepare(dataset, config, seed)
        if Path(written).resolve() != Path(output).resolve():
            raise RuntimeError(f"treeopt.data wrote {written}, the workflow expected {output}")


def candidate_run(*, log, output, dataset, method, params, seed, split, n_jobs, save_model, inherit, blocks=None,
                  path_run=None):
    """One candidate run: fit on the training part; with ``blocks`` (folders of :func:`forest_block` jobs) the
    forest's tree blocks are merged instead of fitted (same run folder); with ``path_run`` (a candidate run at a
    lower value of the method's path parameter whose warm-started path passed through this one's) read off that run's path instead of
    fitted (same run folder)."""
    from treeopt.experiments.run.block_sums import block_setup
    from treeopt.experiments.run.reads import run_from_path
    from treeopt.experiments.run.runner import run

    with logged([log]):
        if path_run:
            run_from_path(output, path_run=path_run, dataset=dataset, method=method,
                          params=params, seed=seed, split_path=split, n_jobs=n_jobs, save_model=save_model,
                          provenance={"role": "candidate"}, inherit=inherit)
            return
        block_trees = block_setup(blocks[0])["block_trees"] if blocks else None  # every block is checked to agree
        run(output, dataset=dataset, method=method, params=params, seed=seed, split_path=split, fit_on="train",
            n_jobs=n_jobs, save_model=save_model, provenance={"role": "candidate"}, inherit=inherit,
            block_trees=block_trees, blocks=list(blocks) if blocks else None, score_test=_candidate_scores_test(method))


def _candidate_scores_test(method):
    """Whether a candidate run of ``method`` labels the test part: not for segmentation (its choice reads validation,
    and at LFW size the 250 test images were a sixth of a candidate's CPU); rows are scored on test (cheap, and a
    ``refit: false`` final run reads its chosen candidate's metrics)."""
    from treeopt.experiments.plan.methods import get_method

    return get_method(method).task != "segmentation"


def _final_params(selection, point, fixed):
    """(parameters, selection file or None) of a final run: the fixed ones, or those chosen at ``point``."""
    from treeopt.experiments.run.selection import final_params, read_selection

    if fixed is None:
        return final_params(read_selection(selection), point), selection
    return fixed, None


def _chosen_fit(selection, params, refit, stages, blocks):
    """The chosen candidate's run folder when a final run is that candidate's fit (not refitted, no staged sizes or
    tree blocks, the chosen parameters unchanged by its sweep values), else None."""
    from treeopt.experiments.run.selection import read_selection

    if not selection or refit or stages or blocks:
        return None
    chosen = read_selection(selection)
    run = chosen.get("chosen_run")
    if not run or dict(params) != dict(chosen["chosen"]):
        return None
    # a candidate that labelled no test image (segmentation) is fitted again as the final run
    return run if json.loads((Path(run) / "metrics.json").read_text()).get("test") else None


def final_run(*, log, output, dataset, method, seed, split, selection, point, fixed, refit, n_jobs, save_model,
              inherit, stages, blocks=None, depth_path=None):
    """A final run: the selected parameters (or the only ones) refit and tested; with ``blocks`` (folders of
    :func:`forest_block` jobs) the forest's tree blocks are merged instead of fitted (same run folder); with
    ``depth_path`` (the final run at a depth path's largest depth) read off a fit with its parameters at that depth."""
    from treeopt.experiments.run.block_sums import block_setup
    from treeopt.experiments.run.runner import run

    with logged([log]):
        params, selection = _final_params(selection, point, fixed)
        provenance = {"role": "final", "sweep": point, "selection": selection}
        chosen = _chosen_fit(selection, params, refit, stages, blocks)
        if chosen:  # refit: false with the chosen candidate's own parameters: that candidate is this run's fit
            from treeopt.experiments.run.reads import run_from_candidate

            run_from_candidate(output, candidate=chosen, dataset=dataset, method=method, params=params, seed=seed,
                               split_path=split, n_jobs=n_jobs, provenance=provenance, inherit=inherit)
            return
        if depth_path:  # read off a fit with these parameters at the path's largest depth (config `path: max_depth`)
            from treeopt.experiments.run.reads import run_from_depth_path

            fit_on = "trainval" if refit else "train"

            def fit(folder, deep_params):
                run(folder, dataset=dataset, method=method, params=deep_params, seed=seed, split_path=split,
                    fit_on=fit_on, n_jobs=n_jobs, save_model=save_model,
                    provenance={"role": "depth_path", "made_for": str(output)})

            run_from_depth_path(output, deepest=depth_path, dataset=dataset, method=method, params=params, seed=seed,
                                split_path=split, fit_on=fit_on, fit=fit, n_jobs=n_jobs, save_model=save_model,
                                provenance=provenance, inherit=inherit)
            return
        block_trees = block_setup(blocks[0])["block_trees"] if blocks else None  # every block is checked to agree
        # no experiment name in the record: identical final runs of several experiments or profiles share the
        # folder
        run(output, dataset=dataset, method=method, params=params, seed=seed, split_path=split,
            fit_on="trainval" if refit else "train", n_jobs=n_jobs, save_model=save_model,
            provenance=provenance, inherit=inherit, stages=stages,
            block_trees=block_trees, blocks=list(blocks) if blocks else None)


def forest_block(*, log, output, dataset, method, seed, split, selection, point, fixed, refit, n_jobs, save_model,
                 inherit, stages, trees, block_trees, candidate=False):
    """One tree block of a run's forest (trees ``trees[0]..trees[1]-1``): fitted and summed, not yet merged;
    ``candidate``: the block of a candidate run (which may skip the test part, :func:`_candidate_scores_test`)."""
    from treeopt.experiments.run.blocks import run_block

    with logged([log]):
        params, _ = _final_params(selection, point, fixed)
        run_block(output, dataset=dataset, method=method, params=params, seed=seed, split_path=split,
                  trees=tuple(trees), block_trees=block_trees, fit_on="trainval" if refit else "train",
                  n_jobs=n_jobs, save_model=save_model, inherit=inherit, stages=stages,
                  score_test=not candidate or _candidate_scores_test(method))


def select(*, log, runs, metric, output, info):
    """Choose the best candidate on the validation set."""
    from treeopt.experiments.run.selection import select_runs

    with logged([log]):
        select_runs(runs, metric, output, info=info)


def table(*, log, name, runs, output, paper_links=None):
    """Aggregate final runs into one report table; ``paper_links``: {data set: paper data set} of entries that
    name theirs (``paper_dataset``)."""
    from treeopt.experiments.plan.paper_values import linked
    from treeopt.experiments.plan.reports import TABLES
    from treeopt.experiments.report.tables import load_runs, write_table

    with logged([log]), linked(paper_links):
        write_table(TABLES[name].builder()(load_runs(runs)), output)


def figure(*, log, name, table, out_dir, dataset, profile):
    """Draw one report figure (PNG + PDF) from its table."""
    from treeopt.experiments.report.figures import render_figure

    with logged([log]):
        render_figure(name, table, out_dir, datasets=[dataset] if dataset else None, profile=profile)


def scorecard(*, log, tables, config, profile, csv, png, md):
    """The reproduction scorecard (every paper number of the profile beside ours) from its tables."""
    import pandas as pd

    from treeopt.experiments.plan.build import build_plan
    from treeopt.experiments.plan.paper_values import dataset_links, linked
    from treeopt.experiments.report.scorecard import build_scorecard
    from treeopt.experiments.report.scorecard_pages import write_scorecard

    with logged([log]), linked(dataset_links(config)):
        frames = {Path(path).stem: (pd.read_csv(path), str(path)) for path in tables}
        card = build_scorecard(frames, build_plan(config), config, profile=profile)
        write_scorecard(card, Path(csv).parent, Path(png).parent, profile=profile, command=f"snakemake {md}")


def _grown_fit(output, dataset, method, seed, split, n_jobs, save_model, inherit):
    """``fit(entry)``: a grown candidate fitted as every candidate run is (same code, planned folder)."""
    from treeopt.experiments.run.runner import run

    def fit(entry):
        run(entry["run"], dataset=dataset, method=method, params=entry["params"], seed=seed, split_path=split,
            fit_on="train", n_jobs=n_jobs, save_model=save_model,
            provenance={"role": "candidate", "grown_for": output}, inherit=inherit)

    return fit


def _fitted_by(axis_files):
    """``fit(entry)`` of a grown selection whose axes' jobs fitted its candidates (their files are its inputs): a
    candidate still missing is a bug, not something to fit here."""
    def fit(entry):
        raise RuntimeError(f"{entry['run']}: the grown candidate should have been fitted by its axis job "
                           f"({', '.join(map(str, axis_files))})")

    return fit


def grow_axis(*, log, selection, output, growth, param, grown, dataset, method, seed, split, n_jobs, save_model,
              inherit):
    """One axis of the tuning rule's second step (:func:`treeopt.experiments.run.grow.grow_axis`): the candidate one
    step past the chosen edge of ``param``, if the choice lies there; ``grown``: the grown selection file it is for."""
    from treeopt.experiments.run.grow import grow_axis as fit_axis

    with logged([log]):
        fit_axis(selection, growth, param, output,
                 fit=_grown_fit(grown, dataset, method, seed, split, n_jobs, save_model, inherit))


def grow_selection(*, log, selection, output, growth, steps, dataset, method, seed, split, n_jobs, save_model,
                   inherit, axis_files=()):
    """The tuning rule's second step (:mod:`treeopt.experiments.run.grow`): the candidate one step past the chosen grid
    edge fitted as every candidate run is (same code, planned folder), and the choice made again. With ``axis_files``
    the axes' jobs (:func:`grow_axis`) fitted the candidates: this job only reads them."""
    from treeopt.experiments.run.grow import grow_selection as grow

    fit = (_fitted_by(axis_files) if axis_files else
           _grown_fit(output, dataset, method, seed, split, n_jobs, save_model, inherit))

    def read(entry):  # a depth path's grown candidate: the first levels of the same candidate grown deeper
        from treeopt.experiments.run.reads import run_from_path

        run_from_path(entry["run"], path_run=entry["path_run"], dataset=dataset, method=method, params=entry["params"],
                      seed=seed, split_path=split, n_jobs=n_jobs, save_model=save_model,
                      provenance={"role": "candidate", "grown_for": output}, inherit=inherit)

    with logged([log]):
        grow(selection, growth, output, fit=fit, steps=steps, read=read)
