"""The work of one fit, per cost family: the units the cost model's per-method coefficients multiply
(:mod:`treeopt.experiments.infra.cost` turns them into CPU seconds and memory).

Work of one fit (n: rows fitted on, p: features, k: classes, L = log2 n, T: trees, d: levels grown = the
``max_depth`` or L when unlimited, all as the run resolves them)::

    co2_forest                T n L (p + 160)   CO2's SGD touches every point-feature of a node at every
                                                 epoch, about L levels; + 160: its per-point work that does
                                                 not grow with p (CO2_FIXED_FEATURES)
    oc1_forest                T n L^2 (p + 14)  OC1's line searches, every point-feature of a node, sorted; + 14:
                                                 the per-point sweep that does not grow with p (OC1_FIXED_FEATURES)
    rf                        T n L q           scikit-learn's trees, q features tried per node
    cart                      n p d
    co2_tree                  n p d
    random_oblique_tree       R n d (p + 75)    R random hyperplanes per node; + 75: the sort and gain sweep of
                                                 each projection (RANDOM_OBLIQUE_FIXED_FEATURES); x
                                                 RANDOM_OBLIQUE_TWO_VALUED_FACTOR on two-valued features
    oc1_tree                  restarts n p d    p + 1 coordinate line searches a cycle, each over the node's
                                                 points (radix-sorted: linear in n); x OC1_TWO_VALUED_FACTOR
                                                 when every feature takes two values (one-hot, Connect-4)
    nongreedy_tree            epochs n p d      SGD over all nodes, max_epochs of them (a priori: the stop rule
                                                 may end sooner), plus the CO2 tree it starts from, costed as a
                                                 co2_tree run of the same depth
    tao                       (C values) n p d  one LIBLINEAR problem per node and pass, over the path of C,
                                                 each C weighted min(1, sqrt(C / TAO_C_DENSE)) (+ the initial
                                                 tree it fits itself: TAO_BUILT_INITS)
    optimal                   n B^d             STreeD over B binary tests (thresholds per feature x p, + CART's
                                                 splits): depth-2 subtrees from pair counts (n B^2), each level
                                                 above branches on every test; its CPU is capped at time_limit
    gbdt, adaboost            T n p log2(leaves)   (exponential loss: min(T, collapse / (leaves s)) trees,
                                                 s the shrinkage: its margins pass the loss's floor, later trees
                                                 are their root; the bound, T trees, sizes its time limit)
    rgf                       leaves n          a split search per added leaf over binned features, plus
                                                 the corrections (results/paper/rgf_fig16_time.csv: 10,000
                                                 leaves took 8-13 s with 108 features, 12-19 s with 10)
    segmentation              T d 2883 (windows + s x pixels scored)   (a segmentation set's p: pixels per image;
                                                 s: the method's score_weight, scoring a pixel vs fitting a window;
                                                 with max_depth stages, one fit to the deepest depth and its
                                                 trees scored cut at each: d sum(stages) for the scoring)
    sgd_timing                2^d samples epochs p   (the timed epochs with exact inference)

plus the scoring of every forest size asked (for forests: T (n + n_val + n_test) L p, folded into ``cpu``).
"""

from __future__ import annotations

import math

from ..plan.methods import resolve_value

SEG_FEATURES = 31 * 31 * 3  # the CO2 paper's 31x31 RGB windows
# The levels a segmentation tree grown without a depth limit is charged (the coefficients' convention: the trees they
# were measured on had no limit). A tree capped deeper costs no more than that: its deep levels hold small nodes
# (measured, studies/seg_depth_one_fit.py: one CO2 or two-probe tree of 16,000 LFW-shaped windows took the same fit
# CPU, within 6%, capped at 10, 15, 20, 25 or 30 levels)
SEG_UNLIMITED_DEPTH = 20
# A CO2 stump's per-point work that does not grow with p (leaf log-loss tables over k classes, the winner and label
# counts, the shuffle) costs as much as about this many features' multiply-adds: fitted on the CO2 Forest
# calibration runs (SatImage p = 36, Letter 16, Connect-4 126), whose CPU per tree x row x level grows far less than
# p: 3.5, 2.3 and 5.1 microseconds.
CO2_FIXED_FEATURES = 160
# A random oblique split's work per row and hyperplane that does not grow with p (the projection's sort and the
# information-gain sweep over its thresholds) costs as much as about this many features' multiply-adds: set with
# the coefficient from two fits at the paper profile's sizes after the projections were blocked (#37, 2026-11-28,
# benchmarks/cost_runs.py check, idle machine: CPU per row x hyperplane x level Fashion-MNIST p = 784 2.01e-7 s,
# Letter p = 16 2.13e-8 s; c (p + F) through both gives c = 2.34e-10 s, F = 75). Was 56 with c = 6.8e-10 before the
# blocking, when a projection's multiply-adds took 3.5x longer and the sort the same.
RANDOM_OBLIQUE_FIXED_FEATURES = 75
# A random oblique tree on features of two values (one-hot: Connect-4) costs this many times more per unit: one fit at
# the paper profile's size (Connect-4 depth 10, 100 hyperplanes, 44,000 rows, 1.27e-7 CPU-s per row x hyperplane x
# level against c (p + F)'s 4.7e-8). The same run took 7.05 CPU-s before the blocking and 7.07 after: its
# projections were never its main cost (sums of a few of 126 one-hot weights crowd, and crowded columns sort slowly).
RANDOM_OBLIQUE_TWO_VALUED_FACTOR = 2.7
# An OC1 Forest tree's work per point and level that does not grow with p (the line searches' sweeps and sorts over
# the node's points, the offset search) costs as much as about this many features: one tree of the forest timed at
# the paper profile's sizes (#37, benchmarks/bench_oc1.py, new line search, load 3.6-4.1 on 2 cores): Letter
# 10,500 x 16 in 6.85 CPU-s, a Protein-shaped set 17,766 x 357 in 161.28 CPU-s; c n L^2 (p + F) through both
# gives F = 14 (c = 1.228e-7 s).
OC1_FIXED_FEATURES = 14
# An OC1 tree on features of two values (one-hot: Connect-4) costs this many times more per unit of restarts n p d:
# most of its line searches tie across classes and take the quicksort form, and its coordinate descent runs more
# cycles (15.4 a restart against 5-7 on Fashion-MNIST and 3 on Letter, counted 2026-11-28). Measured at the paper
# profile's sizes on the idle machine (benchmarks/cost_runs.py check, docs/cost.md "OC1 trees and TAO at size"): Connect-4
# depth 6, 5 restarts, 55,000 rows, 6.2e-7 CPU-s per unit against the coefficient's 1.51e-7.
OC1_TWO_VALUED_FACTOR = 4.1
# A TAO node's l1-regularised SVM costs less as C falls below this: its weights, and with them the solver's active
# features, thin out (TAO Fig. 1's path on Fashion-MNIST, depth 4, seconds per TAO iteration: about flat for C >= 3,
# about sqrt(C / 3) of that below it: C 1 0.56, 0.1 0.18, 0.01 0.08; docs/cost.md, "TAO at Fashion-MNIST's size")
TAO_C_DENSE = 3.0
# NonGreedyTreeClassifier's max_epochs when a run does not set it (a test keeps the two equal): a run is costed at
# its epoch budget, not at the epochs its stop rule may leave out (that is known only after the run)
NONGREEDY_MAX_EPOCHS = 100


def _number(value, default):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def _size(params, stages, name, default):
    """The largest value of a size parameter a run reaches: its own, or the largest staged value."""
    values = [v for pname, vals in (stages or ()) if pname == name for v in vals] + [params.get(name)]
    values = [v for v in values if _number(v, None) is not None]
    return max(values) if values else default


def _levels(params, n):
    depth = _number(params.get("max_depth"), None)
    grown = math.log2(max(n, 2))
    return min(depth, grown) if depth else grown


def _features_tried(value, p, default):
    value = resolve_value(value, p) if value is not None else default
    if value is None:
        return p
    if isinstance(value, str):
        return max(1, int(math.sqrt(p) if value == "sqrt" else math.log2(p)))
    if isinstance(value, float) and value <= 1.0:
        return max(1, int(value * p))
    return min(int(value), p)


def _path_above(warm_start_C, C):
    """The distinct warm-start C values a TAO fit runs before ``C`` (those above it); all of them when ``C`` is not a
    number here (e.g. inherited: unknown before the run)."""
    values = {float(c) for c in (warm_start_C or []) if _number(c, None) is not None}
    C = _number(C, None) if C is not None else 1.0  # TAOTreeClassifier's default C
    return sorted(values) if C is None else sorted(c for c in values if c > C)


def tao_path_weight(warm_start_C, C):
    """The C values a TAO fit runs (:func:`_path_above`, then C), each weighted by what its node problems cost
    relative to a C of ``TAO_C_DENSE`` or more: ``min(1, sqrt(C / TAO_C_DENSE))``; a C not known before the run
    (inherited) weighs 1, and so does a fit that names neither (TAO with axis-aligned nodes solves no SVM)."""
    if C is None and not warm_start_C:
        return 1.0
    own = _number(C, None) if C is not None else 1.0
    steps = _path_above(warm_start_C, C) + [own]
    return sum(1.0 if c is None else min(1.0, math.sqrt(c / TAO_C_DENSE)) for c in steps)


def fit_factor(entry, params):
    """The cost of a fit at ``params`` relative to the fit the method's ``cpu`` was measured at: the model entry's
    ``fit_factors`` (``by``: parameter names, ``values``: rows of those parameters' values and the factor), 1.0
    for parameters it does not list (the measured point's). The CO2 segmentation trees' stump SGD runs a number
    of epochs its (nu, eta) decide (studies/seg_co2_grid_cost.py)."""
    table = entry.get("fit_factors")
    if not table:
        return 1.0
    names = table["by"]
    want = [params.get(name) for name in names]
    for row in table["values"]:
        if all(w is not None and math.isclose(float(w), float(v)) for w, v in zip(want, row[:-1])):
            return float(row[-1])
    return 1.0


def collapse_trees(params, T, collapse):
    """The trees an exponential-loss GBDT grows before its trees are their root: ``collapse / (J s)`` (J: leaves,
    s: shrinkage, 0.1 when unset; ``collapse`` measured, ``cost_model.yaml``), at most ``T``; ``T`` without one."""
    if not collapse:
        return T
    leaves = max(_number(params.get("max_leaf_nodes"), 8), 2)
    shrinkage = _number(params.get("learning_rate"), 0.1) or 0.1
    return min(T, float(collapse) / (leaves * shrinkage))


def work(family, params, shape, fit_on, stages=(), score_weight=1.0, factor=1.0, score_test=True, collapse=None):
    """Units of work of one fit (see the module docstring) and the units of its memory term.

    ``score_weight`` (segmentation only): the CPU of scoring one pixel through one tree over that of fitting on one
    window, a method's own number in the model file (scoring reads only the values a tree's nodes test); ``factor``
    (segmentation only, :func:`fit_factor`): the fit's cost relative to the measured one; ``score_test``
    (segmentation only): whether the test images are labelled (a candidate labels none); ``collapse`` (boosting
    with the exponential loss only, :func:`collapse_trees`): charge the trees grown before the trees stop growing,
    None: every tree (the bound)."""
    n = max(shape.n_fit(fit_on), 2)
    p = max(shape.p, 1)
    L = math.log2(n)
    d = _levels(params, n)
    if family == "co2_forest":
        T = _size(params, stages, "n_estimators", 30)
        return T * n * L * (p + CO2_FIXED_FEATURES), n * p
    if family == "oc1_forest":  # the OC1 tree's n log n line searches at each of about L levels
        T = _size(params, stages, "n_estimators", 30)
        return T * n * L * L * (p + OC1_FIXED_FEATURES), n * p
    if family == "rf":
        T = _size(params, stages, "n_estimators", 100)
        q = _features_tried(params.get("max_features"), p, "sqrt")
        return T * n * L * q, T * n
    if family in ("cart", "co2_tree"):
        return n * p * d, n * p
    if family == "random_oblique_tree":
        two_valued = RANDOM_OBLIQUE_TWO_VALUED_FACTOR if shape.max_distinct == 2 else 1.0
        return (_number(params.get("n_hyperplanes"), 100) * n * (p + RANDOM_OBLIQUE_FIXED_FEATURES) * d * two_valued,
                n * p)
    if family == "oc1_tree":  # restarts x cycles of p + 1 line searches over the node's points, at each level
        two_valued = OC1_TWO_VALUED_FACTOR if shape.max_distinct == 2 else 1.0
        return _number(params.get("n_restarts"), 20) * n * p * d * two_valued, n * p
    if family == "nongreedy_tree":
        epochs = _number(params.get("max_epochs"), NONGREEDY_MAX_EPOCHS)
        return epochs * n * p * d, n * p
    if family == "tao":  # the path runs the warm-start values above C, then C (TAOTreeClassifier.fit)
        path = tao_path_weight(params.get("warm_start_C"), params.get("C"))
        return path * n * p * _levels({"max_depth": _number(params.get("max_depth"), 8)}, n), n * p
    if family == "optimal":
        return n * binary_tests(params, shape, d) ** max(d, 1), n * binary_tests(params, shape, d)
    if family in ("gbdt", "adaboost"):
        T = collapse_trees(params, _size(params, stages, "n_estimators", 100), collapse)
        leaves = _number(params.get("max_leaf_nodes"), 8)
        return T * n * p * math.log2(max(leaves, 2)), n * p
    if family == "rgf":  # binned features: the paper profile's RGF fits took as long with 108 features as with 10
        leaves = _size(params, stages, "max_leaf_nodes", 1000)
        return leaves * n, n * p
    if family == "segmentation":  # shape: images (n_train, n_val, n_test) and p = pixels per image
        T = _size(params, stages, "n_estimators", 16)
        windows = _number(params.get("windows_per_tree"), 256000)
        fit_depth = _number(_size(params, stages, "max_depth", None), None)  # its limit (None: none)

        def levels(d):  # the levels a tree limited to d is charged
            return min(d, SEG_UNLIMITED_DEPTH) if d else SEG_UNLIMITED_DEPTH

        depth = levels(fit_depth)
        # a depth sweep read off one level-order fit (segment_runs' depth stages) scores the forest once per depth,
        # each pass as deep as its cut (the full depth's pass is the run's own)
        cuts = {_number(v, None) for pname, vals in (stages or ()) if pname == "max_depth" for v in vals}
        scored_depth = depth + sum(levels(d) for d in cuts if d and fit_depth and d < fit_depth)
        # every pixel, through every tree
        scored = (shape.n_test * bool(score_test) + 5 + (shape.n_val if fit_on == "train" else 0)) * p
        return (T * SEG_FEATURES * (factor * windows * depth + score_weight * scored * scored_depth),
                windows * SEG_FEATURES)
    if family == "sgd_timing":  # exact inference visits all 2^d leaves per point and epoch (fast: d)
        samples = min(_number(params.get("max_samples"), n) or n, n)
        return 2.0 ** _number(params.get("max_depth"), 6) * samples * _number(params.get("timed_epochs"), 2) * p, n * p
    raise ValueError(f"unknown cost family {family!r}")


def binary_tests(params, shape, depth):
    """The candidate tests STreeD searches (``treeopt.optimal.binarize``): ``n_thresholds`` quantile tests per
    feature (one fewer than its distinct values when it has few) and, by default, the splits of CART's tree."""
    per_feature = _number(params.get("n_thresholds"), 5)
    if shape.max_distinct:
        per_feature = min(per_feature, shape.max_distinct - 1)
    cart = 2 ** int(math.ceil(depth)) - 1 if params.get("cart_thresholds", True) else 0
    return max(1, shape.p * per_feature + cart)
