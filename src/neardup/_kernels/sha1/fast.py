"""numba SHA-1 of byte spans, bit-identical to :mod:`.reference` (FIPS 180-4).

Spans of at most 55 bytes (one padded block: most tokens and shingles) are hashed 512 at a
time in lockstep, the round loops running across tokens so that LLVM vectorizes them;
longer spans go block by block. No allocation per span; compiled lazily and cached.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from neardup._kernels.cache import njit

__all__ = ["sha1_32", "sha1_64"]

_F = TypeVar("_F", bound=Callable[..., Any])
U64 = npt.NDArray[np.uint64]
U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]

_M32 = np.uint32(0xFFFFFFFF)


def _kernel(fn: _F) -> _F:
    return cast(_F, njit()(fn))


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


_LANES = 512  # tokens hashed in lockstep: the round loops run across tokens and vectorize


@_kernel
def _round(
    a: npt.NDArray[np.uint32],
    b: npt.NDArray[np.uint32],
    c: npt.NDArray[np.uint32],
    d: npt.NDArray[np.uint32],
    e: npt.NDArray[np.uint32],
    wt: npt.NDArray[np.uint32],
    n: int,
    phase: int,
    k: np.uint32,
) -> None:
    """One SHA-1 round for ``n`` lanes (phase 0: choose, 1: parity, 2: majority)."""
    if phase == 0:
        for j in range(n):
            bj, cj, dj, aj = b[j], c[j], d[j], a[j]
            f = np.uint32((bj & cj) | (~bj & dj))
            tmp = np.uint32(((aj << np.uint32(5)) | (aj >> np.uint32(27))) + f + e[j] + k + wt[j])
            e[j] = dj
            d[j] = cj
            c[j] = np.uint32((bj << np.uint32(30)) | (bj >> np.uint32(2)))
            b[j] = aj
            a[j] = tmp
    elif phase == 1:
        for j in range(n):
            bj, cj, dj, aj = b[j], c[j], d[j], a[j]
            f = np.uint32(bj ^ cj ^ dj)
            tmp = np.uint32(((aj << np.uint32(5)) | (aj >> np.uint32(27))) + f + e[j] + k + wt[j])
            e[j] = dj
            d[j] = cj
            c[j] = np.uint32((bj << np.uint32(30)) | (bj >> np.uint32(2)))
            b[j] = aj
            a[j] = tmp
    else:
        for j in range(n):
            bj, cj, dj, aj = b[j], c[j], d[j], a[j]
            f = np.uint32((bj & cj) | (bj & dj) | (cj & dj))
            tmp = np.uint32(((aj << np.uint32(5)) | (aj >> np.uint32(27))) + f + e[j] + k + wt[j])
            e[j] = dj
            d[j] = cj
            c[j] = np.uint32((bj << np.uint32(30)) | (bj >> np.uint32(2)))
            b[j] = aj
            a[j] = tmp


@_kernel
def _lanes(buf: U8, starts: I64, ends: I64, idx: I64, wide: bool, out: U64) -> None:
    """SHA-1 of the single-block spans ``idx`` (at most 55 bytes), many tokens per round."""
    m = idx.shape[0]
    w = np.empty((80, _LANES), dtype=np.uint32)
    a = np.empty(_LANES, dtype=np.uint32)
    b = np.empty(_LANES, dtype=np.uint32)
    c = np.empty(_LANES, dtype=np.uint32)
    d = np.empty(_LANES, dtype=np.uint32)
    e = np.empty(_LANES, dtype=np.uint32)
    block = np.empty(64, dtype=np.uint8)
    for base in range(0, m, _LANES):
        n = min(_LANES, m - base)
        for j in range(n):
            s = starts[idx[base + j]]
            size = ends[idx[base + j]] - s
            block[:] = 0
            for q in range(size):
                block[q] = buf[s + q]
            block[size] = 0x80
            bits = np.uint64(size) * np.uint64(8)
            block[62] = np.uint8((bits >> np.uint64(8)) & np.uint64(0xFF))
            block[63] = np.uint8(bits & np.uint64(0xFF))
            for t in range(16):
                w[t, j] = np.uint32(
                    (np.uint32(block[4 * t]) << np.uint32(24))
                    | (np.uint32(block[4 * t + 1]) << np.uint32(16))
                    | (np.uint32(block[4 * t + 2]) << np.uint32(8))
                    | np.uint32(block[4 * t + 3])
                )
        for t in range(16, 80):
            for j in range(n):
                x = np.uint32(w[t - 3, j] ^ w[t - 8, j] ^ w[t - 14, j] ^ w[t - 16, j])
                w[t, j] = np.uint32((x << np.uint32(1)) | (x >> np.uint32(31)))
        a[:n] = np.uint32(0x67452301)
        b[:n] = np.uint32(0xEFCDAB89)
        c[:n] = np.uint32(0x98BADCFE)
        d[:n] = np.uint32(0x10325476)
        e[:n] = np.uint32(0xC3D2E1F0)
        for t in range(80):  # one round across every lane; the phase is fixed per round
            if t < 20:
                _round(a, b, c, d, e, w[t], n, 0, np.uint32(0x5A827999))
            elif t < 40:
                _round(a, b, c, d, e, w[t], n, 1, np.uint32(0x6ED9EBA1))
            elif t < 60:
                _round(a, b, c, d, e, w[t], n, 2, np.uint32(0x8F1BBCDC))
            else:
                _round(a, b, c, d, e, w[t], n, 1, np.uint32(0xCA62C1D6))
        for j in range(n):
            h0 = np.uint32(a[j] + np.uint32(0x67452301))
            v = _bswap(h0)
            if wide:
                v |= _bswap(np.uint32(b[j] + np.uint32(0xEFCDAB89))) << np.uint64(32)
            out[idx[base + j]] = v


@_kernel
def _hash_all(buf: U8, starts: I64, ends: I64, wide: bool) -> U64:
    n = starts.shape[0]
    out = np.empty(n, dtype=np.uint64)
    short = np.empty(n, dtype=np.int64)
    ns = 0
    w = np.empty(80, dtype=np.uint32)
    h = np.empty(5, dtype=np.uint32)
    tail = np.empty(128, dtype=np.uint8)
    for i in range(n):
        if ends[i] - starts[i] <= 55:
            short[ns] = i
            ns += 1
        else:
            _digest(buf, starts[i], ends[i], w, h, tail)
            v = _bswap(h[0])
            if wide:
                v |= _bswap(h[1]) << np.uint64(32)
            out[i] = v
    _lanes(buf, starts, ends, short[:ns], wide, out)
    return out


def sha1_32(buf: U8, starts: I64, ends: I64) -> U64:
    """First 4 SHA-1 bytes (little-endian) of each span, as uint64."""
    out: U64 = _hash_all(buf, starts, ends, False)
    return out


def sha1_64(buf: U8, starts: I64, ends: I64) -> U64:
    """First 8 SHA-1 bytes (little-endian) of each span."""
    out: U64 = _hash_all(buf, starts, ends, True)
    return out
