"""Registry of report tables and figures (DESIGN.md "Tables and figures").

An experiment's ``reports:`` list names tables and/or figures. A table is built from the experiment's final
runs into ``results/tables/{name}.csv``; a figure is drawn from one table into ``figures/{name}[_{dataset}]``
(PNG and PDF). A new method needs nothing here: its runs become extra rows and extra lines. A new table or
figure is one ``register_*`` line naming the function ("module:function", imported only when used).
"""

import importlib
from dataclasses import dataclass


def _resolve(ref):
    if not isinstance(ref, str):
        return ref
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True)
class TableSpec:
    name: str
    build: object  # runs DataFrame (treeopt.experiments.report.tables.load_runs) -> table DataFrame

    def builder(self):
        return _resolve(self.build)


@dataclass(frozen=True)
class FigureSpec:
    name: str
    table: str
    render: object  # (table DataFrame, dataset or None, profile name) -> matplotlib Figure
    per_dataset: bool = True

    def renderer(self):
        return _resolve(self.render)


TABLES: dict[str, TableSpec] = {}
FIGURES: dict[str, FigureSpec] = {}
REPORTS: set = set()


def register_table(name, build):
    TABLES[name] = TableSpec(name, build)
    REPORTS.add(name)


def register_figure(name, table, render, *, per_dataset=True):
    FIGURES[name] = FigureSpec(name, table, render, per_dataset)
    REPORTS.add(name)


def table_of(report):
    """The table a report name writes (a table) or reads (a figure)."""
    if report in FIGURES:
        return FIGURES[report].table
    if report in TABLES:
        return report
    raise ValueError(f"unknown report {report!r}; known: {', '.join(sorted(REPORTS))}")


# ---- tables -------------------------------------------------------------------------------------------
register_table("nongreedy_fig2", "treeopt.experiments.report.tables_nongreedy:nongreedy_fig2")
register_table("nongreedy_fig3", "treeopt.experiments.report.tables_nongreedy:nongreedy_fig3")
register_table("nongreedy_fig4_runtime", "treeopt.experiments.report.tables_nongreedy:nongreedy_fig4_runtime")
register_table("co2_table1", "treeopt.experiments.report.tables_co2:co2_table1")
register_table("co2_fig1", "treeopt.experiments.report.tables_co2:co2_fig1")
for _name in ("rgf_fig7_synthetic", "rgf_fig8_synthetic", "rgf_fig9_synthetic", "rgf_fig10_real"):
    register_table(_name, "treeopt.experiments.report.tables_rgf:square_loss_curve")
for _name in ("co2_table2_jaccard", "co2_fig4_jaccard", "co2_fig3_segmentation"):  # CO2 paper Sec. 6.2
    register_table(_name, f"treeopt.experiments.report.tables_co2:{_name}")

register_table("rgf_fig11_exp", "treeopt.experiments.report.tables_rgf:size_curve")
register_table("rgf_fig13_rf", "treeopt.experiments.report.tables_rgf:size_curve")
register_table("rgf_fig15_time", "treeopt.experiments.report.tables_rgf:rgf_fig15_time")
register_table("rgf_fig16_time", "treeopt.experiments.report.tables_rgf:rgf_fig16_time")
# TAO (Carreira-Perpinan & Tavallali 2018)
register_table("tao_fixed_depth", "treeopt.experiments.report.tables_tao:tao_fixed_depth")
register_table("tao_table1", "treeopt.experiments.report.tables_tao:tao_table1")
register_table("tao_fig1_path", "treeopt.experiments.report.tables_tao:tao_fig1_path")
register_table("tao_init", "treeopt.experiments.report.tables_tao:tao_init")
# Beyond the papers: the optimal axis-aligned tree (STreeD) beside CART, TAO, CO2 and non-greedy trees
register_table("beyond_optimal", "treeopt.experiments.report.tables_beyond:beyond_optimal")
# Beyond the papers: our trees at the fixed heights of DTSemNet's Table 3, its published numbers beside (issue #39)
register_table("decade_fixed_height", "treeopt.experiments.report.tables_beyond:decade_fixed_height")

# ---- figures ------------------------------------------------------------------------------------------
register_figure("nongreedy_fig2", "nongreedy_fig2", "treeopt.plots.curves:accuracy_vs_depth")
register_figure("nongreedy_fig3_nu", "nongreedy_fig3", "treeopt.plots.nongreedy:active_leaves_vs_depth",
                per_dataset=False)
register_figure("nongreedy_fig4_runtime", "nongreedy_fig4_runtime", "treeopt.plots.nongreedy:sgd_time_vs_depth",
                per_dataset=False)
register_figure("co2_fig2", "co2_table1", "treeopt.plots.curves:error_vs_trees")
register_figure("co2_fig1", "co2_fig1", "treeopt.plots.curves:error_vs_depth_by_nu")
for _name in ("rgf_fig7_synthetic", "rgf_fig8_synthetic", "rgf_fig9_synthetic", "rgf_fig10_real"):
    register_figure(_name, _name, "treeopt.plots.curves:metric_vs_leaves", per_dataset=False)
register_figure("co2_fig4_jaccard", "co2_fig4_jaccard", "treeopt.plots.segmentation:jaccard_curves", per_dataset=False)
register_figure("co2_fig3_segmentation", "co2_fig3_segmentation", "treeopt.plots.segmentation:segmentation_examples",
                per_dataset=False)
register_figure("rgf_fig11_exp", "rgf_fig11_exp", "treeopt.plots.curves:metric_vs_leaves", per_dataset=False)
register_figure("rgf_fig13_rf", "rgf_fig13_rf", "treeopt.plots.curves:metric_vs_leaves", per_dataset=False)
register_figure("rgf_fig16", "rgf_fig16_time", "treeopt.plots.curves:time_vs_tree_size", per_dataset=False)
register_figure("tao_fig1_path", "tao_fig1_path", "treeopt.plots.tao:sparsity_path")
register_figure("beyond_optimal", "beyond_optimal", "treeopt.plots.optimal:accuracy_and_time_vs_depth")
register_figure("decade_fixed_height", "decade_fixed_height", "treeopt.plots.decade:accuracy_against_published")
