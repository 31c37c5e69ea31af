"""Reference SHA-1 span hashes (hashlib): the twin of ``neardup._native.sha1``, which must
match it bit for bit and raise the same errors.

``sha1_32(buf, starts, ends)[i]`` is the first 4 bytes of SHA-1 of ``buf[starts[i]:ends[i]]``
read as a little-endian u32 (datasketch's ``sha1_hash32``); ``sha1_64`` reads the first 8
bytes as a little-endian u64 (``sha1_hash64``). FIPS 180-4 defines SHA-1.
"""

from __future__ import annotations

import hashlib

import numpy as np
import numpy.typing as npt

__all__ = ["sha1_32", "sha1_64"]

U64 = npt.NDArray[np.uint64]
U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]


def check_ranges(size: int, starts: I64, ends: I64) -> None:
    """Byte ranges ``[starts[i], ends[i])`` inside a buffer of ``size`` bytes (the native
    kernels' check, with the same message).

    Raises:
        ValueError: the arrays differ in length, or a range is reversed or outside.
    """
    if len(starts) != len(ends):
        raise ValueError(f"starts and ends differ in length ({len(starts)} and {len(ends)})")
    bad = np.flatnonzero((starts < 0) | (ends < starts) | (ends > size))
    if len(bad):
        a, b = int(starts[bad[0]]), int(ends[bad[0]])
        raise ValueError(f"byte range [{a}, {b}) is outside the buffer of {size} bytes")


def _digests(buf: U8, starts: I64, ends: I64, width: int) -> U64:
    check_ranges(len(buf), starts, ends)
    raw = buf.tobytes()
    sha1 = hashlib.sha1
    return np.fromiter(
        (
            int.from_bytes(sha1(raw[s:e]).digest()[:width], "little")
            for s, e in zip(starts.tolist(), ends.tolist(), strict=True)
        ),
        dtype=np.uint64,
        count=len(starts),
    )


def sha1_32(buf: U8, starts: I64, ends: I64) -> U64:
    """First 4 SHA-1 bytes (little-endian) of each span, as uint64."""
    return _digests(buf, starts, ends, 4)


def sha1_64(buf: U8, starts: I64, ends: I64) -> U64:
    """First 8 SHA-1 bytes (little-endian) of each span."""
    return _digests(buf, starts, ends, 8)
