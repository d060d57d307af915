"""Claim rows of the scorecard: the papers' sentences comparing methods, checked on our tables (issue #38)."""

import re
from pathlib import Path

import pandas as pd
import pytest

from treeopt.experiments.plan.config import load_config
from treeopt.experiments.plan.build import build_plan
from treeopt.experiments.plan.paper_claims import BELOW, CLAIMS, Claim, Comparison, Number
from treeopt.experiments.report.claims import CLAIM_FAILS, CLAIM_HOLDS
from treeopt.experiments.report.scorecard import NOT_RUN, OFFLINE, build_scorecard, claim_rows, read_tables

REPO = Path(__file__).resolve().parents[1]
PAPERS = REPO.parent / "shared" / "papers"
PAPER_FILES = {"co2": "co2-forest-norouzi2015.md", "nongreedy": "nongreedy-trees-norouzi2015.md",
               "rgf": "rgf-johnson-zhang.md", "tao": "tao-carreira-perpinan2018.md"}
CLAIM = {c.key: c for c in CLAIMS}


def _co2_table(co2_10, rf_1000, more=None, std=0.1):
    rows = [("letter", "co2_forest", 10, co2_10, std), ("letter", "rf", 1000, rf_1000, std)]
    rows += [("letter", m, n, v, std) for (m, n), v in (more or {}).items()]
    return pd.DataFrame(rows, columns=["dataset", "method", "n_trees", "test_error", "test_error_std"]).assign(n_seeds=3)


def _rows(frame, table="co2_table1", claims=None, **kw):
    rows = claim_rows({table: (frame, f"results/x/{table}.csv")}, claims=claims, **kw)
    return {(r["setting"].removeprefix("claim="), r["dataset"]): r for r in rows}


def test_a_claim_that_holds_and_one_that_fails_on_fabricated_tables():
    holds = _rows(_co2_table(3.2, 3.7))[("co2_10_beat_rf_1000", "letter")]
    assert holds["status"] == CLAIM_HOLDS
    assert holds["ours"] == pytest.approx(3.2) and holds["difference"] == pytest.approx(-0.5)
    assert "CO2 Forest, 10 trees 3.2 ± 0.1 below Random Forest, 1000 trees 3.7 ± 0.1" in holds["note"]
    assert "more than one seed's spread" in holds["note"]
    assert holds["claim"].startswith("In some cases") and "Sec. 6.1" in holds["paper_source"]

    fails = _rows(_co2_table(3.75, 3.7))[("co2_10_beat_rf_1000", "letter")]
    assert fails["status"] == CLAIM_FAILS and fails["difference"] == pytest.approx(0.05)
    assert "not below" in fails["note"] and "within one seed's spread (std 0.1)" in fails["note"]


def test_a_missing_number_leaves_a_claim_not_run_yet_but_never_rescues_a_failure():
    """CO2 beats RF and OC1 on Letter: with OC1 at 1000 trees missing the claim waits; one comparison failing
    decides it whatever is missing."""
    good = {("rf", 10): 6.6, ("rf", 30): 4.7, ("co2_forest", 30): 2.3, ("co2_forest", 1000): 1.8,
            ("oc1_forest", 10): 7.6, ("oc1_forest", 30): 5.0}
    frame = _co2_table(3.2, 3.7, good)
    waiting = _rows(frame)[("co2_beats_baselines", "letter")]
    assert waiting["status"] == NOT_RUN
    assert "holds in 5 of 5" in waiting["note"] and "not in the table yet: OC1 Forest, 1000 trees" in waiting["note"]
    whole = _rows(_co2_table(3.2, 3.7, {**good, ("oc1_forest", 1000): 3.8}))[("co2_beats_baselines", "letter")]
    assert whole["status"] == CLAIM_HOLDS
    broken = _rows(_co2_table(3.2, 3.7, {**good, ("rf", 30): 2.0}))[("co2_beats_baselines", "letter")]
    assert broken["status"] == CLAIM_FAILS and "Random Forest, 30 trees 2" in broken["note"]


def test_rows_made_before_the_runs_recorded_their_choices_are_named_in_the_note():
    """A compared row without chosen_params while its method's rows on another data set have them is named (the
    reader cannot check its tuning); a method whose rows never record any is not."""
    frame = pd.concat([_co2_table(3.2, 3.7), _co2_table(3.0, 3.5).assign(dataset="satimage")], ignore_index=True)
    frame["chosen_params"] = [None, None, "nu=1", "max_features=p^0.5"]
    note = _rows(frame)[("co2_10_beat_rf_1000", "letter")]["note"]
    assert "record no chosen parameters" in note and "CO2 Forest, 10 trees / Random Forest, 1000 trees" in note
    frame["chosen_params"] = ["nu=1", "max_features=p^0.7", "nu=1", "max_features=p^0.5"]
    assert "record no chosen parameters" not in _rows(frame)[("co2_10_beat_rf_1000", "letter")]["note"]
    frame["chosen_params"] = [None, "max_features=p^0.7", "nu=1", "max_features=p^0.5"]
    note = _rows(frame)[("co2_10_beat_rf_1000", "letter")]["note"]
    assert note.endswith("(made before the tuning rule's records): CO2 Forest, 10 trees")
    frame["chosen_params"] = None  # no row records any: nothing to flag
    assert "record no chosen parameters" not in _rows(frame)[("co2_10_beat_rf_1000", "letter")]["note"]


def test_a_claim_of_most_cases_holds_on_a_majority():
    def nongreedy(wins):
        rows = [("connect4", m, d, 70.0 + (1 if (m == "nongreedy_tree") == (d in wins) else 0))
                for d in (6, 8, 10, 12, 14, 16, 18) for m in ("nongreedy_tree", "co2_tree")]
        return pd.DataFrame(rows, columns=["dataset", "method", "depth", "test_accuracy"]).assign(n_seeds=1)

    most = _rows(nongreedy({6, 8, 10, 12}), "nongreedy_fig2")[("nongreedy_over_co2", "connect4")]
    assert most["status"] == CLAIM_HOLDS and "holds in 4 of 7" in most["note"]
    assert "one seed: spread not measured" in most["note"]
    few = _rows(nongreedy({6, 8, 10}), "nongreedy_fig2")[("nongreedy_over_co2", "connect4")]
    assert few["status"] == CLAIM_FAILS


def test_peaks_are_compared_over_the_sizes_both_curves_reach():
    """GBDT's point at 16,000 leaves is past RGF's largest size (1,000): the paper draws both curves to one size."""
    frame = pd.DataFrame([("s", "rgf_l2", "l2=1", 1000, 0.60), ("s", "gbdt", "J=8", 800, 0.62),
                          ("s", "gbdt", "J=8", 16000, 0.50)],
                         columns=["dataset", "method", "variant", "n_leaves", "test_rmse"]).assign(n_seeds=1)
    claim = Claim("peak", "rgf", "t", "w", "src", "rgf_fig7_synthetic", ("test_rmse",), lambda d: (
        Comparison(Number("RGF", ("rgf_l2",), best="min"), Number("GBDT", ("gbdt",), best="min"), BELOW),))
    row = _rows(frame, "rgf_fig7_synthetic", claims=[claim])[("peak", "s")]
    assert row["status"] == CLAIM_HOLDS and "0.62" in row["note"] and "at 800 leaves" in row["note"]


def test_a_table_mixing_regression_and_classification_sets_compares_each_on_its_own_column():
    """Fig. 10's table holds Houses (test_rmse) beside Nursery (test_error): each data set's claim reads the column
    its own rows fill, not the first column any row fills (which left every classification set "not run yet")."""
    rows = [("houses", "rgf_l2", "l2=1", 1000, 0.34, None), ("houses", "gbdt", "J=8", 1000, 0.35, None),
            ("nursery", "rgf_l2_clf", "l2=0.1", 1000, None, 1.6), ("nursery", "gbdt_sq_clf", "J=16", 1000, None, 1.84)]
    frame = pd.DataFrame(rows, columns=["dataset", "method", "variant", "n_leaves", "test_rmse", "test_error"])
    out = _rows(frame.assign(n_seeds=1), "rgf_fig10_real")
    assert out[("rgf_fig10_merit", "houses")]["status"] == CLAIM_HOLDS
    nursery = out[("rgf_fig10_merit", "nursery")]
    assert nursery["status"] == CLAIM_HOLDS and "1.6 below" in nursery["note"] and "1.84" in nursery["note"]


def test_claims_of_the_committed_paper_tables():
    """The rows reported in issue #38: CO2's 10 trees against RF's 1000 on Letter fails (3.99 against 3.88 since
    the tuning rule's re-run of 29 Nov; 4.11 before); the non-greedy tree was not the best at depth 6 on Connect-4
    (OC1 75.81 against 72.63, inside its 5.9 std) until its rows were re-made under the tuning rule (77.50)."""
    config = load_config(REPO / "config.yaml", ["profile=paper"])
    card = build_scorecard(read_tables(REPO / "results/paper"), build_plan(config), config, profile="paper")
    claims = card[card["claim"] != ""].set_index("item")
    status = claims["status"].to_dict()
    assert status["CO2 claim: CO2 Forest with 10 trees beats Random Forest with 1000, Letter"] == CLAIM_FAILS
    letter = claims.loc["CO2 claim: CO2 Forest with 10 trees beats Random Forest with 1000, Letter"]
    assert letter["ours"] == pytest.approx(3.987, abs=1e-3) and letter["difference"] == pytest.approx(0.107, abs=1e-3)
    assert status["CO2 claim: CO2 Forest beats Random Forest and OC1 Forest, Connect-4"] == CLAIM_HOLDS
    satimage = claims.loc["CO2 claim: CO2 Forest beats Random Forest and OC1 Forest, SatImage"]
    assert satimage["status"] == CLAIM_FAILS and "within one seed's spread" in satimage["note"]
    # OC1 Forest's 1000 trees on Letter (3 seeds since stop 59: 3.98) above CO2 Forest's 2.31: holds, or offline where this
    # machine has no mirror of Letter
    assert status["CO2 claim: CO2 Forest beats Random Forest and OC1 Forest, Letter"] in (CLAIM_HOLDS, OFFLINE)
    # since stop 57's non-greedy rows under the tuning rule (depth 6: 77.50, the refit that collapsed is gone): holds
    # at every depth, the closest comparison at depth 12 above CO2 within one seed's spread
    best = claims.loc["Non-greedy claim: best test accuracy at every depth, Connect-4"]
    assert best["status"] == CLAIM_HOLDS and "28 of 28" in best["note"] and "depth 12 76.46" in best["note"]
    assert "within one seed's spread" in best["note"]
    assert status["Non-greedy claim: above CO2 at most depths, Connect-4"] == CLAIM_HOLDS
    # RGF Figs. 7-10 on the paper's grid, seed 0 (28 Nov 2026): the 64-leaf (R) set too (RGF-L2 lambda = 1 0.5562
    # against GBDT's 0.5821); the 2-leaf classification set where RGF-L2 is 1.9 points behind square-loss GBDT's stumps
    q64 = claims.loc["RGF claim (Fig. 7): RGF-L2 below GBDT with every λ, synthetic q=64 (regression)"]
    assert q64["status"] == CLAIM_HOLDS and "0.5562" in q64["note"] and "0.5821" in q64["note"]
    assert status["RGF claim (Fig. 7): RGF-L2 below GBDT with every λ, synthetic q=16 (regression)"] == CLAIM_HOLDS
    assert status["RGF claim (Fig. 10): RGF-L2 below GBDT on all but Adult, Houses"] == CLAIM_HOLDS
    # Letter (A-M), Nursery and Waveform, seed 0 (28 Nov 2026): RGF-L2's error below square-loss GBDT's on each
    for name, rgf, gbdt in (("Letter (A-M)", "7.475", "9.225"), ("Nursery", "1.6", "1.84"),
                            ("Waveform", "9.433", "10.03")):
        row = claims.loc[f"RGF claim (Fig. 10): RGF-L2 below GBDT on all but Adult, {name}"]
        if row["status"] != OFFLINE:  # a clone without the data mirror
            assert row["status"] == CLAIM_HOLDS and f"{rgf} below" in row["note"] and gbdt in row["note"], name
    q2 = claims.loc["RGF claim (Discussion): RGF-L2's peak rivals GBDT's, no significant improvement, "
                    "synthetic q=2 (classification)"]
    assert q2["status"] == CLAIM_FAILS and "9.82" in q2["note"] and "7.9" in q2["note"]
    # Adult on the paper's grid, seed 0 (28 Nov 2026): square-loss RGF-L2 14.08 against square-loss GBDT 13.99
    adult = claims.loc["RGF claim (Discussion): RGF-L2's peak rivals GBDT's, no significant improvement, Adult"]
    if adult["status"] != OFFLINE:  # offline where this machine has no mirror of Adult
        assert adult["status"] == CLAIM_HOLDS and "14.08" in adult["note"] and "13.99" in adult["note"]
    assert set(claims["status"]) <= {CLAIM_HOLDS, CLAIM_FAILS, NOT_RUN, OFFLINE}
    assert not any("Fashion-MNIST" in item for item in claims.index)  # a stand-in is not the paper's data
    markdown = (REPO / "results/paper/scorecard.md").read_text()
    assert "| claim fails | fails: CO2 Forest, 10 trees 3.987 ± 0.14 not below Random Forest, 1000 trees 3.88" in \
        markdown


@pytest.mark.skipif(not PAPERS.is_dir(), reason="the papers' texts are not on this machine")
@pytest.mark.parametrize("claim", CLAIMS, ids=[c.key for c in CLAIMS])
def test_each_claim_quotes_its_paper(claim):
    """The words are the paper's (compared on letters only: the texts' LaTeX and doubled digits aside)."""
    def letters(text):
        return re.sub(r"[^a-z]", "", text.replace("λ", "lambda").lower())

    paper = letters((PAPERS / PAPER_FILES[claim.paper]).read_text())
    assert letters(claim.words) in paper
    for quoted in re.findall(r'"([^"]+)"', claim.source):
        assert letters(quoted) in paper


def test_rgf_classification_claims_compare_square_loss_gbdt_only():
    """RGF paper Sec. 6 (Figs. 9-10: square loss for binary classification): the claims' GBDT is gbdt_sq_clf (+-1
    targets), never Fig. 11's exponential-loss gbdt_exp, even where gbdt_exp's error is the lower; with no
    square-loss GBDT in the table the claim waits rather than falling back to gbdt_exp."""
    def frame(*gbdts):
        rows = [("nursery", "rgf_l2_clf", "l2=1", 1000, 3.0)] + [("nursery", m, "J=8", 1000, e) for m, e in gbdts]
        return pd.DataFrame(rows, columns=["dataset", "method", "variant", "n_leaves", "test_error"]).assign(n_seeds=1)

    claim = [CLAIM["rgf_fig10_merit"]]
    both = _rows(frame(("gbdt_exp", 2.0), ("gbdt_sq_clf", 4.0)), "rgf_fig10_real", claims=claim)
    row = both[("rgf_fig10_merit", "nursery")]
    assert row["status"] == CLAIM_HOLDS and "4" in row["note"] and row["difference"] == pytest.approx(-1.0)
    waiting = _rows(frame(("gbdt_exp", 2.0)), "rgf_fig10_real", claims=claim)[("rgf_fig10_merit", "nursery")]
    assert waiting["status"] == NOT_RUN


def test_a_failing_claim_names_the_cause_it_was_chased_to_and_a_holding_one_does_not():
    """A claim's ``chased`` text (its study and note) joins the note only while the claim fails, as a worse row's
    cause does: once the numbers hold, a stale explanation would mislead."""
    def frame(rgf):
        rows = [("s", "rgf_l2_clf", "l2=1", 1000, rgf), ("s", "gbdt_sq_clf", "J=2", 1000, 7.9)]
        return pd.DataFrame(rows, columns=["dataset", "method", "variant", "n_leaves", "test_error"]).assign(n_seeds=1)

    claim = Claim("rivals", "rgf", "t", "w", "src", "rgf_fig9_synthetic", ("test_error",), lambda d: (
        Comparison(Number("RGF", ("rgf_l2_clf",), best="min"), Number("GBDT", ("gbdt_sq_clf",), best="min"), BELOW),),
        chased={"s": "the study's finding (studies/x.py)"})
    fails = _rows(frame(9.8), "rgf_fig9_synthetic", claims=[claim])[("rivals", "s")]
    assert fails["status"] == CLAIM_FAILS and fails["note"].endswith("chased: the study's finding (studies/x.py)")
    holds = _rows(frame(7.0), "rgf_fig9_synthetic", claims=[claim])[("rivals", "s")]
    assert holds["status"] == CLAIM_HOLDS and "chased" not in holds["note"]
