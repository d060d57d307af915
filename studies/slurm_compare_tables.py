"""Issue #28: are the tables of a workflow run through SLURM the same as those of a local run?

Two clones of the repository ran the same profile, one with ``snakemake --workflow-profile profiles/slurm``, the
other with ``snakemake --cores 2``. This compares every CSV under ``results/tables/`` that both produced (by
path, after the run started: a table still as committed is "not produced"), with the timing columns left out
(name containing ``seconds`` or ``time``, as in tests/test_workflow_slurm.py) and numbers compared exactly; then
``params.yaml`` and ``metrics.json`` of every run folder both runs finished (timing keys left out), so a run
stopped part-way still says whether what both did agrees.

    python studies/slurm_compare_tables.py /tmp/slurm_b /tmp/slurm_a --since 2026-11-25T16:01:13Z
"""

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path

import pandas as pd
import yaml


def timing(column):
    return "seconds" in column or "time" in column


def produced(root, since):
    """Table CSVs under root written after ``since`` (the start of the workflow run), by relative path."""
    tables = sorted((root / "results/tables").glob("*.csv"))
    return {path.relative_to(root): path for path in tables if since is None or path.stat().st_mtime >= since}


def compare(a, b):
    """None when the two tables agree outside timing columns, else what differs."""
    left, right = pd.read_csv(a), pd.read_csv(b)
    if list(left.columns) != list(right.columns):
        return f"columns differ: {sorted(set(left.columns) ^ set(right.columns))}"
    kept = [column for column in left.columns if not timing(column)]
    try:
        pd.testing.assert_frame_equal(left[kept], right[kept], check_exact=True)
    except AssertionError as error:
        return " ".join(str(error).split())[:400]
    return None


# provenance, not results: a clone whose run rewrote a committed table records "<commit>+dirty" from then on
PROVENANCE = {"git_commit"}


def without_timings(value):
    """``value`` (nested dicts and lists) without keys naming seconds or time, and without provenance keys."""
    if isinstance(value, dict):
        return {key: without_timings(item) for key, item in value.items()
                if not timing(key) and key not in PROVENANCE}
    if isinstance(value, list):
        return [without_timings(item) for item in value]
    return value


def compare_runs(on_slurm, local):
    """Run folders both finished: (number compared, folders whose params.yaml or metrics.json differ)."""
    def finished(root):
        return {path.parent.relative_to(root) for path in (root / "results/runs").rglob("metrics.json")}

    common = sorted(finished(on_slurm) & finished(local))
    differ = []
    for folder in common:
        for name, read in (("params.yaml", yaml.safe_load), ("metrics.json", json.loads)):
            got, want = (without_timings(read((root / folder / name).read_text())) for root in (on_slurm, local))
            if got != want:
                differ.append(folder / name)
    return len(common), differ


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("slurm", type=Path, help="clone that ran through the SLURM profile")
    parser.add_argument("local", type=Path, help="clone that ran with the local executor")
    parser.add_argument("--since", help="UTC start of the runs (ISO); older tables are the committed ones")
    args = parser.parse_args(argv)
    since = datetime.fromisoformat(args.since.replace("Z", "+00:00")).timestamp() if args.since else None
    on_slurm, local = produced(args.slurm, since), produced(args.local, since)
    differing = 0
    for path in sorted(set(on_slurm) | set(local)):
        if path not in on_slurm or path not in local:
            print(f"{path}: only produced by the {'SLURM' if path in on_slurm else 'local'} run")
            continue
        dropped = [c for c in pd.read_csv(local[path], nrows=0).columns if timing(c)]
        rows = len(pd.read_csv(local[path]))
        problem = compare(on_slurm[path], local[path])
        differing += problem is not None
        print(f"{path}: {'DIFFERS: ' + problem if problem else 'equal'} ({rows} rows; timing columns left out: "
              f"{', '.join(dropped) or 'none'})")
    both = len(set(on_slurm) & set(local))
    print(f"{both} tables produced by both runs, {both - differing} equal, {differing} differ")
    compared, runs_differ = compare_runs(args.slurm, args.local)
    for path in runs_differ:
        print(f"{path}: DIFFERS")
    print(f"{compared} run folders finished by both runs, {len(runs_differ)} files differ (timings left out)")
    return 1 if differing or runs_differ else 0


if __name__ == "__main__":
    sys.exit(main())
