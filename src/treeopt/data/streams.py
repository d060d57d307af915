"""Open raw files whatever their packing: plain, gzip, bzip2, xz, ``.Z``, zip or tar.

Compression is detected from the leading magic bytes rather than the file name, so a
mirror's recompressed ``.gz`` copy and the canonical uncompressed file read the same.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import hashlib
import io
import lzma
import tarfile
import zipfile
from pathlib import Path
from typing import BinaryIO, Iterator

from . import lzw

_MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bz2", b"\xfd7zXZ\x00": "xz", lzw.MAGIC: "Z",
          b"PK\x03\x04": "zip"}
_OPENERS = {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}
_CHUNK = 1 << 20


def compression_of(path: Path) -> str | None:
    """Return ``"gzip"``, ``"bz2"``, ``"xz"``, ``"Z"``, ``"zip"`` or ``None`` (plain)."""
    with open(path, "rb") as fh:
        head = fh.read(6)
    for magic, kind in _MAGIC.items():
        if head.startswith(magic):
            return kind
    return None


@contextlib.contextmanager
def open_stream(path: Path, member: str | None = None) -> Iterator[BinaryIO]:
    """Yield a binary stream of the file's content, unpacked.

    ``member`` picks a file inside a zip or tar archive (needed when the archive holds
    several); it is ignored for files that are not archives, so a mirror's plain copy of
    that member reads the same as the canonical archive.
    """
    path = Path(path)
    kind = compression_of(path)
    if kind == "zip":
        with zipfile.ZipFile(path) as zf:
            name = _pick_member(path, [i.filename for i in zf.infolist() if not i.is_dir()], member)
            with zf.open(name) as fh:
                yield fh
        return
    if kind in _OPENERS or kind is None:
        if _is_tar(path):
            with tarfile.open(path, "r:*") as tf:
                name = _pick_member(path, [m.name for m in tf.getmembers() if m.isfile()], member)
                fh = tf.extractfile(name)
                yield fh
            return
        opener = _OPENERS.get(kind, open)
        with opener(path, "rb") as fh:
            yield fh
        return
    # .Z: no streaming decoder; the files concerned are a few MB.
    yield io.BytesIO(lzw.decompress(path.read_bytes()))


def read_bytes(path: Path, member: str | None = None) -> bytes:
    """The whole unpacked content of ``path`` (or of ``member`` inside it)."""
    with open_stream(path, member) as fh:
        return fh.read()


def content_sha256(path: Path) -> str | None:
    """sha256 of the decompressed bytes of a single compressed stream, else ``None``.

    Raises ``EOFError``/``OSError``/``LZWError`` when the stream is truncated or corrupt.
    """
    kind = compression_of(path)
    if kind not in ("gzip", "bz2", "xz", "Z"):
        return None
    digest = hashlib.sha256()
    if kind == "Z":
        digest.update(lzw.decompress(Path(path).read_bytes()))
        return digest.hexdigest()
    with _OPENERS[kind](path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _is_tar(path: Path) -> bool:
    try:
        return tarfile.is_tarfile(path)
    except (OSError, EOFError, tarfile.TarError):
        return False


def _pick_member(path: Path, names: list[str], member: str | None) -> str:
    if member is not None:
        if member in names:
            return member
        matches = [n for n in names if n.rsplit("/", 1)[-1] == member]
        if len(matches) == 1:
            return matches[0]
        raise ValueError(f"{path}: archive has no member {member!r}; members: {names[:20]}")
    if len(names) != 1:
        raise ValueError(f"{path}: archive has {len(names)} members; set options.member to one of {names[:20]}")
    return names[0]
