"""What a run costs before it runs: CPU seconds and peak memory from a measured per-method model.

The model (``cost_model.yaml`` beside this module) has three parts, all measured (``benchmarks/cost_calibrate.py``
writes them; the file says when, where and with which command):

* ``datasets``: the shape of each data set's prepared split (rows of train / validation / test, features,
  classes), so a plan can be costed without preparing any data (a split present under ``data/processed`` is read
  instead: its own header is exact);
* ``methods``: for each method a *family* (a formula for the work of one fit,
  :mod:`treeopt.experiments.infra.work`) and two coefficients: ``cpu`` (CPU seconds per unit of work, calibrated on
  timed runs) and ``mem`` (bytes per unit of the family's memory term); methods not measured take their family's
  coefficients;
* ``base_mb``: the memory of a run process before it loads data (Python, numpy, scikit-learn, numba kernels).

Work of one fit: :mod:`treeopt.experiments.infra.work` (a formula per family, in its docstring).

A fit costs ``fixed + cpu x work`` CPU seconds: ``fixed`` is what the family pays whatever the size (its numba
kernels loaded, a small tree's per-node Python work), fitted with ``cpu`` where calibration runs of two sizes exist.

Memory: ``base_mb`` + the split (all parts, float64; a refit joins training and validation without a copy) + the
family's term:
streamed forests (CO2, OC1) ``mem`` x n p per worker (a tree being grown; trees are not kept), scikit-learn
forests ``mem`` x T n (every tree kept: nodes grow with n), single trees and boosting ``mem`` x n p, the optimal
tree ``mem`` x n B (its binary tests),
segmentation runs their window matrices (``treeopt.segmentation``).

:func:`estimate_run` gives one run's estimate; :mod:`treeopt.experiments.infra.cost_plan` costs the plan's jobs
and sums them by experiment. The SLURM resources of every job come from the same numbers
(:mod:`treeopt.experiments.infra.resources`).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..plan.methods import get_method
from ..plan.params import is_inherit_marker
from .work import (  # noqa: F401 - the work formulas and their constants, read as cost.X too
    CO2_FIXED_FEATURES, NONGREEDY_MAX_EPOCHS, OC1_FIXED_FEATURES, OC1_TWO_VALUED_FACTOR, RANDOM_OBLIQUE_FIXED_FEATURES,
    RANDOM_OBLIQUE_TWO_VALUED_FACTOR, SEG_FEATURES, SEG_UNLIMITED_DEPTH, TAO_C_DENSE, _number, binary_tests,
    collapse_trees, fit_factor, tao_path_weight, work)

MODEL_FILE = Path(__file__).with_name("cost_model.yaml")
# The initial trees TAOTreeClassifier fits itself at its max_depth (tao.tao._initial_tree) that cost more than its CART
# start: costed as a run of that method with the TAO run's init_params (the OC1 start at its 20 default restarts)
TAO_BUILT_INITS = {"optimal": "optimal_axis", "oc1": "oc1_tree", "co2": "co2_tree", "nongreedy": "nongreedy_tree"}
# OptimalTreeClassifier's time_limit when a run does not set it (a test keeps the two equal)
OPTIMAL_TIME_LIMIT = 600.0


@dataclass(frozen=True)
class Shape:
    """Rows of the prepared split's parts, features and classes (0 for regression); ``max_distinct``: the most
    distinct values a feature takes, when the model's table records it (0: many; e.g. 2 for one-hot features)."""

    n_train: int
    n_val: int
    n_test: int
    p: int
    k: int = 0
    max_distinct: int = 0

    def n_fit(self, fit_on):
        return self.n_train + (self.n_val if fit_on == "trainval" else 0)

    @property
    def split_mb(self):
        return (self.n_train + self.n_val + self.n_test) * self.p * 8 / 1e6


@dataclass(frozen=True)
class Estimate:
    """One run: CPU seconds (all threads), peak resident memory (MB), and the threads it can keep busy;
    ``bound_seconds``: the most CPU seconds it can take where its expected cost depends on the data (an
    exponential-loss GBDT whose trees may stop growing later than expected; None: ``cpu_seconds``)."""

    cpu_seconds: float
    peak_mb: float
    parallel: int = 1
    bound_seconds: float | None = None

    @property
    def cpu_bound_seconds(self):
        return self.cpu_seconds if self.bound_seconds is None else max(self.bound_seconds, self.cpu_seconds)

    def wall_seconds(self, threads):
        return self.cpu_seconds / max(1, min(int(threads), self.parallel))

    def wall_bound_seconds(self, threads):
        return self.cpu_bound_seconds / max(1, min(int(threads), self.parallel))


@functools.lru_cache(maxsize=4)
def load_model(path=MODEL_FILE):
    """The cost model (``cost_model.yaml``)."""
    return yaml.safe_load(Path(path).read_text())


class UnknownShape(KeyError):
    """A data set whose split shape the cost model does not know."""


def dataset_shape(name, model=None, processed_dir=None):
    """The split shape of ``name``: from its prepared split when there is one under ``processed_dir`` (only the
    array headers are read), else from the model's ``datasets`` table."""
    if processed_dir is not None:
        path = Path(processed_dir) / name / "split0.npz"
        if path.is_file():
            shape = _shape_of_split(path)
            if shape is not None:
                entry = ((model or load_model()).get("datasets") or {}).get(name) or {}
                return dataclasses.replace(shape, max_distinct=int(entry.get("max_distinct", 0)))
    entry = ((model or load_model()).get("datasets") or {}).get(name)
    if entry is None:
        raise UnknownShape(f"the cost model has no shape for data set {name!r}; add it under datasets: in "
                           f"{MODEL_FILE} (n_train, n_val, n_test, p, k)")
    return Shape(**entry)


@functools.lru_cache(maxsize=256)
def _shape_of_split(path):
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as z:
            shapes = {key: z[key].shape for key in ("X_train", "X_val", "X_test", "y_train")}
            k = len(z["classes"]) if "classes" in z.files else 0
            task = str(z["task"]) if "task" in z.files else "classification"
    except Exception:  # noqa: BLE001 - a damaged split is the data layer's business; fall back to the table
        return None
    if task == "segmentation" or len(shapes["X_train"]) != 2:
        return None
    return Shape(shapes["X_train"][0], shapes["X_val"][0], shapes["X_test"][0], shapes["X_train"][1],
                 k if task == "classification" else 0)


def _method_entry(model, method):
    entry = dict((model.get("methods") or {}).get(method) or {})
    if "family" not in entry:
        raise KeyError(f"the cost model has no entry for method {method!r}; add it under methods: in {MODEL_FILE}")
    family = (model.get("families") or {}).get(entry["family"]) or {}
    return {**family, **entry}


def estimate_run(method, params, dataset, *, fit_on="train", stages=(), threads=1, model=None,
                 processed_dir=None, score_test=True):
    """CPU seconds and peak memory of one run of ``method`` with ``params`` on ``dataset`` (``score_test=False``: a
    segmentation candidate, which labels no test image)."""
    model = model or load_model()
    entry = _method_entry(model, method)
    family = entry["family"]
    shape = dataset_shape(dataset, model, None if get_method(method).task == "segmentation" else processed_dir)
    params = {k: v for k, v in dict(params).items() if not is_inherit_marker(v)}  # not known yet: defaults
    units, mem_units = work(family, params, shape, fit_on, stages, float(entry.get("score_weight", 1.0)),
                            fit_factor(entry, params), score_test, entry.get("collapse"))
    # fixed: what a fit of the family costs whatever its size (its numba kernels loaded from the cache, per-node
    # Python work of a small tree), fitted with cpu on calibration runs of two sizes (benchmarks/cost_runs.py fit)
    fit_cpu = float(entry.get("fixed", 0.0)) + float(entry["cpu"]) * units
    bound = None
    if entry.get("collapse"):  # the same fit if its trees never stop growing: what its time limit is sized for
        bound_units, _ = work(family, params, shape, fit_on, stages)
        bound = float(entry.get("fixed", 0.0)) + float(entry["cpu"]) * bound_units + float(model.get("start_seconds", 0.0))
    if family == "nongreedy_tree":  # the CO2 tree it starts from is fitted first, at the run's depth
        fit_cpu += nongreedy_start_cpu(params, dataset, fit_on, model, processed_dir)
    if family == "optimal":  # the solver stops at time_limit (wall seconds; CPU on an idle core)
        fit_cpu = min(fit_cpu, _number(params.get("time_limit"), OPTIMAL_TIME_LIMIT))
    if family == "tao" and params.get("init") in TAO_BUILT_INITS:  # TAO fits its initial tree first
        init = {**(params.get("init_params") or {}), "max_depth": _number(params.get("max_depth"), 8)}
        fit_cpu += estimate_run(TAO_BUILT_INITS[params["init"]], init, dataset, fit_on=fit_on, model=model,
                                processed_dir=processed_dir).cpu_seconds - float(model.get("start_seconds", 0.0))
    cpu = fit_cpu + float(model.get("start_seconds", 0.0))
    parallel = max(1, int(threads)) if entry.get("parallel", False) else 1
    workers = parallel if family in ("co2_forest", "oc1_forest", "segmentation") else 1
    # the split's float64 parts (a refit joins training and validation rows without a copy); segmentation sets are
    # uint8 images, their memory is in fixed_mb
    data_mb = 0.0 if family == "segmentation" else shape.split_mb
    peak = (float(model["base_mb"]) + float(entry.get("fixed_mb", 0.0)) + data_mb
            + (workers * float(entry["mem"]) + float(entry.get("shared_mem", 0.0))) * mem_units / 1e6)
    return Estimate(cpu, peak, parallel, bound)


def nongreedy_start_cpu(params, dataset, fit_on, model, processed_dir=None):
    """CPU seconds of the CO2 tree a non-greedy tree starts from (``init_params`` at the run's ``max_depth``)."""
    init = {**(params.get("init_params") or {}), "max_depth": params.get("max_depth")}
    start = estimate_run("co2_tree", init, dataset, fit_on=fit_on, model=model, processed_dir=processed_dir)
    return start.cpu_seconds - float(model.get("start_seconds", 0.0))
