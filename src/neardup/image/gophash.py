"""The Go ``fingerprint`` package's 64-bit pHash, bit for bit, in numpy (seed 000, ``phash.go``).

The pipeline (SEEDS.md section 1.3):

1. Resample the whole image to a zeroed premultiplied 32x32 RGBA grid with
   ``golang.org/x/image/draw.CatmullRom.Scale`` (v0.41.0): a separable kernel scaler whose
   horizontal pass accumulates 16-bit premultiplied samples times float64 weights in contrib
   order, and whose vertical pass clamps colour to alpha and converts with ``ftou`` then
   ``>> 8``.
2. Grey = ``0.299 R + 0.587 G + 0.114 B`` on the grid bytes.
3. The unnormalised type-II DCT of the top-left 8x8, one running float64 sum per coefficient
   (``y`` outer, ``x`` inner), with Go's own ``math.Cos`` table (:data:`GO_COS`).
4. Median of the 63 AC terms (``sorted[31]``); bit ``i`` (``i = u*8 + v``, ``u`` the
   horizontal frequency) is set iff ``dct[i] > median``; bit 0 is always 0.

Every step keeps Go's floating-point operation order, so degenerate images (gradients, flat
areas) whose coefficients tie in exact arithmetic still give Go's bits. Batches of same-sized
images are processed together: the loops run over kernel taps, never over pixels or images.

Reference: C. Zauner, "Implementation and Benchmarking of Perceptual Image Hash Functions",
2010 (the DCT pHash); Keys, "Cubic convolution interpolation", 1981 (the Catmull-Rom kernel).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np
import numpy.typing as npt

__all__ = [
    "GO_COS",
    "GRID",
    "go_grid",
    "go_grid_strips",
    "go_phash_grids",
    "go_phash_pixels",
    "go_phash_planes",
    "gray_to_dct_bits",
    "grid_to_gray",
    "is_const_alpha",
]

#: Side of the grid the image is resampled to.
GRID = 32

#: Go's ``math.Cos(((2i+1)*u)*pi/64)`` for i in 0..31 (outer) and u in 0..7 (inner), exactly
#: as the Go runtime returns it (61 of the 256 entries differ from CPython's ``math.cos`` by
#: one ulp). Copied from the vectors' ``cos_table_f64_bits``; Python float literals are
#: correctly rounded, so these are the same IEEE-754 doubles.
GO_COS: tuple[float, ...] = (
    # i = 0
    1.0,
    0.9987954562051724,
    0.9951847266721968,
    0.989176509964781,
    0.9807852804032304,
    0.9700312531945441,
    0.9569403357322088,
    0.9415440651830208,
    # i = 1
    1.0,
    0.989176509964781,
    0.9569403357322088,
    0.9039892931234433,
    0.8314696123025453,
    0.7409511253549591,
    0.6343932841636456,
    0.5141027441932218,
    # i = 2
    1.0,
    0.9700312531945441,
    0.881921264348355,
    0.7409511253549591,
    0.5555702330196023,
    0.33688985339222005,
    0.09801714032956077,
    -0.14673047445536164,
    # i = 3
    1.0,
    0.9415440651830208,
    0.773010453362737,
    0.5141027441932218,
    0.1950903220161283,
    -0.14673047445536164,
    -0.4713967368259977,
    -0.7409511253549589,
    # i = 4
    1.0,
    0.9039892931234433,
    0.6343932841636456,
    0.24298017990326398,
    -0.1950903220161282,
    -0.5956993044924332,
    -0.8819212643483549,
    -0.9987954562051724,
    # i = 5
    1.0,
    0.8577286100002721,
    0.4713967368259978,
    -0.04906767432741801,
    -0.555570233019602,
    -0.9039892931234434,
    -0.9951847266721968,
    -0.8032075314806449,
    # i = 6
    1.0,
    0.8032075314806449,
    0.2902846772544623,
    -0.33688985339221994,
    -0.8314696123025453,
    -0.9987954562051724,
    -0.7730104533627371,
    -0.24298017990326412,
    # i = 7
    1.0,
    0.7409511253549591,
    0.09801714032956077,
    -0.5956993044924332,
    -0.9807852804032303,
    -0.8577286100002722,
    -0.2902846772544624,
    0.4275550934302822,
    # i = 8
    1.0,
    0.6715589548470184,
    -0.09801714032956066,
    -0.8032075314806448,
    -0.9807852804032304,
    -0.5141027441932219,
    0.2902846772544621,
    0.9039892931234431,
    # i = 9
    1.0,
    0.5956993044924335,
    -0.2902846772544622,
    -0.9415440651830207,
    -0.8314696123025453,
    -0.04906767432741803,
    0.7730104533627367,
    0.9700312531945441,
    # i = 10
    1.0,
    0.5141027441932218,
    -0.4713967368259977,
    -0.9987954562051724,
    -0.5555702330196022,
    0.4275550934302822,
    0.9951847266721968,
    0.5956993044924332,
    # i = 11
    1.0,
    0.4275550934302822,
    -0.6343932841636453,
    -0.9700312531945441,
    -0.19509032201612866,
    0.803207531480645,
    0.881921264348355,
    -0.04906767432741754,
    # i = 12
    1.0,
    0.33688985339222005,
    -0.773010453362737,
    -0.8577286100002722,
    0.19509032201612828,
    0.9891765099647809,
    0.47139673682599803,
    -0.6715589548470176,
    # i = 13
    1.0,
    0.24298017990326398,
    -0.8819212643483549,
    -0.6715589548470187,
    0.5555702330196018,
    0.9415440651830209,
    -0.09801714032955997,
    -0.989176509964781,
    # i = 14
    1.0,
    0.14673047445536175,
    -0.9569403357322088,
    -0.4275550934302825,
    0.8314696123025453,
    0.6715589548470188,
    -0.6343932841636448,
    -0.8577286100002723,
    # i = 15
    1.0,
    0.04906767432741813,
    -0.9951847266721968,
    -0.14673047445536233,
    0.9807852804032303,
    0.24298017990326423,
    -0.9569403357322085,
    -0.33688985339222105,
    # i = 16
    1.0,
    -0.04906767432741801,
    -0.9951847266721968,
    0.14673047445536194,
    0.9807852804032304,
    -0.2429801799032628,
    -0.9569403357322087,
    0.3368898533922202,
    # i = 17
    1.0,
    -0.14673047445536164,
    -0.9569403357322089,
    0.4275550934302822,
    0.8314696123025455,
    -0.6715589548470176,
    -0.6343932841636454,
    0.8577286100002719,
    # i = 18
    1.0,
    -0.24298017990326387,
    -0.881921264348355,
    0.6715589548470183,
    0.5555702330196023,
    -0.9415440651830205,
    -0.0980171403295607,
    0.9891765099647811,
    # i = 19
    1.0,
    -0.33688985339221994,
    -0.7730104533627371,
    0.857728610000272,
    0.19509032201612878,
    -0.9891765099647811,
    0.47139673682599736,
    0.6715589548470182,
    # i = 20
    1.0,
    -0.42755509343028186,
    -0.6343932841636459,
    0.970031253194544,
    -0.1950903220161273,
    -0.8032075314806453,
    0.8819212643483547,
    0.0490676743274184,
    # i = 21
    1.0,
    -0.5141027441932216,
    -0.47139673682599786,
    0.9987954562051724,
    -0.5555702330196017,
    -0.42755509343028275,
    0.9951847266721969,
    -0.5956993044924326,
    # i = 22
    1.0,
    -0.5956993044924332,
    -0.2902846772544624,
    0.9415440651830209,
    -0.8314696123025452,
    0.04906767432741742,
    0.7730104533627375,
    -0.9700312531945441,
    # i = 23
    1.0,
    -0.6715589548470184,
    -0.09801714032956045,
    0.8032075314806453,
    -0.9807852804032305,
    0.5141027441932213,
    0.2902846772544636,
    -0.9039892931234436,
    # i = 24
    1.0,
    -0.7409511253549589,
    0.09801714032956009,
    0.5956993044924332,
    -0.9807852804032307,
    0.8577286100002719,
    -0.29028467725446255,
    -0.4275550934302813,
    # i = 25
    1.0,
    -0.8032075314806448,
    0.2902846772544621,
    0.3368898533922201,
    -0.8314696123025455,
    0.9987954562051724,
    -0.7730104533627369,
    0.24298017990326243,
    # i = 26
    1.0,
    -0.8577286100002721,
    0.4713967368259976,
    0.049067674327418154,
    -0.5555702330196024,
    0.9039892931234434,
    -0.9951847266721968,
    0.8032075314806447,
    # i = 27
    1.0,
    -0.9039892931234434,
    0.6343932841636456,
    -0.2429801799032628,
    -0.19509032201612803,
    0.5956993044924335,
    -0.8819212643483562,
    0.9987954562051724,
    # i = 28
    1.0,
    -0.9415440651830207,
    0.7730104533627367,
    -0.5141027441932213,
    0.1950903220161272,
    0.1467304744553618,
    -0.4713967368259983,
    0.7409511253549601,
    # i = 29
    1.0,
    -0.970031253194544,
    0.8819212643483548,
    -0.7409511253549593,
    0.5555702330196016,
    -0.3368898533922201,
    0.09801714032956135,
    0.14673047445536205,
    # i = 30
    1.0,
    -0.989176509964781,
    0.9569403357322088,
    -0.9039892931234431,
    0.8314696123025451,
    -0.7409511253549591,
    0.6343932841636445,
    -0.5141027441932225,
    # i = 31
    1.0,
    -0.9987954562051724,
    0.9951847266721968,
    -0.989176509964781,
    0.9807852804032304,
    -0.9700312531945441,
    0.9569403357322089,
    -0.9415440651830204,
)

_COS = np.array(GO_COS, dtype=np.float64).reshape(GRID, 8)  # [i, u]
_BIT_WEIGHTS = np.left_shift(np.uint64(1), np.arange(1, 64, dtype=np.uint64))

Float64Array = npt.NDArray[np.float64]
UInt16Array = npt.NDArray[np.uint16]
#: ``strip(top, bottom)`` returns the decoded samples of rows ``top..bottom-1``.
StripReader = Callable[[int, int], npt.NDArray[np.generic]]


def _catmull_rom(t: float) -> float:
    """x/image's CatmullRom kernel for ``0 <= t < 2``, in Go's operation order."""
    if t < 1:
        return (1.5 * t - 2.5) * t * t + 1
    return ((-0.5 * t + 2.5) * t - 4) * t + 2


@lru_cache(maxsize=512)
def _distrib(
    dw: int, sw: int
) -> tuple[npt.NDArray[np.intp], Float64Array, Float64Array, Float64Array]:
    """x/image ``newDistrib(CatmullRom, dw, sw)`` as padded arrays.

    Returns:
        ``(coords, weights, inv_total, inv_total_ffff)``: ``coords`` and ``weights`` are
        ``(dw, K)``, each row the contribs of one destination index in Go's order, padded at
        the end with weight 0.0 (adding ``x * 0.0`` leaves a finite running sum unchanged).
    """
    scale = sw / dw
    half, karg = 2.0, 1.0
    if scale > 1:
        half *= scale
        karg = 1 / scale
    rows: list[list[tuple[int, float]]] = []
    inv: list[float] = []
    for x in range(dw):
        center = (x + 0.5) * scale - 0.5
        i = max(0, math.floor(center - half))
        j = math.ceil(center + half)
        if j > sw:
            j = max(sw, i)
        total = 0.0
        row: list[tuple[int, float]] = []
        for coord in range(i, j):
            t = abs((center - coord) * karg)
            if t >= 2.0:
                continue
            w = _catmull_rom(t)
            if w == 0:
                continue
            total += w
            row.append((coord, w))
        rows.append(row)
        # total > 0 always: the coord nearest the centre has t <= 0.5 (SEEDS.md 1.3).
        inv.append(1 / total)
    width = max(len(r) for r in rows)
    coords = np.zeros((dw, width), dtype=np.intp)
    weights = np.zeros((dw, width), dtype=np.float64)
    for x, row in enumerate(rows):
        for k, (coord, w) in enumerate(row):
            coords[x, k] = coord
            weights[x, k] = w
    inv_total = np.array(inv, dtype=np.float64)
    return coords, weights, inv_total, inv_total / 0xFFFF


def horizontal_pass(planes: UInt16Array, *, const_alpha: bool) -> Float64Array:
    """x/image ``scaleX``: each source row resampled to 32 columns.

    Args:
        planes: ``(N, H, W, C)`` premultiplied 16-bit samples. ``C`` is 4 (r, g, b, a) for
            the RGBA / NRGBA / RGBA64 paths, or the colour channels only (1 for grey, 3 for
            YCbCr) when ``const_alpha`` is set.
        const_alpha: Go's Gray and YCbCr paths, whose temporary alpha is the constant 1;
            the alpha column is then left out of the result.

    Returns:
        ``(N, H, 32, C)`` float64, the ``tmp`` buffer of x/image (colour already multiplied
        by ``invTotalWeightFFFF``).
    """
    n, h, w, c = planes.shape
    coords, weights, _, inv_ffff = _distrib(GRID, w)
    acc = np.zeros((n, h, GRID, c), dtype=np.float64)
    for k in range(coords.shape[1]):
        acc += planes[:, :, coords[:, k], :] * weights[:, k, None]
    acc *= inv_ffff[:, None]
    del const_alpha  # the layout of ``planes`` already encodes it
    return acc


def vertical_pass(tmp: Float64Array, *, const_alpha: bool) -> npt.NDArray[np.uint8]:
    """x/image ``scaleY`` onto a zeroed RGBA grid: clamp colour to alpha, ``ftou``, ``>> 8``.

    Args:
        tmp: ``(N, H, 32, C)`` from :func:`horizontal_pass`.
        const_alpha: The temporary alpha is the constant 1 (Go's Gray and YCbCr paths).

    Returns:
        ``(N, 32, 32, 4)`` uint8 RGBA grids, premultiplied, exactly as Go's ``*image.RGBA``.
    """
    n, h, _, c = tmp.shape
    coords, weights, inv_total, _ = _distrib(GRID, h)
    acc = np.zeros((n, GRID, GRID, c), dtype=np.float64)
    for k in range(coords.shape[1]):
        acc += tmp[:, coords[:, k], :, :] * weights[:, k, None, None]
    if const_alpha:
        alpha_row = np.zeros(GRID, dtype=np.float64)
        for k in range(coords.shape[1]):
            alpha_row = alpha_row + 1.0 * weights[:, k]
        alpha = np.broadcast_to(alpha_row[None, :, None, None], (n, GRID, GRID, 1))
        colour = acc
    else:
        alpha = acc[..., 3:4]
        colour = acc[..., :3]
    colour = np.minimum(colour, alpha)
    if colour.shape[-1] == 1:
        colour = np.repeat(colour, 3, axis=-1)
    scale = inv_total[None, :, None, None]
    rgba = np.concatenate([colour, alpha], axis=-1) * scale
    # ftou: int32(0xffff*f + 0.5) truncates toward zero, then clamps to [0, 0xffff].
    fixed = np.clip(np.trunc(65535.0 * rgba + 0.5), 0, 65535).astype(np.uint16)
    return (fixed >> 8).astype(np.uint8)


def go_grid(planes: UInt16Array, *, const_alpha: bool) -> npt.NDArray[np.uint8]:
    """Resample a stack of same-sized images to Go's 32x32 RGBA grids.

    Args:
        planes: ``(N, H, W, C)`` premultiplied 16-bit samples (see :func:`horizontal_pass`).
            ``H`` or ``W`` of 0 gives all-zero grids, as Go's scaler does nothing then.
        const_alpha: Go's Gray / YCbCr paths (temporary alpha 1).

    Returns:
        ``(N, 32, 32, 4)`` uint8 grids.

    Examples:
        >>> flat = np.full((1, 32, 32, 1), 200 * 0x101, dtype=np.uint16)
        >>> go_grid(flat, const_alpha=True)[0, 0, 0].tolist()
        [200, 200, 200, 255]
    """
    n, h, w, _ = planes.shape
    if h == 0 or w == 0:
        return np.zeros((n, GRID, GRID, 4), dtype=np.uint8)
    return vertical_pass(horizontal_pass(planes, const_alpha=const_alpha), const_alpha=const_alpha)


def gray_to_dct_bits(gray: Float64Array) -> npt.NDArray[np.uint64]:
    """Go's DCT, median rule and bit order over a stack of 32x32 grey matrices.

    Args:
        gray: ``(N, 32, 32)`` float64, indexed ``[y, x]``.

    Returns:
        ``(N,)`` uint64 hashes.

    Examples:
        >>> int(gray_to_dct_bits(np.zeros((1, 32, 32)))[0])
        0
    """
    n = gray.shape[0]
    out = np.zeros(n, dtype=np.uint64)
    chunk = 32
    for start in range(0, n, chunk):
        g = gray[start : start + chunk]
        m = g.shape[0]
        # (gray[y][x] * C[x][u]) * C[y][v], then one running sum over y (outer), x (inner).
        a = g[:, :, :, None] * _COS[None, None, :, :]  # [n, y, x, u]
        terms = a[:, :, :, :, None] * _COS[None, :, None, None, :]  # [n, y, x, u, v]
        dct = np.add.accumulate(terms.reshape(m, GRID * GRID, 64), axis=1)[:, -1, :]
        ac = dct[:, 1:]
        median = np.sort(ac, axis=1)[:, 31]
        bits = (ac > median[:, None]).astype(np.uint64)
        out[start : start + m] = (bits * _BIT_WEIGHTS).sum(axis=1, dtype=np.uint64)
    return out


def grid_to_gray(grid: npt.NDArray[np.uint8]) -> Float64Array:
    """``0.299 R + 0.587 G + 0.114 B`` in float64, left to right, on premultiplied bytes."""
    rgb = grid[..., :3].astype(np.float64)
    return 0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]


def go_phash_planes(planes: UInt16Array, *, const_alpha: bool) -> npt.NDArray[np.uint64]:
    """The Go pHash of a stack of same-sized images given as 16-bit premultiplied planes.

    Examples:
        >>> int(go_phash_planes(np.zeros((1, 0, 0, 4), dtype=np.uint16), const_alpha=False)[0])
        0
    """
    return gray_to_dct_bits(grid_to_gray(go_grid(planes, const_alpha=const_alpha)))


def go_phash_grids(grids: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint64]:
    """The Go pHash of ``(N, 32, 32, 4)`` RGBA grids (already resampled)."""
    return gray_to_dct_bits(grid_to_gray(grids))


#: Rows resampled at a time by :func:`go_phash_image`: bounds the 16-bit working copy.
_STRIP_ROWS = 512


def _go_planes(pixels: npt.NDArray[np.generic], path: str) -> UInt16Array:
    """Turn decoded samples into Go's premultiplied 16-bit values for one decode path.

    Args:
        pixels: ``(N, H, W)`` or ``(N, H, W, C)`` samples as Pillow gives them.
        path: ``"gray"`` (8-bit grey, Go ``*image.Gray``), ``"gray16"`` (16-bit grey, Go's
            ``RGBA64At`` path), ``"rgba"`` (opaque 8-bit RGB, Go ``*image.RGBA``),
            ``"nrgba"`` (8-bit RGBA, straight alpha, Go ``*image.NRGBA``) or ``"ycbcr"``
            (8-bit Y, Cb, Cr, Go ``*image.YCbCr`` with the chroma already upsampled).
    """
    if path == "gray":
        return (pixels.astype(np.uint16) * 0x101)[..., None]
    if path == "gray16":
        v = np.clip(pixels.astype(np.int64), 0, 0xFFFF).astype(np.uint16)
        alpha = np.full_like(v, 0xFFFF)
        return np.stack([v, v, v, alpha], axis=-1)
    if path == "rgba":
        rgb = pixels[..., :3].astype(np.uint16) * 0x101
        alpha = np.full((*rgb.shape[:-1], 1), 0xFFFF, dtype=np.uint16)
        return np.concatenate([rgb, alpha], axis=-1)
    if path == "nrgba":
        a16 = pixels[..., 3:4].astype(np.uint32) * 0x101
        rgb = pixels[..., :3].astype(np.uint32) * a16 // 0xFF
        return np.concatenate([rgb, a16], axis=-1).astype(np.uint16)
    if path == "ycbcr":
        yy = pixels[..., 0].astype(np.int64) * 0x10101
        cb = pixels[..., 1].astype(np.int64) - 128
        cr = pixels[..., 2].astype(np.int64) - 128
        r = (yy + 91881 * cr) >> 8
        g = (yy - 22554 * cb - 46802 * cr) >> 8
        b = (yy + 116130 * cb) >> 8
        return np.clip(np.stack([r, g, b], axis=-1), 0, 0xFFFF).astype(np.uint16)
    raise ValueError(f"unknown Go decode path {path!r}")  # pragma: no cover - internal


def is_const_alpha(path: str) -> bool:
    """Whether Go's temporary alpha is the constant 1 on this decode path."""
    return path in ("gray", "ycbcr")


def go_phash_pixels(pixels: npt.NDArray[np.generic], path: str) -> npt.NDArray[np.uint64]:
    """The Go pHash of a stack of same-sized decoded images (``(N, H, W[, C])``).

    Examples:
        >>> grey = np.tile(np.arange(64, dtype=np.uint8) * 4, (1, 64, 1))
        >>> f"{int(go_phash_pixels(grey, 'gray')[0]):016x}"
        '0ccd92fa06331eea'
    """
    const_alpha = is_const_alpha(path)
    return go_phash_planes(_go_planes(pixels, path), const_alpha=const_alpha)


def go_grid_strips(rows: int, cols: int, strip: StripReader, path: str) -> npt.NDArray[np.uint8]:
    """Go's 32x32 grid of one image read in strips of rows, so memory stays bounded.

    Args:
        rows: Image height.
        cols: Image width.
        strip: ``strip(top, bottom)`` returns the samples of rows ``top..bottom-1``.
        path: The decode path (see :func:`go_phash_pixels`).
    """
    const_alpha = is_const_alpha(path)
    if rows == 0 or cols == 0:
        return np.zeros((1, GRID, GRID, 4), dtype=np.uint8)
    parts = []
    for top in range(0, rows, _STRIP_ROWS):
        planes = _go_planes(strip(top, min(rows, top + _STRIP_ROWS))[None], path)
        parts.append(horizontal_pass(planes, const_alpha=const_alpha))
    tmp = np.concatenate(parts, axis=1)
    return vertical_pass(tmp, const_alpha=const_alpha)
