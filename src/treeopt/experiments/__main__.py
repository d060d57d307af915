"""Command-line helpers around the workflow.

    python -m treeopt.experiments check [--config config.yaml] [--set profile=paper]
    python -m treeopt.experiments plan  [--config config.yaml] [--set profile=paper] [--estimate [--cores N ...]]
    python -m treeopt.experiments targets --set profile=paper --experiment tao_table1 [--dataset letter] ...
    python -m treeopt.experiments migrate [--set profile=paper] [--dry-run]
    python -m treeopt.experiments rerun results/runs/.../params.yaml --out NEW_FOLDER [--force]
    python -m treeopt.experiments report co2_table1 --set profile=paper [--out results/paper]
    python -m treeopt.experiments scorecard [--set profile=paper] [--out DIR]

``targets`` prints the final run folders (or ``--selections``: the selection files) of an experiment, one per
line, to hand to Snakemake: ``snakemake --cores 2 --config profile=paper -- $(python -m treeopt.experiments
targets --set profile=paper --experiment tao_table1 --dataset letter)``. Run folders are named by what the
run is (:mod:`treeopt.experiments.plan.identity`), not by experiment, so this is how to find an experiment's runs.
``--where n_estimators=30`` keeps those at a sweep value (a staged final run: its fit size).

``migrate`` renames the run folders and selection files of earlier versions (named by experiment, with
commas) that the profile plans, after checking each is the planned run (:mod:`treeopt.experiments.run.migrate`);
Snakemake does the same when it starts. ``--dry-run`` lists what it would rename and what it leaves alone.

``report`` builds one table (and the figures drawn from it) from those of the profile's final runs that
exist, and says how many are missing: a look at a long profile while it runs, or a partial table when only
some targets were asked of Snakemake. The workflow's own tables always need every final run. Without
``--out`` the files go where the workflow puts the profile's tables and figures (``results/tables/`` and
``figures/`` for the default profile, ``results/{profile}/`` and ``results/{profile}/figures/`` otherwise).
``--merge`` gathers a table made in several places (one scratch clone per data set or method): the rows the
runs here stand behind replace the existing table's rows of the same data sets and methods, the others stay, and
only the per-data-set figures of the rows built here are drawn again (the paper tables under ``results/paper``
are made so: ``report TABLE --set profile=paper --out results/paper --merge`` in each clone).

``scorecard`` sets every paper number the profile reproduces beside ours, from the profile's tables that exist
(:mod:`treeopt.experiments.report.scorecard`): ``scorecard.csv`` and ``scorecard.md`` beside the tables,
``figures/scorecard.png|pdf``; with ``--out DIR`` the tables are read from and written to ``DIR``.

``plan --estimate`` prints, per experiment and in total, the CPU hours and the largest peak memory the cost model
(:mod:`treeopt.experiments.infra.cost`, measured) expects of the profile's jobs (candidate and final runs; a forest
split into tree blocks is its block jobs and the merge, see ``forest_block_trees`` in config.yaml), the longest job and
which it is, and how long the whole profile takes on N cores (``--cores``, default 2 and 100): the CPU hours over N,
or the longest job if that is longer.

``rerun`` writes into a new (absent or empty) folder. ``--force`` replaces an earlier run folder (one that holds
only a run's files); any other non-empty folder is refused, with or without ``--force``.
"""

import argparse
import math
import sys
from collections import Counter

import yaml

from .plan.build import build_plan
from .plan.grow import without_growth
from .plan.config import ConfigError, load_config
from .run.folders import RunFolderError
from .run.runner import rerun


def _config(args):
    return load_config(args.config, args.set)


RUN_RECORDS = ("params.yaml", "metrics.json")  # a run's small text files: what it is and what it measured


def copy_run_records(run_dirs, out):
    """Copy the text records behind a table into ``out``: each final run's ``params.yaml`` and ``metrics.json``
    (to ``out/runs/...``, the run's own path below ``results/runs``) and the selection files its parameters come
    from (``selection`` and ``inherited`` in ``params.yaml``; to ``out/selection/...``), so that a committed table's
    cell leads to the runs that made it. Returns the number of files copied (existing copies are replaced)."""
    import shutil
    from pathlib import Path, PurePosixPath

    import yaml

    from .plan.specs import RUNS_DIR, SELECTION_DIR

    out, n = Path(out), 0

    def copy(src, root, dest_root):
        nonlocal n
        rel = PurePosixPath(str(src)).relative_to(root)
        dest = dest_root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        n += 1

    for run in run_dirs:
        for name in RUN_RECORDS:
            if (Path(run) / name).is_file():
                copy(PurePosixPath(str(run)) / name, RUNS_DIR, out / "runs")
        record = yaml.safe_load((Path(run) / "params.yaml").read_text()) or {}
        sources = [record.get("selection"), *(record.get("inherited") or {}).values()]
        for source in sources:
            if source and Path(source).is_file() and str(source).startswith(SELECTION_DIR + "/"):
                copy(source, SELECTION_DIR, out / "selection")
    return n


def _report(args):
    from pathlib import Path

    import pandas as pd

    from .plan.paper_values import dataset_links, linked
    from .plan.reports import FIGURES, TABLES
    from .report.figures import render_figure
    from .report.tables import load_runs, merge_rows, write_table

    config = _config(args)
    plan = build_plan(config)
    if args.table not in plan.table_runs:
        known = ", ".join(sorted(plan.table_runs)) or "none"
        print(f"profile {plan.profile!r} makes no table {args.table!r} (it makes: {known})", file=sys.stderr)
        return 2
    planned = plan.table_runs[args.table]
    present = [d for d in planned if (Path(d) / "metrics.json").is_file()]
    print(f"{args.table}: {len(present)} of {len(planned)} final runs of profile {plan.profile!r} exist")
    if not present:
        return 1
    out = Path(args.out or plan.tables_dir)
    figures = out / "figures" if args.out else Path(plan.figures_dir)
    table_csv = out / f"{args.table}.csv"
    with linked(dataset_links(config)):
        table = TABLES[args.table].builder()(load_runs(present))
    drawn = sorted(set(table["dataset"]))  # per-data-set figures: those of the rows built here
    if args.merge and table_csv.is_file():
        built = len(table)
        table = merge_rows(pd.read_csv(table_csv), table)
        print(f"  merged into the existing table: {len(table) - built} rows kept, {built} built from these runs")
    write_table(table, table_csv)
    print(f"  -> {table_csv}")
    copied = copy_run_records(present, out)
    print(f"  -> {out}/runs, {out}/selection: the records of {len(present)} final runs ({copied} files)")
    for name, spec in FIGURES.items():
        if spec.table != args.table or name not in plan.figure_datasets:
            continue
        datasets = drawn if spec.per_dataset else None
        for stem in render_figure(name, table_csv, figures, datasets=datasets, profile=plan.profile):
            print(f"  -> {stem}.png/.pdf")
    return 0


def _scorecard(args):
    from pathlib import Path

    from .plan.paper_values import dataset_links, linked
    from .report.scorecard import STATUSES
    from .report.scorecard_pages import scorecard_for

    config = _config(args)
    command = "python -m treeopt.experiments scorecard" + "".join(f" --set {kv}" for kv in args.set)
    figures = Path(args.out) / "figures" if args.out else None
    with linked(dataset_links(config)):
        card, paths = scorecard_for(config, args.out, figures, command=command)
    counts = card["status"].value_counts()
    n_claims = int((card["claim"] != "").sum())
    print(f"scorecard of profile {config['profile']!r}: {len(card) - n_claims} paper numbers, {n_claims} claim rows ("
          + ", ".join(f"{counts[s]} {s}" for s in STATUSES if s in counts) + ")")
    for path in paths:
        print(f"  -> {path}")
    return 0


def _targets(args):
    plan = build_plan(_config(args))
    point = dict(_parse_where(w) for w in args.where)
    found = plan.find("selection" if args.selections else "final", experiment=args.experiment,
                      method=args.method, dataset=args.dataset, seed=args.seed, **point)
    if not found:
        print(f"profile {plan.profile!r} plans nothing that matches", file=sys.stderr)
        return 1
    print("\n".join(found))
    return 0


def _parse_where(text):
    key, sep, value = text.partition("=")
    if not sep:
        raise ConfigError(f"--where {text!r} is not key=value")
    return key, yaml.safe_load(value)


def _migrate(args):
    from .run.migrate import migrate

    config = _config(args)
    profiles = list(config["profiles"]) if args.all_profiles else [config["profile"]]
    for name in profiles:
        config["profile"] = name
        done = migrate(build_plan(config), dry_run=args.dry_run)
        verb = "would rename" if args.dry_run else "renamed"
        print(f"profile {name!r}: {verb} {len(done.renamed)}, left {len(done.refused)} earlier folders where they are")
        for old, new in done.renamed:
            print(f"  {verb}: {old} -> {new}")
        for old, why in done.refused:
            print(f"  left: {old}: {why}")
    return 0


def _hours(seconds, width=10):
    """Hours with at least three significant digits, so that small costs show (a run of 15 s: 0.00417, not 0.0)."""
    hours = seconds / 3600
    decimals = 1 if hours >= 10 or hours <= 0 else min(8, 2 - math.floor(math.log10(hours)))
    return f"{hours:{width}.{decimals}f}"


def _print_estimate(plan, cores, threads=None, config=None):
    from .infra.cost import MODEL_FILE
    from .infra.cost_plan import estimate_plan
    from .plan.specs import BLOCKS_DIR

    threads = threads or plan.n_jobs
    costs = estimate_plan(plan, threads=threads)
    print(f"profile {plan.profile!r}: cost model {MODEL_FILE.name} (measured; benchmarks/results/cost_model_check.csv), "
          f"{threads} thread(s) per run")
    # runs: candidate and final runs; blocks: tree-block jobs of forests split into several jobs (their merge is the
    # final run); longest job: a run, a block or a merge
    # grown: candidates that grids grown past a chosen edge may add at most (their CPU hours are in the total)
    print(f"  {'experiment':32s} {'runs':>6s} {'CPU hours':>10s} {'peak GB':>8s} {'longest job h':>13s} "
          f"{'blocks':>6s} {'grown':>6s}")
    total = sum(c.cpu_seconds for c in costs.values())
    for name, c in sorted(costs.items(), key=lambda item: -item[1].cpu_seconds):
        unknown = f"  ({c.unknown} jobs not costed)" if c.unknown else ""
        print(f"  {name:32s} {c.n_runs:6d} {_hours(c.cpu_seconds)} {c.peak_mb / 1000:8.1f} "
              f"{_hours(c.longest_seconds):>13s} {c.n_blocks:6d} {c.n_grown:6d}{unknown}")
    runs = sum(c.n_runs for c in costs.values())
    blocks = sum(c.n_blocks for c in costs.values())
    peak = max((c.peak_mb for c in costs.values()), default=0.0)
    worst = max(costs.values(), key=lambda c: c.longest_seconds, default=None)
    longest = worst.longest_seconds if worst else 0.0
    grown = sum(c.n_grown for c in costs.values())
    print(f"  {'total':32s} {runs:6d} {_hours(total)} {peak / 1000:8.1f} {_hours(longest):>13s} {blocks:6d} "
          f"{grown:6d}")
    bound = sum(c.cpu_bound_seconds for c in costs.values())
    if bound > total * (1 + 1e-9):  # runs charged at their expected cost where the data decide it
        print(f"  at most {_hours(bound, 0)} CPU hours if no exponential-loss GBDT's trees stop growing (charged "
              f"above where they are expected to: cost_model.yaml, collapse)")
    if worst is not None:
        kind = "a tree block" if worst.longest_job.startswith(BLOCKS_DIR) else "a run"
        print(f"  longest job ({kind}): {_hours(longest, 0)} hours with {threads} thread(s), {worst.longest_job}")
    for n in cores:
        wall = max(total / n, longest)
        print(f"  on {n} cores: at least {_hours(wall, 0)} hours ({_hours(wall / 24, 0)} days)"
              f"{' (the longest job)' if wall == longest else ''}")
    if config is not None and grown:
        # the total charges every grid that may grow past a chosen edge at its worst (each axis grows, in its costlier
        # direction); the same plan without grow steps (``config``'s) prices the grids as written
        base = sum(c.cpu_seconds for c in estimate_plan(build_plan(without_growth(config)), threads=threads).values())
        print(f"  of the total, {_hours(total - base, 0)} CPU hours are grids grown past a chosen edge at their worst "
              f"(up to {grown} candidates); the grids as written: {_hours(base, 0)} CPU hours")
    unknown = sum(c.unknown for c in costs.values())
    if unknown:
        print(f"  {unknown} jobs could not be costed (data set or method not in the cost model)")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m treeopt.experiments", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (("check", "validate config.yaml (schema and names)"),
                       ("plan", "count the runs, selections and reports of a profile")):
        p = sub.add_parser(name, help=text)
        p.add_argument("--config", default="config.yaml")
        p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="override like snakemake --config, e.g. profile=paper")
        if name == "plan":
            p.add_argument("--estimate", action="store_true",
                           help="print the CPU hours and peak memory the cost model expects, per experiment")
            p.add_argument("--cores", type=int, nargs="+", default=[2, 100],
                           help="with --estimate: say how long the profile takes on this many cores")
            p.add_argument("--threads", type=int, default=None,
                           help="with --estimate: threads per run (default: the profile's n_jobs)")
    p = sub.add_parser("targets", help="the final run folders (or selection files) of an experiment, one per line")
    p.add_argument("--config", default="config.yaml")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--experiment")
    p.add_argument("--method")
    p.add_argument("--dataset")
    p.add_argument("--seed", type=int)
    p.add_argument("--where", action="append", default=[], metavar="PARAM=VALUE",
                   help="only those at this sweep value (repeatable)")
    p.add_argument("--selections", action="store_true", help="selection files instead of final run folders")
    p = sub.add_parser("migrate", help="rename run folders of earlier versions to their new names")
    p.add_argument("--config", default="config.yaml")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--dry-run", action="store_true", help="only list what would be renamed")
    p.add_argument("--all-profiles", action="store_true", help="every profile of the config, not only the active one")
    p = sub.add_parser("report", help="build a table and its figures from the final runs that exist so far")
    p.add_argument("table")
    p.add_argument("--config", default="config.yaml")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--out", default=None, help="folder for {table}.csv; figures go to OUT/figures (default: the "
                   "profile's own folders, as the workflow writes them)")
    p.add_argument("--merge", action="store_true", help="keep the rows of the existing {table}.csv for data sets and "
                   "methods these runs do not stand behind (runs made in several places); redraw only the per-data-set "
                   "figures of the rows built here")
    p = sub.add_parser("scorecard", help="every paper number the profile reproduces beside ours (from its tables)")
    p.add_argument("--config", default="config.yaml")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--out", default=None, help="folder holding the tables; the scorecard goes there, the figure to "
                   "OUT/figures (default: the profile's own folders)")
    p = sub.add_parser("rerun", help="repeat a run from its params.yaml into a new folder")
    p.add_argument("params_yaml")
    p.add_argument("--out", required=True, help="a new or empty folder for the run")
    p.add_argument("--force", action="store_true",
                   help="replace OUT when it holds an earlier run (never any other folder)")
    args = parser.parse_args(argv)

    try:
        if args.command == "check":
            config = _config(args)
            print(f"{args.config}: valid (profile {config['profile']!r})")
        elif args.command == "plan" and args.estimate:
            config = _config(args)
            _print_estimate(build_plan(config), args.cores, args.threads, config=config)
        elif args.command == "plan":
            plan = build_plan(_config(args))
            print(f"profile {plan.profile!r}: {len(plan.datasets)} data sets, {len(plan.runs)} candidate runs, "
                  f"{len(plan.selections)} selections, {len(plan.finals)} final runs")
            for (dataset, method), n in sorted(Counter((f.dataset, f.method) for f in plan.finals.values()).items()):
                print(f"  {dataset:22s} {method:14s} {n:6d} final runs")
            for path in plan.targets():
                print(f"  -> {path}")
        elif args.command == "report":
            return _report(args)
        elif args.command == "scorecard":
            return _scorecard(args)
        elif args.command == "targets":
            return _targets(args)
        elif args.command == "migrate":
            return _migrate(args)
        else:
            result = rerun(args.params_yaml, args.out, force=args.force)
            print(f"{args.out}: test {result['test']}")
    except (RunFolderError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
