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

A method entry may take a parameter from another method's selection (same profile, data set and seed)::

    inherit: {max_features: {method: rf, experiment: co2_forest_size}}

The value is not known when the plan is made, so the run's slug carries the marker ``from-rf-co2_forest_size``
(:class:`treeopt.experiments.params.Inherited`), the referenced selection YAML becomes an input of the run
(``RunSpec.inherit`` / ``FinalSpec.inherit``) and the runner puts the chosen value in. When the referenced
method does not choose the parameter (it is fixed in its ``params``, or has a single grid value) the value is
known from the config and put in directly; then there is no marker and no extra input.

**Staged sweeps** (``staged: {n_estimators: all}`` on an experiment or a method entry): a size parameter whose
sweep values are all scored from one fit, read off the fitted model at each size (a forest's first m trees,
a boosted model after m iterations, RGF after m leaves; see :mod:`treeopt.experiments.staged`) instead of one
run per value. ``all`` fits once at the largest value; a list of fit sizes (``{n_estimators: [30, 1000]}``)
fits at each and scores every sweep value from the smallest fit that reaches it, so a cheap fit can finish
before an expensive one. Such a final run's folder shows the fit size as ``n_estimators=staged1000``
(:attr:`FinalSpec.stages` holds the values it scores), and its selection, if any, is made at ``select_at`` or
else at the fit size.
"""

import difflib
import itertools
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from .config import ConfigError, active_profile
from .methods import get_method
from .params import Inherited, params_slug, split_dotted
from .reports import FIGURES, TABLES, table_of
from .selection import DEFAULT_METRIC

RUNS_DIR = "results/runs"
SELECTION_DIR = "results/selection"
TABLES_DIR = "results/tables"
FIGURES_DIR = "figures"
FINAL_PREFIX = "final-"
DEFAULT_PROFILE = "default"


def output_dirs(profile):
    """(tables folder, figures folder) of a profile: one layout for every profile (README "Outputs and run folders").

    The default profile writes ``results/tables/`` and ``figures/``; any other profile ``results/{profile}/``
    and ``results/{profile}/figures/`` (e.g. ``results/paper/``), so profiles never overwrite each other."""
    if profile == DEFAULT_PROFILE:
        return TABLES_DIR, FIGURES_DIR
    return f"results/{profile}", f"results/{profile}/figures"
ALL_POINTS = "all"


def _items(mapping):
    return tuple(sorted(mapping.items()))


STAGED_PREFIX = "staged"


def _point_slug(point, stages=()):
    """Folder text of a sweep point; a staged parameter shows its fit size as ``staged{size}``."""
    point = dict(point)
    for param, _ in stages:
        point[param] = f"{STAGED_PREFIX}{point[param]}"
    return params_slug(point) if point else ALL_POINTS


def staged_fits(staged, sweep):
    """``{param: {fit size: (sweep values scored from it)}}`` for an experiment's ``staged:`` entry.

    ``staged`` maps a sweep parameter to ``"all"`` (one fit at the largest value) or to a list of fit sizes;
    each sweep value is scored from the smallest fit size that reaches it. Raises ConfigError when a staged
    parameter is not swept, a fit size list does not reach the largest value, or a size is not a number.
    """
    out = {}
    for param, fits in (staged or {}).items():
        if param not in (sweep or {}):
            raise ConfigError(f"staged parameter {param!r} is not a sweep parameter ({', '.join(sweep or {})})")
        values = sorted(set(sweep[param]))
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            raise ConfigError(f"staged parameter {param!r} needs numeric sweep values, got {values}")
        fits = [values[-1]] if fits == "all" else sorted(set(fits))
        if not fits or fits[-1] < values[-1]:
            raise ConfigError(f"staged {param}: the fit sizes {fits} do not reach the largest sweep value "
                              f"{values[-1]}")
        groups = {}
        for value in values:
            groups.setdefault(next(f for f in fits if f >= value), []).append(value)
        out[param] = {fit: tuple(vals) for fit, vals in groups.items()}
    return out


def _sweep_points(sweep, fits):
    """(point, stages) pairs of a sweep: staged parameters take their fit sizes instead of every value."""
    rest = {k: v for k, v in (sweep or {}).items() if k not in fits}
    staged = [[(param, fit, values) for fit, values in groups.items()] for param, groups in fits.items()]
    out = []
    for point in grid_points(rest) or [{}]:
        for combo in itertools.product(*staged):
            full = {**point, **{param: fit for param, fit, _ in combo}}
            ordered = {k: full[k] for k in sweep if k in full}  # config order, as grid_points gives it
            out.append((ordered, tuple((param, values) for param, _, values in combo)))
    return out


def selection_path(dataset, method, experiment, at, seed):
    """Path of the selection YAML of ``method`` in ``experiment`` at the sweep values ``at`` (items)."""
    return f"{SELECTION_DIR}/{dataset}/{method}/{experiment}/{_point_slug(at)}/seed{seed}.yaml"


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
    inherit: tuple = ()  # (param, selection YAML) pairs: values put in at run time (params hold Inherited)

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
        return selection_path(self.dataset, self.method, self.experiment, self.at, self.seed)


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
    inherit: tuple = ()  # (param, selection YAML) pairs of inherited parameters, as RunSpec.inherit
    stages: tuple = ()  # (param, (values...)) pairs: sweep values scored from this one fit (staged sweeps)

    @property
    def dir(self):
        return (f"{RUNS_DIR}/{self.dataset}/{self.method}/{FINAL_PREFIX}{self.experiment}-"
                f"{_point_slug(self.point, self.stages)}/seed{self.seed}")


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

    @property
    def tables_dir(self):
        return output_dirs(self.profile)[0]

    @property
    def figures_dir(self):
        return output_dirs(self.profile)[1]

    def table_path(self, table):
        return f"{self.tables_dir}/{table}.csv"

    def figure_paths(self, figure):
        """PNG and PDF paths of a figure, one pair per data set for per-data-set figures."""
        spec = FIGURES[figure]
        stems = ([f"{figure}_{ds}" for ds in self.figure_datasets[figure]] if spec.per_dataset else [figure])
        return [f"{self.figures_dir}/{stem}.{ext}" for stem in stems for ext in ("png", "pdf")]

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


@dataclass(frozen=True)
class InheritSource:
    """Where an inherited parameter comes from for one data set and seed: a selection YAML whose ``chosen``
    value the run reads, or (``selection`` None) a value fixed by the config."""

    selection: str | None
    value: object = None


def _missing(kind, name, known, owner):
    hint = difflib.get_close_matches(name, list(known), n=1)
    return (f"{owner} has no {kind} {name!r}" + (f" (did you mean {hint[0]!r}?)" if hint else "")
            + f"; it has: {', '.join(known) or 'none'}")


def _runs_on(config, exp, entry, method, dataset):
    """Why ``method`` (entry ``entry`` of experiment ``exp``) does not run on ``dataset``; None when it does."""
    datasets = (entry or {}).get("datasets") or exp["datasets"]
    if dataset not in datasets:
        return f"not among its data sets: {', '.join(datasets)}"
    task = _dataset_task(config, dataset)
    if get_method(method).task != task:
        return f"it solves {get_method(method).task}, the data set is {task}"
    return None


def inherit_source(config, profile_name, experiment, method, param, dataset, seed, _chain=(), point=None):
    """Where ``method`` of ``experiment`` takes the inherited ``param`` from on ``dataset`` and ``seed``.

    Follows the method entry's ``inherit: {param: {method: M, experiment: E}}``: the selection of M in E at
    E's ``select_at`` (or its only selection), or M's fixed value when M does not choose ``param`` (M's own
    ``inherit`` is followed in turn). When E chooses afresh at each sweep value and the inheriting run sits
    at sweep value ``point`` (items) of the same sweep, the selection at that value is used (e.g. the CO2
    tree chosen at the same depth). A dotted ``param`` (``init_params.nu``) takes M's ``nu`` into the dict
    parameter ``init_params``. Raises ConfigError naming experiment, method and data set otherwise.
    """
    profile = config["profiles"][profile_name]
    exp = profile["experiments"][experiment]
    entry = exp["methods"][method] or {}
    ref = entry["inherit"][param]
    rexp_name, rmethod = ref["experiment"], ref["method"]
    where = (f"profile {profile_name!r}, experiment {experiment!r}, method {method!r}, data set {dataset!r}: "
             f"{param} is inherited from method {rmethod!r} of experiment {rexp_name!r}")

    def fail(problem):
        raise ConfigError(f"{where}, but {problem}")

    own = {"params": entry.get("params") or {}, "grid": entry.get("grid") or {},
           "sweep": entry.get("sweep", exp.get("sweep")) or {}}
    for group, values in own.items():
        if param in values:
            fail(f"{param} is also set in the {group} of {method!r}; set it in one place")
    if rexp_name not in profile["experiments"]:
        fail(_missing("experiment", rexp_name, profile["experiments"], f"profile {profile_name!r}"))
    rexp = profile["experiments"][rexp_name]
    if rmethod not in rexp["methods"]:
        fail(_missing("method", rmethod, rexp["methods"], f"experiment {rexp_name!r}"))
    if (rexp_name, rmethod) == (experiment, method) or (rexp_name, rmethod) in _chain:
        chain = " -> ".join(f"{m} in {e}" for e, m in (*_chain, (experiment, method), (rexp_name, rmethod)))
        fail(f"the references go round in a circle ({chain})")
    rentry = rexp["methods"][rmethod] or {}
    try:
        why_not = _runs_on(config, rexp, rentry, rmethod, dataset)
    except ValueError as exc:  # an unregistered method: the config check names it
        fail(str(exc))
    if why_not:
        fail(f"{rmethod!r} in {rexp_name!r} does not run on data set {dataset!r} ({why_not})")
    rseeds = list(rexp.get("seeds") or profile["seeds"])
    if seed not in rseeds:
        fail(f"experiment {rexp_name!r} does not run seed {seed} (its seeds: {rseeds})")
    if param in (rentry.get("inherit") or {}):
        return inherit_source(config, profile_name, rexp_name, rmethod, param, dataset, seed,
                              (*_chain, (experiment, method)))
    source = split_dotted(param)[1]
    rfixed, rgrid = rentry.get("params") or {}, rentry.get("grid") or {}
    if source in rfixed:
        return InheritSource(None, rfixed[source])
    if source not in rgrid:
        fail(f"{rmethod!r} in {rexp_name!r} sets no {source} (neither in its params nor in its grid)")
    if len(rgrid[source]) == 1:  # nothing is chosen: the value is known now
        return InheritSource(None, rgrid[source][0])
    select_at = rexp.get("select_at")
    if select_at:
        at = _items(dict(select_at))
    else:
        points = grid_points(rentry.get("sweep", rexp.get("sweep")) or {})
        if len(points) > 1 and point is not None and dict(point) in points:
            return InheritSource(selection_path(dataset, rmethod, rexp_name, _items(dict(point)), seed))
        if len(points) > 1:
            fail(f"experiment {rexp_name!r} has no select_at and chooses the parameters of {rmethod!r} afresh at "
                 f"each of its {len(points)} sweep values; give it select_at so there is one choice to inherit")
        at = _items(points[0]) if points else ()
    return InheritSource(selection_path(dataset, rmethod, rexp_name, at, seed))


def inherit_problems(config, profile_name):
    """Messages for the ``inherit:`` references of a profile that cannot be followed (first per parameter)."""
    problems = []
    profile = config["profiles"][profile_name]
    for ename, exp in profile["experiments"].items():
        for mname, entry in exp["methods"].items():
            inherited = (entry or {}).get("inherit") or {}
            try:
                task = get_method(mname).task if inherited else None
            except ValueError:
                continue  # an unknown method; the config check names it
            if not inherited:
                continue
            sweep = grid_points(entry.get("sweep", exp.get("sweep")) or {}) or [{}]
            for param in inherited:
                try:
                    for dataset in entry.get("datasets") or exp["datasets"]:
                        if _dataset_task(config, dataset) == task:
                            for seed in exp.get("seeds") or profile["seeds"]:
                                for point in sweep:
                                    inherit_source(config, profile_name, ename, mname, param, dataset, seed,
                                                   point=_items(point))
                except ConfigError as exc:
                    problems.append(str(exc))
    return problems


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
            grid = grid_points(entry.get("grid") or {})
            sweep_grid = entry.get("sweep", exp.get("sweep")) or {}
            fits = staged_fits(entry.get("staged", exp.get("staged")), sweep_grid)
            sweep = _sweep_points(sweep_grid, fits)
            select_at = exp.get("select_at")
            inherited = entry.get("inherit") or {}
            for dataset in entry.get("datasets") or exp["datasets"]:
                if _dataset_task(config, dataset) != method.task:
                    continue  # e.g. cart on a regression set: its regression twin covers it
                datasets.extend([dataset] if dataset not in datasets else [])
                used.extend([dataset] if dataset not in used else [])
                metric = exp.get("metric") or DEFAULT_METRIC[method.task]
                for seed in exp.get("seeds") or plan.seeds:
                    selections = {}
                    for point, stages in sweep:
                        # per sweep value: an inherited parameter may come from the selection at the same value
                        sources = {p: inherit_source(config, plan.profile, ename, mname, p, dataset, seed,
                                                     point=_items(point))
                                   for p in inherited}
                        fixed = dict(entry.get("params") or {})
                        fixed.update((p, src.value if src.selection is None else
                                      Inherited(inherited[p]["method"], inherited[p]["experiment"]))
                                     for p, src in sources.items())
                        inherit = _items({p: src.selection for p, src in sources.items() if src.selection})
                        at = _items(dict(select_at) if select_at else point)
                        if len(grid) == 1:
                            final = FinalSpec(ename, dataset, mname, seed, _items(point), None,
                                              _items({**fixed, **grid[0], **point}), exp.get("refit", True),
                                              inherit, stages)
                        else:
                            if at not in selections:
                                candidates = tuple(RunSpec(dataset, mname, _items({**fixed, **g, **dict(at)}), seed,
                                                           inherit) for g in grid)
                                selections[at] = SelectionSpec(ename, dataset, mname, seed, at, candidates, metric)
                                plan.selections[selections[at].path] = selections[at]
                                plan.runs.update((run.dir, run) for run in candidates)
                            final = FinalSpec(ename, dataset, mname, seed, _items(point), selections[at], None,
                                              exp.get("refit", True), inherit, stages)
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
    for spec in (*plan.runs.values(), *plan.finals.values()):
        for param, path in spec.inherit:
            if path not in plan.selections:  # inherit_source and the loop above disagree: a bug, not a config error
                raise RuntimeError(f"{spec.dir}: {param} is read from {path}, which the plan does not make")
    for table in list(plan.table_runs):
        if table not in TABLES:
            raise ValueError(f"no builder for table {table!r}")
    return plan
