"""Forests split into tree blocks in the workflow (`forest_block_trees`): the paper profile's 1000-tree OC1 Forest is
20 block jobs and one merge (dry run); a tiny workflow runs blocks and merge, and the run folder is what one job
writes (rerun of its params.yaml)."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from treeopt.experiments.config import load_config
from treeopt.experiments.plan import BLOCKS_DIR, build_plan

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
from test_workflow_snakemake import TINY, copy_workflow, dry_run_jobs, plan_of, snakemake  # noqa: E402

TIMINGS = ("fit_seconds", "predict_seconds", "compile_seconds", "fit_compile_seconds", "git_commit", "versions")

TINY_BLOCKS = {
    **{key: TINY[key] for key in ("profile", "data", "datasets")},
    "profiles": {"tiny": {"seeds": [0], "forest_block_trees": {"co2_forest": 4}, "experiments": {
        "forest": {"reports": ["co2_table1"], "datasets": ["wine"], "sweep": {"n_estimators": [2, 3, 10]},
                   "staged": {"n_estimators": [3, 10]},
                   "methods": {"co2_forest": {"params": {"nu": 1.0, "learning_rate": 0.03, "max_features": 3}}}},
    }}},
}


def test_paper_profile_splits_a_1000_tree_oc1_forest_into_block_jobs_and_one_merge(tmp_path):
    plan = build_plan(load_config(REPO / "config.yaml", ["profile=paper"]))
    target, = plan.find(experiment="co2_forest_size_oblique", method="oc1_forest", dataset="satimage", seed=0,
                        n_estimators=1000)
    small, = plan.find(experiment="co2_forest_size_oblique", method="oc1_forest", dataset="satimage", seed=0,
                       n_estimators=30)
    final = plan.finals[target]
    assert final.block_trees == 50 and len(final.blocks) == 20 and plan.finals[small].block_trees is None
    copy_workflow(tmp_path, {})
    shutil.copy(REPO / "config.yaml", tmp_path / "config.yaml")  # the repository's config, paper profile
    done = subprocess.run([sys.executable, "-m", "snakemake", "--config", "profile=paper", "-n", target],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    jobs = dry_run_jobs(out)
    blocks = [job for job in jobs if job["rule"] == "forest_block"]
    merges = [job for job in jobs if job["rule"] == "final_run"]
    assert len(blocks) == 20 and len(merges) == 1
    assert sorted(job["output"] for job in blocks) == sorted(final.block_dir(a, b) for a, b in final.blocks)
    assert all(job["output"].startswith(f"{BLOCKS_DIR}/satimage/oc1_forest/") for job in blocks)
    assert merges[0]["output"] == target
    assert all(final.block_dir(a, b) in merges[0]["input"] for a, b in final.blocks)
    # each block asks the cluster for what the cost model predicts of 50 trees, the merge for the merge's cost
    from treeopt.experiments.resources import run_mem_mb, run_runtime

    def resources(output):
        listing = out[out.index(f"output: {output}\n"):]
        return re.search(r"resources: (.*)", listing).group(1) + ","

    block = plan.blocks[final.block_dir(0, 50)]
    asked = resources(block.dir)
    assert f"runtime={run_runtime('paper', block)}," in asked and f"mem_mb={run_mem_mb('paper', block)}," in asked
    assert f"runtime={run_runtime('paper', final)}," in resources(target)


def test_a_tiny_workflow_merges_its_blocks_into_the_run_one_job_writes(tmp_path):
    (tmp_path / "wf").mkdir()
    root = copy_workflow(tmp_path / "wf", TINY_BLOCKS)
    plan = plan_of(TINY_BLOCKS)
    run_dir, = plan.find(experiment="forest", method="co2_forest", n_estimators=10)
    small, = plan.find(experiment="forest", method="co2_forest", n_estimators=3)
    assert [b.dir.rsplit("/", 1)[1] for b in plan.blocks.values()] == ["trees0-4", "trees4-8", "trees8-10"]
    assert plan.finals[small].block_trees is None  # 3 trees fit in one block: one job, summed as always
    done = snakemake(root, "--cores", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    for block in plan.blocks:
        assert sorted(p.name for p in (root / block).iterdir()) == [".snakemake_timestamp", "block.json", "log.txt",
                                                                  "sums.npz"]
    assert not [p for p in (root / BLOCKS_DIR).rglob(".*tmp*")]  # no temporaries left
    merged = json.loads((root / run_dir / "metrics.json").read_text())
    assert [s["n_estimators"] for s in merged["stages"]] == [10] and merged["tree"]["n_trees"] == 10
    setup = yaml.safe_load((root / run_dir / "params.yaml").read_text())
    assert setup["block_trees"] == 4 and len(setup["merged_blocks"]) == 3
    # the same run in one job (rerun sums in the recorded blocks of 4): the same metrics.json outside timings
    env_cmd = [sys.executable, "-m", "treeopt.experiments", "rerun", str(root / run_dir / "params.yaml"), "--out",
               str(tmp_path / "one_job")]
    again = subprocess.run(env_cmd, cwd=root, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    one_job = json.loads((tmp_path / "one_job" / "metrics.json").read_text())
    assert {k: v for k, v in one_job.items() if k not in TIMINGS} == {
        k: v for k, v in merged.items() if k not in TIMINGS}
    table = (root / "results/tiny/co2_table1.csv").read_text()
    assert "co2_forest" in table
    second = snakemake(root, "-n")
    assert "Nothing to be done" in second.stdout + second.stderr
