"""The SLURM profile, per-rule resources, report captions and the output layout of the profiles."""

import shutil
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest
import yaml

from treeopt.experiments.report.captions import NOT_IN_A_PAPER, CAPTIONS, caption, category, paper_item
from treeopt.experiments.plan.config import load_config
from treeopt.experiments.plan.build import build_plan
from treeopt.experiments.plan.specs import output_dirs
from treeopt.experiments.plan.reports import FIGURES, REPORTS, TABLES

REPO = Path(__file__).resolve().parents[1]
PROFILE = REPO / "profiles/slurm/config.yaml"


def test_slurm_profile_parses_and_names_the_slurm_executor():
    profile = yaml.safe_load(PROFILE.read_text())
    assert profile["executor"] == "slurm"
    assert profile["jobs"] >= 1 and profile["latency-wait"] > 0
    assert {"mem_mb", "runtime"} <= set(profile["default-resources"])


def test_every_rule_declares_memory_and_runtime():
    for smk in ("data.smk", "train.smk", "report.smk"):
        text = (REPO / "workflow/rules" / smk).read_text()
        for block in text.split("\nrule ")[1:]:
            name = block.split(":", 1)[0]
            assert "resources:" in block and "mem_mb=" in block and "runtime=" in block, f"{smk}: rule {name}"


@pytest.mark.slow
def test_dry_run_plans_the_paper_profile_with_the_slurm_profile(tmp_path):
    for item in ("Snakefile", "workflow", "config.yaml", "profiles", "environment.yml"):
        src = REPO / item
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / item)
    # with the plugin installed Snakemake loads the slurm executor; without it the profile's resources are
    # still checked by a plain dry run (the executor key and the plugin's own settings are dropped)
    args = ["--workflow-profile", "profiles/slurm"]
    if find_spec("snakemake_executor_plugin_slurm") is None:
        profile = yaml.safe_load(PROFILE.read_text())
        profile = {key: value for key, value in profile.items() if key != "executor" and not key.startswith("slurm-")}
        (tmp_path / "profiles/slurm/config.yaml").write_text(yaml.safe_dump(profile))
    target = "results/paper/co2_table2_jaccard.csv"
    cmd = [sys.executable, "-m", "snakemake", *args, "--config", "profile=paper", "-n", target]
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    plan = build_plan(load_config(REPO / "config.yaml", ["profile=paper"]))
    run_dir, = plan.find(experiment="co2_segmentation_trees", method="seg_co2", n_estimators=32)
    assert run_dir in out
    # every run asks for what the cost model predicts times its safety factors (treeopt.experiments.infra.resources);
    # tables for 1 GB / 10 min
    from treeopt.experiments.infra.resources import run_mem_mb, run_runtime

    final = plan.finals[run_dir]
    at = out.index(f"output: {run_dir}\n")  # the final run's own job (its blocks' folders are named after it)
    job = out[out.rindex("rule final_run:", 0, at):out.index("resources:", at) + 300]
    mem, minutes = run_mem_mb("paper", final, plan.n_jobs), run_runtime("paper", final, plan.n_jobs)
    assert f"mem_mb={mem}" in job and f"runtime={minutes}" in job, job
    assert "mem_mb=1000" in out


def test_every_report_output_has_a_caption_naming_its_paper_item():
    for name in sorted(REPORTS):
        text = caption(name, profile="default")
        if name in NOT_IN_A_PAPER:  # our own additions say so instead
            assert "Not in any paper" in text, name
            continue
        paper, item = paper_item(name)
        assert paper is not None, name
        assert item.replace("Table 1", "Table I").replace("Table 2", "Table II") in text or item in text, name
        assert category(name) != "Other"
    assert "Table II" in CAPTIONS["co2_table2_jaccard"] and "Fig. 4" in CAPTIONS["co2_fig4_jaccard"]
    assert "Fig. 3" in caption("co2_fig3_segmentation") and "(data set lfw, profile paper)" in caption(
        "co2_fig3_segmentation", "lfw", "paper")
    assert caption("tao_fig1_path").startswith("Reproduces **Fig. 1**") and "Carreira" in caption("tao_fig1_path")


def test_one_output_layout_for_every_profile():
    assert output_dirs("default") == ("results/tables", "figures")
    assert output_dirs("paper") == ("results/paper", "results/paper/figures")
    for profile, tables, figures in (("default", "results/tables/", "figures/"),
                                     ("paper", "results/paper/", "results/paper/figures/")):
        plan = build_plan(load_config(REPO / "config.yaml", [f"profile={profile}"]))
        targets = plan.targets()
        assert all(t.startswith(tables) for t in targets if t.endswith(".csv"))
        assert all(t.startswith(figures) for t in targets if t.endswith((".png", ".pdf")))
        assert plan.table_path("co2_table2_jaccard") == f"{tables}co2_table2_jaccard.csv"
    assert set(TABLES) >= {"co2_table2_jaccard", "co2_fig4_jaccard", "co2_fig3_segmentation"}
    assert {"co2_fig4_jaccard", "co2_fig3_segmentation"} <= set(FIGURES)


def test_runs_ask_for_memory_and_time_by_their_size():
    """Resources come from the cost model: a 1000-tree CO2 Forest asks for more time than a 30-tree one but not
    for more memory (it is scored tree by tree), a scikit-learn forest keeps its trees and asks for more."""
    from treeopt.experiments.infra.resources import run_mem_mb, run_runtime

    plan = build_plan(load_config(REPO / "config.yaml", overrides={"profile": "paper"}))
    asked = {}
    for spec in plan.finals.values():
        if spec.dataset == "connect4" and spec.method in ("co2_forest", "rf"):
            size = max(v for _, values in spec.stages for v in values)
            asked[spec.method, size] = (run_mem_mb("paper", spec, 2), run_runtime("paper", spec, 2))
    assert asked["co2_forest", 1000][1] > asked["co2_forest", 30][1]
    assert asked["co2_forest", 1000][0] == asked["co2_forest", 30][0] < 4000
    assert asked["rf", 1000][0] > asked["co2_forest", 1000][0]


def test_a_run_inside_a_slurm_job_names_the_job_and_its_log(monkeypatch, tmp_path):
    """The log path comes from `scontrol show job -o` (one line of Key=Value fields; a path may hold spaces)."""
    from treeopt.experiments.infra import joblog

    monkeypatch.chdir(tmp_path)
    log = tmp_path / "results/logs/slurm/rule_candidate_run/wine cart_0/12.log"
    line = (f"JobId=12 JobName=treeopt_abc UserId=root(0) Comment=rule_candidate_run_wildcards_wine StdErr={log} "
            f"StdIn=/dev/null StdOut={log} Power= TresPerTask=cpu:1\n")
    calls = []

    def scontrol(cmd, **kwargs):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, stdout=line, stderr="")

    monkeypatch.setattr(joblog.subprocess, "run", scontrol)
    assert joblog.slurm_job({}) is None and calls == []  # not in a SLURM job: nothing asked
    assert joblog.slurm_job({"SLURM_JOB_ID": "12"}) == (
        "SLURM job 12, log: results/logs/slurm/rule_candidate_run/wine cart_0/12.log")
    assert calls == [["scontrol", "show", "job", "-o", "12"]]

    def missing(cmd, **kwargs):
        raise FileNotFoundError("scontrol")

    monkeypatch.setattr(joblog.subprocess, "run", missing)
    assert joblog.slurm_job({"SLURM_JOB_ID": "12"}) == "SLURM job 12 (scontrol did not name its log)"
