"""One run: fit a method on a prepared split, measure it (:mod:`treeopt.experiments.run.fit`), write the run folder
(:mod:`treeopt.experiments.run.folders`: written into a hidden temporary and renamed into place at the end, so an
interrupted or failed run leaves nothing that looks finished).

Parameters inherited from another method's selection (config ``inherit:``) arrive as a marker
(``from-rf-co2_forest_size``) plus the selection YAML to read; :func:`resolve_inherited` puts the chosen value
in before the estimator is built, so ``params.yaml`` and ``metrics.json`` hold the real value and
``params.yaml`` names the selection file under ``inherited``.
"""

import hashlib
import json
from pathlib import Path

import numpy as np
import yaml

from ..plan.methods import get_method
from ..plan.params import is_inherit_marker, split_dotted
from . import metrics as _metrics
from .fit import fit_and_measure
from .folders import RunFolderError, check_output_folder, write_run_folder

# compile_seconds: numba kernels compiled or loaded before the timed fit (infra/warmup.py; 0.0 for learners without
# kernels); fit_compile_seconds: what numba still spent on them inside the timed fit (0 expected)
METRICS_KEYS = ("dataset", "method", "params", "seed", "n_train", "n_val", "n_test", "train", "val", "test",
                "fit_seconds", "predict_seconds", "compile_seconds", "fit_compile_seconds", "tree", "versions",
                "git_commit")
OPTIONAL_KEYS = ("staged", "stages", "path", "path_runs", "from_path", "from_candidate", "per_depth",
                 "fit_cpu_seconds")
# segmentation Jaccard per forest size; staged sweeps; TAO's C path, what a run of each earlier C of it would record,
# and (a run read off such a path, or off its chosen candidate: run.reads) where it was read; non-greedy per-depth
# diagnostics; CPU seconds of a fit made in one call


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


def run(run_dir, *, dataset, method, params, seed, split_path, fit_on="train", n_jobs=1, save_model=None,
        provenance=None, inherit=None, stages=None, block_trees=None, blocks=None, score_test=True):
    """Fit, measure and write the run folder ``run_dir``; returns the metrics dict.

    ``provenance`` (e.g. the selection file a final run used) is recorded in ``params.yaml``. ``inherit``
    ({param: selection YAML}) fills in inherited parameters first (:func:`resolve_inherited`); the files are
    recorded under ``inherited``. ``stages`` ({param: [sizes]}) scores the fit at smaller sizes too (staged
    sweeps); recorded in ``params.yaml`` so that ``rerun`` repeats it. ``block_trees`` (bagged forests) sums the
    trees' probabilities in blocks of that many trees, and ``blocks`` (folders of :func:`treeopt.experiments.run.blocks.
    run_block`) merges those block jobs instead of fitting: the same run folder either way (``block_trees`` is
    recorded in ``params.yaml``; ``rerun`` fits in one job). ``score_test=False``: a segmentation run labels no test
    image (candidates: :func:`treeopt.experiments.run.fit.fit_and_measure`); recorded as ``score_test: false``.
    """
    stages = {str(k): [_plain(v) for v in vals] for k, vals in dict(stages or {}).items()}
    params, inherited = resolve_inherited(params, inherit)
    provenance = {**dict(provenance or {}), **({"inherited": inherited} if inherited else {})}
    shown_dir = Path(run_dir)

    def fill(tmp, logger):
        setup = {
            "dataset": dataset, "method": method, "params": _plain(dict(params)), "seed": int(seed),
            "fit_on": fit_on, "n_jobs": int(n_jobs), "split": str(split_path), "split_sha256": _sha256(split_path),
            **({"stages": stages} if stages else {}),
            **({"block_trees": int(block_trees)} if block_trees is not None else {}),
            **({} if score_test else {"score_test": False}), **_plain(provenance),
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
                                                                                 "seed", "fit_on", "split_sha256")},
                                              score_test=score_test)
        arrays = measured.pop("_arrays", None)
        if arrays is not None:  # segmentation: test label maps for figures
            np.savez_compressed(tmp / "segmentation.npz", **arrays)
        result = {"dataset": dataset, "method": method, **measured, "versions": _metrics.versions(),
                  "git_commit": _metrics.git_commit()}
        result = {key: _plain(result[key]) for key in (*METRICS_KEYS, *OPTIONAL_KEYS) if key in result}
        (tmp / "metrics.json").write_text(json.dumps(result, indent=2) + "\n")
        return result

    return write_run_folder(run_dir, fill)


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
                                                             "block_trees", "merged_blocks", "from_path",
                                                             "from_candidate", "score_test"}}
    return run(out_dir, dataset=setup["dataset"], method=setup["method"], params=setup["params"],
               seed=setup["seed"], split_path=setup["split"], fit_on=setup.get("fit_on", "train"),
               n_jobs=setup.get("n_jobs", 1),
               provenance=provenance, stages=setup.get("stages"), block_trees=setup.get("block_trees"),
               score_test=setup.get("score_test", True))
