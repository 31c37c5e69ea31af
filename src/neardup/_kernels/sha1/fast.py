"""numba SHA-1 of byte spans, bit-identical to :mod:`.reference` (FIPS 180-4).

One message schedule per 64-byte block, no allocation per span; compiled lazily and cached.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
import numpy as np
import numpy.typing as npt

__all__ = ["sha1_32", "sha1_64"]

_F = TypeVar("_F", bound=Callable[..., Any])
U64 = npt.NDArray[np.uint64]
U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]

_M32 = np.uint32(0xFFFFFFFF)


def _kernel(fn: _F) -> _F:
    return cast(_F, numba.njit(cache=True, nogil=True)(fn))


@_kernel
def _rotl(x: np.uint32, r: int) -> np.uint32:
    return np.uint32((x << np.uint32(r)) | (x >> np.uint32(32 - r)))


@_kernel
def _bswap(x: np.uint32) -> np.uint64:
    y = np.uint64(x)
    return (
        ((y & np.uint64(0xFF)) << np.uint64(24))
        | ((y & np.uint64(0xFF00)) << np.uint64(8))
        | ((y >> np.uint64(8)) & np.uint64(0xFF00))
        | ((y >> np.uint64(24)) & np.uint64(0xFF))
    )


@_kernel
def _compress(src: U8, off: int, w: npt.NDArray[np.uint32], h: npt.NDArray[np.uint32]) -> None:
    """One SHA-1 compression of the 64-byte block ``src[off:off+64]`` into state ``h``."""
    for t in range(16):
        p = off + 4 * t
        w[t] = np.uint32(
            (np.uint32(src[p]) << np.uint32(24))
            | (np.uint32(src[p + 1]) << np.uint32(16))
            | (np.uint32(src[p + 2]) << np.uint32(8))
            | np.uint32(src[p + 3])
        )
    for t in range(16, 80):
        w[t] = _rotl(np.uint32(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]), 1)
    a, b, c, d, e = h[0], h[1], h[2], h[3], h[4]
    for t in range(20):  # the four round functions in separate loops: no branch per round
        tmp = np.uint32(_rotl(a, 5) + ((b & c) | (~b & d)) + e + np.uint32(0x5A827999) + w[t])
        e, d, c, b, a = d, c, _rotl(b, 30), a, tmp
    for t in range(20, 40):
        tmp = np.uint32(_rotl(a, 5) + (b ^ c ^ d) + e + np.uint32(0x6ED9EBA1) + w[t])
        e, d, c, b, a = d, c, _rotl(b, 30), a, tmp
    for t in range(40, 60):
        tmp = np.uint32(
            _rotl(a, 5) + ((b & c) | (b & d) | (c & d)) + e + np.uint32(0x8F1BBCDC) + w[t]
        )
        e, d, c, b, a = d, c, _rotl(b, 30), a, tmp
    for t in range(60, 80):
        tmp = np.uint32(_rotl(a, 5) + (b ^ c ^ d) + e + np.uint32(0xCA62C1D6) + w[t])
        e, d, c, b, a = d, c, _rotl(b, 30), a, tmp
    h[0] = np.uint32(h[0] + a)
    h[1] = np.uint32(h[1] + b)
    h[2] = np.uint32(h[2] + c)
    h[3] = np.uint32(h[3] + d)
    h[4] = np.uint32(h[4] + e)


@_kernel
def _digest(
    buf: U8, start: int, end: int, w: npt.NDArray[np.uint32], h: npt.NDArray[np.uint32], tail: U8
) -> None:
    h[0] = np.uint32(0x67452301)
    h[1] = np.uint32(0xEFCDAB89)
    h[2] = np.uint32(0x98BADCFE)
    h[3] = np.uint32(0x10325476)
    h[4] = np.uint32(0xC3D2E1F0)
    n = end - start
    full = n // 64
    for blk in range(full):
        _compress(buf, start + 64 * blk, w, h)
    rest = n - 64 * full
    size = 64 if rest < 56 else 128  # the tail: leftover bytes, 0x80, zeros, 8-byte length
    tail[rest:size] = 0
    for i in range(rest):
        tail[i] = buf[start + 64 * full + i]
    tail[rest] = 0x80
    bitlen = np.uint64(n) * np.uint64(8)
    for i in range(8):
        tail[size - 1 - i] = np.uint8((bitlen >> np.uint64(8 * i)) & np.uint64(0xFF))
    _compress(tail, 0, w, h)
    if size == 128:
        _compress(tail, 64, w, h)


@_kernel
def sha1_32(buf: U8, starts: I64, ends: I64) -> U64:
    """First 4 SHA-1 bytes (little-endian) of each span, as uint64."""
    out = np.empty(starts.shape[0], dtype=np.uint64)
    w = np.empty(80, dtype=np.uint32)
    h = np.empty(5, dtype=np.uint32)
    tail = np.empty(128, dtype=np.uint8)
    for i in range(starts.shape[0]):
        _digest(buf, starts[i], ends[i], w, h, tail)
        out[i] = _bswap(h[0])
    return out


@_kernel
def sha1_64(buf: U8, starts: I64, ends: I64) -> U64:
    """First 8 SHA-1 bytes (little-endian) of each span."""
    out = np.empty(starts.shape[0], dtype=np.uint64)
    w = np.empty(80, dtype=np.uint32)
    h = np.empty(5, dtype=np.uint32)
    tail = np.empty(128, dtype=np.uint8)
    for i in range(starts.shape[0]):
        _digest(buf, starts[i], ends[i], w, h, tail)
        out[i] = _bswap(h[0]) | (_bswap(h[1]) << np.uint64(32))
    return out
