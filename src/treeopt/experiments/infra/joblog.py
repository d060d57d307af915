"""Send a Snakemake job's output to its log file, so concurrent jobs do not interleave on the terminal; name
the SLURM job (and its log file) a run executes in."""

import contextlib
import os
import re
import subprocess
import sys
import traceback
from pathlib import Path

# `scontrol show job -o` prints one line of Key=Value fields; a value may hold spaces (a path), so it ends where
# the next " Key=" begins
_STDOUT_FIELD = re.compile(r"(?:^|\s)StdOut=(.+?)(?=\s+[A-Za-z/]+=|$)")


@contextlib.contextmanager
def logged(log_files):
    """Redirect stdout and stderr to the first log file; a failure's traceback is written there too."""
    if not log_files:
        yield
        return
    path = Path(log_files[0])
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as log, contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        try:
            yield
        except BaseException:
            traceback.print_exc(file=log)
            log.flush()
            sys.__stderr__.write(f"job failed, see {path}\n")
            raise


def slurm_job(environ=None):
    """``"SLURM job 12, log: results/logs/slurm/.../12.log"`` inside a SLURM job, else None.

    The SLURM executor plugin chooses the job's log file (``--output``); ``scontrol show job`` reports it, so a
    run's ``log.txt`` can point at the scheduler's log of the same job (memory or time-limit kills show only there).
    The path is given relative to the working directory when it lies below it.
    """
    environ = os.environ if environ is None else environ
    job = environ.get("SLURM_JOB_ID")
    if not job:
        return None
    try:
        shown = subprocess.run(["scontrol", "show", "job", "-o", job], capture_output=True, text=True, timeout=30)
        match = _STDOUT_FIELD.search(shown.stdout)
    except (OSError, subprocess.SubprocessError):
        match = None
    if match is None:
        return f"SLURM job {job} (scontrol did not name its log)"
    log = Path(match[1])
    with contextlib.suppress(ValueError):
        log = log.relative_to(Path.cwd())
    return f"SLURM job {job}, log: {log}"
