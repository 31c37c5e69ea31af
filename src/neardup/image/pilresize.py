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

import logging
import math
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from neardup._extras import require_extra

__all__ = ["lanczos_matrix", "pass_order", "resize_l"]

logger = logging.getLogger(__name__)

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


#: Outputs per block in :func:`_apply`: wide downscales multiply only the weights' band.
_BLOCK = 8


def _apply(
    flat: npt.NDArray[np.float64], weights: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """``flat @ weights.T``, skipping the zero band outside each block of outputs.

    Exact either way (integers below 2**53); the banded form only saves work when the
    input is much wider than the filter support (large downscales).
    """
    out_size, in_size = weights.shape
    nonzero = weights != 0
    first = nonzero.argmax(axis=1)
    last = in_size - nonzero[:, ::-1].argmax(axis=1)
    if out_size <= _BLOCK or int((last - first).max()) * 4 > in_size:
        return flat @ weights.T
    result = np.empty((flat.shape[0], out_size), dtype=np.float64)
    for start in range(0, out_size, _BLOCK):
        stop = min(out_size, start + _BLOCK)
        lo, hi = int(first[start:stop].min()), int(last[start:stop].max())
        result[:, start:stop] = flat[:, lo:hi] @ weights[start:stop, lo:hi].T
    return result


def _clip8(acc: npt.NDArray[np.float64]) -> npt.NDArray[np.uint8]:
    """``clip8(acc + 2**21)``: shift right by 22 and clamp to 0..255 (``acc`` is integral)."""
    acc += 1 << (_PRECISION_BITS - 1)
    acc *= 1.0 / (1 << _PRECISION_BITS)
    np.floor(acc, out=acc)
    np.clip(acc, 0, 255, out=acc)
    return acc.astype(np.uint8)


def _passes(
    stack: npt.NDArray[np.uint8], width: int, height: int, order: str
) -> npt.NDArray[np.uint8]:
    """Both passes in the given order (``"hv"``: horizontal first, ``"vh"``: vertical first)."""
    n, h, w = stack.shape
    out: npt.NDArray[np.uint8] = stack
    for axis in order:
        if axis == "h" and width != out.shape[2]:
            horizontal = lanczos_matrix(w, width)
            rows = out.shape[1]
            flat = _apply(out.reshape(n * rows, w).astype(np.float64), horizontal)
            out = _clip8(flat).reshape(n, rows, width)
        elif axis == "v" and height != out.shape[1]:
            # One GEMM for the whole stack: (N * cols, H) @ (H, height), not N small ones.
            cols = out.shape[2]
            flat = out.transpose(0, 2, 1).reshape(n * cols, h).astype(np.float64)
            res = _clip8(_apply(flat, lanczos_matrix(h, height))).reshape(n, cols, height)
            out = np.ascontiguousarray(res.transpose(0, 2, 1))
    return stack.copy() if out is stack else out


@lru_cache(maxsize=4096)
def pass_order(h: int, w: int, height: int, width: int) -> str:
    """Which pass Pillow runs first for this resize: ``"hv"``, ``"vh"`` or ``"pillow"``.

    Pillow has always run the horizontal pass first, but Pillow 13 runs the vertical pass
    first for some shapes (python-pillow/Pillow#9549), and the intermediate 8-bit rounding
    makes the order visible in the result. Rather than hard-code one release's rule, the
    order is read off the installed Pillow once per shape: a seeded random probe image is
    resized by Pillow and by both orders here. ``"pillow"`` means neither order reproduced
    it (a Pillow whose arithmetic differs): callers then let Pillow resize.

    Examples:
        >>> pass_order(40, 40, 8, 8)
        'hv'
    """
    if width == w or height == h:
        return "hv"  # one pass only; the order is moot
    image_mod = require_extra("image", "PIL.Image")
    rng = np.random.default_rng([h, w, height, width])
    for _ in range(4):
        probe = rng.integers(0, 256, size=(1, h, w), dtype=np.uint8)
        pil = image_mod.fromarray(probe[0], "L").resize(
            (width, height), image_mod.Resampling.LANCZOS
        )
        want = np.asarray(pil)
        hv = np.array_equal(_passes(probe, width, height, "hv")[0], want)
        vh = np.array_equal(_passes(probe, width, height, "vh")[0], want)
        if hv != vh:
            return "hv" if hv else "vh"
        if not hv:
            logger.warning(
                "Pillow's LANCZOS resize %dx%d -> %dx%d is not reproduced; using Pillow",
                w,
                h,
                width,
                height,
            )
            return "pillow"
    return "hv"  # both orders agree on every probe: the shapes make them equivalent


#: Longest side, as a multiple of the output side, that is resized exactly; a longer one is
#: box-reduced first (see :func:`_reduce_extreme`).
MAX_SIDE_RATIO = 4096


def _box_reduce(stack: npt.NDArray[np.uint8], axis: int, factor: int) -> npt.NDArray[np.uint8]:
    """Mean of each run of ``factor`` pixels along ``axis`` (a shorter last run: its own
    mean), rounded half up (close to Pillow's ``Image.reduce``, not bit-equal)."""
    moved = np.moveaxis(stack, axis, -1)
    size = moved.shape[-1]
    full = size // factor
    parts = []
    if full:
        body = moved[..., : full * factor].reshape(*moved.shape[:-1], full, factor)
        parts.append((body.sum(axis=-1, dtype=np.uint64) + factor // 2) // factor)
    if size > full * factor:
        tail = moved[..., full * factor :]
        count = tail.shape[-1]
        total = tail.sum(axis=-1, dtype=np.uint64, keepdims=True)
        parts.append((total + count // 2) // count)
    out = np.concatenate(parts, axis=-1).astype(np.uint8)
    return np.ascontiguousarray(np.moveaxis(out, -1, axis))


def _reduce_extreme(stack: npt.NDArray[np.uint8], width: int, height: int) -> npt.NDArray[np.uint8]:
    """Box-reduce a side longer than :data:`MAX_SIDE_RATIO` times its output side.

    The exact LANCZOS replay holds an ``(output, input)`` weight matrix per pass, and Pillow
    a band of ``3 * input / output`` weights per output pixel: an 80,000,000 x 1 image (under
    the pixel cap) would need gigabytes either way. Such sides are first averaged down to at
    most ``MAX_SIDE_RATIO`` times the output side, so that memory stays bounded; images of
    ordinary shape are untouched and stay bit-identical to Pillow.
    """
    _, h, w = stack.shape
    for axis, size, out in ((2, w, width), (1, h, height)):
        limit = MAX_SIDE_RATIO * max(out, 1)
        if size > limit:
            factor = -(-size // limit)
            logger.info("image side of %d pixels box-reduced by %d before resizing", size, factor)
            stack = _box_reduce(stack, axis, factor)
    return stack


def resize_l(stack: npt.NDArray[np.uint8], width: int, height: int) -> npt.NDArray[np.uint8]:
    """``Image.resize((width, height), Image.Resampling.LANCZOS)`` on a stack of L images.

    Args:
        stack: ``(N, H, W)`` uint8 grey images, all the same size, ``H, W >= 1``.
        width: Output width.
        height: Output height.

    Returns:
        ``(N, height, width)`` uint8, equal to the installed Pillow's result image by image
        (a side over :data:`MAX_SIDE_RATIO` times its output side is box-reduced first).

    Examples:
        >>> img = np.arange(64, dtype=np.uint8).reshape(1, 8, 8) * 4
        >>> resize_l(img, 8, 8).tolist() == img.tolist()
        True
        >>> resize_l(img, 2, 2).shape
        (1, 2, 2)
    """
    stack = _reduce_extreme(stack, width, height)
    _, h, w = stack.shape
    order = pass_order(h, w, height, width)
    if order == "pillow":
        image_mod = require_extra("image", "PIL.Image")
        lanczos = image_mod.Resampling.LANCZOS
        return np.stack(
            [
                np.asarray(image_mod.fromarray(a, "L").resize((width, height), lanczos))
                for a in stack
            ]
        )
    return _passes(stack, width, height, order)
