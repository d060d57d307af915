"""One tuning rule for every method (issue #38): when validation picks a grid edge, the grid grows one step past it.

A grid only shows that its best value is the best *of the grid*: a choice at an edge (CO2's smallest nu, the most
restarts tried) says the optimum may lie outside, and a baseline tuned that way may be under-tuned. So every method
may name, per numeric grid axis, the step that continues it: ``grow:`` on a profile (the rule written once, for every
method of every experiment whose grid has that axis), on an experiment (for its methods) or on a method entry; the
nearer one wins (method, then experiment, then profile)::

    grow: {nu: {series: [1, 3]}, n_restarts: {times: 2, min: 1}, min_samples_leaf: {plus: 5, min: 1}}

* ``{times: k}``: one step is a factor k (k > 1): 5, 10, 20 -> 40 above, 2 below (an integer axis stays integer,
  rounded away from the edge);
* ``{plus: d}``: one step adds d (d > 0);
* ``{series: [1, 3]}``: the next value m x 10^e of a decade series with mantissas m (1 <= m < 10): 0.01, 0.03, 0.1
  -> 0.3 above, 0.003 below (geometric grids written by hand rarely have one exact ratio);
* ``min`` / ``max``: no value past them is tried (where the estimator's own limit is, e.g. 1 restart).

An axis written in the ``p^a`` notation (``max_features: [p^0.5, ..., p^0.9]``, round(p ** a) of the p features) is
ordered by its exponent a, and a step moves the exponent: ``{plus: 0.1, max: 1}`` grows p^0.5 to p^0.4 and p^0.9 to
p^1.0 (every feature), with ``min``/``max`` bounding a (a random forest's q is tuned as every other grid axis).

The rule (:mod:`treeopt.experiments.run.grow`): after the ordinary selection, for each growable axis (in grid order)
whose chosen value is the smallest or largest on that axis, the candidate one step past it, the other parameters at
their chosen values, is fitted on the training part and scored on validation as every candidate is; then the choice
is made again among all (ties keep the first listed: the original grid first). One step only: a choice at the new
edge is recorded as such, not chased further, so the job graph stays static and its cost bounded.

The folders of every candidate that may be grown are known when the plan is made (each candidate at an edge of a
growable axis has at most one neighbour past it), so they are named by identity as every run
(:class:`Growth`), and the job that grows (:class:`GrownSelectionSpec`, ``results/selection/.../grown-{name}/
seed{seed}.yaml``) reads the plain selection and writes its own file: the plain selection and the final runs of
methods without ``grow:`` keep their names and files.
"""

import copy
import math
from dataclasses import dataclass, field, replace
from functools import cached_property

from .errors import name_error
from .identity import folder_name, identity_hash
from .methods import power_exponent
from .specs import SELECTION_DIR, SelectionSpec, point_items

GROWN_PREFIX = "grown-"
STEP_KINDS = ("times", "plus", "series")
LOWER, UPPER = "lower", "upper"


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def axis_order_key(value):
    """The number a grid value is ordered and stepped by: itself, or the exponent of a ``p^a`` value."""
    return power_exponent(value) if isinstance(value, str) else value


def _tidy(value):
    """A computed value as people would write it: 12 significant digits (0.30000000000000004 -> 0.3)."""
    return float(f"{value:.12g}")


def axis_edges(values):
    """(smallest, largest) of a numeric grid axis, or of one written ``p^a`` (by exponent, the values as written);
    None when it is neither or has fewer than two values."""
    values = list(values)
    keys = [axis_order_key(v) for v in values]
    if not values or not all(is_number(k) for k in keys) or len(set(keys)) < 2:
        return None
    return min(values, key=axis_order_key), max(values, key=axis_order_key)


def step_past(step, edge, side, integer):
    """The value one ``step`` (a dict: one of times/plus/series, optional min/max) past ``edge`` on ``side``
    (``"lower"`` or ``"upper"``); ``integer`` keeps an integer axis integer. None when ``min``/``max`` forbid it or
    the step cannot leave the edge (an integer axis at 1 divided by 2). A ``p^a`` edge steps its exponent and gives
    a ``p^a`` value."""
    exponent = power_exponent(edge)
    if exponent is not None:
        value = step_past(step, exponent, side, False)
        return None if value is None else f"p^{value}"
    up = side == UPPER
    if "times" in step:
        value = edge * step["times"] if up else edge / step["times"]
        if integer:
            value = math.ceil(value - 1e-9) if up else math.floor(value + 1e-9)
    elif "plus" in step:
        value = edge + step["plus"] if up else edge - step["plus"]
    else:
        mantissas = sorted(step["series"])
        exponent = math.floor(math.log10(edge))
        series = [_tidy(m * 10.0 ** e) for e in range(exponent - 1, exponent + 3) for m in mantissas]
        past = [v for v in series if (v > edge * (1 + 1e-9) if up else v < edge * (1 - 1e-9))]
        value = min(past) if up else max(past)
    value = _tidy(value) if isinstance(value, float) else value
    if integer and float(value) == int(value):
        value = int(value)
    if value == edge or (up and "max" in step and value > step["max"]) or (
            not up and "min" in step and value < step["min"]):
        return None
    return value


def grow_steps(profile, exp, entry):
    """``{param: step dict}`` of a method entry, in grid order: the profile's ``grow:`` and then the experiment's for
    the axes of this method's grid, then the entry's own (the nearer wins)."""
    grid = (entry or {}).get("grid") or {}
    steps = {**{k: v for k, v in ((profile or {}).get("grow") or {}).items() if k in grid},
             **{k: v for k, v in ((exp or {}).get("grow") or {}).items() if k in grid},
             **((entry or {}).get("grow") or {})}
    return {k: dict(steps[k]) for k in grid if k in steps}


def without_growth(config):
    """A copy of ``config`` whose selected profile grows no grid: every ``grow:`` of the profile, its experiments
    and their method entries removed (``plan --estimate`` prices the papers' own grids with it, beside the total that
    charges every grown grid at its worst)."""
    config = copy.deepcopy(config)
    profile = (config.get("profiles") or {}).get(config.get("profile")) or {}
    profile.pop("grow", None)
    for exp in (profile.get("experiments") or {}).values():
        (exp or {}).pop("grow", None)
        for entry in ((exp or {}).get("methods") or {}).values():
            (entry or {}).pop("grow", None)
    return config


def _where(key, entry, exp, mwhere, where, pwhere):
    """Where the step of ``key`` a method uses is written (for messages)."""
    if key in ((entry or {}).get("grow") or {}):
        return f"{mwhere}.grow.{key}"
    return f"{where}.grow.{key}" if key in ((exp or {}).get("grow") or {}) else f"{pwhere}.grow.{key}"


def _step_problem(step):
    kinds = [k for k in STEP_KINDS if k in step]
    if len(kinds) != 1:
        return f"give exactly one of {', '.join(STEP_KINDS)} (got {', '.join(kinds) or 'none'})"
    return None


def grow_problems(config):
    """Messages for every ``grow:`` of every profile that cannot work: a step for a parameter that is not on the
    grid, an axis that is not numeric or has one value, a step with none or two kinds, a value past an edge that
    the estimator refuses (set ``min``/``max`` to stop there)."""
    from .methods import METHODS, get_method
    from .values import value_problem

    problems = []
    for pname, profile in (config.get("profiles") or {}).items():
        pwhere = f"profiles.{pname}"
        profile_axes = sorted({k for exp in (profile.get("experiments") or {}).values()
                               for e in ((exp or {}).get("methods") or {}).values() for k in ((e or {}).get("grid") or {})})
        for key in (profile.get("grow") or {}):
            if key not in profile_axes:
                problems.append(name_error("grow parameter", key, profile_axes, f"{pwhere}.grow")
                                + " (a profile's grow step applies to a grid parameter of its experiments' methods)")
        for ename, exp in (profile.get("experiments") or {}).items():
            where = f"profiles.{pname}.experiments.{ename}"
            methods = exp.get("methods") or {}
            axes = sorted({k for e in methods.values() for k in ((e or {}).get("grid") or {})})
            for key in (exp.get("grow") or {}):
                if key not in axes:
                    problems.append(name_error("grow parameter", key, axes, f"{where}.grow")
                                    + " (a grow step applies to a grid parameter of the experiment's methods)")
            for mname, entry in methods.items():
                entry = entry or {}
                grid = entry.get("grid") or {}
                mwhere = f"{where}.methods.{mname}"
                for key in (entry.get("grow") or {}):
                    if key not in grid:
                        problems.append(name_error("grow parameter", key, sorted(grid), f"{mwhere}.grow")
                                        + " (only a grid parameter can grow)")
                if mname not in METHODS:
                    continue
                for key, step in grow_steps(profile, exp, entry).items():
                    gwhere = _where(key, entry, exp, mwhere, where, pwhere)
                    why = _step_problem(step)
                    edges = axis_edges(grid[key])
                    if why is None and edges is None:
                        why = (f"the grid {grid[key]} of {mname} has no edge to grow from (it needs two or more "
                               f"numbers, or p^a values)")
                    if why is None and ("times" in step or "series" in step) and axis_order_key(edges[0]) <= 0:
                        why = f"a factor step needs positive grid values, got {grid[key]}"
                    if why:
                        problems.append(f"{gwhere}: {why}")
                        continue
                    try:
                        cls = get_method(mname).estimator_class()
                    except ImportError:
                        continue
                    integer = all(isinstance(v, int) for v in grid[key])
                    for side, edge in zip((LOWER, UPPER), edges):
                        value = step_past(step, edge, side, integer)
                        refused = None if value is None else value_problem(cls, key, value)
                        if refused:
                            limit = "min" if side == LOWER else "max"
                            problems.append(f"{gwhere}: one step past the {side} edge of {mname}'s grid "
                                            f"({edge} -> {value}): {refused}; set {limit}: to stop growing there")
    return problems


@dataclass(frozen=True)
class Growth:
    """A candidate that may be grown: ``source`` (a planned candidate at the ``side`` edge ``edge`` of ``param``)
    with ``param`` set to ``value``, fitted as the candidate ``run`` (a RunSpec named by identity, one job: never in
    tree blocks) when validation chooses ``source``."""

    param: str
    side: str
    edge: object
    value: object
    source: object
    run: object
    deep: object = None  # on a depth path: the same candidate at the sweep's largest depth, which ``run`` is read off


@dataclass(frozen=True)
class GrownSelectionSpec:
    """The choice of ``base`` (a :class:`SelectionSpec`) with its grid grown one step past the chosen edge along
    the axes of ``grow`` (``(param, step items)`` pairs, grid order). Final runs and inheriting runs read its file;
    the plain selection is its input."""

    base: SelectionSpec
    grow: tuple
    # a depth path (config ``path: max_depth``; plan.paths): the sweep's largest depth. A grown candidate at a smaller
    # depth is read off the same candidate at that depth (``Growth.deep``: a planned run with its own job, shared by
    # the selections of every depth), as the plain candidates are; how the job gets it, not what it chooses.
    depth_path: object = field(default=None, compare=False)

    def __getattr__(self, name):  # experiment, dataset, method, seed, at, candidates, metric, data: the base's
        if name in ("experiment", "dataset", "method", "seed", "at", "candidates", "metric", "data"):
            return getattr(self.base, name)
        raise AttributeError(name)

    def identity(self):
        return {"grow": {param: dict(step) for param, step in self.grow}, "from": self.base.key}

    @cached_property
    def key(self):
        return identity_hash(self.identity())

    def readable(self):
        return self.base.readable()

    @cached_property
    def slug(self):
        return folder_name(self.readable(), self.identity(), prefix=GROWN_PREFIX)

    @property
    def path(self):
        return f"{SELECTION_DIR}/{self.dataset}/{self.method}/{self.slug}/seed{self.seed}.yaml"

    dir = path  # what the cost summary keys jobs by

    @cached_property
    def growth(self):
        """Every :class:`Growth` the job may fit: for each growable axis, each candidate at one of its edges."""
        out = []
        for param, step in self.grow:
            values = [dict(c.params)[param] for c in self.candidates]
            edges = axis_edges(values)
            if edges is None:
                continue
            integer = all(isinstance(v, int) for v in values)
            for source in self.candidates:
                for side, edge in zip((LOWER, UPPER), edges):
                    if dict(source.params)[param] != edge:
                        continue
                    value = step_past(dict(step), edge, side, integer)
                    if value is not None:
                        params = point_items({**dict(source.params), param: value})
                        run = replace(source, params=params, block_trees=None, n_trees=None, path_run=None)
                        deep = None
                        if self.depth_path is not None and dict(params).get("max_depth") != self.depth_path:
                            deep = replace(run, params=point_items({**dict(params), "max_depth": self.depth_path}))
                            run = replace(run, path_run=deep.dir)
                        out.append(Growth(param, side, edge, value, source, run, deep))
        return tuple(out)

    def job_entries(self):
        """The growth as plain dicts for the job (``treeopt.experiments.jobs.grow_selection``)."""
        return _job_entries(self.growth)

    @cached_property
    def axis_jobs(self):
        """The :class:`GrowAxisSpec` of each axis that can grow, when there are two or more and the grown candidates
        are fitted (not read off a depth path): each axis's candidate is then fitted by a job of its own, so that no
        job fits more than one candidate (a 16-tree segmentation candidate is ~2-3 CPU-hours: two in one job would
        pass the paper profile's 4-hour job bound); this job then reads them. Empty otherwise (this job fits)."""
        params = list(dict.fromkeys(g.param for g in self.growth))
        if self.depth_path is not None or len(params) < 2:
            return ()
        return tuple(GrowAxisSpec(self, param) for param in params)


def _job_entries(growth):
    from .params import plain_params

    return [{"param": g.param, "side": g.side, "edge": g.edge, "value": g.value, "from": g.source.dir,
             "run": g.run.dir, "params": plain_params(g.run.params),
             **({"path_run": g.run.path_run} if g.run.path_run else {})} for g in growth]


@dataclass(frozen=True)
class GrowAxisSpec:
    """The job that fits the grown candidate of one axis ``param`` of ``grown`` (a :class:`GrownSelectionSpec` with
    two or more axes): it reads the plain selection and, when the choice lies at an edge of ``param``, fits the
    candidate one step past it; it writes ``path`` (``.../grown-{name}/seed{seed}-{param}.yaml``: what it fitted, or
    that the choice was inside). The grown selection's job reads the candidates and makes the choice again."""

    grown: GrownSelectionSpec
    param: str

    def __getattr__(self, name):  # experiment, dataset, method, seed, candidates, ...: the grown selection's
        if name in ("experiment", "dataset", "method", "seed", "at", "candidates", "metric", "data", "base"):
            return getattr(self.grown, name)
        raise AttributeError(name)

    depth_path = None

    @property
    def grow(self):
        return tuple((param, step) for param, step in self.grown.grow if param == self.param)

    @property
    def growth(self):
        return tuple(g for g in self.grown.growth if g.param == self.param)

    @property
    def path(self):
        return self.grown.path.removesuffix(".yaml") + f"-{self.param}.yaml"

    dir = path  # what the cost summary keys jobs by

    def job_entries(self):
        return _job_entries(self.growth)


def grown_selection(base, profile, exp, entry, depth_path=None):
    """``base`` itself when the method entry grows nothing, else its :class:`GrownSelectionSpec` (``depth_path``: the
    largest depth of a depth path the entry's candidates are read off)."""
    steps = grow_steps(profile, exp, entry)
    if not steps:
        return base
    return GrownSelectionSpec(base, tuple((p, point_items({k: tuple(v) if isinstance(v, list) else v
                                                              for k, v in s.items()})) for p, s in steps.items()),
                              depth_path)
