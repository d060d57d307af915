"""Captions of the Snakemake HTML report: which paper figure or table each output reproduces.

``caption(name)`` is used by ``workflow/rules/report.smk`` for every table and figure (``snakemake --report``).
Items listed in :data:`CAPTIONS` get a written caption; any other registered report name gets one built from
its name (``{paper}_{fig|table}{N}[_...]``), so a new table or figure is never left without one.
"""

import re

PAPERS = {
    "nongreedy": "Norouzi, Collins, Fleet and Kohli, *Efficient non-greedy optimization of decision trees* "
                 "(NIPS 2015)",
    "co2": "Norouzi, Collins, Johnson, Fleet and Kohli, *CO2 Forest: improved random forest by continuous "
           "optimization of oblique splits* (2015)",
    "tao": "Carreira-Perpiñán and Tavallali, *Alternating optimization of decision trees, with application to "
           "learning sparse oblique trees* (NeurIPS 2018)",
    "rgf": "Johnson and Zhang, *Learning nonlinear functions using regularized greedy forest* (TPAMI 2014)",
}

CAPTIONS = {
    "nongreedy_fig2": "Reproduces **Fig. 2** of the non-greedy trees paper: training and test accuracy of single "
                      "trees against the depth limit (axis-aligned, random oblique, OC1, CO2 and non-greedy trees), "
                      "hyper-parameters chosen per depth on validation and refit on train+validation "
                      "(``chosen_params``, per seed where they differ). A point is one draw of the SGD: at fixed "
                      "hyper-parameters and split, a CO2 tree's test accuracy moves with its own seed alone "
                      "(Connect-4 split 0, depth 10, nu 0.1, eta 0.03, seeds 0-9: 75.14 mean, 0.93 standard "
                      "deviation, 73.31 to 76.26; studies/co2_seed_spread.py, docs/nongreedy.md), so a single-seed "
                      "difference of two points at one depth is within it.",
    "nongreedy_fig3": "Reproduces **Fig. 3** of the non-greedy trees paper: leaves of non-greedy trees that training "
                      "points reach (active leaves) against depth for each norm bound nu, with the number of leaves "
                      "of the axis-aligned tree of the same depth (dotted in the figure).",
    "nongreedy_fig3_nu": "Reproduces **Fig. 3** of the non-greedy trees paper: active leaves against depth, one line "
                         "per nu; the axis-aligned tree's leaves dotted.",
    "nongreedy_fig4_runtime": "Reproduces **Fig. 4** of the non-greedy trees paper: seconds for 1000 epochs of SGD "
                              "with loss-augmented inference (exact, eq. (10)-(12)) and its fast variant (eq. (13)) "
                              "against depth, estimated from a few timed epochs; ``speedup`` = exact / fast.",
    "co2_table1": "Reproduces **Table I** of the CO2 Forest paper: test error (%) of Random Forest, OC1 Forest and "
                  "CO2 Forest against the number of trees, with the paper's numbers in ``paper_value``.",
    "co2_fig1": "Reproduces **Fig. 1** of the CO2 Forest paper: training and validation error of single CO2 trees "
                "against depth for several values of the norm bound nu, axis-aligned trees as the baseline.",
    "co2_fig2": "Reproduces **Fig. 2** of the CO2 Forest paper: test error against the (log) number of trees for "
                "Random Forest, OC1 Forest and CO2 Forest.",
    "co2_table2_jaccard": "Reproduces **Table II** of the CO2 Forest paper: test class-average Jaccard score (%) "
                          "of Random Forest, Two-probe Forest and CO2 Forest with 16 and 32 trees on face-part "
                          "segmentation; ``paper_value`` holds the paper's LFW numbers (empty on synthetic faces).",
    "co2_fig4_jaccard": "Reproduces **Fig. 4** of the CO2 Forest paper: test Jaccard score (%) of forests of 16 "
                        "trees against the maximum tree depth (left) and against the number of trees (right).",
    "co2_fig3_segmentation": "Reproduces **Fig. 3** of the CO2 Forest paper: input, ground truth and the labelling "
                             "of Random Forest, Two-probe Forest and CO2 Forest for test images: each method's "
                             "median image by Jaccard score, the images with the highest mean and the highest "
                             "variance of the scores across methods, then random images (score in each panel).",
    "rgf_fig7_synthetic": "Reproduces **Fig. 7** of the RGF paper: test RMSE against model size (total leaves) on "
                          "the synthetic data from 64- and 16-leaf trees.",
    "rgf_fig8_synthetic": "Reproduces **Fig. 8** of the RGF paper: test RMSE against model size on the synthetic "
                          "data from 4- and 2-leaf trees.",
    "rgf_fig9_synthetic": "Reproduces **Fig. 9** of the RGF paper: test error against model size on the synthetic "
                          "classification data.",
    "rgf_fig10_real": "Reproduces **Fig. 10** of the RGF paper: test error or RMSE against model size on the real "
                      "data sets (2,000 training points per run).",
}

CAPTIONS.update({
    "tao_fixed_depth": "A **fixed-depth comparison** not printed in the TAO paper: test accuracy (%) of sparse "
                       "oblique TAO trees and of the CART tree they start from, at the depth per data set of the "
                       "published numbers beside them (DTSemNet, ECAI 2024, Table 3, quoting TAO from Zharmagambetov "
                       "et al. 2021 and CART from the DGT paper).",
    "tao_table1": "Reproduces **Table 1** of the TAO paper: test error (%) and inference time of sparse oblique TAO "
                  "trees, C chosen on validation, with the paper's numbers beside.",
    "tao_fig1_path": "Reproduces **Fig. 1** of the TAO paper: the sparsity path over C (each C warm-started from "
                     "the previous tree): error, non-zero weights and tree size.",
    "tao_init": "Not in any paper: TAO refining a CART tree and a CO2 tree of the same depth (initial tree vs "
                "refined tree).",
    "beyond_optimal": "Not in any paper: training and test accuracy (%) and fit time against the depth limit of "
                      "CART, TAO (axis-aligned and sparse oblique, from CART and from the optimal tree), CO2 and "
                      "non-greedy trees beside the provably optimal axis-aligned tree of the same depth (STreeD, "
                      "van der Linden et al., NeurIPS 2023) over quantile and CART thresholds; open markers where "
                      "optimality was not proven within the time limit (docs/optimal.md).",
    "decade_fixed_height": "Not in any paper: none of the four papers makes this comparison. Test and training "
                           "accuracy (%) of our single trees at the fixed height DTSemNet's Table 3 gives each data "
                           "set (CART, CO2, non-greedy, sparse oblique TAO from CART and from the non-greedy tree, "
                           "the optimal axis-aligned tree where the height is at most 4), chosen on validation and "
                           "trained on the training rows of that table. The ``published_*`` columns (grey lines in "
                           "the figure) are the test accuracies **published** in DTSemNet's Table 3 (Panda et al., "
                           "ECAI 2024) for DTSemNet, TAO (as quoted from Zharmagambetov et al. 2021), DGT (TMLR "
                           "2022) and CART: other authors' numbers on their own splits, not ours.",
})

CAPTIONS["scorecard"] = (
    "**Reproduction scorecard**: every paper number the profile's config reproduces, the paper's value and where it "
    "is printed beside ours (mean and std over seeds), the difference and a status (within tolerance / better / "
    "worse, with its chased cause in the note / protocol offset, a measured one / not like for like, with a note on how "
    "ours differs / not run yet / data not available offline), with "
    "the table and run folders it comes from; then the papers' sentences comparing methods, quoted, each checked "
    "on our tables per data set (claim holds / claim fails, the numbers compared in the note). The figure plots ours "
    "against the paper's value (numbers only), one panel per paper, with the line y = x. Made from the tables by "
    "``treeopt.experiments.report.scorecard``; the same as ``scorecard.md`` beside the tables.")

# Report names that do not spell their paper item (``{paper}_{fig|table}{N}``): the item they reproduce.
ITEMS = {"tao_fixed_depth": ("tao", "fixed-depth comparison")}
NOT_IN_A_PAPER = frozenset({"tao_init", "beyond_optimal", "decade_fixed_height"})

_ITEM = re.compile(r"^(?P<paper>[a-z0-9]+?)_(?P<kind>fig|table)(?P<number>\d+)(?P<rest>_.*)?$")


def paper_item(name):
    """("CO2 Forest paper citation", "Table II"-style item) parsed from a report name, or (None, None)."""
    if name in ITEMS:
        return PAPERS[ITEMS[name][0]], ITEMS[name][1]
    match = _ITEM.match(name)
    if not match or match["paper"] not in PAPERS:
        return None, None
    kind = "Fig." if match["kind"] == "fig" else "Table"
    return PAPERS[match["paper"]], f"{kind} {match['number']}"


def caption(name, dataset=None, profile=None):
    """reStructuredText caption naming the paper figure/table reproduced by report output ``name``."""
    text = CAPTIONS.get(name)
    if text is None:
        paper, item = paper_item(name)
        text = (f"Reproduces **{item}** of {paper}." if paper else f"Report output ``{name}``.")
    prefix = name.split("_", 1)[0]
    if name in CAPTIONS and prefix in PAPERS:
        text += f" Paper: {PAPERS[prefix]}."
    where = ", ".join(p for p in (f"data set {dataset}" if dataset else "", f"profile {profile}" if profile else "")
                      if p)
    return text + (f" ({where})" if where else "")


# Report sections, numbered because the report's menu sorts them by name: the scorecard first, then the papers.
SCORECARD_CATEGORY = "1. Scorecard"
CATEGORIES = {"nongreedy": "2. Non-greedy trees", "co2": "3. CO2 Forest", "tao": "4. TAO", "rgf": "5. RGF",
              "beyond": "6. Beyond the papers", "decade": "6. Beyond the papers"}


def category(name):
    """Report section of an output: the scorecard, or the paper its table or figure comes from."""
    if name == "scorecard":
        return SCORECARD_CATEGORY
    return CATEGORIES.get(name.split("_", 1)[0], "Other")
