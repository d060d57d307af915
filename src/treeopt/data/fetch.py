"""Find, download and verify raw files.

Every raw file is looked up, in order, at its local ``path:``, in the mirror folder
(env ``TREEOPT_DATA_MIRROR`` or ``data.mirror``; read in place, never copied), in
``raw_dir/{dataset}/`` (an earlier download), and only then downloaded from its URL(s).
Whatever is found is verified: its sha256 must equal one of the entry's accepted hashes,
either of the file's bytes or of its decompressed content (so a mirror's recompressed
``.gz`` and the canonical uncompressed file both verify). When the entry gives no hash,
the file's sha256 is pinned into the lock file on first use, with a warning, and checked
against that pin from then on.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import hashlib
import logging
import os
import tempfile
import urllib.error
import urllib.request
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import yaml

from .._atomic import atomic_path
from .errors import ChecksumError, DataUnavailableError, DataWarning
from .spec import DataSettings, DatasetSpec, FileSpec
from .streams import content_sha256

log = logging.getLogger(__name__)
_CHUNK = 1 << 20
Opener = Callable[..., object]


@dataclass(frozen=True)
class Located:
    """Where a raw file is (or would be) read from."""

    role: str
    path: Path
    source: str  # "path" | "mirror" | "raw" | "download"
    url: str | None = None


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify_file(
    path: Path, expected: tuple[str, ...], *, raw_digest: str | None = None, label: str | None = None,
) -> str:
    """Check ``path`` against the accepted hashes; return the sha256 of its bytes.

    Raises :class:`ChecksumError` naming the file, the expected and the actual checksums.
    """
    path = Path(path)
    name = label or str(path)
    raw = raw_digest or sha256_file(path)
    if not expected or raw in expected:
        return raw
    try:
        content = content_sha256(path)
    except Exception as exc:  # noqa: BLE001 - zlib.error, LZMAError, EOFError...: all "corrupt"
        raise ChecksumError(
            f"{name}: checksum mismatch: expected sha256 {_fmt(expected)}, got {raw} "
            f"(file bytes); the compressed stream is truncated or corrupt ({exc})"
        ) from None
    if content is not None and content in expected:
        return raw
    got = f"{raw} (file bytes)" + (f", {content} (decompressed content)" if content else "")
    raise ChecksumError(f"{name}: checksum mismatch: expected sha256 {_fmt(expected)}, got {got}")


def _fmt(hashes: tuple[str, ...]) -> str:
    return hashes[0] if len(hashes) == 1 else "one of [" + ", ".join(hashes) + "]"


# ---------------------------------------------------------------------------------- lock


@contextlib.contextmanager
def _locked(lock_file: Path) -> Iterator[None]:
    """Serialise read-modify-write of the lock file across parallel workflow jobs."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(str(lock_file) + ".flock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def read_lock(lock_file: Path) -> dict:
    if not Path(lock_file).exists():
        return {}
    with open(lock_file) as fh:
        return yaml.safe_load(fh) or {}


def pinned_sha256(lock_file: Path, dataset: str, role: str) -> str | None:
    entry = read_lock(lock_file).get(dataset, {}).get(role)
    return entry.get("sha256") if entry else None


def pin_sha256(lock_file: Path, dataset: str, role: str, digest: str, source: str) -> None:
    """Record ``digest`` as the file's checksum; written atomically."""
    lock_file = Path(lock_file)
    with _locked(lock_file):
        lock = read_lock(lock_file)
        lock.setdefault(dataset, {})[role] = {
            "sha256": digest, "source": source,
            "pinned": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        _atomic_write_text(lock_file, yaml.safe_dump(lock, sort_keys=True))


def _atomic_write_text(path: Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


# ------------------------------------------------------------------------------ download


def download(
    urls: tuple[str, ...], dest: Path, expected: tuple[str, ...], *,
    opener: Opener | None = None, timeout: float = 60.0,
) -> str:
    """Stream the first URL that works into ``dest``; return the sha256 of its bytes.

    The bytes go to a temporary file in ``dest``'s folder, are verified, and only then
    renamed onto ``dest`` (``os.replace``), so ``dest`` is either absent or complete and
    verified. A short read (fewer bytes than Content-Length) is an error.
    """
    opener = opener or urllib.request.urlopen
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    failures = []
    for url in urls:
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f"{dest.name}.p{os.getpid()}.", suffix=".part")
        try:
            digest = hashlib.sha256()
            n_bytes = 0
            with os.fdopen(fd, "wb") as out, contextlib.closing(opener(url, timeout=timeout)) as resp:
                length = _content_length(resp)
                for chunk in iter(lambda: resp.read(_CHUNK), b""):
                    out.write(chunk)
                    digest.update(chunk)
                    n_bytes += len(chunk)
            if length is not None and n_bytes != length:
                raise ChecksumError(
                    f"{dest} (from {url}): truncated download, {n_bytes} of {length} bytes; "
                    f"expected sha256 {_fmt(expected) if expected else '(none pinned yet)'}, "
                    f"got {digest.hexdigest()}"
                )
            verify_file(Path(tmp), expected, raw_digest=digest.hexdigest(), label=f"{dest} (from {url})")
            os.replace(tmp, dest)
            return digest.hexdigest()
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            failures.append(f"{url}: {exc}")
            log.info("download of %s failed: %s", url, exc)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
    raise DataUnavailableError("; ".join(failures) or f"no URL to download {dest.name}")


def _content_length(resp) -> int | None:
    headers = getattr(resp, "headers", None)
    value = headers.get("Content-Length") if headers is not None else None
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


# ------------------------------------------------------------------------------ locating


def locate(spec: DatasetSpec, fs: FileSpec, settings: DataSettings) -> Located:
    """Where ``fs`` would be read from, without reading or downloading anything."""
    if fs.path:
        return Located(fs.role, Path(fs.path).expanduser(), "path")
    if fs.mirror and settings.mirror is not None:
        candidate = settings.mirror / fs.mirror
        if candidate.is_file():
            return Located(fs.role, candidate, "mirror")
    cached = settings.raw_dir / spec.name / fs.filename
    if cached.is_file():
        return Located(fs.role, cached, "raw")
    return Located(fs.role, cached, "download", fs.urls[0] if fs.urls else None)


def ensure_file(
    spec: DatasetSpec, fs: FileSpec, settings: DataSettings, *, opener: Opener | None = None,
) -> Path:
    """Return a verified local path for one raw file, downloading it if needed."""
    where = locate(spec, fs, settings)
    expected = fs.sha256
    pinned = None
    if not expected:
        pinned = pinned_sha256(settings.lock_file, spec.name, fs.role)
        expected = (pinned,) if pinned else ()

    if where.source == "path" and not where.path.is_file():
        raise DataUnavailableError(f"dataset {spec.name!r} {fs.role}: local file {where.path} not found")
    if where.source == "download":
        if not fs.urls:
            raise DataUnavailableError(_missing_message(spec, fs, settings, "no url: given"))
        try:
            digest = download(fs.urls, where.path, expected, opener=opener)
        except DataUnavailableError as exc:
            raise DataUnavailableError(_missing_message(spec, fs, settings, str(exc))) from None
    else:
        try:
            digest = verify_file(where.path, expected)
        except ChecksumError:
            if not (where.source == "path" and pinned and not fs.sha256):
                raise
            # the user's own local file changed since its hash was pinned (no sha256 in the entry): it is
            # the data set now; pin the new hash and parse it again (the caches are keyed on it)
            digest = sha256_file(where.path)
            warnings.warn(
                f"dataset {spec.name!r} {fs.role}: local file {where.path} changed since its sha256 was "
                f"pinned ({pinned} -> {digest}); re-pinned into {settings.lock_file}", DataWarning, stacklevel=2,
            )
            pin_sha256(settings.lock_file, spec.name, fs.role, digest, str(where.path))
            return where.path
    if not expected:
        warnings.warn(
            f"dataset {spec.name!r} {fs.role}: no sha256 known for {where.path.name}; "
            f"pinned {digest} into {settings.lock_file} (first use, from {where.url or where.path})",
            DataWarning, stacklevel=2,
        )
        pin_sha256(settings.lock_file, spec.name, fs.role, digest, where.url or str(where.path))
    return where.path


def _missing_message(spec: DatasetSpec, fs: FileSpec, settings: DataSettings, why: str) -> str:
    mirror = (
        str(settings.mirror / fs.mirror) if (settings.mirror and fs.mirror)
        else f"{fs.mirror} (no mirror folder set)" if fs.mirror else "none"
    )
    return (
        f"dataset {spec.name!r} file {fs.role!r} is not available: not in the mirror "
        f"(looked for {mirror}), not in {settings.raw_dir / spec.name / fs.filename}, and the "
        f"download failed from {list(fs.urls) or 'no URL'} ({why})"
    )
