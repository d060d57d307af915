"""Hyper-parameter dictionaries as short labels, and the placeholder of an inherited value.

:func:`params_slug` gives the sorted ``key=value`` pairs joined by ``,`` (long ones cut and finished with a
hash): the ``variant`` labels of the report tables (``learning_rate=0.1,max_leaf_nodes=8``) and the run folder
names of earlier versions, which :mod:`treeopt.experiments.run.migrate` finds and renames. Run folders are now
named by :mod:`treeopt.experiments.plan.identity` (shell- and scheduler-safe, keyed by what the run is).

A parameter taken from another method's selection (config ``inherit:``) is not known when the folder is
named; the plan holds an :class:`Inherited` placeholder instead, and the run puts the chosen value in
(:func:`treeopt.experiments.run.runner.resolve_inherited`).
"""

import hashlib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

EMPTY_SLUG = "defaults"
MAX_SLUG_LENGTH = 120
INHERIT_PREFIX = "from-"
_UNSAFE = re.compile(r"[^A-Za-z0-9._^+-]")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.+-]")


@dataclass(frozen=True)
class Inherited:
    """Placeholder for a parameter value chosen by ``method``'s selection whose identity hash is ``selection``
    (same data set and seed; :mod:`treeopt.experiments.plan.identity`). ``str()`` gives the marker passed to the
    run scripts, ``from-{method}-{selection}``; ``legacy`` is the marker earlier versions put in folder names,
    ``from-{method}-{experiment}`` of the config reference (only for finding those folders)."""

    method: str
    selection: str
    legacy: str = field(default="", compare=False)

    def __str__(self):
        return f"{INHERIT_PREFIX}{self.method}-{self.selection}"


def legacy_marker(method, experiment):
    """The inherited-value marker of earlier versions' folder names: ``from-rf-co2_forest_size``."""
    return f"{INHERIT_PREFIX}{_UNSAFE_NAME.sub('~', method)}-{_UNSAFE_NAME.sub('~', experiment)}"


def split_dotted(key):
    """``(parameter, name)`` of a parameter key: ``"init_params.nu"`` -> ``("init_params", "nu")`` (the estimator
    parameter it sets, a dict, and the name read from an inherited selection); a plain key is both: ``"nu"`` ->
    ``("nu", "nu")``. A key may go several dicts deep (the start of the start): ``"init_params.init_params.nu"``
    -> ``("init_params", "nu")``; :func:`treeopt.experiments.plan.methods.nest_params` builds the nested dicts."""
    outer, _, inner = key.partition(".")
    return outer, inner.rpartition(".")[2] or outer


def is_inherit_marker(value):
    """True for an :class:`Inherited` placeholder or its text (strings starting ``from-`` are reserved)."""
    return isinstance(value, Inherited) or (isinstance(value, str) and value.startswith(INHERIT_PREFIX))


def plain_params(params):
    """A parameter dict with :class:`Inherited` placeholders as their marker text (YAML/pickle-plain)."""
    return {key: str(value) if isinstance(value, Inherited) else value for key, value in dict(params).items()}


def format_value(value):
    """Short text for one parameter value: ints as ints, floats in shortest round-trip form, None as none."""
    if value is None:
        return "none"
    if isinstance(value, Inherited):
        return value.legacy or str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value) and abs(value) < 1e15:
            return f"{int(value)}.0"
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ";".join(format_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ";".join(f"{k}:{format_value(value[k])}" for k in sorted(value)) + "}"
    return _UNSAFE.sub("~", str(value))


def params_slug(params):
    """Label for a parameter dict: order-independent, at most 120 characters (earlier versions' folder names).

    >>> params_slug({"max_depth": 6, "min_samples_leaf": 5})
    'max_depth=6,min_samples_leaf=5'
    """
    if not params:
        return EMPTY_SLUG
    for key in params:
        # "init_params.nu": a key inside a dict parameter (config inherit:), possibly several dicts deep
        if not isinstance(key, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", key):
            raise ValueError(f"parameter names must be identifiers (or dotted ones), got {key!r}")
    slug = ",".join(f"{key}={format_value(params[key])}" for key in sorted(params))
    if len(slug) <= MAX_SLUG_LENGTH:
        return slug
    digest = hashlib.sha256(slug.encode()).hexdigest()[:12]
    return f"{slug[:MAX_SLUG_LENGTH - 13]}-{digest}"
