"""The memory table (benchmarks/results/memory.csv) from the measurements of issue #26.

    python benchmarks/memory_table.py

Rows: whole runs (``benchmarks/run_memory.py``: process peak resident memory, ``/usr/bin/time -v`` agrees) before
(main at 9261cea, a forest holding every tree) and after (this branch, trees scored and dropped one by one),
from ``benchmarks/results/memory_runs.jsonl``, the cost-model calibration and check runs
(``cost_calibration.jsonl``, ``cost_model_check.jsonl``); and growing trees alone (``benchmarks/tree_memory.py``:
``tree_memory.csv``), where ``extra_per_worker`` is the memory growing took per thread, as a multiple of the data
matrix fitted on.
"""

import argparse
import json
from pathlib import Path

import pandas as pd

RESULTS = Path(__file__).resolve().parent / "results"


def _jsonl(name, results=RESULTS):
    path = results / name
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=str(RESULTS), help="folder of the measurements read")
    parser.add_argument("--out", default=str(RESULTS / "memory.csv"))
    args = parser.parse_args(argv)
    results = Path(args.results)
    rows = []
    for source in ("memory_runs.jsonl", "cost_calibration.jsonl", "cost_model_check.jsonl"):
        for r in _jsonl(source, results):
            params = r.get("params", {})
            rows.append({"kind": "run", "what": r.get("name") or f"{r['method']}/{r['dataset']}",
                         "code": r.get("code", "scale"), "dataset": r["dataset"], "method": r["method"],
                         "n_trees": params.get("n_estimators"), "n_jobs": r["n_jobs"], "fit_on": r["fit_on"],
                         "data_mb": r["X_fit_mb"], "peak_mb": r["peak_rss_mb"],
                         "test_error": r.get("test_error"), "cpu_seconds": r.get("process_cpu_seconds", r.get("cpu_seconds")),
                         "note": r.get("note", ""), "source": source})
    trees = results / "tree_memory.csv"
    if trees.exists():
        for r in pd.read_csv(trees).to_dict("records"):
            rows.append({"kind": "trees only", "what": f"{r['learner']} tree(s), max_depth {r['max_depth']}",
                         "code": "scale", "dataset": r["dataset"], "method": r["learner"], "n_trees": r["n_trees"],
                         "n_jobs": r["n_jobs"], "fit_on": "trainval", "data_mb": r["data_mb"], "peak_mb": r["peak_mb"],
                         "extra_mb": r["extra_mb"], "extra_per_worker": r["extra_per_worker"],
                         "cpu_seconds": r["cpu_seconds"], "source": "tree_memory.csv"})
    table = pd.DataFrame(rows)
    table.to_csv(args.out, index=False)
    print(table.to_string(index=False))


if __name__ == "__main__":
    main()
