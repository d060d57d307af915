"""Runs read off another run instead of fitted: the same run folder :func:`treeopt.experiments.run.runner.run` would
write, from work already done.

* :func:`run_from_path`: a candidate whose parameters lie on the warm-started path of another candidate's fit (TAO's C,
  config ``path: C``; :mod:`treeopt.experiments.plan.paths`), or on the levels of a deeper level-order fit (OC1 and
  random oblique trees with ``grow_order: level``, config ``path: max_depth``), takes that fit's step at its value.
* :func:`run_from_candidate`: a final run that is not refitted (``refit: false``) and is fitted with exactly its chosen
  candidate's parameters on the same part takes that candidate's folder.

Each checks that the run it reads is the same fit (data, split, method, seed, part fitted on and every parameter but
the one a path runs along), names it in ``params.yaml`` and ``metrics.json`` (``from_path`` / ``from_candidate``),
and keeps the ``repeat`` line, so ``rerun`` of a read run fits it.
"""

import itertools
import json
import shutil
from pathlib import Path

import yaml

from ..plan.methods import get_method
from .folders import PATH_MODELS, is_finished_run, write_run_folder
from .runner import METRICS_KEYS, OPTIONAL_KEYS, _plain, _sha256, resolve_inherited

SAME_FIT = ("dataset", "method", "seed", "fit_on", "split_sha256")


def _setup(run_dir, *, dataset, method, params, seed, split_path, n_jobs, provenance, inherit, source_key, source,
           fit_on="train"):
    params, inherited = resolve_inherited(params, inherit)
    provenance = {**dict(provenance or {}), **({"inherited": inherited} if inherited else {})}
    setup = {"dataset": dataset, "method": method, "params": _plain(dict(params)), "seed": int(seed),
             "fit_on": fit_on, "n_jobs": int(n_jobs), "split": str(split_path), "split_sha256": _sha256(split_path),
             **_plain(provenance), source_key: str(source)}
    setup["repeat"] = f"python -m treeopt.experiments rerun {Path(run_dir) / 'params.yaml'} --out NEW_FOLDER"
    return setup


def _read_source(source, setup, free=()):
    """``(params.yaml, metrics.json)`` of the run folder ``source`` after checking it is this run's fit (``free``:
    parameters allowed to differ)."""
    other = yaml.safe_load((Path(source) / "params.yaml").read_text())
    metrics = json.loads((Path(source) / "metrics.json").read_text())
    for key in SAME_FIT:
        if other.get(key) != setup[key]:
            raise ValueError(f"{source}: its {key} is {other.get(key)!r}, this run's {setup[key]!r}; a run is read "
                             f"only off the same fit")
    mine = {k: v for k, v in setup["params"].items() if k not in free}
    theirs = {k: v for k, v in other["params"].items() if k not in free}
    if mine != theirs:
        differ = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
        raise ValueError(f"{source}: its parameters differ from this run's in {differ}"
                         + (f", not only in {', '.join(free)}" if free else ""))
    return other, metrics


def _write(run_dir, setup, fill):
    """Write the run folder ``run_dir``: ``setup`` as its params.yaml, then ``fill(tmp, logger) -> metrics``
    (:func:`treeopt.experiments.run.folders.write_run_folder`)."""

    def write(tmp, logger):
        (tmp / "params.yaml").write_text(yaml.safe_dump(setup, sort_keys=False))
        result = fill(tmp, logger)
        result = {key: _plain(result[key]) for key in (*METRICS_KEYS, *OPTIONAL_KEYS) if key in result}
        (tmp / "metrics.json").write_text(json.dumps(result, indent=2) + "\n")
        logger.info("train %s | val %s | test %s", result["train"], result["val"], result["test"])
        return result

    return write_run_folder(run_dir, write)


def _path_step(metrics, path_run, path_param, value):
    """(the ``path_runs`` entry of a path run's ``metrics`` at ``path_param = value``, the entries before it)."""
    steps = metrics.get("path_runs")
    if steps is None:
        raise ValueError(f"{path_run}: its metrics.json records no path_runs (a run made before they were recorded, "
                         f"or a fit without a warm-start path); run it again")
    for index, step in enumerate(steps):
        if float(step[path_param]) == float(value):
            return step, steps[:index]
    raise ValueError(f"{path_param}={value!r} is not a step of {path_run}'s path "
                     f"({', '.join(repr(s[path_param]) for s in steps)}, then {metrics['params'][path_param]!r})")


def run_from_path(run_dir, *, path_run, dataset, method, params, seed, split_path, n_jobs=1,
                  save_model=None, provenance=None, inherit=None, fit_on="train"):
    """Write the run folder of the fit with ``params`` from ``path_run``, a run of the same fit with a lower value of
    the method's path parameter (``Method.path``: TAO's C) whose warm-started path passed through this one (Sec. 4):
    its ``path_runs`` entry at this value holds what this fit records (the same tree:
    ``TAOTreeClassifier.path_step``), so nothing is fitted. ``metrics.json`` names the path run under ``from_path``."""
    spec = get_method(method)
    if not spec.path:
        raise ValueError(f"method {method!r} has no warm-started path to read a run off")
    (path_param, _), = spec.path.items()
    setup = _setup(run_dir, dataset=dataset, method=method, params=params, seed=seed, split_path=split_path,
                   n_jobs=n_jobs, provenance=provenance, inherit=inherit, source_key="from_path", source=path_run,
                   fit_on=fit_on)

    def fill(tmp, logger):
        _, metrics = _read_source(path_run, setup, free=(path_param,))
        step, before = _path_step(metrics, path_run, path_param, setup["params"][path_param])
        logger.info("%s=%s read off the warm-started path of %s (its step %d), not fitted again", path_param,
                    setup["params"][path_param], path_run, step["step"])
        keeps_model = spec.keeps_model if save_model is None else save_model
        if keeps_model and spec.path[path_param] is None:
            # a depth path: the tree is the path run's, limited to this depth (level order numbers it first)
            from ...greedy import level_order_prefix
            from ...trees import load_trees, save_trees

            source = Path(path_run) / "model.npz"
            if not source.is_file():
                raise ValueError(f"{source}: missing; the path run kept no model")
            tree, = load_trees(source)
            save_trees(tmp / "model.npz", [level_order_prefix(tree, setup["params"][path_param])])
        elif keeps_model:
            from ...trees import iter_trees, save_trees

            source = Path(path_run) / PATH_MODELS
            if not source.is_file():
                raise ValueError(f"{source}: missing; the path run kept no models of its steps")
            tree = next(itertools.islice(iter_trees(source), step["step"], None), None)
            if tree is None:
                raise ValueError(f"{source}: holds no tree of step {step['step']}")
            save_trees(tmp / "model.npz", [tree])
        return {**{k: metrics[k] for k in ("dataset", "method", "seed", "n_train", "n_val", "n_test",
                                           "compile_seconds", "fit_compile_seconds", "versions", "git_commit")},
                "params": setup["params"],
                **{k: step[k] for k in ("train", "val", "test", "tree", "fit_seconds", "predict_seconds", "path")
                   if k in step},
                **({"path_runs": before} if before else {}),  # as this value's own fit records its earlier steps
                "from_path": {"run": str(path_run), "step": step["step"]}}

    return _write(run_dir, setup, fill)


def run_from_depth_path(run_dir, *, deepest, dataset, method, params, seed, split_path, fit_on, fit, n_jobs=1,
                        save_model=None, provenance=None, inherit=None):
    """Write the run folder of a final run at a smaller depth of a depth path (config ``path: max_depth``; a tree
    grown level by level contains the fit at every smaller depth, ``depth_step``) from a fit with its parameters at
    the path's largest depth: ``deepest``, the final run there, when its parameters are these (one depth aside), else
    a sibling folder ``depth-path-{hash}`` beside it, fitted first by ``fit(folder, params)`` unless an earlier
    final run of the path made it (the workflow makes a path's final runs deepest first: each deeper fit is made
    once). ``rerun`` of the written folder fits it at its own depth."""
    spec = get_method(method)
    (path_param, _), = spec.path.items()
    if path_param != "max_depth":
        raise ValueError(f"method {method!r} has no depth path")
    other = yaml.safe_load((Path(deepest) / "params.yaml").read_text())
    resolved, _ = resolve_inherited(params, inherit)
    deep_params = {**_plain(dict(resolved)), path_param: other["params"][path_param]}
    source = Path(deepest)
    if other["params"] != deep_params or other.get("fit_on") != fit_on:
        from ..plan.identity import identity_hash

        key = identity_hash({"method": method, "params": deep_params, "fit_on": fit_on, "seed": int(seed),
                             "split_sha256": _sha256(split_path), "save_model": save_model})
        source = source.parent.parent / f"depth-path-{key}" / source.name
        if not is_finished_run(source):
            fit(source, deep_params)
    return run_from_path(run_dir, path_run=str(source), dataset=dataset, method=method, params=params, seed=seed,
                         split_path=split_path, n_jobs=n_jobs, save_model=save_model, provenance=provenance,
                         inherit=inherit, fit_on=fit_on)


# what a candidate's folder holds besides params.yaml, metrics.json and log.txt, copied as they are
COPIED_FILES = ("model.npz", "segmentation.npz", PATH_MODELS)


def run_from_candidate(run_dir, *, candidate, dataset, method, params, seed, split_path, n_jobs=1,
                       provenance=None, inherit=None):
    """Write the run folder of a final run that is not refitted (``refit: false``: fitted on the training part) and
    whose parameters are its chosen candidate's, from that candidate's folder: the same fit (a deterministic
    learner fits it again bit for bit; a threaded one's table row is then the candidate validation chose).
    ``metrics.json`` names the candidate under ``from_candidate``."""
    setup = _setup(run_dir, dataset=dataset, method=method, params=params, seed=seed, split_path=split_path,
                   n_jobs=n_jobs, provenance=provenance, inherit=inherit, source_key="from_candidate",
                   source=candidate)

    def fill(tmp, logger):
        _, metrics = _read_source(candidate, setup)
        logger.info("the chosen candidate %s is this run's fit (refit: false): read, not fitted again", candidate)
        for name in COPIED_FILES:
            if (Path(candidate) / name).is_file():
                shutil.copyfile(Path(candidate) / name, tmp / name)
        return {**metrics, "from_candidate": str(candidate)}

    return _write(run_dir, setup, fill)
