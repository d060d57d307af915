"""Load and check ``config.yaml``: the JSON schema first, then what a schema cannot know.

The schema (``workflow/schemas/config.schema.yaml``, also used by the Snakefile) forbids unknown keys at every
level; the error names the key and suggests the nearest allowed one. The second pass checks names against the
code: methods are registered, reports exist, grid parameters are constructor arguments of the estimator,
experiments only use data sets that have an entry, and every ``inherit:`` reference can be followed; and every
hyper-parameter value against the estimator's own constraints (:mod:`treeopt.experiments.plan.values`), so a bad
value stops ``check`` and ``snakemake -n`` instead of a job hours later. Exponent spellings such as ``3e-3``,
strings to YAML 1.1, are read as numbers in the profiles first.
"""

import copy
import difflib
import re
import warnings
from collections.abc import Mapping
from pathlib import Path

import yaml

from .build import active_profile  # noqa: F401 (part of this module's interface)
from .errors import ConfigError, name_error
from .params import split_dotted

SCHEMA_RELPATH = Path("workflow") / "schemas" / "config.schema.yaml"
_REPO_ROOT = Path(__file__).resolve().parents[4]


def find_schema(config_path=None):
    """The schema beside the config's workflow folder, else the one of this source checkout."""
    candidates = []
    if config_path is not None:
        candidates.append(Path(config_path).resolve().parent / SCHEMA_RELPATH)
    candidates.append(_REPO_ROOT / SCHEMA_RELPATH)
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(f"config schema not found; looked at {', '.join(map(str, candidates))}")


def _where(path, prefix=""):
    parts = [str(p) for p in path]
    return f"{prefix}{'.'.join(parts)}" if parts else "at the top level"


def _allowed_keys(schema):
    return sorted(schema.get("properties", {}))


def _format_error(error):
    """One readable line for a jsonschema error; unknown keys are named with a did-you-mean hint."""
    if error.validator == "additionalProperties" and error.validator_value is False:
        allowed = _allowed_keys(error.schema)
        unknown = sorted(set(error.instance) - set(allowed))
        lines = []
        for key in unknown:
            hint = difflib.get_close_matches(key, allowed, n=1)
            lines.append(f"unknown key {key!r} {_where(error.absolute_path, 'in ')}"
                         + (f" (did you mean {hint[0]!r}?)" if hint else "")
                         + f"; allowed keys: {', '.join(allowed)}")
        return "\n".join(lines)
    return f"{_where(error.absolute_path) if error.absolute_path else 'top level'}: {error.message}"


def _validator(schema):
    """Draft 2020-12 validator that also fills in the schema's defaults (as Snakemake's ``validate`` does)."""
    from jsonschema import Draft202012Validator, validators

    properties = Draft202012Validator.VALIDATORS["properties"]

    def set_defaults(validator, props, instance, subschema):
        if isinstance(instance, dict):
            for name, sub in props.items():
                if isinstance(sub, dict) and "default" in sub:
                    instance.setdefault(name, copy.deepcopy(sub["default"]))
        yield from properties(validator, props, instance, subschema)

    return validators.extend(Draft202012Validator, {"properties": set_defaults})(schema)


def validate_schema(config, schema_path=None, *, other_profiles=None):
    """Check ``config`` (a dict, changed in place: defaults filled) against the schema; ConfigError if not.
    ``other_profiles`` (a list): errors inside profiles other than the active one go there instead of raising
    (see :func:`validate_config`)."""
    schema = yaml.safe_load(Path(schema_path or find_schema()).read_text())
    errors = sorted(_validator(schema).iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    if other_profiles is not None:
        active = config.get("profile")
        other = [e for e in errors if len(e.absolute_path) >= 2 and e.absolute_path[0] == "profiles"
                 and e.absolute_path[1] != active]
        other_profiles.extend(_format_error(e) for e in other)
        errors = [e for e in errors if not any(e is o for o in other)]
    if errors:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(_format_error(e) for e in errors))
    return config


def _data_problems(config):
    """The data layer's own checks of every data set entry (nested split/options/files keys)."""
    try:
        from ...data.spec import load_config_datasets
    except ImportError:  # data layer without a config checker: the schema's checks stand
        return []
    try:
        load_config_datasets(config)
    except ValueError as exc:
        return [f"datasets: {exc}"]
    return []


# results/{profile}/ holds a profile's tables: these names are the run, selection and log folders
RESERVED_PROFILES = ("runs", "selection", "logs", "tables")


def check_semantics(config):
    """Cross-checks the schema cannot express. Returns the list of problems (empty when fine)."""
    from .build import staged_fits  # the plan's own checks give the same messages here
    from .grow import grow_problems
    from .inherit import inherit_problems
    from .methods import METHODS, fits_tree_ranges, get_method
    from .reports import REPORTS
    from .values import parameter_problems

    problems = []
    datasets = config.get("datasets") or {}
    problems.extend(_data_problems(config))
    try:
        from .paper_values import dataset_links

        dataset_links(config)
    except ValueError as exc:
        problems.append(str(exc))
    profiles = config["profiles"]
    if config["profile"] not in profiles:
        problems.append(name_error("profile", config["profile"], list(profiles), "profile"))
    for pname in profiles:
        if pname in RESERVED_PROFILES:
            problems.append(f"profiles.{pname}: a profile writes results/{pname}/, which is the workflow's own "
                            f"folder; choose another name")
    problems.extend(parameter_problems(config))
    problems.extend(grow_problems(config))
    for pname, profile in profiles.items():
        for mname in profile.get("forest_block_trees") or {}:
            where = f"profiles.{pname}.forest_block_trees"
            if mname not in METHODS:
                problems.append(name_error("method", mname, list(METHODS), where))
            elif not fits_tree_ranges(mname):
                problems.append(f"{where}.{mname}: only treeopt's bagged forests (CO2 Forest, OC1 Forest) and "
                                f"segmentation forests are fitted tree by tree and can be split into tree blocks")
        for ename, exp in profile["experiments"].items():
            where = f"profiles.{pname}.experiments.{ename}"
            for report in exp["reports"]:
                if report not in REPORTS:
                    problems.append(name_error("report", report, list(REPORTS), f"{where}.reports"))
            for ds in exp["datasets"]:
                if ds not in datasets:
                    problems.append(name_error("data set", ds, list(datasets), f"{where}.datasets"))
            sweep = exp.get("sweep") or {}
            for key, value in (exp.get("select_at") or {}).items():
                if key not in sweep:
                    problems.append(f"{where}.select_at: {key!r} is not a sweep parameter ({', '.join(sweep)})")
                elif value not in sweep[key]:
                    problems.append(f"{where}.select_at: {key}={value!r} is not among the sweep values")
            for owner, staged, swept in [(where, exp.get("staged"), sweep)] + [
                    (f"{where}.methods.{m}", (e or {}).get("staged", exp.get("staged")), (e or {}).get("sweep", sweep))
                    for m, e in exp["methods"].items() if "staged" in (e or {}) or "sweep" in (e or {})]:
                try:
                    staged_fits(staged, swept)
                except ConfigError as exc:
                    problems.append(f"{owner}.staged: {exc}")
            for mname, entry in exp["methods"].items():
                mwhere = f"{where}.methods.{mname}"
                if mname not in METHODS:
                    problems.append(name_error("method", mname, list(METHODS), mwhere))
                    continue
                entry = entry or {}
                groups = {"params": entry.get("params") or {}, "grid": entry.get("grid") or {},
                          "sweep": entry.get("sweep", sweep) or {}}
                names = [n for g in groups.values() for n in g]
                duplicated = sorted({n for n in names if names.count(n) > 1})
                if duplicated:
                    problems.append(f"{mwhere}: {', '.join(duplicated)} set more than once (params/grid/sweep)")
                try:
                    valid = get_method(mname).parameter_names()
                except ImportError as exc:
                    problems.append(f"{mwhere}: cannot import the estimator ({exc})")
                    continue
                for group, values in {**groups, "inherit": entry.get("inherit") or {}}.items():
                    for key in values:  # "init_params.nu": a key inside the dict parameter init_params
                        if split_dotted(key)[0] not in valid:
                            problems.append(name_error(f"{group} parameter", key, sorted(valid), mwhere))
                if entry.get("path"):
                    problems.extend(_path_problems(mname, entry, f"{mwhere}.path", entry.get("sweep", sweep)))
                for ds in entry.get("datasets") or []:
                    if ds not in exp["datasets"]:
                        problems.append(f"{mwhere}.datasets: {ds!r} is not one of the experiment's data sets")
            for ds in exp["datasets"]:
                task = (datasets.get(ds) or {}).get("task", "classification")
                usable = [m for m, e in exp["methods"].items() if m in METHODS and METHODS[m].task == task
                          and ds in ((e or {}).get("datasets") or exp["datasets"])]
                if ds in datasets and not usable:
                    problems.append(f"{where}: no listed method solves {ds!r} ({task})")
        problems.extend(p if p.startswith(f"profiles.{pname}.") else f"profiles.{pname}: {p}"
                        for p in inherit_problems(config, pname))
    return problems


def _path_problems(method, entry, where, sweep=None):
    """What is wrong with a method entry's ``path:`` (:func:`treeopt.experiments.plan.paths.path_sources` over its
    grid with its fixed parameters, or :func:`~treeopt.experiments.plan.paths.depth_path_source` for a depth path
    over the ``sweep``; inherited ones are checked when the plan is made)."""
    from .methods import METHODS
    from .paths import depth_path_source, path_sources
    from .specs import grid_points

    param, grid = entry["path"], entry.get("grid") or {}
    if param == "max_depth" and "max_depth" in getattr(METHODS.get(method), "path", {}):
        try:
            depth_path_source(method, entry.get("params") or {}, sweep, where)
        except ConfigError as exc:
            return [str(exc)]
        return []
    if param not in grid:
        return [f"{where}: {param!r} is not a grid parameter of this method ({', '.join(grid) or 'no grid'})"]
    points = [{**(entry.get("params") or {}), **point} for point in grid_points(grid)]
    try:
        path_sources(method, param, points, where)
    except ConfigError as exc:
        return [str(exc)]
    return []


def validate_config(config, schema_path=None, *, source=None):
    """Schema plus cross-checks; ConfigError listing every problem of the data sets and of the active profile.
    Returns ``config`` (defaults filled, exponent spellings in the profiles read as numbers).

    Problems inside *other* profiles do not stop this one (a typo in ``paper`` must not block
    ``--set profile=heldout``): they are given as a :class:`ConfigWarning`, naming the profile.

    ``source`` ``(text, file name)`` of the config file: each problem then names its line, and a problem inside a
    YAML anchor is given once, at the anchor's text (:mod:`treeopt.experiments.plan.config_lines`)."""
    from .config_lines import annotate
    from .values import read_numbers

    def listed(problems):
        return "\n  ".join(annotate(problems, *source) if source else problems)

    if isinstance(config.get("profiles"), dict):
        read_numbers(config["profiles"])
    other = []
    try:
        validate_schema(config, schema_path, other_profiles=other)
    except ConfigError as exc:
        raise ConfigError("invalid configuration:\n  " + listed(_problem_lines(exc))) from None
    problems = check_semantics(config)
    other += [p for p in problems if _in_other_profile(p, config.get("profile"))]
    problems = [p for p in problems if not _in_other_profile(p, config.get("profile"))]
    if problems:
        raise ConfigError("invalid configuration:\n  " + listed(problems))
    if other:
        warnings.warn(f"profile(s) other than {config.get('profile')!r} have problems (not run now):\n  "
                      + listed(other), ConfigWarning, stacklevel=2)
    return config


def _problem_lines(exc):
    """The problem lines of a ConfigError raised as "invalid configuration:" and indented lines."""
    text = str(exc)
    head = "invalid configuration:\n"
    return [line.strip() for line in (text[len(head):] if text.startswith(head) else text).splitlines()
            if line.strip()]


class ConfigWarning(UserWarning):
    """A problem of config.yaml outside what the active profile runs."""


def _in_other_profile(problem, active):
    """Whether a problem message (or a schema error line) is inside a profile other than ``active``."""
    m = re.match(r"(?:unknown key '[^']*' in )?profiles\.([^.:\s]+)", problem)
    # a reserved name (a profile that would write into the workflow's own folders) is refused whether active or not
    return m is not None and m.group(1) != active and m.group(1) not in RESERVED_PROFILES


def _parse_override(text):
    key, sep, value = text.partition("=")
    if not sep:
        raise ConfigError(f"override {text!r} is not key=value")
    return key.strip(), yaml.safe_load(value)


def apply_overrides(config, overrides):
    """Overrides as a mapping (nested dicts merged) or ``"a.b=value"`` strings, like ``snakemake --config``."""
    if not overrides:
        return config
    if not isinstance(overrides, Mapping):
        pairs = [_parse_override(o) for o in overrides]
        nested = {}
        for key, value in pairs:
            node = nested
            *parents, last = key.split(".")
            for p in parents:
                node = node.setdefault(p, {})
            node[last] = value
        overrides = nested
    for key, value in overrides.items():
        if isinstance(value, Mapping) and isinstance(config.get(key), Mapping):
            apply_overrides(config[key], value)
        else:
            config[key] = copy.deepcopy(value)
    return config


def load_config(path, overrides=None, *, schema=None):
    """Read ``config.yaml``, apply overrides, validate (schema + cross-checks) and return the dict."""
    path = Path(path)
    text = path.read_text()
    config = yaml.safe_load(text) or {}
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: the top level must be a mapping")
    apply_overrides(config, overrides)
    return validate_config(config, schema or find_schema(path), source=(text, path.name))
