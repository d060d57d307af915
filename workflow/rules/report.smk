# Tables aggregate final runs; figures are drawn from tables.
_PER_DATASET = [f for f in PLAN.figure_datasets if FIGURES[f].per_dataset]
_WHOLE = [f for f in PLAN.figure_datasets if not FIGURES[f].per_dataset]


rule table:
    input:
        runs=lambda wc: PLAN.table_runs[wc.table],
    output:
        f"{TABLES_DIR}/{{table}}.csv",
    wildcard_constraints:
        table=_alternatives(PLAN.table_runs),
    log:
        f"{LOGS}/tables/{{table}}.log",
    script:
        "../scripts/table.py"


rule figure_per_dataset:
    input:
        table=lambda wc: PLAN.table_path(FIGURES[wc.figure].table),
    output:
        png="figures/{figure}_{dataset}.png",
        pdf="figures/{figure}_{dataset}.pdf",
    wildcard_constraints:
        figure=_alternatives(_PER_DATASET),
        dataset=_alternatives(PLAN.datasets),
    params:
        profile=PLAN.profile,
    log:
        f"{LOGS}/figures/{{figure}}_{{dataset}}.log",
    script:
        "../scripts/figure.py"


rule figure_whole:
    input:
        table=lambda wc: PLAN.table_path(FIGURES[wc.figure].table),
    output:
        png="figures/{figure}.png",
        pdf="figures/{figure}.pdf",
    wildcard_constraints:
        figure=_alternatives(_WHOLE),
    params:
        profile=PLAN.profile,
    log:
        f"{LOGS}/figures/{{figure}}.log",
    script:
        "../scripts/figure.py"
