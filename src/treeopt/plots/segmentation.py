"""CO2 paper Sec. 6.2 figures: Jaccard curves (Fig. 4) and example labellings (Fig. 3)."""

from pathlib import Path

import numpy as np
import yaml
from matplotlib.colors import ListedColormap
from matplotlib.ticker import MaxNLocator

from .curves import _n_seeds
from .style import method_colour, method_label, new_figure, stamp

# background, lower face, nose, mouth, left/right eye, left/right eyebrow (the paper's 8 labels)
PART_COLOURS = ["#202020", "#f0b27a", "#e74c3c", "#8e44ad", "#3498db", "#1abc9c", "#f1c40f", "#2ecc71"]


def _jaccard_lines(ax, rows, x):
    """Solid: the paper's rule (probabilities re-weighted by the inverse sampling factor); dashed: without."""
    for method, sub in rows.groupby("method", sort=True):
        sub = sub.sort_values(x)
        ax.plot(sub[x], sub["jaccard"], "-o", color=method_colour(method), markersize=4, label=method_label(method))
        if "jaccard_unweighted" in sub and sub["jaccard_unweighted"].notna().any():
            ax.plot(sub[x], sub["jaccard_unweighted"], "--", marker="x", color=method_colour(method), markersize=4,
                    label=f"{method_label(method)}, not re-weighted")


def jaccard_curves(table, dataset, profile):
    """CO2 paper Fig. 4: test Jaccard against the maximum depth (forests of 16 trees, left) and against
    the number of trees (right). Dashed: the same forests without re-weighting the class probabilities."""
    fig, (ax_depth, ax_trees) = new_figure(2, width=4.8, height=3.8)
    depth = table[table["curve"] == "depth"]
    trees = table[table["curve"] == "n_trees"]
    _jaccard_lines(ax_depth, depth, "depth")
    _jaccard_lines(ax_trees, trees, "n_trees")
    n_forest = sorted(set(depth["n_trees"].dropna().astype(int)))
    ax_depth.set_title(f"forests of {', '.join(map(str, n_forest)) or '?'} trees")
    ax_depth.set_xlabel("maximum depth")
    ax_trees.set_title("against forest size")
    ax_trees.set_xlabel("number of trees")
    ax_trees.set_xscale("log", base=2)
    ax_trees.xaxis.set_major_formatter(lambda v, _: f"{v:g}")
    for ax in (ax_depth, ax_trees):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True)) if ax is ax_depth else None
        ax.set_ylabel("test Jaccard (%)")
        ax.grid(alpha=0.3)
    (ax_trees if len(trees) else ax_depth).legend(fontsize=6)
    datasets = ", ".join(sorted(set(table["dataset"]))) or "none"
    stamp(fig, dataset=datasets, profile=profile, n_seeds=_n_seeds(table))
    return fig


def _load_split_of(run_dir):
    from ..data import load_split

    setup = yaml.safe_load((Path(run_dir) / "params.yaml").read_text())
    return load_split(setup["split"])


def segmentation_examples(table, dataset, profile):
    """CO2 paper Fig. 3: input, ground truth and each forest's labelling for the chosen test images (rows:
    each method's median image, highest mean, highest variance, then random images)."""
    import matplotlib.pyplot as plt

    methods = list(dict.fromkeys(table["method"]))
    picks = table.drop_duplicates("order").sort_values("order")
    split = _load_split_of(table["run"].iloc[0])
    labelled = {}
    for method, run in table.drop_duplicates("method")[["method", "run"]].itertuples(index=False):
        with np.load(Path(run) / "segmentation.npz") as z:
            labelled[method] = z["test_pred"]
    cmap = ListedColormap(PART_COLOURS[:max(len(split.classes), 2)])
    n_cols = 2 + len(methods)
    fig, axes = plt.subplots(len(picks), n_cols, figsize=(1.35 * n_cols, 1.4 * len(picks) + 0.4), squeeze=False)
    for r, pick in enumerate(picks.itertuples(index=False)):
        image = int(pick.image)
        truth = split.y_test[image].astype(float)
        border = labelled[methods[0]][image] < 0
        truth[border] = np.nan  # not scored: shown blank, as in the forests' labellings
        panels = [("input", split.X_test[image], None), ("ground truth", truth, None)]
        for method in methods:
            pred = labelled[method][image].astype(float)
            pred[pred < 0] = np.nan  # the ignored border
            score = table[(table["order"] == pick.order) & (table["method"] == method)]["jaccard"].iloc[0]
            panels.append((method_label(method), pred, score))
        for c, (title, data, score) in enumerate(panels):
            ax = axes[r, c]
            if data.ndim == 3:
                ax.imshow(data)
            else:
                ax.imshow(data, cmap=cmap, vmin=-0.5, vmax=cmap.N - 0.5, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            if r == 0:
                ax.set_title(title.replace(" Forest", "\nForest"), fontsize=7)
            if score is not None:
                ax.text(0.03, 0.03, f"{score:.1f}", transform=ax.transAxes, fontsize=6, color="k")
            if c == 0:
                ax.set_ylabel(f"{pick.role}\n#{image}", fontsize=6)
    datasets = ", ".join(sorted(set(table["dataset"])))
    stamp(fig, dataset=datasets, profile=profile, n_seeds=1)
    return fig
