"""The scorecard figure: our value against the paper's for every scored number, one panel per paper."""

import numpy as np

from .style import new_figure, stamp

STATUS_STYLE = {"within tolerance": ("C2", "o"), "better": ("C0", "^"), "worse": ("C3", "v"),
                "protocol offset": ("C1", "D"), "not like for like": ("C7", "s")}
TITLES = {"nongreedy": "Non-greedy trees", "co2": "CO2 Forest", "tao": "TAO", "rgf": "RGF"}


def scorecard_figure(card, profile):
    """Ours (error bars: std over seeds) against the paper's value, the line y = x, colour by status; numbers
    not run yet are counted in the panel title. Claim rows (no paper value; their verdict is in scorecard.md) are
    left out. ``card`` is
    :func:`treeopt.experiments.report.scorecard.build_scorecard`'s table."""
    papers = [p for p in ("nongreedy", "co2", "tao", "rgf")
              if p in set(card.loc[card["paper_value"].notna(), "paper"])] or ["co2"]
    fig, axes = new_figure(len(papers), width=4.0, height=3.8)
    for ax, paper in zip(axes, papers):
        rows = card[(card["paper"] == paper) & card["paper_value"].notna()]  # claim rows have no paper value to plot
        scored = rows[rows["ours"].notna()]
        for status, (colour, marker) in STATUS_STYLE.items():
            sub = scored[scored["status"] == status]
            if len(sub):
                err = sub["ours_std"].where(sub["n_seeds"] > 1)
                ax.errorbar(sub["paper_value"], sub["ours"], yerr=None if err.isna().all() else err.fillna(0),
                            fmt=marker, color=colour, markersize=5, capsize=2, label=f"{status} ({len(sub)})")
        values = np.concatenate([scored["paper_value"].to_numpy(float), scored["ours"].to_numpy(float)])
        low, high = (values.min(), values.max()) if len(values) else (0.0, 1.0)
        pad = 0.05 * (high - low or 1.0)
        ax.plot([low - pad, high + pad], [low - pad, high + pad], color="0.5", linewidth=1, label="y = x")
        ax.set_xlim(low - pad, high + pad)
        ax.set_ylim(low - pad, high + pad)
        missing = len(rows) - len(scored)
        ax.set_title(TITLES.get(paper, paper) + (f" ({missing} not scored yet)" if missing else ""), fontsize=10)
        ax.set_xlabel("paper's value")
        ax.set_ylabel("ours (mean ± std over seeds)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    n_seeds = int(card["n_seeds"].max()) if len(card) else 0
    stamp(fig, dataset="all scored data sets", profile=profile, n_seeds=n_seeds)
    return fig
