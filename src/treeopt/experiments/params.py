"""Hyper-parameter dictionaries as stable, readable folder names ("slugs").

A run folder is ``results/runs/{dataset}/{method}/{slug}/seed{seed}/`` (DESIGN.md). The slug is the sorted
``key=value`` pairs joined by ``,``, so the same parameters always give the same folder whatever order the
config lists them in. Long slugs are cut and finished with a hash of the full pairs; ``params.yaml`` in the
run folder always holds the exact values.
"""

import hashlib
import math
import re
from collections.abc import Mapping

EMPTY_SLUG = "defaults"
MAX_SLUG_LENGTH = 120
_UNSAFE = re.compile(r"[^A-Za-z0-9._^+-]")


def format_value(value):
    """Short text for one parameter value: ints as ints, floats in shortest round-trip form, None as none."""
    if value is None:
        return "none"
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
        if not isinstance(key, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise ValueError(f"parameter names must be identifiers, got {key!r}")
    slug = ",".join(f"{key}={format_value(params[key])}" for key in sorted(params))
    if len(slug) <= MAX_SLUG_LENGTH:
        return slug
    digest = hashlib.sha256(slug.encode()).hexdigest()[:12]
    return f"{slug[:MAX_SLUG_LENGTH - 13]}-{digest}"
