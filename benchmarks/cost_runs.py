"""Timed runs for the cost model (``treeopt.experiments.infra.cost``): calibration, and the check against real runs.

    python benchmarks/cost_runs.py calibrate [--only NAME ...]   # timed runs -> benchmarks/results/cost_calibration.jsonl
    python benchmarks/cost_runs.py fit                           # coefficients -> src/treeopt/experiments/infra/
                                                                 #   cost_model.yaml
    python benchmarks/cost_runs.py check [--only NAME ...]       # paper-profile runs -> benchmarks/results/cost_model_check.jsonl
    python benchmarks/cost_runs.py collect [DIR ...]             # fit times of the workflow's paper-profile run folders
                                                                 # -> benchmarks/results/cost_model_check_runs.jsonl
    python benchmarks/cost_runs.py table                         # predicted vs measured -> benchmarks/results/cost_model_check.csv
                                                                 # and, per method, cost_model_check_summary.csv
                                                                 # (plus fit times of earlier sessions' paper runs and
                                                                 # of the collected run folders)

Every run goes through ``benchmarks/run_memory.py`` (the workflow's own runner, one process per run) and records
its process CPU seconds and peak resident memory. Calibration runs are small versions of the paper profile's runs
(fewer trees, shallower trees, the small data sets); each method's CPU coefficient is the geometric mean of
``(process CPU seconds - start_seconds) / work`` over its calibration runs. Memory coefficients are not fitted
(on small runs the excess over ``base_mb`` is noise): they are the bytes per unit of the buffers each family's fit
holds, written in the model file, and the check runs test them at size. The check runs are other runs: the
paper profile's own run specifications (its data sets, sizes and grids) on the data sets this machine has, none
of them used for calibration; ``table`` writes each with the model's prediction and the ratio.

``collect`` reads run folders the workflow made for the paper profile (``params.yaml`` and ``metrics.json`` of each
``seed*`` folder; nothing is rerun) and keeps what the check needs: the run's specification and its ``fit_seconds``
(the wall time of the fit alone, one thread, on whatever load the machine had) and the run's wall time inside the
runner (from its params.yaml to its log's last line: loading, fit, scoring, writing). ``table`` predicts each of
them a priori, from the specification only (never from what the run did, e.g. the epochs a stop rule left out):
the fit as the model's CPU seconds less ``start_seconds``, the run as its CPU seconds less the start's share spent
before the runner (imports, measured on the calibration runs); it skips any run whose specification is one of the
calibration runs'. The model predicts CPU seconds; these runs recorded wall seconds only, on a shared machine.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
CALIBRATION = RESULTS / "cost_calibration.jsonl"
CHECK = RESULTS / "cost_model_check.jsonl"
CHECK_CSV = RESULTS / "cost_model_check.csv"
CHECK_FOLDERS = RESULTS / "cost_model_check_runs.jsonl"
CHECK_SUMMARY = RESULTS / "cost_model_check_summary.csv"
# the paper-profile run folders collected by default (worktrees of this machine where the paper profile's
# non-greedy Fig. 2 on Connect-4 and the beyond_optimal experiments ran, with n_jobs 1)
RUN_ROOTS = ["/work/ng/results/runs/connect4/cart", "/work/ng/results/runs/connect4/co2_tree",
             "/work/ng/results/runs/connect4/random_oblique_tree", "/work/ng/results/runs/connect4/nongreedy_tree",
             "/work/optimal/results/runs/satimage", "/work/optimal/results/runs/connect4"]
MODEL = ROOT / "src/treeopt/experiments/infra/cost_model.yaml"
PROCESSED = ROOT / "data/processed"  # prepared splits (run shapes are read from their headers)

# --smoke: one tiny run of each kind, so the script's every command can be re-run in seconds (tests)
SMOKE_CALIBRATION_RUNS = {
    "cart/digits/6": ("digits", "cart", {"max_depth": 6, "min_samples_leaf": 1}, "train", None, 1),
}
SMOKE_CHECK_RUNS = {
    "cart/digits/4": ("digits", "cart", {"max_depth": 4, "min_samples_leaf": 1}, "train", None, 1),
}

# name: (dataset, method, params, fit_on, stages {param: [values]}, n_jobs)
CALIBRATION_RUNS = {
    "co2_forest/satimage/10": ("satimage", "co2_forest", {"n_estimators": 10, "nu": 1, "learning_rate": 0.01,
                                                        "max_features": "p^0.5"}, "train", None, 1),
    "co2_forest/letter/10": ("letter", "co2_forest", {"n_estimators": 10, "nu": 4, "learning_rate": 0.01,
                                                    "max_features": "p^0.7"}, "train", None, 1),
    "co2_forest/connect4/40": ("connect4", "co2_forest", {"nu": 0.1, "learning_rate": 0.03, "max_features": "p^0.9",
                                                        "n_estimators": 40}, "trainval",
                               {"n_estimators": [10, 30, 40]}, 2),
    "oc1_forest/satimage/1": ("satimage", "oc1_forest", {"n_estimators": 1, "max_features": "p^0.5"}, "train",
                              None, 1),
    "rf/letter/100": ("letter", "rf", {"n_estimators": 100, "max_features": "p^0.5"}, "train", None, 1),
    "rf/satimage/300": ("satimage", "rf", {"n_estimators": 300, "max_features": "p^0.9"}, "train", None, 1),
    # CART and a CO2 tree on a small set cost no more than the start every run pays: calibrated on larger sets
    "cart/covtype_like/12": ("covtype_like", "cart", {"max_depth": 12, "min_samples_leaf": 1}, "train", None, 1),
    "co2_tree/connect4/6": ("connect4", "co2_tree", {"max_depth": 6, "nu": 1, "learning_rate": 0.01,
                                                     "max_features": None}, "train", None, 1),
    "random_oblique_tree/satimage/8": ("satimage", "random_oblique_tree", {"max_depth": 8, "n_hyperplanes": 100},
                                       "train", None, 1),
    "oc1_tree/satimage/6": ("satimage", "oc1_tree", {"max_depth": 6, "max_features": "p^0.5"}, "train", None, 1),
    "nongreedy_tree/satimage/6": ("satimage", "nongreedy_tree", {"max_depth": 6, "nu": 1, "learning_rate": 0.01,
                                                                 "init_params": {"nu": 1, "learning_rate": 0.01}},
                                  "train", None, 1),
    "tao_oblique/satimage/4": ("satimage", "tao_oblique", {"max_depth": 4, "C": 0.1, "warm_start_C": [100, 10, 1],
                                                           "accept": "objective"}, "train", None, 1),
    "gbdt/rgf_synth_q64_reg/100": ("rgf_synth_q64_reg", "gbdt", {"n_estimators": 100, "max_leaf_nodes": 16,
                                                                 "learning_rate": 0.1, "min_samples_leaf": 10},
                                   "train", None, 1),
    "rgf_l2/rgf_synth_q64_reg/1000": ("rgf_synth_q64_reg", "rgf_l2", {"max_leaf_nodes": 1000, "l2": 0.1},
                                      "train", None, 1),
    # the optimal tree (STreeD) on a set no check run uses, at a depth it proves well within the time limit
    "optimal_axis/letter/3": ("letter", "optimal_axis", {"max_depth": 3, "n_thresholds": 5, "time_limit": 480},
                              "train", None, 1),
    # second sizes, so a family's fixed part (kernels loaded, a small tree's per-node work) and its per-unit cost
    # are told apart (none of them a check run's specification)
    "gbdt/rgf_synth_q16_reg/1000": ("rgf_synth_q16_reg", "gbdt", {"n_estimators": 1000, "max_leaf_nodes": 16,
                                                                  "learning_rate": 0.1, "min_samples_leaf": 10},
                                    "train", None, 1),
    "rgf_l2/rgf_synth_q16_reg/5000": ("rgf_synth_q16_reg", "rgf_l2", {"max_leaf_nodes": 5000, "l2": 0.1},
                                      "train", None, 1),
    "random_oblique_tree/fashion_mnist/4": ("fashion_mnist", "random_oblique_tree",
                                            {"max_depth": 4, "n_hyperplanes": 100}, "train", None, 1),
    "random_oblique_tree/letter/12": ("letter", "random_oblique_tree", {"max_depth": 12, "n_hyperplanes": 100},
                                      "train", None, 1),
    "nongreedy_tree/fashion_mnist/4": ("fashion_mnist", "nongreedy_tree",
                                       {"max_depth": 4, "nu": 1, "learning_rate": 0.01, "max_epochs": 10,
                                        "init_params": {"nu": 1, "learning_rate": 0.01}}, "train", None, 1),
    # added after the OC1 tree's check run on Connect-4 (3.1x its prediction from the one SatImage run): a second
    # size for the family, on another data set
    "oc1_tree/letter/8": ("letter", "oc1_tree", {"max_depth": 8, "max_features": "p^0.5", "n_restarts": 5},
                          "train", None, 1),
    "tao_oblique/letter/6": ("letter", "tao_oblique", {"max_depth": 6, "C": 1, "warm_start_C": [100, 10],
                                                       "accept": "objective"}, "train", None, 1),
    "adaboost/rgf_synth_q4_cls/100": ("rgf_synth_q4_cls", "adaboost", {"n_estimators": 100, "max_leaf_nodes": 8,
                                                                       "min_samples_leaf": 10}, "train", None, 1),
    # added 29 Nov 2026 (stop 62): the exponential-loss GBDT's own coefficient, on exponential-loss fits (its trees
    # stop growing once the margins pass the loss's floor, cost_model.yaml collapse; the square-loss coefficient
    # above is fitted on regression trees, deeper per leaf); two rgf_real sets and corners no check run uses
    **{f"gbdt_exp/{name}/1000 (rgf_real, J {J}, s {s})": (name, "gbdt_exp", {
        "n_estimators": 1000, "max_leaf_nodes": J, "learning_rate": s, "min_samples_leaf": 10}, "train",
        {"n_estimators": [10, 30, 100, 300, 1000]}, 1) for name, J, s in (("waveform40", 64, 0.1), ("letter_am", 8, 1.0))},
}

# Methods whose coefficients come from fits at the paper profile's sizes, not from the small calibration runs above
# (cost_model.yaml says where: e.g. OC1 Forest from one tree on Letter and on a Protein-shaped set, timed by
# benchmarks/bench_oc1.py): `fit` leaves them as they are. Small runs of a fast kernel measure the process start.
SET_AT_SIZE = {"nongreedy_tree", "oc1_forest", "oc1_tree", "random_oblique_tree", "rf", "tao_oblique"}

# TAO Table 1's fixed parameters in the paper profile (config.yaml tao_table1): the C path, accept, tol
TAO_TABLE1 = {"warm_start_C": [100, 30, 10, 3, 1.7, 1, 0.7, 0.5, 0.3, 0.2], "accept": "always", "tol": 0}
CHECK_RUNS = {  # cheapest first: `check` runs them in this order
    "cart/connect4/12 (candidate)": ("connect4", "cart", {"max_depth": 12, "min_samples_leaf": 5}, "train", None, 1),
    "gbdt/rgf_synth_q64_reg/1000": ("rgf_synth_q64_reg", "gbdt", {"n_estimators": 1000, "max_leaf_nodes": 64,
                                                                  "learning_rate": 0.01, "min_samples_leaf": 10},
                                    "train", {"n_estimators": [10, 30, 100, 300, 1000]}, 1),
    "rgf_l2_clf/adult/10000": ("adult", "rgf_l2_clf", {"max_leaf_nodes": 10000, "l2": 0.01}, "train",
                               {"max_leaf_nodes": [500, 1000, 2000, 5000, 10000]}, 1),
    "rf/adult/1000 (rgf_rf)": ("adult", "rf", {"n_estimators": 1000, "max_features": 0.5}, "train",
                               {"n_estimators": [1, 10, 100, 1000]}, 1),
    "co2_forest/letter/30 (final)": ("letter", "co2_forest", {"n_estimators": 30, "nu": 4, "learning_rate": 0.01,
                                                              "max_features": "p^0.5"},
                                     "trainval", {"n_estimators": [1, 3, 10, 30]}, 2),
    "co2_forest/satimage/30 (candidate)": ("satimage", "co2_forest", {"n_estimators": 30, "nu": 4,
                                                                      "learning_rate": 0.03, "max_features": "p^0.7"},
                                           "train", {"n_estimators": [30]}, 1),
    "tao_oblique/satimage/6 (candidate)": ("satimage", "tao_oblique", {"max_depth": 6, "C": 1,
                                                                       "warm_start_C": [100, 10, 1, 0.1],
                                                                       "accept": "objective"}, "train", None, 1),
    "random_oblique_tree/connect4/10 (candidate)": ("connect4", "random_oblique_tree",
                                                    {"max_depth": 10, "n_hyperplanes": 100}, "train", None, 1),
    "cart/fashion_mnist/14 (co2_fig1)": ("fashion_mnist", "cart", {"max_depth": 14}, "train", None, 1),
    "rf/letter/1000 (candidate)": ("letter", "rf", {"n_estimators": 1000, "max_features": "p^0.7"}, "train",
                                   {"n_estimators": [1000]}, 1),
    "nongreedy_tree/connect4/8 (candidate)": ("connect4", "nongreedy_tree",
                                              {"max_depth": 8, "nu": 10, "learning_rate": 0.01,
                                               "init_params": {"nu": 10, "learning_rate": 0.01}}, "train", None, 1),
    "co2_tree/fashion_mnist/8 (co2_fig1)": ("fashion_mnist", "co2_tree", {"max_depth": 8, "nu": 1,
                                                                          "max_features": "p^0.5"}, "train", None, 1),
    "co2_forest/connect4/30 (final)": ("connect4", "co2_forest", {"n_estimators": 30, "nu": 0.1,
                                                                  "learning_rate": 0.03, "max_features": "p^0.9"},
                                       "trainval", {"n_estimators": [1, 3, 10, 30]}, 2),
    "co2_forest/covtype_like/30 (final)": ("covtype_like", "co2_forest", {"n_estimators": 30, "nu": 1,
                                                                          "learning_rate": 0.01,
                                                                          "max_features": "p^0.5"},
                                           "trainval", {"n_estimators": [1, 3, 10, 30]}, 2),
    "co2_forest/fashion_mnist/30 (final)": ("fashion_mnist", "co2_forest", {"n_estimators": 30, "nu": 1,
                                                                            "learning_rate": 0.01,
                                                                            "max_features": "p^0.5"},
                                            "trainval", {"n_estimators": [1, 3, 10, 30]}, 2),
    # added 26 Nov 2026 after the model's recalibration, before they were run: the non-greedy Fig. 2 finals'
    # methods at the sizes the workflow ran them (their workflow runs' wall times under load were the worst misses)
    "co2_tree/connect4/12 (nongreedy_fig2 final)": ("connect4", "co2_tree", {"max_depth": 12, "nu": 0.1,
                                                                             "learning_rate": 0.03,
                                                                             "max_features": None},
                                                    "trainval", None, 1),
    "nongreedy_tree/connect4/14 (nongreedy_fig2 final)": (
        "connect4", "nongreedy_tree", {"max_depth": 14, "nu": 10, "learning_rate": 0.3, "max_epochs": 80,
                                       "n_iter_no_change": 10, "tol": 0.001,
                                       "init_params": {"nu": 0.1, "learning_rate": 0.03}}, "trainval", None, 1),
    "oc1_tree/connect4/6 (nongreedy_fig2 final)": ("connect4", "oc1_tree", {"max_depth": 6, "max_features": "p^0.5",
                                                                            "n_restarts": 5}, "trainval", None, 1),
    # OC1 at a width the calibration (p = 16, 36) and the Connect-4 check (126) do not reach: Fashion-MNIST's 784
    "oc1_tree/fashion_mnist/6 (nongreedy_fig2 candidate)": ("fashion_mnist", "oc1_tree", {
        "max_depth": 6, "max_features": "p^0.5", "n_restarts": 5}, "train", None, 1),
    # OC1 at the paper profile's sizes with more restarts and levels (issue #37: the oc1_tree coefficient is set from
    # these, not from small runs whose process start outweighs the fit)
    "oc1_tree/letter/12 (nongreedy-size tree, 20 restarts)": ("letter", "oc1_tree", {
        "max_depth": 12, "max_features": "p^0.5", "n_restarts": 20}, "train", None, 1),
    "oc1_tree/fashion_mnist/8 (nongreedy_fig2 candidate)": ("fashion_mnist", "oc1_tree", {
        "max_depth": 8, "max_features": "p^0.5", "n_restarts": 10}, "train", None, 1),
    "oc1_tree/fashion_mnist/18 (nongreedy_fig2 candidate)": ("fashion_mnist", "oc1_tree", {
        "max_depth": 18, "max_features": "p^0.5", "n_restarts": 5}, "train", None, 1),
    "oc1_tree/connect4/10 (nongreedy_fig2 candidate)": ("connect4", "oc1_tree", {
        "max_depth": 10, "max_features": "p^0.5", "n_restarts": 10}, "train", None, 1),
    # TAO at Fashion-MNIST's size (TAO Table 1's MNIST grid: CART start, path 100 -> C)
    "tao_oblique/fashion_mnist/8 (tao_table1 candidate, C 3)": ("fashion_mnist", "tao_oblique", {
        "max_depth": 8, "init": "cart", "C": 3, **TAO_TABLE1}, "train", None, 1),
    # TAO at Fashion-MNIST's size off the calibration point: another experiment's path (tao_fixed_depth_d8: CART
    # start, warm starts 100 -> 0.1, accept=objective) down to a small C (issue #37: an independent check)
    "tao_oblique/fashion_mnist/8 (tao_fixed_depth_d8 path run, C 0.01)": ("fashion_mnist", "tao_oblique", {
        "max_depth": 8, "C": 0.01, "warm_start_C": [100, 10, 1, 0.1], "accept": "objective"}, "train", None, 1),
    "tao_oblique/fashion_mnist/8 (tao_table1 path run, cart start, C 0.1)": ("fashion_mnist", "tao_oblique", {
        "max_depth": 8, "init": "cart", "C": 0.1, **TAO_TABLE1}, "train", None, 1),
    "tao_oblique/letter/12 (tao_table1 candidate, C 0.2)": ("letter", "tao_oblique", {
        "max_depth": 12, "init": "cart", "C": 0.2, **TAO_TABLE1}, "train", None, 1),
    # random oblique trees at the paper profile's sizes after the blocked projections (issue #37)
    "random_oblique_tree/fashion_mnist/6 (nongreedy_fig2 candidate, 1000 hyperplanes)": (
        "fashion_mnist", "random_oblique_tree", {"max_depth": 6, "n_hyperplanes": 1000}, "train", None, 1),
    "random_oblique_tree/letter/12 (nongreedy-size tree, 1000 hyperplanes)": (
        "letter", "random_oblique_tree", {"max_depth": 12, "n_hyperplanes": 1000}, "train", None, 1),
    "random_oblique_tree/fashion_mnist/12 (nongreedy_fig2 candidate, 300 hyperplanes)": (
        "fashion_mnist", "random_oblique_tree", {"max_depth": 12, "n_hyperplanes": 300}, "train", None, 1),
    # the path runs tao_table1 fits since its C grid is read off one path per depth and start (plan.paths)
    "tao_oblique/letter/12 (tao_table1 path run, oc1 start, C 0.1)": ("letter", "tao_oblique", {
        "max_depth": 12, "init": "oc1", "C": 0.1, **TAO_TABLE1}, "train", None, 1),
    "tao_oblique/letter/8 (tao_table1 path run, random start, C 0.1)": ("letter", "tao_oblique", {
        "max_depth": 8, "init": "random", "C": 0.1, **TAO_TABLE1}, "train", None, 1),
    "rf/connect4/1000 (final)": ("connect4", "rf", {"n_estimators": 1000, "max_features": "p^0.5"}, "trainval",
                                 {"n_estimators": [1, 3, 10, 30, 100, 300, 1000]}, 1),
    # added 29 Nov 2026: the families over 5 CPU-h of the paper profile that had no check yet (issue #37). OC1 Forest's
    # coefficient is set from one tree on Letter's training part and one on a Protein-shaped set: a final's tree
    # block (50 trees, train+validation, q as RF chose on every seed) is another run. RGF Fig. 10's GBDT on musk2
    # (2000 training points, the paper's largest J, staged to 1000 trees), both losses the profile charges.
    "oc1_forest/satimage/50 (final block)": ("satimage", "oc1_forest", {"n_estimators": 50, "max_features": "p^0.6"},
                                             "trainval", {"n_estimators": [50]}, 1),
    "oc1_forest/letter/50 (final block)": ("letter", "oc1_forest", {"n_estimators": 50, "max_features": "p^0.5"},
                                           "trainval", {"n_estimators": [50]}, 1),
    **{f"{m}/musk2/1000 (rgf_real, J 64)": ("musk2", m, {"n_estimators": 1000, "max_leaf_nodes": 64,
                                                         "learning_rate": 0.1, "min_samples_leaf": 10}, "train",
                                            {"n_estimators": [10, 30, 100, 300, 1000]}, 1)
       for m in ("gbdt_sq_clf", "gbdt_exp")},
    # added 29 Nov 2026 (stop 60): GBDT with exponential loss on a set it does not separate (on musk2 its trees are
    # one leaf from ~300 on: the model's J leaves per tree is an upper bound there), and RGF at the paper's largest
    # size, process CPU on an idle machine where EARLIER_RUNS has only wall times under load
    "gbdt_exp/adult/1000 (rgf_real, J 64)": ("adult", "gbdt_exp", {"n_estimators": 1000, "max_leaf_nodes": 64,
                                                                   "learning_rate": 0.1, "min_samples_leaf": 10},
                                             "train", {"n_estimators": [10, 30, 100, 300, 1000]}, 1),
    # added 29 Nov 2026 (stop 62), with the collapse term (cost_model.yaml): the two grid points the term misses most
    # in studies/gbdt_tree_cost.py collapse-grid (musk2's trees stop at 198 where 471 are charged; adult's never
    # stop), on the two sets the term was not measured on
    **{f"gbdt_exp/{name}/1000 (rgf_real, J 8, s 1)": (name, "gbdt_exp", {
        "n_estimators": 1000, "max_leaf_nodes": 8, "learning_rate": 1.0, "min_samples_leaf": 10}, "train",
        {"n_estimators": [10, 30, 100, 300, 1000]}, 1) for name in ("musk2", "adult")},
    # OC1 Forest at Protein's size beside the coefficient's own Protein-shaped tree (bench_oc1, sqrt features, train
    # part): a final's shape (train+validation, 17,766 x 357) at another q, on a Protein-shaped make_classification set
    # written as data/processed/protein/split0.npz (Protein is not offline; random_state 1, not bench_oc1's 0)
    "oc1_forest/protein/3 (final block shape, p^0.6, Protein-shaped synthetic)": (
        "protein", "oc1_forest", {"n_estimators": 3, "max_features": "p^0.6"}, "trainval", {"n_estimators": [3]}, 1),
    "rgf_l2/rgf_synth_q64_reg/10000 (rgf_synthetic_complex, l2 0.1)": (
        "rgf_synth_q64_reg", "rgf_l2", {"max_leaf_nodes": 10000, "l2": 0.1}, "train",
        {"max_leaf_nodes": [500, 1000, 2000, 5000, 10000]}, 1),
    # added 29 Nov 2026 (stop 61): the random forest at CO2 Table I's widest sets (scikit-learn's RF is charged
    # ~36 CPU-h of the estimate, most of it 1000-tree forests on MNIST / Fashion-MNIST / Covertype, and its checks
    # were at p <= 126): a final's shape (train+validation, the grid's widest q, staged) and a candidate at p^0.5
    "rf/fashion_mnist/100 (co2_forest_size final shape, p^0.9)": (
        "fashion_mnist", "rf", {"n_estimators": 100, "max_features": "p^0.9"}, "trainval",
        {"n_estimators": [1, 3, 10, 30, 100]}, 1),
    "rf/fashion_mnist/1000 (co2_forest_size candidate, p^0.5)": (
        "fashion_mnist", "rf", {"n_estimators": 1000, "max_features": "p^0.5"}, "train", {"n_estimators": [1000]}, 1),
    # the non-greedy tree at Fashion-MNIST's width (its checks were on Connect-4, p = 126; ~12 of its ~24 CPU-h are
    # MNIST and Fashion-MNIST): two candidates of Fig. 2's grid as the workflow fitted them (init_params as chosen)
    **{f"nongreedy_tree/fashion_mnist/{depth} (nongreedy_fig2 candidate)": (
        "fashion_mnist", "nongreedy_tree", {"max_depth": depth, "nu": 100, "learning_rate": lr, "init_scale": 0.125,
                                            "max_epochs": 80, "n_iter_no_change": 10, "tol": 0.001,
                                            "init_params": {"nu": init_nu, "learning_rate": 0.01}}, "train", None, 1)
       for depth, lr, init_nu in ((12, 0.1, 4), (16, 0.3, 1))},
}


# Fit times of real paper-profile runs measured by earlier sessions (wall seconds of the fit alone, load not
# recorded): compared with the model's fit time, (CPU - start_seconds) / threads.
EARLIER_RUNS = {
    "co2_forest/connect4/1000 (final, stop 22, seeds 0-2)": (
        "connect4", "co2_forest", {"n_estimators": 1000, "nu": 0.1, "learning_rate": 0.03, "max_features": "p^0.9"},
        "trainval", {"n_estimators": [100, 300, 1000]}, 2, (1146, 1404),
        "issues stops (stop 22): 'Fitting took 1146-1404 s per seed', 2 threads"),
    "rgf_l2_clf/adult/10000 (rgf_real)": (
        "adult", "rgf_l2_clf", {"max_leaf_nodes": 10000, "l2": 0.01}, "train", {"max_leaf_nodes": [10000]}, 1,
        (7.69, 13.13), "results/paper/rgf_fig16_time.csv, l2 = 0.1 / 0.01 / 1"),
    "rgf_l2/rgf_synth_q64_reg/10000 (rgf_synthetic_complex)": (
        "rgf_synth_q64_reg", "rgf_l2", {"max_leaf_nodes": 10000, "l2": 0.1}, "train", {"max_leaf_nodes": [10000]},
        1, (11.86, 18.58), "results/paper/rgf_fig16_time.csv, l2 = 0.1 / 1 / 0.01"),
    "tao_oblique/fashion_mnist/4 (tao_fig1_path, cart)": (
        "fashion_mnist", "tao_oblique", {"max_depth": 4, "C": 0.003, "init": "cart", "accept": "objective",
                                         "warm_start_C": [100, 30, 10, 3, 1, 0.3, 0.1, 0.03, 0.01], "n_jobs": 2},
        "train", None, 1, (2632.0, 2632.0), "results/paper/tao_fig1_path.csv: the sum of the path's fit_seconds"),
}

# Segmentation trees at LFW size, timed by benchmarks/seg_lfw_size.py (synthetic faces of LFW's shape: the lfw_parts
# images are not offline; one thread, process CPU): one tree fitted, one validation image scored. Compared with the
# model's fit of one tree (its work without the scoring; the fit factor of the grid point) and its scoring of one
# image by that tree. name -> (method, params, measured fit CPU-s, scoring CPU-s per image, peak MB, load before,
# load after, started, command). The calibration tree (nu 1, eta 1e-4) is not here: a check is another grid point.
SEGMENTATION_CHECKS = {
    # the CO2 tree with the per-node axis sort (ForestSegmenter's default since 29 Nov), idle machine, peak from
    # time -v (the same check beside two workflow jobs, 29 Nov 11:03: fit 283.90, scoring 0.411; the 28 Nov check of
    # the presorted tree, idle: fit 505.64, scoring 0.527, peak 15,925 MB)
    "seg_co2/lfw_parts/256000 (candidate, nu 10, eta 0.001)": (
        "seg_co2", {"windows_per_tree": 256000, "nu": 10.0, "learning_rate": 0.001}, 269.96, 0.410, 10285.3,
        1.0, 1.0, "2026-11-29 13:08",
        "/usr/bin/time -v benchmarks/seg_lfw_size.py time co2 --trees 1 --windows 256000 --score 1 --nu 10 "
        "--learning-rate 0.001"),
    # the depth sweep's two-probe tree (co2_segmentation_depth, depth 20; the calibration tree was unlimited: 15,161
    # leaves, this one 7,311), 29 Nov 2026 beside two workflow jobs; peak from /usr/bin/time -v
    "seg_two_probe/lfw_parts/256000 (depth sweep, depth 20)": (
        "seg_two_probe", {"windows_per_tree": 256000, "max_depth": 20, "n_pairs": 1000}, 134.07, 0.0167, 8064.5,
        3.4, 4.8, "2026-11-29 04:41",
        "/usr/bin/time -v benchmarks/seg_lfw_size.py time two_probe --trees 1 --windows 256000 --max-depth 20 --score 1"),
}


def segmentation_check_rows(model):
    """Rows of :data:`SEGMENTATION_CHECKS` for cost_model_check.csv (predicted from ``model``)."""
    from treeopt.experiments.infra import cost

    rows = []
    for name, (method, params, fit_cpu, score_cpu, peak_mb, load_before, load_after, started, command) in (
            SEGMENTATION_CHECKS.items()):
        entry = cost._method_entry(model, method)
        shape = cost.dataset_shape("lfw_parts", model)
        depth = params.get("max_depth") or 20  # the model's depth of an unlimited tree
        unit = float(entry["cpu"]) * depth * cost.SEG_FEATURES
        fit = unit * cost.fit_factor(entry, params) * params["windows_per_tree"]
        score = unit * float(entry["score_weight"]) * shape.p
        peak = cost.estimate_run(method, {**params, "n_estimators": 1}, "lfw_parts", fit_on="train",
                                 model=model).peak_mb
        rows.append({"run": name, "dataset": "lfw_parts", "method": method, "n_fit": params["windows_per_tree"],
                     "threads": 1, "predicted_cpu_seconds": round(fit + score, 1),
                     "measured_cpu_seconds": round(fit_cpu + score_cpu, 2),
                     "cpu_ratio": round((fit_cpu + score_cpu) / (fit + score), 3), "predicted_peak_mb": round(peak),
                     "measured_peak_mb": peak_mb, "mem_ratio": round(peak_mb / peak, 3), "load_before": load_before,
                     "load_after": load_after, "started": started,
                     "source": f"{command} (LFW-shaped synthetic faces; fit {fit_cpu:.1f} CPU-s against {fit:.1f}, "
                               f"scoring one image {score_cpu:.3f} against {score:.3f})"})
    return rows


def run_one(name, spec, out_path):
    dataset, method, params, fit_on, stages, n_jobs = spec
    cmd = [sys.executable, str(HERE / "run_memory.py"), dataset, method, json.dumps(params), "--fit-on", fit_on,
           "--n-jobs", str(n_jobs), "--processed-dir", str(PROCESSED)]
    if stages:
        (param, values), = stages.items()
        cmd += ["--stage-param", param, "--stages", *map(str, values)]
    load_before = os.getloadavg()[0]
    start = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        print(f"{name}: failed\n{proc.stderr[-2000:]}", file=sys.stderr)
        return None
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    row.update(name=name, stages_asked=stages, load_before=round(load_before, 2),
               load_after=round(os.getloadavg()[0], 2), started=time.strftime("%Y-%m-%d %H:%M", time.localtime(start)))
    with open(out_path, "a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)
    return row


def _read(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def _latest(rows):
    return {row["name"]: row for row in rows}


def fit():
    """Per-method CPU coefficients from the calibration runs, written into the model file."""
    sys.path.insert(0, str(ROOT / "src"))
    from treeopt.experiments.infra import cost

    model = yaml.safe_load(MODEL.read_text())
    rows = _latest(_read(CALIBRATION))
    # start_seconds: the whole process CPU of the cheapest calibration run (every run pays at least that)
    cheapest = min((row for name, row in rows.items() if name in CALIBRATION_RUNS),
                   key=lambda row: row["process_cpu_seconds"])
    model["start_seconds"] = round(cheapest["process_cpu_seconds"], 2)
    print(f"start_seconds {model['start_seconds']} ({cheapest['name']})")
    # the non-greedy tree's start is costed as a CO2 tree: fit the CO2 tree first, then take its cost off
    order = sorted({CALIBRATION_RUNS[name][1] for name in rows if name in CALIBRATION_RUNS},
                   key=lambda method: (method == "nongreedy_tree", method))
    for method in order:
        if method in SET_AT_SIZE:
            print(f"{method}: kept as set at size ({model['methods'][method].get('measured', '')[:60]}...)")
            continue
        points = []
        for name, row in sorted(rows.items()):
            if name not in CALIBRATION_RUNS or CALIBRATION_RUNS[name][1] != method:
                continue
            dataset, _, params, fit_on, stages, _ = CALIBRATION_RUNS[name]
            entry = cost._method_entry(model, method)
            shape = cost.dataset_shape(dataset, model, PROCESSED)
            units, _ = cost.work(entry["family"], params, shape, fit_on, tuple((stages or {}).items()),
                                 collapse=entry.get("collapse"))
            # the process's CPU beyond the start every run pays (imports, loading the split, scoring a small forest)
            excess = row["process_cpu_seconds"] - model["start_seconds"]
            if method == "nongreedy_tree":
                excess -= cost.nongreedy_start_cpu(params, dataset, fit_on, model, PROCESSED)
            points.append((name, units, max(excess, 0.05 * row["process_cpu_seconds"])))
            row["excess_mb"] = round(max(row["peak_rss_mb"] - model["base_mb"] - shape.split_mb, 0.0), 1)
        # a run whose CPU is mostly the start measures the start's noise, not the family: left out of the fit
        # when the family has larger runs
        sized = [pt for pt in points if pt[2] >= 0.5 and pt[2] >= 0.2 * rows[pt[0]]["process_cpu_seconds"]]
        fitted = sized or points
        fixed, cpu = fixed_and_slope([u for _, u, _ in fitted], [e for _, _, e in fitted])
        entry = model["methods"][method]
        entry.pop("on_datasets", None)
        entry["cpu"] = float(f"{cpu:.4g}")
        entry["fixed"] = round(fixed, 2)
        entry["calibrated_on"] = [name for name, _, _ in fitted]
        print(f"{method}: fixed {fixed:.2f} s + {cpu:.4g} s/unit from {len(points)} run(s): "
              + ", ".join(f"{name} {e:.2f} s ({(fixed + cpu * u) / e:.2f}x)" for name, u, e in points))
        # methods of the same family without runs of their own (e.g. co2_forest_node) take these coefficients: the
        # family's own method's (gbdt_exp has its own runs, gbdt_sq_clf takes gbdt's)
        siblings = {m for m in order if model["methods"][m].get("family") == entry["family"]}
        if method == entry["family"] or siblings == {method}:
            model["families"][entry["family"]].update(cpu=entry["cpu"], fixed=entry["fixed"])
    text = MODEL.read_text()
    header = text[:text.index("\nstart_seconds:") + 1] if "\nstart_seconds:" in text else ""
    MODEL.write_text(header + yaml.safe_dump({k: model[k] for k in model}, sort_keys=False, width=110))


def fixed_and_slope(units, seconds):
    """``(fixed, cpu)`` with ``fixed + cpu x units`` closest to ``seconds`` in relative terms (least squares of
    prediction / measurement - 1), both >= 0. One run, or runs all of one size (units within 4x): no fixed part,
    ``cpu`` the geometric mean of seconds / units, as a single coefficient was fitted before."""
    u, m = np.asarray(units, float), np.asarray(seconds, float)
    if len(u) < 2 or u.max() < 4 * u.min():
        return 0.0, float(np.exp(np.mean(np.log(m / u))))
    A = np.column_stack([1 / m, u / m])  # rows: (fixed + cpu u_i) / m_i = 1
    fixed, cpu = np.linalg.lstsq(A, np.ones(len(u)), rcond=None)[0]
    if fixed < 0 or cpu <= 0:
        fixed, cpu = (0.0, float((u / m).sum() / ((u / m) ** 2).sum())) if fixed < 0 else (float(np.mean(m)), 0.0)
    return float(fixed), float(cpu)


# what a run did, kept beside its fit time to explain a ratio (never used for the prediction)
OBSERVED = ("depth", "sgd_epochs", "proven_optimal", "solver_seconds", "n_binary_features", "init_seconds")


def collect(roots):
    """The specification and fit time of every finished run under ``roots`` -> ``CHECK_FOLDERS`` (rewritten)."""
    rows = []
    for root in map(Path, roots):
        for metrics_path in sorted(root.glob("**/seed*/metrics.json")):
            folder = metrics_path.parent
            spec = yaml.safe_load((folder / "params.yaml").read_text())
            metrics = json.loads(metrics_path.read_text())
            tree = metrics.get("tree") or {}
            rows.append({"source": str(folder), "dataset": spec["dataset"], "method": spec["method"],
                         "params": spec["params"], "fit_on": spec["fit_on"], "n_jobs": spec["n_jobs"],
                         "stages": spec.get("stages"), "role": spec.get("role"), "experiment": spec.get("experiment"),
                         "seed": spec["seed"], "n_fit": metrics["n_train"] + (metrics["n_val"] if spec["fit_on"] ==
                                                                                "trainval" else 0),
                         "fit_seconds": metrics["fit_seconds"],
                         # the run's wall time inside the runner: params.yaml is its first file, log.txt's "done"
                         # its last line (the process's imports before it are not in it)
                         "run_seconds": round((folder / "log.txt").stat().st_mtime -
                                              (folder / "params.yaml").stat().st_mtime, 3),
                         "git_commit": metrics.get("git_commit"),
                         "observed": {k: tree[k] for k in OBSERVED if k in tree},
                         "finished": time.strftime("%Y-%m-%d %H:%M", time.gmtime(metrics_path.stat().st_mtime))})
    with open(CHECK_FOLDERS, "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    print(f"{len(rows)} runs from {len(roots)} folders -> {CHECK_FOLDERS}")


def _same_run(params, other):
    """Equal specifications (a calibration run's params against a run folder's)."""
    return {k: v for k, v in params.items() if v is not None} == {k: v for k, v in other.items() if v is not None}


def _calibration_twin(row):
    for name, (dataset, method, params, fit_on, _stages, _n_jobs) in CALIBRATION_RUNS.items():
        if (dataset, method, fit_on) == (row["dataset"], row["method"], row["fit_on"]) and \
                _same_run(params, row["params"]):
            return name
    return None


def folder_rows(model):
    """Predicted against measured fit time of each collected run folder (``collect``), predictions a priori."""
    from treeopt.experiments.infra import cost

    out, skipped = [], []
    # the start's share spent before the runner begins (imports): process CPU minus the runner's CPU of the
    # calibration runs (median), so a run's predicted CPU compares with what its folder's timestamps span
    before_runner = float(np.median([r["process_cpu_seconds"] - r["cpu_seconds"] for r in _read(CALIBRATION)]))
    for row in _read(CHECK_FOLDERS):
        twin = _calibration_twin(row)
        if twin:
            skipped.append((row["source"], twin))
            continue
        threads = int(row["n_jobs"])
        try:
            est = cost.estimate_run(row["method"], row["params"], row["dataset"], fit_on=row["fit_on"],
                                    stages=tuple((row.get("stages") or {}).items()), threads=threads, model=model,
                                    processed_dir=PROCESSED)
            busy = max(1, min(threads, est.parallel))
            fit = max(est.cpu_seconds - model["start_seconds"], 1e-9) / busy
            whole = (est.cpu_seconds - before_runner) / busy
        except KeyError:  # a method the model does not cost (as plan --estimate counts it)
            fit = whole = math.nan
        params = row["params"]
        out.append({"run": f"{row['method']}/{row['dataset']}/{params.get('max_depth', '')} ({row['role']}"
                           f"{', ' + row['experiment'] if row.get('experiment') else ''}, seed {row['seed']})",
                    "dataset": row["dataset"], "method": row["method"], "role": row["role"],
                    "max_depth": params.get("max_depth"), "n_fit": row["n_fit"], "threads": threads,
                    "predicted_fit_wall_seconds": round(fit, 2) if fit == fit else None,
                    "measured_fit_wall_seconds": round(row["fit_seconds"], 2),
                    "fit_ratio": round(row["fit_seconds"] / fit, 3) if fit == fit else None,
                    "predicted_run_wall_seconds": round(whole, 2) if whole == whole else None,
                    "measured_run_wall_seconds": row["run_seconds"],
                    "run_ratio": round(row["run_seconds"] / whole, 3) if whole == whole else None,
                    "observed": json.dumps(row["observed"], sort_keys=True) if row["observed"] else "",
                    "finished": row["finished"], "source": row["source"]})
    for source, twin in skipped:
        print(f"skipped (same specification as calibration run {twin}): {source}")
    return out


def table():
    sys.path.insert(0, str(ROOT / "src"))
    import pandas as pd

    from treeopt.experiments.infra import cost

    model = cost.load_model(MODEL)  # the package's file, or the copy under --results
    # check runs a coefficient set at size was taken from (SET_AT_SIZE): their ratio shows the fit, not a prediction
    calibrating = {name for entry in model["methods"].values() for name in entry.get("calibrated_on") or ()}
    out = []
    for name, row in _latest(_read(CHECK)).items():
        dataset, method, params, fit_on, stages, n_jobs = CHECK_RUNS[name]
        est = cost.estimate_run(method, params, dataset, fit_on=fit_on, stages=tuple((stages or {}).items()),
                                threads=n_jobs, model=model, processed_dir=PROCESSED)
        out.append({"run": name, "dataset": dataset, "method": method, "n_fit": row["n_fit"], "threads": n_jobs,
                    "predicted_cpu_seconds": round(est.cpu_seconds, 1), "measured_cpu_seconds": row["process_cpu_seconds"],
                    "cpu_ratio": round(row["process_cpu_seconds"] / est.cpu_seconds, 3),
                    "predicted_peak_mb": round(est.peak_mb), "measured_peak_mb": row["peak_rss_mb"],
                    "mem_ratio": round(row["peak_rss_mb"] / est.peak_mb, 3),
                    "wall_seconds": row["wall_seconds"], "load_before": row["load_before"],
                    "load_after": row["load_after"], "started": row["started"],
                    "sets_coefficient": name in calibrating})
    for name, (dataset, method, params, fit_on, stages, threads, (low, high), source) in EARLIER_RUNS.items():
        est = cost.estimate_run(method, params, dataset, fit_on=fit_on, stages=tuple((stages or {}).items()),
                                threads=threads, model=model, processed_dir=PROCESSED)
        fit = (est.cpu_seconds - model["start_seconds"]) / max(1, min(threads, est.parallel))
        out.append({"run": name, "dataset": dataset, "method": method, "threads": threads,
                    "predicted_fit_wall_seconds": round(fit, 1), "measured_fit_wall_seconds": f"{low}-{high}",
                    "cpu_ratio": f"{low / fit:.3f}-{high / fit:.3f}", "source": source})
    out += segmentation_check_rows(model)
    folders = folder_rows(model)
    table = pd.DataFrame(out + folders)
    table.to_csv(CHECK_CSV, index=False)
    print(table.iloc[:len(out)].dropna(axis=1, how="all").to_string(index=False))
    ours = table[table["measured_cpu_seconds"].notna()] if "measured_cpu_seconds" in table else table.iloc[:0]
    within = ((ours["cpu_ratio"].astype(float).between(0.5, 2)) & (ours["mem_ratio"].between(0.5, 2))).sum()
    print(f"{within} of {len(ours)} runs measured here within 2x in both CPU and memory")
    if folders:
        folders = pd.DataFrame(folders)
        uncosted = folders[folders["fit_ratio"].isna()]
        if len(uncosted):
            print(f"not costed by the model: {len(uncosted)} runs of {sorted(set(uncosted['method']))}")
        summary_table = summary(folders)
        summary_table.to_csv(CHECK_SUMMARY, index=False)
        print(summary_table.to_string(index=False))


def summary(runs):
    """Per method, data set and role, per method, and over all runs: the median and range of measured / predicted
    (fit and whole run), the runs within 2x, and the sums of measured and predicted run time (hours)."""
    import pandas as pd

    runs = runs[runs["fit_ratio"].notna()]
    runs = runs.assign(fit_within=runs["fit_ratio"].between(0.5, 2.0), run_within=runs["run_ratio"].between(0.5, 2.0))
    aggregates = dict(runs=("fit_ratio", "size"), depths=("max_depth", lambda d: f"{min(d)}-{max(d)}"),
                      fit_median=("fit_ratio", "median"), fit_min=("fit_ratio", "min"), fit_max=("fit_ratio", "max"),
                      fit_within_2x=("fit_within", "sum"), run_median=("run_ratio", "median"),
                      run_min=("run_ratio", "min"), run_max=("run_ratio", "max"), run_within_2x=("run_within", "sum"))
    aggregates.update(predicted_run_hours=("predicted_run_wall_seconds", "sum"),
                      measured_run_hours=("measured_run_wall_seconds", "sum"))
    out = runs.groupby(["method", "dataset", "role"], sort=True).agg(**aggregates).reset_index()
    by_method = runs.assign(dataset="", role="").groupby(["method", "dataset", "role"]).agg(**aggregates)
    total = runs.assign(method="all", dataset="", role="").groupby(["method", "dataset", "role"]).agg(**aggregates)
    out = pd.concat([out, by_method.reset_index().assign(depths=""), total.reset_index().assign(depths="")],
                    ignore_index=True)
    # the budget view: the sum of the runs' times against the sum of the predictions
    out["total_run_ratio"] = out["measured_run_hours"] / out["predicted_run_hours"]
    out[["predicted_run_hours", "measured_run_hours"]] /= 3600
    return out.round({c: 2 for c in out.columns if c not in ("predicted_run_hours", "measured_run_hours")}).round(
        {"predicted_run_hours": 3, "measured_run_hours": 3})


def use_results(folder):
    """Write (and read) every result file in ``folder``; ``fit`` rewrites a copy of the model there."""
    global RESULTS, CALIBRATION, CHECK, CHECK_CSV, CHECK_FOLDERS, CHECK_SUMMARY, MODEL
    folder = folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    model = folder / MODEL.name
    if not model.exists():
        model.write_text(MODEL.read_text())
    RESULTS, MODEL = folder, model
    CALIBRATION, CHECK = folder / CALIBRATION.name, folder / CHECK.name
    CHECK_CSV, CHECK_FOLDERS, CHECK_SUMMARY = (folder / CHECK_CSV.name, folder / CHECK_FOLDERS.name,
                                               folder / CHECK_SUMMARY.name)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("calibrate", "fit", "check", "collect", "table"))
    parser.add_argument("roots", nargs="*", help="collect: run folders to read (default: RUN_ROOTS)")
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--results", default=None,
                        help="folder for every file written (jsonl, csv, and a copy of the cost model that `fit` "
                             "rewrites) instead of benchmarks/results and the package's cost_model.yaml")
    parser.add_argument("--processed-dir", default=None, help="prepared splits (default: data/processed)")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny calibration and check runs (digits, CART) instead of the real ones; use --results")
    args = parser.parse_args(argv)
    if args.smoke and args.results is None:
        parser.error("--smoke needs --results (never writes over the committed results)")
    if args.results is not None:
        use_results(Path(args.results))
    if args.processed_dir is not None:
        globals()["PROCESSED"] = Path(args.processed_dir).resolve()
    if args.smoke:
        CALIBRATION_RUNS.clear()
        CALIBRATION_RUNS.update(SMOKE_CALIBRATION_RUNS)
        CHECK_RUNS.clear()
        CHECK_RUNS.update(SMOKE_CHECK_RUNS)
    RESULTS.mkdir(exist_ok=True)
    if args.command in ("calibrate", "check"):
        runs, path = (CALIBRATION_RUNS, CALIBRATION) if args.command == "calibrate" else (CHECK_RUNS, CHECK)
        claims = path.with_suffix(".claimed")  # names a running invocation has taken (two may share the list)
        for name, spec in runs.items():
            done = _latest(_read(path))
            claimed = set(claims.read_text().split("\n")) if claims.exists() else set()
            if args.only is not None and name not in args.only:
                continue
            if args.only is None and (name in done or name in claimed):
                continue
            with open(claims, "a") as f:
                f.write(name + "\n")
            run_one(name, spec, path)
    elif args.command == "fit":
        fit()
    elif args.command == "collect":
        collect(args.roots or RUN_ROOTS)
    else:
        table()
    return 0


if __name__ == "__main__":
    sys.exit(main())
