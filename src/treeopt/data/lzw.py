"""Decoder for Unix ``compress`` (``.Z``) files, as UCI still serves several sets.

The format is LZW with codes packed least-significant-bit first, starting at 9 bits and
growing to ``maxbits``. ``compress`` writes codes in groups of eight, so whenever the
code width changes (or a CLEAR code resets the table) the rest of the current group of
``8 * n_bits`` bits is padding and must be skipped; that quirk is why a textbook LZW
decoder fails on real ``.Z`` files.
"""

from __future__ import annotations

import numpy as np
from numba import njit

MAGIC = b"\x1f\x9d"
_CLEAR = 256


class LZWError(ValueError):
    """The ``.Z`` stream is corrupt or truncated."""


@njit(cache=True, nogil=True)
def _decode(data, maxbits, block_mode, out):  # pragma: no cover - compiled
    """Decode ``data`` (bytes after the 3-byte header) into ``out``.

    Returns the number of bytes written, ``-1`` on a corrupt code, or ``-2`` when ``out``
    is too small (the caller retries with a larger buffer).
    """
    maxmaxcode = 1 << maxbits
    prefix = np.zeros(maxmaxcode, dtype=np.int32)
    suffix = np.zeros(maxmaxcode, dtype=np.uint8)
    for c in range(256):
        suffix[c] = c
    stack = np.empty(maxmaxcode, dtype=np.uint8)
    n_bits = 9
    maxcode = (1 << n_bits) - 1
    free_ent = 257 if block_mode else 256
    total_bits = data.shape[0] * 8
    origin = 0  # bit position where codes of the current width began
    pos = 0
    oldcode = -1
    finchar = 0
    n_out = 0
    while True:
        if free_ent > maxcode:
            # Skip the padding to the end of the current group of 8 codes.
            group = n_bits * 8
            pos = origin + ((pos - origin + group - 1) // group) * group
            origin = pos
            n_bits += 1
            maxcode = maxmaxcode if n_bits == maxbits else (1 << n_bits) - 1
        if pos + n_bits > total_bits:
            break
        byte = pos >> 3
        word = np.int64(data[byte])
        if byte + 1 < data.shape[0]:
            word |= np.int64(data[byte + 1]) << 8
        if byte + 2 < data.shape[0]:
            word |= np.int64(data[byte + 2]) << 16
        if byte + 3 < data.shape[0]:
            word |= np.int64(data[byte + 3]) << 24
        code = np.int64((word >> (pos & 7)) & ((1 << n_bits) - 1))
        pos += n_bits
        if oldcode == -1:
            if code >= 256:
                return -1
            if n_out >= out.shape[0]:
                return -2
            finchar = code
            oldcode = code
            out[n_out] = code
            n_out += 1
            continue
        if code == _CLEAR and block_mode:
            group = n_bits * 8
            pos = origin + ((pos - origin + group - 1) // group) * group
            origin = pos
            n_bits = 9
            maxcode = (1 << n_bits) - 1
            free_ent = 256  # the next code read creates entry 256 again (as unlzw.c)
            continue
        incode = code
        sp = 0
        if code >= free_ent:  # the KwKwK case
            if code > free_ent:
                return -1
            stack[sp] = finchar
            sp += 1
            code = oldcode
        while code >= 256:
            stack[sp] = suffix[code]
            sp += 1
            code = prefix[code]
        finchar = suffix[code]
        stack[sp] = finchar
        sp += 1
        if n_out + sp > out.shape[0]:
            return -2
        for i in range(sp):
            out[n_out + i] = stack[sp - 1 - i]
        n_out += sp
        if free_ent < maxmaxcode:
            prefix[free_ent] = oldcode
            suffix[free_ent] = finchar
            free_ent += 1
        oldcode = incode
    return n_out


def decompress(blob: bytes) -> bytes:
    """Decompress a whole ``.Z`` file held in memory."""
    if blob[:2] != MAGIC or len(blob) < 3:
        raise LZWError("not a .Z (compress) stream: bad magic bytes")
    flags = blob[2]
    maxbits, block_mode = flags & 0x1F, bool(flags & 0x80)
    if not 10 <= maxbits <= 16:  # compress -b9 streams are rare and not supported
        raise LZWError(f"unsupported .Z maximum code width {maxbits} (supported: 10..16)")
    data = np.frombuffer(blob, dtype=np.uint8, offset=3)
    size = max(4 * len(data), 1 << 16)
    while True:
        out = np.empty(size, dtype=np.uint8)
        n = _decode(data, maxbits, block_mode, out)
        if n == -1:
            raise LZWError("corrupt .Z stream: code beyond the table")
        if n >= 0:
            return out[:n].tobytes()
        size *= 4
