"""Issue #38's tuning rule (plan.grow, run.grow): a choice at a grid edge grows the grid one step past it."""

import copy
import json
from pathlib import Path

import pytest
import yaml

from treeopt.experiments import jobs
from treeopt.experiments.infra.cost_plan import estimate_plan, estimate_spec
from treeopt.experiments.plan.build import build_plan
from treeopt.experiments.plan.config import ConfigError, load_config, validate_config
from treeopt.experiments.plan.grow import GrownSelectionSpec, step_past
from treeopt.experiments.report.tables import chosen_text, tuned_marks
from treeopt.experiments.run.folders import is_run_folder
from treeopt.experiments.run.grow import grow_selection
from treeopt.experiments.run.runner import rerun, run
from treeopt.experiments.run.selection import select_runs

REPO = Path(__file__).resolve().parents[1]


def config(grid, grow, sweep=(3,)):
    return {"profile": "p", "data": {"processed_dir": "proc"},
            "datasets": {"wine": {"task": "classification", "format": "sklearn", "options": {"loader": "wine"},
                                  "split": {"protocol": "random"}, "scale": "none"}},
            "profiles": {"p": {"seeds": [0], "experiments": {"depth": {
                "reports": ["nongreedy_fig2"], "datasets": ["wine"], "sweep": {"max_depth": list(sweep)},
                "methods": {"cart": {"grid": grid, **({"grow": grow} if grow else {})}}}}}}}


def plan(cfg):
    return build_plan(validate_config(copy.deepcopy(cfg)))


def test_steps_continue_the_grid_in_both_directions():
    assert step_past({"series": [1, 3]}, 0.1, "upper", False) == 0.3
    assert step_past({"series": [1, 3]}, 0.01, "lower", False) == 0.003
    assert step_past({"series": [1, 3]}, 0.03, "upper", False) == 0.1
    assert step_past({"times": 2}, 20, "upper", True) == 40 and step_past({"times": 2}, 5, "lower", True) == 2
    assert step_past({"times": 2, "min": 1}, 1, "lower", True) is None
    assert step_past({"plus": 5, "max": 12}, 10, "upper", True) is None
    assert step_past({"plus": 0.5}, 1.0, "lower", False) == 0.5


def test_a_grown_grid_keeps_the_plain_selection_and_names_every_candidate_it_may_add():
    grid = {"min_samples_leaf": [2, 5, 10]}
    plain, grown = plan(config(grid, None)), plan(config(grid, {"min_samples_leaf": {"times": 2, "min": 1}}))
    assert sorted(plain.selections) == sorted(grown.selections) and sorted(plain.runs) == sorted(grown.runs)
    spec, = grown.grown.values()
    assert isinstance(spec, GrownSelectionSpec) and spec.base.path in grown.selections
    assert {(g.side, g.edge, g.value) for g in spec.growth} == {("lower", 2, 1), ("upper", 10, 20)}
    assert all(g.run.dir not in grown.runs and "min_samples_leaf-" in g.run.dir for g in spec.growth)
    final, = grown.finals.values()
    assert final.selection is spec and final.dir not in plain.finals  # the finals read the grown choice


def fake_candidates(spec, scores):
    """Candidate folders of ``spec``'s planned candidates with validation accuracies ``scores`` (cwd-relative)."""
    dirs = []
    for run_spec, score in zip(spec.candidates, scores):
        d = Path(run_spec.dir)
        d.mkdir(parents=True)
        (d / "metrics.json").write_text(json.dumps({"params": dict(run_spec.params), "val": {"accuracy": score},
                                                    "train": {}, "fit_seconds": 0.1}))
        dirs.append(run_spec.dir)
    return dirs


def grow_with_scores(tmp_path, monkeypatch, scores, grown_score, grid=(2, 5, 10)):
    """The rule on fabricated folders; the fit writes a run folder scoring ``grown_score``. Returns (selection, fits)."""
    monkeypatch.chdir(tmp_path)
    spec, = plan(config({"min_samples_leaf": list(grid)}, {"min_samples_leaf": {"times": 2, "min": 1}})).grown.values()
    select_runs(fake_candidates(spec, scores), "accuracy", spec.base.path)
    fits = []

    def fit(entry):
        fits.append(entry)
        d = Path(entry["run"])
        d.mkdir(parents=True)
        (d / "params.yaml").write_text(yaml.safe_dump({"dataset": "wine", "method": "cart",
                                                       "params": entry["params"], "seed": 0}))
        (d / "metrics.json").write_text(json.dumps({"params": entry["params"], "val": {"accuracy": grown_score},
                                                    "train": {}, "fit_seconds": 0.1}))

    out = grow_selection(spec.base.path, spec.job_entries(), spec.path, fit=fit,
                         steps={p: dict(s) for p, s in spec.grow})
    assert yaml.safe_load(Path(spec.path).read_text()) == out
    return out, fits


def test_an_interior_choice_does_not_grow(tmp_path, monkeypatch):
    out, fits = grow_with_scores(tmp_path, monkeypatch, [90.0, 95.0, 91.0], 99.0)
    assert fits == [] and out["grown"] == [] and out["chosen"]["min_samples_leaf"] == 5
    assert out["at_edge"] == [] and len(out["candidates"]) == 3


def test_an_upper_edge_grows_one_step_up_and_the_better_grown_candidate_wins(tmp_path, monkeypatch):
    out, fits = grow_with_scores(tmp_path, monkeypatch, [90.0, 91.0, 95.0], 97.0)
    fit, = fits
    assert fit["params"]["min_samples_leaf"] == 20 and fit["side"] == "upper"
    grown, = out["grown"]
    assert grown == {"param": "min_samples_leaf", "edge": "upper", "edge_value": 10, "added": [20],
                     "run": fit["run"], "still_at_edge": True}
    assert out["chosen"]["min_samples_leaf"] == 20 and out["chosen_run"] == fit["run"]
    assert out["first_choice"]["params"]["min_samples_leaf"] == 10 and out["at_edge"] == ["min_samples_leaf"]
    assert out["candidates"][-1]["grown"] == "min_samples_leaf"


def test_a_lower_edge_grows_down_and_a_tie_keeps_the_grid_value(tmp_path, monkeypatch):
    out, fits = grow_with_scores(tmp_path, monkeypatch, [95.0, 91.0, 90.0], 95.0)
    assert [f["params"]["min_samples_leaf"] for f in fits] == [1]
    assert out["chosen"]["min_samples_leaf"] == 2 and out["grown"][0]["still_at_edge"] is False
    assert out["at_edge"] == []  # 2 is inside [1, 10] now


def test_min_stops_the_growth_and_says_so(tmp_path, monkeypatch):
    out, fits = grow_with_scores(tmp_path, monkeypatch, [95.0, 91.0, 90.0], 99.0, grid=(1, 5, 10))
    assert fits == [] and out["grown"][0]["added"] == [] and out["grown"][0]["still_at_edge"] is False
    assert out["chosen"]["min_samples_leaf"] == 1 and out["at_edge"] == ["min_samples_leaf"]


def test_the_grown_candidate_is_a_real_run_folder_that_rerun_repeats(tmp_path, monkeypatch, wine_split):
    """max_depth 1 or 2 on wine: 2 wins (3 classes), an upper edge, so depth 4 is fitted by the job's own code."""
    split_path, _ = wine_split
    monkeypatch.chdir(tmp_path)
    cfg = config({"max_depth": [1, 2]}, {"max_depth": {"times": 2, "min": 1}}, sweep=())
    del cfg["profiles"]["p"]["experiments"]["depth"]["sweep"]
    spec, = plan(cfg).grown.values()
    for candidate in spec.candidates:
        run(candidate.dir, dataset="wine", method="cart", params=dict(candidate.params), seed=0,
            split_path=split_path)
    first = select_runs([c.dir for c in spec.candidates], "accuracy", spec.base.path)
    assert first["chosen"]["max_depth"] == 2
    jobs.grow_selection(log=str(tmp_path / "grow.log"), selection=spec.base.path, output=spec.path,
                        growth=spec.job_entries(), steps={p: dict(s) for p, s in spec.grow}, dataset="wine",
                        method="cart", seed=0, split=str(split_path), n_jobs=1, save_model=None, inherit={})
    out = yaml.safe_load(Path(spec.path).read_text())
    grown, = out["grown"]
    assert grown["added"] == [4] and grown["edge"] == "upper"
    assert grown["run"] == next(g.run.dir for g in spec.growth if g.value == 4)
    assert is_run_folder(grown["run"])
    setup = yaml.safe_load((Path(grown["run"]) / "params.yaml").read_text())
    assert setup["params"]["max_depth"] == 4 and setup["grown_for"] == spec.path
    again = rerun(Path(grown["run"]) / "params.yaml", tmp_path / "again")
    assert again["val"] == json.loads((Path(grown["run"]) / "metrics.json").read_text())["val"]


@pytest.mark.parametrize("grow, expected", [
    ({"min_samples_leaf": {"time": 4}}, "unknown key 'time'"),
    ({"min_samples_leaf": {"time": 4}}, "did you mean 'times'?"),
    ({"min_sample_leaf": {"times": 4}}, "did you mean 'min_samples_leaf'?"),
    ({"min_samples_leaf": {"times": 4, "plus": 1}}, "give exactly one of times, plus, series"),
    ({"min_samples_leaf": {"times": 0.5}}, "less than or equal to the minimum of 1"),
    ({"min_samples_leaf": {"times": 4}}, "set min: to stop growing there"),
])
def test_a_wrong_grow_step_is_a_clear_config_error(grow, expected):
    with pytest.raises(ConfigError, match=None) as err:
        plan(config({"min_samples_leaf": [1, 5]}, grow))
    assert expected in str(err.value)


def test_the_default_profile_grows_only_cart_in_nongreedy_fig2_and_the_cost_counts_it():
    cfg = load_config(REPO / "config.yaml", {"profile": "default"})
    without = copy.deepcopy(cfg)
    del without["profiles"]["default"]["experiments"]["nongreedy_fig2"]["grow"]
    now, before = build_plan(cfg), build_plan(without)
    assert sorted(now.runs) == sorted(before.runs) and sorted(now.selections) == sorted(before.selections)
    changed = set(before.finals) - set(now.finals)
    assert {before.finals[d].method for d in changed} == {"cart"} and len(changed) == len(now.grown) == 18
    assert {(s.experiment, s.method) for s in now.grown.values()} == {("nongreedy_fig2", "cart")}
    costs = estimate_plan(now)
    assert costs["nongreedy_fig2"].n_grown == 18 and estimate_plan(before)["nongreedy_fig2"].n_grown == 0
    spec = next(iter(now.grown.values()))
    worst = max(estimate_spec(g.run, "default").cpu_seconds for g in spec.growth)
    assert estimate_spec(spec, "default").cpu_seconds >= worst > 0


def test_tables_mark_a_grown_choice_and_one_still_at_an_edge(tmp_path):
    sel = tmp_path / "selection" / "wine" / "cart" / "grown-x" / "seed0.yaml"
    sel.parent.mkdir(parents=True)
    sel.write_text(yaml.safe_dump({"chosen": {"min_samples_leaf": 20, "max_depth": 3}, "at_edge": ["min_samples_leaf"],
                                   "grown": [{"param": "min_samples_leaf", "added": [20]}], "candidates": []}))
    marks = tuned_marks({"selection": str(sel)}, tmp_path / "runs" / "wine" / "cart" / "final-x" / "seed0")
    assert marks == {"min_samples_leaf": "grown,edge"}
    assert chosen_text([{"min_samples_leaf": 20}, {"min_samples_leaf": 5}], [marks, {}]) == \
        "min_samples_leaf=20[grown,edge]|5"
    assert chosen_text([{"nu": 1.0}]) == "nu=1"  # files of earlier versions: no marks


def test_the_workflow_grows_a_grid_in_its_own_job_and_the_table_marks_it(tmp_path):
    """A tiny workflow: cart on wine at max_depth 3, min_samples_leaf [30, 60] (a choice is always at an edge)."""
    from test_workflow_snakemake import TINY, copy_workflow, snakemake

    cfg = copy.deepcopy(TINY)
    cfg["profiles"]["tiny"]["experiments"] = {"depth": {
        "reports": ["nongreedy_fig2"], "datasets": ["wine"], "sweep": {"max_depth": [3]},
        "grow": {"min_samples_leaf": {"times": 2, "min": 1}},
        "methods": {"cart": {"grid": {"min_samples_leaf": [30, 60]}}}}}
    root = copy_workflow(tmp_path, cfg)
    done = snakemake(root, "--cores", "1", "results/tiny/nongreedy_fig2.csv")
    assert done.returncode == 0, done.stderr[-3000:]
    grown_file, = (root / "results" / "selection" / "wine" / "cart").glob("grown-*/seed0.yaml")
    out = yaml.safe_load(grown_file.read_text())
    record, = out["grown"]
    assert record["added"] == [{"lower": 15, "upper": 120}[record["edge"]]]
    assert is_run_folder(root / record["run"])
    table = (root / "results" / "tiny" / "nongreedy_fig2.csv").read_text()
    assert f"min_samples_leaf={out['chosen']['min_samples_leaf']}" in table
    assert ("[grown" in table) == record["still_at_edge"]
