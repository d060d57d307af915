# Config validation and the run plan. All path logic lives in treeopt.experiments.plan (tested in Python);
# the rules below only look files up in PLAN.
import os
import re
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version, validate

from treeopt.experiments.plan.build import build_plan
from treeopt.experiments.plan.config import ConfigError, validate_config
from treeopt.experiments.plan.grow import GROWN_PREFIX
from treeopt.experiments.plan.paper_values import dataset_links
from treeopt.experiments.plan.params import plain_params
from treeopt.experiments.plan.reports import FIGURES
from treeopt.experiments.plan.specs import BLOCKS_DIR, FINAL_PREFIX, RUNS_DIR, SELECTION_DIR, TABLES_DIR
from treeopt.experiments.run.migrate import migrate

min_version("8.0")

# Our own check first: it names a misspelt key plainly ("unknown key 'profil' ... did you mean 'profile'?")
# and also checks method, report and hyper-parameter names; then Snakemake's validate on the same schema.
# the config file's text lets each problem name its line (and a typo inside a YAML anchor its anchor, once)
_config_files = [Path(f) for f in getattr(workflow, "configfiles", []) if Path(f).is_file()]
_config_source = (_config_files[-1].read_text(), _config_files[-1].name) if _config_files else None
try:
    validate_config(config, Path(workflow.basedir) / "workflow/schemas/config.schema.yaml", source=_config_source)
except ConfigError as exc:
    raise WorkflowError(str(exc)) from None
# (Snakemake's check sees the active profile only: problems of the others are warnings above, not errors)
validate(
    {**config, "profiles": {config["profile"]: config["profiles"][config["profile"]]}},
    "../schemas/config.schema.yaml",
)

# data set entries that name the paper data set they stand for (`paper_dataset:`): their tables get its numbers
PAPER_LINKS = dataset_links(config)

try:
    PLAN = build_plan(config)
except ConfigError as exc:  # e.g. an `inherit:` reference that cannot be followed
    raise WorkflowError(str(exc)) from None

# Run folders and selection files of earlier versions (named by experiment, with commas) are renamed to their
# identity names before Snakemake looks for outputs, after checking that each is the planned run: nothing is
# computed twice, nothing is deleted (treeopt.experiments.run.migrate). Only the main process does it, not the jobs.
if workflow.is_main_process:
    for _line in migrate(PLAN).summary():
        print(f"treeopt: {_line}", file=sys.stderr)

# Jobs inherit these: one job's numba/BLAS threads match its Snakemake `threads`, so two jobs on two cores do
# not fight over them (numba's parallel kernels slow down badly when oversubscribed).
for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, str(PLAN.n_jobs))


LOGS = "results/logs"


def _alternatives(names):
    """Wildcard regex matching exactly one of ``names`` (nothing when empty)."""
    return "|".join(re.escape(n) for n in sorted(names)) or r"(?!x)x"


def _report_availability():
    """Say where each data set of the profile comes from. Nothing is fetched here: a data set is downloaded only
    when a job that the requested targets need prepares it (the DAG is not known yet when this is printed)."""
    try:
        from treeopt.data import availability, data_settings
        from treeopt.data.spec import mirror_problem
    except ImportError as exc:
        print(f"treeopt: data availability unknown ({exc})", file=sys.stderr)
        return
    problem = mirror_problem(data_settings(config))
    if problem:
        print(f"treeopt: WARNING: {problem}", file=sys.stderr)
    by_source = {}
    for name in PLAN.datasets:
        try:
            source = availability(name, config)
        except Exception as exc:  # a broken entry should not hide the others
            source = f"error: {exc}"
        by_source.setdefault(source, []).append(name)
    experiments = config["profiles"][PLAN.profile].get("experiments") or {}
    own = {
        name: list(exp["seeds"])
        for name, exp in experiments.items()
        if exp.get("seeds") and list(exp["seeds"]) != list(PLAN.seeds)
    }
    seeds = f"seeds {list(PLAN.seeds)}" + (
        f" (own seeds: {'; '.join(f'{e} {s}' for e, s in own.items())})" if own else ""
    )
    print(
        f"treeopt: profile {PLAN.profile!r}: {len(PLAN.datasets)} data sets, {seeds}, "
        f"{len(PLAN.runs)} candidate runs, {len(PLAN.selections)} selections, {len(PLAN.finals)} final runs",
        file=sys.stderr,
    )
    labels = {
        "download": "WOULD DOWNLOAD (only if a requested target needs it)",
        "missing": "MISSING (local path: file not found)",
    }
    for source, names in sorted(by_source.items()):
        print(f"treeopt:   {labels.get(source, source)}: {', '.join(names)}", file=sys.stderr)


if workflow.is_main_process:
    _report_availability()


onstart:
    # A run killed with `kill -9` leaves its hidden temporary folder (`.seed0.tmp-p{pid}-...`) or file behind;
    # remove those whose process is gone (name pattern, marker file and pid checked: nothing else is touched).
    from treeopt.data.prepare import clean_stale_temporaries as _clean_data_temporaries
    from treeopt.experiments.run.folders import clean_stale_temporaries as _clean_run_temporaries
    from treeopt.data import data_settings as _data_settings

    _raw_dir = _data_settings(config).raw_dir
    for _path in (
        _clean_run_temporaries(RUNS_DIR)
        + _clean_run_temporaries(BLOCKS_DIR)
        + _clean_data_temporaries(PLAN.processed_dir, _raw_dir)
    ):
        print(f"treeopt: removed stale temporary {_path} (left by an interrupted run)", file=sys.stderr)
    # now the jobs are known: name the data sets this invocation will really download
    try:
        from treeopt.data import availability as _availability

        _preparing = sorted(
            {job.wildcards.dataset for job in workflow.dag.needrun_jobs() if job.rule.name == "prepare_split"}
        )
        _fetching = [name for name in _preparing if _availability(name, config) == "download"]
    except Exception:  # informative only
        _fetching = []
    if _fetching:
        print(f"treeopt: DOWNLOADING for the requested targets: {', '.join(_fetching)}", file=sys.stderr)
    # the first run of each method, for jobs that wait on another job's numba compile to warm up other methods'
    # kernels meanwhile (treeopt.experiments.infra.precompile; local execution only, TREEOPT_PRECOMPILE=0 turns it off)
    if workflow.local_exec and not workflow.dryrun:
        try:
            from treeopt.experiments.infra import precompile as _precompile

            _precompile.write_list(
                _precompile.entries(workflow.dag.needrun_jobs(), PLAN), f"{LOGS}/kernels/first_runs.pkl"
            )
        except Exception as _exc:  # an optimisation only: the runs warm up their own kernels anyway
            print(f"treeopt: no kernel warm-up list ({_exc})", file=sys.stderr)


# ---- lookups used by the rules -------------------------------------------------------------------------
def split_of(wc):
    return PLAN.split_path(wc.dataset, wc.seed)


def run_of(wc):
    return PLAN.lookup("run", f"{RUNS_DIR}/{wc.dataset}/{wc.method}/{wc.params}/seed{wc.seed}")


def run_inputs(wc):
    """The split, the selection files that inherited parameters are read from (`inherit:`), the tree blocks
    the candidate run merges when its forest is split (`forest_block_trees`), and the candidate run whose path it
    is read off (`path:`)."""
    run = run_of(wc)
    inputs = {"split": split_of(wc)}
    inherited = sorted({path for _, path in run.inherit})
    if inherited:
        inputs["inherited"] = inherited
    if run.blocks:
        inputs["blocks"] = [run.block_dir(first, stop) for first, stop in run.blocks]
    if run.path_run:  # read off that candidate's warm-started path, not fitted (config `path:`)
        inputs["path_run"] = run.path_run
    return inputs


def selection_path(wc):
    return f"{SELECTION_DIR}/{wc.dataset}/{wc.method}/{wc.selection}/seed{wc.seed}.yaml"


def selection_of(wc):
    return PLAN.lookup("selection", selection_path(wc))


def grown_of(wc):
    return PLAN.lookup("grown", f"{SELECTION_DIR}/{wc.dataset}/{wc.method}/{GROWN_PREFIX}{wc.grown}/seed{wc.seed}.yaml")


def grow_inputs(wc):
    """The plain selection, the split (the job fits), the selection files inherited parameters are read from, and
    the grown candidates that are also planned candidate runs of another selection (made by their own job first,
    then read: no two jobs write one folder), and the deeper runs a depth path's grown candidates are read off."""
    spec = grown_of(wc)
    inputs = {"selection": spec.base.path, "split": split_of(wc)}
    inherited = sorted({path for _, path in spec.candidates[0].inherit})
    if inherited:
        inputs["inherited"] = inherited
    planned = {growth.run.dir for growth in spec.growth if growth.run.dir in PLAN.runs}
    planned = sorted(planned | {growth.run.path_run for growth in spec.growth if growth.run.path_run})  # depth paths
    if planned:
        inputs["planned"] = planned
    if spec.axis_jobs:  # each axis's candidate fitted by a job of its own (rule grow_axis); this job reads them
        inputs["axes"] = [axis.path for axis in spec.axis_jobs]
    return inputs


def grow_axis_of(wc):
    spec = grown_of(wc)
    axis = next((a for a in spec.axis_jobs if a.param == wc.axis), None)
    if axis is None:
        raise KeyError(f"{spec.path}: no job of its own grows axis {wc.axis!r} (is the config changed?)")
    return axis


def grow_axis_inputs(wc):
    """The plain selection, the split, inherited selection files, and the axis's candidates that are also planned
    candidate runs of another selection (made by their own job first, then read)."""
    axis = grow_axis_of(wc)
    inputs = {"selection": axis.base.path, "split": split_of(wc)}
    inherited = sorted({path for _, path in axis.candidates[0].inherit})
    if inherited:
        inputs["inherited"] = inherited
    planned = sorted({growth.run.dir for growth in axis.growth if growth.run.dir in PLAN.runs})
    if planned:
        inputs["planned"] = planned
    return inputs


def final_of(wc):
    return PLAN.lookup("final", f"{RUNS_DIR}/{wc.dataset}/{wc.method}/{FINAL_PREFIX}{wc.final}/seed{wc.seed}")


def _final_inputs(final, wc):
    inputs = {"split": split_of(wc)}
    if getattr(final, "selection", None) is not None:  # a candidate run (RunSpec) has none
        inputs["selection"] = final.selection.path
    inherited = sorted({path for _, path in final.inherit})
    if inherited:
        inputs["inherited"] = inherited
    return inputs


def final_inputs(wc):
    """The split, the selection file when the final run has something chosen for it, the selection files that
    inherited parameters are read from, the tree blocks it merges when its forest is split
    (`forest_block_trees`), and on a depth path the final runs at the largest depth and one depth above."""
    final = final_of(wc)
    inputs = _final_inputs(final, wc)
    if final.blocks:
        inputs["blocks"] = [final.block_dir(first, stop) for first, stop in final.blocks]
    if final.depth_path:  # read off a deeper fit (config `path: max_depth`), made deepest first
        inputs["depth_path"] = final.depth_path
        inputs["deeper"] = final.deeper
    return inputs


def block_of(wc):
    return PLAN.lookup("block", f"{BLOCKS_DIR}/{wc.dataset}/{wc.method}/{wc.blocked}/seed{wc.seed}/{wc.block}")


def block_inputs(wc):
    """A tree block needs what its run would need to fit (split, selection, inherited values)."""
    return _final_inputs(block_of(wc).final, wc)


def block_job_params(block):
    """What a tree block job hands treeopt.experiments.jobs.forest_block: its run's sweep point, parameters or
    selection, inherited parameters, staged sizes and model saving, and the block's trees and size (the run: a
    final run, or a candidate run fitted on the training part with its own parameters)."""
    final = block.final
    return dict(
        point=dict(getattr(final, "point", ())),
        refit=getattr(final, "refit", False),
        fixed=None if final.params is None else plain_params(final.params),
        inherit=dict(final.inherit),
        stages={param: list(values) for param, values in getattr(final, "stages", ())},
        save_model=final.save_model,
        trees=[block.first, block.stop],
        block_trees=final.block_trees,
        # a candidate's block (a final run's blocks keep the params they had: no rerun of finished ones)
        **({} if hasattr(final, "refit") else {"candidate": True}),
    )
