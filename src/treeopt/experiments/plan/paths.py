"""Grid candidates read off a warm-started path (a method entry's ``path: C``).

TAO's sparsity path (Sec. 4) fits C = 100, 30, ..., each step started from the previous step's tree; a fit with
C = c and warm-start values ``warm_start_C`` runs the steps above c, then c. A grid over C whose candidates share
``warm_start_C`` therefore fits the same steps again for every C: the fit at the smallest C passes through all of
them, and its step at c is the candidate with C = c, tree for tree (``TAOTreeClassifier.path_step``, a test). With
``path: C`` on a method entry the candidate at every other C is read off that fit (``RunSpec.path_run``; its job
copies the step, :func:`treeopt.experiments.run.runner.run_from_path`): the same candidates, folders and choice,
one fit per path instead of one per C. The method says which parameter holds the path (``Method.path``).

**Depth paths** (``path: max_depth``; OC1 and random oblique trees grown with ``grow_order: level``): a tree grown
level by level to depth D contains the tree grown to every smaller depth, node for node
(:func:`treeopt.greedy._grow.level_order_prefix`). When ``max_depth`` is a sweep parameter, every candidate at a
smaller depth is read off the candidate with the same grid point at the sweep's largest depth
(:func:`depth_path_source`), though they belong to different selections (each depth is still tuned on its own).
"""

import json

from .errors import ConfigError
from .identity import canonical
from .methods import get_method
from .params import is_inherit_marker


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def path_sources(method, param, points, where="path"):
    """``{index: index of the candidate it is read off}`` for the candidates ``points`` (their full parameter
    dicts, in grid order) of one selection: every candidate but the one with the smallest ``param`` among those
    sharing all other values, which is fitted. Raises ConfigError when the method has no path over ``param``,
    the warm-start values are missing or inherited, or a value is not a step of its fit's path."""
    spec = get_method(method)
    if param not in spec.path:
        known = ", ".join(spec.path) or "none"
        raise ConfigError(f"{where}: {param!r}: method {method!r} is not fitted along a warm-started path over it "
                          f"(its path parameters: {known})")
    warm = spec.path[param]
    groups = {}
    for index, point in enumerate(points):
        value = point.get(param)
        if not _number(value):
            raise ConfigError(f"{where}: {param} must be a grid parameter with numeric values, got {value!r}")
        rest = {k: canonical(v) for k, v in point.items() if k != param}
        groups.setdefault(json.dumps(rest, sort_keys=True, default=str), []).append(index)
    out = {}
    for members in groups.values():
        low = min(members, key=lambda i: float(points[i][param]))
        steps = points[low].get(warm)
        if is_inherit_marker(steps):
            raise ConfigError(f"{where}: {warm} is inherited; the path must be known when the plan is made")
        if len(members) > 1 and not (isinstance(steps, (list, tuple)) and all(_number(s) for s in steps)):
            raise ConfigError(f"{where}: reading {param} off a path needs {warm} (the {param} values the path "
                              f"passes through, largest first), got {steps!r}")
        lowest = float(points[low][param])
        above = {float(s) for s in steps or () if float(s) > lowest}
        for index in members:
            if index == low:
                continue
            value = float(points[index][param])
            if value == lowest:
                raise ConfigError(f"{where}: {param}={points[index][param]!r} is listed twice")
            if value not in above:
                raise ConfigError(f"{where}: {param}={points[index][param]!r} is not a step of the path of the fit "
                                  f"at {param}={points[low][param]!r} ({warm}: {list(steps)}); add it to {warm} or "
                                  f"drop the path")
            out[index] = low
    return out


def depth_path_source(method, params, sweep, where="path"):
    """The depth whose fit a candidate with ``params`` (its full parameter dict) is read off on a depth path
    (``path: max_depth``): the largest ``max_depth`` of the ``sweep`` (a dict of lists); a candidate at that depth
    is the fit itself. Raises ConfigError when the method has no depth path, the fit is not grown level by level
    or ``max_depth`` is not swept over numbers."""
    spec = get_method(method)
    if spec.path.get("max_depth", "missing") is not None:
        known = ", ".join(spec.path) or "none"
        raise ConfigError(f"{where}: 'max_depth': method {method!r} cannot read a depth off a deeper fit (its path "
                          f"parameters: {known})")
    if params.get("grow_order") != "level":
        raise ConfigError(f"{where}: reading max_depth off a deeper fit needs grow_order: level in the method's "
                          f"params (a depth-first tree grown deeper draws differently), got "
                          f"{params.get('grow_order', 'depth_first')!r}")
    depths = (sweep or {}).get("max_depth")
    if not isinstance(depths, (list, tuple)) or not depths or not all(_number(d) for d in depths):
        raise ConfigError(f"{where}: max_depth must be a sweep parameter with numeric values, got {depths!r}")
    return max(depths)
