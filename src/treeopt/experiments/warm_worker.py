"""A warm worker for the workflow's jobs: one process that has imported the learners forks a child per job.

Every job of the workflow used to be a fresh Python process that imported scikit-learn, SciPy, numba and
treeopt before it did anything: about 2 CPU seconds a job, most of the default profile's time (docs/cost.md).
Here the job's wrapper (a Snakemake ``script:``, which imports only this module) hands the job to a server
that imported all of that once; the server forks, and the child runs the job as the wrapper would have:

* with the wrapper's working directory, environment and ``sys.argv``, and its standard input, output and error
  (the file descriptors are passed over the socket), so logs, C-level output and relative paths are the same;
* as its own process: a job that crashes, leaks or calls ``os._exit`` takes nothing else with it, and the run
  folder's temporary carries the child's pid as before (:mod:`treeopt.experiments.run.folders`);
* tied to the wrapper: when the wrapper goes (Snakemake stops a job, Ctrl-C), the connection closes and the
  child gets SIGTERM, as the wrapper process itself would have.

The wrapper exits with the child's exit status. A server is started by the first wrapper that finds none and
exits after ``IDLE_SECONDS`` without a job (``TREEOPT_WARM_IDLE_SECONDS`` sets another). Its socket's name hashes what the child would otherwise differ in:
the Python executable, ``sys.path``, the environment variables read at import time (``NUMBA_*``, ``OMP_*`` ...),
and treeopt's source files (path, size, mtime), so an edit of the code while a workflow runs starts a new server
instead of running old code. Inside a SLURM job (``SLURM_JOB_ID``), with ``TREEOPT_WARM=0``, or where no server
can be had, the job runs in the wrapper's own process, as before.

This module imports only the standard library at the top: the wrapper's start is the point.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib
import os
import pickle
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

IDLE_SECONDS = 30.0
START_TIMEOUT_SECONDS = 60.0
# imported by the server before it forks: what a job would import itself (the learners come in through the
# methods registry's factories, which import lazily, so they are named here)
PRELOAD = ("treeopt.experiments.jobs", "treeopt.experiments.run.runner", "treeopt.experiments.run.selection",
           "treeopt.experiments.plan.methods", "treeopt.greedy", "treeopt.nongreedy", "treeopt.tao", "treeopt.boosting",
           "treeopt.forest", "treeopt.trees", "treeopt.data", "treeopt.experiments.report.figures", "sklearn.tree",
           "sklearn.ensemble", "sklearn.linear_model", "scipy.sparse", "pandas", "yaml")
# environment read when those modules are imported (or by the OpenMP / BLAS runtimes they load): a server made
# under other values is another server
_KEY_ENV_PREFIXES = ("NUMBA_", "OMP_", "MKL_", "OPENBLAS_", "VECLIB_", "BLIS_", "NUMEXPR_", "PYTHON", "TREEOPT_",
                     "KMP_", "GOMP_")
_HEADER = struct.Struct("!Q")


def enabled(environ=None):
    environ = os.environ if environ is None else environ
    if environ.get("TREEOPT_WARM", "1") == "0" or environ.get("SLURM_JOB_ID"):
        return False
    return hasattr(socket, "AF_UNIX")


def source_stamp(root=None):
    """Path, size and mtime of every file of the treeopt package: a changed file changes the server."""
    root = Path(__file__).resolve().parents[1] if root is None else root
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".py", ".yaml", ".json")):
                st = os.stat(os.path.join(dirpath, name))
                digest.update(f"{dirpath}/{name}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def server_key(environ=None):
    environ = os.environ if environ is None else environ
    env = sorted((k, v) for k, v in environ.items() if k.startswith(_KEY_ENV_PREFIXES) and k != "TREEOPT_WARM")
    text = repr((sys.executable, sys.version, sys.path, env, source_stamp()))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


# a socket's path must fit sockaddr_un (108 bytes with its NUL); the server binds a name 12 bytes longer first
_MAX_SOCKET_DIR = 60


def socket_dir():
    base = os.environ.get("XDG_RUNTIME_DIR") or "/tmp"
    if len(os.fsencode(base)) > _MAX_SOCKET_DIR:
        base = "/tmp"
    path = Path(base) / f"treeopt-warm-{os.getuid()}"
    path.mkdir(mode=0o700, exist_ok=True)
    if path.stat().st_uid != os.getuid() or path.stat().st_mode & 0o077:
        raise OSError(f"{path} is not a private directory of this user")
    return path


# ---------------------------------------------------------------------------------------------------- wrapper side


def call(function, kwargs):
    """Run ``function`` ("module:name") with ``kwargs`` in a child of a warm server, or here when none can be had;
    return its exit status (0 when it returned, 1 when it raised: the job's own code writes the traceback)."""
    conn = _connect() if enabled() else None
    if conn is None:
        return _run_here(function, kwargs)
    with conn:
        request = pickle.dumps({"function": function, "kwargs": kwargs, "cwd": os.getcwd(),
                                "environ": dict(os.environ), "argv": sys.argv, "path": sys.path})
        try:
            socket.send_fds(conn, [_HEADER.pack(len(request))], [_stdin_fd(), 1, 2])
            conn.sendall(request)
        except OSError:  # the server went away before it took the job: nothing ran, so run it here
            return _run_here(function, kwargs)
        status = _recv_exactly(conn, 4)
    if status is None:  # the child died without a word: killed (memory, a signal) or crashed in C
        print("treeopt.warm_worker: the job's process ended without an exit status (killed?)", file=sys.stderr)
        return 1
    return struct.unpack("!i", status)[0]


def _stdin_fd():
    try:
        return sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # no standard input (closed, or replaced by a test harness)
        return os.open(os.devnull, os.O_RDONLY)


def _run_here(function, kwargs):
    try:
        _resolve(function)(**kwargs)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception:
        import traceback

        traceback.print_exc()  # as an uncaught exception of the wrapper would have been
        return 1
    return 0


def _connect():
    try:
        path = socket_dir() / f"{server_key()}.sock"
    except OSError:
        return None
    conn = _try_connect(path)
    if conn is not None:
        return conn
    # one wrapper starts the server; the others wait on the lock and then find it
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        conn = _try_connect(path)
        if conn is not None:
            return conn
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a server that died without removing its socket
        log = path.with_suffix(".log")  # the server's own errors (a job's output goes to the job's streams)
        try:
            with open(log, "w") as out:
                server = subprocess.Popen([sys.executable, "-m", "treeopt.experiments.warm_worker", str(path)],
                                          stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True,
                                          close_fds=True)
        except OSError as exc:
            print(f"treeopt.warm_worker: no warm worker ({exc}); the job runs in this process", file=sys.stderr)
            return None
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline and server.poll() is None:
            conn = _try_connect(path)
            if conn is not None:
                return conn
            time.sleep(0.05)
    print(f"treeopt.warm_worker: the warm worker did not start (see {log}); the job runs in this process", file=sys.stderr)
    return None


def _try_connect(path):
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(path))
    except OSError:
        conn.close()
        return None
    return conn


def _recv_exactly(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _resolve(function):
    module, name = function.split(":")
    return getattr(importlib.import_module(module), name)


# ----------------------------------------------------------------------------------------------------- server side


def serve(path, idle_seconds=IDLE_SECONDS):
    """Listen on ``path``; fork a child per connection; exit after ``idle_seconds`` with no job."""
    for module in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(module)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tmp = f"{path}.{os.getpid()}"
    listener.bind(tmp)
    os.rename(tmp, path)  # the socket appears complete, so no wrapper connects to a half-made server
    inode = os.stat(path).st_ino
    listener.listen(64)
    listener.settimeout(1.0)
    children = set()
    last_busy = time.monotonic()
    try:
        while True:
            while children:  # reap the ended jobs (not SIG_IGN: a child's own subprocesses must be waitable)
                pid, _ = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
                children.discard(pid)
            if children:
                last_busy = time.monotonic()
            elif time.monotonic() - last_busy > idle_seconds:
                return
            if _inode(path) != inode:
                return  # the socket was removed or replaced: another server owns the name now
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            pid = os.fork()
            if pid == 0:
                listener.close()
                _child(conn)  # never returns
            conn.close()
            children.add(pid)
            last_busy = time.monotonic()
    finally:
        if _inode(path) == inode:
            with contextlib.suppress(OSError):
                os.unlink(path)
        listener.close()


def _inode(path):
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def _child(conn):
    status = 1
    try:
        # its own process group: a signal meant for the server's group is not the job's (the server installs no
        # signal handlers, so the child has Python's usual ones, as the wrapper process had)
        os.setpgid(0, 0)
        conn.settimeout(None)
        msg, fds, _, _ = socket.recv_fds(conn, _HEADER.size, 3)
        request = pickle.loads(_recv_exactly(conn, _HEADER.unpack(msg)[0]))
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["environ"])
        sys.argv = request["argv"]
        sys.path[:] = request["path"]
        finished = _watch_wrapper(conn)
        status = _run_here(request["function"], request["kwargs"])
        finished.set()
    except BaseException:  # noqa: BLE001 - the child must end here, whatever happened
        import traceback

        traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        with contextlib.suppress(BaseException):
            conn.sendall(struct.pack("!i", int(status)))
        os._exit(int(status) if isinstance(status, int) else 1)


def _watch_wrapper(conn):
    """SIGTERM this child when its wrapper's end of the connection closes (the wrapper was stopped)."""
    import threading

    finished = threading.Event()

    def watch():
        with contextlib.suppress(OSError):
            while conn.recv(1):
                pass
        if not finished.is_set():
            os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, daemon=True).start()
    return finished


if __name__ == "__main__":
    serve(sys.argv[1], idle_seconds=float(os.environ.get("TREEOPT_WARM_IDLE_SECONDS", IDLE_SECONDS)))
