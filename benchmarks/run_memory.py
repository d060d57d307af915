"""One workflow run (``treeopt.experiments.run.runner.run``) with its peak memory and CPU time, as one JSON line.

    python benchmarks/run_memory.py connect4 co2_forest '{"nu": 0.1, "learning_rate": 0.03, "max_features": "p^0.9"}' \
        --stages 100 300 1000 --fit-on trainval --n-jobs 2 [--out DIR] [--save-model]

The run is the one Snakemake would make (same runner, same folder files), written into ``--out`` (default: a
temporary folder, removed after). Printed: the split's data-matrix size (``X_fit_mb``: the matrix the learner is
fitted on, float64), the process's peak resident memory (``peak_rss_mb``, ``getrusage`` of this process: imports,
the loaded split and the run), the RSS after loading the split and before fitting (``loaded_rss_mb``), the CPU
seconds of the run (``cpu_seconds``, all threads) and of the whole process (``process_cpu_seconds``: imports and
data loading too), wall seconds, ``fit_seconds`` and the test error at each stage. Run it under ``/usr/bin/time -v`` as well
when the number is for a table: the two peaks agree (both are the kernel's high-water mark of this process).
"""

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

from treeopt.data import load_split
from treeopt.experiments.run.runner import run

ROOT = Path(__file__).resolve().parent.parent


def rss_mb():
    """Current resident memory of this process (MB, from /proc)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("method")
    parser.add_argument("params", help="JSON object of the run's hyper-parameters")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stages", type=int, nargs="*", default=None, help="n_estimators values to score")
    parser.add_argument("--stage-param", default="n_estimators")
    parser.add_argument("--fit-on", default="trainval", choices=("train", "trainval"))
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--out", default=None)
    parser.add_argument("--save-model", action="store_true")
    parser.add_argument("--processed-dir", default=str(ROOT / "data/processed"))
    args = parser.parse_args(argv)

    split_path = Path(args.processed_dir) / args.dataset / f"split{args.seed}.npz"
    if not split_path.is_file():
        from treeopt.data import prepare_split

        config = yaml.safe_load((ROOT / "config.yaml").read_text())
        split_path = prepare_split(args.dataset, config, args.seed)
    split = load_split(split_path)
    n_fit = split.X_train.shape[0] + (split.X_val.shape[0] if args.fit_on == "trainval" else 0)
    x_fit_mb = n_fit * split.X_train.shape[1] * 8 / 1e6
    loaded = rss_mb()
    del split
    params = json.loads(args.params)
    stages = {args.stage_param: args.stages} if args.stages else None
    tmp = None
    out = args.out
    if out is None:
        tmp = tempfile.mkdtemp(prefix="run_memory-")
        out = os.path.join(tmp, "run")
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        result = run(out, dataset=args.dataset, method=args.method, params=params, seed=args.seed,
                     split_path=split_path, fit_on=args.fit_on, n_jobs=args.n_jobs,
                     save_model=True if args.save_model else None, stages=stages)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    usage = resource.getrusage(resource.RUSAGE_SELF)
    peak = usage.ru_maxrss / 1e3
    line = {"dataset": args.dataset, "method": args.method, "params": params, "seed": args.seed,
            "n_jobs": args.n_jobs, "fit_on": args.fit_on, "n_fit": n_fit, "X_fit_mb": round(x_fit_mb, 1),
            "loaded_rss_mb": round(loaded, 1), "peak_rss_mb": round(peak, 1), "wall_seconds": round(wall, 2),
            "cpu_seconds": round(cpu, 2),
            "process_cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2), "fit_seconds": round(result["fit_seconds"], 2),
            "test_error": result["test"].get("error"),
            "stages": {s[args.stage_param]: s["test"].get("error") for s in result.get("stages", [])}}
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
