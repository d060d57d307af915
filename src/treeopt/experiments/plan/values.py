"""Every hyper-parameter value of a config checked before any job starts, by the estimator's own rules.

Each value in a method entry's ``params``, ``grid``, ``sweep`` (or the experiment's sweep), ``staged`` fit sizes
and each value an ``inherit:`` can bring in is checked against the estimator class's
``_parameter_constraints`` with scikit-learn's own ``validate_parameter_constraints`` (the check ``fit`` makes),
after the project's notations are read: ``"p^a"`` (round(p ** a) features: an int >= 1, whatever p is) and
the staged ``all``. A refused value is named with its place in the config, the value and what the estimator
allows::

    profiles.default.experiments.tao_table1.methods.tao_oblique.grid.C[2]: -1 is refused: the 'C' parameter
    of TAOTreeClassifier must be a float in the range (0.0, inf)

YAML 1.1 (PyYAML, Snakemake) reads ``3e-3`` as a string; :func:`read_numbers` turns such spellings in the
profiles into floats, as YAML 1.2 and people read them, before anything else looks at the values.
"""

import re

from .methods import METHODS, POWER_NOTATION, get_method
from .params import INHERIT_PREFIX, split_dotted

# YAML 1.2 floats with an exponent, which YAML 1.1 leaves as strings: 3e-3, 1E5, 1.0e5, -2.5e+3
_EXPONENT_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)[eE][-+]?[0-9]+$")


def read_numbers(node):
    """``node`` with every string spelled as a YAML 1.2 exponent float (``3e-3``) turned into that float,
    recursively (changed in place where it can be; returns the result)."""
    if isinstance(node, dict):
        for key, value in node.items():
            node[key] = read_numbers(value)
        return node
    if isinstance(node, list):
        node[:] = [read_numbers(v) for v in node]
        return node
    if isinstance(node, str) and _EXPONENT_FLOAT.match(node.strip()):
        return float(node)
    return node


def value_problem(cls, name, value):
    """Why ``cls`` (an estimator class) refuses ``value`` for parameter ``name``; None when it takes it."""
    from sklearn.utils._param_validation import InvalidParameterError, validate_parameter_constraints

    outer, inner = split_dotted(name)
    if outer != name:  # "init_params.nu": a key inside a dict parameter, checked by the estimator it configures
        return None
    constraints = (getattr(cls, "_parameter_constraints", None) or {}).get(name)
    if constraints is None or constraints == "no_validation":
        return None
    if isinstance(value, str) and value.startswith(INHERIT_PREFIX):
        return (f"{value!r}: values starting {INHERIT_PREFIX!r} are reserved for inherited parameters "
                f"(use inherit:)")
    if isinstance(value, str) and value.strip().startswith("p^"):
        if not POWER_NOTATION.match(value.strip()):
            return (f"{value!r} is not the p^a notation (p^ and a number, e.g. p^0.5 = round(p ** 0.5) of the "
                    f"p features)")
        value = 1  # what p^a gives is an int >= 1 for every p
    try:
        validate_parameter_constraints({name: constraints}, {name: value}, caller_name=cls.__name__)
    except InvalidParameterError as exc:
        text = str(exc)
        allowed = text.split(" must be ", 1)[-1].rsplit(". Got ", 1)[0]
        return f"{value!r} is refused: the {name!r} parameter of {cls.__name__} must be {allowed}"
    return None


def _values_of(entry, exp):
    """(config path suffix, parameter, value) of every value a method entry sets, sweeps or stages."""
    for key, value in (entry.get("params") or {}).items():
        yield f"params.{key}", key, value
    for key, values in (entry.get("grid") or {}).items():
        for i, value in enumerate(values or []):
            yield f"grid.{key}[{i}]", key, value
    own_sweep = "sweep" in entry
    for key, values in (entry.get("sweep") if own_sweep else exp.get("sweep") or {}).items():
        for i, value in enumerate(values or []):
            yield (f"sweep.{key}[{i}]" if own_sweep else f"@sweep.{key}[{i}]"), key, value
    own_staged = "staged" in entry
    for key, fits in ((entry.get("staged") if own_staged else exp.get("staged")) or {}).items():
        for i, value in enumerate(fits if isinstance(fits, list) else []):
            yield (f"staged.{key}[{i}]" if own_staged else f"@staged.{key}[{i}]"), key, value


def _inherited_values(profile, entry):
    """(parameter, value, source text) of the values an ``inherit:`` of ``entry`` can bring in (the referenced
    method's fixed value or grid values; references that cannot be followed are reported by the plan check)."""
    for key, ref in (entry.get("inherit") or {}).items():
        rexp = (profile.get("experiments") or {}).get((ref or {}).get("experiment"))
        rentry = ((rexp or {}).get("methods") or {}).get((ref or {}).get("method"), {}) if rexp else None
        if not isinstance(rentry, dict):
            continue
        source = split_dotted(key)[1]
        values = ([rentry["params"][source]] if source in (rentry.get("params") or {})
                  else list((rentry.get("grid") or {}).get(source) or []))
        for value in values:
            yield key, value, f"method {ref['method']!r} of experiment {ref['experiment']!r}"


def parameter_problems(config):
    """Messages for every hyper-parameter value of every profile that its estimator refuses."""
    problems = []
    for pname, profile in (config.get("profiles") or {}).items():
        for ename, exp in (profile.get("experiments") or {}).items():
            base = f"profiles.{pname}.experiments.{ename}"
            for mname, entry in (exp.get("methods") or {}).items():
                if mname not in METHODS:
                    continue  # named by the config check
                entry = entry or {}
                try:
                    cls = get_method(mname).estimator_class()
                except ImportError:
                    continue  # named by the config check
                where = f"{base}.methods.{mname}"
                for place, key, value in _values_of(entry, exp):
                    why = value_problem(cls, key, value)
                    if why:
                        path = (f"{base}.{place[1:]} (for method {mname})" if place.startswith("@")
                                else f"{where}.{place}")
                        problems.append(f"{path}: {why}")
                for key, value, source in _inherited_values(profile, entry):
                    why = value_problem(cls, key, value)
                    if why:
                        problems.append(f"{where}.inherit.{key}: the value {value!r} it can take from {source} "
                                        f"does not suit {mname}: {why}")
    return problems
