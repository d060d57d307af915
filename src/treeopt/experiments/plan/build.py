"""Turn the active profile into the list of files the workflow makes.

Three kinds of run folder come out of an experiment (DESIGN.md "Runs"), each named by what it is
(:mod:`treeopt.experiments.plan.identity`: a readable slug and a hash of data, method, parameters, fit, ...), so
experiments and profiles asking for the same run share it and runs that differ never share a folder:

* candidate runs ``results/runs/{dataset}/{method}/{name}/seed{seed}/``: fit on the training part, scored on
  validation;
* a selection ``results/selection/{dataset}/{method}/{name}/seed{seed}.yaml`` naming the candidate with the
  best validation score, at each sweep point (or once, at ``select_at``);
* final runs ``results/runs/{dataset}/{method}/final-{name}/seed{seed}/``: the chosen parameters refit on
  train+validation and tested. Their name (the selection's identity, not the choice) is fixed before the
  choice is known, which keeps the Snakemake graph static (no checkpoints); ``params.yaml`` records the values.

:attr:`Plan.legacy` maps each name to the names earlier versions gave the same thing
(:mod:`treeopt.experiments.run.migrate` renames those folders); :meth:`Plan.find` looks runs up by experiment.

A grid with a single combination needs no candidates and no selection: its final run's parameters are known
from the config (this is also how sweeps without validation data, like the RGF paper's curves, are run).

A method entry may take a parameter from another method's selection (same profile, data set and seed)::

    inherit: {max_features: {method: rf, experiment: co2_forest_size}}

The value is not known when the plan is made, so the run's params hold an :class:`treeopt.experiments.plan.params.
Inherited` naming the selection it is read from (slug ``from-rf``; the hash covers that selection's identity),
the referenced selection YAML becomes an input of the run
(``RunSpec.inherit`` / ``FinalSpec.inherit``) and the runner puts the chosen value in. When the referenced
method does not choose the parameter (it is fixed in its ``params``, or has a single grid value) the value is
known from the config and put in directly; then there is no marker and no extra input.

**Staged sweeps** (``staged: {n_estimators: all}`` on an experiment or a method entry): a size parameter whose
sweep values are all scored from one fit, read off the fitted model at each size (a forest's first m trees,
a boosted model after m iterations, RGF after m leaves; see :mod:`treeopt.experiments.run.staged`) instead of one
run per value. ``all`` fits once at the largest value; a list of fit sizes (``{n_estimators: [30, 1000]}``)
fits at each and scores every sweep value from the smallest fit that reaches it, so a cheap fit can finish
before an expensive one. Such a final run's folder shows the fit size as ``n_estimators-staged1000``
(:attr:`FinalSpec.stages` holds the values it scores), and its selection, if any, is made at ``select_at`` or
else at the fit size.

**Tree blocks** (``forest_block_trees: {method: s}`` on a profile): a final run of a treeopt bagged forest growing
more than s trees is fitted by block jobs (:class:`BlockSpec`, ``results/blocks/{dataset}/{method}/{final name}/
seed{seed}/trees{first}-{stop}``, in :attr:`Plan.blocks`) and its own job merges them
(:mod:`treeopt.experiments.run.blocks`). ``FinalSpec.block_trees`` is part of its identity (the sums' last bits depend on
the block size); a forest of at most s trees is one job, named and summed as without the setting.
"""

import difflib
import itertools
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import PurePosixPath

from .errors import ConfigError, name_error
from ..run.block_sums import block_ranges
from .identity import CHOSEN, canonical, check_component, folder_name, identity_hash, params_text
from .methods import fits_tree_ranges, get_method
from .params import Inherited, legacy_marker, params_slug, split_dotted
from .reports import FIGURES, TABLES, table_of
from ..run.selection import DEFAULT_METRIC

RUNS_DIR = "results/runs"
BLOCKS_DIR = "results/blocks"  # tree blocks of forests split into several jobs (treeopt.experiments.run.blocks)
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
    """Folder text of a sweep point in earlier versions' names; a staged parameter shows ``staged{size}``."""
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


def legacy_selection_path(dataset, method, experiment, at, seed):
    """Where earlier versions kept the selection of ``method`` in ``experiment`` at the sweep values ``at``."""
    return f"{SELECTION_DIR}/{dataset}/{method}/{experiment}/{_point_slug(at)}/seed{seed}.yaml"


def grid_points(grid):
    """Every combination of a ``{name: [values]}`` grid, in config order (first key varies slowest)."""
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def _with_save_model(identity, save_model):
    """A profile's ``save_models: true/false`` changes the files a run leaves (model.npz), so such runs are
    others than the default's; ``null`` (the method decides) adds nothing, keeping the default names."""
    return identity if save_model is None else {**identity, "save_model": bool(save_model)}


@dataclass(frozen=True)
class RunSpec:
    """A candidate (ordinary) run: fit on the training part with fixed params.

    ``data`` is the identity hash of the data set entry (:func:`treeopt.data.spec.data_identity`); the folder
    name is the params' readable slug and the hash of :meth:`identity` (:mod:`treeopt.experiments.plan.identity`).
    """

    dataset: str
    method: str
    params: tuple
    seed: int
    inherit: tuple = ()  # (param, selection YAML) pairs: values put in at run time (params hold Inherited)
    data: str = ""
    save_model: bool | None = None  # the profile's save_models: None keeps the method's default
    block_trees: int | None = None  # a forest fitted in block jobs of this many trees, then merged (None: one job)
    n_trees: int | None = None  # the forest's size when it is split in blocks

    def identity(self):
        """What the run is, apart from its seed (the last path component); the block size when split."""
        return self._identity

    @cached_property
    def _identity(self):
        out = {"data": self.data, "method": self.method, "fit_on": "train",
               "params": {k: canonical(v) for k, v in self.params}}
        if self.block_trees is not None:
            out["block_trees"] = self.block_trees
        return _with_save_model(out, self.save_model)

    @property
    def blocks(self):
        """``[(first tree, stop)]`` of the block jobs (empty: fitted in one job)."""
        return _block_list(self)

    def block_dir(self, first, stop):
        """The folder of the block job of trees ``first..stop-1``."""
        return f"{BLOCKS_DIR}/{self.dataset}/{self.method}/{self.slug}/seed{self.seed}/{BLOCK_PREFIX}{first}-{stop}"

    @cached_property
    def slug(self):
        return folder_name(params_text(self.params), self.identity())

    @property
    def dir(self):
        return f"{RUNS_DIR}/{self.dataset}/{self.method}/{self.slug}/seed{self.seed}"

    @property
    def legacy_dir(self):
        """The folder earlier versions gave this run."""
        return f"{RUNS_DIR}/{self.dataset}/{self.method}/{params_slug(dict(self.params))}/seed{self.seed}"


@dataclass(frozen=True)
class SelectionSpec:
    """The choice among ``candidates`` (at the sweep values ``at``) by their validation ``metric``."""

    experiment: str  # the first experiment that asked for it (identical choices of others share it)
    dataset: str
    method: str
    seed: int
    at: tuple  # sweep values held fixed while choosing
    candidates: tuple  # RunSpecs, at least two
    metric: str
    data: str = ""

    def identity(self):
        """The candidates (in order: ties go to the first) and the metric; seed-free, as a run's."""
        return self._identity

    @cached_property
    def _identity(self):
        return {"select": self.metric, "candidates": [c.identity() for c in self.candidates]}

    @cached_property
    def key(self):
        return identity_hash(self.identity())

    def readable(self):
        """``{param: text}``: values shared by every candidate as they are, the chosen ones as ``best``."""
        texts = [params_text(c.params) for c in self.candidates]
        return {k: (v if all(t.get(k) == v for t in texts) else CHOSEN) for k, v in texts[0].items()}

    @cached_property
    def slug(self):
        return folder_name(self.readable(), self.identity())

    @property
    def path(self):
        return f"{SELECTION_DIR}/{self.dataset}/{self.method}/{self.slug}/seed{self.seed}.yaml"

    def legacy_path(self, experiment):
        return legacy_selection_path(self.dataset, self.method, experiment, self.at, self.seed)


@dataclass(frozen=True)
class FinalSpec:
    experiment: str  # the first experiment that asked for it (identical final runs of others share it)
    dataset: str
    method: str
    seed: int
    point: tuple  # sweep values of this final run
    selection: SelectionSpec | None  # None when the grid has a single point
    params: tuple | None  # the parameters, when there is nothing to select
    refit: bool
    inherit: tuple = ()  # (param, selection YAML) pairs of inherited parameters, as RunSpec.inherit
    stages: tuple = ()  # (param, (values...)) pairs: sweep values scored from this one fit (staged sweeps)
    data: str = ""
    save_model: bool | None = None  # as RunSpec.save_model
    block_trees: int | None = None  # a forest fitted in block jobs of this many trees, then merged (None: one job)
    n_trees: int | None = None  # the forest's size when it is split in blocks

    def identity(self):
        """Data, method, what it is fitted on, its sweep values (tables read them) and staged sizes, and
        either its parameters or the selection they come from; the block size when split (the blocks' sums are
        added in another order than one forest's: other last bits)."""
        return self._identity

    @property
    def blocks(self):
        """``[(first tree, stop)]`` of the block jobs (empty: fitted in one job)."""
        return _block_list(self)

    def block_dir(self, first, stop):
        """The folder of the block job of trees ``first..stop-1``."""
        return f"{BLOCKS_DIR}/{self.dataset}/{self.method}/{self.slug}/seed{self.seed}/{BLOCK_PREFIX}{first}-{stop}"

    @cached_property
    def _identity(self):
        out = {"data": self.data, "method": self.method, "fit_on": "trainval" if self.refit else "train",
               "sweep": {k: canonical(v) for k, v in self.point},
               "stages": {k: list(v) for k, v in self.stages}}
        if self.selection is None:
            out["params"] = {k: canonical(v) for k, v in self.params}
        else:
            out["selection"] = self.selection.key
        if self.block_trees is not None:
            out["block_trees"] = self.block_trees
        return _with_save_model(out, self.save_model)

    @cached_property
    def slug(self):
        texts = dict(params_text(self.params)) if self.selection is None else self.selection.readable()
        texts.update(params_text(self.point))
        for param, _ in self.stages:
            texts[param] = f"{STAGED_PREFIX}{dict(self.point)[param]}"
        return folder_name(texts, self.identity(), prefix=FINAL_PREFIX)

    @property
    def dir(self):
        return f"{RUNS_DIR}/{self.dataset}/{self.method}/{self.slug}/seed{self.seed}"

    def legacy_dir(self, experiment):
        return (f"{RUNS_DIR}/{self.dataset}/{self.method}/{FINAL_PREFIX}{experiment}-"
                f"{_point_slug(self.point, self.stages)}/seed{self.seed}")


BLOCK_PREFIX = "trees"


def _block_list(run):
    """``[(first tree, stop)]`` of the block jobs of a candidate or final run (empty: fitted in one job)."""
    if run.block_trees is None:
        return []
    return [(r.start, r.stop) for r in block_ranges(run.n_trees, run.block_trees)]


@dataclass(frozen=True)
class BlockSpec:
    """One block job of a run split into tree blocks: trees ``first..stop-1`` of ``final``'s forest (``final``: a
    FinalSpec, or the RunSpec of a candidate run)."""

    final: FinalSpec | RunSpec
    first: int
    stop: int

    @property
    def dir(self):
        return self.final.block_dir(self.first, self.stop)


def _fit_size(method, params):
    """The number of trees a final run's forest grows, or None when the method is not a treeopt bagged forest (only
    those are fitted tree by tree and can be split) or the size is not a number."""
    n_trees = params.get("n_estimators")
    if not isinstance(n_trees, int) or isinstance(n_trees, bool):
        return None
    return n_trees if fits_tree_ranges(method) else None


def block_size(profile, method, n_trees):
    """The block size of a forest of ``n_trees`` trees of ``method`` under the profile's ``forest_block_trees``
    (None: fitted in one job, when the method has no entry, is not a treeopt bagged forest or fits in one block)."""
    block = (profile.get("forest_block_trees") or {}).get(method)
    if block is None or n_trees is None or n_trees <= block:
        return None
    return int(block)


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
    blocks: dict = field(default_factory=dict)  # dir -> BlockSpec (tree blocks of finals split into several jobs)
    table_runs: dict = field(default_factory=dict)  # table name -> [final dirs]
    figure_datasets: dict = field(default_factory=dict)  # figure name -> [datasets]
    datasets: list = field(default_factory=list)
    # (experiment, method, dataset, seed, sweep point items) -> final dir / selection path, for look-ups by
    # experiment (tests, benchmarks, `python -m treeopt.experiments targets`)
    final_index: dict = field(default_factory=dict)
    selection_index: dict = field(default_factory=dict)
    legacy: dict = field(default_factory=dict)  # new path -> set of earlier versions' paths of the same thing

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

    def scorecard_paths(self):
        """The scorecard (``treeopt.experiments.report.scorecard``): CSV and Markdown beside the tables, a figure."""
        return [f"{self.tables_dir}/scorecard.csv", f"{self.tables_dir}/scorecard.md",
                f"{self.figures_dir}/scorecard.png", f"{self.figures_dir}/scorecard.pdf"]

    def targets(self):
        """Everything the profile produces (the Snakemake ``all`` rule)."""
        out = [self.table_path(t) for t in self.table_runs]
        for figure in self.figure_datasets:
            out.extend(self.figure_paths(figure))
        return out + self.scorecard_paths()

    def lookup(self, kind, path):
        table = {"run": self.runs, "selection": self.selections, "final": self.finals, "block": self.blocks}[kind]
        key = str(PurePosixPath(path))
        if key not in table:
            raise KeyError(f"{path} is not planned by profile {self.profile!r} (is the config changed?)")
        return table[key]

    def find(self, kind="final", experiment=None, method=None, dataset=None, seed=None, **point):
        """Final run folders (``kind="final"``) or selection files (``"selection"``) of the profile whose
        experiment, method, data set, seed and sweep values (``point``; for a staged final its fit size,
        for a selection the values it is made at) match every one given, in plan order."""
        index = {"final": self.final_index, "selection": self.selection_index}[kind]
        out = []
        for (ename, mname, ds, sd, items), path in index.items():
            values = dict(items)
            if ((experiment is None or ename == experiment) and (method is None or mname == method)
                    and (dataset is None or ds == dataset) and (seed is None or sd == seed)
                    and all(k in values and values[k] == v for k, v in point.items()) and path not in out):
                out.append(path)
        return out

    def wildcard_values(self):
        """Every (what, value) the rules' wildcards take: data sets, methods, run and selection names, seeds."""
        for path in (*self.runs, *self.finals, *self.selections):
            _, _, dataset, method, name, seed = path.split("/")
            yield from (("data set", dataset), ("method", method), ("name", name),
                        ("seed", seed.removesuffix(".yaml")))
        for path in self.blocks:
            yield "block", path.split("/")[-1]


def active_profile(config):
    """The profile selected by ``config["profile"]``."""
    try:
        return config["profiles"][config["profile"]]
    except KeyError:
        raise ConfigError(name_error("profile", config.get("profile"), list(config.get("profiles", {})),
                                     "profile")) from None


def _dataset_task(config, dataset):
    return ((config.get("datasets") or {}).get(dataset) or {}).get("task", "classification")


@dataclass(frozen=True)
class InheritSource:
    """Where an inherited parameter comes from for one data set and seed: the selection of ``method`` in
    ``experiment`` at the sweep values ``at`` (items), whose ``chosen`` value the run reads, or (``at`` None)
    ``value``, fixed by the config."""

    experiment: str | None = None
    method: str | None = None
    at: tuple | None = None
    value: object = None

    @property
    def fixed(self):
        return self.at is None


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
    source = split_dotted(param)[1]  # M's parameter: "init_params.nu" takes M's nu, not M's init_params.nu
    if source in (rentry.get("inherit") or {}):
        return inherit_source(config, profile_name, rexp_name, rmethod, source, dataset, seed,
                              (*_chain, (experiment, method)))
    rfixed, rgrid = rentry.get("params") or {}, rentry.get("grid") or {}
    if source in rfixed:
        return InheritSource(value=rfixed[source])
    if source not in rgrid:
        fail(f"{rmethod!r} in {rexp_name!r} sets no {source} (neither in its params nor in its grid)")
    if len(rgrid[source]) == 1:  # nothing is chosen: the value is known now
        return InheritSource(value=rgrid[source][0])
    select_at = rexp.get("select_at")
    if select_at:
        at = _items(dict(select_at))
    else:
        points = grid_points(rentry.get("sweep", rexp.get("sweep")) or {})
        if len(points) > 1 and point is not None and dict(point) in points:
            return InheritSource(rexp_name, rmethod, _items(dict(point)))
        if len(points) > 1:
            fail(f"experiment {rexp_name!r} has no select_at and chooses the parameters of {rmethod!r} afresh at "
                 f"each of its {len(points)} sweep values; give it select_at so there is one choice to inherit")
        at = _items(points[0]) if points else ()
    return InheritSource(rexp_name, rmethod, at)


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


class _Planner:
    """Builds the specs of one profile, each once: selections are made on demand (an inheriting run needs the
    identity of the selection it reads, which may belong to an experiment not planned yet) and remembered."""

    def __init__(self, config, profile_name):
        self.config, self.profile_name = config, profile_name
        self.profile = config["profiles"][profile_name]
        self.save_model = self.profile.get("save_models")
        self.data_keys, self.selections, self._making = {}, {}, []

    def data_key(self, dataset):
        if dataset not in self.data_keys:
            entry = (self.config.get("datasets") or {}).get(dataset) or {}
            try:
                from ...data.spec import data_identity, parse_entry

                identity = data_identity(parse_entry(dataset, entry))
            except (ImportError, ValueError):  # an entry the data layer refuses: `check` names the problem
                identity = {k: v for k, v in entry.items() if k not in ("description", "papers")}
            self.data_keys[dataset] = identity_hash(identity)
        return self.data_keys[dataset]

    def fixed(self, ename, mname, dataset, seed, point):
        """(fixed params with inherited ones put in or marked, (param, selection path) pairs to read) of a
        method entry at the sweep values ``point`` (a dict)."""
        entry = self.profile["experiments"][ename]["methods"][mname] or {}
        fixed, inherit = dict(entry.get("params") or {}), {}
        for param, ref in (entry.get("inherit") or {}).items():
            src = inherit_source(self.config, self.profile_name, ename, mname, param, dataset, seed,
                                 point=_items(point))
            if src.fixed:
                fixed[param] = src.value
            else:
                selection = self.selection(src.experiment, src.method, dataset, seed, src.at)
                fixed[param] = Inherited(src.method, selection.key, legacy_marker(ref["method"], ref["experiment"]))
                inherit[param] = selection.path
        return fixed, _items(inherit)

    def selection(self, ename, mname, dataset, seed, at):
        """The SelectionSpec of ``mname`` in ``ename`` at the sweep values ``at`` (items)."""
        key = (ename, mname, dataset, seed, at)
        if key not in self.selections:
            if key in self._making:  # inherit_source catches the usual circles; this is the last guard
                raise ConfigError(f"profile {self.profile_name!r}: the inherit references of {mname!r} in "
                                  f"{ename!r} go round in a circle")
            self._making.append(key)
            exp = self.profile["experiments"][ename]
            entry = exp["methods"][mname] or {}
            fixed, inherit = self.fixed(ename, mname, dataset, seed, dict(at))
            data = self.data_key(dataset)
            candidates = []
            for g in grid_points(entry.get("grid") or {}):
                params = {**fixed, **g, **dict(at)}
                candidates.append(RunSpec(dataset, mname, _items(params), seed, inherit, data, self.save_model,
                                          *self._blocks(mname, _fit_size(mname, params))))
            candidates = tuple(candidates)
            metric = exp.get("metric") or DEFAULT_METRIC[get_method(mname).task]
            self.selections[key] = SelectionSpec(ename, dataset, mname, seed, at, candidates, metric, data)
            self._making.remove(key)
        return self.selections[key]

    def finals(self, ename, mname, dataset, seed):
        """The FinalSpecs of one method entry on one data set and seed, one per sweep point."""
        exp = self.profile["experiments"][ename]
        entry = exp["methods"][mname] or {}
        grid = grid_points(entry.get("grid") or {})
        sweep_grid = entry.get("sweep", exp.get("sweep")) or {}
        sweep = _sweep_points(sweep_grid, staged_fits(entry.get("staged", exp.get("staged")), sweep_grid))
        refit, data = exp.get("refit", True), self.data_key(dataset)
        out = []
        for point, stages in sweep:
            if len(grid) == 1:
                fixed, inherit = self.fixed(ename, mname, dataset, seed, point)
                params = {**fixed, **grid[0], **point}
                n_trees = _fit_size(mname, params)
                out.append(FinalSpec(ename, dataset, mname, seed, _items(point), None, _items(params), refit,
                                     inherit, stages, data, self.save_model,
                                     *self._blocks(mname, n_trees)))
            else:
                at = _items(dict(exp.get("select_at") or point))
                selection = self.selection(ename, mname, dataset, seed, at)
                n_trees = _fit_size(mname, {**dict(selection.candidates[0].params), **point})
                out.append(FinalSpec(ename, dataset, mname, seed, _items(point), selection, None, refit,
                                     selection.candidates[0].inherit, stages, data, self.save_model,
                                     *self._blocks(mname, n_trees)))
        return out

    def _blocks(self, method, n_trees):
        """(block_trees, n_trees) of a run of ``method`` growing ``n_trees`` trees ((None, None): one job)."""
        block = block_size(self.profile, method, n_trees)
        if block is None:
            return None, None
        if get_method(method).task == "segmentation":
            from ..run.block_sums import BlockError
            from ..run.segment_runs import check_block_stages

            try:
                check_block_stages(n_trees, block)
            except BlockError as exc:
                raise ConfigError(f"profile {self.profile_name!r}: forest_block_trees of {method!r}: {exc}") from None
        return block, n_trees


def _register(table, path, spec, kind):
    """Put ``spec`` at ``path``; the same path for a different identity would be a hash collision."""
    if path in table and table[path].identity() != spec.identity():
        raise RuntimeError(f"{kind} {path}: two different runs got the same name (hash collision)")
    table.setdefault(path, spec)


def build_plan(config):
    """The plan of the active profile of a validated config."""
    profile = active_profile(config)
    plan = Plan(profile=config["profile"], seeds=list(profile["seeds"]), n_jobs=profile.get("n_jobs", 1),
                save_models=profile.get("save_models"),
                processed_dir=(config.get("data") or {}).get("processed_dir", "data/processed"))
    planner = _Planner(config, plan.profile)
    datasets, tabled = [], {}
    for ename, exp in profile["experiments"].items():
        finals, used = [], []
        for mname, entry in exp["methods"].items():
            method = get_method(mname)
            for dataset in (entry or {}).get("datasets") or exp["datasets"]:
                if _dataset_task(config, dataset) != method.task:
                    continue  # e.g. cart on a regression set: its regression twin covers it
                datasets.extend([dataset] if dataset not in datasets else [])
                used.extend([dataset] if dataset not in used else [])
                for seed in exp.get("seeds") or plan.seeds:
                    for final in planner.finals(ename, mname, dataset, seed):
                        _register(plan.finals, final.dir, final, "final run")
                        plan.final_index[(ename, mname, dataset, seed, final.point)] = final.dir
                        if final.block_trees is None:  # a run merged from blocks has no earlier version
                            plan.legacy.setdefault(final.dir, set()).add(final.legacy_dir(ename))
                        for first, stop in final.blocks:
                            block = BlockSpec(plan.finals[final.dir], first, stop)
                            plan.blocks.setdefault(block.dir, block)
                        finals.append(final.dir)
        for report in exp["reports"]:
            table = table_of(report)
            plan.table_runs.setdefault(table, [])
            seen = tabled.setdefault(table, set())
            plan.table_runs[table].extend(d for d in finals if not (d in seen or seen.add(d)))
            if report in FIGURES:
                shown = plan.figure_datasets.setdefault(report, [])
                shown.extend(ds for ds in exp["datasets"] if ds in used and ds not in shown)
    for (ename, mname, dataset, seed, at), selection in planner.selections.items():
        _register(plan.selections, selection.path, selection, "selection")
        plan.selection_index[(ename, mname, dataset, seed, at)] = selection.path
        blocked = any(run.block_trees is not None for run in selection.candidates)
        if not blocked:  # runs merged from blocks (and what is chosen among them) have no earlier version
            plan.legacy.setdefault(selection.path, set()).add(selection.legacy_path(ename))
        for run in selection.candidates:
            _register(plan.runs, run.dir, run, "run")
            for first, stop in run.blocks:
                block = BlockSpec(plan.runs[run.dir], first, stop)
                plan.blocks.setdefault(block.dir, block)
            if run.block_trees is None:
                plan.legacy.setdefault(run.dir, set()).add(run.legacy_dir)
    plan.datasets = datasets
    for spec in (*plan.runs.values(), *plan.finals.values()):
        for param, path in spec.inherit:
            if path not in plan.selections:  # inherit_source and the planner disagree: a bug, not a config error
                raise RuntimeError(f"{spec.dir}: {param} is read from {path}, which the plan does not make")
    for what, value in plan.wildcard_values():
        check_component(value, what)
    for table in list(plan.table_runs):
        if table not in TABLES:
            raise ValueError(f"no builder for table {table!r}")
    return plan
