"""Command-line helpers around the workflow.

    python -m treeopt.experiments check [--config config.yaml] [--set profile=paper]
    python -m treeopt.experiments plan  [--config config.yaml] [--set profile=paper]
    python -m treeopt.experiments rerun results/runs/.../params.yaml --out NEW_FOLDER
"""

import argparse
import sys
from collections import Counter

from .config import ConfigError, load_config
from .plan import build_plan
from .runner import rerun


def _config(args):
    return load_config(args.config, args.set)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m treeopt.experiments", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (("check", "validate config.yaml (schema and names)"),
                       ("plan", "count the runs, selections and reports of a profile")):
        p = sub.add_parser(name, help=text)
        p.add_argument("--config", default="config.yaml")
        p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="override like snakemake --config, e.g. profile=paper")
    p = sub.add_parser("rerun", help="repeat a run from its params.yaml into a new folder")
    p.add_argument("params_yaml")
    p.add_argument("--out", required=True)
    args = parser.parse_args(argv)

    try:
        if args.command == "check":
            config = _config(args)
            print(f"{args.config}: valid (profile {config['profile']!r})")
        elif args.command == "plan":
            plan = build_plan(_config(args))
            print(f"profile {plan.profile!r}: {len(plan.datasets)} data sets, {len(plan.runs)} candidate runs, "
                  f"{len(plan.selections)} selections, {len(plan.finals)} final runs")
            for (dataset, method), n in sorted(Counter((f.dataset, f.method) for f in plan.finals.values()).items()):
                print(f"  {dataset:22s} {method:14s} {n:6d} final runs")
            for path in plan.targets():
                print(f"  -> {path}")
        else:
            result = rerun(args.params_yaml, args.out)
            print(f"{args.out}: test {result['test']}")
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
