"""One run: fit a method on a prepared split, measure it, write the run folder.

The folder (``params.yaml``, ``metrics.json``, ``model.npz``, ``log.txt``) is written into a hidden temporary
sibling and renamed into place at the end, so an interrupted or failed run leaves nothing that looks finished.

Parameters inherited from another method's selection (config ``inherit:``) arrive as a marker
(``from-rf-co2_forest_size``) plus the selection YAML to read; :func:`resolve_inherited` puts the chosen value
in before the estimator is built, so ``params.yaml`` and ``metrics.json`` hold the real value and
``params.yaml`` names the selection file under ``inherited``.
"""

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import yaml

from ..trees import save_trees
from . import metrics as _metrics
from .methods import get_method, make_estimator
from .params import is_inherit_marker

FIT_ON = ("train", "trainval")
METRICS_KEYS = ("dataset", "method", "params", "seed", "n_train", "n_val", "n_test", "train", "val", "test",
                "fit_seconds", "predict_seconds", "tree", "versions", "git_commit")
OPTIONAL_KEYS = ("path",)  # written when the estimator has them (TAO's per-C sparsity path)


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _load_split(path):
    from ..data import load_split  # the data layer is imported only when a run needs it

    return load_split(path)


def _plain(value):
    """YAML/JSON-safe copy (numpy scalars to Python)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def resolve_inherited(params, inherit):
    """Put inherited values into ``params``: ``inherit`` maps a parameter to the selection YAML whose
    ``chosen`` value it takes. Returns (params, {param: selection path}) for provenance.

    The parameter may hold its marker (``from-...``) or already the chosen value (a final run whose own
    selection was made from candidates that inherited it); any other value is an error, as is a marker left
    without a selection to read.
    """
    from .selection import read_selection

    params, inherited = dict(params), {}
    for param, path in sorted((inherit or {}).items()):
        chosen = (read_selection(path) or {}).get("chosen") or {}
        if param not in chosen:
            raise ValueError(f"{path}: the selection chose no {param!r} (chosen: {chosen}); cannot inherit it")
        value = chosen[param]
        if param in params and not is_inherit_marker(params[param]) and params[param] != value:
            raise ValueError(f"{param}={params[param]!r} disagrees with {value!r} chosen in {path} "
                             f"(is the selection newer than this run's inputs?)")
        params[param], inherited[param] = value, str(path)
    left = sorted(k for k, v in params.items() if is_inherit_marker(v))
    if left:
        raise ValueError(f"{', '.join(f'{k}={params[k]}' for k in left)}: inherited from another method's "
                         f"selection, but no selection file was given to read the value from (inherit=...)")
    return params, inherited


def fit_and_measure(method, params, seed, split, *, fit_on="train", n_jobs=1, log=None):
    """Fit ``method`` on the split and return (metrics dict without provenance keys, fitted estimator)."""
    log = log or logging.getLogger(__name__)
    spec = get_method(method)
    if split.task != spec.task:
        raise ValueError(f"method {method!r} solves {spec.task}, but the data set is a {split.task} task")
    if fit_on not in FIT_ON:
        raise ValueError(f"fit_on must be one of {FIT_ON}, got {fit_on!r}")
    X_fit, y_fit = split.X_train, split.y_train
    X_val, y_val = split.X_val, split.y_val
    if fit_on == "trainval":  # the papers' final refit on the union of training and validation sets
        X_fit, y_fit = np.vstack([X_fit, X_val]), np.concatenate([y_fit, y_val])
        X_val, y_val = X_val[:0], y_val[:0]
    estimator = make_estimator(method, params, seed, n_jobs=n_jobs, n_features=X_fit.shape[1])
    log.info("fitting %s on %d x %d points (%s), params %s, seed %d", method, *X_fit.shape, fit_on, params, seed)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(X_fit, y_fit)
    fit_seconds = time.perf_counter() - start
    for w in caught:
        log.warning("%s: %s", w.category.__name__, w.message)
    log.info("fit took %.3f s", fit_seconds)

    start = time.perf_counter()
    y_test_pred = estimator.predict(split.X_test) if split.X_test.shape[0] else split.y_test[:0]
    predict_seconds = time.perf_counter() - start
    result = {
        "params": dict(params), "seed": int(seed),
        "n_train": int(X_fit.shape[0]), "n_val": int(X_val.shape[0]), "n_test": int(split.X_test.shape[0]),
        "train": _metrics.task_metrics(spec.task, y_fit, estimator.predict(X_fit)),
        "val": _metrics.task_metrics(spec.task, y_val, estimator.predict(X_val) if X_val.shape[0] else y_val),
        "test": _metrics.task_metrics(spec.task, split.y_test, y_test_pred),
        "fit_seconds": fit_seconds, "predict_seconds": predict_seconds,
    }
    X_stats = split.X_test if split.X_test.shape[0] else X_fit
    result["tree"] = _metrics.tree_stats(_metrics.fitted_trees(estimator), X_stats)
    result["tree"].update(getattr(estimator, "fit_stats_", None) or {})  # e.g. TAO's time inside LIBLINEAR
    if getattr(estimator, "path_trees_", None):  # TAO's sparsity path: every C of one warm-started fit
        result["path"] = _metrics.path_metrics(estimator, split, X_fit, y_fit, X_val, y_val)
    log.info("train %s | val %s | test %s", result["train"], result["val"], result["test"])
    return result, estimator


def run(run_dir, *, dataset, method, params, seed, split_path, fit_on="train", n_jobs=1, save_model=None,
        provenance=None, inherit=None):
    """Fit, measure and write the run folder ``run_dir``; returns the metrics dict.

    ``provenance`` (e.g. the selection file a final run used) is recorded in ``params.yaml``. ``inherit``
    ({param: selection YAML}) fills in inherited parameters first (:func:`resolve_inherited`); the files are
    recorded under ``inherited``.
    """
    params, inherited = resolve_inherited(params, inherit)
    provenance = {**dict(provenance or {}), **({"inherited": inherited} if inherited else {})}
    run_dir = Path(run_dir)
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{run_dir.name}.tmp-", dir=run_dir.parent))
    logger = logging.getLogger(f"treeopt.run.{tmp.name}")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    handler = logging.FileHandler(tmp / "log.txt")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    try:
        setup = {
            "dataset": dataset, "method": method, "params": _plain(dict(params)), "seed": int(seed),
            "fit_on": fit_on, "n_jobs": int(n_jobs), "split": str(split_path), "split_sha256": _sha256(split_path),
            **_plain(provenance),
        }
        setup["repeat"] = f"python -m treeopt.experiments rerun {run_dir / 'params.yaml'} --out NEW_FOLDER"
        (tmp / "params.yaml").write_text(yaml.safe_dump(setup, sort_keys=False))
        split = _load_split(split_path)
        measured, estimator = fit_and_measure(method, params, seed, split, fit_on=fit_on, n_jobs=n_jobs, log=logger)
        result = {"dataset": dataset, "method": method, **measured, "versions": _metrics.versions(),
                  "git_commit": _metrics.git_commit()}
        result = {key: _plain(result[key]) for key in (*METRICS_KEYS, *OPTIONAL_KEYS) if key in result}
        (tmp / "metrics.json").write_text(json.dumps(result, indent=2) + "\n")
        keep = get_method(method).keeps_model if save_model is None else save_model
        trees = _metrics.fitted_trees(estimator) if keep else []
        if trees:
            save_trees(tmp / "model.npz", trees)
        logger.info("done")
        handler.close()
        if run_dir.exists():
            shutil.rmtree(run_dir)
        os.rename(tmp, run_dir)
        return result
    except BaseException:
        logger.exception("run failed")
        handler.close()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        logger.removeHandler(handler)


def rerun(params_file, out_dir):
    """Repeat the run described by a ``params.yaml`` into ``out_dir``.

    Its ``params`` hold inherited values already resolved, so no selection file is read again; the
    ``inherited`` record is carried over as provenance."""
    setup = yaml.safe_load(Path(params_file).read_text())
    provenance = {k: v for k, v in setup.items() if k not in {"dataset", "method", "params", "seed", "fit_on",
                                                             "n_jobs", "split", "split_sha256", "repeat"}}
    return run(out_dir, dataset=setup["dataset"], method=setup["method"], params=setup["params"],
               seed=setup["seed"], split_path=setup["split"], fit_on=setup["fit_on"], n_jobs=setup["n_jobs"],
               provenance=provenance)
