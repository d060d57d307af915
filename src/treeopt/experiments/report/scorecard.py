"""The reproduction scorecard: every paper number a profile reproduces, with ours beside it.

One row per paper number, naming where that number is printed (``paper_source``: the paper and its table or
figure, or the later source for numbers none of the four papers prints). The rows come from

* every table of the profile that has a ``paper_value`` column (each of its rows with a paper value: ours is
  the table's value, mean and std over its seeds), and
* the profile's plan: the paper numbers its final runs would give (looked up in
  :mod:`treeopt.experiments.plan.paper_values`, the one place paper numbers live) whose table row does not exist yet,
  with the status "not run yet", or "data not available offline" when a data set would have to be downloaded.

Status of a number we have: ``within tolerance`` when |ours − paper| ≤ the tolerance, else ``better`` or
``worse`` by the metric's direction; ``not like for like`` when ours is not measured as the paper's number was (a
caveat defined beside the paper value in :mod:`~treeopt.experiments.plan.paper_values`, shown in the ``note`` column).
The tolerance (:func:`tolerance`) is the largest of: ``REL_TOL`` of the paper's value read as a loss (an error,
100 − an accuracy or Jaccard, a time ratio), two standard deviations of ours over seeds (the spread a single run of
the paper's could show), and half a unit of the paper's last printed digit.

A worse row with a chased cause (:mod:`treeopt.experiments.plan.paper_causes`, issue #38) carries it in the note
("cause (ours): ..."), or, when the cause is the protocol and its measurement holds on the tables (the paper's own
baseline is off by at least as much, or ours under the published protocol is within tolerance), the status
``protocol offset`` with the measurement in the note: never plainly worse, never hidden.

Claim rows (issue #38): a sentence of a paper that compares methods (:mod:`treeopt.experiments.plan.paper_claims`,
beside the paper values) checked on our tables by :mod:`treeopt.experiments.report.claims`, one row per claim and
data set, status ``claim holds`` / ``claim fails`` (or not run yet / data not available offline), the paper's words in
the ``claim`` column, the numbers compared in the note; ``ours`` and ``difference`` are those of the comparison that
decides it (the first that fails, else the closest), and ``paper_value`` is empty: a claim has no printed number.

    python -m treeopt.experiments scorecard [--set profile=paper] [--out DIR]

writes ``scorecard.csv`` and ``scorecard.md`` beside the profile's tables and ``figures/scorecard.png|pdf``
(the Snakemake target ``{tables}/scorecard.md`` does the same once every table is made;
:mod:`treeopt.experiments.report.scorecard_pages` writes them and the HTML report's opening table).
"""

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..plan import paper_causes, paper_values
from ..plan.specs import output_dirs
from .claims import CLAIM_FAILS, CLAIM_HOLDS, evaluate, targets

WITHIN, BETTER, WORSE = "within tolerance", "better", "worse"
NOT_LIKE = "not like for like"
PROTOCOL_OFFSET = "protocol offset"
NOT_RUN, OFFLINE, NO_VALUE = "not run yet", "data not available offline", "no value in the table"
STATUSES = (WITHIN, BETTER, WORSE, PROTOCOL_OFFSET, NOT_LIKE, CLAIM_HOLDS, CLAIM_FAILS, NOT_RUN, OFFLINE, NO_VALUE)
COLUMNS = ["paper", "item", "table", "dataset", "method", "setting", "metric", "paper_value", "paper_source", "claim",
           "ours", "ours_std", "n_seeds", "difference", "tolerance", "status", "note", "source", "runs", "profile"]

DATASET_NAMES = {
    "letter": "Letter", "satimage": "SatImage", "connect4": "Connect-4", "usps": "USPS", "pendigits": "Pendigits",
    "protein": "Protein", "mnist": "MNIST", "sensit": "SensIT", "sensit_seismic": "SensIT (seismic)",
    "covtype": "Covertype", "adult": "Adult", "nursery": "Nursery", "houses": "Houses", "musk2": "Musk2",
    "letter_am": "Letter (A-M)", "waveform40": "Waveform", "mnist_oe": "MNIST (odd/even)", "ct_slices": "CT slices",
    "lfw_parts": "LFW parts", "rgf_synth_q16_reg": "synthetic q=16 (regression)",
    "rgf_synth_q16_cls": "synthetic q=16 (classification)", "rgf_synth_q64_reg": "synthetic q=64 (regression)",
    "rgf_synth_q4_reg": "synthetic q=4 (regression)", "rgf_synth_q2_reg": "synthetic q=2 (regression)",
    "rgf_synth_q2_cls": "synthetic q=2 (classification)", "fashion_mnist": "Fashion-MNIST",
}
METHOD_NAMES = {"rf": "Random Forest", "oc1_forest": "OC1 Forest", "co2_forest": "CO2 Forest", "cart": "CART",
                "cart_gini": "CART (Gini)", "tao_oblique": "TAO", "seg_rf": "Random Forest",
                "seg_two_probe": "Two-probe Forest", "seg_co2": "CO2 Forest"}


def display_name(names, key):
    """A data set's or method's name as the papers print it (the key itself when they do not)."""
    return names.get(key, key)


@dataclass(frozen=True)
class Scored:
    """How one table's paper numbers are scored."""

    paper: str  # paper name as in captions.PAPERS keys: co2, tao, rgf, nongreedy
    title: str  # the paper item, e.g. "CO2 Table I"
    value: str  # our column beside ``paper_value``
    keys: tuple  # the table columns that name a paper number (besides dataset and method)
    lookup: object  # (dataset, method, *keys) -> paper value or None (paper_values)
    higher_is_better: bool
    source: str  # where the paper values are printed, e.g. "CO2 Forest paper, Table I" (paper_values.*_SOURCE)
    rel_tol: float = 0.05
    setting: str = ""  # format of the setting, e.g. "{n_trees} trees"
    caveat: object = None  # (dataset, method, *keys) -> why ours is not measured as the paper's, or None

    def note(self, dataset, method, keys):
        """The caveat of one paper number ("" without one)."""
        return (self.caveat(dataset, method, *keys) if self.caveat else None) or ""

    def label(self, row):
        setting = self.setting.format(**{k: format_value(row[k]) for k in self.keys})
        parts = [self.title, display_name(DATASET_NAMES, row["dataset"])]
        if row["method"]:
            parts.append(display_name(METHOD_NAMES, row["method"]))
        return ", ".join([*parts, setting] if setting else parts)


def format_value(value):
    """A setting's value as the scorecard writes it (numbers without trailing zeros)."""
    return f"{value:g}" if isinstance(value, (int, float, np.integer, np.floating)) else str(value)


SCORED = {
    "co2_table1": Scored("co2", "CO2 Table I", "test_error", ("n_trees",), paper_values.co2_table1, False,
                         source=paper_values.CO2_TABLE1_SOURCE, setting="{n_trees} trees"),
    "co2_table2_jaccard": Scored("co2", "CO2 Table II", "jaccard", ("n_trees",), paper_values.co2_table2, True,
                                 source=paper_values.CO2_TABLE2_SOURCE, setting="{n_trees} trees"),
    "tao_fixed_depth": Scored("tao", "TAO fixed depth", "test_accuracy", ("depth",), paper_values.tao_fixed_depth,
                              True, source=paper_values.TAO_FIXED_DEPTH_SOURCE, setting="depth {depth}"),
    "tao_table1": Scored("tao", "TAO Table 1", "test_error", (), paper_values.tao_table1, False,
                         source=paper_values.TAO_TABLE1_SOURCE),
    "rgf_fig15_time": Scored("rgf", "RGF Fig. 15 (RGF/GBDT time)", "ratio", (),
                             lambda dataset, method: paper_values.rgf_fig15(dataset) and
                             paper_values.rgf_fig15(dataset)[2], False, source=paper_values.RGF_FIG15_SOURCE,
                             rel_tol=0.25, caveat=paper_values.rgf_fig15_caveat),
}


def tolerance(spec, paper, std=None, n_seeds=1):
    """Largest of REL_TOL x the paper's value as a loss, 2 std of ours (n_seeds > 1), half its last digit."""
    loss = 100 - paper if spec.higher_is_better else paper
    digits = len(f"{paper:g}".split(".")[1]) if "." in f"{paper:g}" else 0
    spread = 2 * std if std is not None and n_seeds > 1 and not math.isnan(std) else 0.0
    return max(spec.rel_tol * abs(loss), spread, 0.5 * 10 ** -digits)


def status(spec, paper, ours, tol, note=""):
    """Status of our number against the paper's; with a caveat (``note``) neither better nor worse: not like for
    like, since ours was not measured as the paper's was."""
    if ours is None or (isinstance(ours, float) and math.isnan(ours)):
        return NO_VALUE
    if note:
        return NOT_LIKE
    diff = ours - paper
    if abs(diff) <= tol:
        return WITHIN
    return BETTER if (diff > 0) == spec.higher_is_better else WORSE


# ---- what the plan would score -----------------------------------------------------------------------------
def _values(final, param):
    """The values of a swept or fixed parameter a final run is scored at (all stages of a staged run)."""
    stages = dict(final.stages)
    if param in stages:
        return list(stages[param])
    point = dict(final.point)
    if param in point:
        return [point[param]]
    params = dict(final.params) if final.params is not None else dict(final.selection.candidates[0].params)
    return [params[param]] if param in params else []


def _planned_keys(table, final):
    """Key dicts {dataset, method, *keys} a final run contributes to ``table``."""
    base = {"dataset": final.dataset, "method": final.method}
    if table in ("co2_table1", "co2_table2_jaccard"):
        return [{**base, "n_trees": int(n)} for n in _values(final, "n_estimators")]
    if table == "tao_fixed_depth":
        return [{**base, "depth": int(d)} for d in _values(final, "max_depth")]
    if table == "tao_table1":
        return [base]
    if table == "rgf_fig15_time":  # one number per data set, from its RGF-L2 and GBDT runs
        return [{"dataset": final.dataset, "method": ""}]
    return []


def planned(plan):
    """{(table, dataset, method, *keys): [final run dirs]} of every paper number the plan would score."""
    out = {}
    for table, dirs in plan.table_runs.items():
        spec = SCORED.get(table)
        if spec is None:
            continue
        for final_dir in dirs:
            final = plan.finals[final_dir]
            for key in _planned_keys(table, final):
                paper = spec.lookup(key["dataset"], key["method"], *(key[k] for k in spec.keys))
                if paper is not None:
                    out.setdefault((table, key["dataset"], key["method"], *(key[k] for k in spec.keys)),
                                   []).append(final_dir)
    return out


def _brace(dirs):
    """Run folders ``.../seed0``, ``.../seed1`` as ``.../seed{0,1}``."""
    by_parent = {}
    for d in sorted(set(dirs)):
        parent, _, seed = d.rpartition("/seed")
        by_parent.setdefault(parent, []).append(seed)
    return "; ".join(f"{p}/seed{s[0]}" if len(s) == 1 else f"{p}/seed{{{','.join(s)}}}" for p, s in by_parent.items())


# ---- the scorecard -----------------------------------------------------------------------------------------
def table_rows(table, frame, source, spec=None):
    """Scorecard rows of one table: each of its rows with a paper value."""
    spec = spec or SCORED.get(table)
    if spec is None:
        raise ValueError(f"{source} has a paper_value column but the scorecard does not know table {table!r}; "
                         f"add it to treeopt.experiments.report.scorecard.SCORED")
    rows = []
    for _, row in frame[frame["paper_value"].notna()].iterrows():
        row = row.to_dict()
        row.setdefault("method", "")
        paper = float(row["paper_value"])
        ours = float(row[spec.value]) if pd.notna(row.get(spec.value)) else float("nan")
        std_raw = row.get(f"{spec.value}_std")
        std = float(std_raw) if std_raw is not None and pd.notna(std_raw) else float("nan")
        n_seeds = int(row["n_seeds"]) if pd.notna(row.get("n_seeds")) else 0
        tol = tolerance(spec, paper, std, n_seeds)
        method = row["method"] if isinstance(row["method"], str) else ""
        note = spec.note(row["dataset"], method, [row[k] for k in spec.keys])
        rows.append({"paper": spec.paper, "item": spec.label(row), "table": table, "dataset": row["dataset"],
                     "method": method, "setting": ",".join(f"{k}={format_value(row[k])}" for k in spec.keys),
                     "metric": spec.value,
                     "paper_value": paper, "paper_source": spec.source, "ours": ours, "ours_std": std,
                     "n_seeds": n_seeds,
                     "difference": ours - paper, "tolerance": tol, "status": status(spec, paper, ours, tol, note),
                     "note": note, "source": source})
    return rows


def _fmt(x):
    return f"{x:+.2f}" if x else "0"


def _offset_shown(cause, row, rows):
    """(shown, evidence): whether a protocol cause's measurement covers ``row``'s distance on these tables."""
    diff = row["difference"]
    if cause.baseline:
        base = next((r for r in rows if (r["table"], r["dataset"], r["method"], r["setting"])
                     == (row["table"], row["dataset"], cause.baseline, row["setting"])), None)
        if base is None or math.isnan(base["difference"]):
            return False, f"the paper's own baseline {cause.baseline} has no row here"
        name = display_name(METHOD_NAMES, cause.baseline)
        shown = base["difference"] * diff > 0 and abs(base["difference"]) >= abs(diff)
        return shown, (f"the paper's own baseline {name} is {_fmt(base['difference'])} from its published value "
                       f"here, this row {_fmt(diff)}")
    spec = SCORED[row["table"]]
    tol = tolerance(spec, row["paper_value"], cause.measured_std, cause.measured_seeds)
    shown = abs(cause.measured - row["paper_value"]) <= tol
    return shown, (f"under the published protocol ours is {cause.measured:g}"
                   f"{f' +- {cause.measured_std:g}' if cause.measured_std is not None else ''} "
                   f"({cause.measured_seeds} seeds), {_fmt(cause.measured - row['paper_value'])} from the paper's "
                   f"{row['paper_value']:g}, tolerance {tol:.2f}")


def explain_worse(rows):
    """Give each worse row its chased cause (:mod:`treeopt.experiments.plan.paper_causes`) in the note; a protocol
    cause whose measurement holds on these tables makes the row a "protocol offset" (issue #38: no row is plainly
    worse). Rows are changed in place."""
    for row in rows:
        if row["status"] != WORSE:
            continue
        cause = paper_causes.cause_of(row["table"], row["dataset"], row["method"])
        if cause is None:
            continue
        where = f"study: {cause.study}; note: {cause.doc}"
        if cause.kind == paper_causes.PROTOCOL:
            shown, evidence = _offset_shown(cause, row, rows)
            if shown:
                row["status"] = PROTOCOL_OFFSET
                row["note"] = f"protocol offset, measured: {evidence}. Cause: {cause.text}; {where}"
            else:
                row["note"] = f"protocol offset not shown ({evidence}). Cause: {cause.text}; {where}"
        else:
            row["note"] = f"cause (ours): {cause.text}; {where}"


def _availability(dataset, config):
    from ...data import availability

    try:
        return availability(dataset, config)
    except Exception:  # informative only: a broken entry is reported by the data layer itself
        return "unknown"


def build_scorecard(tables, plan=None, config=None, *, profile="default"):
    """The scorecard DataFrame.

    ``tables``: {table name: (DataFrame, source path)} of the tables that exist. ``plan`` (optional): the
    profile's plan, whose paper numbers without a table row are listed as not run yet / data not available
    offline (``config`` tells which data sets are offline)."""
    rows = []
    for name, (frame, source) in sorted(tables.items()):
        if "paper_value" in frame:
            rows.extend(table_rows(name, frame, source))
    explain_worse(rows)
    wanted = planned(plan) if plan is not None else {}
    have = {(r["table"], r["dataset"], r["method"], *_setting_values(r)) for r in rows}
    for key, dirs in wanted.items():
        table, dataset, method, *keys = key
        for r in rows:
            if (r["table"], r["dataset"], r["method"], *_setting_values(r)) == tuple(key):
                r["runs"] = _brace(dirs)
        if tuple(key) in have:
            continue
        spec = SCORED[table]
        paper = float(spec.lookup(dataset, method, *keys))
        offline = config is not None and _availability(dataset, config) in ("download", "missing")
        row = {"dataset": dataset, "method": method, **dict(zip(spec.keys, keys))}
        source = f"{output_dirs(profile)[0]}/{table}.csv"
        rows.append({"paper": spec.paper, "item": spec.label(row), "table": table, "dataset": dataset,
                     "method": method, "setting": ",".join(f"{k}={format_value(v)}" for k, v in zip(spec.keys, keys)),
                     "metric": spec.value, "paper_value": paper, "paper_source": spec.source,
                     "ours": float("nan"), "ours_std": float("nan"),
                     "n_seeds": 0, "difference": float("nan"), "tolerance": float("nan"),
                     "status": OFFLINE if offline else NOT_RUN, "note": spec.note(dataset, method, keys),
                     "source": source, "runs": _brace(dirs)})
    offline = (lambda d: _availability(d, config) in ("download", "missing")) if config is not None else None
    rows.extend(claim_rows(tables, _planned_tables(plan), offline, profile))
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["profile"] = profile
    for column in ("runs", "claim"):
        frame[column] = frame[column].astype(object).fillna("")
    order = {p: i for i, p in enumerate(("nongreedy", "co2", "tao", "rgf"))}
    frame = frame.assign(_p=frame["paper"].map(order), _c=frame["claim"] != "",
                         _s=frame["status"].isin([NOT_RUN, OFFLINE]), _k=range(len(frame)))
    frame["_k"] = frame["_k"].where(frame["_c"], 0)  # claims in the order they are defined, after the numbers
    return (frame.sort_values(["_p", "_c", "_s", "_k", "table", "dataset", "method", "setting"], kind="stable")
            .drop(columns=["_p", "_c", "_s", "_k"]).reset_index(drop=True))


def _planned_tables(plan):
    """{(table, data set)} the plan's final runs will fill."""
    if plan is None:
        return set()
    return {(table, plan.finals[d].dataset) for table, dirs in plan.table_runs.items() for d in dirs}


def claim_rows(tables, planned=(), offline=None, profile="default", claims=None):
    """Scorecard rows of the papers' claims (:mod:`.claims`) on every data set of theirs a table holds or the plan
    will make; ``offline(dataset)`` tells a data set that cannot be had (its claim rows without numbers say so)."""
    from ..plan.paper_claims import CLAIMS

    rows = []
    for claim, dataset in targets(tables, planned, CLAIMS if claims is None else claims):
        table = claim.table_of(dataset)
        frame, source = tables.get(table, (None, f"{output_dirs(profile)[0]}/{table}.csv"))
        verdict = evaluate(claim, dataset, frame)
        status = verdict.status or (OFFLINE if offline is not None and offline(dataset) else NOT_RUN)
        first, second = verdict.first, verdict.second
        rows.append({"paper": claim.paper, "item": f"{claim.title}, {display_name(DATASET_NAMES, dataset)}",
                     "table": table, "dataset": dataset, "method": "", "setting": f"claim={claim.key}",
                     "metric": verdict.metric, "paper_value": float("nan"), "paper_source": claim.source,
                     "claim": claim.words, "ours": first.value if first else float("nan"),
                     "ours_std": first.std if first else float("nan"), "n_seeds": first.n_seeds if first else 0,
                     "difference": first.value - second.value if first else float("nan"),
                     "tolerance": float("nan"), "status": status, "note": verdict.note, "source": source, "runs": ""})
    return rows


def _setting_values(row):
    if not row["setting"]:
        return ()
    values = []
    for part in row["setting"].split(","):
        value = part.split("=", 1)[1]
        try:
            values.append(int(value))
        except ValueError:
            values.append(value)
    return tuple(values)


def read_tables(tables_dir):
    """{name: (DataFrame, path)} of every table CSV in a profile's tables folder (the scorecard excluded)."""
    out = {}
    for path in sorted(Path(tables_dir).glob("*.csv")):
        if path.stem != "scorecard":
            out[path.stem] = (pd.read_csv(path), str(path))
    return out
