"""Parameters a method entry takes from another method's selection (config ``inherit:``), followed to their source.

A method entry may take a parameter from another method's selection (same profile, data set and seed)::

    inherit: {max_features: {method: rf, experiment: co2_forest_size}}

The value is not known when the plan is made, so the run's params hold an :class:`treeopt.experiments.plan.params.
Inherited` naming the selection it is read from (slug ``from-rf``; the hash covers that selection's identity),
the referenced selection YAML becomes an input of the run
(``RunSpec.inherit`` / ``FinalSpec.inherit``) and the runner puts the chosen value in. When the referenced
method does not choose the parameter (it is fixed in its ``params``, or has a single grid value) the value is
known from the config and put in directly; then there is no marker and no extra input.

:func:`inherit_source` follows one reference (the planner asks it for each run; the config check asks
:func:`inherit_problems` for every reference that cannot be followed, with the same messages).
"""

import difflib
from dataclasses import dataclass

from .errors import ConfigError
from .methods import get_method
from .params import split_dotted
from .specs import grid_points, point_items


def dataset_task(config, dataset):
    """The task of a data set entry (classification when it names none)."""
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
    task = dataset_task(config, dataset)
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
        at = point_items(dict(select_at))
    else:
        points = grid_points(rentry.get("sweep", rexp.get("sweep")) or {})
        if len(points) > 1 and point is not None and dict(point) in points:
            return InheritSource(rexp_name, rmethod, point_items(dict(point)))
        if len(points) > 1:
            fail(f"experiment {rexp_name!r} has no select_at and chooses the parameters of {rmethod!r} afresh at "
                 f"each of its {len(points)} sweep values; give it select_at so there is one choice to inherit")
        at = point_items(points[0]) if points else ()
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
                        if dataset_task(config, dataset) == task:
                            for seed in exp.get("seeds") or profile["seeds"]:
                                for point in sweep:
                                    inherit_source(config, profile_name, ename, mname, param, dataset, seed,
                                                   point=point_items(point))
                except ConfigError as exc:
                    problems.append(str(exc))
    return problems
