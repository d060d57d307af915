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

from treeopt.experiments.plan.build import build_plan
from treeopt.experiments.plan.config import load_config
from treeopt.experiments.plan.specs import BLOCKS_DIR

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


def paper_dry_run(tmp_path, target):
    """``(output, jobs)`` of ``snakemake -n target`` in a copy of the workflow with the repository's config, paper
    profile."""
    copy_workflow(tmp_path, {})
    shutil.copy(REPO / "config.yaml", tmp_path / "config.yaml")
    done = subprocess.run([sys.executable, "-m", "snakemake", "--config", "profile=paper", "-n", target],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    return out, dry_run_jobs(out)


def test_paper_profile_splits_a_1000_tree_oc1_forest_into_block_jobs_and_one_merge(tmp_path):
    plan = build_plan(load_config(REPO / "config.yaml", ["profile=paper"]))
    target, = plan.find(experiment="co2_forest_size_oblique", method="oc1_forest", dataset="satimage", seed=0,
                        n_estimators=1000)
    small, = plan.find(experiment="co2_forest_size_oblique", method="oc1_forest", dataset="satimage", seed=0,
                       n_estimators=30)
    final = plan.finals[target]
    assert final.block_trees == 50 and len(final.blocks) == 20 and plan.finals[small].block_trees is None
    out, jobs = paper_dry_run(tmp_path, target)
    blocks = [job for job in jobs if job["rule"] == "forest_block"]
    merges = [job for job in jobs if job["rule"] == "final_run"]
    assert len(blocks) == 20 and len(merges) == 1
    assert sorted(job["output"] for job in blocks) == sorted(final.block_dir(a, b) for a, b in final.blocks)
    assert all(job["output"].startswith(f"{BLOCKS_DIR}/satimage/oc1_forest/") for job in blocks)
    assert merges[0]["output"] == target
    assert all(final.block_dir(a, b) in merges[0]["input"] for a, b in final.blocks)
    # each block asks the cluster for what the cost model predicts of 50 trees, the merge for the merge's cost
    from treeopt.experiments.infra.resources import run_mem_mb, run_runtime

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


FACES = {"task": "segmentation", "format": "synthetic",
         "options": {"generator": "faces", "n_images": 20, "image_size": 40},
         "split": {"protocol": "random", "n_test": 4, "n_val": 3}, "scale": "none"}
TINY_SEGMENTATION = {
    **{key: TINY[key] for key in ("profile", "data")},
    "datasets": {"faces": FACES},
    "profiles": {"tiny": {"seeds": [0], "forest_block_trees": {"seg_rf": 8}, "experiments": {
        "trees": {"reports": ["co2_table2_jaccard"], "datasets": ["faces"], "sweep": {"n_estimators": [16]},
                  "methods": {"seg_rf": {
                      "params": {"windows_per_tree": 160, "window_size": 11, "border": 15, "n_stats_windows": 300},
                      "grid": {"max_depth": [2, 3]}}}},
    }}},
}


def test_paper_profile_splits_segmentation_candidates_and_finals_into_blocks(tmp_path):
    """The 16-tree CO2 segmentation candidates (~5 CPU-h each in one job) and the 32-tree finals are 4-tree block
    jobs and a merge each; the plan's longest job stays under 4 hours."""
    from treeopt.experiments.infra.cost_plan import estimate_plan

    plan = build_plan(load_config(REPO / "config.yaml", ["profile=paper"]))
    candidates = [run for run in plan.runs.values() if run.method == "seg_co2"]
    assert len(candidates) == 36 and all(run.block_trees == 4 and len(run.blocks) == 4 for run in candidates)
    final, = plan.find(experiment="co2_segmentation_trees", method="seg_co2", dataset="lfw_parts", seed=0,
                       n_estimators=32)
    assert plan.finals[final].block_trees == 4 and len(plan.finals[final].blocks) == 8
    costs = estimate_plan(plan)
    assert max(c.longest_seconds for c in costs.values()) <= 4 * 3600
    target = candidates[0].dir
    _, jobs = paper_dry_run(tmp_path, target)
    blocks = [job for job in jobs if job["rule"] == "forest_block"]
    merges = [job for job in jobs if job["rule"] == "candidate_run"]
    assert sorted(job["output"] for job in blocks) == sorted(candidates[0].block_dir(a, b)
                                                             for a, b in candidates[0].blocks)
    assert len(merges) == 1 and merges[0]["output"] == target


def test_a_tiny_segmentation_workflow_merges_candidate_and_final_blocks(tmp_path):
    (tmp_path / "wf").mkdir()
    root = copy_workflow(tmp_path / "wf", TINY_SEGMENTATION)
    plan = plan_of(TINY_SEGMENTATION)
    assert len(plan.runs) == 2 and all(run.block_trees == 8 for run in plan.runs.values())
    assert len(plan.blocks) == 6  # two candidates and the final, two blocks each
    done = snakemake(root, "--cores", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    for run in (*plan.runs, *plan.finals):
        setup = yaml.safe_load((root / run / "params.yaml").read_text())
        assert setup["block_trees"] == 8 and len(setup["merged_blocks"]) == 2
        merged = json.loads((root / run / "metrics.json").read_text())
        assert merged["staged"]["n_trees"] == [1, 2, 4, 8, 16] and merged["tree"]["n_trees"] == 16
        # the run in one job (rerun sums in the recorded blocks of 8): the same metrics.json outside timings
        again = subprocess.run([sys.executable, "-m", "treeopt.experiments", "rerun", str(root / run / "params.yaml"),
                                "--out", str(tmp_path / "one" / run)], cwd=root, capture_output=True, text=True,
                               timeout=600)
        assert again.returncode == 0, again.stderr[-3000:]
        one_job = json.loads((tmp_path / "one" / run / "metrics.json").read_text())
        assert {k: v for k, v in one_job.items() if k not in TIMINGS} == {
            k: v for k, v in merged.items() if k not in TIMINGS}
    assert "seg_rf" in (root / "results/tiny/co2_table2_jaccard.csv").read_text()
