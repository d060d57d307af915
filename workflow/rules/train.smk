# Candidate runs (fit on train, score on validation), selection, and final runs (refit on train+validation).
# Folders are named by what the run is (treeopt.experiments.plan.identity): a readable slug of the parameters and a
# hash of data set entry, method, parameters and (final runs) the selection they come from, e.g.
# "final-C-best_max_depth-6__9e01d2c3b4" for a final run whose C is chosen on validation. The name is fixed
# before the choice is known, so the graph is static: no checkpoints, and `snakemake -n` shows every job. A
# single-point grid has no selection step. A parameter inherited from another method's selection (`inherit:`)
# shows as `from-{method}`; that selection YAML is an input of the run, and the script puts the chosen value
# in. A staged sweep (`staged:`) has one final run per fit size ("n_estimators-staged1000"), scored at every
# sweep value it covers. Names use letters, digits and . _ + - only (shell- and cluster-safe).


from treeopt.experiments.infra.resources import run_mem_mb, run_runtime
from treeopt.experiments.plan.identity import SAFE_COMPONENT

SAFE_NAME = SAFE_COMPONENT.pattern


wildcard_constraints:
    dataset=r"[^/]+",
    method=r"[^/]+",
    seed=r"\d+",
    params=rf"(?!{FINAL_PREFIX}){SAFE_NAME}",
    selection=rf"(?!{GROWN_PREFIX}){SAFE_NAME}",
    grown=SAFE_NAME,
    axis=r"[A-Za-z_][A-Za-z0-9_]*",
    final=SAFE_NAME,
    blocked=SAFE_NAME,
    block=r"trees\d+-\d+",


rule candidate_run:
    input:
        unpack(run_inputs),
    output:
        run=directory(f"{RUNS_DIR}/{{dataset}}/{{method}}/{{params}}/seed{{seed}}"),
    log:
        f"{LOGS}/runs/{{dataset}}/{{method}}/{{params}}/seed{{seed}}.log",
    conda:
        "../../environment.yml"
    threads: PLAN.n_jobs
    resources:
        mem_mb=lambda wc, threads: run_mem_mb(PLAN.profile, run_of(wc), threads),
        runtime=lambda wc, threads, attempt: run_runtime(PLAN.profile, run_of(wc), threads, attempt),
    params:
        hyper=lambda wc, output: plain_params(PLAN.lookup("run", output.run).params),
        inherit=lambda wc, output: dict(PLAN.lookup("run", output.run).inherit),
        save_model=lambda wc, output: PLAN.lookup("run", output.run).save_model,
    script:
        "../scripts/train.py"


rule select:
    input:
        runs=lambda wc: [run.dir for run in selection_of(wc).candidates],
    output:
        f"{SELECTION_DIR}/{{dataset}}/{{method}}/{{selection}}/seed{{seed}}.yaml",
    log:
        f"{LOGS}/selection/{{dataset}}/{{method}}/{{selection}}/seed{{seed}}.log",
    conda:
        "../../environment.yml"
    resources:
        mem_mb=500,
        runtime=5,
    params:
        metric=lambda wc: selection_of(wc).metric,
    script:
        "../scripts/select.py"


# The tuning rule's second step, one rule for every method whose config entry (or experiment) has `grow:`
# (treeopt.experiments.plan.grow): when the plain selection above chose the edge of a growable grid axis, the candidate
# one step past it (other parameters as chosen) is fitted into its planned candidate folder and the choice made again;
# final runs and inheriting runs read this file. Its cost (resources) is the costliest candidate it may fit per axis.
# With two or more growable axes, each axis's grown candidate is fitted by a job of its own (no job fits more than one
# candidate: the paper profile's 4-hour bound); the grow_selection job below then reads them and chooses.
rule grow_axis:
    input:
        unpack(grow_axis_inputs),
    output:
        f"{SELECTION_DIR}/{{dataset}}/{{method}}/{GROWN_PREFIX}{{grown}}/seed{{seed}}-{{axis}}.yaml",
    log:
        f"{LOGS}/selection/{{dataset}}/{{method}}/{GROWN_PREFIX}{{grown}}/seed{{seed}}-{{axis}}.log",
    conda:
        "../../environment.yml"
    threads: PLAN.n_jobs
    resources:
        mem_mb=lambda wc, threads: run_mem_mb(PLAN.profile, grow_axis_of(wc), threads),
        runtime=lambda wc, threads, attempt: run_runtime(PLAN.profile, grow_axis_of(wc), threads, attempt),
    params:
        growth=lambda wc: grow_axis_of(wc).job_entries(),
        grown=lambda wc: grown_of(wc).path,
        inherit=lambda wc: dict(grown_of(wc).candidates[0].inherit),
        save_model=lambda wc: grown_of(wc).candidates[0].save_model,
    script:
        "../scripts/grow_axis.py"


rule grow_selection:
    input:
        unpack(grow_inputs),
    output:
        f"{SELECTION_DIR}/{{dataset}}/{{method}}/{GROWN_PREFIX}{{grown}}/seed{{seed}}.yaml",
    log:
        f"{LOGS}/selection/{{dataset}}/{{method}}/{GROWN_PREFIX}{{grown}}/seed{{seed}}.log",
    conda:
        "../../environment.yml"
    threads: PLAN.n_jobs
    resources:
        mem_mb=lambda wc, threads: run_mem_mb(PLAN.profile, grown_of(wc), threads),
        runtime=lambda wc, threads, attempt: run_runtime(PLAN.profile, grown_of(wc), threads, attempt),
    params:
        growth=lambda wc: grown_of(wc).job_entries(),
        steps=lambda wc: {param: dict(step) for param, step in grown_of(wc).grow},
        inherit=lambda wc: dict(grown_of(wc).candidates[0].inherit),
        save_model=lambda wc: grown_of(wc).candidates[0].save_model,
    script:
        "../scripts/grow.py"


rule final_run:
    input:
        unpack(final_inputs),
    output:
        run=directory(f"{RUNS_DIR}/{{dataset}}/{{method}}/{FINAL_PREFIX}{{final}}/seed{{seed}}"),
    log:
        f"{LOGS}/runs/{{dataset}}/{{method}}/{FINAL_PREFIX}{{final}}/seed{{seed}}.log",
    conda:
        "../../environment.yml"
    threads: PLAN.n_jobs
    resources:
        mem_mb=lambda wc, threads: run_mem_mb(PLAN.profile, final_of(wc), threads),
        runtime=lambda wc, threads, attempt: run_runtime(PLAN.profile, final_of(wc), threads, attempt),
    params:
        point=lambda wc: dict(final_of(wc).point),
        refit=lambda wc: final_of(wc).refit,
        fixed=lambda wc: None if final_of(wc).params is None else plain_params(final_of(wc).params),
        inherit=lambda wc: dict(final_of(wc).inherit),
        stages=lambda wc: {param: list(values) for param, values in final_of(wc).stages},
        save_model=lambda wc: final_of(wc).save_model,
    script:
        "../scripts/final.py"


# A run whose forest is split into tree blocks (profile `forest_block_trees`, treeopt.experiments.run.blocks; bagged
# forests and segmentation forests, final or candidate runs): each block job fits trees first..stop-1 (folder
# `trees{first}-{stop}` under the run's name, `blocked`) with the run's data and parameters; the final_run or
# candidate_run job above then merges the blocks (its input `blocks`; their block.json names the block size) into the
# run folder one job would have written. (final_run keeps its params as they were, so that adding blocks does not make
# Snakemake's params trigger rerun finished final runs.)
rule forest_block:
    input:
        unpack(block_inputs),
    output:
        block=directory(f"{BLOCKS_DIR}/{{dataset}}/{{method}}/{{blocked}}/seed{{seed}}/{{block}}"),
    log:
        f"{LOGS}/blocks/{{dataset}}/{{method}}/{{blocked}}/seed{{seed}}/{{block}}.log",
    conda:
        "../../environment.yml"
    threads: PLAN.n_jobs
    resources:
        mem_mb=lambda wc, threads: run_mem_mb(PLAN.profile, block_of(wc), threads),
        runtime=lambda wc, threads, attempt: run_runtime(PLAN.profile, block_of(wc), threads, attempt),
    params:
        job=lambda wc: block_job_params(block_of(wc)),
    script:
        "../scripts/forest_block.py"
