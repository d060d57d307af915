"""Timed runs for the cost model (``treeopt.experiments.cost``): calibration, and the check against real runs.

    python benchmarks/cost_runs.py calibrate [--only NAME ...]   # timed runs -> benchmarks/results/cost_calibration.jsonl
    python benchmarks/cost_runs.py fit                           # coefficients -> src/treeopt/experiments/cost_model.yaml
    python benchmarks/cost_runs.py check [--only NAME ...]       # paper-profile runs -> benchmarks/results/cost_model_check.jsonl
    python benchmarks/cost_runs.py table                         # predicted vs measured -> benchmarks/results/cost_model_check.csv
                                                                 # (plus fit times of earlier sessions' paper runs)

Every run goes through ``benchmarks/run_memory.py`` (the workflow's own runner, one process per run) and records
its process CPU seconds and peak resident memory. Calibration runs are small versions of the paper profile's runs
(fewer trees, shallower trees, the small data sets); each method's CPU coefficient is the geometric mean of
``(process CPU seconds - start_seconds) / work`` over its calibration runs. Memory coefficients are not fitted
(on small runs the excess over ``base_mb`` is noise): they are the bytes per unit of the buffers each family's fit
holds, written in the model file, and the check runs test them at size. The check runs are other runs: the
paper profile's own run specifications (its data sets, sizes and grids) on the data sets this machine has, none
of them used for calibration; ``table`` writes each with the model's prediction and the ratio.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
CALIBRATION = RESULTS / "cost_calibration.jsonl"
CHECK = RESULTS / "cost_model_check.jsonl"
CHECK_CSV = RESULTS / "cost_model_check.csv"
MODEL = ROOT / "src/treeopt/experiments/cost_model.yaml"

# name: (dataset, method, params, fit_on, stages {param: [values]}, n_jobs)
CALIBRATION_RUNS = {
    "co2_forest/satimage/10": ("satimage", "co2_forest", {"n_estimators": 10, "nu": 1, "learning_rate": 0.01,
                                                        "max_features": "p^0.5"}, "train", None, 1),
    "co2_forest/letter/10": ("letter", "co2_forest", {"n_estimators": 10, "nu": 4, "learning_rate": 0.01,
                                                    "max_features": "p^0.7"}, "train", None, 1),
    "co2_forest/connect4/40": ("connect4", "co2_forest", {"nu": 0.1, "learning_rate": 0.03, "max_features": "p^0.9",
                                                        "n_estimators": 40}, "trainval",
                               {"n_estimators": [10, 30, 40]}, 2),
    "oc1_forest/satimage/1": ("satimage", "oc1_forest", {"n_estimators": 1, "max_features": "p^0.5"}, "train",
                              None, 1),
    "rf/letter/100": ("letter", "rf", {"n_estimators": 100, "max_features": "p^0.5"}, "train", None, 1),
    "rf/satimage/300": ("satimage", "rf", {"n_estimators": 300, "max_features": "p^0.9"}, "train", None, 1),
    # CART and a CO2 tree on a small set cost no more than the start every run pays: calibrated on larger sets
    "cart/covtype_like/12": ("covtype_like", "cart", {"max_depth": 12, "min_samples_leaf": 1}, "train", None, 1),
    "co2_tree/connect4/6": ("connect4", "co2_tree", {"max_depth": 6, "nu": 1, "learning_rate": 0.01,
                                                     "max_features": None}, "train", None, 1),
    "random_oblique_tree/satimage/8": ("satimage", "random_oblique_tree", {"max_depth": 8, "n_hyperplanes": 100},
                                       "train", None, 1),
    "oc1_tree/satimage/6": ("satimage", "oc1_tree", {"max_depth": 6, "max_features": "p^0.5"}, "train", None, 1),
    "nongreedy_tree/satimage/6": ("satimage", "nongreedy_tree", {"max_depth": 6, "nu": 1, "learning_rate": 0.01,
                                                                 "init_params": {"nu": 1, "learning_rate": 0.01}},
                                  "train", None, 1),
    "tao_oblique/satimage/4": ("satimage", "tao_oblique", {"max_depth": 4, "C": 0.1, "warm_start_C": [100, 10, 1],
                                                           "accept": "objective"}, "train", None, 1),
    "gbdt/rgf_synth_q64_reg/100": ("rgf_synth_q64_reg", "gbdt", {"n_estimators": 100, "max_leaf_nodes": 16,
                                                                 "learning_rate": 0.1, "min_samples_leaf": 10},
                                   "train", None, 1),
    "rgf_l2/rgf_synth_q64_reg/1000": ("rgf_synth_q64_reg", "rgf_l2", {"max_leaf_nodes": 1000, "l2": 0.1},
                                      "train", None, 1),
    "adaboost/rgf_synth_q4_cls/100": ("rgf_synth_q4_cls", "adaboost", {"n_estimators": 100, "max_leaf_nodes": 8,
                                                                       "min_samples_leaf": 10}, "train", None, 1),
}

CHECK_RUNS = {  # cheapest first: `check` runs them in this order
    "cart/connect4/12 (candidate)": ("connect4", "cart", {"max_depth": 12, "min_samples_leaf": 5}, "train", None, 1),
    "gbdt/rgf_synth_q64_reg/1000": ("rgf_synth_q64_reg", "gbdt", {"n_estimators": 1000, "max_leaf_nodes": 64,
                                                                  "learning_rate": 0.01, "min_samples_leaf": 10},
                                    "train", {"n_estimators": [10, 30, 100, 300, 1000]}, 1),
    "rgf_l2_clf/adult/10000": ("adult", "rgf_l2_clf", {"max_leaf_nodes": 10000, "l2": 0.01}, "train",
                               {"max_leaf_nodes": [500, 1000, 2000, 5000, 10000]}, 1),
    "rf/adult/1000 (rgf_rf)": ("adult", "rf", {"n_estimators": 1000, "max_features": 0.5}, "train",
                               {"n_estimators": [1, 10, 100, 1000]}, 1),
    "co2_forest/letter/30 (final)": ("letter", "co2_forest", {"n_estimators": 30, "nu": 4, "learning_rate": 0.01,
                                                              "max_features": "p^0.5"},
                                     "trainval", {"n_estimators": [1, 3, 10, 30]}, 2),
    "co2_forest/satimage/30 (candidate)": ("satimage", "co2_forest", {"n_estimators": 30, "nu": 4,
                                                                      "learning_rate": 0.03, "max_features": "p^0.7"},
                                           "train", {"n_estimators": [30]}, 1),
    "tao_oblique/satimage/6 (candidate)": ("satimage", "tao_oblique", {"max_depth": 6, "C": 1,
                                                                       "warm_start_C": [100, 10, 1, 0.1],
                                                                       "accept": "objective"}, "train", None, 1),
    "random_oblique_tree/connect4/10 (candidate)": ("connect4", "random_oblique_tree",
                                                    {"max_depth": 10, "n_hyperplanes": 100}, "train", None, 1),
    "cart/fashion_mnist/14 (co2_fig1)": ("fashion_mnist", "cart", {"max_depth": 14}, "train", None, 1),
    "rf/letter/1000 (candidate)": ("letter", "rf", {"n_estimators": 1000, "max_features": "p^0.7"}, "train",
                                   {"n_estimators": [1000]}, 1),
    "nongreedy_tree/connect4/8 (candidate)": ("connect4", "nongreedy_tree",
                                              {"max_depth": 8, "nu": 10, "learning_rate": 0.01,
                                               "init_params": {"nu": 10, "learning_rate": 0.01}}, "train", None, 1),
    "co2_tree/fashion_mnist/8 (co2_fig1)": ("fashion_mnist", "co2_tree", {"max_depth": 8, "nu": 1,
                                                                          "max_features": "p^0.5"}, "train", None, 1),
    "co2_forest/connect4/30 (final)": ("connect4", "co2_forest", {"n_estimators": 30, "nu": 0.1,
                                                                  "learning_rate": 0.03, "max_features": "p^0.9"},
                                       "trainval", {"n_estimators": [1, 3, 10, 30]}, 2),
    "co2_forest/covtype_like/30 (final)": ("covtype_like", "co2_forest", {"n_estimators": 30, "nu": 1,
                                                                          "learning_rate": 0.01,
                                                                          "max_features": "p^0.5"},
                                           "trainval", {"n_estimators": [1, 3, 10, 30]}, 2),
    "co2_forest/fashion_mnist/30 (final)": ("fashion_mnist", "co2_forest", {"n_estimators": 30, "nu": 1,
                                                                            "learning_rate": 0.01,
                                                                            "max_features": "p^0.5"},
                                            "trainval", {"n_estimators": [1, 3, 10, 30]}, 2),
    "rf/connect4/1000 (final)": ("connect4", "rf", {"n_estimators": 1000, "max_features": "p^0.5"}, "trainval",
                                 {"n_estimators": [1, 3, 10, 30, 100, 300, 1000]}, 1),
}


# Fit times of real paper-profile runs measured by earlier sessions (wall seconds of the fit alone, load not
# recorded): compared with the model's fit time, (CPU - start_seconds) / threads.
EARLIER_RUNS = {
    "co2_forest/connect4/1000 (final, stop 22, seeds 0-2)": (
        "connect4", "co2_forest", {"n_estimators": 1000, "nu": 0.1, "learning_rate": 0.03, "max_features": "p^0.9"},
        "trainval", {"n_estimators": [100, 300, 1000]}, 2, (1146, 1404),
        "issues stops (stop 22): 'Fitting took 1146-1404 s per seed', 2 threads"),
    "rgf_l2_clf/adult/10000 (rgf_real)": (
        "adult", "rgf_l2_clf", {"max_leaf_nodes": 10000, "l2": 0.01}, "train", {"max_leaf_nodes": [10000]}, 1,
        (7.69, 13.13), "results/paper/rgf_fig16_time.csv, l2 = 0.1 / 0.01 / 1"),
    "rgf_l2/rgf_synth_q64_reg/10000 (rgf_synthetic_complex)": (
        "rgf_synth_q64_reg", "rgf_l2", {"max_leaf_nodes": 10000, "l2": 0.1}, "train", {"max_leaf_nodes": [10000]},
        1, (11.86, 18.58), "results/paper/rgf_fig16_time.csv, l2 = 0.1 / 1 / 0.01"),
    "tao_oblique/fashion_mnist/4 (tao_fig1_path, cart)": (
        "fashion_mnist", "tao_oblique", {"max_depth": 4, "C": 0.003, "init": "cart", "accept": "objective",
                                         "warm_start_C": [100, 30, 10, 3, 1, 0.3, 0.1, 0.03, 0.01], "n_jobs": 2},
        "train", None, 1, (2632.0, 2632.0), "results/paper/tao_fig1_path.csv: the sum of the path's fit_seconds"),
}


def run_one(name, spec, out_path):
    dataset, method, params, fit_on, stages, n_jobs = spec
    cmd = [sys.executable, str(HERE / "run_memory.py"), dataset, method, json.dumps(params), "--fit-on", fit_on,
           "--n-jobs", str(n_jobs)]
    if stages:
        (param, values), = stages.items()
        cmd += ["--stage-param", param, "--stages", *map(str, values)]
    load_before = os.getloadavg()[0]
    start = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        print(f"{name}: failed\n{proc.stderr[-2000:]}", file=sys.stderr)
        return None
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    row.update(name=name, stages_asked=stages, load_before=round(load_before, 2),
               load_after=round(os.getloadavg()[0], 2), started=time.strftime("%Y-%m-%d %H:%M", time.localtime(start)))
    with open(out_path, "a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)
    return row


def _read(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def _latest(rows):
    return {row["name"]: row for row in rows}


def fit():
    """Per-method CPU and memory coefficients from the calibration runs, written into the model file."""
    sys.path.insert(0, str(ROOT / "src"))
    from treeopt.experiments import cost

    model = yaml.safe_load(MODEL.read_text())
    rows = _latest(_read(CALIBRATION))
    by_method = {}
    for name, row in rows.items():
        if name not in CALIBRATION_RUNS:  # a run since dropped from the list
            continue
        dataset, method, params, fit_on, stages, n_jobs = CALIBRATION_RUNS[name]
        entry = cost._method_entry(model, method)
        shape = cost.dataset_shape(dataset, model, ROOT / "data/processed")
        units, mem_units = cost.work(entry["family"], params, shape, fit_on, tuple((stages or {}).items()))
        # the process's CPU beyond the start every run pays (imports, loading the split, numba kernels, scoring
        # a small forest): start_seconds, the model's constant, measured as the whole CPU of the cheapest runs
        cpu = max(row["process_cpu_seconds"] - model["start_seconds"], 0.1 * row["process_cpu_seconds"])
        data_mb = shape.split_mb
        extra = max(row["peak_rss_mb"] - model["base_mb"] - data_mb, 0.0)
        by_method.setdefault(method, []).append((dataset, cpu / units, extra * 1e6 / max(mem_units, 1)))
        row["excess_mb"] = round(extra, 1)
    geomean = lambda values: math.exp(sum(math.log(v) for v in values) / len(values))  # noqa: E731
    for method, values in sorted(by_method.items()):
        cpu_coef = geomean([c for _, c, _ in values])
        entry = model["methods"][method]
        entry["cpu"] = float(f"{cpu_coef:.4g}")
        # memory coefficients stay those of the family (the bytes per unit of the buffers a fit holds, see the
        # model file): the calibration runs are small, so their excess over base_mb is noise, not a per-unit rate;
        # the check runs test the memory predictions at size
        entry["calibrated_on"] = sorted(n for n in rows if n.startswith(method + "/"))
        print(f"{method}: cpu {cpu_coef:.4g} s/unit from {len(values)} run(s); memory excess over base "
              f"{[round(m * 1e-6, 1) for _, _, m in values]} MB per million units")
        # methods of the same family without runs of their own (e.g. co2_forest_node) take this coefficient
        model["families"][entry["family"]]["cpu"] = entry["cpu"]
    text = MODEL.read_text()
    header = text[:text.index("\nstart_seconds:") + 1] if "\nstart_seconds:" in text else ""
    MODEL.write_text(header + yaml.safe_dump({k: model[k] for k in model}, sort_keys=False, width=110))


def table():
    sys.path.insert(0, str(ROOT / "src"))
    import pandas as pd

    from treeopt.experiments import cost

    model = cost.load_model(cost.MODEL_FILE)
    out = []
    for name, row in _latest(_read(CHECK)).items():
        dataset, method, params, fit_on, stages, n_jobs = CHECK_RUNS[name]
        est = cost.estimate_run(method, params, dataset, fit_on=fit_on, stages=tuple((stages or {}).items()),
                                threads=n_jobs, model=model, processed_dir=ROOT / "data/processed")
        out.append({"run": name, "dataset": dataset, "method": method, "n_fit": row["n_fit"], "threads": n_jobs,
                    "predicted_cpu_seconds": round(est.cpu_seconds, 1), "measured_cpu_seconds": row["process_cpu_seconds"],
                    "cpu_ratio": round(row["process_cpu_seconds"] / est.cpu_seconds, 3),
                    "predicted_peak_mb": round(est.peak_mb), "measured_peak_mb": row["peak_rss_mb"],
                    "mem_ratio": round(row["peak_rss_mb"] / est.peak_mb, 3),
                    "wall_seconds": row["wall_seconds"], "load_before": row["load_before"],
                    "load_after": row["load_after"], "started": row["started"]})
    for name, (dataset, method, params, fit_on, stages, threads, (low, high), source) in EARLIER_RUNS.items():
        est = cost.estimate_run(method, params, dataset, fit_on=fit_on, stages=tuple((stages or {}).items()),
                                threads=threads, model=model, processed_dir=ROOT / "data/processed")
        fit = (est.cpu_seconds - model["start_seconds"]) / max(1, min(threads, est.parallel))
        out.append({"run": name, "dataset": dataset, "method": method, "threads": threads,
                    "predicted_fit_wall_seconds": round(fit, 1), "measured_fit_wall_seconds": f"{low}-{high}",
                    "cpu_ratio": f"{low / fit:.3f}-{high / fit:.3f}", "source": source})
    table = pd.DataFrame(out)
    table.to_csv(CHECK_CSV, index=False)
    print(table.to_string(index=False))
    ours = table[table["measured_cpu_seconds"].notna()] if "measured_cpu_seconds" in table else table.iloc[:0]
    within = ((ours["cpu_ratio"].astype(float).between(0.5, 2)) & (ours["mem_ratio"].between(0.5, 2))).sum()
    print(f"{within} of {len(ours)} runs measured here within 2x in both CPU and memory")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("calibrate", "fit", "check", "table"))
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args(argv)
    RESULTS.mkdir(exist_ok=True)
    if args.command in ("calibrate", "check"):
        runs, path = (CALIBRATION_RUNS, CALIBRATION) if args.command == "calibrate" else (CHECK_RUNS, CHECK)
        claims = path.with_suffix(".claimed")  # names a running invocation has taken (two may share the list)
        for name, spec in runs.items():
            done = _latest(_read(path))
            claimed = set(claims.read_text().split("\n")) if claims.exists() else set()
            if args.only is not None and name not in args.only:
                continue
            if args.only is None and (name in done or name in claimed):
                continue
            with open(claims, "a") as f:
                f.write(name + "\n")
            run_one(name, spec, path)
    elif args.command == "fit":
        fit()
    else:
        table()
    return 0


if __name__ == "__main__":
    sys.exit(main())
