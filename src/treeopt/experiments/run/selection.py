"""Hyper-parameter selection on the validation set, as the papers do it.

The non-greedy paper picks nu and eta "that produce the tree with minimum validation error", then trains on
train+validation and reports test error (Sec. 7); the CO2 paper picks q and (nu, eta) on a hold-out set.
Classification candidates are ranked by validation accuracy, regression by validation RMSE; ties go to the
candidate listed first in the config grid, so the choice does not depend on file-system order.
"""

import json
from pathlib import Path

import yaml

from ..._atomic import atomic_path
from ..plan.grow import axis_order_key, is_number


class _PlainDumper(yaml.SafeDumper):
    """No &anchors/*aliases: the file should read the same to people as to programs."""

    def ignore_aliases(self, data):
        return True

# metric -> True when larger is better
METRIC_DIRECTION = {"accuracy": True, "error": False, "rmse": False, "jaccard": True}


def best_index(scores, greater_is_better):
    """Index of the best score; the first one wins a tie. Missing (None/NaN) scores never win."""
    best = None
    for i, score in enumerate(scores):
        if score is None or score != score:
            continue
        if best is None or (score > scores[best] if greater_is_better else score < scores[best]):
            best = i
    if best is None:
        raise ValueError("no candidate has a validation score")
    return best


def select(candidates, metric):
    """Pick the best of ``candidates`` (dicts with ``params`` and ``val`` metric dicts) on ``metric``.

    Returns (index, greater_is_better).
    """
    if metric not in METRIC_DIRECTION:
        raise ValueError(f"unknown selection metric {metric!r}; known: {', '.join(METRIC_DIRECTION)}")
    if not candidates:
        raise ValueError("no candidates to select from")
    greater = METRIC_DIRECTION[metric]
    return best_index([c.get("val", {}).get(metric) for c in candidates], greater), greater


def candidate_record(run_dir):
    """A candidate as a selection file lists it, from its run folder's ``metrics.json``."""
    m = json.loads((Path(run_dir) / "metrics.json").read_text())
    return {"params": m["params"], "run": str(run_dir), "val": m["val"], "train": m["train"],
            "fit_seconds": m["fit_seconds"]}


def axis_values(candidates, key):
    """The sorted distinct values of ``key`` among ``candidates`` (selection records) when they are all numbers, or
    all ``p^a`` values (ordered by a), and two or more; None otherwise (no edge to speak of)."""
    values = [c["params"].get(key) for c in candidates]
    if not all(is_number(axis_order_key(v)) for v in values) or len({axis_order_key(v) for v in values}) < 2:
        return None
    return sorted(set(values), key=axis_order_key)


def edge_params(candidates, chosen):
    """The parameters whose ``chosen`` value (a params dict) is the smallest or largest among ``candidates`` on a
    numeric axis of two or more values: where validation may not have seen the best value (tables mark them)."""
    out = []
    for key in sorted(chosen):
        values = axis_values(candidates, key)
        if values is not None and chosen[key] in (values[0], values[-1]):
            out.append(key)
    return out


def write_selection(out, out_path):
    """Write a selection dict as YAML, atomically (a temporary file renamed into place)."""
    out_path = Path(out_path)
    with atomic_path(out_path, prefix=f".{out_path.name}.") as tmp:  # hidden: no glob of selection files sees it
        tmp.write_text(yaml.dump(out, Dumper=_PlainDumper, sort_keys=False))


def choose(candidates, metric, out_path, info=None):
    """The selection dict of ``candidates`` (records of :func:`candidate_record`): the chosen one's params, run and
    validation score, ``at_edge`` (:func:`edge_params`) and every candidate."""
    try:
        index, greater = select(candidates, metric)
    except ValueError as exc:
        raise ValueError(f"{out_path}: {exc} (does the split have a validation part?)") from None
    chosen = candidates[index]
    return {**dict(info or {}), "metric": metric, "greater_is_better": greater, "chosen": chosen["params"],
            "chosen_run": chosen["run"], "chosen_val": chosen["val"].get(metric),
            "at_edge": edge_params(candidates, chosen["params"]), "candidates": candidates}


def select_runs(run_dirs, metric, out_path, *, info=None):
    """Read the candidates' ``metrics.json``, choose one, write the selection YAML and return its dict."""
    out = choose([candidate_record(run_dir) for run_dir in run_dirs], metric, out_path, info)
    write_selection(out, out_path)
    return out


def read_selection(path):
    return yaml.safe_load(Path(path).read_text())


def final_params(selection, point):
    """Parameters of a final run: the chosen candidate's, with this run's sweep values put in."""
    return {**selection["chosen"], **dict(point)}
