"""Long fits log their progress: forests per tree, TAO per iteration, RGF per tenth of the leaf budget."""

import logging
import re

import numpy as np
import pytest

from sklearn.datasets import load_digits, make_regression

from treeopt.boosting import RGFRegressor
from treeopt.boosting._grow import warm_up as rgf_warm_up
from treeopt.forest import CO2ForestClassifier
from treeopt.forest.bagging import BaggedTreesClassifier
from treeopt.greedy.random_oblique import RandomObliqueTreeClassifier
from treeopt.tao import TAOTreeClassifier


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)


def _progress_lines(caplog, logger="treeopt.forest"):
    return [r.getMessage() for r in caplog.records if r.name == logger]


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("make", [
    lambda n, j: CO2ForestClassifier(n_estimators=n, max_epochs=3, n_jobs=j, random_state=0),
    lambda n, j: BaggedTreesClassifier(RandomObliqueTreeClassifier(n_hyperplanes=3), n_estimators=n, n_jobs=j,
                                       random_state=0),
], ids=["co2", "bagged"])
def test_forest_logs_every_tenth_and_the_last_tree(caplog, make, n_jobs):
    X, y = _data()
    with caplog.at_level(logging.INFO, logger="treeopt.forest"):
        make(25, n_jobs).fit(X, y)
    lines = _progress_lines(caplog)
    parsed = sorted((int(m.group(1)), float(m.group(2)), float(m.group(3))) for m in
                    (re.search(r"(\d+)/25 trees fitted, ([\d.]+) s elapsed, about (\d+) s left", line)
                     for line in lines))
    counts = [c for c, _, _ in parsed]
    # about ten lines spread over the forest (threads may log out of order), each count once, ending at 25/25
    assert 10 <= len(counts) <= 15 and len(set(counts)) == len(counts) and counts[-1] == 25
    assert max(np.diff([0, *counts])) <= 3
    elapsed = [e for _, e, _ in parsed]
    assert elapsed == sorted(elapsed) or n_jobs > 1  # one thread: elapsed time grows with the count
    assert parsed[-1][2] == 0  # nothing left after the last tree


def test_forest_is_silent_below_info(caplog):
    X, y = _data()
    with caplog.at_level(logging.WARNING, logger="treeopt.forest"):
        CO2ForestClassifier(n_estimators=3, max_epochs=3, random_state=0).fit(X, y)
    assert _progress_lines(caplog) == []


def test_run_folder_log_records_forest_progress(tmp_path, wine_split):
    from treeopt.experiments.run.runner import run

    path, _ = wine_split
    out = tmp_path / "run"
    run(out, dataset="wine", method="co2_forest", params={"n_estimators": 10, "max_epochs": 3, "nu": 1.0}, seed=0,
        split_path=path)
    text = (out / "log.txt").read_text()
    assert "CO2ForestClassifier: 10/10 trees fitted" in text


def test_tao_logs_each_iteration_and_each_c_of_the_path(caplog):
    X, y = load_digits(return_X_y=True)
    X, y = X[:600], y[:600]
    with caplog.at_level(logging.INFO, logger="treeopt.tao"):
        clf = TAOTreeClassifier(max_depth=4, C=0.1, warm_start_C=[10.0, 1.0], random_state=0).fit(X, y)
    lines = _progress_lines(caplog, "treeopt.tao")
    done = [line for line in lines if " done: " in line]
    assert [float(re.search(r"C=(\S+) done", line).group(1)) for line in done] == [p["C"] for p in clf.path_]
    iterations = [line for line in lines if " iteration " in line]
    assert len(iterations) == sum(p["n_iter"] for p in clf.path_)
    # the last C's lines give the training errors of history_, in order
    last = [float(re.search(r"training error ([\d.]+)%", line).group(1)) for line in iterations
            if line.startswith(f"TAO C={clf.path_[-1]['C']:g} ")]
    assert last == pytest.approx([100 * e for e in clf.history_[1:]], abs=1e-4)


def test_rgf_logs_a_falling_objective_up_to_the_last_leaf(caplog):
    X, y = make_regression(n_samples=300, n_features=5, noise=5.0, random_state=0)
    with caplog.at_level(logging.INFO, logger="treeopt.boosting"):
        reg = RGFRegressor(max_leaf_nodes=200, opt_interval=10, random_state=0).fit(X, y)
    lines = _progress_lines(caplog, "treeopt.boosting")
    leaves = [int(re.search(r"RGF: (\d+)/200 leaves", line).group(1)) for line in lines]
    objective = [float(re.search(r"objective Q (\S+) ", line).group(1)) for line in lines]
    assert leaves == sorted(set(leaves)) and leaves[-1] == reg.n_leaves_
    assert 5 <= len(lines) <= 11  # every tenth of the budget (20 leaves, two corrections) and the end
    # square loss, L2: greedy steps and corrections only lower Q (Algorithm 3), so the logged Q falls
    assert all(b <= a * (1 + 1e-9) for a, b in zip(objective, objective[1:]))


def test_rgf_warm_up_is_silent(caplog):
    with caplog.at_level(logging.INFO, logger="treeopt.boosting"):
        rgf_warm_up()
    assert _progress_lines(caplog, "treeopt.boosting") == []


def test_a_co2_fit_says_before_its_kernels_load_that_compiling_may_take_a_while():
    """The first CO2 fits of a fresh install sat silent for a minute while numba compiled (issue #29): a line
    comes first, in a new process (the kernels of this one may be loaded already)."""
    import subprocess
    import sys

    code = ("import logging; logging.basicConfig(level=logging.INFO, format='%(name)s %(message)s')\n"
            "from sklearn.datasets import load_wine\n"
            "from treeopt.forest import CO2ForestClassifier\n"
            "CO2ForestClassifier(n_estimators=2, max_epochs=2, random_state=0).fit(*load_wine(return_X_y=True))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stderr.splitlines()
    first = next(i for i, line in enumerate(lines) if "loading the numba kernels" in line)
    assert lines[first].startswith("treeopt.numba CO2ForestClassifier: loading the numba kernels")
    assert first < next(i for i, line in enumerate(lines) if "trees fitted" in line)
