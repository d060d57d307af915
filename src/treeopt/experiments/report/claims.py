"""The papers' claims (:mod:`treeopt.experiments.plan.paper_claims`) checked on our tables, one verdict per claim and
data set, for the scorecard's claim rows.

Numbers are compared as the tables hold them: means over seeds. A mean is a mean, so a claim holds or fails on
them alone; but a reader must see when the gap is smaller than what one seed moves (the note says "within one
seed's spread" when the difference is at most the larger of the two standard deviations over seeds, and that the
spread is not measured when a number has one seed). A claim fails as soon as one comparison fails, even while
others are not run yet; it holds only when every comparison is made (rule "all"), or when more than half of them
hold (rule "most"). A failing claim's note ends with the cause it was chased to (the claim's ``chased`` text: its
study and method note), as a worse row's note does (:mod:`treeopt.experiments.plan.paper_causes`).
"""

import math
from dataclasses import dataclass

from ..plan.paper_claims import ABOVE, BELOW, CLAIMS, CLOSE

CLAIM_HOLDS, CLAIM_FAILS = "claim holds", "claim fails"
REL_TOL = 0.05  # "rivaled" (CLOSE): within 5% of the second number read as a loss, or 2 std: the scorecard's rule


@dataclass(frozen=True)
class Found:
    """One of our numbers as a table row holds it."""

    label: str
    value: float
    std: float
    n_seeds: int
    unrecorded: bool = False  # records no chosen parameters where the method's other rows in the table do

    def text(self):
        std = f" ± {self.std:.2g}" if self.n_seeds > 1 and not math.isnan(self.std) else ""
        return f"{self.label} {self.value:.4g}{std}"


@dataclass(frozen=True)
class Verdict:
    """A claim on one data set: its status, the comparison that decides it (``first`` − ``second`` is the
    scorecard's difference) and the note naming the numbers compared."""

    status: str  # CLAIM_HOLDS, CLAIM_FAILS, or None: numbers missing (the scorecard says not run yet / offline)
    metric: str
    first: Found = None
    second: Found = None
    note: str = ""


def _metric(claim, frame, dataset):
    """The first of the claim's columns that the data set's own rows fill (a table may mix regression and
    classification sets, e.g. Fig. 10's Houses with test_rmse beside Nursery with test_error)."""
    rows = frame[frame["dataset"] == dataset] if "dataset" in frame else frame
    for metric in claim.metric:
        if metric in rows and rows[metric].notna().any():
            return metric
    return claim.metric[0]


def _rows(frame, dataset, number, metric):
    if frame is None or metric not in frame:
        return None
    rows = frame[(frame["dataset"] == dataset) & frame["method"].isin(number.method) & frame[metric].notna()]
    for column, value in number.where:
        rows = rows[rows[column] == value] if column in rows else rows.iloc[0:0]
    return rows


def _common_size(frame, dataset, comparison, metric):
    """The largest model size both peaks of a comparison reach (None unless both are peaks over ``n_leaves``)."""
    if not (comparison.first.best and comparison.second.best) or frame is None or "n_leaves" not in frame:
        return None
    sizes = [_rows(frame, dataset, n, metric)["n_leaves"].max() for n in (comparison.first, comparison.second)]
    return None if any(s != s for s in sizes) else min(sizes)


def find(frame, dataset, number, metric, max_size=None):
    """The table row ``number`` names on ``dataset`` (the best of its rows with ``number.best``, of at most
    ``max_size`` leaves when given), or None."""
    rows = _rows(frame, dataset, number, metric)
    if rows is not None and max_size is not None:
        rows = rows[rows["n_leaves"] <= max_size]
    if rows is None or rows.empty:
        return None
    if not number.best:
        if len(rows) > 1:
            raise ValueError(f"{number.label} on {dataset}: {len(rows)} table rows match; a claim compares one")
        row, label = rows.iloc[0], number.label
    else:
        row = rows.loc[rows[metric].idxmin() if number.best == "min" else rows[metric].idxmax()]
        at = f" at {row['n_leaves']:g} leaves" if "n_leaves" in row else ""
        n_configs = rows["variant"].nunique() if "variant" in rows else 1
        label = (f"{number.label} ({row['variant']}{at}, the best of {n_configs} configurations in the table)"
                 if n_configs > 1 else f"{number.label} ({at.strip()})" if at else number.label)
    std = float(row[f"{metric}_std"]) if f"{metric}_std" in row and row[f"{metric}_std"] == row[f"{metric}_std"] \
        else float("nan")
    n_seeds = int(row["n_seeds"]) if "n_seeds" in row and row["n_seeds"] == row["n_seeds"] else 1
    return Found(label, float(row[metric]), std, n_seeds, _unrecorded(frame, row))


def _unrecorded(frame, row):
    """Whether ``row`` records no chosen parameters while rows of its method on other data sets of the table do: a
    row made before the runs recorded their choices (issue #38's tuning rule), whose tuning a reader cannot check.
    A method whose rows never record any (no grid, or a protocol that shows every configuration) is not flagged."""
    if "chosen_params" not in frame or "method" not in row:
        return False
    if isinstance(row["chosen_params"], str) and row["chosen_params"].strip():
        return False
    same = frame[frame["method"] == row["method"]]["chosen_params"]
    return bool(same.map(lambda v: isinstance(v, str) and bool(v.strip())).any())


def _spread(first, second):
    """How the gap compares with one seed's spread (the larger std over seeds of the two)."""
    if min(first.n_seeds, second.n_seeds) <= 1:
        return "one seed: spread not measured"
    std = max(s for s in (first.std, second.std) if not math.isnan(s))
    gap = abs(first.value - second.value)
    return f"{'within' if gap <= std else 'more than'} one seed's spread (std {std:.2g})"


def _holds(relation, first, second, metric):
    """Whether ``first`` stands to ``second`` as claimed, and by how much it is on the claimed side (negative: by
    how much it misses)."""
    diff = first.value - second.value
    if relation == BELOW:
        return diff < 0, -diff
    if relation == ABOVE:
        return diff > 0, diff
    if relation != CLOSE:
        raise ValueError(f"unknown relation {relation!r}")
    loss = 100 - second.value if metric.endswith("accuracy") else second.value
    stds = [s.std for s in (first, second) if s.n_seeds > 1 and not math.isnan(s.std)]
    tol = max([REL_TOL * abs(loss), *(2 * s for s in stds)])
    return abs(diff) <= tol, tol - abs(diff)


def _describe(relation, first, second, ok, margin):
    words = {BELOW: ("below", "not below"), ABOVE: ("above", "not above"),
             CLOSE: ("within the tolerance of", "not within the tolerance of")}[relation][0 if ok else 1]
    gap = abs(first.value - second.value)
    tol = f", tolerance {margin + gap:.3g}" if relation == CLOSE else ""
    return f"{first.text()} {words} {second.text()} (by {gap:.3g}{tol}; {_spread(first, second)})"


def evaluate(claim, dataset, frame):
    """The claim's :class:`Verdict` on ``dataset`` from its table (``frame``; None when the table is not made)."""
    metric = _metric(claim, frame, dataset) if frame is not None else claim.metric[0]
    done, missing = [], []
    comparisons = claim.comparisons(dataset)
    for comparison in comparisons:
        size = _common_size(frame, dataset, comparison, metric)
        first, second = (find(frame, dataset, n, metric, size) for n in (comparison.first, comparison.second))
        if first is None or second is None:
            missing.extend(n.label for n, f in ((comparison.first, first), (comparison.second, second)) if f is None)
            continue
        ok, margin = _holds(comparison.relation, first, second, metric)
        done.append((ok, margin, first, second, _describe(comparison.relation, first, second, ok, margin)))
    total = len(comparisons)
    n_ok = sum(ok for ok, *_ in done)
    n_fail = len(done) - n_ok
    if claim.rule == "most":
        need = total // 2 + 1
        status = CLAIM_HOLDS if n_ok >= need else CLAIM_FAILS if n_fail > total - need else None
    else:
        status = CLAIM_FAILS if n_fail else None if missing else CLAIM_HOLDS
    if not done:
        has_rows = frame is not None and (frame["dataset"] == dataset).any()
        return Verdict(None, metric, note=_missing_note(missing) if has_rows else "no rows of this data set in the "
                       "table yet")
    failed = [d for d in done if not d[0]]
    decisive = failed[0] if failed and status != CLAIM_HOLDS else min(done, key=lambda d: d[1])
    parts = []
    if failed:
        parts.append("fails: " + "; ".join(d[4] for d in failed))
    held = [d for d in done if d[0]]
    if held:
        closest = min(held, key=lambda d: d[1])
        parts.append(f"holds: {closest[4]}" if len(done) == 1 else
                     f"holds in {len(held)} of {len(done)} comparisons (closest: {closest[4]})")
    if missing:
        parts.append(_missing_note(missing))
    unrecorded = list(dict.fromkeys(f.label for d in done for f in d[2:4] if f.unrecorded))
    if unrecorded:
        parts.append("compared with rows that record no chosen parameters while their method's rows on other data "
                     "sets do (made before the tuning rule's records): " + " / ".join(unrecorded))
    caveat = claim.caveat(dataset) if claim.caveat else None
    if caveat:
        parts.append(caveat)
    chased = claim.chased.get(dataset) if claim.chased and status == CLAIM_FAILS else None
    if chased:
        parts.append(f"chased: {chased}")
    return Verdict(status, metric, decisive[2], decisive[3], "; ".join(parts))


def _missing_note(missing):
    names = list(dict.fromkeys(missing))
    shown = " / ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return f"not in the table yet: {shown}"


def targets(tables, planned, claims=CLAIMS):
    """(claim, data set) pairs the scorecard lists: a claim's data sets its table holds or the plan will make
    (``planned``: {(table, data set)}), in the order of ``claims``."""
    out = []
    for claim in claims:
        seen = set()
        sources = [(t, d) for t, d in planned]
        for table in ({claim.table} if isinstance(claim.table, str) else set(claim.table.values())):
            if table in tables and "dataset" in tables[table][0]:
                sources += [(table, d) for d in tables[table][0]["dataset"].unique()]
        for table, dataset in sorted(sources, key=lambda s: str(s[1])):
            if claim.applies_to(dataset) and claim.table_of(dataset) == table and dataset not in seen:
                seen.add(dataset)
                out.append((claim, dataset))
    return out
