"""Turn the active profile into the list of files the workflow makes: :func:`build_plan` makes its
:class:`~treeopt.experiments.plan.specs.Plan` (the specs and their folders: :mod:`treeopt.experiments.plan.specs`).

A grid with a single combination needs no candidates and no selection: its final run's parameters are known
from the config (this is also how sweeps without validation data, like the RGF paper's curves, are run).
Parameters inherited from another method's selection are followed by :mod:`treeopt.experiments.plan.inherit`.

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
(:mod:`treeopt.experiments.run.blocks`). ``FinalSpec.block_trees`` is part of its identity (the sums' last bits
depend on the block size); a forest of at most s trees is one job, named and summed as without the setting
(:mod:`treeopt.experiments.plan.tree_blocks`).
"""

import dataclasses
import itertools

from .errors import ConfigError, name_error
from .grow import grown_selection
from .identity import check_component, identity_hash
from .inherit import dataset_task, inherit_source
from .methods import get_method
from .params import Inherited, legacy_marker
from .paths import depth_path_source, path_sources
from .reports import FIGURES, TABLES, table_of
from .specs import BlockSpec, FinalSpec, Plan, RunSpec, SelectionSpec, grid_points, point_items
from .tree_blocks import BlockError, block_size, check_block_stages, fit_size

# the metric a selection is made on when the experiment names none
DEFAULT_METRIC = {"classification": "accuracy", "regression": "rmse", "segmentation": "jaccard"}


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


def _check_depth_stages(where, method, entry):
    """``staged: {max_depth: ...}``: a segmentation forest grown level by level, scored cut at each depth
    (:mod:`treeopt.experiments.run.segment_runs`); anything else is a ConfigError before any job starts."""
    task = get_method(method).task
    if task != "segmentation":
        raise ConfigError(f"{where}: staged max_depth scores a segmentation forest cut at each depth; a {task} method "
                          f"reads a depth sweep off one fit with `path: max_depth` (and grow_order: level)")
    if (entry.get("params") or {}).get("grow_order") != "level":
        raise ConfigError(f"{where}: staged max_depth needs grow_order: level in the method's params (a forest grown "
                          f"depth first to a larger depth draws differently, so its cut trees are not the shallower "
                          f"fit's)")


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


def active_profile(config):
    """The profile selected by ``config["profile"]``."""
    try:
        return config["profiles"][config["profile"]]
    except KeyError:
        raise ConfigError(name_error("profile", config.get("profile"), list(config.get("profiles", {})),
                                     "profile")) from None


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
                                 point=point_items(point))
            if src.fixed:
                fixed[param] = src.value
            else:
                selection = self.selection(src.experiment, src.method, dataset, seed, src.at)
                fixed[param] = Inherited(src.method, selection.key, legacy_marker(ref["method"], ref["experiment"]))
                inherit[param] = selection.path
        return fixed, point_items(inherit)

    def selection(self, ename, mname, dataset, seed, at):
        """The choice of ``mname`` in ``ename`` at the sweep values ``at`` (items) that final and inheriting runs
        read: its SelectionSpec, or the GrownSelectionSpec around it when the entry has ``grow:``
        (:mod:`treeopt.experiments.plan.grow`)."""
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
                candidates.append(RunSpec(dataset, mname, point_items(params), seed, inherit, data, self.save_model,
                                          *self._blocks(mname, fit_size(mname, params))))
            where = f"profile {self.profile_name!r}: {ename}.methods.{mname}.path"
            depth_path = None
            if entry.get("path") == "max_depth" and "max_depth" in get_method(mname).path:  # a depth path (plan.paths)
                depth_path = depth_path_source(mname, dict(candidates[0].params) if candidates else {},
                                               entry.get("sweep", exp.get("sweep")), where)
                if dict(at).get("max_depth") != depth_path:
                    deep = self.selection(ename, mname, dataset, seed,
                                          point_items({**dict(at), "max_depth": depth_path}))
                    candidates = [dataclasses.replace(c, path_run=d.dir) for c, d in zip(candidates, deep.candidates)]
            elif entry.get("path"):  # the grid's values of the path parameter read off one fit per path (plan.paths)
                sources = path_sources(mname, entry["path"], [dict(c.params) for c in candidates], where)
                candidates = [dataclasses.replace(c, path_run=candidates[sources[i]].dir) if i in sources else c
                              for i, c in enumerate(candidates)]
            candidates = tuple(candidates)
            metric = exp.get("metric") or DEFAULT_METRIC[get_method(mname).task]
            self.selections[key] = grown_selection(
                SelectionSpec(ename, dataset, mname, seed, at, candidates, metric, data), self.profile, exp, entry,
                depth_path)
            self._making.remove(key)
        return self.selections[key]

    def finals(self, ename, mname, dataset, seed):
        """The FinalSpecs of one method entry on one data set and seed, one per sweep point."""
        exp = self.profile["experiments"][ename]
        entry = exp["methods"][mname] or {}
        grid = grid_points(entry.get("grid") or {})
        sweep_grid = entry.get("sweep", exp.get("sweep")) or {}
        fits = staged_fits(entry.get("staged", exp.get("staged")), sweep_grid)
        if "max_depth" in fits:
            _check_depth_stages(f"experiments.{ename}.methods.{mname}", mname, entry)
        sweep = _sweep_points(sweep_grid, fits)
        refit, data = exp.get("refit", True), self.data_key(dataset)
        out = []
        for point, stages in sweep:
            if len(grid) == 1:
                fixed, inherit = self.fixed(ename, mname, dataset, seed, point)
                params = {**fixed, **grid[0], **point}
                n_trees = fit_size(mname, params)
                out.append(FinalSpec(ename, dataset, mname, seed, point_items(point), None, point_items(params), refit,
                                     inherit, stages, data, self.save_model,
                                     *self._blocks(mname, n_trees)))
            else:
                at = point_items(dict(exp.get("select_at") or point))
                selection = self.selection(ename, mname, dataset, seed, at)
                n_trees = fit_size(mname, {**dict(selection.candidates[0].params), **point})
                out.append(FinalSpec(ename, dataset, mname, seed, point_items(point), selection, None, refit,
                                     selection.candidates[0].inherit, stages, data, self.save_model,
                                     *self._blocks(mname, n_trees)))
        if entry.get("path") == "max_depth" and "max_depth" in get_method(mname).path:
            out = _depth_chains(out)
        return out

    def _blocks(self, method, n_trees):
        """(block_trees, n_trees) of a run of ``method`` growing ``n_trees`` trees ((None, None): one job)."""
        block = block_size(self.profile, method, n_trees)
        if block is None:
            return None, None
        if get_method(method).task == "segmentation":
            try:
                check_block_stages(n_trees, block)
            except BlockError as exc:
                raise ConfigError(f"profile {self.profile_name!r}: forest_block_trees of {method!r}: {exc}") from None
        return block, n_trees


def _depth_chains(finals):
    """The final runs of one method entry on a depth path (``path: max_depth``), each at a smaller depth linked to
    the final run at the largest depth with the same other sweep values (``depth_path``) and to the one a depth
    above it (``deeper``): the job reads its tree off a deeper fit with its parameters, made once per path
    (:func:`treeopt.experiments.jobs.final_run`). Runs that read their chosen candidate (``refit: false``) keep it."""
    groups = {}
    for final in finals:
        if final.selection is not None and not final.refit:
            continue
        rest = tuple((k, v) for k, v in final.point if k != "max_depth")
        groups.setdefault(rest, []).append(final)
    linked = {}
    for members in groups.values():
        members = sorted(members, key=lambda f: dict(f.point)["max_depth"], reverse=True)
        deepest = dict(members[0].point)["max_depth"]
        for rank, (above, final) in enumerate(zip(members, members[1:]), start=1):
            linked[final.dir] = dataclasses.replace(final, depth_path=members[0].dir, deeper=above.dir,
                                                    depth_rank=rank, deepest=deepest)
    return [linked.get(f.dir, f) for f in finals]


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
                if dataset_task(config, dataset) != method.task:
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
        plan.selection_index[(ename, mname, dataset, seed, at)] = selection.path
        if hasattr(selection, "growth"):  # the grown choice; its plain selection below is its input
            _register(plan.grown, selection.path, selection, "grown selection")
            for growth in selection.growth:  # a depth path's grown candidates at the largest depth: their own jobs
                if growth.deep is not None:
                    _register(plan.runs, growth.deep.dir, growth.deep, "run")
                elif selection.depth_path is not None:  # at the largest depth: the run the others are read off
                    _register(plan.runs, growth.run.dir, growth.run, "run")
            selection = selection.base
        _register(plan.selections, selection.path, selection, "selection")
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
            if path not in plan.selections and path not in plan.grown:  # inherit_source and the planner disagree: a bug, not a config error
                raise RuntimeError(f"{spec.dir}: {param} is read from {path}, which the plan does not make")
    for what, value in plan.wildcard_values():
        check_component(value, what)
    for table in list(plan.table_runs):
        if table not in TABLES:
            raise ValueError(f"no builder for table {table!r}")
    return plan
