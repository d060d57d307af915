"""The Snakemake workflow end to end on a temporary copy with a tiny config."""

import copy
import json
import os
import re
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


# `q` chooses rf's max_features; the rf of `inheriting` takes it from there (its candidates carry the marker
# and a selection of their own), and the rf of `inheriting_fixed` (a single grid point) takes it through
# `inheriting`: a chain that ends at q's selection.
TINY_INHERIT = {
    **{key: TINY[key] for key in ("profile", "data", "datasets")},
    "profiles": {"tiny": {"seeds": [0], "experiments": {
        "q": {"reports": ["co2_table1"], "datasets": ["wine"], "sweep": {"n_estimators": [4]},
              "methods": {"rf": {"grid": {"max_features": [1, "p^0.9"]}, "params": {"max_depth": 3}}}},
        "inheriting": {"reports": ["co2_table1"], "datasets": ["wine"], "sweep": {"n_estimators": [2, 3]},
                       "select_at": {"n_estimators": 3},
                       "methods": {"rf": {"grid": {"max_depth": [2, 4]},
                                          "inherit": {"max_features": {"method": "rf", "experiment": "q"}}}}},
        "inheriting_fixed": {"reports": ["co2_table1"], "datasets": ["wine"], "sweep": {"n_estimators": [5]},
                             "methods": {"rf": {"params": {"max_depth": 3}, "inherit": {
                                 "max_features": {"method": "rf", "experiment": "inheriting"}}}}},
    }}},
}


def plan_of(config):
    """The workflow's plan of a test config (run folders are named by identity: look them up by experiment)."""
    from treeopt.experiments.plan.build import build_plan
    from treeopt.experiments.plan.config import validate_config

    return build_plan(validate_config(copy.deepcopy(config)))


def final_dir(config, experiment, method, **point):
    found = plan_of(config).find(experiment=experiment, method=method, **point)
    assert len(found) == 1, found
    return found[0]


Q_SELECTION, = plan_of(TINY_INHERIT).find("selection", experiment="q")


def snakemake(workdir, *args):
    cmd = [sys.executable, "-m", "snakemake", "-s", str(workdir / "Snakefile"), "-d", str(workdir), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900)  # generous: shared CI machines


def copy_workflow(root, config):
    shutil.copy(REPO / "Snakefile", root / "Snakefile")
    shutil.copy(REPO / "environment.yml", root / "environment.yml")  # every rule's conda: environment
    shutil.copytree(REPO / "workflow", root / "workflow", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return root


@pytest.fixture(scope="module")
def workflow_copy(tmp_path_factory):
    return copy_workflow(tmp_path_factory.mktemp("wf"), TINY)


@pytest.fixture(scope="module")
def finished(workflow_copy):
    done = snakemake(workflow_copy, "--cores", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    return workflow_copy


def test_tables_and_figures_are_made(finished):
    # a profile other than "default" writes results/{profile}/ and results/{profile}/figures/
    assert not (finished / "results/tables").exists() and not (finished / "figures").exists()
    depth = pd.read_csv(finished / "results/tiny/nongreedy_fig2.csv")
    assert list(depth.columns[:5]) == ["dataset", "method", "depth", "train_accuracy", "test_accuracy"]
    assert sorted(depth["depth"]) == [1, 3]
    assert depth.set_index("depth").loc[3, "train_accuracy"] > depth.set_index("depth").loc[1, "train_accuracy"]
    forest = pd.read_csv(finished / "results/tiny/co2_table1.csv")
    assert sorted(forest["n_trees"]) == [2, 5]
    for name in ("nongreedy_fig2_wine", "co2_fig2_wine"):
        for ext in ("png", "pdf"):
            assert (finished / "results/tiny/figures" / f"{name}.{ext}").stat().st_size > 1000


def test_selection_and_final_runs_follow_the_protocol(finished):
    selection, = plan_of(TINY).find("selection", experiment="depth", max_depth=3)
    sel = yaml.safe_load((finished / selection).read_text())
    scores = [c["val"]["accuracy"] for c in sel["candidates"]]
    assert sel["chosen"] == sel["candidates"][scores.index(max(scores))]["params"]
    final = finished / final_dir(TINY, "depth", "cart", max_depth=3)
    setup = yaml.safe_load((final / "params.yaml").read_text())
    assert setup["params"] == sel["chosen"] and setup["fit_on"] == "trainval"
    metrics = yaml.safe_load((final / "metrics.json").read_text())
    candidate = yaml.safe_load((finished / sel["candidates"][0]["run"] / "metrics.json").read_text())
    assert metrics["n_val"] == 0 and metrics["n_train"] == candidate["n_train"] + candidate["n_val"]
    # the forest had nothing to choose: no selection file, parameters straight from the config
    assert not (finished / "results/selection/wine/rf").exists()
    rf = yaml.safe_load((finished / final_dir(TINY, "forest", "rf", n_estimators=5) / "params.yaml").read_text())
    assert rf["params"] == {"max_depth": 3, "n_estimators": 5}


@pytest.mark.slow
def test_report_holds_every_table_and_figure_with_its_paper_caption(finished):
    done = snakemake(finished, "--report", "report.html")
    assert done.returncode == 0, done.stderr[-3000:]
    html = (finished / "report.html").read_text()
    for name in ("nongreedy_fig2.csv", "co2_table1.csv", "nongreedy_fig2_wine.png", "co2_fig2_wine.png"):
        assert name in html, name
    # captions name the paper item each output reproduces
    assert "Fig. 2</strong> of the non-greedy trees paper" in html or "Fig. 2** of the non-greedy" in html
    assert "Table I" in html and "CO2 Forest paper" in html


def test_second_run_has_nothing_to_do(finished):
    again = snakemake(finished, "--cores", "1")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Nothing to be done" in again.stdout + again.stderr


def test_misspelt_config_key_stops_the_workflow_naming_it(workflow_copy):
    bad = snakemake(workflow_copy, "-n", "--config", "profil=paper")
    assert bad.returncode != 0
    assert "unknown key 'profil'" in bad.stdout + bad.stderr
    assert "did you mean 'profile'" in bad.stdout + bad.stderr


def dry_run_jobs(text):
    """The jobs of a `snakemake -n` listing: rule name and its input, output and reason lines."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", text):
        match = re.match(r"(?:local)?rule (\w+):", block.strip())
        if match:
            fields = dict(re.findall(r"^\s+(input|output|reason): (.*)$", block, flags=re.M))
            jobs.append({"rule": match.group(1), **fields})
    return jobs


def test_dry_run_orders_inheriting_runs_after_the_selection_they_read(tmp_path):
    dry = snakemake(copy_workflow(tmp_path, TINY_INHERIT), "-n")
    assert dry.returncode == 0, dry.stderr[-3000:]
    jobs = dry_run_jobs(dry.stdout + dry.stderr)
    assert [j["rule"] for j in jobs if j.get("output") == Q_SELECTION] == ["select"]
    marked = [j for j in jobs if j["rule"] == "candidate_run" and "max_features-from-rf" in j["output"]]
    assert sorted(j["output"].rpartition("__")[0] for j in marked) == [
        f"results/runs/wine/rf/max_depth-{d}_max_features-from-rf_n_estimators-3" for d in (2, 4)]
    plan = plan_of(TINY_INHERIT)
    inheriting = set(plan.find(experiment="inheriting") + plan.find(experiment="inheriting_fixed"))
    finals = [j for j in jobs if j["rule"] == "final_run" and j["output"] in inheriting]
    assert len(finals) == 3
    for job in marked + finals:  # waits for q's selection: an input made by another job
        assert Q_SELECTION in job["input"].split(", ")
        assert Q_SELECTION in job["reason"].partition("Input files updated by another job: ")[2]
    # q's own candidates do not wait for anything but the split
    q_runs = [j for j in jobs if j["rule"] == "candidate_run" and "n_estimators-4_" in j["output"]]
    assert len(q_runs) == 2 and all(j["input"] == "data/processed/wine/split0.npz" for j in q_runs)


def test_bad_inherit_reference_stops_the_workflow_naming_it(tmp_path):
    config = copy.deepcopy(TINY_INHERIT)
    config["profiles"]["tiny"]["experiments"]["inheriting"]["methods"]["rf"]["inherit"]["max_features"][
        "experiment"] = "qq"
    bad = snakemake(copy_workflow(tmp_path, config), "-n")
    assert bad.returncode != 0
    assert ("experiment 'inheriting', method 'rf', data set 'wine': max_features is inherited from method 'rf' of "
            "experiment 'qq', but profile 'tiny' has no experiment 'qq' (did you mean 'q'?)") in bad.stdout + bad.stderr


@pytest.fixture(scope="module")
def inherit_finished(tmp_path_factory):
    root = copy_workflow(tmp_path_factory.mktemp("wf_inherit"), TINY_INHERIT)
    done = snakemake(root, "--cores", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    return root


def test_inherited_value_is_the_referenced_choice_in_every_run(inherit_finished):
    root = inherit_finished
    chosen = yaml.safe_load((root / Q_SELECTION).read_text())["chosen"]["max_features"]
    assert chosen in (1, "p^0.9")
    plan = plan_of(TINY_INHERIT)
    inheriting = [root / r.dir for r in plan.runs.values() if dict(r.params).get("n_estimators") == 3]
    assert len(inheriting) == 2
    finals = [root / final_dir(TINY_INHERIT, "inheriting", "rf", n_estimators=n) for n in (2, 3)]
    fixed_final = root / final_dir(TINY_INHERIT, "inheriting_fixed", "rf")
    for run in [*inheriting, *finals, fixed_final]:
        setup = yaml.safe_load((run / "params.yaml").read_text())
        metrics = json.loads((run / "metrics.json").read_text())
        assert setup["params"]["max_features"] == metrics["params"]["max_features"] == chosen, run
        assert setup["inherited"] == {"max_features": Q_SELECTION}
    own_selection, = plan.find("selection", experiment="inheriting")
    own = yaml.safe_load((root / own_selection).read_text())
    assert own["chosen"]["max_features"] == chosen
    assert {c["params"]["max_features"] for c in own["candidates"]} == {chosen}
    fixed = yaml.safe_load((fixed_final / "params.yaml").read_text())
    assert fixed["params"] == {"max_depth": 3, "max_features": chosen, "n_estimators": 5}
    # the rerun command in params.yaml reproduces the run with the resolved value
    from treeopt.experiments.run.runner import rerun

    old_cwd = os.getcwd()
    os.chdir(root)
    try:
        again = rerun(finals[0] / "params.yaml", root / "again")
    finally:
        os.chdir(old_cwd)
    first = json.loads((finals[0] / "metrics.json").read_text())
    assert again["params"] == first["params"] and again["test"] == first["test"]
    table = pd.read_csv(root / "results/tiny/co2_table1.csv")
    assert sorted(table["n_trees"]) == [2, 3, 4, 5] and table["test_error"].notna().all()


def test_report_builds_a_partial_table_from_the_final_runs_that_exist(tmp_path):
    root = copy_workflow(tmp_path, TINY)
    one = final_dir(TINY, "forest", "rf", n_estimators=2)
    done = snakemake(root, "--cores", "1", one)
    assert done.returncode == 0, done.stderr[-3000:]
    cmd = [sys.executable, "-m", "treeopt.experiments", "report", "co2_table1", "--out", "partial"]
    out = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "1 of 2 final runs" in out.stdout
    table = pd.read_csv(root / "partial/co2_table1.csv")
    assert list(table["n_trees"]) == [2] and list(table["method"]) == ["rf"]
    assert (root / "partial/figures/co2_fig2_wine.png").is_file()
    assert not (root / "results/tiny/co2_table1.csv").exists()  # the workflow's own table is not faked
    # --merge: a row another clone made (another data set) stays; the rows of the pairs built here are replaced
    other = table.assign(dataset="letter", test_error=1.5)
    pd.concat([table.assign(test_error=99.0), other]).to_csv(root / "partial/co2_table1.csv", index=False)
    merged = subprocess.run([*cmd, "--merge"], cwd=root, capture_output=True, text=True, timeout=120)
    assert merged.returncode == 0, merged.stderr
    assert "1 rows kept, 1 built" in merged.stdout
    again = pd.read_csv(root / "partial/co2_table1.csv")
    assert list(zip(again["dataset"], again["test_error"])) == [("letter", 1.5), ("wine", table["test_error"].iloc[0])]
    missing = subprocess.run([*cmd[:4], "no_such_table", "--out", "partial"], cwd=root, capture_output=True,
                             text=True, timeout=120)
    assert missing.returncode == 2 and "co2_table1" in missing.stderr
    # without --out: the profile's own folders, as the workflow writes them (results/{profile}/figures)
    default_out = subprocess.run(cmd[:5], cwd=root, capture_output=True, text=True, timeout=120)
    assert default_out.returncode == 0, default_out.stderr
    assert (root / "results/tiny/co2_table1.csv").is_file()
    assert (root / "results/tiny/figures/co2_fig2_wine.png").is_file()
