"""What a run is, and the folder name that says it.

A run's result depends on the data (the data set entry's content: source checksums, split, scale, options),
the method, every parameter value, the seed, what it is fitted on (training part, or train+validation for a
final refit), and for a final run chosen on validation, the selection it takes its parameters from. Its
*identity* is exactly that, as a plain dict; the folder name is a readable slug of the parameters followed by
a short hash of the identity, e.g. ::

    results/runs/digits/cart/max_depth-6_min_samples_leaf-5__3fa2b1c04d/seed0
    results/runs/digits/tao_oblique/final-C-best_max_depth-6__9e01d2c3b4/seed0
    results/selection/digits/tao_oblique/C-best_max_depth-6__77aa0b12cd/seed0.yaml

so two profiles or experiments asking for the same run share its folder, and runs that differ in anything
(a grid value, the candidates a choice is made from, the data set entry) never do. Experiment and profile
names are not part of it: they only say who asked. The seed is the last path component; ``params.yaml``
holds the exact values.

The slug uses only ``A-Z a-z 0-9 . _ + -``, so a name passes unchanged through a shell, a job scheduler's
encoding of wildcards (Snakemake's ``--target-jobs`` splits on commas and strips quotes) and file systems:
pairs are ``key-value`` joined by ``_``, list items by ``+``, ``p^0.5`` shows as ``p0.5``, a value chosen on
validation as ``best``, an inherited one as ``from-{method}``, a staged fit size as ``staged{size}``; the
hash follows ``__``. The slug is for people and may be cut short; the hash alone keeps names apart.
"""

import hashlib
import json
import math
import re
from collections.abc import Mapping

from .params import Inherited

HASH_SEPARATOR = "__"
HASH_LENGTH = 10  # hex digits (40 bits): names also differ in their readable part almost always
MAX_READABLE = 100
CHOSEN = "best"  # a parameter chosen on validation, in the slug of a selection or of a final run
EMPTY = "defaults"
SAFE_COMPONENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
_UNSAFE_TEXT = re.compile(r"[^A-Za-z0-9.]+")
_POWER = re.compile(r"^p\^")


def canonical(value):
    """A JSON-plain, exact form of a parameter value (an inherited value: the selection it is read from)."""
    if isinstance(value, Inherited):
        return {"inherit": value.selection}
    if isinstance(value, Mapping):
        return {str(k): canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        return value.item()
    return value


def identity_hash(identity):
    """Short hash of an identity dict of :func:`canonical` values (order of keys does not matter; 1 and 1.0
    differ, as they do to YAML)."""
    blob = json.dumps(identity, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:HASH_LENGTH]


def readable_value(value):
    """Shell-safe text for one value (lossy: the hash keeps names distinct)."""
    if isinstance(value, Inherited):
        return f"from-{value.method}"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return f"{int(value)}.0" if value == int(value) and abs(value) < 1e15 else repr(value)
    if isinstance(value, (list, tuple)):
        return "+".join(readable_value(v) for v in value) or "empty"
    if isinstance(value, Mapping):
        return "+".join(f"{k}.{readable_value(value[k])}" for k in sorted(value)) or "empty"
    text = _UNSAFE_TEXT.sub(".", _POWER.sub("p", str(value))).strip(".")
    return text or "text"


def readable_pairs(pairs):
    """``key-value`` pairs sorted by key and joined by ``_``, cut at a pair boundary beyond MAX_READABLE."""
    parts = [f"{key}-{text}" for key, text in sorted(pairs.items())]
    out = ""
    for part in parts:
        joined = f"{out}_{part}" if out else part
        if len(joined) > MAX_READABLE:
            return (out or part[:MAX_READABLE]) + "_etc"
        out = joined
    return out or EMPTY


def folder_name(pairs, identity, prefix=""):
    """``{prefix}{readable pairs}__{hash of identity}``; ``pairs`` maps parameter names to their text."""
    return f"{prefix}{readable_pairs(pairs)}{HASH_SEPARATOR}{identity_hash(identity)}"


def params_text(params):
    """The readable text of each parameter of a dict (``{"C": 0.1}`` -> ``{"C": "0.1"}``)."""
    return {str(key): readable_value(value) for key, value in dict(params).items()}


def check_component(value, what):
    """Raise ValueError unless ``value`` is a shell- and scheduler-safe path component (letters, digits,
    ``._+-``, not starting with a symbol)."""
    if not SAFE_COMPONENT.fullmatch(str(value)):
        raise ValueError(f"{what} {value!r} is not a safe file name: use letters, digits and . _ + - only "
                         f"(starting with a letter or digit)")
    return value
