"""Memory (``mem_mb``) and wall time (``runtime``, minutes) each Snakemake job asks a cluster scheduler for.

A local run ignores them (except ``--resources mem_mb=...``); the SLURM profile (``profiles/slurm``) passes
them to ``sbatch``. The numbers are upper estimates from the data and the method's parameters:

* data preparation: the raw files are parsed in memory (LFW images: 2,927 x 250 x 250 x 3 bytes, plus PIL
  decoding) -- 2 GB, 8 GB for segmentation data;
* an ordinary run: 2 GB, plus for the large benchmark sets (paper profile) 8 GB; an oblique forest (CO2, OC1)
  there also 16 MB per tree, measured: the 1000-tree CO2 Forest on Connect-4 (55,000 x 126, 19,000 nodes per
  tree) peaked at 15.9 GB (trees 5.4 MB each, the packed copy for prediction 3.8 MB, the rest allocator slack),
  so 1000 trees ask for 24 GB. Sets with much longer oblique rows (MNIST's 784 features) were not measured and
  would need more than this rule asks;
* a segmentation run: every tree being fitted (``threads`` at a time) holds its window matrix
  ``windows_per_tree x 2,883`` in float64 and the greedy learner's copy of the node being split, plus the
  images (:mod:`treeopt.segmentation.forest`): 2 x 8 x windows x 2,883 bytes per thread + 2 GB;
* tables and figures: 1 GB, 10 minutes.

Run times: default-profile jobs take seconds to minutes (60 minutes asked); paper-profile jobs are given
24 hours (forests of 1,000 trees on the large sets), segmentation runs 48 hours (trees over 256,000 windows
of 2,883 values, prediction at every pixel of 250 test images).
"""

from .methods import get_method

DEFAULT_PROFILE = "default"


def _params(spec):
    params = dict(getattr(spec, "params", None) or ())
    params.update(dict(getattr(spec, "point", None) or ()))
    return params


def run_mem_mb(profile, spec, threads=1):
    """Memory (MB) for a candidate or final run ``spec`` (RunSpec or FinalSpec) of ``profile``."""
    method = get_method(spec.method)
    if method.task == "segmentation":
        windows = int(_params(spec).get("windows_per_tree", 256000))
        per_tree = 2 * 8 * windows * 2883 / 1e6
        return int(2000 + max(1, threads) * per_tree)
    if profile == DEFAULT_PROFILE:
        return 2000
    if method.kind == "forest" and method.estimator.startswith("treeopt.forest:"):  # oblique trees, packed copy
        return 8000 + MB_PER_TREE * _n_trees(spec)
    return 8000


MB_PER_TREE = 16  # measured on 1000 Connect-4 CO2 trees (module docstring)


def _n_trees(spec):
    """The most trees a run fits: its ``n_estimators``, or the largest stage of a staged sweep."""
    sizes = [v for name, values in (getattr(spec, "stages", None) or ()) if name == "n_estimators" for v in values]
    sizes.append(_params(spec).get("n_estimators", 0))
    return max((int(s) for s in sizes if isinstance(s, (int, float)) or str(s).isdigit()), default=0)


def run_runtime(profile, spec):
    """Wall time (minutes) for a run."""
    if profile == DEFAULT_PROFILE:
        return 60
    return 2880 if get_method(spec.method).task == "segmentation" else 1440


def prepare_mem_mb(task):
    return 8000 if task == "segmentation" else 2000
