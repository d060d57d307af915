"""Workflow jobs started by forking a warm process instead of starting a fresh Python for each.

Every Snakemake job is a new Python process, and before it fits anything it imports numpy, SciPy,
scikit-learn, pandas and numba and loads treeopt's compiled kernels: about 1.5-2 CPU seconds per job on an idle
machine, more than most runs of the default profile take (a tree on 1,800 digits fits in a fraction of a second).
So when the workflow runs locally, the Snakefile starts one *warm server* (:func:`start_server`, in ``onstart``)
that imports all of that once and then forks a child per job. A job's script (``workflow/scripts/*.py``) hands its
arguments to the server (:func:`run_job`) and waits for the child's verdict; the child runs the job function of
:mod:`treeopt.experiments.jobs`, writes the job's log, and exits. The numbers a run writes do not depend on where
it ran: the same function, the same arguments, a fresh process image.

Without a server (a cluster node, ``TREEOPT_WARM_SERVER`` unset, or the server not answering) the script runs
the job in its own process, exactly as before.

Safety:

* the server never runs numba's parallel kernels: GNU OpenMP (numba's ``omp`` threading layer) cannot survive
  a fork; before each fork the server checks that no threading layer has started, and refuses otherwise (the
  script then runs the job itself);
* a child is killed (with its process group) when its script goes away (Snakemake cancelled the job), and the
  server exits when the Snakemake process that started it is gone or asks it to stop (``onsuccess`` /
  ``onerror``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
import traceback

ENV = "TREEOPT_WARM_SERVER"
_SERVER = {}  # the server process started by this (Snakemake) process


def _send(sock, message):
    sock.sendall((json.dumps(message) + "\n").encode())


def _receive(sock):
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk
    return json.loads(data)


# ---------------------------------------------------------------------------------------------- the job side
def run_job(name, kwargs, log=None):
    """Run job ``name`` of :mod:`treeopt.experiments.jobs` with ``kwargs``, output going to the log file ``log``
    (the first of a Snakemake ``log`` list): in a child of the warm server when one answers, else here."""
    log = str(log[0]) if isinstance(log, (list, tuple)) and log else (str(log) if log else None)
    path = os.environ.get(ENV)
    if path:
        verdict = _delegate(path, name, kwargs, log)
        if verdict is not None:
            if not verdict.get("ok"):
                sys.stderr.write(f"job failed, see {log or 'the server output'}\n")
                raise SystemExit(1)
            return
    _run_here(name, kwargs, log)


def _delegate(path, name, kwargs, log):
    """The server's verdict ({"ok": bool}), or None when there is no server to ask (run the job here)."""
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
    except OSError:
        return None
    with sock:
        _send(sock, {"job": name, "kwargs": kwargs, "log": log, "cwd": os.getcwd()})
        reply = _receive(sock)
    if reply is None:  # the child died without a verdict (killed, crashed)
        return {"ok": False}
    if reply.get("refused"):
        return None
    return reply


def _run_here(name, kwargs, log):
    from . import jobs
    from .joblog import logged

    kwargs = json.loads(json.dumps(kwargs))  # the arguments a server's child would get
    with logged([log] if log else None):
        getattr(jobs, name)(**kwargs)


# ---------------------------------------------------------------------------------------------- the server
WARM_MODULES = ("numpy", "scipy.sparse", "scipy.stats", "pandas", "sklearn.base", "sklearn.ensemble", "sklearn.tree",
                "yaml", "matplotlib", "treeopt.experiments.runner", "treeopt.experiments.selection",
                "treeopt.experiments.tables", "treeopt.experiments.jobs", "treeopt.forest", "treeopt.greedy",
                "treeopt.nongreedy", "treeopt.tao", "treeopt.boosting", "treeopt.segmentation", "treeopt.data",
                "treeopt.experiments.sgd_timing", "treeopt.plots.render")


def _threading_started():
    """True once numba's threading layer is running (forking would then be unsafe)."""
    try:
        import numba

        numba.threading_layer()
    except (ValueError, ImportError):
        return False
    return True


def _warm_up():
    import importlib

    import matplotlib

    matplotlib.use("Agg")
    for module in WARM_MODULES:
        try:
            importlib.import_module(module)
        except ImportError:
            pass


def _child(conn, request, others):
    """Run one job in this forked child; the verdict goes back over ``conn``; never returns."""
    code = 1
    try:
        for sock in others:  # the listener and other jobs' connections: their scripts must see only their own child
            sock.close()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the server's handler would make the child ignore SIGTERM
        os.setpgid(0, 0)
        os.chdir(request["cwd"])
        log = request.get("log")
        if log:
            os.makedirs(os.path.dirname(log) or ".", exist_ok=True)
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.close(fd)
            sys.stdout = os.fdopen(1, "w", buffering=1)
            sys.stderr = os.fdopen(2, "w", buffering=1)
        from . import jobs

        try:
            getattr(jobs, request["job"])(**request["kwargs"])
            code = 0
        except BaseException:  # noqa: BLE001 - the traceback goes to the job's log
            traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        _send(conn, {"ok": code == 0})
        conn.close()
    finally:
        os._exit(code)


def serve(path, parent_pid):
    """Accept jobs on the UNIX socket ``path`` until asked to stop or ``parent_pid`` is gone."""
    import select

    from .runner import _process_alive

    _warm_up()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.path.exists(path):
        os.unlink(path)
    listener.bind(path)
    listener.listen(64)
    pids = {}  # connection -> child pid, while the child runs
    print("ready", flush=True)
    os.dup2(2, 1)  # nothing reads our stdout after this line: anything else goes where Snakemake's errors go
    stop = False

    def on_term(signum, frame):
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    try:
        while not stop and _process_alive(parent_pid):
            readable, _, _ = select.select([listener, *pids], [], [], 0.5)
            for sock in readable:
                if sock is listener:
                    conn, _ = listener.accept()
                    request = _receive(conn)
                    if request is None:
                        conn.close()
                    elif request.get("job") == "__stop__":
                        stop = True
                        conn.close()
                    elif _threading_started():
                        _send(conn, {"refused": "numba threading started in the server"})
                        conn.close()
                    else:
                        pid = os.fork()
                        if pid == 0:
                            _child(conn, request, [listener, *pids])
                        pids[conn] = pid
                elif sock in pids:  # the script went away before its child finished: the job was cancelled
                    _end(pids.pop(sock))
                    sock.close()
            for conn, pid in list(pids.items()):  # finished children: close our end, so their script sees EOF
                try:
                    done, _ = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    done = pid
                if done:
                    del pids[conn]
                    conn.close()
    finally:
        for conn, pid in pids.items():
            conn.close()
            _end(pid)
        listener.close()
        if os.path.exists(path):
            os.unlink(path)


def _end(pid):
    """Make sure child ``pid`` (and its process group) is gone: it has sent its verdict, or was cancelled."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return
    if done:
        return
    try:
        os.killpg(pid, signal.SIGTERM)
        for _ in range(50):
            if os.waitpid(pid, os.WNOHANG)[0]:
                return
            time.sleep(0.1)
        os.killpg(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


# ---------------------------------------------------------------------------------------------- Snakefile side
def start_server(folder=".snakemake", timeout=120):
    """Start the warm server for this process's jobs (its socket under ``folder``) and point ``TREEOPT_WARM_SERVER``
    at it; returns the socket path, or None when it did not come up (jobs then start as fresh processes)."""
    import subprocess

    os.makedirs(folder, exist_ok=True)
    path = os.path.abspath(os.path.join(folder, f"treeopt-warm-{os.getpid()}.sock"))
    if len(path.encode()) > 100:  # UNIX socket paths are short
        import tempfile

        path = os.path.join(tempfile.gettempdir(), f"treeopt-warm-{os.getpid()}.sock")
    proc = subprocess.Popen([sys.executable, "-m", "treeopt.experiments.warmstart", path, str(os.getpid())],
                            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    line = ""
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        line = proc.stdout.readline().strip()
        if line == "ready":
            break
    if line != "ready":
        proc.kill()
        return None
    _SERVER["proc"], _SERVER["path"] = proc, path
    os.environ[ENV] = path
    return path


def stop_server():
    """Stop the server :func:`start_server` started (jobs still running are ended)."""
    proc, path = _SERVER.pop("proc", None), _SERVER.pop("path", None)
    os.environ.pop(ENV, None)
    if proc is None:
        return
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        with sock:
            _send(sock, {"job": "__stop__"})
    except OSError:
        proc.terminate()
    try:
        proc.wait(timeout=30)
    except Exception:  # noqa: BLE001
        proc.kill()


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
