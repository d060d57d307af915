"""Not in any paper: how far CART, TAO, CO2 and non-greedy trees are from the optimal axis-aligned tree."""

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from .style import method_colour, method_label, new_figure, stamp

# Colours and markers of this figure only: elsewhere TAO and non-greedy trees share red, here they are side by side.
_COLOURS = {"cart": "C0", "optimal_axis": "k", "tao_axis": "C1", "tao_oblique": "C3", "co2_tree": "C2",
            "nongreedy_tree": "C4"}
_MARKERS = {"cart": "o", "optimal_axis": "s", "tao_axis": "^", "tao_oblique": "v", "co2_tree": "D",
            "nongreedy_tree": "P"}
_PANELS = (("train_accuracy", "training accuracy (%)"), ("test_accuracy", "test accuracy (%)"),
           ("fit_seconds", "fit time (s)"))


def _two_and_five(value, _):
    """Minor tick labels of a log axis at 2 and 5 times a power of ten only (1 is a major tick)."""
    if value <= 0:
        return ""
    lead = value / 10 ** np.floor(np.log10(value))
    return f"{value:g}" if np.isclose(lead, 2) or np.isclose(lead, 5) else ""


def _label(method, init):
    """Legend text: the method, and its initial tree where it is not the method's usual one."""
    text = "CART (information gain)" if method == "cart" else method_label(method)
    if init == "optimal":
        return f"{text} from optimal"
    return text


def accuracy_and_time_vs_depth(table, dataset, profile):
    """Training accuracy, test accuracy and fit time against the depth limit, one line per method and initial
    tree; the optimal tree in black, TAO started from it dashed; open markers where the optimal tree was not
    proven optimal within its time limit (on some seed)."""
    rows = table[table["dataset"] == dataset]
    fig, axes = new_figure(3, width=4.0, height=3.6)
    for (method, init), sub in rows.groupby(["method", rows["init"].fillna("")], sort=True):
        sub = sub.sort_values("depth")
        colour = _COLOURS.get(method) or method_colour(method)
        marker = _MARKERS.get(method, "o")
        style = "--" if init == "optimal" else "-"
        width = 2.2 if method == "optimal_axis" else 1.3
        unproven = sub["proven"].lt(1).to_numpy() if "proven" in sub else np.zeros(len(sub), dtype=bool)
        for ax, (y, _) in zip(axes, _PANELS):
            err = sub.get(f"{y}_std")
            ax.errorbar(sub["depth"], sub[y], yerr=None if err is None or err.isna().all() else err.fillna(0),
                        color=colour, linestyle=style, linewidth=width, marker=marker, markersize=4, capsize=2,
                        label=_label(method, init))
            if unproven.any():  # open markers: the tree is the best found in time, not a proven optimum
                ax.plot(sub["depth"][unproven], sub[y][unproven], linestyle="none", marker=marker, markersize=8,
                        markerfacecolor="white", markeredgecolor=colour, zorder=5)
    for ax, (y, ylabel) in zip(axes, _PANELS):
        ax.set_xlabel("depth")
        ax.set_xticks(sorted(rows["depth"].dropna().unique()))
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, which="both")
        ax.set_title(f"{dataset} - {ylabel.split(' (')[0]}")
    axes[2].set_yscale("log")
    axes[2].yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axes[2].yaxis.set_minor_formatter(FuncFormatter(_two_and_five))
    handles, labels = axes[0].get_legend_handles_labels()
    if "proven" in rows and rows["proven"].lt(1).any():
        handles.append(Line2D([], [], linestyle="none", marker="o", markersize=8, markerfacecolor="white",
                              markeredgecolor="k"))
        labels.append("optimality not proven in time")
    axes[1].legend(handles, labels, fontsize=7)
    stamp(fig, dataset=dataset, profile=profile, n_seeds=int(rows["n_seeds"].max()) if len(rows) else 0)
    return fig
