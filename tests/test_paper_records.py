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


# The columns naming a row of each table that has committed records: the rows are matched on them. A table whose
# records are committed but has no entry here fails test_every_record_stands_behind_a_planned_table_row, so the
# check below is never skipped silently.
ROW_KEYS = {"co2_table1": ["dataset", "method", "n_trees"],
            "co2_fig1": ["dataset", "method", "nu", "depth"],  # a sweep, no selection: the keys are the settings
            "decade_fixed_height": ["dataset", "method", "init", "depth"],
            "tao_fixed_depth": ["dataset", "method", "depth"],
            "tao_init": ["dataset", "method", "init", "depth"],
            "beyond_optimal": ["dataset", "method", "init", "depth"],
            "tao_table1": ["dataset", "method"],  # one row per data set: init and depth are chosen on validation
            "tao_fig1_path": ["dataset", "method", "init", "depth", "C"],  # a path: a row per C value of a run
            "nongreedy_fig2": ["dataset", "method", "depth"],  # a row per depth: each depth's grid tuned on its own
            "nongreedy_fig3": ["dataset", "method", "nu", "depth"],
            "nongreedy_fig4_runtime": ["dataset", "depth"],  # one row per depth (no method column)
            "rgf_fig15_time": ["dataset"],  # one row per data set from its RGF-L2 and GBDT runs (no method column)
            # RGF size curves (a run feeds several: Figs. 7-10 and 11 by data set, and Fig. 16's tree sizes)
            **{t: ["dataset", "method", "variant", "n_leaves"] for t in (
                "rgf_fig7_synthetic", "rgf_fig8_synthetic", "rgf_fig9_synthetic", "rgf_fig10_real", "rgf_fig11_exp")},
            "rgf_fig16_time": ["dataset", "method", "variant"]}


@pytest.fixture(scope="module")
def record_tables():
    """{table: [record folders]}: each committed record under the table the paper profile's plan makes it for."""
    from treeopt.experiments.plan.build import build_plan
    from treeopt.experiments.plan.config import load_config

    plan = build_plan(load_config(REPO / "config.yaml", ["profile=paper"]))
    tables = {}
    for record in RECORDS:
        run = "results/runs/" + str(record.relative_to(PAPER / "runs"))
        for table, dirs in plan.table_runs.items():
            if run in dirs:
                tables.setdefault(table, []).append(record)
    return tables


def _rebuilt(table, records):
    """The table the builder makes of the records, and the committed rows of the (data set, method) pairs they
    stand behind, matched on the table's row keys (outer: a row on one side only has no partner)."""
    from treeopt.experiments.plan.config import load_config
    from treeopt.experiments.plan.paper_values import dataset_links, linked

    keys = ROW_KEYS[table]
    with linked(dataset_links(load_config(REPO / "config.yaml", ["profile=paper"]))):  # as `report` builds it
        rebuilt = TABLES[table].builder()(load_runs(records))
    committed = pd.read_csv(PAPER / f"{table}.csv")
    if "method" in rebuilt:
        pairs = set(zip(rebuilt["dataset"], rebuilt["method"]))
        committed = committed[[(d, m) in pairs for d, m in zip(committed["dataset"], committed["method"])]]
    else:  # a row per data set (rgf_fig15_time): the data sets the records stand behind
        committed = committed[committed["dataset"].isin(set(rebuilt["dataset"]))]
    for frame in (rebuilt, committed):
        for key in keys:  # an empty key (CART's init) is "" in both, whether read from CSV or built
            frame[key] = frame[key].fillna("").astype(str)
    return rebuilt.merge(committed, on=keys, how="outer", suffixes=("", "_committed"), indicator=True,
                         validate="one_to_one"), keys


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


def test_every_record_stands_behind_a_planned_table_row(record_tables):
    """Each committed record is a final run the paper profile's plan makes for a table with row keys here (a run may
    stand behind several tables: an RGF run behind its figure's size curve and Fig. 16's tree sizes)."""
    behind = {record for records in record_tables.values() for record in records}
    assert behind == set(RECORDS), f"records no table of the plan names: {sorted(set(RECORDS) - behind)[:3]}"
    assert set(record_tables) <= set(ROW_KEYS), f"add the row keys of {set(record_tables) - set(ROW_KEYS)}"
    assert {"co2_table1", "decade_fixed_height", "rgf_fig15_time"} <= set(record_tables)


@pytest.mark.parametrize("table", sorted(ROW_KEYS))
def test_each_row_of_a_recorded_method_has_its_runs_and_they_rebuild_it(table, record_tables):
    """Every committed row of a (data set, method) whose records are committed is what the table builder makes of
    those records, over the same number of seeds (so each of its runs is there), and the records make no row the
    table lacks; every other column of the row (errors, std, chosen hyper-parameters, paper values) is equal too."""
    records = record_tables.get(table, [])
    assert records, f"no committed records behind {table}"
    merged, keys = _rebuilt(table, records)
    alone = merged[merged["_merge"] != "both"]
    assert alone.empty, f"{table}: rows without their runs or runs without their row:\n{alone[[*keys, '_merge']]}"
    assert (merged["n_seeds"] == merged["n_seeds_committed"]).all()
    shared = [c for c in merged if f"{c}_committed" in merged]
    for column in shared:
        ours, theirs = merged[column], merged[f"{column}_committed"]
        if pd.api.types.is_numeric_dtype(ours) and pd.api.types.is_numeric_dtype(theirs):
            pd.testing.assert_series_equal(ours, theirs, check_names=False, rtol=1e-5, check_dtype=False)
        else:
            assert ours.fillna("").astype(str).tolist() == theirs.fillna("").astype(str).tolist(), column


def test_a_row_whose_runs_are_missing_is_found(record_tables, tmp_path):
    """The check can fail: without one seed's record the rebuilt rows have a seed fewer than the committed ones."""
    records = record_tables["decade_fixed_height"]
    dropped = [r for r in records if not (r.parts[-3] == "cart" and r.parts[-1] == "seed2")]
    merged, _ = _rebuilt("decade_fixed_height", dropped)
    assert len(dropped) < len(records)
    assert (merged["n_seeds"] != merged["n_seeds_committed"]).any()


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


# Paper tables whose rows name no chosen hyper-parameters, and why. A table missing here and lacking the column
# fails the test below, so a new table cannot drop it silently (issue #38: every row names what validation chose).
WITHOUT_CHOSEN_PARAMS = {
    "rgf_fig15_time": "no selection: each row averages the fixed configurations it names (n_rgf_configs, gbdt_configs)",
}


def test_every_paper_table_names_its_chosen_hyper_parameters():
    lacking = {path.stem for path in PAPER.glob("*.csv")
               if path.stem != "scorecard" and "chosen_params" not in pd.read_csv(path, nrows=0).columns}
    assert lacking <= set(WITHOUT_CHOSEN_PARAMS), f"tables without chosen_params: {sorted(lacking - set(WITHOUT_CHOSEN_PARAMS))}"
    assert not set(WITHOUT_CHOSEN_PARAMS) - lacking - {"rgf_fig15_time"}, "a table now has the column: take it off the list"


def test_merge_rows_replaces_the_pairs_built_here_and_keeps_the_others():
    """report --merge: rows of the (data set, method) pairs a partial report builds replace the committed ones, other
    rows stay, the result ordered by data set and method; a table without a method column merges by data set."""
    from treeopt.experiments.report.tables import merge_rows

    kept = pd.DataFrame({"dataset": ["connect4", "connect4", "letter", "satimage"], "method": ["cart", "rf", "rf", "rf"],
                         "depth": [6, 6, 6, 6], "test_error": [1.0, 2.0, 3.0, 4.0]})
    new = pd.DataFrame({"dataset": ["connect4", "connect4", "fashion_mnist"], "method": ["rf", "rf", "cart"],
                        "depth": [6, 8, 6], "test_error": [20.0, 21.0, 5.0], "chosen_params": ["q=1", "q=2", ""]})
    merged = merge_rows(kept, new)
    assert list(zip(merged["dataset"], merged["method"], merged["depth"], merged["test_error"])) == [
        ("connect4", "cart", 6, 1.0), ("connect4", "rf", 6, 20.0), ("connect4", "rf", 8, 21.0),
        ("fashion_mnist", "cart", 6, 5.0), ("letter", "rf", 6, 3.0), ("satimage", "rf", 6, 4.0)]
    assert merged["chosen_params"].isna().sum() == 3  # kept rows made before the column have none
    by_dataset = merge_rows(kept.drop(columns="method"), new.drop(columns="method").iloc[:1])
    assert list(by_dataset["dataset"]) == ["connect4", "letter", "satimage"] and by_dataset["test_error"].iloc[0] == 20
    with pytest.raises(ValueError, match="dataset"):
        merge_rows(kept, pd.DataFrame({"x": [1]}))
