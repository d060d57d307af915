"""Runs are named by what they are: profiles keep their own runs and share identical ones, every name passes a
shell and a cluster's job encoding, earlier folders are found, and bad values stop the workflow before any job.
"""

import copy
import os
import re
import shlex
import shutil

import pytest
import yaml
from snakemake.target_jobs import parse_target_jobs_cli_args
from snakemake_interface_executor_plugins.utils import TargetSpec, encode_target_jobs_cli_args

from test_workflow_snakemake import REPO, copy_workflow, dry_run_jobs, snakemake
from treeopt.experiments.__main__ import main as experiments_cli
from treeopt.experiments.plan.config import ConfigError, load_config, validate_config
from treeopt.experiments.plan.build import build_plan

FORBIDDEN = set(",;[]'\" /()")
WINE = {"task": "classification", "format": "sklearn", "options": {"loader": "wine"},
        "split": {"protocol": "random"}, "scale": "none"}
DATA = {"mirror": None, "raw_dir": "data/raw", "processed_dir": "data/processed",
        "lock_file": "data/checksums.lock.yaml"}


def plan_of(config, profile=None):
    config = copy.deepcopy(config)
    if profile:
        config["profile"] = profile
    return build_plan(validate_config(config))


# ---- names ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("profile", ["default", "paper"])
def test_every_planned_wildcard_value_survives_a_shell_and_the_cluster_job_encoding(profile):
    plan = build_plan(load_config(REPO / "config.yaml", [f"profile={profile}"]))
    values = {value for _, value in plan.wildcard_values()}
    assert len(values) > 100
    for value in values:
        assert not FORBIDDEN & set(value), value
        assert shlex.quote(value) == value, value  # nothing a shell would split, expand or need quoted
    # the executor's round trip (snakemake issue 2366 cut `params=C=0.01,max_depth=6` at the comma)
    for path in [*plan.runs, *plan.finals][:2000]:
        _, _, dataset, method, name, seed = path.split("/")
        wildcards = {"dataset": dataset, "method": method, "params": name, "seed": seed[4:]}
        encoded = encode_target_jobs_cli_args([TargetSpec("candidate_run", wildcards)])
        assert parse_target_jobs_cli_args(encoded)[0].wildcards_dict == wildcards


def test_names_show_the_parameters_and_chosen_ones_as_best():
    plan = build_plan(load_config(REPO / "config.yaml"))
    tao, = plan.find(experiment="tao_table1", method="tao_oblique")
    assert re.fullmatch(r"results/runs/digits/tao_oblique/final-C-best_max_depth-6__[0-9a-f]{10}/seed0", tao)
    selection = plan.finals[tao].selection
    assert [dict(c.params)["C"] for c in selection.candidates] == [0.01, 0.1, 1, 10]
    assert all(re.search(rf"/C-{c}_max_depth-6__", r.dir) for c, r in zip(("0.01", "0.1", "1", "10"),
                                                                            selection.candidates))
    path, = plan.find(experiment="tao_fig1_path", method="tao_oblique", max_depth=4, init="cart")
    assert "_warm_start_C-100+10+1+0.1+0.03__" in path  # a list: items joined by +
    co2, = plan.find(experiment="co2_forest_size_oblique", method="co2_forest", dataset="digits", n_estimators=30)
    assert "/final-max_features-from-rf_n_estimators-staged30_nu-best_standardize-tree__" in co2


# ---- identity: profiles and experiments ------------------------------------------------------------------

def two_profiles():
    """Profiles `a` and `b` both have an experiment `forest` whose rf grids differ (max_features 1, 2 / 1, 4),
    and the same single cart run under two experiment names (`depth` in a, `depth_b` in b)."""
    def forest(values):
        return {"reports": ["co2_table1"], "datasets": ["wine"], "sweep": {"n_estimators": [3]},
                "methods": {"rf": {"grid": {"max_features": values}, "params": {"max_depth": 3}}}}
    depth = {"reports": ["tao_fixed_depth"], "datasets": ["wine"], "sweep": {"max_depth": [2]},
             "methods": {"cart": {}}}
    return {"profile": "a", "data": DATA, "datasets": {"wine": WINE},
            "profiles": {"a": {"seeds": [0], "experiments": {"forest": forest([1, 2]), "depth": depth}},
                         "b": {"seeds": [0], "experiments": {"forest": forest([1, 4]),
                                                             "depth_b": copy.deepcopy(depth)}}}}


def test_same_experiment_name_different_grid_never_shares_a_folder_and_identical_runs_do():
    a, b = plan_of(two_profiles(), "a"), plan_of(two_profiles(), "b")
    max_features = {p: {dict(r.params)["max_features"]: d for d, r in plan.runs.items()} for p, plan in
                    (("a", a), ("b", b))}
    assert max_features["a"][1] == max_features["b"][1]  # the same candidate: one folder
    assert max_features["a"][2] != max_features["b"][4]
    forest_a, forest_b = a.find(experiment="forest"), b.find(experiment="forest")
    assert forest_a != forest_b and not set(a.selections) & set(b.selections)
    assert a.find(experiment="depth") == b.find(experiment="depth_b")  # same run, other experiment name


def test_a_changed_data_set_entry_changes_the_names_a_description_does_not():
    config = two_profiles()
    before = set(plan_of(config).runs)
    config["datasets"]["wine"]["description"] = "the same data"
    assert set(plan_of(config).runs) == before
    config["datasets"]["wine"]["scale"] = "standard"
    assert not set(plan_of(config).runs) & before


def _tree_state(root, paths):
    """path -> (metrics.json bytes or the file's bytes, the time Snakemake reads for the output)."""
    state = {}
    for path in paths:
        p = root / path
        stamp = p / ".snakemake_timestamp" if (p / ".snakemake_timestamp").exists() else p
        state[path] = ((p / "metrics.json").read_bytes() if p.is_dir() else p.read_bytes(), stamp.stat().st_mtime_ns)
    return state


def _jobs(out):
    """Rule names of the jobs a Snakemake log says it ran."""
    return re.findall(r"^(?:local)?rule (\w+):", out, flags=re.M)


@pytest.mark.slow
def test_two_profiles_sharing_experiment_names_run_alternately_keep_their_runs_and_plan_nothing_again(tmp_path):
    config = two_profiles()
    root = copy_workflow(tmp_path, config)
    a, b = plan_of(config, "a"), plan_of(config, "b")
    first = snakemake(root, "--cores", "1", "--config", "profile=a")
    assert first.returncode == 0, first.stderr[-3000:]
    a_outputs = [*a.runs, *a.selections, *a.finals]
    after_a = _tree_state(root, a_outputs)
    second = snakemake(root, "--cores", "1", "--config", "profile=b")
    assert second.returncode == 0, second.stderr[-3000:]
    assert _tree_state(root, a_outputs) == after_a  # nothing of a rewritten, shared runs not redone
    ran = _jobs(second.stdout + second.stderr)
    assert ran.count("candidate_run") == 1 and ran.count("select") == 1  # only b's max_features 4 and its choice
    assert ran.count("final_run") == 1  # b's forest final; the cart run is a's (same run, other experiment)
    for profile in ("a", "b", "a"):  # switching back and forth: nothing to do
        again = snakemake(root, "--cores", "1", "--config", f"profile={profile}")
        assert again.returncode == 0, again.stderr[-3000:]
        assert "Nothing to be done" in again.stdout + again.stderr, (profile, again.stdout[-2000:])
    assert _tree_state(root, a_outputs) == after_a
    for plan in (a, b):
        for final in plan.finals:
            setup = yaml.safe_load((root / final / "params.yaml").read_text())
            assert setup["fit_on"] == "trainval" and "experiment" not in setup
    assert (root / "results/a/co2_table1.csv").is_file() and (root / "results/b/co2_table1.csv").is_file()


# ---- earlier folders ---------------------------------------------------------------------------------------

LEGACY = REPO / "tests/fixtures/legacy_runs"


def legacy_workflow(tmp_path, config=None):
    """A workflow copy holding the run folders and selection files treeopt 9261cea made for the fixture's
    config (names with commas, brackets and experiment names), newer than the prepared split, as after a run."""
    root = copy_workflow(tmp_path, config or yaml.safe_load((LEGACY / "config.yaml").read_text()))
    prepared = snakemake(root, "--cores", "1", "data/processed/wine/split0.npz")
    assert prepared.returncode == 0, prepared.stderr[-3000:]
    shutil.copytree(LEGACY / "results", root / "results", dirs_exist_ok=True)
    for path in sorted((root / "results").rglob("*")):
        os.utime(path)
    return root


def test_migrate_lists_and_renames_earlier_folders_that_are_the_planned_runs(tmp_path, capsys, monkeypatch):
    shutil.copytree(LEGACY / "results", tmp_path / "results")
    shutil.copy(LEGACY / "config.yaml", tmp_path / "config.yaml")
    monkeypatch.chdir(tmp_path)
    before = sorted(p.relative_to(tmp_path) for p in (tmp_path / "results").rglob("*"))
    assert experiments_cli(["migrate", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "profile 'tiny': would rename 14, left 0 earlier folders where they are" in out  # 11 runs, 3 choices
    assert sorted(p.relative_to(tmp_path) for p in (tmp_path / "results").rglob("*")) == before  # dry run
    assert experiments_cli(["migrate"]) == 0
    plan = plan_of(yaml.safe_load((tmp_path / "config.yaml").read_text()))
    assert all((tmp_path / p).exists() for p in [*plan.runs, *plan.finals, *plan.selections])
    selection = yaml.safe_load((tmp_path / plan.find("selection", experiment="tao")[0]).read_text())
    assert all(c["run"] in plan.runs for c in selection["candidates"]) and selection["chosen_run"] in plan.runs
    assert selection["renamed_from"] == "results/selection/wine/tao_oblique/tao/all/seed0.yaml"
    capsys.readouterr()
    assert experiments_cli(["migrate"]) == 0 and "would rename" not in capsys.readouterr().out  # nothing left
    assert experiments_cli(["targets", "--experiment", "inheriting", "--where", "n_estimators=3"]) == 0
    assert capsys.readouterr().out.split() == plan.find(experiment="inheriting", n_estimators=3)


@pytest.mark.slow
def test_earlier_run_folders_are_renamed_and_not_recomputed(tmp_path):
    root = legacy_workflow(tmp_path)
    config = yaml.safe_load((root / "config.yaml").read_text())
    plan = plan_of(config)
    old = {p.relative_to(root).as_posix(): p.joinpath("metrics.json").read_bytes()
           for p in (root / "results/runs").glob("*/*/*/seed0")}
    assert "results/runs/wine/tao_oblique/C=0.1,max_depth=2,warm_start_C=[10;1]/seed0" in old
    dry = snakemake(root, "-n")
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert f"renamed {len(old) + 3} run folders and selection files" in dry.stderr
    assert {j["rule"] for j in dry_run_jobs(dry.stdout + dry.stderr)} == {"table", "scorecard", "all"}  # no run, no choice
    for path in [*plan.runs, *plan.finals, *plan.selections]:
        assert (root / path).exists(), path
    for path in [*plan.runs, *plan.finals]:
        setup = yaml.safe_load((root / path / "params.yaml").read_text())
        assert old[setup["renamed_from"]] == (root / path / "metrics.json").read_bytes()
        assert not (root / setup["renamed_from"]).exists()
        assert setup["repeat"].startswith(f"python -m treeopt.experiments rerun {path}/params.yaml")
        for recorded in [setup.get("selection"), *(setup.get("inherited") or {}).values()]:
            assert recorded is None or recorded in plan.selections
    done = snakemake(root, "--cores", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    assert set(_jobs(done.stdout + done.stderr)) == {"table", "scorecard", "all"}
    assert (root / "results/tiny/tao_table1.csv").is_file()


@pytest.mark.slow
def test_an_earlier_folder_that_is_not_the_planned_run_is_left_alone_and_named(tmp_path):
    config = yaml.safe_load((LEGACY / "config.yaml").read_text())
    config["profiles"]["tiny"]["experiments"]["tao"]["methods"]["tao_oblique"]["grid"]["C"] = [0.1, 10]
    root = legacy_workflow(tmp_path, config)
    dry = snakemake(root, "-n")
    assert dry.returncode == 0, dry.stderr[-3000:]
    err = dry.stderr
    assert "left results/runs/wine/tao_oblique/final-tao-all/seed0 where it is" in err
    assert "left results/selection/wine/tao_oblique/tao/all/seed0.yaml where it is" in err
    assert (root / "results/runs/wine/tao_oblique/final-tao-all/seed0/metrics.json").is_file()  # not deleted
    jobs = dry_run_jobs(dry.stdout + dry.stderr)
    # C = 0.1 is still the same candidate (renamed, kept); C = 10, the new choice and its final run are made
    assert sorted(j["rule"] for j in jobs if j["rule"] != "table") == ["all", "candidate_run", "final_run",
                                                                       "scorecard", "select"]


# ---- values checked before any job ----------------------------------------------------------------------

def values_config():
    methods = {"cart": {"grid": {"min_samples_leaf": [1, 5]}},
               "co2_tree": {"grid": {"nu": [1, 10]}, "params": {"max_depth": 2}},
               "tao_oblique": {"grid": {"C": [0.1, 1]}, "params": {"max_depth": 2}},
               "nongreedy_tree": {"params": {"learning_rate": 0.01, "max_depth": 2}},
               "rf": {"grid": {"max_features": [1, "p^0.5"]}, "params": {"max_depth": 2, "n_estimators": 3}}}
    return {"profile": "tiny", "data": DATA, "datasets": {"wine": WINE},
            "profiles": {"tiny": {"seeds": [0], "experiments": {
                "e": {"reports": ["tao_fixed_depth"], "datasets": ["wine"], "methods": methods},
                "f": {"reports": ["co2_table1"], "datasets": ["wine"], "sweep": {"n_estimators": [1, 3]},
                      "staged": {"n_estimators": "all"}, "methods": {"rf": {"params": {"max_depth": 2}}}}}}}}


def _entry(config, method, experiment="e"):
    return config["profiles"]["tiny"]["experiments"][experiment]["methods"][method]


E = "profiles.tiny.experiments.e"
BAD_VALUES = [  # (what, edit, config path in the message, text in the message)
    ("nu -1", lambda c: _entry(c, "co2_tree")["grid"].update(nu=[-1, 10]), f"{E}.methods.co2_tree.grid.nu[0]",
     "must be a float in the range (0.0, inf)"),
    ("nu 0", lambda c: _entry(c, "co2_tree")["grid"].update(nu=[0, 10]), f"{E}.methods.co2_tree.grid.nu[0]",
     "0 is refused"),
    ("TAO max_depth -3", lambda c: _entry(c, "tao_oblique")["params"].update(max_depth=-3),
     f"{E}.methods.tao_oblique.params.max_depth", "must be an int in the range [1, inf)"),
    ("TAO max_depth 0", lambda c: _entry(c, "tao_oblique")["params"].update(max_depth=0),
     f"{E}.methods.tao_oblique.params.max_depth", "must be an int in the range [1, inf)"),
    ("C -1", lambda c: _entry(c, "tao_oblique")["grid"].update(C=[-1, 1]), f"{E}.methods.tao_oblique.grid.C[0]",
     "-1 is refused"),
    ("learning_rate -0.01", lambda c: _entry(c, "nongreedy_tree")["params"].update(learning_rate=-0.01),
     f"{E}.methods.nongreedy_tree.params.learning_rate", "-0.01 is refused"),
    ("ten", lambda c: _entry(c, "rf")["params"].update(n_estimators="ten"), f"{E}.methods.rf.params.n_estimators",
     "'ten' is refused"),
    ("n_estimators 0 in a staged sweep",
     lambda c: c["profiles"]["tiny"]["experiments"]["f"].update(sweep={"n_estimators": [0, 3]}),
     "profiles.tiny.experiments.f.sweep.n_estimators[0] (for method rf)", "must be an int in the range [1, inf)"),
    ("staged fit size 0",
     lambda c: c["profiles"]["tiny"]["experiments"]["f"].update(staged={"n_estimators": [0, 3]}),
     "profiles.tiny.experiments.f.staged.n_estimators[0] (for method rf)", "0 is refused"),
    ("p^O.9", lambda c: _entry(c, "rf")["grid"].update(max_features=["p^O.9", 1]),
     f"{E}.methods.rf.grid.max_features[0]", "is not the p^a notation"),
    ("unknown parameter", lambda c: _entry(c, "cart")["grid"].update(min_sample_leaf=[1, 2]),
     f"{E}.methods.cart: unknown grid parameter 'min_sample_leaf'", "did you mean 'min_samples_leaf'"),
    ("CART max_depth 0 in a sweep", lambda c: _entry(c, "cart").update(sweep={"max_depth": [0, 2]}),
     f"{E}.methods.cart.sweep.max_depth[0]", "must be an int in the range [1, inf) or None"),
    ("TAO init typo", lambda c: _entry(c, "tao_oblique")["params"].update(init="cartt"),
     f"{E}.methods.tao_oblique.params.init", "'cartt' is refused"),
    ("max_features 1.5", lambda c: _entry(c, "rf")["params"].update(max_features=1.5),
     f"{E}.methods.rf.params.max_features", "a float in the range (0.0, 1.0]"),
]


@pytest.mark.parametrize("what, edit, path, text", BAD_VALUES, ids=[b[0] for b in BAD_VALUES])
def test_check_refuses_a_bad_value_naming_its_place_the_value_and_the_range(tmp_path, capsys, what, edit, path,
                                                                            text):
    config = values_config()
    edit(config)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    assert experiments_cli(["check", "--config", str(tmp_path / "config.yaml")]) == 2
    err = capsys.readouterr().err
    assert path in err and text in err, err
    with pytest.raises(ConfigError):
        build_plan(validate_config(config))  # and the workflow's own config check (the Snakefile calls it)


@pytest.mark.slow
@pytest.mark.parametrize("what, edit, path, text", BAD_VALUES, ids=[b[0] for b in BAD_VALUES])
def test_snakemake_dry_run_refuses_a_bad_value_before_any_job(tmp_path, what, edit, path, text):
    config = values_config()
    edit(config)
    dry = snakemake(copy_workflow(tmp_path, config), "-n")
    out = dry.stdout + dry.stderr
    assert dry.returncode != 0 and path in out and text in out, out[-3000:]
    assert not dry_run_jobs(out) and not (tmp_path / "results").exists() and not (tmp_path / "data").exists()


def test_the_base_config_of_the_bad_values_is_valid(tmp_path, capsys):
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(values_config(), sort_keys=False))
    assert experiments_cli(["check", "--config", str(tmp_path / "config.yaml")]) == 0


YAML_11_FLOAT = """\
profile: tiny
data: {mirror: null, raw_dir: data/raw, processed_dir: data/processed, lock_file: data/checksums.lock.yaml}
datasets:
  wine: {task: classification, format: sklearn, options: {loader: wine}, split: {protocol: random}, scale: none}
profiles:
  tiny:
    seeds: [0]
    experiments:
      e:
        reports: [tao_fixed_depth]
        datasets: [wine]
        methods:
          nongreedy_tree: {params: {learning_rate: 3e-3, max_depth: 2}, grid: {nu: [1E1, 1.0e-2]}}
"""


def test_yaml_11_exponent_spellings_are_read_as_numbers(tmp_path):
    assert yaml.safe_load("x: 3e-3")["x"] == "3e-3"  # what YAML 1.1 (PyYAML, Snakemake) makes of it
    (tmp_path / "config.yaml").write_text(YAML_11_FLOAT)
    config = load_config(tmp_path / "config.yaml")
    entry = config["profiles"]["tiny"]["experiments"]["e"]["methods"]["nongreedy_tree"]
    assert entry["params"]["learning_rate"] == 0.003 and entry["grid"]["nu"] == [10.0, 0.01]
    runs = build_plan(config).runs.values()
    assert {dict(r.params)["learning_rate"] for r in runs} == {0.003}
    assert all("/learning_rate-0.003_" in r.dir for r in runs)


@pytest.mark.slow
def test_snakemake_reads_3e_3_as_a_number_too(tmp_path):
    root = copy_workflow(tmp_path, {})
    (root / "config.yaml").write_text(YAML_11_FLOAT)
    dry = snakemake(root, "-n")
    assert dry.returncode == 0, dry.stderr[-3000:]
    outputs = [j["output"] for j in dry_run_jobs(dry.stdout + dry.stderr) if j["rule"] == "candidate_run"]
    assert len(outputs) == 2 and all("/learning_rate-0.003_" in o for o in outputs)


def test_tao_and_cart_agree_on_depth_at_least_one():
    from sklearn.datasets import load_wine
    from sklearn.utils._param_validation import InvalidParameterError

    from treeopt.greedy import AxisAlignedTreeClassifier
    from treeopt.tao import TAOTreeClassifier

    X, y = load_wine(return_X_y=True)
    for cls in (TAOTreeClassifier, AxisAlignedTreeClassifier):
        with pytest.raises(InvalidParameterError, match="'max_depth' parameter .* must be an int in the range "
                                                        r"\[1, inf\)"):
            cls(max_depth=0).fit(X, y)
    assert TAOTreeClassifier(max_depth=1, C=1.0, random_state=0).fit(X, y).tree_.stats()["depth"] <= 1


def test_profile_names_that_are_the_workflows_own_folders_are_refused():
    config = values_config()
    config["profiles"]["runs"] = config["profiles"]["tiny"]
    with pytest.raises(ConfigError, match="profiles.runs: a profile writes results/runs/"):
        validate_config(config)

