"""The workflow's jobs as functions of plain arguments (what ``workflow/scripts/*.py`` hand over).

Each script passes its Snakemake job's inputs, outputs and params to one of these through
:func:`treeopt.experiments.warmstart.run_job`, which runs it in a process forked from a warm server when the
workflow runs locally, else in the script's own process. Heavy modules are imported inside the functions, so
naming a job costs nothing.
"""

from pathlib import Path


def candidate(out, dataset, method, params, seed, split, n_jobs, save_model, inherit):
    """One candidate run (fit on the training part)."""
    from .runner import run

    run(out, dataset=dataset, method=method, params=params, seed=int(seed), split_path=split, fit_on="train",
        n_jobs=n_jobs, save_model=save_model, provenance={"role": "candidate"}, inherit=inherit)


def final(out, dataset, method, seed, split, selection, point, fixed, refit, n_jobs, save_model, experiment,
          inherit, stages):
    """A final run: the selected parameters (or the only ones) refit and tested."""
    from .runner import run
    from .selection import final_params, read_selection

    if fixed is None:
        params = final_params(read_selection(selection), point)
    else:
        params, selection = fixed, None
    run(out, dataset=dataset, method=method, params=params, seed=int(seed), split_path=split,
        fit_on="trainval" if refit else "train", n_jobs=n_jobs, save_model=save_model,
        provenance={"role": "final", "experiment": experiment, "sweep": point, "selection": selection},
        inherit=inherit, stages=stages)


def select(runs, metric, out, info):
    """Choose the best candidate on the validation set."""
    from .selection import select_runs

    select_runs(list(runs), metric, out, info=info)


def table(name, runs, out):
    """Aggregate final runs into one report table."""
    from .reports import TABLES
    from .tables import load_runs, write_table

    write_table(TABLES[name].builder()(load_runs(runs)), out)


def figure(name, table_csv, png, dataset, profile):
    """Draw one report figure (PNG + PDF) from its table."""
    from ..plots.render import render_figure

    render_figure(name, table_csv, Path(png).parent, datasets=[dataset] if dataset else None, profile=profile)


def prepare(dataset, config, seed, out):
    """Prepare one data split with treeopt.data."""
    from ..data import prepare_split

    written = prepare_split(dataset, config, int(seed))
    if Path(written).resolve() != Path(out).resolve():
        raise RuntimeError(f"treeopt.data wrote {written}, the workflow expected {out}")
