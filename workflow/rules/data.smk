# One prepared split per data set and seed (treeopt.data decides what the seed changes for fixed splits).


rule prepare_split:
    output:
        f"{PLAN.processed_dir}/{{dataset}}/split{{seed}}.npz",
    params:
        # a changed data set entry re-prepares its splits (Snakemake's params rerun trigger)
        entry=lambda wc: config["datasets"][wc.dataset],
    log:
        f"{LOGS}/prepare_split/{{dataset}}/split{{seed}}.log",
    wildcard_constraints:
        dataset=r"[^/]+",
        seed=r"\d+",
    script:
        "../scripts/prepare_split.py"
