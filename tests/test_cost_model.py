"""The cost model (treeopt.experiments.infra.cost): estimates, plan totals, and the SLURM resources drawn from it."""

import dataclasses
import math
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from treeopt.experiments.__main__ import main
from treeopt.experiments.infra import cost, cost_plan, resources
from treeopt.experiments.infra import work as cost_work
from treeopt.experiments.plan.build import build_plan
from treeopt.experiments.plan.config import load_config
from treeopt.experiments.plan.specs import FinalSpec, RunSpec

REPO = Path(__file__).resolve().parents[1]


def _items(d):
    return tuple(sorted(d.items()))


def test_every_registered_method_and_every_configured_data_set_has_a_cost_entry():
    from treeopt.experiments.plan.methods import METHODS

    model = cost.load_model()
    assert set(METHODS) <= set(model["methods"])
    config = load_config(REPO / "config.yaml", [])
    assert set(config["datasets"]) - {"synthetic_faces", "lfw_parts"} <= set(model["datasets"])
    for method in METHODS:
        entry = cost._method_entry(model, method)
        assert entry["cpu"] > 0 and entry["mem"] > 0, method


def test_forest_work_grows_with_trees_rows_and_the_staged_size():
    shape = cost.Shape(1000, 250, 500, 20, 3)
    w30, m30 = cost.work("co2_forest", {"n_estimators": 30}, shape, "train")
    w1000, m1000 = cost.work("co2_forest", {"n_estimators": 1000}, shape, "train")
    assert w1000 == pytest.approx(w30 * 1000 / 30) and m1000 == m30  # trees are not kept: memory does not grow
    staged, _ = cost.work("co2_forest", {"n_estimators": 30}, shape, "train", (("n_estimators", (100, 1000)),))
    assert staged == pytest.approx(w1000)
    refit, _ = cost.work("co2_forest", {"n_estimators": 30}, shape, "trainval")
    assert refit > w30
    # scikit-learn's forests keep every tree: their memory term grows with the trees
    assert cost.work("rf", {"n_estimators": 1000}, shape, "train")[1] > 10 * cost.work("rf", {"n_estimators": 30},
                                                                                        shape, "train")[1]


def test_a_run_estimate_adds_the_start_the_data_and_the_workers():
    one = cost.estimate_run("co2_forest", {"n_estimators": 100}, "connect4", fit_on="trainval", threads=1)
    two = cost.estimate_run("co2_forest", {"n_estimators": 100}, "connect4", fit_on="trainval", threads=2)
    assert two.cpu_seconds == one.cpu_seconds and two.wall_seconds(2) == pytest.approx(one.cpu_seconds / 2)
    assert two.peak_mb > one.peak_mb  # a second tree being grown at once
    single = cost.estimate_run("cart", {"max_depth": 6}, "connect4", threads=2)
    assert single.wall_seconds(2) == single.cpu_seconds  # one tree: one core
    data_mb = (44000 + 11000 + 12557) * 126 * 8 / 1e6  # the split; no copy for a refit
    assert single.peak_mb > cost.load_model()["base_mb"] + data_mb


def test_shapes_come_from_the_prepared_split_when_there_is_one(tmp_path):
    X = np.zeros((10, 4))
    np.savez(tmp_path / "split0.npz", X_train=X, X_val=X[:3], X_test=X[:5], y_train=np.zeros(10),
             classes=np.array(["a", "b"]), task=np.array("classification"))
    (tmp_path / "toy").mkdir()
    (tmp_path / "split0.npz").rename(tmp_path / "toy" / "split0.npz")
    assert cost.dataset_shape("toy", processed_dir=tmp_path) == cost.Shape(10, 3, 5, 4, 2)
    with pytest.raises(cost.UnknownShape, match="toy2"):
        cost.dataset_shape("toy2", processed_dir=tmp_path)


def test_slurm_resources_are_the_estimate_times_the_safety_factors():
    model = cost.load_model()
    safety = model["safety"]
    spec = FinalSpec("e", "connect4", "co2_forest", 0, _items({"n_estimators": 1000}), None,
                     _items({"n_estimators": 1000, "nu": 0.1}), True, (), (("n_estimators", (100, 300, 1000)),))
    est = cost_plan.estimate_spec(spec, "paper", threads=2)
    assert resources.run_mem_mb("paper", spec, 2) == max(safety["min_mb"], math.ceil(est.peak_mb * safety["memory"]))
    assert resources.run_runtime("paper", spec, 2) == max(safety["min_minutes"],
                                                           math.ceil(est.wall_seconds(2) * safety["cpu"] / 60))
    assert resources.run_mem_mb("paper", spec, 2) < 8000  # bounded memory: no longer 8 GB + 16 MB per tree
    # a data set the model does not know asks for the flat numbers
    unknown = RunSpec("no_such_set", "cart", _items({"max_depth": 3}), 0)
    assert resources.run_mem_mb("paper", unknown) == resources.FALLBACK_MB
    assert resources.run_runtime("paper", unknown) == resources.FALLBACK_MINUTES


def test_a_retry_asks_for_more_time_than_the_attempt_it_follows():
    """A job killed at its time limit is retried (profile: retries 1); the same limit would kill it again."""
    small = RunSpec("digits", "tao_oblique", _items({"C": 1, "max_depth": 6}), 0)  # at the 10-minute floor
    unknown = RunSpec("no_such_set", "cart", _items({"max_depth": 3}), 0)
    for spec in (small, unknown):
        first, second, third = (resources.run_runtime("default", spec, 1, attempt) for attempt in (1, 2, 3))
        assert first == resources.run_runtime("default", spec, 1)
        assert first < second < third and second >= 2 * first


def test_a_final_run_with_a_selection_is_costed_at_its_dearest_candidate():
    plan = build_plan(load_config(REPO / "config.yaml", ["profile=paper"]))
    final = next(f for f in plan.finals.values() if f.method == "co2_forest" and f.dataset == "letter"
                 and f.selection is not None and dict(f.point)["n_estimators"] == 1000)
    est = cost_plan.estimate_spec(final, plan.profile)
    costs = [cost.estimate_run("co2_forest", {**dict(c.params), **dict(final.point)}, "letter", fit_on="trainval",
                               stages=final.stages).cpu_seconds for c in final.selection.candidates]
    assert est.cpu_seconds == pytest.approx(max(costs))


def test_plan_estimate_prints_every_experiment_and_the_totals(capsys):
    assert main(["plan", "--config", str(REPO / "config.yaml"), "--estimate", "--cores", "2", "64"]) == 0
    out = capsys.readouterr().out
    plan = build_plan(load_config(REPO / "config.yaml", []))
    experiments = {spec.experiment for spec in plan.finals.values()}
    for name in experiments:
        assert re.search(rf"^  {name}\s+\d+\s+[\d.]+", out, re.M), name
    total = re.search(r"^  total\s+(\d+)\s+([\d.]+)\s+([\d.]+)", out, re.M)
    assert total and int(total.group(1)) == len(plan.runs) + len(plan.finals)
    assert "on 2 cores:" in out and "on 64 cores:" in out


def test_plan_estimate_prices_the_grids_as_written_beside_their_growth(capsys):
    """The total charges every grid that may grow past a chosen edge at its worst; `plan --estimate` also prices the
    same plan without grow steps, and the difference is the growth's: positive where a profile grows grids, and the
    plan without them has no grown candidate and the same final runs."""
    from treeopt.experiments.plan.grow import without_growth

    config = load_config(REPO / "config.yaml", [])
    plain = without_growth(config)
    assert "grow" in str(config["profiles"]["default"]) and "'grow'" not in str(plain["profiles"]["default"])
    assert config != plain and "grow" in str(config["profiles"]["default"])  # the copy is changed, not the config
    grown, ungrown = build_plan(config), build_plan(plain)
    assert not ungrown.grown and grown.grown
    assert len(ungrown.finals) == len(grown.finals) and len(ungrown.runs) <= len(grown.runs)  # names differ: a
    # grown selection's folder says so
    total = sum(c.cpu_seconds for c in cost_plan.estimate_plan(grown).values())
    base = sum(c.cpu_seconds for c in cost_plan.estimate_plan(ungrown).values())
    assert 0 < base < total
    assert main(["plan", "--config", str(REPO / "config.yaml"), "--estimate"]) == 0
    line = re.search(r"of the total, ([\d.]+) CPU hours are grids grown .* the grids as written: ([\d.]+) CPU hours",
                     capsys.readouterr().out)
    assert line and float(line.group(1)) == pytest.approx((total - base) / 3600, rel=0.01)
    assert float(line.group(2)) == pytest.approx(base / 3600, rel=0.01)


def test_the_model_assumes_the_estimators_own_defaults():
    import inspect

    from treeopt.nongreedy import NonGreedyTreeClassifier
    from treeopt.optimal import OptimalTreeClassifier

    assert inspect.signature(NonGreedyTreeClassifier).parameters["max_epochs"].default == cost.NONGREEDY_MAX_EPOCHS
    assert inspect.signature(OptimalTreeClassifier).parameters["time_limit"].default == cost.OPTIMAL_TIME_LIMIT
    # a run is costed at its epoch budget: without max_epochs, at the estimator's default
    shape = cost.Shape(1000, 250, 500, 20, 3)
    default, _ = cost.work("nongreedy_tree", {"max_depth": 4}, shape, "train")
    budget, _ = cost.work("nongreedy_tree", {"max_depth": 4, "max_epochs": cost.NONGREEDY_MAX_EPOCHS}, shape, "train")
    assert default == budget


def test_the_optimal_tree_costs_its_tests_to_the_depth_and_stops_at_the_time_limit():
    shape = cost.Shape(1000, 250, 500, 20, 3)
    tests = 20 * 5 + 3  # 5 quantile tests per feature + the splits of CART's depth-2 tree
    assert cost.binary_tests({"n_thresholds": 5}, shape, 2) == tests
    assert cost.work("optimal", {"max_depth": 2, "n_thresholds": 5}, shape, "train")[0] == 1000 * tests ** 2
    # a feature with two values is one test, whatever n_thresholds
    assert cost.binary_tests({"n_thresholds": 5}, cost.Shape(1000, 250, 500, 20, 3, max_distinct=2), 2) == 23
    # Connect-4's one-hot features: one test each
    assert cost.dataset_shape("connect4").max_distinct == 2
    deep = cost.estimate_run("optimal_axis", {"max_depth": 6, "time_limit": 60}, "connect4", fit_on="trainval")
    assert deep.cpu_seconds == pytest.approx(60 + cost.load_model()["start_seconds"])
    shallow = cost.estimate_run("optimal_axis", {"max_depth": 2, "time_limit": 60}, "connect4", fit_on="trainval")
    assert shallow.cpu_seconds < deep.cpu_seconds
    # TAO started from the optimal tree pays for that tree first
    params = {"max_depth": 3, "init_params": {"n_thresholds": 5, "time_limit": 60}}
    from_cart = cost.estimate_run("tao_axis", params, "connect4", fit_on="trainval")
    from_optimal = cost.estimate_run("tao_axis", {**params, "init": "optimal"}, "connect4", fit_on="trainval")
    optimal = cost.estimate_run("optimal_axis", {"max_depth": 3, "n_thresholds": 5, "time_limit": 60}, "connect4",
                                fit_on="trainval")
    start = cost.load_model()["start_seconds"]
    assert from_optimal.cpu_seconds == pytest.approx(from_cart.cpu_seconds + optimal.cpu_seconds - start)


def test_a_tao_run_is_charged_the_path_it_runs_and_the_initial_tree_it_fits():
    """TAOTreeClassifier runs the warm-start C values above C, then C: a candidate at C = 10 runs 3 steps of the
    path 100 ... 0.2, one at C = 0.1 all 11 (the model charged 11 to both until 2026-11-28); its OC1, CO2 or
    non-greedy initial tree is fitted first, at the TAO run's depth, and charged as that method's run."""
    from treeopt.tao import TAOTreeClassifier

    path = [100, 30, 10, 3, 1.7, 1, 0.7, 0.5, 0.3, 0.2]
    shape = cost.Shape(48000, 12000, 10000, 784, 10)
    steps = {C: cost.work("tao", {"max_depth": 8, "C": C, "warm_start_C": path}, shape, "train")[0]
             for C in (10, 3, 0.1)}
    # each C value weighs min(1, sqrt(C / 3)): its node problems cost less as the l1 weights thin out
    below = sum(math.sqrt(c / cost.TAO_C_DENSE) for c in (1.7, 1, 0.7, 0.5, 0.3, 0.2, 0.1))
    assert steps[3] / steps[10] == pytest.approx(4 / 3) and steps[0.1] / steps[10] == pytest.approx((4 + below) / 3)
    assert 6.9 < 4 + below < 7.0  # 11 C values cost about 7 at C >= 3
    # C not known before the run (inherited): the whole path, its own C at full weight; no C: the estimator's default
    best = cost.work("tao", {"max_depth": 8, "C": "best", "warm_start_C": path}, shape, "train")[0]
    assert best / steps[10] == pytest.approx((4 + below - math.sqrt(0.1 / 3) + 1) / 3)
    # neither C nor a path (axis-aligned TAO: no SVM): one step at full weight
    assert cost.tao_path_weight(None, None) == 1.0
    assert cost_work._path_above(path, None) == [1.7, 3.0, 10.0, 30.0, 100.0]
    assert TAOTreeClassifier().C == 1.0
    fitted = TAOTreeClassifier(C=3, warm_start_C=path, max_depth=1, max_iter=1).fit(*_tiny_problem())
    assert [step["C"] for step in fitted.path_] == [100, 30, 10, 3]
    model, start = cost.load_model(), cost.load_model()["start_seconds"]
    params = {"max_depth": 8, "C": 3, "warm_start_C": path}
    from_cart = cost.estimate_run("tao_oblique", {**params, "init": "cart"}, "fashion_mnist", model=model)
    for init, method in (("oc1", "oc1_tree"), ("co2", "co2_tree"), ("nongreedy", "nongreedy_tree")):
        first = cost.estimate_run(method, {"max_depth": 8}, "fashion_mnist", model=model)
        tao = cost.estimate_run("tao_oblique", {**params, "init": init}, "fashion_mnist", model=model)
        assert tao.cpu_seconds == pytest.approx(from_cart.cpu_seconds + first.cpu_seconds - start)


def _tiny_problem():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    return X, (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)


def test_an_oc1_tree_on_two_valued_features_costs_more_per_unit():
    """OC1's line searches tie on one-hot features (Connect-4) and take the quicksort form: the model charges
    OC1_TWO_VALUED_FACTOR times the work of continuous features of the same shape; restarts n p d otherwise."""
    params = {"max_depth": 6, "n_restarts": 5}
    one_hot = cost.Shape(44000, 11000, 12557, 126, 3, max_distinct=2)
    continuous = cost.Shape(44000, 11000, 12557, 126, 3)
    assert (cost.work("oc1_tree", params, one_hot, "train")[0]
            == pytest.approx(cost.OC1_TWO_VALUED_FACTOR * cost.work("oc1_tree", params, continuous, "train")[0]))
    assert cost.work("oc1_tree", params, continuous, "train")[0] == pytest.approx(5 * 44000 * 126 * 6)
    assert cost.work("oc1_tree", {**params, "n_restarts": 20}, continuous, "train")[0] == pytest.approx(
        4 * cost.work("oc1_tree", params, continuous, "train")[0])


def test_a_non_greedy_run_pays_for_the_co2_tree_it_starts_from_and_its_epochs():
    model = cost.load_model()
    params = {"max_depth": 8, "nu": 1, "learning_rate": 0.01, "init_params": {"nu": 1, "learning_rate": 0.01}}
    start = cost.estimate_run("co2_tree", {"max_depth": 8, "nu": 1, "learning_rate": 0.01}, "connect4", model=model)
    entry = cost._method_entry(model, "nongreedy_tree")
    no_epochs = cost.estimate_run("nongreedy_tree", {**params, "max_epochs": 0}, "connect4", model=model)
    assert no_epochs.cpu_seconds == pytest.approx(start.cpu_seconds + entry.get("fixed", 0.0))
    ten = cost.estimate_run("nongreedy_tree", {**params, "max_epochs": 10}, "connect4", model=model)
    twenty = cost.estimate_run("nongreedy_tree", {**params, "max_epochs": 20}, "connect4", model=model)
    assert twenty.cpu_seconds - ten.cpu_seconds == pytest.approx(ten.cpu_seconds - no_epochs.cpu_seconds)


def test_fixed_and_slope_recover_a_line_and_fall_back_to_one_coefficient():
    import importlib.util

    spec = importlib.util.spec_from_file_location("cost_runs", REPO / "benchmarks" / "cost_runs.py")
    cost_runs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cost_runs)
    fixed, cpu = cost_runs.fixed_and_slope([1e6, 1e8, 1e9], [0.5 + 2e-8 * u for u in (1e6, 1e8, 1e9)])
    assert fixed == pytest.approx(0.5) and cpu == pytest.approx(2e-8)
    fixed, cpu = cost_runs.fixed_and_slope([1e8, 2e8], [1.0, 4.0])  # one size (within 4x): no fixed part
    assert fixed == 0.0 and cpu == pytest.approx(math.sqrt(1e-8 * 2e-8))
    fixed, cpu = cost_runs.fixed_and_slope([1e6, 1e9], [5.0, 1.0])  # would need a negative slope: no line
    assert fixed >= 0 and cpu >= 0


def test_coefficients_set_at_size_say_how_and_are_not_refitted_from_small_runs():
    """A method whose coefficient was set from runs at the paper profile's sizes (OC1 Forest, OC1 tree, TAO) says how
    in the model (`measured`), and `cost_runs.py fit` keeps it (SET_AT_SIZE): a refit from the small calibration runs
    put TAO 7.7x and the OC1 tree 2.2x off at size."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("cost_runs", REPO / "benchmarks" / "cost_runs.py")
    cost_runs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cost_runs)
    model = cost.load_model()
    set_here = {m for m, entry in model["methods"].items() if "measured" in entry}
    assert cost_runs.SET_AT_SIZE <= set_here
    calibrated_small = {run[1] for run in cost_runs.CALIBRATION_RUNS.values()}
    assert set_here & calibrated_small <= cost_runs.SET_AT_SIZE  # else `fit` would overwrite a coefficient set at size
    for method in set_here:  # the check runs it names were timed and are in the check list
        named = [n for n in model["methods"][method].get("calibrated_on", []) if "/" in n and " " in n]
        assert all(n in cost_runs.CHECK_RUNS for n in named if not n.startswith("bench_")), method


def test_the_readme_states_the_paper_profiles_estimate_at_this_commit(capsys):
    assert main(["plan", "--config", str(REPO / "config.yaml"), "--set", "profile=paper", "--estimate"]) == 0
    total = re.search(r"^  total\s+(\d+)\s+([\d.]+)\s+([\d.]+)", capsys.readouterr().out, re.M)
    stated = re.search(r"At this\s+commit: ([\d,]+) runs, about ([\d,]+) CPU-hours", (REPO / "README.md").read_text())
    assert stated, "the README's cost sentence changed its wording"
    assert int(stated.group(1).replace(",", "")) == int(total.group(1))
    assert int(stated.group(2).replace(",", "")) == round(float(total.group(2)))


def test_a_split_forest_is_charged_as_its_blocks_and_the_merge():
    """A final run split into tree blocks: each block costs a forest of its trees, the run itself is the merge (its
    sums read); the blocks together cost the whole forest plus each block's start. The paper profile's block sizes
    keep every block within 4 CPU-hours (config.yaml's rule for forest_block_trees), and `plan --estimate` charges
    them as jobs."""
    plan = build_plan(load_config(REPO / "config.yaml", ["profile=paper"]))
    final = next(f for f in plan.finals.values() if f.method == "oc1_forest" and f.dataset == "protein"
                 and f.block_trees is not None)
    blocks = [plan.blocks[final.block_dir(a, b)] for a, b in final.blocks]
    assert len(blocks) == 20
    model = cost.load_model()
    whole = cost.estimate_run("oc1_forest", dict(final.params), "protein", fit_on="trainval", stages=final.stages)
    parts = [cost_plan.estimate_spec(b, plan.profile) for b in blocks]
    start = model["start_seconds"]
    assert sum(p.cpu_seconds for p in parts) == pytest.approx(whole.cpu_seconds + 19 * start, rel=1e-9)
    merge = cost_plan.estimate_spec(final, plan.profile)
    assert merge == cost_plan.estimate_merge(final) and merge.cpu_seconds > start + model["merge"]["fixed"]
    assert merge.cpu_seconds < 60 and merge.parallel == 1
    # every tree block of the profile within 4 CPU-hours; the 1000-tree OC1 Forest on Protein alone is ~20 h (the
    # model's per-tree cost set again on 29 Nov: 70 CPU-s a Protein-shaped tree), far more than one job should hold
    assert whole.cpu_seconds > 4 * 4 * 3600
    assert max(cost_plan.estimate_spec(b, plan.profile).cpu_seconds for b in plan.blocks.values()) <= 4 * 3600
    costs = cost_plan.estimate_plan(plan)
    oblique = costs["co2_forest_size_oblique"]
    segmentation = costs["co2_segmentation_trees"].n_blocks + costs["co2_segmentation_depth"].n_blocks
    # segmentation: 32-tree finals only (their 16 trees are the first 16; no separate 16-tree finals since 28 Nov);
    # the depth sweep's two-probe and CO2 forests one depth-30 fit each (4 blocks), its depths cut off it (29 Nov)
    assert costs["co2_segmentation_depth"].n_blocks == 2 * 4
    assert oblique.n_blocks == 300 and segmentation == 170 and len(plan.blocks) == 470
    # every job of the paper profile within 4 hours (segmentation forests were up to 10 hours in one job)
    assert max(c.longest_seconds for c in costs.values()) <= 4 * 3600
    assert oblique.longest_seconds <= 4 * 3600  # the longest: a CO2 Forest of 1000 trees on Covertype, or a block
    # SLURM: a block asks for 3x its predicted time, the merge for the floor
    assert resources.run_runtime("paper", blocks[0]) == math.ceil(parts[0].cpu_seconds * 3 / 60)
    assert resources.run_runtime("paper", final) == model["safety"]["min_minutes"]


def test_plan_estimate_shows_small_costs_with_three_significant_digits():
    from treeopt.experiments.__main__ import _hours

    assert _hours(15, 0) == "0.00417"  # a 15-s profile is not printed as 0.0 hours
    assert _hours(3600 * 5, 0) == "5.00"
    assert _hours(3600 * 1392.04, 0) == "1392.0"
    assert _hours(0, 0) == "0.0"
    assert len(_hours(15)) == 10  # the table's column width


def test_a_co2_segmentation_fit_is_charged_its_grid_points_epochs():
    """The CO2 segmentation tree's cost was measured at nu 1, eta 1e-4; other grid points scale its fit (not its
    scoring) by their measured sample-epochs (``fit_factors``); a point the table does not list costs as measured."""
    model = cost.load_model()
    entry = model["methods"]["seg_co2"]
    base = {"n_estimators": 16, "windows_per_tree": 256000}

    def fit_part(params):
        whole = cost.estimate_run("seg_co2", {**base, **params}, "lfw_parts", model=model).cpu_seconds
        no_fit = cost.estimate_run("seg_co2", {**base, **params, "windows_per_tree": 0}, "lfw_parts",
                                   model=model).cpu_seconds
        return whole - no_fit

    measured = fit_part({"nu": 1, "learning_rate": 1e-4})
    assert measured > 3600  # 16 trees of ~983 CPU-s
    assert fit_part({}) == pytest.approx(measured)  # the estimator's defaults are the measured point
    slow = cost.fit_factor(entry, {"nu": 4, "learning_rate": 1e-5})
    assert slow > 1.5
    assert fit_part({"nu": 4, "learning_rate": 1e-5}) == pytest.approx(slow * measured)
    assert cost.fit_factor(entry, {"nu": 2, "learning_rate": 1e-4}) == 1.0
    assert cost.fit_factor(model["methods"]["seg_rf"], {"nu": 4, "learning_rate": 1e-5}) == 1.0


def test_a_segmentation_candidate_is_charged_without_the_test_images_it_does_not_label():
    """jobs.candidate_run labels no test image for segmentation (the choice reads validation): the paper profile's
    seg_co2 candidates and their blocks are charged their validation and training images only, less than a run that
    labels the 250 LFW test images too; a final run is charged them."""
    plan = build_plan(load_config(REPO / "config.yaml", ["profile=paper"]))
    run = next(r for r in plan.runs.values() if r.method == "seg_co2")
    block = plan.blocks[run.block_dir(*run.blocks[0])]
    params = {**dict(block.final.params), "n_estimators": block.stop - block.first}
    with_test = cost.estimate_run("seg_co2", params, "lfw_parts", fit_on="train")
    charged = cost_plan.estimate_spec(block, plan.profile)
    assert charged.cpu_seconds < 0.9 * with_test.cpu_seconds
    assert charged.cpu_seconds == cost.estimate_run("seg_co2", params, "lfw_parts", fit_on="train",
                                                    score_test=False).cpu_seconds
    final = next(f for f in plan.finals.values() if f.method == "seg_co2" and f.blocks)
    final_block = plan.blocks[final.block_dir(*final.blocks[0])]
    assert cost_plan.estimate_spec(final_block, plan.profile).cpu_seconds > charged.cpu_seconds


def test_a_segmentation_depth_sweep_is_charged_one_deep_fit_and_a_scoring_pass_per_depth():
    """segment_runs' depth stages: one level-order fit to the deepest depth, the forest scored with its trees cut at
    each depth: the deepest run's units plus, per shallower depth, that depth's scoring alone (no fit)."""
    shape = cost.Shape(2000, 100, 250, 48400, 3)
    params = {"n_estimators": 16, "windows_per_tree": 256000, "grow_order": "level", "max_depth": 30}
    stages = (("max_depth", (10, 15, 20, 25, 30)),)
    staged, _ = cost.work("segmentation", params, shape, "trainval", stages, score_weight=0.01)

    def alone(depth, windows):
        return cost.work("segmentation", {**params, "max_depth": depth, "windows_per_tree": windows}, shape,
                         "trainval", score_weight=0.01)[0]

    assert staged == pytest.approx(alone(30, 256000) + sum(alone(d, 0) for d in (10, 15, 20, 25)), rel=1e-12)
    # a tree limited below the levels an unlimited tree is charged costs less; one limited above it, no more
    unlimited = cost.work("segmentation", {**params, "max_depth": None}, shape, "trainval", score_weight=0.01)[0]
    assert alone(10, 256000) < alone(20, 256000) == alone(30, 256000) == unlimited
    # with the model's CO2 scoring weight (0.0044 at this commit), about half of the five fits' CPU (the fits of 10-25 saved)
    weight = cost.load_model()["methods"]["seg_co2"]["score_weight"]
    five = sum(cost.work("segmentation", {**params, "max_depth": d}, shape, "trainval", score_weight=weight)[0]
               for d in (10, 15, 20, 25, 30))
    assert cost.work("segmentation", params, shape, "trainval", stages, score_weight=weight)[0] < 0.6 * five
    # a staged depth below the fit's is what is cut; the run's own depth is scored once
    assert cost.work("segmentation", params, shape, "trainval", (("max_depth", (30,)),), score_weight=0.01)[0] == (
        alone(30, 256000))


def test_an_exponential_loss_gbdt_is_charged_its_trees_before_they_stop_growing_and_asks_time_for_all():
    """`gbdt_exp`'s margins pass the loss's floor after about collapse / (J s) trees, and later trees are their root
    (studies/gbdt_tree_cost.py collapse-grid): charged min(T, collapse / (J s)) trees; its bound, every tree, sizes
    the time limit a cluster job asks for."""
    model = cost.load_model()
    entry = cost._method_entry(model, "gbdt_exp")
    collapse = entry["collapse"]
    base = {"n_estimators": 1000, "min_samples_leaf": 10}
    fixed = model["start_seconds"] + entry.get("fixed", 0.0)

    def trees_charged(est, J):
        return (est.cpu_seconds - fixed) / (entry["cpu"] * 2000 * 166 * math.log2(J))

    early = cost.estimate_run("gbdt_exp", {**base, "max_leaf_nodes": 64, "learning_rate": 1.0}, "musk2", model=model)
    assert trees_charged(early, 64) == pytest.approx(collapse / 64)
    assert early.bound_seconds == pytest.approx(fixed + entry["cpu"] * 1000 * 2000 * 166 * 6)
    assert early.cpu_bound_seconds > 10 * early.cpu_seconds
    # small shrinkage or stumps: no collapse within the 1000 trees, the bound is the estimate
    for J, s in ((64, 0.01), (2, 1.0)):
        late = cost.estimate_run("gbdt_exp", {**base, "max_leaf_nodes": J, "learning_rate": s}, "musk2", model=model)
        assert trees_charged(late, J) == pytest.approx(1000) and late.cpu_bound_seconds == late.cpu_seconds
    # the square-loss GBDT has no collapse: every tree
    square = cost.estimate_run("gbdt_sq_clf", {**base, "max_leaf_nodes": 64, "learning_rate": 1.0}, "musk2")
    assert square.bound_seconds is None and square.cpu_bound_seconds == square.cpu_seconds
    # the paper profile's run at J 64, s 1 asks a cluster for the time of its bound
    plan = build_plan(load_config(REPO / "config.yaml", ["profile=paper"]))
    final = next(f for f in plan.finals.values() if f.method == "gbdt_exp" and f.dataset == "musk2"
                 and dict(f.point) == {"learning_rate": 1.0, "max_leaf_nodes": 64, "n_estimators": 1000})
    est = cost_plan.estimate_spec(final, plan.profile)
    assert est.cpu_bound_seconds > 10 * est.cpu_seconds
    assert resources.run_runtime("paper", final) == max(model["safety"]["min_minutes"], math.ceil(
        est.cpu_bound_seconds * model["safety"]["cpu"] / 60))
    # a final run chosen among candidates: the dearest candidate's estimate, and the largest bound among them
    points = [{"learning_rate": 1.0, "max_leaf_nodes": 64}, {"learning_rate": 0.1, "max_leaf_nodes": 16}]
    chosen = dataclasses.replace(final, params=None, selection=SimpleNamespace(
        candidates=[SimpleNamespace(params=_items({**base, **p})) for p in points], growth=()), point=())
    est = cost_plan.estimate_spec(chosen, plan.profile)
    candidates = [cost.estimate_run("gbdt_exp", {**base, **p}, "musk2", stages=final.stages) for p in points]
    assert est.cpu_seconds == pytest.approx(max(c.cpu_seconds for c in candidates))
    assert est.cpu_bound_seconds == pytest.approx(max(c.cpu_bound_seconds for c in candidates))
    assert np.argmax([c.cpu_seconds for c in candidates]) != np.argmax([c.cpu_bound_seconds for c in candidates])


def test_plan_estimate_prints_the_bound_of_runs_charged_at_their_expected_cost(capsys):
    assert main(["plan", "--config", str(REPO / "config.yaml"), "--set", "profile=paper", "--estimate"]) == 0
    out = capsys.readouterr().out
    total = float(re.search(r"^  total\s+\d+\s+([\d.]+)", out, re.M).group(1))
    bound = re.search(r"at most ([\d.]+) CPU hours if no exponential-loss GBDT's trees stop growing", out)
    assert bound and float(bound.group(1)) > total
