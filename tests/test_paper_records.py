"""The run records committed beside the paper tables (``results/paper/runs``, ``results/paper/selection``; made by
``python -m treeopt.experiments report``) rebuild the table rows they stand behind (issue #38: traceability)."""

from pathlib import Path

import pandas as pd
import pytest
import yaml

from treeopt.experiments.__main__ import RUN_RECORDS, copy_run_records
from treeopt.experiments.plan.reports import TABLES
from treeopt.experiments.report.tables import load_runs

REPO = Path(__file__).resolve().parents[1]
PAPER = REPO / "results/paper"
RECORDS = sorted(p.parent for p in (PAPER / "runs").glob("*/*/*/seed*/params.yaml"))


def _table_of(record):
    """The table a record (``results/paper/runs/{dataset}/{method}/{name}/seed{s}``) stands behind."""
    method, name = record.parts[-3], record.parts[-2]
    return "co2_table1" if name.startswith("final-") and method in ("oc1_forest", "co2_forest", "rf") else None


def test_records_are_committed():
    assert len(RECORDS) >= 6  # OC1 Forest on Letter and SatImage, 3 seeds each


@pytest.mark.parametrize("record", RECORDS, ids=[str(r.relative_to(PAPER)) for r in RECORDS])
def test_each_record_is_whole_and_its_selections_are_committed(record):
    for name in RUN_RECORDS:
        assert (record / name).is_file(), f"{record}: {name} missing"
    params = yaml.safe_load((record / "params.yaml").read_text())
    for source in [params.get("selection"), *(params.get("inherited") or {}).values()]:
        if source:
            committed = PAPER / "selection" / Path(source).relative_to("results/selection")
            assert committed.is_file(), f"{record}: its selection {source} is not committed"
            assert yaml.safe_load(committed.read_text())  # a readable selection: chosen and every candidate


def test_the_records_rebuild_their_table_rows():
    """The co2_table1 rows whose runs are committed are what the table builder makes of those runs."""
    records = [r for r in RECORDS if _table_of(r) == "co2_table1"]
    rebuilt = TABLES["co2_table1"].builder()(load_runs(records))
    committed = pd.read_csv(PAPER / "co2_table1.csv")
    keys = ["dataset", "method", "n_trees"]
    merged = rebuilt.merge(committed, on=keys, suffixes=("", "_committed"), validate="one_to_one")
    assert len(merged) == len(rebuilt) > 0
    for column in ("test_error", "test_error_std", "n_seeds", "paper_value"):
        pd.testing.assert_series_equal(merged[column], merged[f"{column}_committed"], check_names=False,
                                       rtol=1e-5)


def test_report_copies_the_records_and_their_selections(tmp_path, monkeypatch):
    """copy_run_records takes a run folder's two text files and the selection files it names."""
    monkeypatch.chdir(tmp_path)
    run = Path("results/runs/wine/oc1_forest/final-x__abc/seed0")
    selection = Path("results/selection/wine/rf/x__def/seed0.yaml")
    run.mkdir(parents=True)
    selection.parent.mkdir(parents=True)
    selection.write_text("chosen: {max_features: 2}\n")
    (run / "params.yaml").write_text(yaml.safe_dump({"selection": None, "inherited": {"max_features": str(selection)}}))
    (run / "metrics.json").write_text("{}")
    (run / "model.npz").write_bytes(b"not copied")
    assert copy_run_records([str(run)], tmp_path / "out") == 3
    assert sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*") if p.is_file()) == [
        "runs/wine/oc1_forest/final-x__abc/seed0/metrics.json", "runs/wine/oc1_forest/final-x__abc/seed0/params.yaml",
        "selection/wine/rf/x__def/seed0.yaml"]
