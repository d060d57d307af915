"""The workflow on a live SLURM cluster (issue #28).

A subset of the default profile is submitted through ``--workflow-profile profiles/slurm`` and, beside it, run by
the local executor in a second copy of the workflow: TAO Table 1 (four candidate runs ``C x max_depth``, a
selection, a final run, the table) and one run with two or more hyper-parameters in its name from every other
method family (greedy tree, non-greedy tree started from a selected CO2 tree, CO2 forest taking ``max_features``
from the random forest's selection, RGF). The SLURM side must give the same runs, selections and table; timings
differ and are left out.

Needs the executor plugin (``pip install -e ".[cluster]"``) and a cluster whose node is idle, e.g.
``sudo profiles/slurm/local-cluster.sh start``; otherwise the tests are skipped and say why. ``.ci/run`` starts
that cluster and sets ``TREEOPT_REQUIRE_SLURM=1``, under which a missing cluster fails instead of skipping.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import yaml

from treeopt.experiments.plan.build import build_plan
from treeopt.experiments.plan.config import load_config

REPO = Path(__file__).resolve().parents[1]
WORKFLOW_FILES = ("Snakefile", "workflow", "config.yaml", "profiles", "environment.yml")
TIMEOUT = 1800  # seconds for each of the two workflow runs; on an idle 2-core machine both take about 2-4 minutes

pytestmark = [pytest.mark.slurm, pytest.mark.slow]


def cluster_missing():
    """Why no SLURM workflow can run here, or None."""
    if find_spec("snakemake_executor_plugin_slurm") is None:
        return "snakemake-executor-plugin-slurm is not installed (pip install -e '.[cluster]')"
    if shutil.which("sinfo") is None:
        return "no SLURM client (sinfo) on PATH"
    try:
        shown = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return "sinfo did not answer within 30 s"
    if shown.returncode != 0:
        return f"no SLURM controller answers (sinfo: {shown.stderr.strip()})"
    states = [state.rstrip("*~#$@^-") for state in shown.stdout.split()]
    if not any(state in ("idle", "mix") for state in states):
        return f"no idle node (sinfo: {' '.join(states) or 'no nodes'})"
    return None


def subset_targets(plan):
    """The table and run folders the test asks for, looked up in the plan (so they follow the run naming)."""

    def candidate(dataset, method, **params):
        [path] = [path for path, run in plan.runs.items() if run.dataset == dataset and run.method == method
                  and all(dict(run.params).get(key) == value for key, value in params.items())]
        return path

    def final(dataset, method, experiment):
        [path] = [path for path, run in plan.finals.items()
                  if (run.dataset, run.method, run.experiment) == (dataset, method, experiment)]
        return path

    runs = {
        "greedy tree": candidate("wine", "cart", max_depth=2, min_samples_leaf=5),
        # waits for the selection among the CO2 trees of the same depth (its init_params are inherited)
        "non-greedy tree": candidate("wine", "nongreedy_tree", max_depth=2, nu=1, stable=False),
        # waits for the random forest's selection of max_features
        "oblique forest": candidate("wine", "co2_forest", nu=1),
        "RGF": final("rgf_synth_q4_cls", "rgf_min_clf", "rgf_synthetic_classification"),
    }
    return plan.table_path("tao_table1"), runs


def copy_workflow(dest):
    dest.mkdir(parents=True)
    for item in WORKFLOW_FILES:
        src = REPO / item
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dest / item)
    return dest


def snakemake(args, cwd):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))}
    env.setdefault("MPLBACKEND", "Agg")
    # own process group: a timeout stops Snakemake and what it started
    return subprocess.Popen([sys.executable, "-m", "snakemake", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def finish(proc, what):
    try:
        out, _ = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.terminate()  # Snakemake cancels the SLURM jobs it submitted on SIGTERM
        out, _ = proc.communicate(timeout=120)
        pytest.fail(f"{what} did not finish within {TIMEOUT} s:\n{out[-4000:]}")
    assert proc.returncode == 0, f"{what} failed (exit {proc.returncode}):\n{out[-6000:]}"
    return out


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """The same targets through SLURM and through the local executor, each in its own copy of the workflow."""
    missing = cluster_missing()
    if missing:
        message = f"{missing}; start a local one-node cluster with: sudo profiles/slurm/local-cluster.sh start"
        if os.environ.get("TREEOPT_REQUIRE_SLURM"):
            pytest.fail(message)
        pytest.skip(message)
    plan = build_plan(load_config(REPO / "config.yaml"))
    table, runs = subset_targets(plan)
    targets = [table, *runs.values()]
    root = tmp_path_factory.mktemp("slurm_vs_local")
    on_slurm, local = copy_workflow(root / "slurm"), copy_workflow(root / "local")
    # first status check 5 s after submission instead of the profile's 20 s (the chain has five levels)
    slurm = snakemake(["--workflow-profile", "profiles/slurm", "--slurm-init-seconds-before-status-checks", "5",
                       "--retries", "0", *targets], on_slurm)
    try:
        local_out = finish(snakemake(["--cores", "2", *targets], local), "the local run")
    finally:
        slurm_out = finish(slurm, "the SLURM run")
    return SimpleNamespace(plan=plan, table=table, runs=runs, slurm=on_slurm, local=local, slurm_out=slurm_out,
                           local_out=local_out)


def without_timings(value):
    """``value`` (nested dicts and lists) without the keys that hold seconds, which differ from run to run."""
    if isinstance(value, dict):
        return {key: without_timings(item) for key, item in value.items() if "seconds" not in key}
    if isinstance(value, list):
        return [without_timings(item) for item in value]
    return value


def run_folders(root):
    return sorted(path.parent.relative_to(root) for path in (root / "results/runs").rglob("params.yaml"))


def test_the_subset_has_multi_parameter_runs_of_every_family_a_selection_and_a_table(both):
    specs = {**both.plan.runs, **both.plan.finals}
    for family, path in both.runs.items():
        spec = specs[path]
        named = dict(spec.params or ()) | dict(getattr(spec, "point", ()) or ())
        assert len(named) >= 2, (family, path)
    tao = [path for path in both.plan.table_runs["tao_table1"]]
    [final] = [both.plan.finals[path] for path in tao]
    assert len(final.selection.candidates) >= 2 and all(len(c.params) >= 2 for c in final.selection.candidates)
    submitted = dict(re.findall(r"^(\w+)\s+(\d+)$", both.slurm_out.split("Job stats:", 1)[1], re.M))
    assert {"prepare_split", "candidate_run", "select", "final_run", "table"} <= set(submitted), submitted


def test_the_table_from_slurm_equals_the_local_one(both):
    got = pd.read_csv(both.slurm / both.table)
    want = pd.read_csv(both.local / both.table)
    timing = [column for column in want.columns if "seconds" in column]
    assert len(want) >= 1 and "test_error" in want.columns
    pd.testing.assert_frame_equal(got.drop(columns=timing), want.drop(columns=timing))


def test_runs_and_selections_from_slurm_equal_the_local_ones(both):
    folders = run_folders(both.local)
    assert run_folders(both.slurm) == folders
    assert {Path(path) for path in both.runs.values()} <= set(folders)
    for folder in folders:
        for name in ("params.yaml", "metrics.json"):
            read = yaml.safe_load if name.endswith(".yaml") else json.loads
            got, want = (read((root / folder / name).read_text()) for root in (both.slurm, both.local))
            assert without_timings(got) == without_timings(want), folder / name
    selections = sorted(p.relative_to(both.local) for p in (both.local / "results/selection").rglob("*.yaml"))
    assert len(selections) >= 3  # TAO's C, the CO2 trees' nu (non-greedy start), the random forest's max_features
    for path in selections:
        got, want = (yaml.safe_load((root / path).read_text()) for root in (both.slurm, both.local))
        assert without_timings(got) == without_timings(want), path


def test_every_run_names_its_slurm_job_and_that_log_is_kept(both):
    for folder in run_folders(both.slurm):
        text = (both.slurm / folder / "log.txt").read_text()
        match = re.search(r"SLURM job (\d+), log: (\S+)", text)
        assert match, f"{folder}/log.txt names no SLURM job:\n{text[:500]}"
        log = both.slurm / match[2]
        assert log.is_file() and log.name == f"{match[1]}.log", log
        # kept under results/logs/slurm/rule_RULE/WILDCARDS/, and it is the log of this very run
        assert log.is_relative_to(both.slurm / "results/logs/slurm"), log
        assert str(folder) in log.read_text(), log
    local_logs = [(both.local / folder / "log.txt").read_text() for folder in run_folders(both.local)]
    assert not any("SLURM job" in text for text in local_logs)


def test_slurm_jobs_say_their_rule_and_run(both):
    """The plugin names every job after the workflow run (its status queries find them by it); the comment holds
    the rule and the wildcards, e.g. rule_table_wildcards_tao_table1 (shown by `squeue -o %k`)."""
    run_id = re.search(r"SLURM run ID: (\S+)", both.slurm_out)[1]
    assert run_id.startswith("treeopt_")  # slurm-jobname-prefix of the profile
    shown = subprocess.run(["squeue", "--states=all", "-h", "--name", run_id, "-o", "%k"], capture_output=True,
                           text=True, timeout=60)
    comments = set(shown.stdout.split())
    # finished jobs stay visible for MinJobAge (local cluster: 10 minutes); the table job is the last one
    assert "rule_table_wildcards_tao_table1" in comments, shown.stdout + shown.stderr
    assert all(comment.startswith("rule_") for comment in comments)
    kept = {path.parent.parent.name for path in (both.slurm / "results/logs/slurm").rglob("*.log")}
    assert {"rule_prepare_split", "rule_candidate_run", "rule_select", "rule_final_run", "rule_table"} <= kept
