"""A data set added under its own name is tied to the paper data set it stands for (``paper_dataset:``, #40)."""

import pandas as pd
import pytest

from pathlib import Path

from treeopt.experiments.plan import paper_values

from treeopt.experiments.report import tables_co2
from treeopt.experiments.plan.config import check_semantics, load_config
from treeopt.experiments.report.scorecard import WITHIN, build_scorecard

REPO = Path(__file__).resolve().parents[1]
USPS = {"task": "classification", "format": "libsvm",
        "files": {"train": {"path": "data/mine/usps"}, "test": {"path": "data/mine/usps.t"}},
        "options": {"n_features": 256}, "split": {"protocol": "provided", "val_fraction": 0.2}}


def _config(**entry):
    config = load_config(REPO / "config.yaml")
    config["datasets"]["usps_heldout"] = {**USPS, **entry}
    return config


def test_a_linked_entry_finds_its_papers_numbers_and_only_inside_linked():
    links = paper_values.dataset_links(_config(paper_dataset="USPS"))
    own = paper_values.dataset_links(load_config(REPO / "config.yaml"))  # the repository's linked entries
    assert links == {**own, "usps_heldout": "usps"} and "usps_heldout" not in own
    assert paper_values.co2_table1("usps_heldout", "rf", 10) is None  # matched by name: no such paper data set
    with paper_values.linked(links):
        assert paper_values.co2_table1("usps_heldout", "rf", 10) == 9.0
        assert paper_values.co2_table1("usps_heldout", "co2_forest", 1000) == 5.5
        assert paper_values.co2_table1("letter", "rf", 10) == 6.6  # names still match as before
    assert paper_values.co2_table1("usps_heldout", "rf", 10) is None


def test_a_table_and_the_scorecard_of_a_linked_entry_get_rows():
    runs = pd.DataFrame({"dataset": "usps_heldout", "method": "co2_forest", "seed": [0, 1], "tree_n_trees": 30,
                         "test_error": [5.8, 6.0]})
    with paper_values.linked(paper_values.dataset_links(_config(paper_dataset="usps"))):
        table = tables_co2.co2_table1(runs)
        card = build_scorecard({"co2_table1": (table, "results/x/co2_table1.csv")})
    assert table["paper_value"].tolist() == [5.9]
    (row,) = card[card["claim"] == ""].itertuples()
    assert row.dataset == "usps_heldout" and row.paper_value == 5.9 and row.status == WITHIN
    claims = card[card["claim"] != ""]  # the claims made for USPS apply to the entry that stands for it
    assert set(claims["setting"]) == {"claim=co2_beats_baselines", "claim=co2_10_beat_rf_1000"}
    assert (claims["dataset"] == "usps_heldout").all()
    unlinked = tables_co2.co2_table1(runs)
    assert unlinked["paper_value"].isna().all()


def test_an_unknown_paper_dataset_is_a_config_problem():
    with pytest.raises(ValueError, match="'uspss' is none of the papers' data sets"):
        paper_values.dataset_links(_config(paper_dataset="uspss"))
    problems = check_semantics(_config(paper_dataset="uspss"))
    assert any("datasets.usps_heldout.paper_dataset" in p for p in problems)
    assert check_semantics(_config(paper_dataset="usps")) == []
