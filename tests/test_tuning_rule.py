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
from treeopt.experiments.run.selection import axis_values, edge_params, select_runs

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


def two_experiments(profile_grow, exp_grow=None, method_grow=None):
    """Two experiments of cart on wine; the profile's ``grow``, the first experiment's and its method entry's."""
    cfg = config({"min_samples_leaf": [2, 5]}, method_grow)
    prof = cfg["profiles"]["p"]
    prof["grow"] = profile_grow
    first = prof["experiments"]["depth"]
    if exp_grow:
        first["grow"] = exp_grow
    prof["experiments"]["other"] = {**copy.deepcopy(first), "sweep": {"max_depth": [4]}}
    prof["experiments"]["other"].pop("grow", None)
    prof["experiments"]["other"]["methods"] = {"cart": {"grid": {"min_samples_leaf": [2, 5]}}}
    return cfg


def lower_steps(p):
    """{experiment: the value one step below the lower edge 2} of every grown selection of plan ``p``."""
    return {s.experiment: next(g.value for g in s.growth if g.side == "lower") for s in p.grown.values()}


def steps_of(p):
    """{experiment: its grown selection's step for min_samples_leaf}."""
    return {s.experiment: dict(dict(s.grow)["min_samples_leaf"]) for s in p.grown.values()}


def test_a_profile_grow_is_the_rule_of_every_experiment_and_a_nearer_step_wins():
    p = plan(two_experiments({"min_samples_leaf": {"times": 2, "min": 1}}))
    assert lower_steps(p) == {"depth": 1, "other": 1}  # both experiments grow by the profile's step
    p = plan(two_experiments({"min_samples_leaf": {"times": 2, "min": 1}}, exp_grow={"min_samples_leaf": {"plus": 1}}))
    assert lower_steps(p) == {"depth": 1, "other": 1}
    assert steps_of(p) == {"depth": {"plus": 1}, "other": {"times": 2, "min": 1}}
    p = plan(two_experiments({"min_samples_leaf": {"times": 2, "min": 1}}, exp_grow={"min_samples_leaf": {"plus": 1}},
                             method_grow={"min_samples_leaf": {"times": 4, "min": 1}}))
    assert steps_of(p) == {"depth": {"times": 4, "min": 1}, "other": {"times": 2, "min": 1}}


def test_a_profile_grow_step_for_no_grid_axis_is_a_config_error():
    with pytest.raises(ConfigError) as err:
        plan(two_experiments({"min_sample_leaf": {"times": 2, "min": 1}}))
    assert "profiles.p.grow" in str(err.value) and "did you mean 'min_samples_leaf'?" in str(err.value)


def two_axes():
    """cart on wine at depth 3 with a 2 x 2 grid: every choice lies at an edge of both axes."""
    return plan(config({"min_samples_leaf": [30, 60], "min_samples_split": [4, 8]},
                       {"min_samples_leaf": {"times": 2, "min": 1}, "min_samples_split": {"times": 2, "min": 2}}))


def test_two_growable_axes_are_fitted_by_a_job_each_and_the_grown_job_only_reads():
    p = two_axes()
    spec, = p.grown.values()
    assert [a.param for a in spec.axis_jobs] == ["min_samples_leaf", "min_samples_split"]
    for axis in spec.axis_jobs:
        assert axis.path == spec.path.removesuffix(".yaml") + f"-{axis.param}.yaml"
        assert {g.param for g in axis.growth} == {axis.param} and len(axis.growth) == 4  # 2 edges x 2 sources
        worst = max(estimate_spec(g.run, "p").cpu_seconds for g in axis.growth)
        assert estimate_spec(axis, "p").cpu_seconds == pytest.approx(worst)  # one candidate, at its worst
    start = estimate_spec(next(iter(p.runs.values())), "p")  # any spec's floor: the start-up
    assert estimate_spec(spec, "p").cpu_seconds <= max(start.cpu_seconds, 2.0)
    costs = estimate_plan(p)["depth"]
    assert costs.n_grown == 2  # what the selection may add, counted once
    one_axis = plan(config({"min_samples_leaf": [30, 60]}, {"min_samples_leaf": {"times": 2, "min": 1}}))
    assert next(iter(one_axis.grown.values())).axis_jobs == ()  # one candidate at most: the grown job fits it


def test_axis_jobs_then_the_grown_job_choose_as_one_job_does(tmp_path, monkeypatch):
    """The same fabricated scores grown in one job and in axis jobs + a reading job: the same selection file."""
    from treeopt.experiments.run.grow import grow_axis

    spec, = two_axes().grown.values()
    scores = {("min_samples_leaf", 15): 96.0, ("min_samples_split", 2): 97.0}

    def fit(entry):
        d = Path(entry["run"])
        d.mkdir(parents=True)
        (d / "params.yaml").write_text(yaml.safe_dump({"dataset": "wine", "method": "cart",
                                                       "params": entry["params"], "seed": 0}))
        (d / "metrics.json").write_text(json.dumps({
            "params": entry["params"], "val": {"accuracy": scores.get((entry["param"], entry["value"]), 80.0)},
            "train": {}, "fit_seconds": 0.1}))

    def refuse(entry):
        raise AssertionError(f"{entry['run']} fitted by the grown job")

    outs = []
    for where, split in (("one", False), ("axes", True)):
        monkeypatch.chdir(tmp_path)
        (tmp_path / where).mkdir()
        monkeypatch.chdir(tmp_path / where)
        select_runs(fake_candidates(spec, [95.0, 90.0, 91.0, 92.0]), "accuracy", spec.base.path)  # chooses (30, 4)
        if split:
            for axis in spec.axis_jobs:
                done = grow_axis(spec.base.path, axis.job_entries(), axis.param, axis.path, fit=fit)
                assert done["edge"] == "lower" and is_run_folder(done["fitted"])
                assert yaml.safe_load(Path(axis.path).read_text()) == done
        outs.append(grow_selection(spec.base.path, spec.job_entries(), spec.path, fit=refuse if split else fit,
                                   steps={p: dict(s) for p, s in spec.grow}))
    assert outs[0] == outs[1]
    assert outs[0]["chosen"]["min_samples_split"] == 2 and [g["added"] for g in outs[0]["grown"]] == [[15], [2]]


def test_an_interior_choice_makes_an_axis_job_fit_nothing(tmp_path, monkeypatch):
    from treeopt.experiments.run.grow import grow_axis

    monkeypatch.chdir(tmp_path)
    spec, = plan(config({"min_samples_leaf": [2, 5, 10], "min_samples_split": [4, 8]},
                        {"min_samples_leaf": {"times": 2, "min": 1},
                         "min_samples_split": {"times": 2, "min": 2}})).grown.values()
    select_runs(fake_candidates(spec, [80, 80, 99, 80, 80, 80]), "accuracy", spec.base.path)  # (5, 4): leaf inside
    axis = spec.axis_jobs[0]
    assert axis.param == "min_samples_leaf"
    out = grow_axis(spec.base.path, axis.job_entries(), axis.param, axis.path,
                    fit=lambda entry: pytest.fail("an interior choice grows nothing"))
    assert out == {"param": "min_samples_leaf", "selection": spec.base.path, "edge": None, "fitted": None}


def test_the_workflow_fits_two_axes_in_jobs_of_their_own_from_the_profile_rule(tmp_path):
    """A tiny workflow whose profile's `grow` is the rule: cart on wine, a 2 x 2 grid (every choice at two edges)."""
    from test_workflow_snakemake import TINY, copy_workflow, snakemake

    cfg = copy.deepcopy(TINY)
    cfg["profiles"]["tiny"]["grow"] = {"min_samples_leaf": {"times": 2, "min": 1},
                                       "min_samples_split": {"times": 2, "min": 2}}
    cfg["profiles"]["tiny"]["experiments"] = {"depth": {
        "reports": ["nongreedy_fig2"], "datasets": ["wine"], "sweep": {"max_depth": [3]},
        "methods": {"cart": {"grid": {"min_samples_leaf": [30, 60], "min_samples_split": [4, 8]}}}}}
    root = copy_workflow(tmp_path, cfg)
    done = snakemake(root, "--cores", "1", "results/tiny/nongreedy_fig2.csv")
    assert done.returncode == 0, done.stderr[-3000:]
    grown_file, = (root / "results" / "selection" / "wine" / "cart").glob("grown-*/seed0.yaml")
    axes = {p.name: yaml.safe_load(p.read_text()) for p in grown_file.parent.glob("seed0-*.yaml")}
    assert sorted(axes) == ["seed0-min_samples_leaf.yaml", "seed0-min_samples_split.yaml"]
    out = yaml.safe_load(grown_file.read_text())
    assert {r["param"]: r["run"] for r in out["grown"]} == {a["param"]: a["fitted"] for a in axes.values()}
    for axis in axes.values():
        assert is_run_folder(root / axis["fitted"])
        setup = yaml.safe_load((root / axis["fitted"] / "params.yaml").read_text())
        assert setup["grown_for"] == str(grown_file.relative_to(root))  # fitted for the grown selection it serves


# ---- a p^a axis (a random forest's q, the CO2 paper's p^0.5 ... p^0.9) grows by its exponent
def test_a_power_axis_steps_its_exponent():
    assert step_past({"plus": 0.1, "max": 1}, "p^0.5", "lower", False) == "p^0.4"
    assert step_past({"plus": 0.1, "max": 1}, "p^0.9", "upper", False) == "p^1.0"
    assert step_past({"plus": 0.1, "max": 1}, "p^1.0", "upper", False) is None
    assert step_past({"series": [1, 3]}, "p^0.1", "lower", False) == "p^0.03"


def test_a_power_axis_is_ordered_by_its_exponent_not_its_text():
    # as text ".5" sorts before "0.4"; by exponent p^0.4 is the smaller
    candidates = [{"params": {"max_features": v}} for v in ("p^.5", "p^0.4", "p^0.45")]
    assert axis_values(candidates, "max_features") == ["p^0.4", "p^0.45", "p^.5"]
    assert edge_params(candidates, {"max_features": "p^0.4"}) == ["max_features"]
    assert edge_params(candidates, {"max_features": "p^0.45"}) == []
    assert axis_values([{"params": {"max_features": v}} for v in ("sqrt", "log2")], "max_features") is None


def test_a_power_grid_plans_its_grown_candidates_and_a_lower_edge_fits_the_step_below(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = config({"max_features": ["p^0.5", "p^0.7", "p^0.9"]}, {"max_features": {"plus": 0.1, "max": 1}})
    spec, = plan(cfg).grown.values()
    assert {(g.side, g.edge, g.value) for g in spec.growth} == {("lower", "p^0.5", "p^0.4"),
                                                                ("upper", "p^0.9", "p^1.0")}
    select_runs(fake_candidates(spec, [95.0, 91.0, 90.0]), "accuracy", spec.base.path)
    fits = []

    def fit(entry):
        fits.append(entry)
        Path(entry["run"]).mkdir(parents=True)
        (Path(entry["run"]) / "metrics.json").write_text(json.dumps(
            {"params": entry["params"], "val": {"accuracy": 96.0}, "train": {}, "fit_seconds": 0.1}))

    out = grow_selection(spec.base.path, spec.job_entries(), spec.path, fit=fit,
                         steps={p: dict(s) for p, s in spec.grow})
    assert [f["params"]["max_features"] for f in fits] == ["p^0.4"]
    assert out["chosen"]["max_features"] == "p^0.4" and out["grown"][0]["still_at_edge"] is True


def test_a_power_grid_with_a_factor_step_from_p0_is_refused():
    cfg = config({"max_features": ["p^0", "p^0.5"]}, {"max_features": {"times": 2}})
    with pytest.raises(ConfigError, match="positive"):
        validate_config(copy.deepcopy(cfg))
