"""Average, perceptual, difference, wavelet and colour hashes, one image or many at once.

``preset="imagehash"`` reproduces imagehash 4.3 (``average_hash``, ``phash``, ``dhash``,
``whash``, ``colorhash``) bit for bit for the same Pillow: the grey conversion is Pillow's
own ``convert("L")``, the LANCZOS resize is Pillow's fixed-point arithmetic replayed exactly
(:mod:`neardup.image.pilresize`), and the DCT and wavelet steps call the same SciPy and
PyWavelets routines on stacks of images. ``preset="go"`` is the Go ``fingerprint`` pHash
(:mod:`neardup.image.gophash`).

Batching: images are decoded one by one (optionally in threads, Pillow releases the GIL while
decoding), then grouped by size; each group is resized with one matrix product per pass and
transformed with one DCT / wavelet call for the whole group.

References: N. Krawetz, "Looks Like It" (2011) and "Kind of Like That" (2013), the average
and difference hashes; C. Zauner (2010), the DCT pHash.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from neardup._extras import require_extra
from neardup.errors import ConfigError, DecodeError, InputError
from neardup.image import gophash
from neardup.image.decode import DEFAULT_MAX_PIXELS, ImageSource, describe, opened
from neardup.image.pilresize import resize_l
from neardup.image.value import ImageHash, ImageHashParams

if TYPE_CHECKING:
    from PIL import Image as PILImage

__all__ = ["hash_image", "hash_many"]

logger = logging.getLogger(__name__)

U8 = npt.NDArray[np.uint8]


@dataclass(frozen=True, slots=True)
class _Prepared:
    """One decoded image reduced to what the batched stage needs."""

    gray: U8 | None = None  # imagehash preset: Pillow's convert("L")
    pil: PILImage.Image | None = None  # imagehash preset, caller's image: converted in a batch
    grid: U8 | None = None  # go preset: the 32x32 RGBA grid
    value: int | None = None  # colorhash: computed per image


def _draft_request(params: ImageHashParams) -> tuple[str, tuple[int, int] | None] | None:
    """What to pass to ``Image.draft`` (JPEG decoding mode and DCT scaling), if anything."""
    if params.preset == "go":
        side = 2 * gophash.GRID
        return ("YCbCr", (side, side) if params.jpeg_draft else None)
    if not params.jpeg_draft or params.method == "colorhash":
        return None
    side = 2 * params.hash_size * (params.highfreq_factor if params.method == "phash" else 1)
    return ("L", (side, side))


def _to_gray(im: PILImage.Image) -> U8:
    """``np.asarray(im.convert("L"))`` exactly as imagehash gets it, without Pillow's warning
    about palette transparency given as bytes (which ``convert("L")`` drops anyway)."""
    if im.mode == "P" and isinstance(im.info.get("transparency"), bytes):
        im = im.copy()
        del im.info["transparency"]
    return np.asarray(im.convert("L"))


def _go_grid(im: PILImage.Image) -> U8:
    """Go's 32x32 grid of a decoded image, choosing the decode path Go would take."""
    if im.format == "GIF":
        extent = getattr(im, "dispose_extent", None)
        if extent is not None and tuple(extent) != (0, 0, im.width, im.height):
            im = im.crop(tuple(extent))  # Go returns frame 0 with its own bounds
    mode = im.mode
    has_trns = "transparency" in im.info
    if mode == "1":
        im, path = im.convert("L"), "gray"
    elif mode == "L" and not has_trns:
        path = "gray"
    elif mode == "RGB" and not has_trns:
        path = "rgba"
    elif mode == "YCbCr":
        path = "ycbcr"
    elif mode in ("I;16", "I;16L", "I;16B", "I;16N", "I") and not has_trns:
        path = "gray16"
    else:
        im, path = im.convert("RGBA"), "nrgba"
    width, height = im.size
    if height <= 512:
        whole = np.asarray(im)
        grid = gophash.go_grid_strips(height, width, lambda a, b: whole[a:b], path)
        return grid.reshape(gophash.GRID, gophash.GRID, 4)

    def strip(top: int, bottom: int) -> npt.NDArray[np.generic]:
        return np.asarray(im.crop((0, top, width, bottom)))

    grid = gophash.go_grid_strips(height, width, strip, path)
    return grid.reshape(gophash.GRID, gophash.GRID, 4)


def _colorhash_value(im: PILImage.Image, binbits: int) -> int:
    """imagehash 4.3 ``colorhash``, step for step."""
    intensity = _to_gray(im).flatten()
    hsv = np.asarray(im.convert("HSV"))
    h, s = hsv[..., 0].flatten(), hsv[..., 1].flatten()
    mask_black = intensity < 256 // 8
    frac_black = mask_black.mean()
    mask_gray = s < 256 // 3
    frac_gray = np.logical_and(~mask_black, mask_gray).mean()
    mask_colors = np.logical_and(~mask_black, ~mask_gray)
    mask_faint = np.logical_and(mask_colors, s < 256 * 2 // 3)
    mask_bright = np.logical_and(mask_colors, s > 256 * 2 // 3)
    c = max(1, int(mask_colors.sum()))
    hue_bins = np.linspace(0, 255, 6 + 1)
    faint = np.histogram(h[mask_faint], bins=hue_bins)[0] if mask_faint.any() else np.zeros(6)
    bright = np.histogram(h[mask_bright], bins=hue_bins)[0] if mask_bright.any() else np.zeros(6)
    maxvalue = 2**binbits
    values = [
        min(maxvalue - 1, int(frac_black * maxvalue)),
        min(maxvalue - 1, int(frac_gray * maxvalue)),
    ]
    for counts in list(faint) + list(bright):
        values.append(min(maxvalue - 1, int(counts * maxvalue * 1.0 / c)))
    result = 0
    for v in values:
        for i in range(binbits):
            result = (result << 1) | int(v // (2 ** (binbits - i - 1)) % 2 ** (binbits - i) > 0)
    return result


#: Modes whose conversion to L is pointwise, so many images can share one convert() call.
_POINTWISE_L = ("RGB", "RGBA", "L")
#: Images up to this many pixels are converted to grey together (see :func:`_gray_batch`).
_BATCH_CONVERT_PIXELS = 1 << 20


def _prepare(source: ImageSource, params: ImageHashParams, max_pixels: int) -> _Prepared:
    """Decode one source and reduce it to the input of the batched stage."""
    if (
        params.preset == "imagehash"
        and params.method != "colorhash"
        and not params.exif_transpose
        and getattr(source, "mode", None) in _POINTWISE_L
        and 0 < getattr(source, "width", 0) * getattr(source, "height", 0) <= _BATCH_CONVERT_PIXELS
    ):
        image_mod = require_extra("image", "PIL.Image")
        if isinstance(source, image_mod.Image):
            with opened(source, max_pixels=max_pixels) as im:  # applies the pixel cap
                return _Prepared(pil=im)
    with opened(source, max_pixels=max_pixels, draft=_draft_request(params)) as im:
        if params.exif_transpose:
            ops = require_extra("image", "PIL.ImageOps")
            im = ops.exif_transpose(im)
        if params.preset == "go":
            return _Prepared(grid=_go_grid(im))
        if im.width == 0 or im.height == 0:
            raise InputError(
                f"{describe(source)}: the image has no pixels ({im.width}x{im.height}); "
                f"{params.method} with preset 'imagehash' needs at least 1x1"
            )
        try:
            if params.method == "colorhash":
                return _Prepared(value=_colorhash_value(im, params.binbits))
            return _Prepared(gray=_to_gray(im))
        except (ValueError, OSError) as exc:
            raise DecodeError(
                f"{describe(source)}: Pillow cannot convert mode {im.mode!r} to grey/HSV "
                f"({exc}); convert the image to RGB first"
            ) from exc


def _gray_batch(images: list[PILImage.Image]) -> U8:
    """``np.stack([np.asarray(im.convert("L")) for im in images])`` with one convert() call.

    The images share size and a mode whose grey conversion is pointwise, so pasting them
    one under the other and converting the strip gives the same bytes, with the per-call
    overhead of ``convert`` and of the array export paid once instead of per image.
    """
    image_mod = require_extra("image", "PIL.Image")
    first = images[0]
    width, height = first.size
    canvas = image_mod.new(first.mode, (width, height * len(images)))
    for i, im in enumerate(images):
        canvas.paste(im, (0, i * height))
    gray = canvas if first.mode == "L" else canvas.convert("L")
    return np.asarray(gray).reshape(len(images), height, width)


def _pack(bits: npt.NDArray[np.bool_]) -> list[int]:
    """Rows of bits (most significant first) to Python ints."""
    nbits = bits.shape[1]
    packed = np.packbits(bits, axis=1)
    pad = packed.shape[1] * 8 - nbits
    return [int.from_bytes(row.tobytes(), "big") >> pad for row in packed]


def _median_bits(values: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
    """``values > numpy.median(values)`` per image (rows of an ``(N, ...)`` stack)."""
    flat = values.reshape(values.shape[0], -1)
    return flat > np.median(flat, axis=1, keepdims=True)


def _whash_scale(params: ImageHashParams, height: int, width: int) -> int:
    if params.image_scale is not None:
        return params.image_scale
    natural = 1 << int(np.log2(min(height, width)))
    return max(natural, params.hash_size)


def _transform(stack: U8, params: ImageHashParams) -> list[int]:
    """The imagehash transform of a stack of same-sized grey images."""
    hs = params.hash_size
    n = stack.shape[0]
    if params.method == "ahash":
        small = resize_l(stack, hs, hs).reshape(n, -1)
        return _pack(small > small.mean(axis=1, keepdims=True))
    if params.method == "dhash":
        small = resize_l(stack, hs + 1, hs)
        return _pack((small[:, :, 1:] > small[:, :, :-1]).reshape(n, -1))
    if params.method == "phash":
        fftpack = require_extra("image", "scipy.fftpack")
        side = hs * params.highfreq_factor
        small = resize_l(stack, side, side)
        dct = fftpack.dct(fftpack.dct(small, axis=1), axis=2)
        return _pack(_median_bits(dct[:, :hs, :hs]))
    # whash
    pywt = require_extra("image", "pywt")
    scale = _whash_scale(params, stack.shape[1], stack.shape[2])
    ll_max_level = int(np.log2(scale))
    level = int(np.log2(hs))
    if level > ll_max_level:  # pragma: no cover - excluded by ImageHashParams
        raise ConfigError(f"hash_size {hs} is larger than image_scale {scale}")
    pixels = resize_l(stack, scale, scale) / 255.0
    if params.remove_max_haar_ll:
        coeffs = list(pywt.wavedec2(pixels, "haar", level=ll_max_level, axes=(-2, -1)))
        coeffs[0] *= 0
        pixels = pywt.waverec2(coeffs, "haar", axes=(-2, -1))
    low = pywt.wavedec2(pixels, "haar", level=ll_max_level - level, axes=(-2, -1))[0]
    return _pack(_median_bits(low))


@lru_cache(maxsize=1)
def _blas_controller() -> object | None:
    """threadpoolctl's controller when that package is importable (it is optional)."""
    try:
        module = importlib.import_module("threadpoolctl")
    except ImportError:
        return None
    controller: object = module.ThreadpoolController()
    return controller


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    """Run the batched matrix products on one BLAS thread.

    The products are many small GEMMs; a multi-threaded BLAS spends more on waking and
    synchronising threads than it saves, and much more on a busy machine (3x slower in
    benchmarks/image_bench.py). Results are exact integers either way, so this only affects
    speed. Without threadpoolctl installed the BLAS keeps its own setting.
    """
    controller = _blas_controller()
    if controller is None:
        yield
        return
    with controller.limit(limits=1, user_api="blas"):  # type: ignore[attr-defined]
        yield


def _finish(prepared: Sequence[_Prepared], params: ImageHashParams) -> list[ImageHash]:
    """Run the batched stage over prepared images, keeping the input order."""
    values: list[int | None] = [p.value for p in prepared]
    if params.preset == "go":
        grids = np.stack([p.grid for p in prepared if p.grid is not None])
        for i, v in enumerate(gophash.go_phash_grids(grids)):
            values[i] = int(v)
    else:
        grays: list[U8 | None] = [p.gray for p in prepared]
        pending: dict[tuple[str, int, int], list[int]] = {}
        for i, p in enumerate(prepared):
            if p.pil is not None:
                pending.setdefault((p.pil.mode, p.pil.width, p.pil.height), []).append(i)
        for members in pending.values():
            stack = _gray_batch([prepared[i].pil for i in members])  # type: ignore[misc]
            for i, g in zip(members, stack, strict=True):
                grays[i] = g
        groups: dict[tuple[int, ...], list[int]] = {}
        for i, g in enumerate(grays):
            if g is not None:
                groups.setdefault(g.shape, []).append(i)
        with _one_blas_thread():
            for members in groups.values():
                stack = np.stack([grays[i] for i in members])  # type: ignore[misc]
                for i, v in zip(members, _transform(stack, params), strict=True):
                    values[i] = v
    return [ImageHash(v, params) for v in values if v is not None]


def hash_image(
    image: ImageSource, params: ImageHashParams, *, max_pixels: int = DEFAULT_MAX_PIXELS
) -> ImageHash:
    """Hash one image with explicit parameters.

    Args:
        image: A path, encoded bytes, a binary file object or a ``PIL.Image.Image``.
        params: The method, preset and sizes.
        max_pixels: Refuse images with more pixels than this (decompression bombs).

    Returns:
        The hash.

    Raises:
        DecodeError: The image cannot be decoded; the message names it.
        InputTooLargeError: The image has more than ``max_pixels`` pixels.

    Examples:
        >>> from PIL import Image
        >>> str(hash_image(Image.new("L", (40, 30), 128), ImageHashParams(method="dhash")))
        '0000000000000000'
    """
    if params.method == "pdq":
        return _pdq_hashes([image], params, max_pixels, 1)[0]
    return _finish([_prepare(image, params, max_pixels)], params)[0]


def _pdq_hashes(
    images: Iterable[ImageSource], params: ImageHashParams, max_pixels: int, workers: int
) -> list[ImageHash]:
    from neardup.image.pdqhashing import pdq_codes

    out = pdq_codes(
        images,
        workers=workers,
        exif_transpose=params.exif_transpose,
        jpeg_draft=params.jpeg_draft,
        max_pixels=max_pixels,
    )
    return out.hashes()


def hash_many(
    images: Iterable[ImageSource],
    *,
    method: str = "phash",
    preset: str = "imagehash",
    params: ImageHashParams | None = None,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    workers: int = 1,
    batch_size: int = 512,
) -> list[ImageHash]:
    """Hash many images: decode each (in ``workers`` threads), then transform in batches.

    The result equals ``[hash_image(x, params) for x in images]``, bit for bit; only the
    speed differs. At most ``batch_size`` decoded (grey, or 32x32 for the Go preset) images
    are held at a time.

    Args:
        images: Paths, encoded bytes, binary file objects or ``PIL.Image.Image`` objects.
        method: ``"phash"``, ``"ahash"``, ``"dhash"``, ``"whash"``, ``"colorhash"`` or
            ``"pdq"`` (the hash only; :func:`neardup.image.pdqhashing.pdq_codes` also gives quality)
            (ignored when ``params`` is given).
        preset: ``"imagehash"`` (default) or ``"go"`` (ignored when ``params`` is given).
        params: Full parameters; overrides ``method`` and ``preset``.
        max_pixels: Refuse images with more pixels than this.
        workers: Decoding threads (Pillow decodes without holding the GIL); 1 = no threads.
        batch_size: Images per batched transform.

    Returns:
        One hash per input, in input order.

    Raises:
        DecodeError: An image cannot be decoded; the message names it.
        InputTooLargeError: An image has more than ``max_pixels`` pixels.
        ConfigError: Invalid parameters.

    Examples:
        >>> from PIL import Image
        >>> imgs = [Image.new("RGB", (64, 48), (200, 30, 30)), Image.new("L", (20, 20), 7)]
        >>> [str(h) for h in hash_many(imgs, method="ahash")]
        ['0000000000000000', '0000000000000000']
    """
    if params is None:
        params = ImageHashParams(method=method, preset=preset)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError(f"workers must be a positive integer, got {workers!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigError(f"batch_size must be a positive integer, got {batch_size!r}")
    if params.method == "pdq":
        return _pdq_hashes(images, params, max_pixels, workers)
    out: list[ImageHash] = []
    chunk: list[ImageSource] = []
    pool = ThreadPoolExecutor(max_workers=workers) if workers > 1 else None
    try:
        for item in images:
            chunk.append(item)
            if len(chunk) == batch_size:
                out.extend(_run_chunk(chunk, params, max_pixels, pool))
                chunk = []
        if chunk:
            out.extend(_run_chunk(chunk, params, max_pixels, pool))
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    return out


def _run_chunk(
    chunk: list[ImageSource],
    params: ImageHashParams,
    max_pixels: int,
    pool: ThreadPoolExecutor | None,
) -> list[ImageHash]:
    if pool is None:
        prepared = [_prepare(x, params, max_pixels) for x in chunk]
    else:
        prepared = list(pool.map(lambda x: _prepare(x, params, max_pixels), chunk))
    logger.debug("hashed a batch of %d images (%s)", len(prepared), params.fingerprint())
    return _finish(prepared, params)
