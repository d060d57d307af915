"""Memory (``mem_mb``) and wall time (``runtime``, minutes) each Snakemake job asks a cluster scheduler for.

A local run ignores them (except ``--resources mem_mb=...``); the SLURM profile (``profiles/slurm``) passes them
to ``sbatch``. Runs ask for what the measured cost model predicts (:mod:`treeopt.experiments.infra.cost`, the same
numbers ``python -m treeopt.experiments plan --estimate`` prints), times a safety factor (``safety`` in
``cost_model.yaml``: the model was checked to within 2x of measured runs, so CPU time is asked 3x and memory
1.5x), and never less than a floor (``min_minutes``, ``min_mb``). A run whose cost the model charges at its
expected value where the data decide it (``Estimate.bound_seconds``: an exponential-loss GBDT, charged the trees
grown before its margins pass the loss's floor) asks for time at its bound (every tree grown):

* ``mem_mb`` = max(min_mb, memory factor x predicted peak resident memory);
* ``runtime`` = max(min_minutes, time factor x predicted CPU seconds (the bound, where there is one) / the
  threads the run keeps busy / 60),
  times ``RETRY_TIME_FACTOR`` for each retry (Snakemake's ``attempt``; the SLURM profile retries once).

A run killed at its time limit (SLURM state TIMEOUT) ran more than 3x the model's CPU time, or over the floor:
on a loaded or slower node (seen on the local one-node cluster sharing 2 cores at load 10: a TAO run costed at
5 s was cancelled after its 10-minute floor, issue #28). Asking the same time again would fail the same way, so
a retry asks for 4x the time of the attempt before.

A tree block of a forest split into several jobs asks for what a forest of its trees costs; the final run that
merges the blocks for the merge's cost (:func:`treeopt.experiments.infra.cost_plan.estimate_merge`; usually the floors).

A run the model cannot cost (a data set added to the config but not to the model's shape table, a method
without a model entry) asks for the old flat numbers: 8 GB and 24 hours. Data preparation parses raw files in
memory (LFW images: 2,927 x 250 x 250 x 3 bytes, plus PIL decoding): 2 GB, 8 GB for segmentation data; tables
and figures 1 GB, 10 minutes.
"""

import math

from .cost import load_model
from .cost_plan import estimate_spec

FALLBACK_MB = 8000
FALLBACK_MINUTES = 1440
RETRY_TIME_FACTOR = 4


def _estimate(profile, spec, threads):
    try:
        return estimate_spec(spec, profile, threads=max(1, int(threads)))
    except (KeyError, ValueError):  # not in the cost model: the flat numbers
        return None


def run_mem_mb(profile, spec, threads=1):
    """Memory (MB) for a candidate or final run ``spec`` (RunSpec or FinalSpec) of ``profile``."""
    est = _estimate(profile, spec, threads)
    if est is None:
        return FALLBACK_MB
    safety = load_model()["safety"]
    return int(max(safety["min_mb"], math.ceil(est.peak_mb * safety["memory"])))


def run_runtime(profile, spec, threads=1, attempt=1):
    """Wall time (minutes) for a run with ``threads`` threads; ``attempt`` 2, 3, ... (retries) ask for more."""
    retry = RETRY_TIME_FACTOR ** (max(1, int(attempt)) - 1)
    est = _estimate(profile, spec, threads)
    if est is None:
        return FALLBACK_MINUTES * retry
    safety = load_model()["safety"]
    # a run whose cost depends on its data asks for its bound (an exponential-loss GBDT whose trees never stop)
    return int(max(safety["min_minutes"], math.ceil(est.wall_bound_seconds(threads) * safety["cpu"] / 60))) * retry


def prepare_mem_mb(task):
    return 8000 if task == "segmentation" else 2000
