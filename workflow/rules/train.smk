# Candidate runs (fit on train, score on validation), selection, and final runs (refit on train+validation).
# Final-run folders are named "final-{experiment}-{point}" before the choice is known, so the graph is
# static: no checkpoints, and `snakemake -n` shows every job. A single-point grid has no selection step.


wildcard_constraints:
    dataset=r"[^/]+",
    method=r"[^/]+",
    seed=r"\d+",


def _split(wc):
    return PLAN.split_path(wc.dataset, wc.seed)


rule candidate_run:
    input:
        split=_split,
    output:
        run=directory(f"{RUNS_DIR}/{{dataset}}/{{method}}/{{params}}/seed{{seed}}"),
    wildcard_constraints:
        params=rf"(?!{FINAL_PREFIX})[^/]+",
    params:
        hyper=lambda wc, output: dict(PLAN.lookup("run", output.run).params),
        save_model=PLAN.save_models,
    threads: PLAN.n_jobs
    script:
        "../scripts/train.py"


def _selection_path(wc):
    return f"{SELECTION_DIR}/{wc.dataset}/{wc.method}/{wc.experiment}/{wc.point}/seed{wc.seed}.yaml"


rule select:
    input:
        runs=lambda wc: [run.dir for run in PLAN.lookup("selection", _selection_path(wc)).candidates],
    output:
        f"{SELECTION_DIR}/{{dataset}}/{{method}}/{{experiment}}/{{point}}/seed{{seed}}.yaml",
    params:
        metric=lambda wc: PLAN.lookup("selection", _selection_path(wc)).metric,
        at=lambda wc: dict(PLAN.lookup("selection", _selection_path(wc)).at),
    script:
        "../scripts/select.py"


def _final(wc):
    return PLAN.lookup("final", f"{RUNS_DIR}/{wc.dataset}/{wc.method}/{FINAL_PREFIX}{wc.final}/seed{wc.seed}")


def _final_inputs(wc):
    final = _final(wc)
    inputs = {"split": PLAN.split_path(wc.dataset, wc.seed)}
    if final.selection is not None:
        inputs["selection"] = final.selection.path
    return inputs


rule final_run:
    input:
        unpack(_final_inputs),
    output:
        run=directory(f"{RUNS_DIR}/{{dataset}}/{{method}}/{FINAL_PREFIX}{{final}}/seed{{seed}}"),
    params:
        experiment=lambda wc: _final(wc).experiment,
        point=lambda wc: dict(_final(wc).point),
        refit=lambda wc: _final(wc).refit,
        fixed=lambda wc: None if _final(wc).params is None else dict(_final(wc).params),
        save_model=PLAN.save_models,
    threads: PLAN.n_jobs
    script:
        "../scripts/final.py"
