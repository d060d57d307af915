"""Find run folders and selection files of earlier versions and rename them to their identity names.

Earlier versions named runs by experiment (``final-{experiment}-{point}``) and by ``key=value`` lists with
commas (``C=0.01,max_depth=6``), which profiles sharing an experiment name overwrote and SLURM jobs could not
parse. The plan knows the earlier name of everything it makes (:attr:`treeopt.experiments.plan.specs.Plan.legacy`);
an earlier folder is taken over only when its own record says it is the planned run:

* a candidate run: same data set, method, seed, parameters (an inherited one: read from an earlier selection
  of the same thing), fitted on the training part;
* a selection: same metric and the same candidates, in the same order;
* a final run: same fit (train or train+validation), sweep values and staged sizes, and either the same
  parameters or the chosen ones of a matching selection with its sweep values put in.

Anything else (e.g. a folder another profile overwrote under the old naming) is left where it is and named
in the report, never deleted; the workflow then computes the run under its new name. A renamed folder keeps
its files; the paths recorded in it (``selection``, ``inherited``, the ``repeat`` command, the candidates'
``run`` of a selection) are rewritten to the new names and the old path is kept under ``renamed_from``. Logs
under ``results/logs`` follow their run. Renamed outputs get the time of the renaming, later along each
dependency (candidates, then their selection, then the runs that read it): Snakemake redoes an output older
than its rule's script, and the workflow scripts are newer than any earlier run.
"""

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..plan.identity import canonical
from ..plan.params import Inherited, is_inherit_marker
from ..plan.specs import RUNS_DIR, SELECTION_DIR, FinalSpec, RunSpec, SelectionSpec
from .selection import _PlainDumper

LOGS_DIR = "results/logs"


@dataclass
class Migration:
    """What :func:`migrate` did (or would do): ``renamed`` (old, new) pairs, ``refused`` (old, why) pairs."""

    renamed: list = field(default_factory=list)
    refused: list = field(default_factory=list)

    def summary(self, limit=10):
        """Lines for the user: what was renamed, and each earlier folder left alone with the reason."""
        lines = [f"renamed {len(self.renamed)} run folders and selection files of an earlier version to their "
                 f"new names (`python -m treeopt.experiments migrate --dry-run` lists such renames)"
                 ] if self.renamed else []
        lines += [f"left {old} where it is: {why}" for old, why in self.refused[:limit]]
        if len(self.refused) > limit:
            lines.append(f"... and {len(self.refused) - limit} more earlier folders left where they are "
                         f"(`python -m treeopt.experiments migrate --dry-run` lists them)")
        return lines


def _read_yaml(path):
    try:
        out = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return None
    return out if isinstance(out, dict) else None


def _same(a, b):
    """Equal as YAML/JSON records them (tuples read back as lists)."""
    return json.dumps(canonical(a), sort_keys=True, default=str) == json.dumps(canonical(b), sort_keys=True,
                                                                                default=str)


class _Checker:
    """Decides whether an earlier folder or file is the thing a spec plans (None) or says why not."""

    def __init__(self, plan, root):
        self.root = Path(root)
        self.old_to_new = {}  # earlier path -> new path, for every legacy name the plan knows
        for new, olds in plan.legacy.items():
            for old in olds:
                self.old_to_new.setdefault(old, new)

    def _record(self, path, name):
        return _read_yaml(self.root / path / name) if name else _read_yaml(self.root / path)

    def params_match(self, recorded, spec_params, spec_inherit, inherited_record):
        """Recorded params equal the planned ones; an inherited one may hold any value, read from an earlier
        selection of the same thing (or the new one)."""
        planned = dict(spec_params)
        if not isinstance(recorded, dict) or set(recorded) != set(planned):
            return False
        sources = dict(spec_inherit)
        for key, value in planned.items():
            if isinstance(value, Inherited) or is_inherit_marker(value):
                source = (inherited_record or {}).get(key)
                if source != sources.get(key) and self.old_to_new.get(source) != sources.get(key):
                    return False
            elif not _same(recorded[key], value):
                return False
        return True

    def run(self, spec: RunSpec, old):
        setup = self._record(old, "params.yaml")
        if setup is None:
            return "no readable params.yaml"
        if (setup.get("dataset"), setup.get("method"), setup.get("seed"), setup.get("fit_on", "train")) != (
                spec.dataset, spec.method, spec.seed, "train"):
            return "its params.yaml names another data set, method, seed or fit"
        if not self.params_match(setup.get("params"), spec.params, spec.inherit, setup.get("inherited")):
            return f"its parameters {setup.get('params')} are not the planned {dict(spec.params)}"
        return None

    def selection(self, spec: SelectionSpec, old):
        record = self._record(old, None)
        if record is None:
            return "not a readable selection file"
        if (record.get("dataset"), record.get("method"), record.get("seed"), record.get("metric")) != (
                spec.dataset, spec.method, spec.seed, spec.metric):
            return "it names another data set, method, seed or metric"
        candidates = record.get("candidates") or []
        if len(candidates) != len(spec.candidates):
            return f"it chose among {len(candidates)} candidates, the plan has {len(spec.candidates)}"
        for got, run in zip(candidates, spec.candidates):
            if not isinstance(got, dict) or not self._candidate_params(got.get("params"), run):
                return f"its candidate {got.get('params') if isinstance(got, dict) else got} is not planned"
        return None

    @staticmethod
    def _candidate_params(recorded, run):
        planned = dict(run.params)
        if not isinstance(recorded, dict) or set(recorded) != set(planned):
            return False
        return all(isinstance(v, Inherited) or _same(recorded[k], v) for k, v in planned.items())

    def final(self, spec: FinalSpec, old):
        setup = self._record(old, "params.yaml")
        if setup is None:
            return "no readable params.yaml"
        fit_on = "trainval" if spec.refit else "train"
        if (setup.get("dataset"), setup.get("method"), setup.get("seed"), setup.get("fit_on")) != (
                spec.dataset, spec.method, spec.seed, fit_on):
            return "its params.yaml names another data set, method, seed or fit"
        if not _same(setup.get("sweep") or {}, dict(spec.point)):
            return f"its sweep values {setup.get('sweep')} are not the planned {dict(spec.point)}"
        if not _same(setup.get("stages") or {}, {k: list(v) for k, v in spec.stages}):
            return "its staged sizes are not the planned ones"
        if spec.selection is None:
            if not self.params_match(setup.get("params"), spec.params, spec.inherit, setup.get("inherited")):
                return f"its parameters {setup.get('params')} are not the planned {dict(spec.params)}"
            return None
        source = setup.get("selection")
        if source != spec.selection.path and self.old_to_new.get(source) != spec.selection.path:
            return f"its parameters were chosen by {source}, not by an earlier copy of {spec.selection.path}"
        # the earlier selection file, or the new one if that was renamed before
        readable = [p for p in (source, spec.selection.path) if (self.root / str(p)).is_file()
                    and self.selection(spec.selection, p) is None]
        if not readable:
            return f"the selection it was chosen by ({source}) is gone or is not the planned one"
        record = self._record(readable[0], None)
        expected = {**(record.get("chosen") or {}), **dict(spec.point)}
        if not _same(setup.get("params"), expected):
            return f"its parameters {setup.get('params')} are not the choice of {source} ({expected})"
        return None


def _rewrite_yaml(path, update, dumper=yaml.SafeDumper):
    """Apply ``update`` to a YAML record in place."""
    data = _read_yaml(path)
    if data is None:
        return
    update(data)
    Path(path).write_text(yaml.dump(data, Dumper=dumper, sort_keys=False))


def _depths(plan):
    """Path -> how many planned outputs lie before it on its longest chain of inputs (candidates 0, their
    selection 1, the runs reading that selection 2, ...)."""
    depth = {}

    def of(path):
        if path not in depth:
            spec = plan.runs.get(path) or plan.finals.get(path) or plan.selections.get(path) or plan.grown[path]
            before = [p for _, p in getattr(spec, "inherit", ())]
            if hasattr(spec, "growth"):  # a grown selection (plan.grow) reads its plain selection
                before.append(spec.base.path)
            if isinstance(spec, SelectionSpec):
                before += [c.dir for c in spec.candidates]
            if isinstance(spec, FinalSpec) and spec.selection is not None:
                before.append(spec.selection.path)
            depth[path] = 1 + max((of(p) for p in before), default=-1)
        return depth[path]

    return of


def _stamp(path, when_ns):
    """Set the time Snakemake reads for an output: a file's, or a folder's and its ``.snakemake_timestamp``."""
    for target in (path, path / ".snakemake_timestamp"):
        if target.exists():
            os.utime(target, ns=(when_ns, when_ns))


def _new_path(mapping, value):
    return mapping.get(value, value) if isinstance(value, str) else value


def _fix_run_record(root, new, old, mapping):
    def update(setup):
        for key in ("selection",):
            setup[key] = _new_path(mapping, setup.get(key)) if setup.get(key) else setup.get(key)
        if isinstance(setup.get("inherited"), dict):
            setup["inherited"] = {k: _new_path(mapping, v) for k, v in setup["inherited"].items()}
        if isinstance(setup.get("repeat"), str):
            setup["repeat"] = setup["repeat"].replace(f"{old}/params.yaml", f"{new}/params.yaml")
        setup["renamed_from"] = old
    _rewrite_yaml(root / new / "params.yaml", update)


def _fix_selection_record(path, old, mapping):
    def update(record):
        for candidate in record.get("candidates") or []:
            if isinstance(candidate, dict):
                candidate["run"] = _new_path(mapping, candidate.get("run"))
        record["chosen_run"] = _new_path(mapping, record.get("chosen_run"))
        record["renamed_from"] = old
    _rewrite_yaml(path, update, _PlainDumper)


def _log_path(path):
    """The Snakemake log of a run folder or selection file (``log:`` of the rules in workflow/rules/train.smk)."""
    if path.startswith(RUNS_DIR + "/"):
        return f"{LOGS_DIR}/runs/{path[len(RUNS_DIR) + 1:]}.log"
    return f"{LOGS_DIR}/selection/{path[len(SELECTION_DIR) + 1:].removesuffix('.yaml')}.log"


def migrate(plan, root=".", *, dry_run=False):
    """Rename the earlier versions' folders and files of everything ``plan`` makes that does not exist yet under
    its new name (checked first: see the module docstring). Returns a :class:`Migration`."""
    root = Path(root)
    checker = _Checker(plan, root)
    kinds = [(plan.selections, checker.selection), (plan.runs, checker.run), (plan.finals, checker.final)]
    moves, out = [], Migration()
    for table, check in kinds:
        for new, spec in table.items():
            olds = [old for old in sorted(plan.legacy.get(new, ())) if old != new and (root / old).exists()]
            if not olds:
                continue
            chosen = None if (root / new).exists() else next((old for old in olds if check(spec, old) is None), None)
            if chosen:
                moves.append((chosen, new))
            for old in olds:
                if old == chosen:
                    continue
                why = check(spec, old)
                out.refused.append((old, why or f"the same run as {new}, which exists"
                                    + (" (renamed from another earlier copy)" if chosen else "")))
    if dry_run:
        out.renamed = moves
        return out
    mapping = dict(moves)
    for old, new in moves:
        (root / new).parent.mkdir(parents=True, exist_ok=True)
        os.rename(root / old, root / new)
        out.renamed.append((old, new))
        log_old, log_new = root / _log_path(old), root / _log_path(new)
        if log_old.is_file() and not log_new.exists():
            log_new.parent.mkdir(parents=True, exist_ok=True)
            os.rename(log_old, log_new)
    for old, new in moves:
        if new.startswith(SELECTION_DIR + "/"):
            _fix_selection_record(root / new, old, mapping)
        else:
            _fix_run_record(root, new, old, mapping)
    depth, start = _depths(plan), time.time_ns()
    for _, new in moves:
        _stamp(root / new, start + depth(new) * 10_000_000)  # 10 ms a step: clearly ordered on any file system
    return out
