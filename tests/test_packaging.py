"""environment.yml cannot be solved on this machine (no conda), so check it lists what pyproject does."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
# conda-forge names that differ from PyPI names
CONDA_TO_PYPI = {}


def _name_and_spec(req):
    m = re.match(r"\s*([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?\s*(.*)", req)  # extras ([reports]) dropped
    return m.group(1).lower().replace("_", "-"), m.group(2).strip()


def _pyproject_requirements():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(meta["dependencies"]) + list(meta["optional-dependencies"]["test"])
    return dict(_name_and_spec(r) for r in reqs)


def _environment_requirements():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    out = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            for r in dep.get("pip", []):
                if not r.startswith("-e"):
                    name, spec = _name_and_spec(r)
                    out[name] = spec
        else:
            name, spec = _name_and_spec(dep)
            out[CONDA_TO_PYPI.get(name, name)] = spec
    return out


def test_environment_yml_lists_the_same_packages_and_bounds_as_pyproject():
    py = _pyproject_requirements()
    env = _environment_requirements()
    env.pop("python")
    env.pop("pip")
    assert env == py


def test_environment_yml_uses_conda_forge_and_installs_the_package():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert env["channels"] == ["conda-forge"]
    pip_part = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert "-e ." in pip_part and any(r.startswith("liblinear-official") for r in pip_part)


def test_python_bound_agrees():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert f"python{meta['requires-python']}" in env["dependencies"]
