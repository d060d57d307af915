"""Issue 12, cases 1 and 5 (runner side): `rerun --out` never deletes what a run did not write; killed runs'
temporaries are recognised and removed, nothing else; run folders get ordinary permissions."""

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time

import pytest
import yaml

from treeopt.experiments.__main__ import main
from treeopt.experiments.run import folders
from treeopt.experiments.run.folders import RunFolderError, clean_stale_temporaries, is_run_folder
from treeopt.experiments.run.runner import rerun, run


@pytest.fixture
def a_run(tmp_path, wine_split):
    path, _ = wine_split
    out = tmp_path / "runs" / "wine" / "cart" / "max_depth=2" / "seed0"
    run(out, dataset="wine", method="cart", params={"max_depth": 2}, seed=0, split_path=path)
    return out


def _tree(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_rerun_into_a_folder_of_other_files_deletes_nothing(tmp_path, a_run):
    precious = tmp_path / "checkout"
    (precious / ".git").mkdir(parents=True)
    (precious / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (precious / "notes.txt").write_text("mine")
    before = _tree(precious)
    for force in (False, True):  # --force does not make it a run folder
        with pytest.raises(RunFolderError, match="not a run folder"):
            rerun(a_run / "params.yaml", precious, force=force)
        assert _tree(precious) == before and (precious / "notes.txt").read_text() == "mine"
    # the command line: exit code 2, a message, nothing deleted (the issue's `--out .` and `--out results`)
    old = os.getcwd()
    os.chdir(precious)
    try:
        assert main(["rerun", str(a_run / "params.yaml"), "--out", "."]) == 2
        assert main(["rerun", str(a_run / "params.yaml"), "--out", ".", "--force"]) == 2
    finally:
        os.chdir(old)
    assert _tree(precious) == before
    # a folder of runs is not a run folder either
    results = a_run.parents[3]
    runs_before = _tree(results)
    assert main(["rerun", str(a_run / "params.yaml"), "--out", str(results), "--force"]) == 2
    assert _tree(results) == runs_before
    # nor a file
    (tmp_path / "file").write_text("x")
    with pytest.raises(RunFolderError, match="not a folder"):
        rerun(a_run / "params.yaml", tmp_path / "file", force=True)
    assert (tmp_path / "file").read_text() == "x"


def test_rerun_replaces_an_earlier_run_only_with_force(tmp_path, a_run):
    out = tmp_path / "again"
    first = rerun(a_run / "params.yaml", out)
    assert is_run_folder(out)
    with pytest.raises(RunFolderError, match="--force"):
        rerun(a_run / "params.yaml", out)
    second = rerun(a_run / "params.yaml", out, force=True)
    assert second["test"] == first["test"]
    assert {p.name for p in out.iterdir()} == {"params.yaml", "metrics.json", "model.npz", "log.txt"}
    # no temporaries or moved-aside folders left next to it
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    # an empty folder is fine without --force
    (tmp_path / "empty").mkdir()
    rerun(a_run / "params.yaml", tmp_path / "empty")
    assert is_run_folder(tmp_path / "empty")


def test_a_run_folder_with_anything_else_in_it_is_not_replaced(tmp_path, a_run):
    out = tmp_path / "again"
    rerun(a_run / "params.yaml", out)
    (out / "my_analysis.ipynb").write_text("{}")
    with pytest.raises(RunFolderError):
        rerun(a_run / "params.yaml", out, force=True)
    assert (out / "my_analysis.ipynb").exists()


def test_run_folders_have_ordinary_permissions(tmp_path, a_run):
    old = os.umask(0o022)
    try:
        out = tmp_path / "perm"
        rerun(a_run / "params.yaml", out)
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o755  # mkdtemp alone gives 0700
    assert stat.S_IMODE(a_run.stat().st_mode) == 0o777 & ~old


def test_temporary_of_a_killed_run_is_removed_and_nothing_else(tmp_path, a_run):
    parent = a_run.parent
    # a run killed with SIGKILL mid-way: its temporary stays behind
    code = ("import sys, time; from treeopt.experiments.run import folders; from pathlib import Path; "
            "folders.make_temporary(Path(sys.argv[1])); print('ready', flush=True); time.sleep(60)")
    child = subprocess.Popen([sys.executable, "-c", code, str(parent / "seed1")], stdout=subprocess.PIPE,
                             text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert child.stdout.readline().strip() == "ready"
    live = next(parent.glob(".seed1.tmp-p*"))
    # one still in use (this process is alive), and look-alikes that this program did not make
    mine_alive = folders.make_temporary(parent / "seed2")
    unmarked = parent / f".seed3.tmp-p{child.pid}-abcdefgh"
    unmarked.mkdir()
    (unmarked / "data.txt").write_text("not ours")
    wrong_pid = parent / ".seed4.tmp-p1-abcdefgh"
    wrong_pid.mkdir()
    (wrong_pid / folders.TMP_MARKER).write_text(json.dumps({"pid": 2, "host": socket.gethostname()}))
    assert clean_stale_temporaries(tmp_path / "runs") == []  # the child is still running
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    removed = clean_stale_temporaries(tmp_path / "runs")
    assert removed == [live] and not live.exists()
    assert mine_alive.exists() and unmarked.exists() and wrong_pid.exists() and is_run_folder(a_run)


def test_temporaries_of_an_earlier_version_go_only_when_old_and_plain(tmp_path, a_run):
    parent = a_run.parent
    legacy = parent / ".seed7.tmp-ab12cd34"
    legacy.mkdir()
    (legacy / "log.txt").write_text("started")
    (legacy / "params.yaml").write_text("dataset: wine\n")
    fresh = parent / ".seed8.tmp-ef56gh78"
    fresh.mkdir()
    (fresh / "log.txt").write_text("started")
    odd = parent / ".seed9.tmp-ij90kl12"
    odd.mkdir()
    (odd / "thesis.tex").write_text("mine")
    day_ago = time.time() - 2 * 24 * 3600
    for p in (*legacy.iterdir(), legacy, *odd.iterdir(), odd):
        os.utime(p, (day_ago, day_ago))
    assert clean_stale_temporaries(tmp_path / "runs") == [legacy]
    assert fresh.exists() and odd.exists()


def test_rerun_with_a_file_that_is_not_params_yaml(tmp_path):
    bad = tmp_path / "config.yaml"
    bad.write_text(yaml.safe_dump({"profile": "default"}))
    assert main(["rerun", str(bad), "--out", str(tmp_path / "x")]) == 2
    assert main(["rerun", str(tmp_path / "missing.yaml"), "--out", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()
