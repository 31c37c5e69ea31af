"""Pillow's 8-bit LANCZOS ``Image.resize`` for mode ``L``, bit for bit, batched in numpy.

Pillow (``libImaging/Resample.c``) resamples in two separable passes with fixed-point
weights: each output is ``clip8((1 << 21) + sum(pixel * w))`` where ``w`` is the normalised
float64 Lanczos-3 weight scaled by ``2**22`` and rounded half away from zero, and ``clip8``
shifts right by 22 and clamps to 0..255. Every product and partial sum is an integer below
``2**53``, so a float64 matrix product gives exactly Pillow's integers in any summation
order; that lets a whole stack of same-sized images go through one BLAS call per pass.

Reference: C. E. Duchon, "Lanczos filtering in one and two dimensions", 1979.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import numpy.typing as npt

__all__ = ["lanczos_matrix", "resize_l"]

_PRECISION_BITS = 32 - 8 - 2
_SUPPORT = 3.0


def _sinc(x: float) -> float:
    if x == 0.0:
        return 1.0
    x = x * math.pi
    return math.sin(x) / x


def _lanczos(x: float) -> float:
    if -3.0 <= x < 3.0:
        return _sinc(x) * _sinc(x / 3)
    return 0.0


@lru_cache(maxsize=1024)
def lanczos_matrix(in_size: int, out_size: int) -> npt.NDArray[np.float64]:
    """Pillow's fixed-point LANCZOS weights as a dense ``(out_size, in_size)`` matrix.

    The values are integers (stored as float64) scaled by ``2**22``; row ``i`` holds the
    weights of output pixel ``i`` (Pillow's ``precompute_coeffs`` then
    ``normalize_coeffs_8bpc``). ``math.sin`` is the C library's ``sin``, as in Pillow.

    Examples:
        >>> m = lanczos_matrix(4, 4)
        >>> bool((m == np.eye(4) * 2**22).all())
        True
    """
    scale = in_size / out_size
    filterscale = max(scale, 1.0)
    support = _SUPPORT * filterscale
    out = np.zeros((out_size, in_size), dtype=np.float64)
    for xx in range(out_size):
        center = (xx + 0.5) * scale
        ss = 1.0 / filterscale
        xmin = max(int(center - support + 0.5), 0)
        xmax = min(int(center + support + 0.5), in_size) - xmin
        weights = [_lanczos((x + xmin - center + 0.5) * ss) for x in range(xmax)]
        total = 0.0
        for w in weights:
            total += w
        for x, w in enumerate(weights):
            k = w / total if total != 0.0 else w
            fixed = (
                int(-0.5 + k * (1 << _PRECISION_BITS))
                if k < 0
                else int(0.5 + k * (1 << _PRECISION_BITS))
            )
            out[xx, xmin + x] = fixed
    return out


def _clip8(acc: npt.NDArray[np.float64]) -> npt.NDArray[np.uint8]:
    """``clip8(acc + 2**21)``: shift right by 22 and clamp to 0..255 (``acc`` is integral)."""
    acc += 1 << (_PRECISION_BITS - 1)
    acc *= 1.0 / (1 << _PRECISION_BITS)
    np.floor(acc, out=acc)
    np.clip(acc, 0, 255, out=acc)
    return acc.astype(np.uint8)


def resize_l(stack: npt.NDArray[np.uint8], width: int, height: int) -> npt.NDArray[np.uint8]:
    """``Image.resize((width, height), Image.Resampling.LANCZOS)`` on a stack of L images.

    Args:
        stack: ``(N, H, W)`` uint8 grey images, all the same size, ``H, W >= 1``.
        width: Output width.
        height: Output height.

    Returns:
        ``(N, height, width)`` uint8, equal to Pillow's result image by image.

    Examples:
        >>> img = np.arange(64, dtype=np.uint8).reshape(1, 8, 8) * 4
        >>> resize_l(img, 8, 8).tolist() == img.tolist()
        True
        >>> resize_l(img, 2, 2).shape
        (1, 2, 2)
    """
    n, h, w = stack.shape
    out: npt.NDArray[np.uint8] = stack
    if width != w:
        horizontal = lanczos_matrix(w, width)
        flat = out.reshape(n * h, w).astype(np.float64) @ horizontal.T
        out = _clip8(flat).reshape(n, h, width)
    if height != h:
        vertical = lanczos_matrix(h, height)
        out = _clip8(np.matmul(vertical, out.astype(np.float64)))
    if out is stack:
        out = stack.copy()
    return out
