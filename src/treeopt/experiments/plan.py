"""Turn the active profile into the list of files the workflow makes.

Three kinds of run folder come out of an experiment (DESIGN.md "Runs"):

* candidate runs ``results/runs/{dataset}/{method}/{params-slug}/seed{seed}/``: fit on the training part,
  scored on validation (ordinary runs, shared by every experiment that needs the same fit);
* a selection ``results/selection/{dataset}/{method}/{experiment}/{point}/seed{seed}.yaml`` naming the
  candidate with the best validation score, at each sweep point (or once, at ``select_at``);
* final runs ``results/runs/{dataset}/{method}/final-{experiment}-{point}/seed{seed}/``: the chosen
  parameters refit on train+validation and tested. Their folder name is fixed before the choice is known,
  which keeps the Snakemake graph static (no checkpoints); ``params.yaml`` in it records the values.

A grid with a single combination needs no candidates and no selection: its final run's parameters are known
from the config (this is also how sweeps without validation data, like the RGF paper's curves, are run).
"""

import itertools
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from .config import active_profile
from .methods import get_method
from .params import params_slug
from .reports import FIGURES, TABLES, table_of
from .selection import DEFAULT_METRIC

RUNS_DIR = "results/runs"
SELECTION_DIR = "results/selection"
TABLES_DIR = "results/tables"
FIGURES_DIR = "figures"
FINAL_PREFIX = "final-"
ALL_POINTS = "all"


def _items(mapping):
    return tuple(sorted(mapping.items()))


def _point_slug(point):
    return params_slug(dict(point)) if point else ALL_POINTS


def grid_points(grid):
    """Every combination of a ``{name: [values]}`` grid, in config order (first key varies slowest)."""
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


@dataclass(frozen=True)
class RunSpec:
    """A candidate (ordinary) run: fit on the training part with fixed params."""

    dataset: str
    method: str
    params: tuple
    seed: int

    @property
    def slug(self):
        return params_slug(dict(self.params))

    @property
    def dir(self):
        return f"{RUNS_DIR}/{self.dataset}/{self.method}/{self.slug}/seed{self.seed}"


@dataclass(frozen=True)
class SelectionSpec:
    experiment: str
    dataset: str
    method: str
    seed: int
    at: tuple  # sweep values held fixed while choosing
    candidates: tuple  # RunSpecs, at least two
    metric: str

    @property
    def path(self):
        return (f"{SELECTION_DIR}/{self.dataset}/{self.method}/{self.experiment}/{_point_slug(self.at)}/"
                f"seed{self.seed}.yaml")


@dataclass(frozen=True)
class FinalSpec:
    experiment: str
    dataset: str
    method: str
    seed: int
    point: tuple  # sweep values of this final run
    selection: SelectionSpec | None  # None when the grid has a single point
    params: tuple | None  # the parameters, when there is nothing to select
    refit: bool

    @property
    def dir(self):
        return (f"{RUNS_DIR}/{self.dataset}/{self.method}/{FINAL_PREFIX}{self.experiment}-"
                f"{_point_slug(self.point)}/seed{self.seed}")


@dataclass
class Plan:
    profile: str
    seeds: list
    n_jobs: int
    save_models: bool | None
    processed_dir: str
    runs: dict = field(default_factory=dict)  # dir -> RunSpec
    selections: dict = field(default_factory=dict)  # path -> SelectionSpec
    finals: dict = field(default_factory=dict)  # dir -> FinalSpec
    table_runs: dict = field(default_factory=dict)  # table name -> [final dirs]
    figure_datasets: dict = field(default_factory=dict)  # figure name -> [datasets]
    datasets: list = field(default_factory=list)

    def split_path(self, dataset, seed):
        return f"{self.processed_dir}/{dataset}/split{seed}.npz"

    def table_path(self, table):
        return f"{TABLES_DIR}/{table}.csv"

    def figure_paths(self, figure):
        """PNG and PDF paths of a figure, one pair per data set for per-data-set figures."""
        spec = FIGURES[figure]
        stems = ([f"{figure}_{ds}" for ds in self.figure_datasets[figure]] if spec.per_dataset else [figure])
        return [f"{FIGURES_DIR}/{stem}.{ext}" for stem in stems for ext in ("png", "pdf")]

    def targets(self):
        """Everything the profile produces (the Snakemake ``all`` rule)."""
        out = [self.table_path(t) for t in self.table_runs]
        for figure in self.figure_datasets:
            out.extend(self.figure_paths(figure))
        return out

    def lookup(self, kind, path):
        table = {"run": self.runs, "selection": self.selections, "final": self.finals}[kind]
        key = str(PurePosixPath(path))
        if key not in table:
            raise KeyError(f"{path} is not planned by profile {self.profile!r} (is the config changed?)")
        return table[key]


def _dataset_task(config, dataset):
    return ((config.get("datasets") or {}).get(dataset) or {}).get("task", "classification")


def build_plan(config):
    """The plan of the active profile of a validated config."""
    profile = active_profile(config)
    plan = Plan(profile=config["profile"], seeds=list(profile["seeds"]), n_jobs=profile.get("n_jobs", 1),
                save_models=profile.get("save_models"),
                processed_dir=(config.get("data") or {}).get("processed_dir", "data/processed"))
    datasets = []
    for ename, exp in profile["experiments"].items():
        finals, used = [], []
        for mname, entry in exp["methods"].items():
            entry = entry or {}
            method = get_method(mname)
            fixed = dict(entry.get("params") or {})
            grid = grid_points(entry.get("grid") or {})
            sweep = grid_points(entry.get("sweep", exp.get("sweep")) or {})
            select_at = exp.get("select_at")
            for dataset in entry.get("datasets") or exp["datasets"]:
                if _dataset_task(config, dataset) != method.task:
                    continue  # e.g. cart on a regression set: its regression twin covers it
                datasets.extend([dataset] if dataset not in datasets else [])
                used.extend([dataset] if dataset not in used else [])
                metric = exp.get("metric") or DEFAULT_METRIC[method.task]
                for seed in exp.get("seeds") or plan.seeds:
                    selections = {}
                    for point in sweep or [{}]:
                        at = _items(dict(select_at) if select_at else point)
                        if len(grid) == 1:
                            final = FinalSpec(ename, dataset, mname, seed, _items(point), None,
                                              _items({**fixed, **grid[0], **point}), exp.get("refit", True))
                        else:
                            if at not in selections:
                                candidates = tuple(RunSpec(dataset, mname, _items({**fixed, **g, **dict(at)}), seed)
                                                   for g in grid)
                                selections[at] = SelectionSpec(ename, dataset, mname, seed, at, candidates, metric)
                                plan.selections[selections[at].path] = selections[at]
                                plan.runs.update((run.dir, run) for run in candidates)
                            final = FinalSpec(ename, dataset, mname, seed, _items(point), selections[at], None,
                                              exp.get("refit", True))
                        plan.finals[final.dir] = final
                        finals.append(final.dir)
        for report in exp["reports"]:
            table = table_of(report)
            plan.table_runs.setdefault(table, [])
            plan.table_runs[table].extend(d for d in finals if d not in plan.table_runs[table])
            if report in FIGURES:
                shown = plan.figure_datasets.setdefault(report, [])
                shown.extend(ds for ds in exp["datasets"] if ds in used and ds not in shown)
    plan.datasets = datasets
    for table in list(plan.table_runs):
        if table not in TABLES:
            raise ValueError(f"no builder for table {table!r}")
    return plan
