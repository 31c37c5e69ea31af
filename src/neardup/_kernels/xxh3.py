"""Reference of the batch XXH3 kernels: the ``xxhash`` package (the C library), range by range.

Same functions and results as ``neardup._native.xxh3``; slow (a Python call per range), used
without the compiled core and as the oracle.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import xxhash

__all__ = ["xxh3_64_ranges", "xxh3_128_ranges"]

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]

_MASK64 = (1 << 64) - 1


def xxh3_64_ranges(buf: U8, starts: I64, ends: I64, seed: np.uint64) -> U64:
    """XXH3-64 (seeded) of every byte range ``buf[starts[i]:ends[i]]``."""
    raw = buf.tobytes()
    s = int(seed) & _MASK64
    lo = np.empty(len(starts), dtype=np.uint64)
    for i, (a, b) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        lo[i] = xxhash.xxh3_64_intdigest(raw[a:b], s)
    return lo


def xxh3_128_ranges(buf: U8, starts: I64, ends: I64, seed: np.uint64) -> tuple[U64, U64]:
    """XXH3-128 (seeded) of every byte range, as ``(low 64 bits, high 64 bits)``."""
    raw = buf.tobytes()
    s = int(seed) & _MASK64
    n = len(starts)
    lo = np.empty(n, dtype=np.uint64)
    hi = np.empty(n, dtype=np.uint64)
    for i, (a, b) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        v = xxhash.xxh3_128_intdigest(raw[a:b], s)
        lo[i] = v & _MASK64
        hi[i] = v >> 64
    return lo, hi
