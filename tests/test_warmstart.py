"""Jobs forked from the warm server (treeopt.experiments.warmstart) write what a fresh process writes."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from treeopt.experiments import warmstart

REPO = Path(__file__).resolve().parents[1]
TIMINGS = ("fit_seconds", "predict_seconds")


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = warmstart.start_server(str(tmp_path / "sock"))
    assert path is not None and os.environ[warmstart.ENV] == path
    yield path
    warmstart.stop_server()
    assert warmstart.ENV not in os.environ and not os.path.exists(path)


def _wine_split(tmp_path):
    from treeopt.data import prepare_split

    config = {"data": {"processed_dir": str(tmp_path / "processed"), "raw_dir": str(tmp_path / "raw")},
              "datasets": {"wine": {"task": "classification", "format": "sklearn", "options": {"loader": "wine"},
                                    "split": {"protocol": "random"}, "scale": "none"}}}
    return str(prepare_split("wine", config, 0))


def _candidate(tmp_path, name, split):
    return dict(out=str(tmp_path / name), dataset="wine", method="co2_tree", params={"max_depth": 3, "nu": 1.0},
                seed=0, split=split, n_jobs=1, save_model=None, inherit={})


def test_a_job_run_by_the_server_writes_what_a_fresh_process_writes(tmp_path, server):
    split = _wine_split(tmp_path)
    warmstart.run_job("candidate", _candidate(tmp_path, "served", split), log=[str(tmp_path / "served.log")])
    served = json.loads((tmp_path / "served" / "metrics.json").read_text())
    assert "done" in (tmp_path / "served" / "log.txt").read_text()
    os.environ.pop(warmstart.ENV)  # no server: the job runs in this process
    warmstart.run_job("candidate", _candidate(tmp_path, "here", split), log=[str(tmp_path / "here.log")])
    here = json.loads((tmp_path / "here" / "metrics.json").read_text())
    for key in TIMINGS:
        served.pop(key), here.pop(key)
    assert served == here
    os.environ[warmstart.ENV] = server


def test_a_failing_job_fails_its_script_and_logs_the_traceback(tmp_path, server):
    log = tmp_path / "bad.log"
    with pytest.raises(SystemExit):
        warmstart.run_job("select", dict(runs=[str(tmp_path / "missing")], metric="error", out=str(tmp_path / "s.yaml"),
                                         info={}), log=[str(log)])
    assert "Traceback" in log.read_text()
    assert not (tmp_path / "s.yaml").exists()


@pytest.mark.slow
def test_a_cancelled_script_takes_its_job_down(tmp_path, server):
    """Snakemake kills a job's script: the server ends the child that was running the job."""
    split = _wine_split(tmp_path)
    kwargs = dict(out=str(tmp_path / "slow"), dataset="wine", method="co2_forest",
                  params={"n_estimators": 2000, "nu": 1.0}, seed=0, split=split, n_jobs=1, save_model=None, inherit={})
    code = ("import sys, json; from treeopt.experiments.warmstart import run_job; "
            f"run_job('candidate', json.loads(sys.argv[1]), log=[{str(tmp_path / 'slow.log')!r}])")
    script = subprocess.Popen([sys.executable, "-c", code, json.dumps(kwargs)], env=os.environ.copy())
    deadline = time.time() + 120
    while time.time() < deadline and not any(tmp_path.glob(".slow.tmp-*")):
        time.sleep(0.2)
    children = _children_of(server)
    assert children, "the server started no child for the job"
    script.kill()
    script.wait()
    deadline = time.time() + 30
    while time.time() < deadline and any(_alive(pid) for pid in children):
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in children)
    assert not (tmp_path / "slow").exists()


def _children_of(socket_path):
    proc = warmstart._SERVER["proc"]
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(proc.pid)], capture_output=True, text=True).stdout
    return [int(pid) for pid in out.split()]


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return status.exists() and status.read_text().split()[2] != "Z"


def test_without_a_server_the_script_runs_the_job_itself(tmp_path, monkeypatch):
    monkeypatch.setenv(warmstart.ENV, str(tmp_path / "nothing-listens-here"))
    split = _wine_split(tmp_path)
    warmstart.run_job("candidate", _candidate(tmp_path, "alone", split), log=None)
    assert (tmp_path / "alone" / "metrics.json").is_file()
