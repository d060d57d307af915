"""Candidates read off a warm-started path (a method entry's ``path: C``, treeopt.experiments.plan.paths): the plan
keeps every candidate's folder and choice but fits one run per path; a tiny workflow writes each read-off candidate
as the fit with its C writes it (``rerun`` of its params.yaml fits it), and bad ``path:`` entries are refused."""

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from treeopt.experiments.infra.cost_plan import estimate_plan
from treeopt.experiments.plan.build import build_plan
from treeopt.experiments.plan.config import load_config
from treeopt.experiments.plan.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
from test_workflow_snakemake import TINY, copy_workflow, plan_of, snakemake  # noqa: E402

TIMINGS = ("fit_seconds", "predict_seconds", "compile_seconds", "fit_compile_seconds", "git_commit", "versions",
           "fit_cpu_seconds")
PATH_TIMINGS = ("liblinear_seconds", "fit_seconds", "init_seconds")

TAO_ENTRY = {"grid": {"C": [1, 0.3, 0.1], "max_depth": [2, 3]}, "path": "C",
             "params": {"warm_start_C": [3, 1, 0.3], "accept": "always", "tol": 0}}
TINY_PATH = {
    **{key: TINY[key] for key in ("profile", "data", "datasets")},
    "profiles": {"tiny": {"seeds": [0], "experiments": {
        "table": {"reports": ["tao_table1"], "datasets": ["wine"], "refit": False,
                  "methods": {"tao_oblique": TAO_ENTRY}},
    }}},
}


def _without(metrics, keys=TIMINGS):
    out = {k: v for k, v in metrics.items() if k not in keys and k not in ("from_path", "from_candidate")}
    out["tree"] = {k: v for k, v in out["tree"].items() if k not in PATH_TIMINGS}
    out["path"] = [{k: v for k, v in step.items() if k not in PATH_TIMINGS} for step in out.get("path", [])]
    out["path_runs"] = [_without(step, TIMINGS + ("step",)) for step in out.get("path_runs", [])]
    return out


def _ran(tmp_path, config):
    """(workflow folder, plan) of ``config`` run to the end by Snakemake on 2 cores."""
    (tmp_path / "wf").mkdir()
    root = copy_workflow(tmp_path / "wf", config)
    done = snakemake(root, "--cores", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    return root, plan_of(config)


def _rerun(root, tmp_path, run_dir):
    """``metrics.json`` of ``rerun`` of the run folder's ``params.yaml`` into ``tmp_path/alone`` (a fresh fit)."""
    again = subprocess.run([sys.executable, "-m", "treeopt.experiments", "rerun", str(root / run_dir / "params.yaml"),
                            "--out", str(tmp_path / "alone" / run_dir)], cwd=root, capture_output=True, text=True,
                           timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    return json.loads((tmp_path / "alone" / run_dir / "metrics.json").read_text())


def test_the_plan_fits_one_run_per_path_and_keeps_every_candidate():
    plan = plan_of(TINY_PATH)
    without = copy.deepcopy(TINY_PATH)
    del without["profiles"]["tiny"]["experiments"]["table"]["methods"]["tao_oblique"]["path"]
    plain = plan_of(without)
    assert sorted(plan.runs) == sorted(plain.runs) and sorted(plan.selections) == sorted(plain.selections)
    fitted = {d: r for d, r in plan.runs.items() if r.path_run is None}
    read = {d: r for d, r in plan.runs.items() if r.path_run is not None}
    assert sorted(dict(r.params)["C"] for r in fitted.values()) == [0.1, 0.1]  # one fit per depth, at the lowest C
    assert len(read) == 4
    for run in read.values():
        source = plan.runs[run.path_run]
        assert source.path_run is None and dict(source.params)["C"] == 0.1
        assert {k: v for k, v in source.params if k != "C"} == {k: v for k, v in run.params if k != "C"}
    costs, plain_costs = estimate_plan(plan), estimate_plan(plain)
    assert costs["table"].cpu_seconds < plain_costs["table"].cpu_seconds


def test_paper_profile_reads_tao_table1s_c_grid_off_one_path_per_depth_and_start():
    plan = build_plan(load_config(REPO / "config.yaml", ["profile=paper"]))
    runs = [r for r in plan.runs.values() if r.method == "tao_oblique" and r.dataset == "mnist"
            and dict(r.params).get("tol") == 0]
    assert len(runs) == 81 and sum(r.path_run is None for r in runs) == 9


def test_only_a_final_run_that_is_its_chosen_candidates_fit_is_charged_as_a_read():
    from treeopt.experiments.infra.cost_plan import reads_chosen_candidate

    plan = build_plan(load_config(REPO / "config.yaml", ["profile=paper"]))
    tao, = plan.find(experiment="tao_table1", method="tao_oblique", dataset="mnist", seed=0)
    assert reads_chosen_candidate(plan.finals[tao])  # refit: false, selected at its own (empty) sweep point
    refit = [f for f in plan.finals.values() if f.refit and f.selection is not None]
    staged = [f for f in plan.finals.values() if not f.refit and f.stages and f.selection is not None]
    assert refit and not any(reads_chosen_candidate(f) for f in refit + staged)


@pytest.mark.parametrize("entry, message", [
    ({"grid": {"C": [1, 0.5, 0.1]}, "path": "C", "params": {"warm_start_C": [3, 1, 0.3]}},
     "C=0.5 is not a step of the path"),
    ({"grid": {"C": [1, 0.1]}, "path": "C"}, "needs warm_start_C"),
    ({"grid": {"C": [1, 0.1]}, "path": "max_depth", "params": {"warm_start_C": [1]}},
     "'max_depth' is not a grid parameter"),
])
def test_a_path_entry_that_cannot_hold_is_refused(entry, message):
    config = copy.deepcopy(TINY_PATH)
    config["profiles"]["tiny"]["experiments"]["table"]["methods"]["tao_oblique"] = entry
    with pytest.raises(ConfigError, match=message):
        plan_of(config)


def test_a_method_without_a_path_is_refused():
    config = copy.deepcopy(TINY_PATH)
    config["profiles"]["tiny"]["experiments"]["table"]["methods"] = {
        "cart": {"grid": {"max_depth": [2, 3]}, "path": "max_depth"}}
    with pytest.raises(ConfigError, match="not fitted along a warm-started path"):
        plan_of(config)


def test_a_tiny_workflow_writes_each_read_candidate_as_its_own_fit_would(tmp_path):
    root, plan = _ran(tmp_path, TINY_PATH)
    read = [r for r in plan.runs.values() if r.path_run is not None]
    from treeopt.experiments.run.folders import is_run_folder

    for source in {r.path_run for r in read}:  # a path run's folder is a run folder (a rerun may replace it)
        assert (root / source / "path_models.npz").is_file() and is_run_folder(root / source)
    for run in read:
        metrics = json.loads((root / run.dir / "metrics.json").read_text())
        assert metrics["from_path"]["run"] == run.path_run
        assert (root / run.dir / "model.npz").is_file()
        alone = _rerun(root, tmp_path, run.dir)
        assert "from_path" not in alone and len(alone.get("path_runs", [])) == len(metrics.get("path_runs", []))
        assert _without(alone) == _without(metrics)
        from treeopt.trees import load_trees

        mine, = load_trees(root / run.dir / "model.npz")
        theirs, = load_trees(tmp_path / "alone" / run.dir / "model.npz")
        for name in ("left", "right", "feature", "bias", "value"):
            assert (getattr(mine, name) == getattr(theirs, name)).all()
    selection, = plan.selections.values()
    chosen = yaml.safe_load((root / selection.path).read_text())
    assert len(chosen["candidates"]) == 6
    # refit: false: the final run is its chosen candidate's fit, read from that candidate's folder
    final, = plan.finals
    metrics = json.loads((root / final / "metrics.json").read_text())
    assert metrics["from_candidate"] == chosen["chosen_run"]
    candidate = json.loads((root / chosen["chosen_run"] / "metrics.json").read_text())
    assert {k: v for k, v in metrics.items() if k != "from_candidate"} == candidate
    setup = yaml.safe_load((root / final / "params.yaml").read_text())
    assert setup["role"] == "final" and setup["selection"] == selection.path
    fitted = _rerun(root, tmp_path, final)
    assert "from_candidate" not in fitted and _without(fitted) == _without(metrics)
    second = snakemake(root, "-n")
    assert "Nothing to be done" in second.stdout + second.stderr


# A depth sweep of OC1 trees grown level by level: every depth's candidates read off the deepest fit (path: max_depth).
OC1_DEPTH_ENTRY = {"grid": {"n_restarts": [1, 2]}, "path": "max_depth",
                   "params": {"grow_order": "level", "n_perturbations": 1}}
TINY_DEPTH = {
    **{key: TINY[key] for key in ("profile", "data", "datasets")},
    "profiles": {"tiny": {"seeds": [0], "experiments": {
        "fig": {"reports": ["nongreedy_fig2"], "datasets": ["wine"], "sweep": {"max_depth": [2, 3, 4]},
                "methods": {"oc1_tree": OC1_DEPTH_ENTRY}},
    }}},
}


def test_a_depth_sweep_fits_each_grid_point_once_at_its_largest_depth():
    plan = plan_of(TINY_DEPTH)
    without = copy.deepcopy(TINY_DEPTH)
    del without["profiles"]["tiny"]["experiments"]["fig"]["methods"]["oc1_tree"]["path"]
    plain = plan_of(without)
    assert sorted(plan.runs) == sorted(plain.runs) and sorted(plan.selections) == sorted(plain.selections)
    fitted = [r for r in plan.runs.values() if r.path_run is None]
    read = [r for r in plan.runs.values() if r.path_run is not None]
    assert sorted(dict(r.params)["max_depth"] for r in fitted) == [4, 4] and len(read) == 4
    for run in read:
        source = plan.runs[run.path_run]
        assert source.path_run is None and dict(source.params)["max_depth"] == 4
        assert {k: v for k, v in source.params if k != "max_depth"} == {k: v for k, v in run.params if k != "max_depth"}
    assert estimate_plan(plan)["fig"].cpu_seconds < estimate_plan(plain)["fig"].cpu_seconds


@pytest.mark.parametrize("change, message", [
    ({"params": {"n_perturbations": 1}}, "needs grow_order: level"),
    ({"path": "max_depth", "sweep": {"n_perturbations": [1, 2]}}, "max_depth must be a sweep parameter"),
])
def test_a_depth_path_that_cannot_hold_is_refused(change, message):
    config = copy.deepcopy(TINY_DEPTH)
    entry = config["profiles"]["tiny"]["experiments"]["fig"]["methods"]["oc1_tree"]
    entry.update(change)
    if "sweep" in change:
        entry["params"] = {"grow_order": "level", "max_depth": 3}
    with pytest.raises(ConfigError, match=message):
        plan_of(config)


def test_paper_profile_reads_fig2s_oc1_and_random_oblique_depths_off_the_depth_18_fit():
    plan = build_plan(load_config(REPO / "config.yaml", ["profile=paper"]))
    for method in ("oc1_tree", "random_oblique_tree"):
        runs = [r for s in plan.selections.values() if s.experiment == "nongreedy_fig2" and s.method == method
                and s.dataset == "connect4" and s.seed == 0 for r in s.candidates]
        assert len(runs) == 21 and {dict(plan.runs[r.path_run].params)["max_depth"] for r in runs if r.path_run} == {18}
        assert sorted(dict(r.params)["max_depth"] for r in runs if r.path_run is None) == [18, 18, 18]


# ... and grown by the tuning rule: every choice of [2, 3] is an edge, so each depth grows to 1 or 6 restarts, and the
# grown candidates of depths 2 and 3 are read off the depth-4 ones (planned runs with their own jobs)
TINY_DEPTH_GROW = copy.deepcopy(TINY_DEPTH)
TINY_DEPTH_GROW["profiles"]["tiny"]["experiments"]["fig"].update(grow={"n_restarts": {"times": 2, "min": 1}})
TINY_DEPTH_GROW["profiles"]["tiny"]["experiments"]["fig"]["methods"]["oc1_tree"]["grid"] = {"n_restarts": [2, 3]}


def test_a_depth_sweeps_grown_candidates_are_read_off_the_deepest_ones_each_made_once():
    plan = plan_of(TINY_DEPTH_GROW)
    grown = sorted(plan.grown.values(), key=lambda g: dict(g.at)["max_depth"])
    assert [g.depth_path for g in grown] == [4, 4, 4]
    deep = {g.run.dir for g in grown[-1].growth}
    assert len(deep) == 2 and deep <= set(plan.runs)  # 1 and 6 restarts at depth 4: planned runs of their own
    for spec in grown[:-1]:
        assert {g.run.path_run for g in spec.growth} == deep and all(g.run.dir not in plan.runs for g in spec.growth)
    from treeopt.experiments.infra.cost_plan import estimate_growth

    model = estimate_growth(grown[0])  # a job that reads: its start-up; the deep runs are charged once, as runs
    assert model.cpu_seconds < 10 and estimate_plan(plan)["fig"].n_runs == len(plan.runs) + len(plan.finals)


def test_a_tiny_workflow_writes_each_depth_read_off_a_deeper_fit_as_its_own_fit_would(tmp_path):
    root, plan = _ran(tmp_path, TINY_DEPTH_GROW)
    from treeopt.trees import load_trees

    read = [r for r in plan.runs.values() if r.path_run is not None]
    for spec in plan.grown.values():  # each depth grew one candidate; below depth 4 it is read off depth 4's
        chosen = yaml.safe_load((root / spec.path).read_text())
        added, = [g for g in chosen["grown"] if g["added"]]
        made = next(g.run for g in spec.growth if g.run.dir == added["run"])
        if made.path_run:
            read.append(made)
    assert len(read) == 6
    # the final runs below depth 4: each read off a fit with its chosen parameters at depth 4 (the depth-4 final run,
    # or a depth-path folder beside it that the first final run needing it made)
    finals = [f for f in plan.finals.values() if f.depth_path]
    assert sorted(dict(f.point)["max_depth"] for f in finals) == [2, 3]
    for final in finals:
        metrics = json.loads((root / final.dir / "metrics.json").read_text())
        source = Path(metrics["from_path"]["run"])
        assert source == Path(final.depth_path) or source.parent.name.startswith("depth-path-")
        deep = yaml.safe_load((root / source / "params.yaml").read_text())
        mine = yaml.safe_load((root / final.dir / "params.yaml").read_text())
        assert deep["fit_on"] == mine["fit_on"] == "trainval" and deep["params"]["max_depth"] == 4
        assert {**deep["params"], "max_depth": mine["params"]["max_depth"]} == mine["params"]
        read.append(final)
    for run in read:
        metrics = json.loads((root / run.dir / "metrics.json").read_text())
        assert metrics["from_path"]["run"] == getattr(run, "path_run", metrics["from_path"]["run"])
        alone = _rerun(root, tmp_path, run.dir)
        depth = yaml.safe_load((root / run.dir / "params.yaml").read_text())["params"]["max_depth"]
        assert "from_path" not in alone and len(alone["path_runs"]) == depth - 1
        assert _without(alone) == _without(metrics)
        mine, = load_trees(root / run.dir / "model.npz")
        theirs, = load_trees(tmp_path / "alone" / run.dir / "model.npz")
        assert mine.n_nodes == theirs.n_nodes
        for name in ("left", "right", "feature", "bias", "value", "n_samples"):
            assert (getattr(mine, name) == getattr(theirs, name)).all()
        assert (mine.W != theirs.W).nnz == 0
    second = snakemake(root, "-n")
    assert "Nothing to be done" in second.stdout + second.stderr


def test_a_final_run_on_a_depth_path_fits_a_missing_deeper_run_once_and_reads_it(wine_split, tmp_path):
    from treeopt.experiments.run.reads import run_from_depth_path
    from treeopt.experiments.run.runner import run

    split, _ = wine_split
    base = {"grow_order": "level", "n_perturbations": 1}
    common = dict(dataset="wine", method="oc1_tree", seed=0, split_path=split, fit_on="trainval")
    deepest = tmp_path / "runs/wine/oc1_tree/final-deepest/seed0"
    run(deepest, params={**base, "n_restarts": 1, "max_depth": 4}, **common)
    made = []

    def fit(folder, params):
        made.append(Path(folder))
        run(folder, params=params, provenance={"role": "depth_path"}, **common)

    for depth in (3, 2):  # chosen n_restarts 2, the deepest final run's 1: a deeper fit beside it, made once
        out = tmp_path / f"runs/wine/oc1_tree/final-d{depth}/seed0"
        params = {**base, "n_restarts": 2, "max_depth": depth}
        run_from_depth_path(out, deepest=str(deepest), params=params, fit=fit, **common)
        run(tmp_path / f"alone{depth}", params=params, **common)
        mine = json.loads((out / "metrics.json").read_text())
        alone = json.loads((tmp_path / f"alone{depth}" / "metrics.json").read_text())
        assert Path(mine["from_path"]["run"]) == made[0] and _without(mine) == _without(alone)
    assert len(made) == 1 and made[0].parent.name.startswith("depth-path-") and made[0].parent.parent == deepest.parent.parent
    assert yaml.safe_load((made[0] / "params.yaml").read_text())["params"]["max_depth"] == 4

    out = tmp_path / "runs/wine/oc1_tree/final-same/seed0"  # the deepest final run's parameters: read off it
    run_from_depth_path(out, deepest=str(deepest), params={**base, "n_restarts": 1, "max_depth": 2},
                        fit=lambda *a: pytest.fail("fitted again"), **common)
    assert json.loads((out / "metrics.json").read_text())["from_path"]["run"] == str(deepest)


def test_paper_fig2s_oc1_final_runs_are_charged_one_deep_fit_per_possible_choice():
    from treeopt.experiments.infra.cost_plan import estimate_spec

    plan = build_plan(load_config(REPO / "config.yaml", ["profile=paper"]))
    finals = sorted((f for f in plan.finals.values() if f.experiment == "nongreedy_fig2" and f.method == "oc1_tree"
                     and f.dataset == "connect4" and f.seed == 0), key=lambda f: f.depth_rank)
    assert [f.depth_rank for f in finals] == list(range(7)) and finals[0].depth_path is None
    assert all(f.depth_path == finals[0].dir and f.deepest == 18 for f in finals[1:])
    assert [f.deeper for f in finals[1:]] == [f.dir for f in finals[:-1]]
    costs = [estimate_spec(f, plan.profile).cpu_seconds for f in finals]
    # n_restarts 40, 20, 10, 5, 2 at depth 18 (the grid and its two grown values), then reads
    assert costs[:5] == sorted(costs[:5], reverse=True) and costs[1] < costs[0] and max(costs[5:]) < 10
