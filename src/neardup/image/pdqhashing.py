"""[image] Meta's PDQ hash: 256 bits and a quality score, its 8 dihedral variants, batches.

Bit-equal to Meta's reference (``pdqhashing.cpp`` of facebook/ThreatExchange, the code the
``pdqhash`` PyPI bindings compile) **on the same pixels**:

* an ``(h, w, 3)`` (or ``(h, w, 4)``, alpha ignored) **uint8 RGB array** hashes as
  ``pdqhash.compute(array)`` does: luma ``float32(0.299 R + 0.587 G + 0.114 B)`` evaluated
  in float64, as the bindings do it;
* a 2-D **float32 array** is taken as the luma itself, as the C++
  ``pdqHash256FromFloatLuma`` takes it; a 2-D **uint8 array** is grey (``float(g)``, as the
  C++ ``fillFloatLumaFromGrey``);
* a **path, bytes, file or PIL image** is decoded by Pillow and hashed as
  ``np.asarray(im.convert("RGB"))`` at full resolution. Meta's command-line hasher decodes
  with CImg and first squashes images larger than 512 on a side to 512x512 (nearest
  neighbour); that decoder and resize are not reproduced, so file hashes equal
  ``pdqhash.compute(np.asarray(Image.open(f).convert("RGB")))``, not ``pdq-photo-hasher``.

Then the reference's steps, in float32: two Jarosz box-filter passes (window
``ceil(side / 128)``) and decimation to 64x64 (a 64x64 input is used as it is), the quality
metric (the quantized gradient sum / 90, at most 100), the 16x16 corner of the DCT-II, and one
bit per coefficient above the median (Torben's median of 256 values is the lower median,
which is what is computed). Images under 5 pixels on a side hash to zero with quality 0.

The 8 dihedral hashes (rotations and mirror images) come from the one DCT by sign changes and
a transpose, as the reference's ``pdqDihedralHash256esFromFloatLuma`` does, in its order:
original, rotate 90, rotate 180, rotate 270, flip x, flip y, flip plus-1, flip minus-1.

``str(hash)`` is the reference's 64-digit hex; bit ``k`` of the value is the reference's
bit ``k`` (coefficient ``(k // 16, k % 16)``). Meta's suggested match is a distance of at most
31 of 256 with quality at least 50 for both images.

Reference: Meta, "The TMK+PDQF Video-Hashing Algorithm and the PDQ Image Similarity
Algorithm" (2019), and ``pdqhashing.cpp``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._extras import require_extra
from neardup._kernels import engine
from neardup.errors import DecodeError, InputError
from neardup.image.decode import DEFAULT_MAX_PIXELS, ImageSource, describe, map_threads, opened
from neardup.image.value import ImageHash, ImageHashParams

__all__ = [
    "CROP_ANCHORS",
    "CROP_KEEPS",
    "DIHEDRAL",
    "PDQ_BITS",
    "PDQ_MATCH_DISTANCE",
    "PDQ_MIN_QUALITY",
    "PDQCodes",
    "PDQSource",
    "codes_to_hashes",
    "dihedral_dct",
    "pdq",
    "pdq_codes",
    "pdq_dihedral",
    "pdq_many",
    "pdq_variant_codes",
]

logger = logging.getLogger(__name__)

F32 = npt.NDArray[np.float32]
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]

PDQ_BITS = 256
#: Meta's suggested largest matching distance (of 256 bits).
PDQ_MATCH_DISTANCE = 31
#: Meta's suggested lowest quality worth matching.
PDQ_MIN_QUALITY = 50
#: The dihedral transforms, in the reference's (and ``pdqhash.compute_dihedral``'s) order.
DIHEDRAL: tuple[str, ...] = (
    "original",
    "rotate90",
    "rotate180",
    "rotate270",
    "flipx",
    "flipy",
    "flipplus1",
    "flipminus1",
)

#: What :func:`pdq` accepts: an image source, or a numpy array of pixels or luma.
PDQSource = ImageSource | npt.NDArray[Any]

_PARAMS = ImageHashParams(method="pdq")


def _sign_masks() -> tuple[npt.NDArray[np.float32], ...]:
    i = np.arange(16)[:, None]
    j = np.arange(16)[None, :]
    odd_i = (i & 1).astype(bool) & np.ones((16, 16), bool)
    odd_j = (j & 1).astype(bool) & np.ones((16, 16), bool)
    odd_ij = ((i + j) & 1).astype(bool)
    one = np.ones((16, 16), np.float32)
    return (
        np.where(odd_j, one, -one),  # rotate90: negate even columns, then transpose
        np.where(odd_ij, -one, one),  # rotate180
        np.where(odd_i, one, -one),  # rotate270: negate even rows, then transpose
        np.where(odd_i, one, -one),  # flipx
        np.where(odd_j, one, -one),  # flipy
        one,  # flipplus1: transpose
        np.where(odd_ij, -one, one),  # flipminus1: then transpose
    )


_SIGNS = np.stack(_sign_masks())  # (7, 16, 16)
_TRANSPOSE = np.array([True, False, True, False, False, True, True])


def dihedral_dct(dct: F32) -> F32:
    """The 8 dihedral DCTs of ``(..., 16, 16)`` DCTs: shape ``(..., 8, 16, 16)``.

    Exactly the reference's ``dct16OriginalTo*`` functions: each is the DCT with some signs
    changed, transposed for the four transforms that swap axes (negation is exact in float).

    Examples:
        >>> d = np.arange(256, dtype=np.float32).reshape(16, 16)
        >>> out = dihedral_dct(d)
        >>> out.shape, bool((out[..., 0, :, :] == d).all())
        ((8, 16, 16), True)
        >>> bool((out[..., 6, :, :] == d.T).all())  # flipplus1 is the transpose
        True
    """
    d = np.asarray(dct, dtype=np.float32)
    signed = d[..., None, :, :] * _SIGNS  # (..., 7, 16, 16); * of +-1 is exact
    swapped = np.swapaxes(signed, -1, -2)
    rest = np.where(_TRANSPOSE[:, None, None], swapped, signed)
    return np.concatenate([d[..., None, :, :], rest], axis=-3)


def _bits(dct: F32) -> U64:
    """``pdqBuffer16x16ToBits`` of ``(..., 16, 16)`` DCTs: ``(..., 4)`` uint64 words, least
    significant first (bit ``k`` = coefficient ``(k // 16, k % 16)`` above the median)."""
    flat = dct.reshape(*dct.shape[:-2], 256)
    median = np.partition(flat, 127, axis=-1)[..., 127:128]  # Torben's: the lower median
    above = flat > median
    packed = np.packbits(above, axis=-1, bitorder="little")  # (..., 32) bytes
    return np.ascontiguousarray(packed).view("<u8").astype(np.uint64, copy=False)


def _value(words: U64) -> int:
    return int.from_bytes(np.asarray(words, dtype="<u8").tobytes(), "little")


def codes_to_hashes(words: U64) -> list[ImageHash]:
    """``(n, 4)`` uint64 words (least significant first) to PDQ :class:`ImageHash` values.

    Examples:
        >>> h = codes_to_hashes(np.array([[1, 0, 0, 2 << 62]], dtype=np.uint64))[0]
        >>> str(h)
        '8000000000000000000000000000000000000000000000000000000000000001'
    """
    arr = np.asarray(words, dtype=np.uint64).reshape(-1, 4)
    return [ImageHash(_value(w), _PARAMS) for w in arr]


def _pixels(
    source: PDQSource, *, exif_transpose: bool, jpeg_draft: bool, max_pixels: int
) -> tuple[str, npt.NDArray[Any]]:
    """``("rgb", uint8 (h, w, 3+))`` or ``("luma", float32 (h, w))`` of one source."""
    if isinstance(source, np.ndarray):
        return _array_pixels(source, max_pixels)
    draft = ("RGB", (128, 128)) if jpeg_draft else None
    with opened(source, max_pixels=max_pixels, draft=draft) as im:
        if exif_transpose:
            ops = require_extra("image", "PIL.ImageOps")
            im = ops.exif_transpose(im)
        try:
            rgb = np.asarray(im if im.mode == "RGB" else im.convert("RGB"))
        except (ValueError, OSError) as exc:
            raise DecodeError(
                f"{describe(source)}: Pillow cannot convert mode {im.mode!r} to RGB ({exc}); "
                "convert the image to RGB first"
            ) from exc
    return "rgb", rgb


def _array_pixels(arr: npt.NDArray[Any], max_pixels: int) -> tuple[str, npt.NDArray[Any]]:
    if arr.ndim not in (2, 3) or (arr.ndim == 3 and arr.shape[2] not in (3, 4)):
        raise InputError(
            f"a PDQ pixel array must be (h, w) luma / grey or (h, w, 3|4) RGB(A), got shape "
            f"{arr.shape}; convert the image first"
        )
    if arr.shape[0] * arr.shape[1] > max_pixels:
        raise InputError(
            f"a {arr.shape[0]}x{arr.shape[1]} array exceeds max_pixels={max_pixels}; pass a "
            "larger max_pixels if it is trusted"
        )
    if arr.ndim == 3:
        if arr.dtype != np.uint8:
            raise InputError(f"an RGB array must be uint8, got {arr.dtype}; use uint8 pixels")
        return "rgb", arr
    if arr.dtype == np.uint8:
        return "luma", arr.astype(np.float32)
    if arr.dtype != np.float32:
        raise InputError(
            f"a 2-D PDQ array must be float32 luma or uint8 grey, got {arr.dtype}; cast it"
        )
    return "luma", arr


def _dct(kind: str, pixels: npt.NDArray[Any]) -> tuple[F32, int]:
    kern = engine.kernels("pdq")
    if kind == "rgb":
        dct, quality = kern.pdq_rgb(pixels)
    else:
        dct, quality = kern.pdq_float(pixels)
    return np.asarray(dct, dtype=np.float32), int(quality)


def _one(
    source: PDQSource, exif_transpose: bool, jpeg_draft: bool, max_pixels: int
) -> tuple[F32, int]:
    kind, pixels = _pixels(
        source, exif_transpose=exif_transpose, jpeg_draft=jpeg_draft, max_pixels=max_pixels
    )
    return _dct(kind, pixels)


def pdq(
    image: PDQSource,
    *,
    exif_transpose: bool = False,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> tuple[ImageHash, int]:
    """Meta's PDQ hash of one image and its quality (0..100).

    Args:
        image: A path, encoded bytes, a binary file object, a ``PIL.Image.Image``, a uint8
            ``(h, w, 3|4)`` RGB array, a float32 ``(h, w)`` luma array or a uint8 ``(h, w)``
            grey array (see the module docstring for which pixels are hashed).
        exif_transpose: Apply the EXIF orientation first (decoded sources only).
        max_pixels: Refuse images with more pixels than this.

    Returns:
        ``(hash, quality)``: a 256-bit :class:`ImageHash` (method ``"pdq"``) and the quality.

    Raises:
        DecodeError: The image cannot be decoded; the message names it.
        InputTooLargeError: The image has more than ``max_pixels`` pixels.
        InputError: An array of an unsupported shape or dtype.

    Examples:
        >>> rgb = np.zeros((48, 64, 3), np.uint8)
        >>> rgb[:, 32:] = 255
        >>> h, q = pdq(rgb)
        >>> h.bits, q
        (256, 71)
        >>> str(h)[:16]
        '0000664400006644'
    """
    dct, quality = _one(image, exif_transpose, False, max_pixels)
    return ImageHash(_value(_bits(dct)), _PARAMS), quality


def pdq_dihedral(
    image: PDQSource,
    *,
    exif_transpose: bool = False,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> tuple[list[ImageHash], int]:
    """The 8 dihedral PDQ hashes (order :data:`DIHEDRAL`) of one image and its quality.

    ``hashes[0]`` is :func:`pdq`'s hash; the others are the hashes of the rotated and
    mirrored image, computed from the same DCT (no pixel is hashed twice). Equal to
    ``pdqhash.compute_dihedral`` except for images of exactly 64x64 pixels, where the
    reference's dihedral function filters and its plain one (and this) does not.

    Raises:
        As :func:`pdq`.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> rgb = rng.integers(0, 256, (40, 50, 3), dtype=np.uint8)
        >>> hashes, q = pdq_dihedral(rgb)
        >>> len(hashes), hashes[0] == pdq(rgb)[0]
        (8, True)
    """
    dct, quality = _one(image, exif_transpose, False, max_pixels)
    return codes_to_hashes(_bits(dihedral_dct(dct))), quality


class PDQCodes:
    """PDQ hashes of a batch as arrays (what the dedup method and the index use).

    Attributes:
        codes: ``(n, 4)`` uint64 words, least significant first; with ``dihedral=True``
            ``(n, 8, 4)`` (transform axis in :data:`DIHEDRAL` order).
        quality: ``(n,)`` int64 quality scores, 0..100.
    """

    __slots__ = ("codes", "quality")

    def __init__(self, codes: U64, quality: I64) -> None:
        self.codes = codes
        self.quality = quality

    def __len__(self) -> int:
        return int(self.quality.shape[0])

    def hashes(self) -> list[ImageHash]:
        """The original (untransformed) hashes as :class:`ImageHash` values."""
        c = self.codes if self.codes.ndim == 2 else self.codes[:, 0, :]  # variant 0: itself
        return codes_to_hashes(c)


def pdq_codes(
    images: Iterable[PDQSource],
    *,
    dihedral: bool = False,
    workers: int = 1,
    exif_transpose: bool = False,
    jpeg_draft: bool = False,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> PDQCodes:
    """The fast batch path: decode and hash many images (in ``workers`` threads; Pillow and
    the kernel both release the GIL), then threshold every DCT in one vectorized step.

    Args:
        images: Sources as :func:`pdq` accepts them.
        dihedral: Also return the 7 transformed hashes of each image.
        workers: Threads (1 = none).
        exif_transpose: As :func:`pdq`.
        jpeg_draft: Let libjpeg decode JPEGs at reduced scale (faster; the pixels, and so the
            bits, differ from a full decode).
        max_pixels: As :func:`pdq`.

    Returns:
        The codes and qualities, in input order.

    Raises:
        As :func:`pdq`; ConfigError for a bad ``workers``.

    Examples:
        >>> rng = np.random.default_rng(1)
        >>> imgs = [rng.integers(0, 256, (30, 30, 3), dtype=np.uint8) for _ in range(3)]
        >>> out = pdq_codes(imgs, dihedral=True)
        >>> out.codes.shape, out.hashes()[2] == pdq(imgs[2])[0]
        ((3, 8, 4), True)
    """

    def work(src: PDQSource) -> tuple[F32, int]:
        return _one(src, exif_transpose, jpeg_draft, max_pixels)

    results = map_threads(work, images, workers)
    if not results:
        shape = (0, 8, 4) if dihedral else (0, 4)
        return PDQCodes(np.zeros(shape, np.uint64), np.zeros(0, np.int64))
    dcts = np.stack([r[0] for r in results])
    quality = np.array([r[1] for r in results], dtype=np.int64)
    codes = _bits(dihedral_dct(dcts) if dihedral else dcts)
    logger.debug("PDQ-hashed %d images", len(results))
    return PDQCodes(codes, quality)


#: Where the crops :func:`pdq_variant_codes` adds with ``crops=True`` sit: centred and at the
#: four corners, as ``(left, top)`` fractions of the margin cut off.
CROP_ANCHORS: tuple[tuple[float, float], ...] = ((0.5, 0.5), (0, 0), (1, 0), (0, 1), (1, 1))

#: The share of each side those crops keep. PDQ itself tolerates a crop of about 1% at a
#: corner (2-3% centred), so a ladder in steps of 2% covers every crop up to 10%
#: (benchmarks/image_robustness.py --edits); a ladder of 90% alone matched corner crops of
#: 3, 5 and 8% on 2, 0 and 8 of 72 photos.
CROP_KEEPS: tuple[float, ...] = (0.98, 0.96, 0.94, 0.92, 0.90)


def _crop_boxes(rows: int, cols: int) -> list[tuple[int, int, int, int]]:
    """``(top, left, rows, cols)`` of every crop: each share of :data:`CROP_KEEPS` at each
    anchor of :data:`CROP_ANCHORS` (a share that cuts nothing off is the whole image)."""
    boxes = []
    for keep in CROP_KEEPS:
        mr, mc = rows - round(rows * keep), cols - round(cols * keep)
        boxes += [(round(fr * mr), round(fc * mc), rows - mr, cols - mc) for fc, fr in CROP_ANCHORS]
    return boxes


def pdq_variant_codes(
    images: Iterable[PDQSource],
    *,
    dihedral: bool = True,
    mirrored: bool = True,
    crops: bool = False,
    workers: int = 1,
    exif_transpose: bool = False,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> PDQCodes:
    """Index-time variants of every image for mirror-, rotation- and crop-proof matching.

    Per image, in this order: the 8 dihedral hashes (``dihedral``; else the hash alone); with
    ``mirrored`` also the 8 dihedral hashes of the left-right mirrored pixels (the DCT's
    dihedral hashes are not exactly the hashes of the transformed pixels: even box windows
    and floor decimation shift samples by up to a pixel; a second pixel basis brings the
    mirrored and rotated copies back within Meta's distance); with ``crops`` the hashes of
    25 crops: to 98, 96, 94, 92 and 90% of each side (:data:`CROP_KEEPS`), each centred and
    at the four corners (:data:`CROP_ANCHORS`), so a copy cropped by up to 10% that way is
    within about 1% of one of them. The quality is the original's.

    Returns:
        ``codes`` of shape ``(n, variants, 4)``.

    Examples:
        >>> rgb = np.random.default_rng(3).integers(0, 256, (60, 80, 3), dtype=np.uint8)
        >>> v = pdq_variant_codes([rgb], crops=True)
        >>> v.codes.shape, v.hashes()[0] == pdq(rgb)[0]
        ((1, 41, 4), True)
    """
    mirrored = mirrored and dihedral

    def work(src: PDQSource) -> tuple[list[F32], list[F32], int]:
        kind, pixels = _pixels(
            src, exif_transpose=exif_transpose, jpeg_draft=False, max_pixels=max_pixels
        )
        base, quality = _dct(kind, pixels)
        turned = [base]
        if mirrored:
            turned.append(_dct(kind, np.ascontiguousarray(pixels[:, ::-1]))[0])
        plain = []
        if crops:
            for top, left, rows, cols in _crop_boxes(pixels.shape[0], pixels.shape[1]):
                part = np.ascontiguousarray(pixels[top : top + rows, left : left + cols])
                plain.append(_dct(kind, part)[0])
        return turned, plain, quality

    results = map_threads(work, images, workers)
    crop_count = len(CROP_KEEPS) * len(CROP_ANCHORS) if crops else 0
    per = (8 if dihedral else 1) * (2 if mirrored else 1) + crop_count
    if not results:
        return PDQCodes(np.zeros((0, per, 4), np.uint64), np.zeros(0, np.int64))
    turned = np.stack([np.stack(r[0]) for r in results])  # (n, bases, 16, 16)
    parts = [_bits(dihedral_dct(turned) if dihedral else turned).reshape(len(results), -1, 4)]
    if crops:
        parts.append(_bits(np.stack([np.stack(r[1]) for r in results])))
    quality = np.array([r[2] for r in results], dtype=np.int64)
    return PDQCodes(np.concatenate(parts, axis=1), quality)


def pdq_many(
    images: Iterable[PDQSource],
    *,
    workers: int = 1,
    exif_transpose: bool = False,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> list[tuple[ImageHash, int]]:
    """``[pdq(x) for x in images]``, bit for bit, through the batch path.

    Examples:
        >>> rgb = np.full((20, 20, 3), 9, np.uint8)
        >>> pdq_many([rgb]) == [pdq(rgb)]
        True
    """
    out = pdq_codes(images, workers=workers, exif_transpose=exif_transpose, max_pixels=max_pixels)
    return list(zip(out.hashes(), out.quality.tolist(), strict=True))
