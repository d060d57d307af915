# Tables aggregate final runs; figures are drawn from tables. Every table and figure is a report() output
# whose caption names the paper item it reproduces (snakemake --report report.html). The default profile
# writes results/tables/ and figures/; any other profile results/{profile}/ and results/{profile}/figures/.
from treeopt.experiments.report.captions import SCORECARD_CATEGORY, caption, category

_PER_DATASET = [f for f in PLAN.figure_datasets if FIGURES[f].per_dataset]
_WHOLE = [f for f in PLAN.figure_datasets if not FIGURES[f].per_dataset]
_REPORT_CAPTION = "../report/caption.rst"


rule table:
    input:
        runs=lambda wc: PLAN.table_runs[wc.table],
    output:
        report(
            f"{PLAN.tables_dir}/{{table}}.csv",
            caption=_REPORT_CAPTION,
            category=lambda wc: category(wc.table),
            subcategory="Tables",
            labels=lambda wc: {"name": wc.table, "kind": "table"},
        ),
    log:
        f"{LOGS}/tables/{{table}}.log",
    wildcard_constraints:
        table=_alternatives(PLAN.table_runs),
    conda:
        "../../environment.yml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        caption=lambda wc: caption(wc.table, profile=PLAN.profile),
        paper_links=PAPER_LINKS,
    script:
        "../scripts/table.py"


rule figure_per_dataset:
    input:
        table=lambda wc: PLAN.table_path(FIGURES[wc.figure].table),
    output:
        png=report(
            f"{PLAN.figures_dir}/{{figure}}_{{dataset}}.png",
            caption=_REPORT_CAPTION,
            category=lambda wc: category(wc.figure),
            subcategory="Figures",
            labels=lambda wc: {"name": wc.figure, "kind": "figure", "data set": wc.dataset},
        ),
        pdf=f"{PLAN.figures_dir}/{{figure}}_{{dataset}}.pdf",
    log:
        f"{LOGS}/figures/{{figure}}_{{dataset}}.log",
    wildcard_constraints:
        figure=_alternatives(_PER_DATASET),
        dataset=_alternatives(PLAN.datasets),
    conda:
        "../../environment.yml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        profile=PLAN.profile,
        caption=lambda wc: caption(wc.figure, wc.dataset, PLAN.profile),
    script:
        "../scripts/figure.py"


rule figure_whole:
    input:
        table=lambda wc: PLAN.table_path(FIGURES[wc.figure].table),
    output:
        png=report(
            f"{PLAN.figures_dir}/{{figure}}.png",
            caption=_REPORT_CAPTION,
            category=lambda wc: category(wc.figure),
            subcategory="Figures",
            labels=lambda wc: {"name": wc.figure, "kind": "figure"},
        ),
        pdf=f"{PLAN.figures_dir}/{{figure}}.pdf",
    log:
        f"{LOGS}/figures/{{figure}}.log",
    wildcard_constraints:
        figure=_alternatives(_WHOLE),
    conda:
        "../../environment.yml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        profile=PLAN.profile,
        caption=lambda wc: caption(wc.figure, profile=PLAN.profile),
    script:
        "../scripts/figure.py"


rule scorecard:
    input:
        tables=[PLAN.table_path(t) for t in sorted(PLAN.table_runs)],
    output:
        csv=report(
            PLAN.scorecard_paths()[0],
            caption=_REPORT_CAPTION,
            category=SCORECARD_CATEGORY,
            subcategory="Table",
            labels={"name": "scorecard", "kind": "table"},
        ),
        md=PLAN.scorecard_paths()[1],
        png=report(
            PLAN.scorecard_paths()[2],
            caption=_REPORT_CAPTION,
            category=SCORECARD_CATEGORY,
            subcategory="Figure",
            labels={"name": "scorecard", "kind": "figure"},
        ),
        pdf=PLAN.scorecard_paths()[3],
    log:
        f"{LOGS}/scorecard.log",
    conda:
        "../../environment.yml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        profile=PLAN.profile,
        caption=caption("scorecard", profile=PLAN.profile),
    script:
        "../scripts/scorecard.py"
