"""OC1 Forest on Letter at 1000 trees (CO2 paper Table I: 3.8%): what the committed run records say, per seed.

Reads the paper profile's run records (``results/paper/runs/letter/oc1_forest/*/seed*/metrics.json``: each final's
test error at every staged forest size; read by the report's own ``load_runs``) and prints them per seed and size, so the
"worse" row of the scorecard can be read against its own curve: whether the error still falls at 1000 trees, and how
the 1000-tree seed compares with the 30-tree finals of the same seed.

    python studies/oc1_letter_1000.py   # -> studies/results/oc1_letter_1000.log (stdout)
"""

from pathlib import Path

from treeopt.experiments.report.tables import load_runs

ROOT = Path(__file__).resolve().parents[1]


def main():
    runs = load_runs(sorted(p.parent for p in (ROOT / "results/paper/runs/letter/oc1_forest").glob("*/seed*/metrics.json")))
    runs["final"] = [Path(r).parent.name.split("__")[0] for r in runs["run"]]
    runs = runs.sort_values(["seed", "final", "tree_n_trees"])
    print(f"{'seed':>4s} {'final':55s} {'trees':>5s} {'test error %':>12s}")
    for row in runs.itertuples():
        print(f"{row.seed:4d} {row.final:55s} {int(row.tree_n_trees):5d} {row.test_error:12.2f}")


if __name__ == "__main__":
    main()
