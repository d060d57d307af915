"""config.yaml checking: misspelt keys are named, cross-references are checked, overrides apply."""

import copy

import pytest
import yaml

from treeopt.experiments.plan.config import ConfigError, ConfigWarning, active_profile, load_config, validate_config


def tiny_config():
    return {
        "profile": "default",
        "data": {"processed_dir": "data/processed"},
        "datasets": {
            "wine": {"task": "classification", "format": "sklearn", "options": {"loader": "wine"}},
            "diabetes": {"task": "regression", "format": "sklearn", "options": {"loader": "diabetes"}},
        },
        "profiles": {
            "default": {"seeds": [0], "experiments": {"depth": {
                "reports": ["nongreedy_fig2"], "datasets": ["wine"], "sweep": {"max_depth": [2, 3]},
                "methods": {"cart": {"grid": {"min_samples_leaf": [1, 5]}}}}}},
            "paper": {"seeds": [0, 1], "experiments": {}},
        },
    }


def error_of(config):
    with pytest.raises(ConfigError) as info:
        validate_config(config)
    return str(info.value)


def test_valid_config_passes_and_fills_defaults():
    config = validate_config(tiny_config())
    assert config["profiles"]["default"]["n_jobs"] == 1
    assert config["profiles"]["default"]["experiments"]["depth"]["refit"] is True


@pytest.mark.parametrize("path, key, hint", [
    ((), "profil", "profile"),
    (("datasets", "wine"), "formt", "format"),
    (("profiles", "default"), "seed", "seeds"),
    (("profiles", "default", "experiments", "depth"), "sweeps", "sweep"),
    (("profiles", "default", "experiments", "depth", "methods", "cart"), "grids", "grid"),
])
def test_misspelt_key_is_named_with_its_place(path, key, hint):
    config = tiny_config()
    node = config
    for p in path:
        node = node[p]
    node[key] = node.pop(hint)
    message = error_of(config)
    assert f"unknown key {key!r}" in message
    assert f"did you mean {hint!r}" in message
    assert (".".join(path) if path else "top level") in message


@pytest.mark.parametrize("edit, expected", [
    (lambda c: c.update(profile="papr"), "unknown profile 'papr' (did you mean 'paper'?)"),
    (lambda c: c["profiles"]["default"]["experiments"]["depth"]["methods"].update(cartt={}),
     "unknown method 'cartt' (did you mean 'cart'?)"),
    (lambda c: c["profiles"]["default"]["experiments"]["depth"]["methods"]["cart"]["grid"].update(
        min_sample_leaf=[1]), "unknown grid parameter 'min_sample_leaf' (did you mean 'min_samples_leaf'?)"),
    (lambda c: c["profiles"]["default"]["experiments"]["depth"].update(datasets=["wnie"]),
     "unknown data set 'wnie' (did you mean 'wine'?)"),
    (lambda c: c["profiles"]["default"]["experiments"]["depth"].update(reports=["nongreedy_fig9"]),
     "unknown report 'nongreedy_fig9'"),
    (lambda c: c["profiles"]["default"]["experiments"]["depth"].update(select_at={"max_depth": 7}),
     "max_depth=7 is not among the sweep values"),
    (lambda c: c["profiles"]["default"]["experiments"]["depth"].update(datasets=["diabetes"]),
     "no listed method solves 'diabetes' (regression)"),
    (lambda c: c["profiles"]["default"]["experiments"]["depth"]["methods"]["cart"].update(
        params={"max_depth": 3}), "max_depth set more than once"),
    (lambda c: c["profiles"]["default"]["experiments"]["depth"]["methods"]["cart"].update(
        inherit={"max_featres": {"method": "cart", "experiment": "depth"}}),
     "unknown inherit parameter 'max_featres' (did you mean 'max_features'?)"),
    (lambda c: c["profiles"]["default"]["experiments"]["depth"]["methods"]["cart"].update(
        inherit={"max_features": {"methd": "cart", "experiment": "depth"}}),
     "unknown key 'methd' in profiles.default.experiments.depth.methods.cart.inherit.max_features "
     "(did you mean 'method'?)"),
    (lambda c: c["datasets"]["wine"].update(task="clasification"), "datasets.wine.task"),
    (lambda c: c["profiles"]["default"].update(seeds=[]), "profiles.default.seeds"),
])
def test_cross_checks_name_the_problem(edit, expected):
    config = tiny_config()
    edit(config)
    assert expected in error_of(config)


def test_load_config_applies_overrides_like_snakemake(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(tiny_config()))
    assert active_profile(load_config(path))["seeds"] == [0]
    assert active_profile(load_config(path, {"profile": "paper"}))["seeds"] == [0, 1]
    assert active_profile(load_config(path, ["profile=paper"]))["seeds"] == [0, 1]
    nested = load_config(path, ["profiles.default.seeds=[3, 4]"])
    assert active_profile(nested)["seeds"] == [3, 4]
    with pytest.raises(ConfigError, match="unknown key 'profiel'"):
        load_config(path, {"profiel": "paper"})


def test_the_repository_config_is_valid():
    config = load_config("config.yaml")
    assert config["profile"] == "default"
    for name in ("default", "paper"):
        assert name in config["profiles"]


def test_validation_does_not_depend_on_input_mutation():
    config = tiny_config()
    before = copy.deepcopy(config)
    validate_config(config)
    validate_config(before)
    assert config == before


def test_inherit_is_accepted_and_its_references_are_checked_in_every_profile():
    """Checked in every profile: an error in the active one, a warning naming the profile in the others."""
    config = tiny_config()
    config["profiles"]["paper"]["experiments"] = copy.deepcopy(config["profiles"]["default"]["experiments"])
    forest = {"reports": ["co2_table1"], "datasets": ["wine"], "sweep": {"n_estimators": [1, 3]},
              "methods": {"rf": {"inherit": {"max_features": {"method": "cart", "experiment": "depth"}}}}}
    config["profiles"]["default"]["experiments"]["forest"] = copy.deepcopy(forest)
    config["profiles"]["default"]["experiments"]["depth"]["select_at"] = {"max_depth": 3}
    config["profiles"]["default"]["experiments"]["depth"]["methods"]["cart"]["grid"]["max_features"] = [2, 4]
    validate_config(copy.deepcopy(config))
    # the same reference in the (inactive) paper profile, whose depth experiment chooses at every depth
    config["profiles"]["paper"]["experiments"]["forest"] = forest
    config["profiles"]["paper"]["experiments"]["depth"]["methods"]["cart"]["grid"]["max_features"] = [2, 4]
    wanted = ("profile 'paper', experiment 'forest', method 'rf', data set 'wine': max_features is inherited from "
              "method 'cart' of experiment 'depth', but experiment 'depth' has no select_at")
    with pytest.warns(ConfigWarning, match="other than 'default'") as caught:
        validate_config(copy.deepcopy(config))
    assert wanted in str(caught[0].message) and "profiles.paper" in str(caught[0].message)
    config["profile"] = "paper"
    message = error_of(config)
    assert wanted in message and "profile 'default'" not in message


def test_a_typo_in_another_profile_does_not_block_this_one():
    """A misspelt key (schema) and an unknown method (cross-check) in the paper profile: running the default
    profile warns about them, running the paper profile stops on them."""
    config = tiny_config()
    config["profiles"]["paper"]["experiments"] = copy.deepcopy(config["profiles"]["default"]["experiments"])
    depth = config["profiles"]["paper"]["experiments"]["depth"]
    depth["sweeps"] = depth.pop("sweep")
    depth["methods"]["cartt"] = {}
    with pytest.warns(ConfigWarning) as caught:
        validate_config(copy.deepcopy(config))
    text = str(caught[0].message)
    assert "unknown key 'sweeps' in profiles.paper.experiments.depth" in text and "'cartt'" in text
    config["profile"] = "paper"
    message = error_of(config)
    assert "unknown key 'sweeps'" in message


def test_a_typo_inside_a_yaml_anchor_is_reported_once_at_the_anchors_line(tmp_path):
    """The paper profile reuses one methods block (&tao_fixed_methods) in four experiments: a typo in it is one
    problem, at the line to edit, naming the anchor, not four problems at four aliases."""
    import warnings
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    text = (repo / "config.yaml").read_text()
    anchor = "        methods: &tao_fixed_methods\n          cart: {}\n          tao_oblique:"
    assert anchor in text
    bad = text.replace(anchor, anchor.replace("tao_oblique:", "tao_obliqe:"), 1)
    (tmp_path / "config.yaml").write_text(bad)
    (tmp_path / "workflow" / "schemas").mkdir(parents=True)
    (tmp_path / "workflow" / "schemas" / "config.schema.yaml").write_text(
        (repo / "workflow" / "schemas" / "config.schema.yaml").read_text())
    line = next(i for i, text in enumerate(bad.splitlines(), 1) if text.startswith("          tao_obliqe:"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ConfigError) as info:
            load_config(tmp_path / "config.yaml", ["profile=paper"])
    problems = [p.strip() for p in str(info.value).splitlines()[1:] if "tao_obliqe" in p]
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"config.yaml:{line} (inside the anchor &tao_fixed_methods; the same text is also")
    assert "did you mean 'tao_oblique'" in problems[0] and "tao_fixed_depth_d8" in problems[0]


def test_problem_lines_name_the_line_of_their_key():
    from treeopt.experiments.plan.config_lines import annotate

    text = "profiles:\n  mine:\n    seeds: [0]\n    experiments:\n      e1: {methods: &m {cartt: {}}}\n" \
           "      e2: {methods: *m}\n"
    got = annotate(["profiles.mine.seeds[0]: bad seed",
                    "profiles.mine.experiments.e1.methods.cartt: unknown method 'cartt'",
                    "profiles.mine.experiments.e2.methods.cartt: unknown method 'cartt'",
                    "unknown key 'sed' in profiles.mine (did you mean 'seeds'?)",
                    "somewhere else: not a path"], text)
    assert got[0] == "config.yaml:3: profiles.mine.seeds[0]: bad seed"
    assert got[1] == ("config.yaml:5 (inside the anchor &m; the same text is also reached as "
                      "profiles.mine.experiments.e2.methods.cartt): profiles.mine.experiments.e1.methods.cartt: "
                      "unknown method 'cartt'")
    assert got[2] == "config.yaml:2: unknown key 'sed' in profiles.mine (did you mean 'seeds'?)"
    assert got[3:] == ["somewhere else: not a path"]
