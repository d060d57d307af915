"""The Snakemake workflow end to end on a temporary copy with a tiny config."""

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]

TINY = {
    "profile": "tiny",
    "data": {"mirror": None, "raw_dir": "data/raw", "processed_dir": "data/processed",
             "lock_file": "data/checksums.lock.yaml"},
    "datasets": {"wine": {"task": "classification", "format": "sklearn", "options": {"loader": "wine"},
                          "split": {"protocol": "random"}, "scale": "none"}},
    "profiles": {"tiny": {"seeds": [0], "experiments": {
        "depth": {"reports": ["nongreedy_fig2"], "datasets": ["wine"], "sweep": {"max_depth": [1, 3]},
                  "methods": {"cart": {"grid": {"min_samples_leaf": [1, 20]}}}},
        "forest": {"reports": ["co2_table1", "co2_fig2"], "datasets": ["wine"],
                   "sweep": {"n_estimators": [2, 5]}, "methods": {"rf": {"params": {"max_depth": 3}}}},
    }}},
}


def snakemake(workdir, *args):
    cmd = [sys.executable, "-m", "snakemake", "-s", str(workdir / "Snakefile"), "-d", str(workdir), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def workflow_copy(tmp_path_factory):
    root = tmp_path_factory.mktemp("wf")
    shutil.copy(REPO / "Snakefile", root / "Snakefile")
    shutil.copytree(REPO / "workflow", root / "workflow", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "config.yaml").write_text(yaml.safe_dump(TINY, sort_keys=False))
    return root


@pytest.fixture(scope="module")
def finished(workflow_copy):
    done = snakemake(workflow_copy, "--cores", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    return workflow_copy


def test_tables_and_figures_are_made(finished):
    depth = pd.read_csv(finished / "results/tables/nongreedy_fig2.csv")
    assert list(depth.columns[:5]) == ["dataset", "method", "depth", "train_accuracy", "test_accuracy"]
    assert sorted(depth["depth"]) == [1, 3]
    assert depth.set_index("depth").loc[3, "train_accuracy"] > depth.set_index("depth").loc[1, "train_accuracy"]
    forest = pd.read_csv(finished / "results/tables/co2_table1.csv")
    assert sorted(forest["n_trees"]) == [2, 5]
    for name in ("nongreedy_fig2_wine", "co2_fig2_wine"):
        for ext in ("png", "pdf"):
            assert (finished / "figures" / f"{name}.{ext}").stat().st_size > 1000


def test_selection_and_final_runs_follow_the_protocol(finished):
    sel = yaml.safe_load((finished / "results/selection/wine/cart/depth/max_depth=3/seed0.yaml").read_text())
    scores = [c["val"]["accuracy"] for c in sel["candidates"]]
    assert sel["chosen"] == sel["candidates"][scores.index(max(scores))]["params"]
    final = finished / "results/runs/wine/cart/final-depth-max_depth=3/seed0"
    setup = yaml.safe_load((final / "params.yaml").read_text())
    assert setup["params"] == sel["chosen"] and setup["fit_on"] == "trainval"
    metrics = yaml.safe_load((final / "metrics.json").read_text())
    candidate = yaml.safe_load((finished / sel["candidates"][0]["run"] / "metrics.json").read_text())
    assert metrics["n_val"] == 0 and metrics["n_train"] == candidate["n_train"] + candidate["n_val"]
    # the forest had nothing to choose: no selection file, parameters straight from the config
    assert not (finished / "results/selection/wine/rf").exists()
    rf = yaml.safe_load((finished / "results/runs/wine/rf/final-forest-n_estimators=5/seed0/params.yaml").read_text())
    assert rf["params"] == {"max_depth": 3, "n_estimators": 5}


def test_second_run_has_nothing_to_do(finished):
    again = snakemake(finished, "--cores", "1")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Nothing to be done" in again.stdout + again.stderr


def test_misspelt_config_key_stops_the_workflow_naming_it(workflow_copy):
    bad = snakemake(workflow_copy, "-n", "--config", "profil=paper")
    assert bad.returncode != 0
    assert "unknown key 'profil'" in bad.stdout + bad.stderr
    assert "did you mean 'profile'" in bad.stdout + bad.stderr
