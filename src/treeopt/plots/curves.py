"""Curves of a metric against a setting, one line per method (drawn from a report table).

Each function takes the table, a data set (or None for a multi-panel figure) and the profile name and
returns a matplotlib Figure; ``treeopt.experiments.report.figures`` saves it. Lines are whatever methods the table
holds.
"""

from matplotlib.ticker import FuncFormatter, MaxNLocator

from .style import method_colour, method_label, new_figure, stamp, variant_label


def _n_seeds(rows):
    return int(rows["n_seeds"].max()) if len(rows) else 0


_STYLES = ("-", "--", ":", "-.")


def _log_x(ax):
    """Log-scaled x axis labelled 1, 10, 100 rather than 10^0, 10^1, 10^2."""
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.grid(alpha=0.3, which="both")


def _lines(ax, rows, x, y, *, marker="o"):
    """One line per method (per method and ``variant`` when the table has one); error bars: std over seeds."""
    for method, by_method in rows.groupby("method", sort=True):
        variants = (by_method.groupby(by_method["variant"].fillna(""), sort=True) if "variant" in by_method
                    else [("", by_method)])
        for j, (variant, sub) in enumerate(variants):
            sub = sub.sort_values(x)
            err = sub.get(f"{y}_std")
            label = method_label(method) + (f" {variant_label(method, variant)}" if variant else "")
            ax.errorbar(sub[x], sub[y], yerr=None if err is None or err.isna().all() else err.fillna(0),
                        color=method_colour(method), linestyle=_STYLES[j % len(_STYLES)], marker=marker,
                        markersize=4, capsize=2, label=label)


def _depth_panels(panels, dataset, ylabel):
    """Title, axis labels and grid of (axis, title) panels plotted against tree depth."""
    for ax, title in panels:
        ax.set_title(f"{dataset} - {title}")
        ax.set_xlabel("depth")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # depths are whole numbers
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)


def accuracy_vs_depth(table, dataset, profile):
    """Non-greedy paper Fig. 2: test and training accuracy against tree depth, one panel each."""
    rows = table[table["dataset"] == dataset]
    fig, (ax_test, ax_train) = new_figure(2)
    _lines(ax_test, rows, "depth", "test_accuracy")
    _lines(ax_train, rows, "depth", "train_accuracy")
    _depth_panels(((ax_test, "Test"), (ax_train, "Training")), dataset, "accuracy (%)")
    ax_test.legend(fontsize=8)
    stamp(fig, dataset=dataset, profile=profile, n_seeds=_n_seeds(rows))
    return fig


def error_vs_trees(table, dataset, profile):
    """CO2 paper Fig. 2: test error against the (log) number of trees; the paper's numbers as crosses."""
    rows = table[table["dataset"] == dataset]
    fig, (ax,) = new_figure(1, width=4.8)
    _lines(ax, rows, "n_trees", "test_error")
    paper = rows.dropna(subset=["paper_value"]) if "paper_value" in rows else rows.iloc[:0]
    for method, sub in paper.groupby("method", sort=True):
        ax.plot(sub["n_trees"], sub["paper_value"], linestyle="none", marker="x", markersize=7,
                color=method_colour(method), label=f"{method_label(method)} (paper)")
    _log_x(ax)
    ax.set_xlabel("number of trees")
    ax.set_ylabel("test error (%)")
    ax.set_title(dataset)
    ax.legend(fontsize=8)
    stamp(fig, dataset=dataset, profile=profile, n_seeds=_n_seeds(rows))
    return fig


def error_vs_depth_by_nu(table, dataset, profile):
    """CO2 paper Fig. 1: training and validation error against depth, one line per nu for CO2 trees and
    the axis-aligned baseline dashed."""
    rows = table[table["dataset"] == dataset]
    fig, (ax_train, ax_val) = new_figure(2)
    for (method, nu), sub in rows.groupby(["method", "nu"], sort=True, dropna=False):
        sub = sub.sort_values("depth")
        baseline = nu != nu  # NaN: a method without a norm bound
        label = method_label(method) + ("" if baseline else f", nu={nu:g}")
        style = dict(color="k", linestyle="--", marker=None) if baseline else dict(marker="o", markersize=3)
        for ax, y in ((ax_train, "train_error"), (ax_val, "val_error")):
            ax.plot(sub["depth"], sub[y], label=label, **style)
    _depth_panels(((ax_train, "training"), (ax_val, "validation")), dataset, "error (%)")
    ax_val.legend(fontsize=7)
    stamp(fig, dataset=dataset, profile=profile, n_seeds=_n_seeds(rows))
    return fig


def best_variants(rows, y, k=3):
    """The ``k`` configurations per method with the lowest best value of ``y`` (the RGF paper shows "a few
    best-performing configurations (measured by the peak performances)" of GBDT)."""
    if "variant" not in rows or rows.empty:
        return rows
    rows = rows.assign(variant=rows["variant"].fillna(""))
    peak = rows.groupby(["method", "variant"])[y].min().reset_index()
    keep = peak.sort_values(y, kind="stable").groupby("method").head(k)[["method", "variant"]]
    return rows.merge(keep, on=["method", "variant"])


def metric_vs_leaves(table, dataset, profile, k=3):
    """RGF paper Figs. 7-10: test RMSE (or test error for classification) against the number of leaves,
    one panel per data set, the ``k`` best configurations of each method."""
    datasets = [dataset] if dataset is not None else sorted(table["dataset"].unique())
    fig, axes = new_figure(max(1, len(datasets)), width=3.8)
    for ax, name in zip(axes, datasets):
        rows = table[table["dataset"] == name]
        y = "test_rmse" if "test_rmse" in rows and rows["test_rmse"].notna().any() else "test_error"
        _lines(ax, best_variants(rows, y, k), "n_leaves", y, marker=".")
        _log_x(ax)
        ax.set_xlabel("number of leaves")
        ax.set_ylabel("test RMSE" if y == "test_rmse" else "test error (%)")
        ax.set_title(name)
        ax.legend(fontsize=6)
    stamp(fig, dataset=", ".join(datasets), profile=profile, n_seeds=_n_seeds(table))
    return fig


def time_vs_tree_size(table, dataset, profile):
    """RGF paper Fig. 16: training seconds against the average tree size, one point per RGF configuration,
    one panel per data set (L2 x, min-penalty triangles, sum-to-zero siblings circles)."""
    datasets = [dataset] if dataset is not None else sorted(table["dataset"].unique())
    fig, axes = new_figure(max(1, len(datasets)), width=3.8)
    markers = {"rgf_l2": "x", "rgf_l2_clf": "x", "rgf_min": "^", "rgf_min_clf": "^", "rgf_min_sib": "o",
               "rgf_min_sib_clf": "o", "xrgf_clf": "+"}
    for ax, name in zip(axes, datasets):
        rows = table[table["dataset"] == name]
        for method, sub in rows.groupby("method", sort=True):
            ax.scatter(sub["tree_size"], sub["fit_seconds"], marker=markers.get(method, "."),
                       label=method_label(method))
        ax.set_xlabel("average tree size (leaves)")
        ax.set_ylabel("training time (s)")
        ax.set_title(name)
        ax.legend(fontsize=6)
    stamp(fig, dataset=", ".join(datasets), profile=profile, n_seeds=_n_seeds(table))
    return fig
