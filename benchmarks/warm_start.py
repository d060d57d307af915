"""CPU seconds of a small workflow with and without the warm job server (treeopt.experiments.warmstart).

    python benchmarks/warm_start.py [--repeats 1] [--out benchmarks/results/warm_start.csv]

Copies the workflow into a temporary folder with a small config (wine: CART at two depths with a two-point grid,
a 5-tree random forest; 13 jobs: 1 data preparation, 6 candidate runs, 2 selections, 4 final runs... plus tables
and figures) and runs ``snakemake --cores 1`` twice from scratch: with ``TREEOPT_WARM_START=0`` (every job a fresh
Python) and with the warm server. Each run is timed with ``getrusage`` over the whole process tree (Snakemake,
its job scripts, the server and its forked children), so the two CPU totals compare what the jobs cost, whatever
else the machine is doing; wall seconds and the load average are recorded too.
"""

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CONFIG = {
    "profile": "tiny",
    "data": {"mirror": None, "raw_dir": "data/raw", "processed_dir": "data/processed",
             "lock_file": "data/checksums.lock.yaml"},
    "datasets": {"wine": {"task": "classification", "format": "sklearn", "options": {"loader": "wine"},
                          "split": {"protocol": "random"}, "scale": "none"}},
    "profiles": {"tiny": {"seeds": [0], "experiments": {
        "depth": {"reports": ["nongreedy_fig2"], "datasets": ["wine"], "sweep": {"max_depth": [1, 3]},
                  "methods": {"cart": {"grid": {"min_samples_leaf": [1, 20]}},
                              "co2_tree": {"grid": {"nu": [1, 10]}}}},
        "forest": {"reports": ["co2_table1"], "datasets": ["wine"], "sweep": {"n_estimators": [2, 5]},
                   "methods": {"rf": {"params": {"max_depth": 3}}}},
    }}},
}


def one(warm):
    root = Path(tempfile.mkdtemp(prefix="warmstart-"))
    try:
        shutil.copy(ROOT / "Snakefile", root / "Snakefile")
        shutil.copy(ROOT / "environment.yml", root / "environment.yml")
        shutil.copytree(ROOT / "workflow", root / "workflow", ignore=shutil.ignore_patterns("__pycache__"))
        (root / "config.yaml").write_text(yaml.safe_dump(CONFIG, sort_keys=False))
        env = {**os.environ, "TREEOPT_WARM_START": "1" if warm else "0"}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        load = os.getloadavg()[0]
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "-s", str(root / "Snakefile"),
                               "-d", str(root)], env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode:
            raise RuntimeError(done.stderr[-3000:])
        jobs = done.stderr.count("Finished job")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return {"warm": warm, "jobs": jobs, "cpu_seconds": round(cpu, 2), "wall_seconds": round(wall, 1),
                "cpu_per_job": round(cpu / max(jobs, 1), 3), "load_before": round(load, 2),
                "load_after": round(os.getloadavg()[0], 2), "used_server": "warm process" in done.stderr}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    rows = []
    for _ in range(args.repeats):
        for warm in (False, True):
            row = one(warm)
            print(row, flush=True)
            rows.append(row)
    if args.out:
        import pandas as pd

        pd.DataFrame(rows).to_csv(args.out, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
