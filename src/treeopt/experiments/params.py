"""Hyper-parameter dictionaries as stable, readable folder names ("slugs").

A run folder is ``results/runs/{dataset}/{method}/{slug}/seed{seed}/`` (DESIGN.md). The slug is the sorted
``key=value`` pairs joined by ``,``, so the same parameters always give the same folder whatever order the
config lists them in. Long slugs are cut and finished with a hash of the full pairs; ``params.yaml`` in the
run folder always holds the exact values.

A parameter taken from another method's selection (config ``inherit:``) is not known when the folder is
named; its slug shows the marker ``from-{method}-{experiment}`` instead (``max_features=from-rf-co2_forest_size``),
and the run puts the chosen value in (:func:`treeopt.experiments.runner.resolve_inherited`).
"""

import hashlib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

EMPTY_SLUG = "defaults"
MAX_SLUG_LENGTH = 120
INHERIT_PREFIX = "from-"
_UNSAFE = re.compile(r"[^A-Za-z0-9._^+-]")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.+-]")


@dataclass(frozen=True)
class Inherited:
    """Placeholder for a parameter value chosen by ``method``'s selection in ``experiment`` (same data set
    and seed). ``str()`` gives the marker used in slugs and passed to scripts: ``from-rf-co2_forest_size``."""

    method: str
    experiment: str

    def __str__(self):
        return f"{INHERIT_PREFIX}{_UNSAFE_NAME.sub('~', self.method)}-{_UNSAFE_NAME.sub('~', self.experiment)}"


def split_dotted(key):
    """``(parameter, name)`` of a parameter key: ``"init_params.nu"`` -> ``("init_params", "nu")`` (the estimator
    parameter it sets, a dict, and the key inside it, also the name read from an inherited selection); a plain
    key is both: ``"nu"`` -> ``("nu", "nu")``."""
    outer, _, inner = key.partition(".")
    return outer, inner or outer


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
        return str(value)
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
    """Folder name for a parameter dict: order-independent, filesystem-safe, at most 120 characters.

    >>> params_slug({"max_depth": 6, "min_samples_leaf": 5})
    'max_depth=6,min_samples_leaf=5'
    """
    if not params:
        return EMPTY_SLUG
    for key in params:
        # "init_params.nu": a key inside a dict parameter (config inherit:)
        if not isinstance(key, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?", key):
            raise ValueError(f"parameter names must be identifiers (or one dotted pair), got {key!r}")
    slug = ",".join(f"{key}={format_value(params[key])}" for key in sorted(params))
    if len(slug) <= MAX_SLUG_LENGTH:
        return slug
    digest = hashlib.sha256(slug.encode()).hexdigest()[:12]
    return f"{slug[:MAX_SLUG_LENGTH - 13]}-{digest}"
