"""Methods the workflow can run: a name, the estimator that implements it, and the task it solves.

Registering a learner is one line (the estimator is imported only when a run needs it)::

    register("co2_forest", "treeopt.forest:CO2ForestClassifier", "classification", kind="forest")

Every estimator receives ``random_state`` (the run seed) and, when it has one, ``n_jobs``. A parameter
value written as ``"p^0.5"`` means round(p ** 0.5) for a data set with p features, the CO2 paper's
candidate set for q, the number of features tried per node (Sec. 5).
"""

import importlib
import inspect
import re
from dataclasses import dataclass, field

from .params import split_dotted

TASKS = ("classification", "regression", "segmentation")
KINDS = ("tree", "forest", "boosting")
POWER_NOTATION = re.compile(r"^p\^([0-9]*\.?[0-9]+)$")


@dataclass(frozen=True)
class Method:
    """One registered method.

    name : the name used in config.yaml and in run folders.
    estimator : "module:Class" (or the class itself) of a scikit-learn-style estimator.
    task : "classification" or "regression".
    kind : "tree" (exposes ``tree_``), "forest" (``estimators_``, each with ``tree_``) or "boosting".
    fixed : parameters always passed, e.g. the information-gain criterion of the papers' baselines.
    save_model : write model.npz (single trees yes; big ensembles are cheaper to refit than to keep).
    path : ``{parameter: warm-start parameter}`` of a learner fitted along a warm-started path whose every step
        is the fit at that step's value (TAO: ``{"C": "warm_start_C"}``, ``path_step``); a grid over the
        parameter may then be read off one fit per path (config ``path:``, :mod:`treeopt.experiments.plan.build`).
        ``{"max_depth": None}``: a level-order tree contains the same fit at every smaller depth (``depth_step``).
    """

    name: str
    estimator: object
    task: str
    kind: str = "tree"
    fixed: dict = field(default_factory=dict)
    save_model: bool | None = None
    path: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"method {self.name!r}: task must be one of {TASKS}, got {self.task!r}")
        if self.kind not in KINDS:
            raise ValueError(f"method {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")

    @property
    def keeps_model(self):
        return self.kind == "tree" if self.save_model is None else self.save_model

    def estimator_class(self):
        if not isinstance(self.estimator, str):
            return self.estimator
        module, _, attr = self.estimator.partition(":")
        return getattr(importlib.import_module(module), attr)

    def parameter_names(self):
        """Constructor parameters of the estimator (what a config grid may set)."""
        cls = self.estimator_class()
        if hasattr(cls, "_get_param_names"):
            return set(cls._get_param_names())
        return {n for n, p in inspect.signature(cls).parameters.items() if p.kind == p.POSITIONAL_OR_KEYWORD}


METHODS: dict[str, Method] = {}


def register(name, estimator, task, *, kind="tree", fixed=None, save_model=None, path=None):
    """Add (or replace) a method in the registry and return it."""
    METHODS[name] = Method(name, estimator, task, kind, dict(fixed or {}), save_model, dict(path or {}))
    return METHODS[name]


def get_method(name):
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; registered methods: {', '.join(sorted(METHODS))}") from None


def power_exponent(value):
    """a of a ``"p^a"`` value (round(p ** a) features), None for anything else."""
    match = POWER_NOTATION.match(value.strip()) if isinstance(value, str) else None
    return float(match.group(1)) if match else None


def resolve_value(value, n_features):
    """``"p^a"`` -> max(1, round(n_features ** a)); any other value unchanged."""
    exponent = power_exponent(value)
    if exponent is None:
        return value
    if n_features is None:
        raise ValueError(f"{value!r} needs the number of features")
    return max(1, int(round(n_features ** exponent)))


def nest_params(params):
    """Fold dotted keys into dict parameters: ``{"init_params.nu": 1}`` -> ``{"init_params": {"nu": 1}}``
    (merged into a dict already given for ``init_params``), at any depth: ``"init_params.init_params.nu"`` sets
    ``nu`` inside the ``init_params`` of the estimator built from ``init_params`` (TAO from a non-greedy tree from
    a CO2 tree). Config ``inherit:`` uses the dotted form to put another method's chosen value inside a dict
    parameter."""
    nested, folded = {}, set()
    for key, value in params.items():
        outer, _, inner = key.partition(".")
        if inner:
            base = params.get(outer) or {}
            if not isinstance(base, dict):
                raise ValueError(f"{key}: {outer} is {base!r}, not a dict to put {inner!r} in")
            nested.setdefault(outer, dict(base))[inner] = value
            folded.add(outer)
        elif key not in nested:
            # a copy: dotted keys after it are folded into it, and the caller's dict (a run's params, recorded in
            # its metrics.json after the fit) must not change
            nested[key] = dict(value) if isinstance(value, dict) else value
    return {key: nest_params(value) if key in folded else value for key, value in nested.items()}


def check_params(method, params):
    """Raise a ValueError naming any parameter the method's estimator does not take."""
    spec = get_method(method)
    valid = spec.parameter_names()
    unknown = sorted({split_dotted(k)[0] for k in params} - valid)
    if unknown:
        raise ValueError(f"method {method!r} ({spec.estimator}) has no parameter(s) {', '.join(map(repr, unknown))}; "
                         f"valid: {', '.join(sorted(valid - {'random_state', 'n_jobs'}))}")


def make_estimator(method, params, seed, n_jobs=1, n_features=None):
    """A fresh, unfitted estimator for ``method`` with ``params``, seeded with ``seed``."""
    spec = get_method(method)
    check_params(method, params)
    kwargs = {**spec.fixed, **nest_params({k: resolve_value(v, n_features) for k, v in params.items()})}
    valid = spec.parameter_names()
    if "random_state" in valid:
        kwargs["random_state"] = seed
    if "n_jobs" in valid:
        kwargs["n_jobs"] = n_jobs
    return spec.estimator_class()(**kwargs)


# ---- the registry: one line per method -----------------------------------------------------------------
register("cart", "treeopt.greedy:AxisAlignedTreeClassifier", "classification")
register("rf", "sklearn.ensemble:RandomForestClassifier", "classification", kind="forest",
         fixed={"criterion": "entropy"})
register("cart_reg", "sklearn.tree:DecisionTreeRegressor", "regression")
register("rf_reg", "sklearn.ensemble:RandomForestRegressor", "regression", kind="forest")
register("gbdt", "sklearn.ensemble:GradientBoostingRegressor", "regression", kind="boosting",
         fixed={"max_depth": None})
register("gbdt_clf", "sklearn.ensemble:GradientBoostingClassifier", "classification", kind="boosting",
         fixed={"max_depth": None})
# Grown with grow_order: level, a tree limited to depth d is the deeper fit's first levels (depth_step; `path: max_depth`).
register("random_oblique_tree", "treeopt.greedy:RandomObliqueTreeClassifier", "classification",
         path={"max_depth": None})
register("oc1_tree", "treeopt.greedy:OC1TreeClassifier", "classification", path={"max_depth": None})
register("oc1_forest", "treeopt.forest:OC1ForestClassifier", "classification", kind="forest")
register("co2_tree", "treeopt.greedy:CO2TreeClassifier", "classification")
register("co2_forest", "treeopt.forest:CO2ForestClassifier", "classification", kind="forest")
# Not in the paper: CO2 stumps optimised in per-node standardised coordinates (see CO2TreeClassifier).
register("co2_forest_node", "treeopt.forest:CO2ForestClassifier", "classification", kind="forest",
         fixed={"standardize": "node"})
# Not the paper's protocol (Sec. 5 bags every tree): CO2 trees grown on the whole training set, to measure what
# bagging costs (the Letter gap, docs/co2.md).
register("co2_forest_nobag", "treeopt.forest:CO2ForestClassifier", "classification", kind="forest",
         fixed={"bootstrap": False})
# Face-part segmentation (CO2 paper Sec. 6.2): forests over 31x31 RGB windows, one label per pixel.
register("seg_rf", "treeopt.segmentation:ForestSegmenter", "segmentation", kind="forest",
         fixed={"split_kind": "axis"})
register("seg_two_probe", "treeopt.segmentation:ForestSegmenter", "segmentation", kind="forest",
         fixed={"split_kind": "two_probe"})
register("seg_co2", "treeopt.segmentation:ForestSegmenter", "segmentation", kind="forest",
         fixed={"split_kind": "co2"})
# RGF paper (Johnson & Zhang): RGF with the three regularisers of Sec. 5.4 (square loss; classification on
# +-1 targets), RGF and GBDT with exponential loss (Fig. 11) and AdaBoost over best-first trees.
register("rgf_l2", "treeopt.boosting:RGFRegressor", "regression", kind="boosting", fixed={"regularizer": "l2"})
register("rgf_min", "treeopt.boosting:RGFRegressor", "regression", kind="boosting",
         fixed={"regularizer": "min_penalty"})
register("rgf_min_sib", "treeopt.boosting:RGFRegressor", "regression", kind="boosting",
         fixed={"regularizer": "min_penalty_sib"})
register("rgf_l2_clf", "treeopt.boosting:RGFClassifier", "classification", kind="boosting",
         fixed={"regularizer": "l2"})
register("rgf_min_clf", "treeopt.boosting:RGFClassifier", "classification", kind="boosting",
         fixed={"regularizer": "min_penalty"})
register("rgf_min_sib_clf", "treeopt.boosting:RGFClassifier", "classification", kind="boosting",
         fixed={"regularizer": "min_penalty_sib"})
register("xrgf_clf", "treeopt.boosting:RGFClassifier", "classification", kind="boosting",
         fixed={"regularizer": "l2", "loss": "exponential"})
register("gbdt_exp", "sklearn.ensemble:GradientBoostingClassifier", "classification", kind="boosting",
         fixed={"max_depth": None, "loss": "exponential"})
# The paper's GBDT for binary classification (Sec. 6: square loss; the Fig. 15 timings): +-1 targets, as rgf_l2_clf.
register("gbdt_sq_clf", "treeopt.boosting:SquareLossGBDTClassifier", "classification", kind="boosting",
         fixed={"max_depth": None})
register("adaboost", "treeopt.boosting:BestFirstAdaBoostClassifier", "classification", kind="boosting")
# TAO (Carreira-Perpinan & Tavallali 2018): CART (or `init`) refined by tree alternating optimization.
# Each C of its warm-started path (Sec. 4) is the fit at that C (TAOTreeClassifier.path_step).
register("tao_oblique", "treeopt.tao:TAOTreeClassifier", "classification", fixed={"node_type": "oblique"},
         path={"C": "warm_start_C"})
register("tao_axis", "treeopt.tao:TAOTreeClassifier", "classification", fixed={"node_type": "axis"},
         path={"C": "warm_start_C"})
# CART with Gini impurity: TAO's default initial tree (the `cart` baseline above uses information gain).
register("cart_gini", "sklearn.tree:DecisionTreeClassifier", "classification", fixed={"criterion": "gini"})
# Non-greedy trees (Norouzi et al. 2015): all splits and leaves optimised jointly by SGD on the surrogate eq. (9),
# started from a CO2 tree of the same nu and learning rate (Sec. 7: axis-aligned -> CO2 -> non-greedy).
register("nongreedy_tree", "treeopt.nongreedy:NonGreedyTreeClassifier", "classification")
register("nongreedy_tree_reg", "treeopt.nongreedy:NonGreedyTreeRegressor", "regression")
# Fig. 4: seconds for 1000 epochs of SGD with exact and fast loss-augmented inference (a timing, no model kept).
register("nongreedy_sgd_timing", "treeopt.nongreedy.timing:SGDTimingClassifier", "classification",
         save_model=False)
# Not in any paper: the provably optimal axis-aligned tree of bounded depth (STreeD, NeurIPS 2023, via pystreed) over
# quantile and CART thresholds, the reference line for CART, TAO, CO2 and non-greedy trees (docs/optimal.md).
register("optimal_axis", "treeopt.optimal:OptimalTreeClassifier", "classification")


def fits_tree_ranges(name):
    """True when the method's forest can fit any range of its trees apart (tree blocks,
    :mod:`treeopt.experiments.run.blocks`): treeopt's bagged forests on rows (``fit_iter``) and segmentation forests
    (``fit_trees``)."""
    cls = get_method(name).estimator_class()
    return callable(getattr(cls, "fit_iter", None)) or callable(getattr(cls, "fit_trees", None))
