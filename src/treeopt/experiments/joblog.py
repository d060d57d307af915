"""Send a Snakemake job's output to its log file, so concurrent jobs do not interleave on the terminal."""

import contextlib
import sys
import traceback
from pathlib import Path


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
