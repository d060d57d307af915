"""Not in any paper: our single trees at a fixed height beside the test accuracies published in DTSemNet's Table 3."""

import numpy as np

from .style import method_colour, method_label, new_figure, stamp

# Colours of this figure only (elsewhere TAO and non-greedy trees share red): one per our method and start.
_COLOURS = {("cart", ""): "C0", ("optimal_axis", ""): "k", ("co2_tree", ""): "C2", ("nongreedy_tree", "co2"): "C4",
            ("tao_oblique", "cart"): "C3", ("tao_oblique", "nongreedy"): "C1"}

# Published methods (DTSemNet Table 3, ECAI 2024): drawn as grey vertical lines, never as bars of ours.
_PUBLISHED = (("published_dtsemnet", "DTSemNet", "-"), ("published_dgt", "DGT", "--"),
              ("published_tao", "TAO", "-."), ("published_cart", "CART", ":"))


def _label(method, init):
    """Our method and, for TAO, the tree it started from."""
    text = "CART (information gain)" if method == "cart" else method_label(method)
    return f"{text} from {'non-greedy' if init == 'nongreedy' else init.upper()}" if method.startswith("tao") else text


def accuracy_against_published(table, dataset, profile):
    """One bar per our method (mean test accuracy over seeds, std as the error bar, training accuracy as a
    marker), one panel per height; the published DTSemNet, DGT, TAO and CART test accuracies at that height as
    labelled vertical lines."""
    rows = table[table["dataset"] == dataset]
    depths = sorted(rows["depth"].dropna().unique()) or [None]
    n_bars = rows.groupby("depth").size().max() if len(rows) else 1
    fig, axes = new_figure(len(depths), width=6.4, height=0.45 * max(3, n_bars) + 2.6)
    for ax, depth in zip(axes, depths):
        sub = rows[rows["depth"] == depth].sort_values("test_accuracy")
        y = np.arange(len(sub))
        inits = [i if isinstance(i, str) else "" for i in sub["init"]]
        colours = [_COLOURS.get((m, i)) or method_colour(m) for m, i in zip(sub["method"], inits)]
        ax.barh(y, sub["test_accuracy"], xerr=sub["test_accuracy_std"].fillna(0), color=colours, alpha=0.8,
                capsize=3, label="ours: test")
        ax.plot(sub["train_accuracy"], y, "k|", markersize=12, label="ours: training")
        ax.set_yticks(y, [_label(m, i) for m, i in zip(sub["method"], inits)])
        published = False
        for column, name, style in _PUBLISHED:
            value = sub[column].dropna() if column in sub else sub.iloc[:0]
            if len(value):
                published = True
                ax.axvline(value.iloc[0], color="0.3", linestyle=style, linewidth=1.2,
                           label=f"published {name} {value.iloc[0]:.2f}")
        low = np.nanmin([sub["test_accuracy"].min(), *(sub[c].min() for c, _, _ in _PUBLISHED if c in sub)])
        ax.set_xlim(max(0.0, low - 5) if np.isfinite(low) else 0.0, 100.5)
        ax.set_xlabel("accuracy (%)")
        ax.set_title(f"{dataset}, height {depth:g}" if depth is not None else dataset)
        ax.grid(alpha=0.3, axis="x")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2,  # below: bars stay visible
                  title="grey lines: published in DTSemNet Table 3 (ECAI 2024), not ours" if published else None,
                  title_fontsize=7)
    stamp(fig, dataset=dataset, profile=profile, n_seeds=int(rows["n_seeds"].max()) if len(rows) else 0)
    return fig
