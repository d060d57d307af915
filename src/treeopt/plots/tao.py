"""TAO paper (Carreira-Perpinan & Tavallali 2018) Fig. 1: measures of sparse oblique trees along the C path."""

import numpy as np
from matplotlib.ticker import FuncFormatter

from .style import new_figure, stamp


def _log_x(ax):
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.grid(alpha=0.3, which="both")


def sparsity_path(table, dataset, profile):
    """Fig. 1 right plots for the deepest initial tree (error; % non-zero weights and internal nodes; path
    length and inference ops, against C) and the bottom plot: test error against the number of non-zero
    parameters for every initial depth, solid = oblique initial tree, dotted = axis-aligned (CART)."""
    rows = table[table["dataset"] == dataset]
    fig, axes = new_figure(4, width=4.0)
    n_seeds = int(rows["n_seeds"].max()) if len(rows) else 0
    if rows.empty:
        stamp(fig, dataset=dataset, profile=profile, n_seeds=0)
        return fig
    depth = rows["depth"].max()
    inits = sorted(rows["init"].unique())
    deep = rows[(rows["depth"] == depth) & (rows["init"] == inits[0])].sort_values("C")
    ax = axes[0]
    ax.plot(deep["C"], deep["train_error"], "o-", label="train")
    if deep["val_error"].notna().any():
        ax.plot(deep["C"], deep["val_error"], "s--", label="validation")
    ax.plot(deep["C"], deep["test_error"], "^-", label="test")
    ax.set_ylabel("error (%)")
    ax.set_title(f"{dataset}, depth {depth} ({inits[0]} init)")
    ax.legend(fontsize=8)
    ax = axes[1]
    ax.plot(deep["C"], deep["nonzero_pct"], "o-", color="C2", label="% non-zero weights")
    ax.set_ylabel("% non-zero weights", color="C2")
    twin = ax.twinx()
    twin.plot(deep["C"], deep["n_internal"], "s--", color="C3", label="internal nodes")
    twin.set_ylabel("internal nodes", color="C3")
    ax.set_title("sparsity and size")
    ax = axes[2]
    ax.plot(deep["C"], deep["path_length_mean"], "o-", color="C0", label="mean path length")
    ax.fill_between(deep["C"], deep["path_length_min"], deep["path_length_max"], color="C0", alpha=0.15)
    ax.set_ylabel("root-leaf path length (nodes)", color="C0")
    twin2 = ax.twinx()
    twin2.plot(deep["C"], deep["inference_ops"], "s--", color="C1")
    twin2.set_ylabel("inference ops (multiplications)", color="C1")
    ax.set_title("inference")
    for ax in axes[:3]:
        _log_x(ax)
        ax.set_xlabel("C")
    ax = axes[3]
    depths = sorted(rows["depth"].unique())
    cmap = __import__("matplotlib").colormaps["viridis"]
    for i, d in enumerate(depths):
        colour = cmap(i / max(1, len(depths) - 1))
        for init in inits:
            sub = rows[(rows["depth"] == d) & (rows["init"] == init)].sort_values("nonzero_weights")
            style = ":" if init == "cart" else "-"
            ax.plot(np.maximum(sub["nonzero_weights"] + sub["n_internal"] + sub["n_leaves"], 1), sub["test_error"],
                    linestyle=style, marker=".", color=colour, label=f"depth {d}" if init == inits[0] else None)
    ax.set_xscale("log")
    ax.set_xlabel("parameters (non-zero w, b, leaves)")
    ax.set_ylabel("test error (%)")
    ax.set_title("error vs parameters (dotted: CART init)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    stamp(fig, dataset=dataset, profile=profile, n_seeds=n_seeds)
    return fig
