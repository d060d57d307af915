"""One run: fit a method on a prepared split, measure it, write the run folder.

The folder (``params.yaml``, ``metrics.json``, ``model.npz``, ``log.txt``) is written into a hidden temporary
sibling and renamed into place at the end, so an interrupted or failed run leaves nothing that looks finished.
The temporary is named ``.{name}.tmp-p{pid}-{random}`` and holds a marker file naming the process that made it,
so :func:`clean_stale_temporaries` can remove the ones a killed process left (``kill -9``) and nothing else.
An existing folder at the run's place is replaced only when it is a run folder itself (:func:`is_run_folder`):
nothing the program did not write is ever deleted.

Parameters inherited from another method's selection (config ``inherit:``) arrive as a marker
(``from-rf-co2_forest_size``) plus the selection YAML to read; :func:`resolve_inherited` puts the chosen value
in before the estimator is built, so ``params.yaml`` and ``metrics.json`` hold the real value and
``params.yaml`` names the selection file under ``inherited``.
"""

import hashlib
import json
import logging
import os
import re
import shutil
import socket
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import yaml

from ...base import encode_classes
from ...trees import save_trees
from . import metrics as _metrics
from ..infra.joblog import slurm_job
from ..plan.methods import get_method, make_estimator
from ..plan.params import is_inherit_marker, split_dotted
from .staged import pick_stages, stage_entries, staged_scores
from .streamed import fit_streamed, streams
from ..infra.precompile import warm_up_listed as warm_up
from .segment_runs import fit_and_measure_segmentation
from ..infra.warmup import numba_compile_clock

FIT_ON = ("train", "trainval")
RUN_FILES = frozenset({"params.yaml", "metrics.json", "model.npz", "log.txt", "segmentation.npz"})
SNAKEMAKE_MARK = ".snakemake_timestamp"  # Snakemake's own file in a directory output (its time is the output's)
TMP_MARKER = ".treeopt-run-tmp"
_TMP_NAME = re.compile(r"^\.(?P<run>.+)\.tmp-p(?P<pid>\d+)-[A-Za-z0-9_]+$")
# temporaries of earlier versions (no pid, no marker): ``.seed0.tmp-abc123xy``
_LEGACY_TMP_NAME = re.compile(r"^\.seed\d+\.tmp-[A-Za-z0-9_]{8}$")
_LEGACY_MIN_AGE = 24 * 3600.0


class RunFolderError(ValueError):
    """A run's output folder exists and is not a run folder (or replacing it was not allowed)."""


def is_run_folder(path):
    """True when ``path`` is a folder a run wrote: a ``params.yaml`` naming dataset, method, params and seed,
    and nothing but run files (``params.yaml``, ``metrics.json``, ``model.npz``, ``log.txt``; no sub-folders)."""
    path = Path(path)
    if path.is_symlink() or not path.is_dir():
        return False
    names = {p.name for p in path.iterdir()} - {SNAKEMAKE_MARK}
    if "params.yaml" not in names or not names <= RUN_FILES:
        return False
    if any((path / n).is_dir() or (path / n).is_symlink() for n in names):
        return False
    try:
        setup = yaml.safe_load((path / "params.yaml").read_text())
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return False
    return isinstance(setup, dict) and {"dataset", "method", "params", "seed"} <= set(setup)


def check_output_folder(out_dir, *, force=False):
    """Refuse an output folder that is not empty unless ``force``, and even then unless it is a run folder.

    Raises :class:`RunFolderError` naming the folder and why; an absent or empty folder is fine.
    """
    out = Path(out_dir)
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise RunFolderError(f"{out_dir}: exists and is not a folder; choose a new folder for the run")
    if not out.exists() or not any(out.iterdir()):
        return
    if not is_run_folder(out):
        raise RunFolderError(f"{out_dir}: folder exists, is not empty and is not a run folder (a run folder "
                             f"holds only {', '.join(sorted(RUN_FILES))}); it is left alone: choose a new folder")
    if not force:
        raise RunFolderError(f"{out_dir}: holds a run already; pass --force to replace it, or choose a new folder")


def _process_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def _stale_reason(path, now):
    """Why ``path`` is a temporary run folder left by a dead process (None: not ours, or still in use)."""
    if path.is_symlink() or not path.is_dir():
        return None
    match = _TMP_NAME.match(path.name)
    if match:
        try:
            marker = json.loads((path / TMP_MARKER).read_text())
        except (OSError, ValueError, UnicodeDecodeError):
            return None  # no marker: not ours (or being renamed right now)
        if not isinstance(marker, dict) or marker.get("pid") != int(match["pid"]):
            return None
        if marker.get("host") != socket.gethostname() or _process_alive(int(match["pid"])):
            return None
        return f"process {match['pid']} that wrote it is gone"
    if _LEGACY_TMP_NAME.match(path.name):  # an earlier version's temporary: only run files, old
        entries = list(path.iterdir())
        ok = all(p.is_file() and not p.is_symlink() and (p.name in RUN_FILES or p.name.startswith("model.npz"))
                 for p in entries)
        newest = max([p.stat().st_mtime for p in entries] + [path.stat().st_mtime])
        if ok and now - newest > _LEGACY_MIN_AGE:
            return "left by an earlier version, untouched for a day"
    return None


def clean_stale_temporaries(runs_dir, log=None):
    """Remove the hidden temporary run folders that killed runs left under ``runs_dir``; return their paths.

    Only folders this module made are touched: named ``.{run}.tmp-p{pid}-...`` with the marker file naming
    that pid on this host, and that process no longer running (temporaries of runs still going are kept).
    """
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        return []
    removed, now = [], time.time()
    for dirpath, dirnames, _ in os.walk(runs_dir):
        for name in list(dirnames):
            if ".tmp-" not in name:
                continue
            path = Path(dirpath) / name
            reason = _stale_reason(path, now)
            if reason:
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
                if log:
                    log(f"removed stale temporary {path} ({reason})")
            dirnames.remove(name)  # never descend into temporaries
    return removed


def _make_temporary(run_dir):
    """The hidden temporary sibling of ``run_dir``, with normal permissions (umask) and the marker file."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{run_dir.name}.tmp-p{os.getpid()}-", dir=run_dir.parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it 0700; a run folder is an ordinary folder
    (tmp / TMP_MARKER).write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname()}))
    return tmp


def _move_into_place(tmp, run_dir):
    """Rename ``tmp`` to ``run_dir``; an existing run folder there is moved aside first and removed after."""
    (tmp / TMP_MARKER).unlink()
    if not run_dir.exists():
        os.rename(tmp, run_dir)
        return
    if run_dir.is_dir() and not any(run_dir.iterdir()):
        os.rmdir(run_dir)
        os.rename(tmp, run_dir)
        return
    if not is_run_folder(run_dir):  # checked again: never delete what a run did not write
        raise RunFolderError(f"{run_dir}: exists and is not a run folder; left alone (the new run is not saved)")
    old = Path(tempfile.mkdtemp(prefix=f".{run_dir.name}.old-", dir=run_dir.parent))
    os.rename(run_dir, old / run_dir.name)
    os.rename(tmp, run_dir)
    shutil.rmtree(old)
# compile_seconds: numba kernels compiled or loaded before the timed fit (warmup.py; 0.0 for learners without
# kernels); fit_compile_seconds: what numba still spent on them inside the timed fit (0 expected)
METRICS_KEYS = ("dataset", "method", "params", "seed", "n_train", "n_val", "n_test", "train", "val", "test",
                "fit_seconds", "predict_seconds", "compile_seconds", "fit_compile_seconds", "tree", "versions",
                "git_commit")
OPTIONAL_KEYS = ("staged", "stages", "path", "per_depth")  # segmentation Jaccard per forest size; staged sweeps;
# TAO's C path; non-greedy per-depth diagnostics


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _load_split(path):
    from ...data import load_split  # the data layer is imported only when a run needs it

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
        source = split_dotted(param)[1]  # "init_params.nu" takes the chosen "nu"
        if source not in chosen:
            raise ValueError(f"{path}: the selection chose no {source!r} (chosen: {chosen}); cannot inherit it")
        value = chosen[source]
        if param in params and not is_inherit_marker(params[param]) and params[param] != value:
            raise ValueError(f"{param}={params[param]!r} disagrees with {value!r} chosen in {path} "
                             f"(is the selection newer than this run's inputs?)")
        params[param], inherited[param] = value, str(path)
    left = sorted(k for k, v in params.items() if is_inherit_marker(v))
    if left:
        raise ValueError(f"{', '.join(f'{k}={params[k]}' for k in left)}: inherited from another method's "
                         f"selection, but no selection file was given to read the value from (inherit=...)")
    return params, inherited


def fit_parts(split, fit_on):
    """``(X_fit, y_fit, parts, X_stats)`` of a run: the rows fitted on, ``parts`` {"train" / "val" / "test": (X, y)}
    scored (a refit fits train+validation and has no validation part), and the rows tree statistics are taken on."""
    X_fit, y_fit = split.X_train, split.y_train
    X_val, y_val = split.X_val, split.y_val
    if fit_on == "trainval":  # the papers' final refit on the union of training and validation sets
        X_fit, y_fit = _stacked(X_fit, X_val), np.concatenate([y_fit, y_val])
        X_val, y_val = X_val[:0], y_val[:0]
    parts = {"train": (X_fit, y_fit), "val": (X_val, y_val), "test": (split.X_test, split.y_test)}
    X_stats = split.X_test if split.X_test.shape[0] else X_fit
    return X_fit, y_fit, parts, X_stats


def fit_and_measure(method, params, seed, split, *, fit_on="train", n_jobs=1, log=None, stages=(), model_path=None,
                    block_trees=None, blocks=None, block_check=None):
    """Fit ``method`` on the split and return (metrics dict without provenance keys, fitted estimator).

    ``stages`` ((param, values) pairs, at most one) also scores the fitted model at each of those sizes
    (:func:`treeopt.experiments.run.staged.staged_scores`), recorded under ``stages`` in the metrics. A treeopt
    bagged forest is scored tree by tree and keeps no tree (:mod:`treeopt.experiments.run.streamed`: memory does not
    grow with the number of trees; the returned estimator then has no ``estimators_``); with ``model_path`` its
    trees are written there one by one. Other models are written there after fitting.

    ``block_trees``: a bagged forest's tree probabilities are summed in blocks of that many trees (as block jobs
    are merged; :mod:`treeopt.experiments.run.blocks`). ``blocks``: the folders of those block jobs, merged instead of
    fitting (``block_check``: what each must share with this run, :data:`treeopt.experiments.run.blocks.SAME_RUN_KEYS`).
    """
    log = log or logging.getLogger(__name__)
    spec = get_method(method)
    if split.task != spec.task:
        raise ValueError(f"method {method!r} solves {spec.task}, but the data set is a {split.task} task")
    if fit_on not in FIT_ON:
        raise ValueError(f"fit_on must be one of {FIT_ON}, got {fit_on!r}")
    if len(stages) > 1:
        raise ValueError(f"one staged parameter per run, got {[param for param, _ in stages]}")
    if spec.task == "segmentation":
        result, estimator = fit_and_measure_segmentation(method, params, seed, split, fit_on=fit_on, n_jobs=n_jobs,
                                                         log=log, block_trees=block_trees, blocks=blocks,
                                                         block_check=block_check, model_path=model_path)
        return result, estimator
    X_fit, y_fit, parts, X_stats = fit_parts(split, fit_on)
    X_val, y_val = parts["val"]
    estimator = make_estimator(method, params, seed, n_jobs=n_jobs, n_features=X_fit.shape[1])
    streamed = streams(estimator, spec.task)
    if (block_trees is not None or blocks) and not streamed:
        raise ValueError(f"method {method!r} cannot be summed or split in tree blocks (block_trees, blocks): only "
                         f"treeopt's bagged forests (CO2 Forest, OC1 Forest) are fitted tree by tree")
    # a merge fits nothing; any other fit first compiles (or loads) its numba kernels outside the timed fit
    compile_seconds = 0.0 if blocks else warm_up(estimator, X_fit, y_fit, task=spec.task, name=method, log=log)
    if blocks:
        log.info("merging %d tree blocks of %s (%d trees, blocks of %d)", len(blocks), method,
                 estimator.n_estimators, block_trees)
    else:
        log.info("fitting %s on %d x %d points (%s), params %s, seed %d", method, *X_fit.shape, fit_on, params,
                 seed)
    result = {
        "params": dict(params), "seed": int(seed),
        "n_train": int(X_fit.shape[0]), "n_val": int(X_val.shape[0]), "n_test": int(split.X_test.shape[0]),
    }
    with warnings.catch_warnings(record=True) as caught, numba_compile_clock() as compiling:
        warnings.simplefilter("always")
        if streamed:
            sizes = _streamed_stage_indices(estimator, {v for _, values in stages for v in values})
            if blocks:
                from .block_sums import merge_blocks

                classes = encode_classes(y_fit)[0]  # as the forest sets its classes_
                rows = {part: X.shape[0] for part, (X, _) in parts.items() if X.shape[0]}
                fitted = merge_blocks(blocks, {**dict(block_check or {}), "n_estimators": int(estimator.n_estimators),
                                               "block_trees": block_trees}, classes, rows, sizes, model_path, log)
            else:
                fitted = fit_streamed(estimator, X_fit, y_fit, {part: X for part, (X, _) in parts.items()}, X_stats,
                                      stage_sizes=sizes, model_path=model_path, block_trees=block_trees)
        else:
            start = time.perf_counter()
            estimator.fit(X_fit, y_fit)
            fitted = {"fit_seconds": time.perf_counter() - start}
    for w in caught:
        log.warning("%s: %s", w.category.__name__, w.message)
    log.info("fit took %.3f s", fitted["fit_seconds"])

    if "labels" in fitted:  # scored tree by tree
        labels = fitted["labels"]
        predict_seconds = fitted["predict_seconds"]
        result["tree"] = _metrics.combine_tree_stats(fitted["tree_stats"], fitted["leaves"])
        result["tree"].update(_metrics.split_counts_from(fitted["oblique"], fitted["fallbacks"]))
        trees = [fitted["first_tree"]] if fitted["first_tree"] is not None else []
    else:
        start = time.perf_counter()
        labels = {"test": estimator.predict(split.X_test) if split.X_test.shape[0] else split.y_test[:0]}
        predict_seconds = time.perf_counter() - start
        labels["train"] = estimator.predict(X_fit)
        if X_val.shape[0]:
            labels["val"] = estimator.predict(X_val)
        trees = _metrics.fitted_trees(estimator)
        result["tree"] = _metrics.tree_stats(trees, X_stats)
        result["tree"].update(_metrics.split_counts(estimator, trees))
        if model_path is not None and trees:
            save_trees(model_path, trees)
    for part, (_, y) in parts.items():
        result[part] = _metrics.task_metrics(spec.task, y, labels[part] if part in labels else y)
    result.update(fit_seconds=fitted["fit_seconds"], predict_seconds=predict_seconds,
                  compile_seconds=compile_seconds, fit_compile_seconds=compiling.lock)
    if len(trees) == 1:
        # leaves the fitting data reach (non-greedy Fig. 3: a small nu prunes leaves in training)
        result["tree"]["active_leaves_train"] = int(np.unique(trees[0].apply(X_fit)).size)
    result["tree"].update(getattr(estimator, "fit_stats_", None) or {})  # e.g. TAO's time inside LIBLINEAR
    if getattr(estimator, "depth_stats_", None):  # non-greedy: per depth, where the gradients went (a stalled level)
        result["per_depth"] = estimator.depth_stats_
    if getattr(estimator, "path_trees_", None):  # TAO's sparsity path: every C of one warm-started fit
        result["path"] = _metrics.path_metrics(estimator, split, X_fit, y_fit, X_val, y_val)
    log.info("train %s | val %s | test %s", result["train"], result["val"], result["test"])
    for param, values in stages:
        if "labels" in fitted:
            result["stages"] = _streamed_stages(spec.task, param, values, parts, fitted)
        else:
            result["stages"] = staged_scores(estimator, spec.task, param, values, parts, trees=trees)
        for stage in result["stages"]:
            log.info("stage %s=%s (scored at %s): train %s | val %s | test %s", param, stage[param],
                     stage["stage_value"], stage["train"], stage["val"], stage["test"])
    return result, estimator


def _stacked(top, bottom):
    """``np.vstack([top, bottom])``, without a copy when ``bottom``'s rows follow ``top``'s in one array (a split
    loaded by :func:`treeopt.data.load_split` keeps training and validation rows so)."""
    base = top.base
    start = lambda a: a.__array_interface__["data"][0]  # noqa: E731 (address of an array's first element)
    if (isinstance(base, np.ndarray) and base is bottom.base and base.ndim == 2 and base.flags.c_contiguous
            and top.flags.c_contiguous and bottom.flags.c_contiguous and top.shape[1:] == base.shape[1:]
            and base.shape[0] == top.shape[0] + bottom.shape[0] and start(top) == start(base)
            and start(bottom) == start(base) + top.nbytes):
        return base
    return np.vstack([top, bottom])


def _streamed_stage_indices(estimator, values):
    """The forest sizes a streamed forest is scored at for the wanted ``values`` (each at the last size not
    above it, as :func:`treeopt.experiments.run.staged.staged_scores` picks)."""
    stage_value = list(range(1, int(estimator.n_estimators) + 1))
    return sorted(set(pick_stages(stage_value, values).values()))


def _streamed_stages(task, param, values, parts, fitted):
    """The ``stages`` entries of a forest scored tree by tree (as :func:`staged_scores` makes them)."""
    n_trees = len(fitted["leaves"])
    stage_value = list(range(1, n_trees + 1))
    picks = pick_stages(stage_value, values, param)
    cumulative = np.cumsum(fitted["leaves"])
    tree_of_stage = lambda index: {"n_trees": index, "n_leaves_total": int(cumulative[index - 1])}  # noqa: E731
    return stage_entries(task, param, picks, stage_value, parts, fitted["staged"], tree_of_stage)


def run(run_dir, *, dataset, method, params, seed, split_path, fit_on="train", n_jobs=1, save_model=None,
        provenance=None, inherit=None, stages=None, block_trees=None, blocks=None):
    """Fit, measure and write the run folder ``run_dir``; returns the metrics dict.

    ``provenance`` (e.g. the selection file a final run used) is recorded in ``params.yaml``. ``inherit``
    ({param: selection YAML}) fills in inherited parameters first (:func:`resolve_inherited`); the files are
    recorded under ``inherited``. ``stages`` ({param: [sizes]}) scores the fit at smaller sizes too (staged
    sweeps); recorded in ``params.yaml`` so that ``rerun`` repeats it. ``block_trees`` (bagged forests) sums the
    trees' probabilities in blocks of that many trees, and ``blocks`` (folders of :func:`treeopt.experiments.run.blocks.
    run_block`) merges those block jobs instead of fitting: the same run folder either way (``block_trees`` is
    recorded in ``params.yaml``; ``rerun`` fits in one job).
    """
    stages = {str(k): [_plain(v) for v in vals] for k, vals in dict(stages or {}).items()}
    params, inherited = resolve_inherited(params, inherit)
    provenance = {**dict(provenance or {}), **({"inherited": inherited} if inherited else {})}
    shown_dir = Path(run_dir)
    run_dir = Path(os.path.abspath(run_dir))
    if run_dir.exists() and run_dir.is_dir() and any(run_dir.iterdir()) and not is_run_folder(run_dir):
        raise RunFolderError(f"{shown_dir}: exists and is not a run folder; it is left alone")
    if run_dir.is_symlink() or (run_dir.exists() and not run_dir.is_dir()):
        raise RunFolderError(f"{shown_dir}: exists and is not a folder; it is left alone")
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = _make_temporary(run_dir)
    logger = logging.getLogger(f"treeopt.run.{tmp.name}")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    handler = logging.FileHandler(tmp / "log.txt")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    # Library progress (e.g. the non-greedy learner's per-epoch lines on the ``treeopt.nongreedy`` logger)
    # goes to the same log.txt; ``treeopt.run.*`` does not propagate, so nothing is written twice.
    library = logging.getLogger("treeopt")
    library_level = library.level
    library.setLevel(logging.INFO)
    library.addHandler(handler)
    try:
        scheduled = slurm_job()
        if scheduled:  # the scheduler's own log of this job (out-of-memory and time-limit kills show there)
            logger.info(scheduled)
        setup = {
            "dataset": dataset, "method": method, "params": _plain(dict(params)), "seed": int(seed),
            "fit_on": fit_on, "n_jobs": int(n_jobs), "split": str(split_path), "split_sha256": _sha256(split_path),
            **({"stages": stages} if stages else {}),
            **({"block_trees": int(block_trees)} if block_trees is not None else {}), **_plain(provenance),
        }
        if blocks:
            setup["merged_blocks"] = [str(b) for b in blocks]
        setup["repeat"] = f"python -m treeopt.experiments rerun {shown_dir / 'params.yaml'} --out NEW_FOLDER"
        (tmp / "params.yaml").write_text(yaml.safe_dump(setup, sort_keys=False))
        split = _load_split(split_path)
        keep = get_method(method).keeps_model if save_model is None else save_model
        measured, estimator = fit_and_measure(method, params, seed, split, fit_on=fit_on, n_jobs=n_jobs, log=logger,
                                              stages=tuple(stages.items()),
                                              model_path=tmp / "model.npz" if keep else None,
                                              block_trees=block_trees, blocks=blocks,
                                              block_check={k: setup[k] for k in ("dataset", "method", "params",
                                                                                 "seed", "fit_on", "split_sha256")})
        arrays = measured.pop("_arrays", None)
        if arrays is not None:  # segmentation: test label maps for figures
            np.savez_compressed(tmp / "segmentation.npz", **arrays)
        result = {"dataset": dataset, "method": method, **measured, "versions": _metrics.versions(),
                  "git_commit": _metrics.git_commit()}
        result = {key: _plain(result[key]) for key in (*METRICS_KEYS, *OPTIONAL_KEYS) if key in result}
        (tmp / "metrics.json").write_text(json.dumps(result, indent=2) + "\n")
        logger.info("done")
        handler.close()
        _move_into_place(tmp, run_dir)
        return result
    except BaseException:
        logger.exception("run failed")
        handler.close()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        logger.removeHandler(handler)
        library.removeHandler(handler)
        library.setLevel(library_level)


def rerun(params_file, out_dir, *, force=False):
    """Repeat the run described by a ``params.yaml`` into ``out_dir``.

    ``out_dir`` must be absent or empty; an existing run folder is replaced only with ``force`` (anything else
    is refused: :func:`check_output_folder`). Its ``params`` hold inherited values already resolved, so no
    selection file is read again; the ``inherited`` record is carried over as provenance."""
    check_output_folder(out_dir, force=force)
    setup = yaml.safe_load(Path(params_file).read_text())
    if not isinstance(setup, dict) or not {"dataset", "method", "params", "seed", "split"} <= set(setup):
        raise RunFolderError(f"{params_file}: not a run's params.yaml (needs dataset, method, params, seed, split)")
    provenance = {k: v for k, v in setup.items() if k not in {"dataset", "method", "params", "seed", "fit_on",
                                                             "n_jobs", "split", "split_sha256", "repeat", "stages",
                                                             "block_trees", "merged_blocks"}}
    return run(out_dir, dataset=setup["dataset"], method=setup["method"], params=setup["params"],
               seed=setup["seed"], split_path=setup["split"], fit_on=setup.get("fit_on", "train"),
               n_jobs=setup.get("n_jobs", 1),
               provenance=provenance, stages=setup.get("stages"), block_trees=setup.get("block_trees"))
