"""Report tables: final runs in, long-format CSV out (one row per data set, method and setting). This module reads
the runs, aggregates over seeds and writes the CSV; the tables themselves are built in ``tables_co2``,
``tables_nongreedy``, ``tables_rgf``, ``tables_tao`` and ``tables_beyond`` (one per paper, and the tables beyond
the papers), registered in :mod:`treeopt.experiments.plan.reports`.

Every table is the mean over seeds with ``n_seeds`` and, for each value column, ``{column}_std`` (sample
standard deviation; empty with one seed). Settings come from what was run, not from the method's name, so a
new learner's runs are simply more rows: ``depth`` is the ``max_depth`` limit, ``n_trees`` the number of
trees actually fitted, ``n_leaves`` the total number of leaves in the model.

A staged run (one fit scored at several sizes, :mod:`treeopt.experiments.run.staged`) gives one row per size, as if
each size had been its own run: its metrics, ``n_trees`` and ``n_leaves`` are the stage's; the fit and
predict timings belong to the whole fit and stay only on the row of the fitted size.
"""

import json
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

KEYS = ("dataset", "method")


def _flatten(metrics, parts_only=False):
    row = {} if parts_only else {key: metrics[key] for key in ("dataset", "method", "seed", "n_train", "n_val",
                                                                 "n_test", "fit_seconds", "predict_seconds")}
    if not parts_only and "fit_cpu_seconds" in metrics:  # recorded since the RGF Fig. 15 timing runs
        row["fit_cpu_seconds"] = metrics["fit_cpu_seconds"]
    for part in ("train", "val", "test"):
        for name, value in (metrics.get(part) or {}).items():
            row[f"{part}_{name}"] = value
    if parts_only:
        return row
    for name, value in (metrics.get("tree") or {}).items():
        row[f"tree_{name}"] = value
    return row


def _stage_rows(row, metrics):
    """The rows of a staged run: one per scored size (``metrics["stages"]``)."""
    rows = []
    for stage in metrics["stages"]:
        (param, value), = ((k, v) for k, v in stage.items() if k not in ("stage_value", "train", "val", "test",
                                                                           "tree"))
        staged = {k: v for k, v in row.items() if not k.startswith(("train_", "val_", "test_"))}
        staged.update(_flatten({**metrics, **{part: stage.get(part) or {} for part in ("train", "val", "test")}},
                               parts_only=True))
        for name, tree_value in (stage.get("tree") or {}).items():
            staged[f"tree_{name}"] = tree_value
        if "n_leaves_total" in (stage.get("tree") or {}) and stage["tree"].get("n_trees"):
            staged["tree_n_leaves"] = stage["tree"]["n_leaves_total"] / stage["tree"]["n_trees"]
        if stage.get("stage_value") != metrics["params"].get(param):
            staged["fit_seconds"] = staged["predict_seconds"] = np.nan  # timings are the whole fit's
            if "fit_cpu_seconds" in staged:
                staged["fit_cpu_seconds"] = np.nan
        staged["params"] = {**row["params"], param: value}
        staged["sweep"] = {**row["sweep"], param: value}
        rows.append(staged)
    return rows


@lru_cache(maxsize=4096)
def _selection(selection_path):
    return yaml.safe_load(Path(selection_path).read_text()) or {}


def _varied_keys(selection_path):
    """The parameters a selection file's candidates do not all share (what validation chose among)."""
    candidates = [c.get("params") or {} for c in _selection(selection_path).get("candidates") or []]
    keys = {key for c in candidates for key in c}
    return tuple(sorted(k for k in keys if len({repr(c.get(k)) for c in candidates}) > 1))


def _selection_file(setup, run_dir):
    """The selection file a final run's ``params.yaml`` names, looked for beside the run's ``runs`` folder
    (``results/selection/...`` for ``results/runs/...``, ``results/paper/selection/...`` for the records under
    ``results/paper/runs``); None when it names none or the file is not there."""
    source = setup.get("selection")
    if not source:
        return None
    run_dir, parts = Path(run_dir), Path(source).parts
    path = Path(source)
    if "selection" in parts and len(run_dir.parents) > 4:  # <base>/runs/{dataset}/{method}/{name}/seed{s}
        path = run_dir.parents[4].joinpath(*parts[parts.index("selection"):])
    return str(path) if path.is_file() else None


def tuned_params(setup, run_dir, params):
    """``{parameter: value}`` of what validation chose for a final run: the parameters its selection's candidates
    vary and the ones it inherits from another selection (``params.yaml``'s ``selection`` and ``inherited``); a run
    without a selection, or whose file is not there (:func:`_selection_file`), has none."""
    keys = set((setup.get("inherited") or {}))
    path = _selection_file(setup, run_dir)
    if path:
        keys.update(_varied_keys(path))
    return {key: params[key] for key in sorted(keys) if key in params}


def tuned_marks(setup, run_dir):
    """``{parameter: mark}`` of a final run's own choice, as its selection file records it (issue #38): ``grown``
    when the value came from a grid grown past the edge first chosen (:mod:`treeopt.experiments.run.grow`), ``edge``
    when the value is still the smallest or largest tried (``at_edge``), ``grown,edge`` both. Files of earlier
    versions record neither: no marks."""
    path = _selection_file(setup, run_dir)
    if not path:
        return {}
    selection = _selection(path)
    chosen = selection.get("chosen") or {}
    marks = {g["param"]: ["grown"] for g in selection.get("grown") or []
             if g.get("added") and chosen.get(g["param"]) == g["added"][0]}
    for key in selection.get("at_edge") or []:
        marks.setdefault(key, []).append("edge")
    return {key: ",".join(mark) for key, mark in marks.items()}


def chosen_text(tuned_by_seed, marks_by_seed=None):
    """One cell for the chosen hyper-parameters of a table row: ``key=value`` joined by ``; ``, a value that differs
    between seeds written per seed in seed order (``nu=1|4|1``); a value from a grown grid or still at a grid edge
    marked ``[grown]``, ``[edge]`` or ``[grown,edge]`` (:func:`tuned_marks`; ``nu=0.03[grown]|0.1[edge]``); empty
    when nothing was chosen."""
    marks_by_seed = marks_by_seed or [{} for _ in tuned_by_seed]
    keys = sorted({key for tuned in tuned_by_seed for key in tuned})
    cells = []
    for key in keys:
        values = [tuned.get(key) for tuned in tuned_by_seed]
        shown = [(f"{v:g}" if isinstance(v, float) else str(v)) + (f"[{marks[key]}]" if key in marks else "")
                 for v, marks in zip(values, marks_by_seed)]
        cells.append(f"{key}={shown[0] if len(set(shown)) == 1 else '|'.join(shown)}")
    return "; ".join(cells)


def chosen_cell(group):
    """:func:`chosen_text` of a group of runs (columns ``seed``, ``tuned``, ``tuned_marks``), in seed order."""
    ordered = sorted(zip(group["seed"], group["tuned"], group["tuned_marks"]), key=lambda stm: stm[0])
    return chosen_text([t for _, t, _ in ordered], [m for _, _, m in ordered])


def load_runs(run_dirs):
    """One row per run folder (per scored size of a staged run): its metrics flattened (``test_error``,
    ``tree_n_leaves``, ...), ``params`` (dict), the experiment recorded in ``params.yaml`` and ``tuned`` (what
    validation chose, :func:`tuned_params`)."""
    rows = []
    for run_dir in run_dirs:
        run_dir = Path(run_dir)
        metrics = json.loads((run_dir / "metrics.json").read_text())
        setup = yaml.safe_load((run_dir / "params.yaml").read_text())
        row = _flatten(metrics)
        row["params"] = metrics["params"]
        row["tuned"] = tuned_params(setup, run_dir, metrics["params"])
        row["tuned_marks"] = tuned_marks(setup, run_dir)
        row["experiment"] = setup.get("experiment")
        row["sweep"] = setup.get("sweep") or {}
        row["run"] = str(run_dir)
        rows.extend(_stage_rows(row, metrics) if metrics.get("stages") else [row])
    return pd.DataFrame(rows)


def param_column(runs, *names):
    """The first of ``names`` present in each run's params (e.g. max_depth), as a column."""
    def pick(params):
        for name in names:
            if params.get(name) is not None:
                return params[name]
        return np.nan
    return runs["params"].map(pick)


def aggregate(runs, setting, values, keys=KEYS):
    """Mean over seeds of ``values`` per (*keys, setting), with ``_std`` columns, n_seeds and ``chosen_params``
    (the hyper-parameters validation chose for the row's runs, per seed where they differ: :func:`chosen_text`;
    empty for runs that chose nothing)."""
    keys = list(keys)
    if runs.empty:
        return pd.DataFrame(columns=[*keys, setting, *values, "n_seeds", "chosen_params"])
    missing = [v for v in values if v not in runs]
    if missing:
        raise ValueError(f"runs lack {', '.join(missing)} (wrong task for this table?)")
    if "tuned" in runs and "tuned_marks" not in runs:  # rows made without load_runs
        runs = runs.assign(tuned_marks=[{} for _ in range(len(runs))])
    # dropna=False keeps rows whose key is empty, e.g. the baseline's ``nu`` in co2_fig1
    grouped = runs.groupby([*keys, setting], sort=True, dropna=False)
    table = grouped[list(values)].mean()
    std = grouped[list(values)].std(ddof=1).add_suffix("_std")
    table = table.join(std)
    table["n_seeds"] = grouped["seed"].nunique()
    if "tuned" in runs:
        table["chosen_params"] = grouped[["seed", "tuned", "tuned_marks"]].apply(chosen_cell)
    else:
        table["chosen_params"] = ""
    table = table.reset_index()
    return table[[*keys, setting, *values, *std.columns, "n_seeds", "chosen_params"]]


def merge_rows(kept, new):
    """``new`` rows in place of ``kept``'s rows of the same (data set, method) pairs (of the same data sets, for a
    table without a method column); ``kept``'s other rows stay. For a table made of partial runs gathered from
    several places (``report --merge``). Rows are ordered by data set and method, each pair's rows in the order of
    the table they come from."""
    keys = [k for k in ("dataset", "method") if k in new.columns]
    if not keys or not set(keys) <= set(kept.columns):
        raise ValueError(f"cannot merge: the tables need {' and '.join(keys) or 'a dataset column'} to match rows")
    replaced = set(map(tuple, new[keys].astype(str).values))
    stays = [tuple(row) not in replaced for row in kept[keys].astype(str).values]
    merged = pd.concat([kept[stays], new], ignore_index=True)
    return merged.sort_values(keys, kind="stable", key=lambda column: column.astype(str), ignore_index=True)


def write_table(table, path):
    """Write a table CSV atomically (temporary file, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    table.to_csv(tmp, index=False, float_format="%.6g")
    tmp.replace(path)
