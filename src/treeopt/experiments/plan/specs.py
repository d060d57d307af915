"""What a profile's plan is made of: the specs of its candidate runs, selections, final runs and tree blocks, and
the :class:`Plan` holding them (made by :func:`treeopt.experiments.plan.build.build_plan`).

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

A run split into tree blocks (:mod:`treeopt.experiments.plan.tree_blocks`) also has block jobs, :class:`BlockSpec`
``results/blocks/{dataset}/{method}/{name}/seed{seed}/trees{first}-{stop}``.

:attr:`Plan.legacy` maps each name to the names earlier versions gave the same thing
(:mod:`treeopt.experiments.run.migrate` renames those folders); :meth:`Plan.find` looks runs up by experiment.
"""

import itertools
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import PurePosixPath

from .identity import CHOSEN, canonical, folder_name, identity_hash, params_text
from .params import params_slug
from .reports import FIGURES
from .tree_blocks import block_ranges

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


def point_items(mapping):
    """A sweep point or parameter dict as the specs hold it: its (key, value) pairs, sorted."""
    return tuple(sorted(mapping.items()))


def grid_points(grid):
    """Every combination of a ``{name: [values]}`` grid, in config order (first key varies slowest)."""
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


STAGED_PREFIX = "staged"


def _point_slug(point, stages=()):
    """Folder text of a sweep point in earlier versions' names; a staged parameter shows ``staged{size}``."""
    point = dict(point)
    for param, _ in stages:
        point[param] = f"{STAGED_PREFIX}{point[param]}"
    return params_slug(point) if point else ALL_POINTS


def legacy_selection_path(dataset, method, experiment, at, seed):
    """Where earlier versions kept the selection of ``method`` in ``experiment`` at the sweep values ``at``."""
    return f"{SELECTION_DIR}/{dataset}/{method}/{experiment}/{_point_slug(at)}/seed{seed}.yaml"


def _with_save_model(identity, save_model):
    """A profile's ``save_models: true/false`` changes the files a run leaves (model.npz), so such runs are
    others than the default's; ``null`` (the method decides) adds nothing, keeping the default names."""
    return identity if save_model is None else {**identity, "save_model": bool(save_model)}


class _SplitIntoBlocks:
    """What a candidate run and a final run share when their forest may be split into tree blocks: the blocks and
    their folders (the class has ``block_trees``, ``dataset``, ``method``, ``slug`` and ``seed``)."""

    @property
    def blocks(self):
        """``[(first tree, stop)]`` of the block jobs (empty: fitted in one job)."""
        return _block_list(self)

    def block_dir(self, first, stop):
        """The folder of the block job of trees ``first..stop-1``."""
        return f"{BLOCKS_DIR}/{self.dataset}/{self.method}/{self.slug}/seed{self.seed}/{BLOCK_PREFIX}{first}-{stop}"


@dataclass(frozen=True)
class RunSpec(_SplitIntoBlocks):
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
    # the candidate run (folder) whose warm-started path passes through this run's parameters: this run is read off
    # it, not fitted (plan.paths); not part of the identity, since the folder holds the same run either way
    path_run: str | None = field(default=None, compare=False)

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
class FinalSpec(_SplitIntoBlocks):
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
    # A depth path (config ``path: max_depth``, plan.paths): the final run at the sweep's largest depth, which this
    # one (at a smaller depth) is read off or whose sibling it fits at that depth, and the final run one depth deeper
    # (made first: the runs of one path are made deepest first, so each deeper fit is made once). How the job gets
    # the run, not what it is: not part of the identity.
    depth_path: str | None = field(default=None, compare=False)
    deeper: str | None = field(default=None, compare=False)
    depth_rank: int = field(default=0, compare=False)  # 1 for the path's second-deepest final run, 2 next, ...
    deepest: object = field(default=None, compare=False)  # the largest depth of the path

    def identity(self):
        """Data, method, what it is fitted on, its sweep values (tables read them) and staged sizes, and
        either its parameters or the selection they come from; the block size when split (the blocks' sums are
        added in another order than one forest's: other last bits)."""
        return self._identity

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

@dataclass
class Plan:
    profile: str
    seeds: list
    n_jobs: int
    save_models: bool | None
    processed_dir: str
    runs: dict = field(default_factory=dict)  # dir -> RunSpec
    selections: dict = field(default_factory=dict)  # path -> SelectionSpec
    grown: dict = field(default_factory=dict)  # path -> GrownSelectionSpec (plan.grow: grids grown past an edge)
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
        table = {"run": self.runs, "selection": self.selections, "final": self.finals, "block": self.blocks,
                 "grown": self.grown}[kind]
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
        grown = [g.run.dir for spec in self.grown.values() for g in spec.growth]
        for path in (*self.runs, *self.finals, *self.selections, *self.grown, *grown):
            _, _, dataset, method, name, seed = path.split("/")
            yield from (("data set", dataset), ("method", method), ("name", name),
                        ("seed", seed.removesuffix(".yaml")))
        for path in self.blocks:
            yield "block", path.split("/")[-1]

