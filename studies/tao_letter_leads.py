"""Issue #8: summary of the Letter harness runs per lead (validation only; the test set is never read).

For every run (tag) of ``tao_letter_harness.py``: the path step with the lowest validation error (its C and
internal nodes) and the lowest validation error among the steps with at most ``--max-nodes`` internal nodes.
Runs are grouped into leads by their tag without the ``_sN`` seed suffix.

Usage: python studies/tao_letter_leads.py [--csv studies/results/tao_letter_harness_s19.csv]
       [--max-nodes 300] [--out studies/results/tao_letter_leads.csv]
"""
import argparse
import re

import pandas as pd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default="studies/results/tao_letter_harness_s19.csv")
    ap.add_argument("--max-nodes", type=int, default=300)
    ap.add_argument("--out", default="studies/results/tao_letter_leads.csv")
    a = ap.parse_args()
    d = pd.read_csv(a.csv)
    d = d[d.iteration.astype(str) == "final"].copy()
    d["lead"] = d.tag.map(lambda t: re.sub(r"_s\d+$", "", t))
    rows = []
    for tag, g in d.groupby("tag", sort=False):
        best = g.loc[g.val_error.idxmin()]
        small = g[g.live_internal <= a.max_nodes]
        sb = small.loc[small.val_error.idxmin()] if len(small) else None
        rows.append({"lead": best.lead, "tag": tag, "params": best.params, "depth": best.depth, "init": best.init,
                     "best_val_error": round(best.val_error, 2), "best_C": best.C,
                     "best_internal": int(best.live_internal), "best_train_error": round(best.train_error, 2),
                     f"best_val_error_le{a.max_nodes}": None if sb is None else round(sb.val_error, 2),
                     f"internal_le{a.max_nodes}": None if sb is None else int(sb.live_internal),
                     f"C_le{a.max_nodes}": None if sb is None else sb.C})
    out = pd.DataFrame(rows)
    out.to_csv(a.out, index=False)
    summary = out.groupby("lead", sort=False).agg(
        seeds=("tag", "count"), mean_best_val=("best_val_error", "mean"), min_best_val=("best_val_error", "min"),
        nodes_at_best=("best_internal", lambda s: f"{s.min()}-{s.max()}"),
        best_val_le=(f"best_val_error_le{a.max_nodes}", "min"))
    pd.set_option("display.width", 200)
    print(out.drop(columns=["params"]).to_string(index=False))
    print(summary.round(2).to_string())


if __name__ == "__main__":
    main()
