"""Files written whole or not at all: the temporary-file-then-rename pattern, once."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


@contextlib.contextmanager
def atomic_path(path, *, prefix=None, suffix=".tmp"):
    """Yield a fresh temporary path in ``path``'s folder (created empty, named ``{prefix}XXXX{suffix}``,
    ``prefix`` defaulting to ``{name}.``); when the block ends normally the temporary is renamed onto ``path``
    (``os.replace``: a reader sees the old file or the new one, never a part of it), when it raises (Ctrl-C
    included) the temporary is removed and ``path`` is left as it was. The folder is created if needed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{path.name}." if prefix is None else prefix, suffix=suffix)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
