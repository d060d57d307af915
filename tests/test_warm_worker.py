"""The warm worker (treeopt.experiments.warm_worker): a job handed to it runs in a forked child as it would have run in
the wrapper's own process (working directory, environment, standard streams, exit status), the server is reused,
a stopped wrapper stops its job, and a changed source or import-time environment gets another server."""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from treeopt.experiments import warm_worker as warm

JOBS = textwrap.dedent('''
    import json, os, sys, time

    def record(*, out, text):
        print(text)                        # to the wrapper's stdout (its file descriptor was passed)
        print("to stderr", file=sys.stderr)
        with open(out, "w") as f:
            json.dump({"pid": os.getpid(), "ppid": os.getppid(), "cwd": os.getcwd(),
                       "marker": os.environ.get("WARM_TEST_MARKER")}, f)

    def fail(**kwargs):
        raise ValueError("the job failed on purpose")

    def leave(*, code):
        sys.exit(code)

    def die(**kwargs):
        os.kill(os.getpid(), 9)

    def wait(*, pid_file):
        with open(pid_file, "w") as f:
            f.write(str(os.getpid()))
        time.sleep(120)
''')

WRAPPER = textwrap.dedent('''
    import json, sys
    from treeopt.experiments.warm_worker import call
    sys.exit(call(sys.argv[1], json.loads(sys.argv[2])))
''')


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "warm_test_jobs.py").write_text(JOBS)
    (tmp_path / "wrapper.py").write_text(WRAPPER)
    (tmp_path / "cwd").mkdir()
    # the servers' sockets in a directory of this test's own, with a path short enough for a socket
    runtime = Path(tempfile.mkdtemp(prefix="tw-", dir="/tmp"))
    (tmp_path / "runtime").symlink_to(runtime)
    yield tmp_path
    for sock in runtime.rglob("*.sock"):  # stop the servers this test started
        subprocess.run(["pkill", "-f", str(sock)], check=False)
    shutil.rmtree(runtime, ignore_errors=True)


def environ(workdir, **extra):
    env = {k: v for k, v in os.environ.items() if k not in ("SLURM_JOB_ID", "TREEOPT_WARM")}
    env.update(XDG_RUNTIME_DIR=str((workdir / "runtime").resolve()), TREEOPT_WARM_IDLE_SECONDS="20",
               PYTHONPATH=os.pathsep.join([str(workdir), os.environ.get("PYTHONPATH", "")]), **extra)
    return env


def wrapper(workdir, function, kwargs, env, **popen):
    import json

    return [sys.executable, str(workdir / "wrapper.py"), f"warm_test_jobs:{function}", json.dumps(kwargs)], dict(
        env=env, cwd=workdir / "cwd", **popen)


def run_wrapper(workdir, function, kwargs, env):
    cmd, options = wrapper(workdir, function, kwargs, env)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **options)


def read(path):
    import json

    return json.loads(Path(path).read_text())


def test_a_job_runs_in_a_child_of_one_server_with_the_wrappers_directory_environment_and_streams(workdir):
    env = environ(workdir, WARM_TEST_MARKER="first")
    done = run_wrapper(workdir, "record", {"out": str(workdir / "a.json"), "text": "hello from the job"}, env)
    assert done.returncode == 0, done.stderr
    assert "hello from the job" in done.stdout and "to stderr" in done.stderr
    first = read(workdir / "a.json")
    assert first["ppid"] != os.getpid()  # not a child of this test's wrapper process: of the server
    assert first["cwd"] == str(workdir / "cwd") and first["marker"] == "first"

    env["WARM_TEST_MARKER"] = "second"  # not read at import time: the same server, with the new value
    done = run_wrapper(workdir, "record", {"out": str(workdir / "b.json"), "text": "again"}, env)
    assert done.returncode == 0, done.stderr
    second = read(workdir / "b.json")
    assert second["marker"] == "second"
    assert second["ppid"] == first["ppid"]  # both forked by the same server ...
    assert second["pid"] != first["pid"]  # ... each job its own process
    assert len(list((workdir / "runtime").rglob("*.sock"))) == 1


def test_the_exit_status_is_the_jobs(workdir):
    env = environ(workdir)
    failed = run_wrapper(workdir, "fail", {}, env)
    assert failed.returncode == 1 and "the job failed on purpose" in failed.stderr
    assert run_wrapper(workdir, "leave", {"code": 3}, env).returncode == 3
    assert run_wrapper(workdir, "leave", {"code": 0}, env).returncode == 0
    killed = run_wrapper(workdir, "die", {}, env)
    assert killed.returncode == 1 and "ended without an exit status" in killed.stderr


def test_a_stopped_wrapper_stops_its_job(workdir):
    env = environ(workdir)
    pid_file = workdir / "job.pid"
    cmd, options = wrapper(workdir, "wait", {"pid_file": str(pid_file)}, env)
    proc = subprocess.Popen(cmd, **options)
    deadline = time.monotonic() + 60
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    job = int(pid_file.read_text())
    assert job != proc.pid
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while _alive(job):
        assert time.monotonic() < deadline, "the job outlived its wrapper"
        time.sleep(0.05)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie has ended: the server reaps it on its next round
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(")")[-1].split()[0] != "Z"


@pytest.mark.parametrize("setting", [{"TREEOPT_WARM": "0"}, {"SLURM_JOB_ID": "12"}])
def test_disabled_or_inside_slurm_the_job_runs_in_the_wrappers_process(workdir, setting):
    env = environ(workdir, **setting)
    done = run_wrapper(workdir, "record", {"out": str(workdir / "a.json"), "text": "here"}, env)
    assert done.returncode == 0, done.stderr
    assert "here" in done.stdout
    assert read(workdir / "a.json")["ppid"] == os.getpid()  # the wrapper (this test's child) ran it
    assert not list((workdir / "runtime").rglob("*.sock"))  # no server was started
    assert run_wrapper(workdir, "leave", {"code": 4}, env).returncode == 4


def test_the_server_key_changes_with_the_source_and_the_import_time_environment(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text("x = 1\n")
    before = warm.source_stamp(package)
    (package / "a.py").write_text("x = 22\n")  # another size
    assert warm.source_stamp(package) != before

    env = {"PATH": "/usr/bin"}
    key = warm.server_key(env)
    assert warm.server_key({**env, "NUMBA_NUM_THREADS": "1"}) != key
    assert warm.server_key({**env, "OMP_NUM_THREADS": "2"}) != key
    assert warm.server_key({**env, "WARM_TEST_MARKER": "x"}) == key  # read by a job, not at import


def test_enabled_only_outside_slurm_and_unless_switched_off():
    assert warm.enabled({})
    assert not warm.enabled({"TREEOPT_WARM": "0"})
    assert not warm.enabled({"SLURM_JOB_ID": "5"})


def test_every_preloaded_module_exists():
    """The server imports PRELOAD quietly (a missing module is skipped), so a module renamed or moved (issue #40: the
    experiment layer's rooms) would silently stop being preloaded; and every job the workflow scripts name is there."""
    import importlib

    for module in warm.PRELOAD:
        importlib.import_module(module)
    scripts = Path(__file__).resolve().parents[1] / "workflow" / "scripts"
    named = {m for path in scripts.glob("*.py") for m in re.findall(r'call\("([\w.]+:\w+)"', path.read_text())}
    assert len(named) == len(list(scripts.glob("*.py")))
    for function in named:
        module, name = function.split(":")
        assert callable(getattr(importlib.import_module(module), name)), function
