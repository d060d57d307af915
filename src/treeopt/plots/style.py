"""Shared look of the report figures: method names and colours, the provenance stamp, saving."""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .._atomic import atomic_path  # noqa: E402

# Display names and colours (a method and its forest share a colour).
METHOD_LABELS = {
    "cart": "axis-aligned", "cart_reg": "regression tree", "rf": "Random Forest", "rf_reg": "Random Forest",
    "gbdt": "GBDT", "gbdt_clf": "GBDT", "gbdt_sq_clf": "GBDT", "oc1_tree": "OC1", "oc1_forest": "OC1 Forest",
    "random_oblique_tree": "random oblique", "co2_tree": "CO2", "co2_forest": "CO2 Forest",
    "co2_forest_node": "CO2 Forest (node-standardised)", "co2_forest_nobag": "CO2 Forest (no bagging)",
    "nongreedy": "non-greedy", "tao": "TAO", "rgf": "RGF",
    "seg_rf": "Random Forest", "seg_two_probe": "Two-probe Forest", "seg_co2": "CO2 Forest",
}
_COLOURS = {"cart": "C0", "rf": "C0", "cart_reg": "C0", "rf_reg": "C0", "gbdt": "k", "gbdt_clf": "k", "gbdt_sq_clf": "k",
            "oc1_tree": "C1", "oc1_forest": "C1", "random_oblique_tree": "C4", "co2_tree": "C2",
            "co2_forest": "C2", "co2_forest_node": "C5", "co2_forest_nobag": "C9", "nongreedy": "C3", "tao": "C3",
            "rgf": "C3",
            "seg_rf": "C0", "seg_two_probe": "C1", "seg_co2": "C2"}

# RGF paper methods (Johnson & Zhang): RGF variants, exponential-loss RGF/GBDT, AdaBoost.
for _m, _label, _colour in (("rgf_l2", "RGF-L2", "navy"), ("rgf_min", "RGF min-penalty", "C2"),
                            ("rgf_min_sib", "RGF min-penalty (sib)", "C8"), ("xrgf", "RGF (exp. loss)", "C6"),
                            ("gbdt_exp", "GBDT (exp. loss)", "0.4"), ("adaboost", "AdaBoost", "C1")):
    for _name in (_m, f"{_m}_clf"):
        METHOD_LABELS.setdefault(_name, _label)
        _COLOURS.setdefault(_name, _colour)


def method_label(method):
    return METHOD_LABELS.get(method, method)


def variant_label(method, variant):
    """Short name of a configuration; GBDT as in the RGF paper's legends ('gb8:s=0.1')."""
    if not variant:
        return ""
    pairs = dict(p.split("=", 1) for p in variant.split(",") if "=" in p)
    if method.startswith("gbdt") and set(pairs) <= {"max_leaf_nodes", "learning_rate"}:
        return f"gb{pairs.get('max_leaf_nodes', '?')}:s={pairs.get('learning_rate', '0.1')}"
    return variant


def method_colour(method):
    """Fixed colour per method (the same in every figure); unregistered names get one from their letters."""
    return _COLOURS.get(method, f"C{5 + sum(method.encode()) % 5}")


def stamp(fig, *, dataset, profile, n_seeds):
    """Write on the figure which data set, profile and number of seeds made it (DESIGN.md)."""
    fig.text(0.99, 0.005, f"data set: {dataset}  |  profile: {profile}  |  seeds: {n_seeds}",
             ha="right", va="bottom", fontsize=7, color="0.35")


def new_figure(n_panels=1, width=4.2, height=3.4):
    fig, axes = plt.subplots(1, n_panels, figsize=(width * n_panels, height), squeeze=False)
    return fig, list(axes[0])


def save(fig, stem):
    """Save ``stem``.png and ``stem``.pdf (temporary names, then rename) and close the figure."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    for ext in ("png", "pdf"):
        with atomic_path(stem.with_name(f"{stem.name}.{ext}"), prefix=f".{stem.name}.", suffix=f".tmp.{ext}") as tmp:
            fig.savefig(tmp, dpi=150, format=ext, metadata={"CreationDate": None} if ext == "pdf" else None)
    plt.close(fig)
METHOD_LABELS.update({"cart_gini": "CART (Gini)", "tao_oblique": "TAO (sparse oblique)", "tao_axis": "TAO (axis-aligned)"})
_COLOURS.update({"cart_gini": "C0", "tao_oblique": "C3", "tao_axis": "C6"})
METHOD_LABELS.update({"nongreedy_tree": "non-greedy", "nongreedy_tree_reg": "non-greedy (regression)"})
_COLOURS.update({"nongreedy_tree": "C3", "nongreedy_tree_reg": "C3"})
METHOD_LABELS.update({"optimal_axis": "optimal axis-aligned (STreeD)"})
_COLOURS.update({"optimal_axis": "k"})
