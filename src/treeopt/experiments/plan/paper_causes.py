"""Why a scorecard row is worse than the paper: each "worse" row chased to a cause (issue #38), written once beside
the paper numbers (:mod:`.paper_values`) and the claims (:mod:`.paper_claims`).

A cause is one of two kinds:

* ``PROTOCOL``: the distance comes from how the number is measured (the split, an encoding, the criterion of the
  paper's own baseline), not from the method. It must be *measured*, and the scorecard checks the measurement
  against the committed tables each time it is made: either the paper's own ``baseline`` in the same table, data set
  and setting is off in the same direction by at least as much as this row (the method is no further from the
  paper than the protocol's baseline is), or ``measured`` (our number under the paper's protocol, from the study)
  is within this row's tolerance of the paper's value. When the check holds the row's status is "protocol offset";
  when it does not, the row stays "worse" and its note says the offset was not shown.
* ``OURS``: the cause is in our method or our protocol (or was chased and not found: ``text`` says what was ruled
  out). The row stays "worse"; the note says the cause.

Every cause names the study that measured it (``study``: the script and its log under ``studies/``) and the method
note where it is written (``doc``). A cause applies to a row only while the row is worse: a row that comes within
tolerance after a re-run keeps no stale note.
"""

from dataclasses import dataclass

PROTOCOL, OURS = "protocol", "ours"


@dataclass(frozen=True)
class Cause:
    table: str
    dataset: str
    methods: tuple
    kind: str  # PROTOCOL or OURS
    text: str  # the cause, with the numbers that show it
    study: str  # the study script and its log
    doc: str  # the method note's section
    baseline: str = ""  # PROTOCOL: the paper's own baseline in the same table whose offset covers this row's
    measured: float = None  # PROTOCOL: our number under the paper's protocol (the study's mean over seeds)
    measured_std: float = None  # its std over seeds (the row's tolerance uses it as it uses ours)
    measured_seeds: int = 1

    def __post_init__(self):
        if self.kind not in (PROTOCOL, OURS):
            raise ValueError(f"cause kind must be {PROTOCOL!r} or {OURS!r}, not {self.kind!r}")
        if self.kind == PROTOCOL and not self.baseline and self.measured is None:
            raise ValueError(f"a protocol cause ({self.table}, {self.dataset}) needs a baseline or a measured number")


CAUSES = (
    # ---- CO2 Forest paper, Table I ------------------------------------------------------------------------------
    Cause("co2_table1", "letter", ("co2_forest",), OURS,
          "the bagged CO2 trees are weaker than the paper's: random forest is within tolerance on this split at 10, 30 "
          "and 1000 trees, so the split is not the cause; the same forest without bagging (co2_forest_nobag, this "
          "table) is 3.33 / 2.31 / 1.98 at 10 / 30 / 1000 trees; no scaling ([-1, 1]), norm bound, initial split or "
          "SGD schedule variant closed the gap on validation",
          "studies/co2_letter_gap.py (studies/results/co2_letter_gap.log), studies/co2_no_bootstrap.py "
          "(studies/results/co2_letter_no_bootstrap_seeds.log)",
          "docs/co2.md, 'What was tried on the Letter gap'"),
    Cause("co2_table1", "connect4", ("co2_forest",), OURS,
          "not found; ruled out: an under-tuned grid (validation chose the grid's corner nu 0.1, eta 0.03 on every "
          "seed; the one tuning rule's grown candidates score worse on validation on all three seeds, nu 0.03 / "
          "eta 0.1 against the corner: 17.08 / 16.93 vs 16.53, 17.35 / 17.51 vs 17.04, 17.04 / 16.61 vs 16.33%) "
          "and the split (random forest within tolerance at 10, 30 and 1000 trees). What is seen: about 72% of the "
          "forest's splits are axis fallbacks (a stump that did not beat its axis start; at nu >= 1 the scaled "
          "axis start is stationary for binary features), so CO2's gain over random forest at 10 trees is 0.6 points "
          "where the paper's is 1.8; at 30 and 1000 trees the rows are within tolerance",
          "studies/co2_connect4_grown.py (studies/results/co2_connect4_grown.log), studies/co2_connect4_chase.py "
          "(studies/results/co2_connect4_chase.log)",
          "docs/co2.md, 'Connect-4: why stumps do not move at ν ≥ 1'"),
    # ---- TAO fixed depth (DTSemNet's Table 3, quoting Zharmagambetov et al. 2021 and the DGT paper) --------------
    Cause("tao_fixed_depth", "connect4", ("cart",), PROTOCOL,
          "the baseline's criterion: our CART is the project's information-gain tree; the published CART's criterion "
          "is not stated (scikit-learn's default is Gini). Gini CART of depth 8 on the same splits, refit on "
          "train+validation: 72.54 / 72.39 / 73.39 (seeds 0-2); entropy 70.66 / 70.92 / 71.17; neither DTSemNet's "
          "split sizes nor ordinal cell codes reach 74",
          "studies/tao_connect4_cart_offset.py (studies/results/tao_connect4_cart_offset.log)",
          "docs/tao.md, 'Connect-4 at depth 8: a protocol offset'",
          measured=72.77, measured_std=0.54, measured_seeds=3),
    Cause("tao_fixed_depth", "connect4", ("tao_oblique",), PROTOCOL,
          "the published numbers' protocol: their own CART baseline is further from ours than TAO is (TAO starts from "
          "our CART; its gain over it, 9.5 points, is larger than the published 7.2)",
          "studies/tao_connect4_cart_offset.py (studies/results/tao_connect4_cart_offset.log), "
          "studies/tao_connect4_refit.py",
          "docs/tao.md, 'Connect-4 at depth 8: a protocol offset'",
          baseline="cart"),
    # ---- TAO paper, Table 1 --------------------------------------------------------------------------------------
    Cause("tao_table1", "letter", ("tao_oblique",), OURS,
          "not found; ruled out on validation: node solves (TAO sits at its fixed point, the SVM's care loss equals "
          "scikit-learn's), [-1, 1] scaling (moves the C axis about 3x, no better), initial trees (CART, Gini, deeper, "
          "OC1, random), a 41-step C path, an l1 logistic surrogate; one seed, and the best validation error moves "
          "over 9.11-9.80% with the seed alone. The paper takes the best of several initial trees without saying "
          "on which set; ours is chosen on validation",
          "studies/tao_letter_harness.py, studies/tao_letter_leads.py (studies/results/tao_letter_*.csv), "
          "studies/tao_node_check.py",
          "docs/tao.md, 'The Letter chase'"),
)


def cause_of(table, dataset, method):
    """The cause written for a row of ``table`` (data set, method), or None."""
    for cause in CAUSES:
        if cause.table == table and cause.dataset == dataset and method in cause.methods:
            return cause
    return None
