"""numba kernels of Meta's PDQ hashing steps, bit-identical to
:mod:`neardup._kernels.pdq.reference` (same float32 operations in the same order).

Faster than the C++ order of work, with the same arithmetic: the column pass walks rows (a
running sum per column, so memory is read in order), luma is made in the kernel, and the
second pass computes only what decimation keeps (every running sum still runs the whole
row or column, so each kept value is the same float). Compiled lazily on first call
(``cache=True``); importing this module compiles nothing.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup._kernels.cache import njit
from neardup._kernels.pdq.reference import (
    MIN_HASHABLE_DIM,
    dct_matrix,
    decimation_indices,
    jarosz_window,
)

__all__ = ["luma_rgb", "pdq_float", "pdq_rgb"]

F32 = npt.NDArray[np.float32]
U8 = npt.NDArray[np.uint8]


@njit()
def _luma(rgb):  # type: ignore[no-untyped-def]
    h, w = rgb.shape[0], rgb.shape[1]
    out = np.empty((h, w), dtype=np.float32)
    for i in range(h):
        for j in range(w):
            v = np.float64(rgb[i, j, 0]) * 0.299 + np.float64(rgb[i, j, 1]) * 0.587
            out[i, j] = np.float32(v + np.float64(rgb[i, j, 2]) * 0.114)
    return out


@njit()
def _cols_pass(src, dst, window, cols):  # type: ignore[no-untyped-def]
    """box1DFloat down the columns ``cols`` of ``src`` (all of them when ``cols`` is every
    column), walking rows in order with one running sum per column."""
    n = src.shape[0]
    m = cols.shape[0]
    half = (window + 2) // 2
    p1 = half - 1
    p2 = window - half + 1
    p3 = n - window
    p4 = half - 1
    s = np.zeros(m, dtype=np.float32)
    size = 0
    ri = 0
    li = 0
    oi = 0
    for _ in range(p1):
        for c in range(m):
            s[c] = s[c] + src[ri, cols[c]]
        size += 1
        ri += 1
    for _ in range(p2):
        size += 1
        d = np.float32(size)
        for c in range(m):
            s[c] = s[c] + src[ri, cols[c]]
            dst[oi, c] = s[c] / d
        ri += 1
        oi += 1
    d = np.float32(size)
    for _ in range(p3):
        for c in range(m):
            v = s[c] + src[ri, cols[c]]
            s[c] = v - src[li, cols[c]]
            dst[oi, c] = s[c] / d
        li += 1
        ri += 1
        oi += 1
    for _ in range(p4):
        size -= 1
        d = np.float32(size)
        for c in range(m):
            s[c] = s[c] - src[li, cols[c]]
            dst[oi, c] = s[c] / d
        li += 1
        oi += 1


@njit()
def _rows_pass(src, dst, window, keep):  # type: ignore[no-untyped-def]
    """box1DFloat along every row of ``src``, storing only the columns ``keep`` (sorted;
    every column for the full pass), each kept one after the same running sum."""
    n = src.shape[1]
    half = (window + 2) // 2
    p1 = half - 1
    p2 = window - half + 1
    p3 = n - window
    p4 = half - 1
    m = keep.shape[0]
    for i in range(src.shape[0]):
        x = src[i]
        s = np.float32(0.0)
        size = 0
        ri = 0
        li = 0
        oi = 0
        k = 0
        for _ in range(p1):
            s = s + x[ri]
            size += 1
            ri += 1
        for _ in range(p2):
            s = s + x[ri]
            size += 1
            while k < m and keep[k] == oi:
                dst[i, k] = s / np.float32(size)
                k += 1
            ri += 1
            oi += 1
        for _ in range(p3):
            s = s + x[ri]
            s = s - x[li]
            while k < m and keep[k] == oi:
                dst[i, k] = s / np.float32(size)
                k += 1
            li += 1
            ri += 1
            oi += 1
        for _ in range(p4):
            s = s - x[li]
            size -= 1
            while k < m and keep[k] == oi:
                dst[i, k] = s / np.float32(size)
                k += 1
            li += 1
            oi += 1


@njit()
def _quality(a):  # type: ignore[no-untyped-def]
    total = 0
    hundred = np.float32(100.0)
    d255 = np.float32(255.0)
    for i in range(63):
        for j in range(64):
            d = int((a[i, j] - a[i + 1, j]) * hundred / d255)
            total += abs(d)
    for i in range(64):
        for j in range(63):
            d = int((a[i, j] - a[i, j + 1]) * hundred / d255)
            total += abs(d)
    q = total // 90
    return min(q, 100)


@njit()
def _dct16(a, d):  # type: ignore[no-untyped-def]
    t = np.zeros((16, 64), dtype=np.float32)
    for i in range(16):
        for k in range(64):
            dk = d[i, k]
            for j in range(64):
                t[i, j] = t[i, j] + dk * a[k, j]
    b = np.zeros((16, 16), dtype=np.float32)
    for i in range(16):
        for j in range(16):
            s = np.float32(0.0)
            for k in range(64):
                s = s + t[i, k] * d[j, k]
            b[i, j] = s
    return b


@njit()
def _pdq_luma(luma, d, wr, wc, ri, ci):  # type: ignore[no-untyped-def]
    rows, cols = luma.shape
    if rows < 5 or cols < 5:
        return np.zeros((16, 16), dtype=np.float32), 0
    if rows == 64 and cols == 64:
        a = luma.copy()
    else:
        every_col = np.arange(cols)
        every_row_keep = np.arange(64)
        buf2 = np.empty((rows, cols), dtype=np.float32)
        buf1 = np.empty((rows, cols), dtype=np.float32)
        # pass 1: rows then columns, in full
        _rows_pass(luma, buf2, wr, every_col)
        _cols_pass(buf2, buf1, wc, every_col)
        # pass 2: rows (kept columns only), then the kept columns down every row
        narrow = np.empty((rows, 64), dtype=np.float32)
        _rows_pass(buf1, narrow, wr, ci)
        down = np.empty((rows, 64), dtype=np.float32)
        _cols_pass(narrow, down, wc, every_row_keep)
        a = np.empty((64, 64), dtype=np.float32)
        for i in range(64):
            for j in range(64):
                a[i, j] = down[ri[i], j]
    return _dct16(a, d), _quality(a)


@njit()
def _pdq_rgb(rgb, d, wr, wc, ri, ci):  # type: ignore[no-untyped-def]
    return _pdq_luma(_luma(rgb), d, wr, wc, ri, ci)


def _geometry(
    rows: int, cols: int
) -> tuple[int, int, npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    return (
        jarosz_window(cols),
        jarosz_window(rows),
        decimation_indices(rows),
        decimation_indices(cols),
    )


def luma_rgb(rgb: U8) -> F32:
    """Same as :func:`neardup._kernels.pdq.reference.luma_rgb`."""
    out: F32 = _luma(np.ascontiguousarray(rgb))
    return out


def pdq_float(luma: F32) -> tuple[F32, int]:
    """Same as :func:`neardup._kernels.pdq.reference.pdq_float`."""
    rows, cols = luma.shape
    if rows < MIN_HASHABLE_DIM or cols < MIN_HASHABLE_DIM:
        return np.zeros((16, 16), dtype=np.float32), 0
    wr, wc, ri, ci = _geometry(rows, cols)
    b, q = _pdq_luma(np.ascontiguousarray(luma, dtype=np.float32), dct_matrix(), wr, wc, ri, ci)
    return b, int(q)


def pdq_rgb(rgb: U8) -> tuple[F32, int]:
    """:func:`pdq_float` of :func:`luma_rgb`, in one kernel call (no luma array returned)."""
    rows, cols = rgb.shape[0], rgb.shape[1]
    if rows < MIN_HASHABLE_DIM or cols < MIN_HASHABLE_DIM:
        return np.zeros((16, 16), dtype=np.float32), 0
    wr, wc, ri, ci = _geometry(rows, cols)
    b, q = _pdq_rgb(np.ascontiguousarray(rgb[:, :, :3]), dct_matrix(), wr, wc, ri, ci)
    return b, int(q)
