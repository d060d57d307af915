"""Tables of the non-greedy paper (Norouzi et al. 2015, "Efficient non-greedy optimization of decision trees"):
Figs. 2, 3 and 4."""

from .tables import aggregate, param_column


def nongreedy_fig2(runs):
    """Non-greedy paper Fig. 2: training and test accuracy (%) of single trees against the depth limit."""
    runs = runs.assign(depth=param_column(runs, "max_depth", "depth"))
    return aggregate(runs, "depth", ["train_accuracy", "test_accuracy"])


def nongreedy_fig3(runs):
    """Non-greedy paper Fig. 3: leaves that training points reach (``active_leaves``) against depth, one curve
    per norm bound ``nu`` (eq. (9)); ``n_leaves`` is the tree's number of leaves (2^depth for a non-greedy tree).
    Methods without ``nu`` (the axis-aligned baseline, the figure's dotted line) have it empty."""
    runs = runs.assign(depth=param_column(runs, "max_depth"), nu=param_column(runs, "nu"),
                       active_leaves=runs["tree_active_leaves_train"], n_leaves=runs["tree_n_leaves"])
    return aggregate(runs, "depth", ["active_leaves", "n_leaves"], keys=("dataset", "method", "nu"))


FIG4_TIMINGS = ("exact_seconds", "fast_seconds")


def nongreedy_fig4_runtime(runs):
    """Non-greedy paper Fig. 4: seconds for 1000 epochs of SGD with exact (eq. (10)-(12)) and fast (eq. (13))
    loss-augmented inference against depth (runs of ``nongreedy_sgd_timing``), ``speedup`` = exact / fast of
    the means over seeds; ``exact_cpu_seconds``, ``fast_cpu_seconds`` and ``cpu_speedup`` the same in CPU time;
    ``timed_epochs`` and ``timed_samples`` say what was measured to estimate them."""
    from ...nongreedy.timing import cpu_share

    cpu = {}
    for v in ("exact", "fast"):  # wall estimate x the CPU share of the timed fit (treeopt.nongreedy.timing)
        if f"tree_{v}_fit_cpu_seconds" in runs:
            share = [cpu_share(c, w) for c, w in zip(runs[f"tree_{v}_fit_cpu_seconds"],
                                                     runs[f"tree_{v}_fit_wall_seconds"])]
            cpu[f"{v}_cpu_seconds"] = runs[f"tree_{v}_seconds"] * share
    extra = list(cpu) if len(cpu) == 2 else []
    names = [*FIG4_TIMINGS, *extra, "timed_epochs", "timed_samples"]
    runs = runs.assign(depth=param_column(runs, "max_depth"), **cpu,
                       **{name: runs[f"tree_{name}"] for name in names if name not in cpu})
    table = aggregate(runs, "depth", names, keys=("dataset",))
    table.insert(4, "speedup", table["exact_seconds"] / table["fast_seconds"])
    if len(extra) == 2:  # the same ratio in CPU time (robust to the machine's load)
        table.insert(7, "cpu_speedup", table["exact_cpu_seconds"] / table["fast_cpu_seconds"])
    return table
