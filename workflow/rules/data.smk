# One prepared split per data set and seed (treeopt.data decides what the seed changes for fixed splits).


from treeopt.experiments.infra.resources import prepare_mem_mb


rule prepare_split:
    output:
        f"{PLAN.processed_dir}/{{dataset}}/split{{seed}}.npz",
    log:
        f"{LOGS}/prepare_split/{{dataset}}/split{{seed}}.log",
    wildcard_constraints:
        dataset=r"[^/]+",
        seed=r"\d+",
    conda:
        "../../environment.yml"
    resources:
        mem_mb=lambda wc: prepare_mem_mb(config["datasets"][wc.dataset].get("task", "classification")),
        runtime=120,
    params:
        # a changed data set entry re-prepares its splits (Snakemake's params rerun trigger)
        entry=lambda wc: config["datasets"][wc.dataset],
    script:
        "../scripts/prepare_split.py"
