"""Run folders on disk: what is one (:func:`is_run_folder`), and the hidden temporary a run or a tree block is
written into and renamed into place at the end (:func:`make_temporary`, :func:`move_into_place`), so an interrupted
or failed run leaves nothing that looks finished.

A run folder holds ``params.yaml``, ``metrics.json``, ``model.npz`` and ``log.txt``. The temporary is named
``.{name}.tmp-p{pid}-{random}`` and holds a marker file naming the process that made it, so
:func:`clean_stale_temporaries` can remove the ones a killed process left (``kill -9``) and nothing else.
An existing folder at the run's place is replaced only when it is a run folder itself (:func:`is_run_folder`):
nothing the program did not write is ever deleted.
"""

import json
import logging
import os
import re
import shutil
import socket
import tempfile
import time
from pathlib import Path

import yaml

from ..infra.joblog import slurm_job

PATH_MODELS = "path_models.npz"  # the trees of a warm-started path's earlier steps, tree i at step i (run.fit)
RUN_FILES = frozenset({"params.yaml", "metrics.json", "model.npz", "log.txt", "segmentation.npz", PATH_MODELS})
SNAKEMAKE_MARK = ".snakemake_timestamp"  # Snakemake's own file in a directory output (its time is the output's)
TMP_MARKER = ".treeopt-run-tmp"
_TMP_NAME = re.compile(r"^\.(?P<run>.+)\.tmp-p(?P<pid>\d+)-[A-Za-z0-9_]+$")
# temporaries of earlier versions (no pid, no marker): ``.seed0.tmp-abc123xy``
_LEGACY_TMP_NAME = re.compile(r"^\.seed\d+\.tmp-[A-Za-z0-9_]{8}$")
_LEGACY_MIN_AGE = 24 * 3600.0


class RunFolderError(ValueError):
    """A run's output folder exists and is not a run folder (or replacing it was not allowed)."""


def is_run_folder(path):
    """True when ``path`` is a folder a run wrote: a ``params.yaml`` naming dataset, method, params and seed,
    and nothing but run files (``params.yaml``, ``metrics.json``, ``model.npz``, ``log.txt``, ``segmentation.npz``,
    ``path_models.npz``; no sub-folders)."""
    path = Path(path)
    if path.is_symlink() or not path.is_dir():
        return False
    names = {p.name for p in path.iterdir()} - {SNAKEMAKE_MARK}
    if "params.yaml" not in names or not names <= RUN_FILES:
        return False
    if any((path / n).is_dir() or (path / n).is_symlink() for n in names):
        return False
    try:
        setup = yaml.safe_load((path / "params.yaml").read_text())
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return False
    return isinstance(setup, dict) and {"dataset", "method", "params", "seed"} <= set(setup)


def is_finished_run(path):
    """A run folder (:func:`is_run_folder`) whose run finished: it holds its ``metrics.json``."""
    return is_run_folder(path) and (Path(path) / "metrics.json").is_file()


def check_output_folder(out_dir, *, force=False):
    """Refuse an output folder that is not empty unless ``force``, and even then unless it is a run folder.

    Raises :class:`RunFolderError` naming the folder and why; an absent or empty folder is fine.
    """
    out = Path(out_dir)
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise RunFolderError(f"{out_dir}: exists and is not a folder; choose a new folder for the run")
    if not out.exists() or not any(out.iterdir()):
        return
    if not is_run_folder(out):
        raise RunFolderError(f"{out_dir}: folder exists, is not empty and is not a run folder (a run folder "
                             f"holds only {', '.join(sorted(RUN_FILES))}); it is left alone: choose a new folder")
    if not force:
        raise RunFolderError(f"{out_dir}: holds a run already; pass --force to replace it, or choose a new folder")


def _process_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def _stale_reason(path, now):
    """Why ``path`` is a temporary run folder left by a dead process (None: not ours, or still in use)."""
    if path.is_symlink() or not path.is_dir():
        return None
    match = _TMP_NAME.match(path.name)
    if match:
        try:
            marker = json.loads((path / TMP_MARKER).read_text())
        except (OSError, ValueError, UnicodeDecodeError):
            return None  # no marker: not ours (or being renamed right now)
        if not isinstance(marker, dict) or marker.get("pid") != int(match["pid"]):
            return None
        if marker.get("host") != socket.gethostname() or _process_alive(int(match["pid"])):
            return None
        return f"process {match['pid']} that wrote it is gone"
    if _LEGACY_TMP_NAME.match(path.name):  # an earlier version's temporary: only run files, old
        entries = list(path.iterdir())
        ok = all(p.is_file() and not p.is_symlink() and (p.name in RUN_FILES or p.name.startswith("model.npz"))
                 for p in entries)
        newest = max([p.stat().st_mtime for p in entries] + [path.stat().st_mtime])
        if ok and now - newest > _LEGACY_MIN_AGE:
            return "left by an earlier version, untouched for a day"
    return None


def clean_stale_temporaries(runs_dir, log=None):
    """Remove the hidden temporary run folders that killed runs left under ``runs_dir``; return their paths.

    Only folders this module made are touched: named ``.{run}.tmp-p{pid}-...`` with the marker file naming
    that pid on this host, and that process no longer running (temporaries of runs still going are kept).
    """
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        return []
    removed, now = [], time.time()
    for dirpath, dirnames, _ in os.walk(runs_dir):
        for name in list(dirnames):
            if ".tmp-" not in name:
                continue
            path = Path(dirpath) / name
            reason = _stale_reason(path, now)
            if reason:
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
                if log:
                    log(f"removed stale temporary {path} ({reason})")
            dirnames.remove(name)  # never descend into temporaries
    return removed


def make_temporary(run_dir):
    """The hidden temporary sibling of ``run_dir``, with normal permissions (umask) and the marker file."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{run_dir.name}.tmp-p{os.getpid()}-", dir=run_dir.parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it 0700; a run folder is an ordinary folder
    (tmp / TMP_MARKER).write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname()}))
    return tmp


def move_into_place(tmp, run_dir):
    """Rename ``tmp`` to ``run_dir``; an existing run folder there is moved aside first and removed after."""
    (tmp / TMP_MARKER).unlink()
    if not run_dir.exists():
        os.rename(tmp, run_dir)
        return
    if run_dir.is_dir() and not any(run_dir.iterdir()):
        os.rmdir(run_dir)
        os.rename(tmp, run_dir)
        return
    if not is_run_folder(run_dir):  # checked again: never delete what a run did not write
        raise RunFolderError(f"{run_dir}: exists and is not a run folder; left alone (the new run is not saved)")
    old = Path(tempfile.mkdtemp(prefix=f".{run_dir.name}.old-", dir=run_dir.parent))
    os.rename(run_dir, old / run_dir.name)
    os.rename(tmp, run_dir)
    shutil.rmtree(old)


def folder_logger(folder, kind):
    """A logger ``treeopt.{kind}.{folder name}`` writing to ``folder/log.txt``, with treeopt's library lines (e.g. the
    non-greedy learner's per-epoch progress on ``treeopt.nongreedy``) in the same file; it does not propagate, so
    nothing is written twice. Returns ``(logger, detach)``: ``detach()`` closes the file and restores the library
    logger's level (call it before the folder moves or is removed; calling it again does nothing)."""
    logger = logging.getLogger(f"treeopt.{kind}.{folder.name}")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    handler = logging.FileHandler(folder / "log.txt")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    library = logging.getLogger("treeopt")
    level = library.level
    library.setLevel(logging.INFO)
    library.addHandler(handler)
    attached = [True]

    def detach():
        if attached[0]:
            attached[0] = False
            handler.close()
            logger.removeHandler(handler)
            library.removeHandler(handler)
            library.setLevel(level)

    return logger, detach


def write_run_folder(run_dir, fill):
    """Write the run folder ``run_dir`` through ``fill(tmp, logger) -> result`` (:func:`write_through_temporary`),
    its log naming the SLURM job that writes it, if any.
    An existing folder is replaced only when it is a run folder (:func:`is_run_folder`); anything else there is
    left alone (RunFolderError). Returns ``fill``'s result."""
    shown_dir = Path(run_dir)
    run_dir = Path(os.path.abspath(run_dir))
    if run_dir.exists() and run_dir.is_dir() and any(run_dir.iterdir()) and not is_run_folder(run_dir):
        raise RunFolderError(f"{shown_dir}: exists and is not a run folder; it is left alone")
    if run_dir.is_symlink() or (run_dir.exists() and not run_dir.is_dir()):
        raise RunFolderError(f"{shown_dir}: exists and is not a folder; it is left alone")

    def logged_fill(tmp, logger):
        scheduled = slurm_job()
        if scheduled:  # the scheduler's own log of this job (out-of-memory and time-limit kills show there)
            logger.info(scheduled)
        return fill(tmp, logger)

    return write_through_temporary(run_dir, logged_fill, "run", move_into_place)


def write_through_temporary(out_dir, fill, what, place):
    """``fill(tmp, logger) -> result`` into a hidden temporary beside ``out_dir`` (with its ``log.txt``), then
    ``place(tmp, out_dir)``; when ``fill`` or ``place`` fails the temporary is removed, so nothing half-written ever
    looks finished. ``what`` names the folder in the log ("run", "block")."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = make_temporary(out_dir)
    logger, detach = folder_logger(tmp, what)
    try:
        result = fill(tmp, logger)
        logger.info("done")
        detach()
        place(tmp, out_dir)
        return result
    except BaseException:
        logger.exception(f"{what} failed")
        detach()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        detach()
