"""The tuning rule's second step (:mod:`treeopt.experiments.plan.grow`): a grid grown one step past the edge that
validation chose, and the choice made again.

:func:`grow_selection` reads the plain selection file (the choice among the config's grid), and for each growable
axis (grid order) whose chosen value is an edge of that axis fits the planned candidate one step past it, the other
parameters at their chosen values, with the function it is given (the workflow's job passes
:func:`treeopt.experiments.run.runner.run`, the code of every candidate run, into the planned folder, named by
identity: ``python -m treeopt.experiments rerun`` repeats it like any other). A folder already holding that run (an
earlier attempt, or the same candidate of another selection) is read, not fitted again. Then the choice is made
again among all, the grown candidates listed after the grid's, so a tie keeps the grid's value (the first-listed
rule of :mod:`treeopt.experiments.run.selection`).

The file it writes is a selection file like the plain one (``chosen``, ``chosen_run``, ``candidates``, ...) and adds
what happened: ``first_choice`` (the plain selection's choice and file), ``grown`` (per axis at an edge: ``param``,
``edge`` lower/upper, ``edge_value``, ``added`` values - empty when ``min``/``max`` stop it -, the new ``run`` and
whether the final choice is ``still_at_edge``, i.e. took the added value: one step only, not chased further).
"""

from .folders import is_finished_run
from .selection import axis_values, candidate_record, choose, read_selection, write_selection


def _axis(base, growth, param):
    """What growing axis ``param`` of the plain selection ``base`` needs: None when the choice is inside the axis (or
    the axis has no edges), else ``(record, entry)``: the record of the grown file and the planned candidate one step
    past the edge (None when ``min``/``max`` stop it)."""
    chosen = base["chosen"]
    values = axis_values(base["candidates"], param)  # the grid's values, not the grown ones
    if values is None or chosen.get(param) not in (values[0], values[-1]):
        return None  # an interior choice (or an axis without edges): nothing to grow
    side = "lower" if chosen[param] == values[0] else "upper"
    record = {"param": param, "edge": side, "edge_value": chosen[param], "added": []}
    entry = next((g for g in growth if g["from"] == base["chosen_run"] and g["param"] == param), None)
    return record, entry


def _make(entry, fit, read):
    if not is_finished_run(entry["run"]):
        (read if entry.get("path_run") else fit)(entry)


def grow_axis(selection_path, growth, param, out_path, *, fit):
    """The job of one axis of a grown selection (:class:`treeopt.experiments.plan.grow.GrowAxisSpec`): fit the
    candidate one step past the chosen edge of ``param`` (the planned entry of ``growth``), if the plain selection
    ``selection_path`` chose an edge of it; write ``out_path``, a small YAML file saying what was done (``param``,
    ``fitted``: the run folder or null, ``edge``). Returns that dict."""
    base = read_selection(selection_path)
    found = _axis(base, growth, param)
    out = {"param": param, "selection": str(selection_path), "edge": None, "fitted": None}
    if found is not None:
        record, entry = found
        out["edge"] = record["edge"]
        if entry is not None:
            _make(entry, fit, None)
            out["fitted"] = entry["run"]
    write_selection(out, out_path)  # atomic: an interrupted job leaves no file
    return out


def grow_selection(selection_path, growth, out_path, *, fit, steps=None, read=None):
    """Grow the choice of the selection file ``selection_path`` and write the grown selection to ``out_path``.

    ``growth``: the planned growable candidates (dicts with ``param``, ``side``, ``edge``, ``value``, ``from``: the
    candidate's run folder, ``run``: the new run's folder, ``params``; see
    :meth:`treeopt.experiments.plan.grow.GrownSelectionSpec.job_entries`); ``steps``: ``{param: step}`` in grid
    order (the axes that may grow; default: those of ``growth``); ``fit(entry)`` makes the run folder
    ``entry["run"]``, or ``read(entry)`` when the entry names a ``path_run`` it is read off (a depth path: the same
    candidate at a larger depth, made by its own job). A run an axis job (:func:`grow_axis`) made is read. Returns
    the selection dict."""
    base = read_selection(selection_path)
    candidates = list(base["candidates"])
    chosen_run, chosen = base["chosen_run"], base["chosen"]
    params = list(steps or dict.fromkeys(g["param"] for g in growth))
    grown = []
    for param in params:
        found = _axis(base, growth, param)
        if found is None:
            continue
        record, entry = found
        if entry is not None:
            _make(entry, fit, read)
            candidate = candidate_record(entry["run"])
            candidate["grown"] = param
            candidates.append(candidate)
            record.update(added=[entry["value"]], run=entry["run"])
        else:
            record["stopped"] = "min/max of the grow step"
        grown.append(record)
    out = choose(candidates, base["metric"], out_path,
                 {k: base[k] for k in ("dataset", "method", "seed") if k in base})
    for record in grown:
        record["still_at_edge"] = bool(record["added"]) and out["chosen"].get(record["param"]) == record["added"][0]
    out = {**{k: v for k, v in out.items() if k != "candidates"},
           "first_choice": {"params": chosen, "run": chosen_run, "val": base.get("chosen_val"),
                            "selection": str(selection_path)},
           "grown": grown, "candidates": out["candidates"]}
    write_selection(out, out_path)
    return out
