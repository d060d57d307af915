"""OC1 Forest on Letter at 1000 trees (CO2 paper Table I: 3.8%): what the committed run records say, per seed.

Reads the paper profile's run records (``results/paper/runs/letter/oc1_forest/*/seed*/metrics.json``: each final's
test error at every staged forest size) and prints them per seed and size, with the records' code stamp, so the
"worse" row of the scorecard can be read against its own curve: whether the error still falls at 1000 trees, and how
the 1000-tree seed compares with the 30-tree finals of the same seed.

    python studies/oc1_letter_1000.py   # -> studies/results/oc1_letter_1000.log (stdout)
"""

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main():
    rows = []
    for path in sorted((ROOT / "results/paper/runs/letter/oc1_forest").glob("*/seed*/metrics.json")):
        metrics = json.loads(path.read_text())
        run = path.parent.parent.name.split("__")[0]
        for stage in metrics.get("stages", []):
            rows.append((path.parent.name, run, stage["n_estimators"], stage["test"]["error"],
                         metrics.get("git_commit", "")[:7]))
    print(f"{'seed':6s} {'final':55s} {'trees':>5s} {'test error %':>12s}  code")
    for seed, run, trees, error, commit in sorted(rows, key=lambda r: (r[0], r[1], r[2])):
        print(f"{seed:6s} {run:55s} {trees:5d} {error:12.2f}  {commit}")


if __name__ == "__main__":
    main()
