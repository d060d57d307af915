"""Issue 12, fault injection: a real Snakemake run of a tiny workflow is killed mid-way (SIGKILL to its whole
process group), resumed the way the README's "When a run is interrupted" says, and must end with the same
results as an uninterrupted run and no temporary left behind."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
TMP_NAME = re.compile(r"\.tmp|\.old-")

CONFIG = {
    "profile": "tiny",
    "data": {"mirror": None, "raw_dir": "data/raw", "processed_dir": "data/processed",
             "lock_file": "data/checksums.lock.yaml"},
    "datasets": {"wine": {"task": "classification", "format": "sklearn", "options": {"loader": "wine"},
                          "split": {"protocol": "random"}, "scale": "none"}},
    "profiles": {"tiny": {"seeds": [0], "experiments": {
        "forest": {"reports": ["co2_table1"], "datasets": ["wine"], "sweep": {"n_estimators": [300, 400]},
                   "methods": {"rf": {"params": {"max_depth": 6}}}},
    }}},
}
TIMING_KEYS = {"fit_seconds", "fit_cpu_seconds", "predict_seconds", "compile_seconds", "fit_compile_seconds"}


def snakemake_cmd(root, *args):
    return [sys.executable, "-m", "snakemake", "-s", str(root / "Snakefile"), "-d", str(root), *args]


def make_copy(root):
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "Snakefile", root / "Snakefile")
    shutil.copytree(REPO / "workflow", root / "workflow", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "environment.yml", root / "environment.yml")  # the rules' conda: lines name it
    (root / "config.yaml").write_text(yaml.safe_dump(CONFIG, sort_keys=False))
    return root


def run(root, *args):
    done = subprocess.run(snakemake_cmd(root, *args), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def temporaries(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if ".snakemake" not in p.parts and TMP_NAME.search(p.name))


def results(root):
    """Every run's metrics (without timings) and the table (without timing columns)."""
    runs = {}
    for path in sorted((root / "results/runs").rglob("metrics.json")):
        metrics = json.loads(path.read_text())
        runs[str(path.parent.relative_to(root))] = {k: v for k, v in metrics.items() if k not in TIMING_KEYS}
    table = pd.read_csv(root / "results" / CONFIG["profile"] / "co2_table1.csv")  # a non-default profile's folder
    table = table[[c for c in table.columns if "seconds" not in c]]
    return runs, table


def start_and_kill(root):
    """Start the workflow in its own process group and SIGKILL the group while a run is being fitted (its
    temporary folder exists, without metrics yet) after another run has finished. True when it was killed."""
    child = subprocess.Popen(snakemake_cmd(root, "--cores", "1"), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    runs_dir = root / "results/runs"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and child.poll() is None:
        if runs_dir.exists():
            fitting = [p for p in runs_dir.rglob(".seed0.tmp-*") if not (p / "metrics.json").exists()]
            if fitting and any(runs_dir.rglob("metrics.json")):
                break
        time.sleep(0.02)
    if child.poll() is not None:
        return False
    os.killpg(child.pid, signal.SIGKILL)
    child.wait(timeout=60)
    time.sleep(0.5)  # let the killed job processes go
    return bool(temporaries(root))


@pytest.mark.slow
def test_killed_run_resumes_to_the_same_results_without_temporaries(tmp_path):
    reference = make_copy(tmp_path / "reference")
    run(reference, "--cores", "1")

    root = make_copy(tmp_path / "killed")
    for attempt in range(3):  # the kill must land while a run is being fitted; a lost race just tries again
        if attempt:
            run(root, "--unlock")
        if start_and_kill(root):
            break
    left = temporaries(root)
    assert left, "expected the killed run's temporary folder"

    # a plain rerun refuses (the lock of the killed process is still there) ...
    plain = subprocess.run(snakemake_cmd(root, "--cores", "1"), capture_output=True, text=True, timeout=600)
    assert plain.returncode != 0 and re.search(r"lock|incomplete", plain.stdout + plain.stderr, re.I)
    # ... the documented recovery works
    run(root, "--unlock")
    resumed = run(root, "--cores", "1", "--rerun-incomplete")
    assert "removed stale temporary" in resumed.stderr
    assert temporaries(root) == []

    got, want = results(root), results(reference)
    assert len(got[0]) == 2 and got[0] == want[0]  # every run: same metrics, parameters, trees' stats
    pd.testing.assert_frame_equal(got[1], want[1])
