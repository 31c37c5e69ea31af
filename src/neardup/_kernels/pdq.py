"""numpy reference of Meta's PDQ hashing steps (``pdqhashing.cpp`` and ``downscaling.cpp`` of
facebook/ThreatExchange, as vendored by the ``pdqhash`` 0.2.8 bindings), float32 for float32.

Every float operation of the C++ is replayed in the same order on float32 values (numpy
rounds each elementwise operation to float32, as the C++ does without fused multiply-adds),
vectorized only across independent rows or columns, so the outputs are the same bits.

Reference: Meta (Facebook), "The TMK+PDQF Video-Hashing Algorithm and the PDQ Image Similarity
Algorithm" (2019).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import numpy.typing as npt

__all__ = [
    "MIN_HASHABLE_DIM",
    "dct_matrix",
    "decimation_indices",
    "jarosz_window",
    "luma_rgb",
    "pdq_float",
    "pdq_rgb",
]

F32 = npt.NDArray[np.float32]
U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]

#: Images with fewer rows or columns than this hash to all zeros with quality 0.
MIN_HASHABLE_DIM = 5
_PASSES = 2


@cache
def dct_matrix() -> F32:
    """The 16x64 DCT-II matrix of ``pdqhashing.cpp`` (rows 1..16), computed as the C++ does:
    ``float(float(sqrt(2/64)) * cos(pi/2/64 * (i+1) * (2j+1)))`` with the C library's cos."""
    scale = float(np.float32(math.sqrt(2.0 / 64.0)))
    out = np.empty((16, 64), dtype=np.float32)
    for i in range(16):
        for j in range(64):
            out[i, j] = np.float32(scale * math.cos((math.pi / 2.0 / 64.0) * (i + 1) * (2 * j + 1)))
    out.setflags(write=False)
    return out


def jarosz_window(old: int, new: int = 64) -> int:
    """``computeJaroszFilterWindowSize``: the per-pass box width, ``ceil(old / (2 new))``."""
    return (old + 2 * new - 1) // (2 * new)


def decimation_indices(old: int, new: int = 64) -> I64:
    """``decimateFloat``'s source index of each output sample (centres, not corners)."""
    return np.array([int(((i + 0.5) * old) / new) for i in range(new)], dtype=np.int64)


def luma_rgb(rgb: U8) -> F32:
    """Luma of an ``(h, w, 3+)`` uint8 array as the ``pdqhash`` bindings compute it:
    ``float32(R * 0.299 + G * 0.587 + B * 0.114)`` evaluated in float64."""
    r, g, b = rgb[:, :, 0], rgb[:, :, 1], rgb[:, :, 2]
    out: F32 = (r * 0.299 + g * 0.587 + b * 0.114).astype(np.float32)
    return out


def _box(x: F32, window: int) -> F32:
    """``box1DFloat`` along axis 1 of ``x``, for every row at once (float32 running sum)."""
    n = x.shape[1]
    out = np.empty_like(x)
    half = (window + 2) // 2
    p1, p2, p3, p4 = half - 1, window - half + 1, n - window, half - 1
    s = np.zeros(x.shape[0], dtype=np.float32)
    size = 0
    ri = li = oi = 0
    for _ in range(p1):
        s = s + x[:, ri]
        size += 1
        ri += 1
    for _ in range(p2):
        s = s + x[:, ri]
        size += 1
        out[:, oi] = s / np.float32(size)
        ri += 1
        oi += 1
    for _ in range(p3):
        s = s + x[:, ri]
        s = s - x[:, li]
        out[:, oi] = s / np.float32(size)
        li += 1
        ri += 1
        oi += 1
    for _ in range(p4):
        s = s - x[:, li]
        size -= 1
        out[:, oi] = s / np.float32(size)
        li += 1
        oi += 1
    return out


def downsample64(luma: F32) -> F32:
    """The 64x64 image PDQ hashes: two Jarosz passes (box along rows, then along columns),
    then decimation; a 64x64 input is taken as it is."""
    rows, cols = luma.shape
    if rows == 64 and cols == 64:
        return luma.astype(np.float32, copy=True)
    w_rows = jarosz_window(cols)  # window along each row
    w_cols = jarosz_window(rows)  # window along each column
    buf = np.ascontiguousarray(luma, dtype=np.float32)
    for _ in range(_PASSES):
        buf = _box(buf, w_rows)
        buf = _box(buf.T, w_cols).T
    ri, ci = decimation_indices(rows), decimation_indices(cols)
    return np.ascontiguousarray(buf[np.ix_(ri, ci)])


def quality(a: F32) -> int:
    """``pdqImageDomainQualityMetric``: quantized gradient sum / 90, at most 100."""
    hundred, d255 = np.float32(100), np.float32(255)
    dv = ((a[:-1, :] - a[1:, :]) * hundred / d255).astype(np.int64)
    dh = ((a[:, :-1] - a[:, 1:]) * hundred / d255).astype(np.int64)
    total = int(np.abs(dv).sum() + np.abs(dh).sum())
    return min(total // 90, 100)


def dct16(a: F32) -> F32:
    """``dct64To16``: ``D A D^T`` with float32 sums accumulated in the C++ order."""
    d = dct_matrix()
    t = np.zeros((16, 64), dtype=np.float32)
    for k in range(64):
        t = t + d[:, k : k + 1] * a[k : k + 1, :]
    b = np.zeros((16, 16), dtype=np.float32)
    for k in range(64):
        b = b + t[:, k : k + 1] * d[:, k][None, :]
    return b


def pdq_float(luma: F32) -> tuple[F32, int]:
    """``pdqFloat256FromFloatLuma`` of one float32 luma image: the 16x16 DCT and the quality.

    Images with fewer than :data:`MIN_HASHABLE_DIM` rows or columns give zeros and quality 0
    (the C++ clears the hash; zeros threshold to the all-zero hash too).
    """
    rows, cols = luma.shape
    if rows < MIN_HASHABLE_DIM or cols < MIN_HASHABLE_DIM:
        return np.zeros((16, 16), dtype=np.float32), 0
    a = downsample64(luma)
    return dct16(a), quality(a)


def pdq_rgb(rgb: U8) -> tuple[F32, int]:
    """:func:`pdq_float` of :func:`luma_rgb`."""
    return pdq_float(luma_rgb(rgb))
