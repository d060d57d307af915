"""Non-greedy paper Figs. 3 and 4, drawn from the ``nongreedy_fig3`` and ``nongreedy_fig4_runtime`` tables.

One panel per data set in the table (the paper: MNIST for Fig. 3, Connect4 for Fig. 4).
"""

from matplotlib.ticker import FuncFormatter, MaxNLocator

from .style import method_colour, method_label, new_figure, stamp


def _datasets(table, dataset):
    return [dataset] if dataset is not None else sorted(table["dataset"].unique())


def _n_seeds(rows):
    return int(rows["n_seeds"].max()) if len(rows) else 0


def _depth_axis(ax, title):
    ax.set_title(title)
    ax.set_xlabel("depth")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3, which="both")


def active_leaves_vs_depth(table, dataset, profile):
    """Fig. 3: active leaves (reached by training points) against depth, one line per nu for the non-greedy
    trees; methods without nu (the axis-aligned tree, its number of leaves) dotted; log-scaled leaf axis."""
    names = _datasets(table, dataset)
    fig, axes = new_figure(max(1, len(names)), width=4.8)
    for ax, name in zip(axes, names):
        rows = table[table["dataset"] == name]
        with_nu = rows[rows["nu"].notna()]
        for (method, nu), sub in with_nu.groupby(["method", "nu"], sort=True):
            sub = sub.sort_values("depth")
            ax.plot(sub["depth"], sub["active_leaves"], marker="o", markersize=3,
                    label=f"{method_label(method)}, nu={nu:g}")
        for method, sub in rows[rows["nu"].isna()].groupby("method", sort=True):
            sub = sub.sort_values("depth")
            ax.plot(sub["depth"], sub["n_leaves"], color="k", linestyle=":", label=f"{method_label(method)} leaves")
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        _depth_axis(ax, name)
        ax.set_ylabel("active leaves")
        ax.legend(fontsize=7)
    stamp(fig, dataset=", ".join(names), profile=profile, n_seeds=_n_seeds(table))
    return fig


def sgd_time_vs_depth(table, dataset, profile):
    """Fig. 4: seconds for 1000 epochs of SGD against depth, loss-augmented inference (exact) and its fast
    variant (wall seconds; CPU seconds dashed where measured); log-scaled time axis, wall speedup at each depth."""
    names = _datasets(table, dataset)
    fig, axes = new_figure(max(1, len(names)), width=4.8)
    for ax, name in zip(axes, names):
        rows = table[table["dataset"] == name].sort_values("depth")
        ax.plot(rows["depth"], rows["exact_seconds"], marker="s", color=method_colour("co2_tree"),
                label="loss-augmented inference (exact)")
        ax.plot(rows["depth"], rows["fast_seconds"], marker="o", color=method_colour("nongreedy"),
                label="fast loss-augmented inference")
        if "exact_cpu_seconds" in rows and rows["exact_cpu_seconds"].notna().any():  # CPU time, load-independent
            ax.plot(rows["depth"], rows["exact_cpu_seconds"], linestyle="--", color=method_colour("co2_tree"),
                    label="exact, CPU seconds")
            ax.plot(rows["depth"], rows["fast_cpu_seconds"], linestyle="--", color=method_colour("nongreedy"),
                    label="fast, CPU seconds")
        for depth, top, speedup in zip(rows["depth"], rows["exact_seconds"], rows["speedup"]):
            ax.annotate(f"x{speedup:.3g}", (depth, top), textcoords="offset points", xytext=(0, 5),
                        ha="center", fontsize=6)
        ax.set_yscale("log")
        ax.margins(y=0.2)  # room for the speedup labels above the top points
        _depth_axis(ax, name)
        ax.set_ylabel("seconds per 1000 epochs")
        ax.legend(fontsize=7)
    epochs = table["timed_epochs"].min() if len(table) else 0
    stamp(fig, dataset=", ".join(names), profile=profile,
          n_seeds=f"{_n_seeds(table)} (timed: {epochs:g} epochs per variant, scaled to 1000)")
    return fig
