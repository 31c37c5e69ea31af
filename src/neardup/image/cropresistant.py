"""[image] Crop-resistant hashing: imagehash 4.3's ``crop_resistant_hash``, segment for segment.

The image is cut into bright "hills" and dark "valleys" on a blurred 300x300 grey copy; each
segment's bounding box, mapped back onto the original image, is hashed (dHash by default).
Two images match when enough of their segments have a near hash, so an image still matches
its crops: the segments the crop keeps hash as before.

Equal to imagehash on the same Pillow: the grey copy, blur and median filter are Pillow's own
calls; a segment is a 4-connected component of the thresholded pixels (imagehash's flood fill
finds exactly these), hills first then valleys, each in the raster order of its first pixel.
imagehash also stops looking for valleys once its set of visited pixels (which counts the
``2 * (rows + cols)`` pixels around the border and leaves out the seed of a one-pixel
region) reaches ``rows * cols``; that stop is replayed, so the last few small valleys are
left out as imagehash leaves them out. Segment hashes are :func:`neardup.image.dhash` (or
any method of :data:`neardup.image.METHODS` but pdq and colorhash), bit-equal to imagehash's.

Matching (:meth:`CropResistantHash.hash_diff`, :meth:`~CropResistantHash.matches`) is
imagehash's ``ImageMultiHash`` rule: each segment of one hash takes its nearest segment of the
other; it matches when that distance is at most ``hamming_cutoff`` (default a quarter of the
bits); the images match when at least ``region_cutoff`` segments do.

Reference: M. Steinebach, H. Liu and Y. Yannikos, "Efficient Cropping-Resistant Robust Image
Hashing", ARES 2014, doi:10.1109/ARES.2014.85.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from neardup._extras import require_extra
from neardup.errors import ConfigError, IncompatibleSketchError, InputError
from neardup.image.decode import DEFAULT_MAX_PIXELS, ImageSource, describe, map_threads, opened
from neardup.image.hashes import hash_many
from neardup.image.value import ImageHash, ImageHashParams

if TYPE_CHECKING:
    from PIL import Image as PILImage

__all__ = ["CropResistantHash", "crop_resistant_hash", "crop_resistant_many", "segments"]

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]
Box = tuple[float, float, float, float]


@dataclasses.dataclass(frozen=True, slots=True)
class CropResistantHash:
    """The segment hashes of one image (imagehash's ``ImageMultiHash``).

    Attributes:
        segment_hashes: One hash per segment, in imagehash's order.

    Examples:
        >>> p = ImageHashParams(method="dhash")
        >>> a = CropResistantHash((ImageHash(0xFF, p), ImageHash(0xF0F0, p)))
        >>> b = CropResistantHash((ImageHash(0xF0F1, p),))
        >>> a.hash_diff(b), a.matches(b), b.matches(a, region_cutoff=2)
        ((2, 8), True, False)
        >>> str(b)
        '000000000000f0f1'
    """

    segment_hashes: tuple[ImageHash, ...]

    def __post_init__(self) -> None:
        if not self.segment_hashes:
            raise ConfigError("a crop-resistant hash needs at least one segment hash")
        first = self.segment_hashes[0].params
        if any(h.params != first for h in self.segment_hashes):
            raise IncompatibleSketchError("all segment hashes must share their parameters")

    @property
    def params(self) -> ImageHashParams:
        """The parameters of the segment hashes."""
        return self.segment_hashes[0].params

    def __str__(self) -> str:
        return ",".join(str(h) for h in self.segment_hashes)

    def __len__(self) -> int:
        return len(self.segment_hashes)

    def _cutoff(self, hamming_cutoff: float | None, bit_error_rate: float | None) -> float:
        if hamming_cutoff is not None:
            return hamming_cutoff
        return self.params.bits * (0.25 if bit_error_rate is None else bit_error_rate)

    def hash_diff(
        self,
        other: CropResistantHash,
        hamming_cutoff: float | None = None,
        bit_error_rate: float | None = None,
    ) -> tuple[int, int]:
        """``(matching segments, sum of their distances)``, imagehash's ``hash_diff``.

        Each of this hash's segments takes its nearest segment of ``other``; it counts when
        that distance is at most ``hamming_cutoff`` (default ``bits * bit_error_rate``,
        ``bit_error_rate`` defaulting to 0.25). Not symmetric.

        Raises:
            IncompatibleSketchError: The segment hashes were made with different parameters.
        """
        if other.params != self.params:
            raise IncompatibleSketchError(
                "cannot compare crop-resistant hashes whose segments were hashed differently; "
                "hash both images with the same method"
            )
        cutoff = self._cutoff(hamming_cutoff, bit_error_rate)
        theirs = [h.value for h in other.segment_hashes]
        found = []
        for h in self.segment_hashes:
            lowest = min((h.value ^ t).bit_count() for t in theirs)
            if lowest <= cutoff:
                found.append(lowest)
        return len(found), sum(found)

    def matches(
        self,
        other: CropResistantHash,
        region_cutoff: int = 1,
        hamming_cutoff: float | None = None,
        bit_error_rate: float | None = None,
    ) -> bool:
        """imagehash's ``matches``: at least ``region_cutoff`` segments match.

        Raises:
            IncompatibleSketchError: The segment hashes were made with different parameters.
        """
        return self.hash_diff(other, hamming_cutoff, bit_error_rate)[0] >= region_cutoff

    def difference(
        self,
        other: CropResistantHash,
        hamming_cutoff: float | None = None,
        bit_error_rate: float | None = None,
    ) -> float:
        """imagehash's ``a - b``: ``len(a) - matches + sum / (matches * bits)`` (0 = all
        segments match exactly; ``len(a)`` = none match).

        Raises:
            IncompatibleSketchError: The segment hashes were made with different parameters.
        """
        matches, total = self.hash_diff(other, hamming_cutoff, bit_error_rate)
        if matches == 0:
            return float(len(self))
        return len(self) - (matches - total / (matches * self.params.bits))


def _segmentation_pixels(im: PILImage.Image, size: int) -> U8:
    """imagehash's grey, resized, blurred and median-filtered copy."""
    image_mod = require_extra("image", "PIL.Image")
    filters = require_extra("image", "PIL.ImageFilter")
    small = im.convert("L").resize((size, size), image_mod.Resampling.LANCZOS)
    small = small.filter(filters.GaussianBlur()).filter(filters.MedianFilter())
    return np.asarray(small)


def segments(pixels: U8, segment_threshold: int = 128, min_segment_size: int = 500) -> list[I64]:
    """imagehash's ``_find_all_segments``: each kept segment as ``(k, 2)`` (row, col) pixels.

    Args:
        pixels: The grey segmentation image.
        segment_threshold: Hills are pixels above it, valleys the others.
        min_segment_size: A segment is kept when it has more pixels than this.

    Examples:
        >>> px = np.zeros((40, 40), np.uint8)
        >>> px[5:30, 5:30] = 200
        >>> [len(s) for s in segments(px, min_segment_size=100)]
        [625, 975]
    """
    ndimage = require_extra("image", "scipy.ndimage")
    rows, cols = pixels.shape
    hills = pixels.astype(np.float32) > segment_threshold
    four = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], dtype=bool)
    out: list[I64] = []
    visited = 2 * (rows + cols)  # imagehash's border pixels, outside the image
    for phase, mask in enumerate((hills, ~hills)):
        labels, count = ndimage.label(mask, structure=four)
        if count == 0:
            continue
        flat = labels.ravel()
        order = np.argsort(flat, kind="stable")
        sizes = np.bincount(flat, minlength=count + 1)
        bounds = np.concatenate([[0], np.cumsum(sizes)])
        # labels are numbered in raster order of their first pixel, as the flood fill starts
        for lab in range(1, count + 1):
            if phase == 1 and visited >= rows * cols:
                break  # imagehash's valley loop has stopped
            idx = order[bounds[lab] : bounds[lab + 1]]
            size = len(idx)
            visited += size if size > 1 else 0  # a one-pixel region's seed is never visited
            if size > min_segment_size:
                out.append(np.stack([idx // cols, idx % cols], axis=1).astype(np.int64))
    return out


def _boxes(
    im_size: tuple[int, int], segs: list[I64], size: int, limit_segments: int | None
) -> list[Box]:
    if not segs:
        segs = [np.array([[0, 0], [size - 1, size - 1]], dtype=np.int64)]
    if limit_segments:
        segs = sorted(segs, key=len, reverse=True)[:limit_segments]
    w, h = im_size
    scale_w, scale_h = float(w) / size, float(h) / size
    boxes = []
    for s in segs:
        lo, hi = s.min(axis=0), s.max(axis=0)
        boxes.append(
            (
                int(lo[1]) * scale_w,
                int(lo[0]) * scale_h,
                (int(hi[1]) + 1) * scale_w,
                (int(hi[0]) + 1) * scale_h,
            )
        )
    return boxes


def _check_method(method: str) -> ImageHashParams:
    if method in ("pdq", "colorhash"):
        raise ConfigError(
            f"crop-resistant hashing takes ahash, phash, dhash or whash segment hashes, not "
            f"{method}; use method='dhash' (imagehash's default)"
        )
    return ImageHashParams(method=method)


def _crops(
    source: ImageSource,
    method: str,
    limit_segments: int | None,
    segment_threshold: int,
    min_segment_size: int,
    segmentation_image_size: int,
    max_pixels: int,
) -> list[PILImage.Image]:
    with opened(source, max_pixels=max_pixels) as im:
        pixels = _segmentation_pixels(im, segmentation_image_size)
        segs = segments(pixels, segment_threshold, min_segment_size)
        boxes = _boxes(im.size, segs, segmentation_image_size, limit_segments)
        crops = [im.crop(b) for b in boxes]
        empty = [c for c in crops if c.width == 0 or c.height == 0]
        if empty and method == "whash":  # imagehash's whash fails on log2(0) too
            raise InputError(
                f"{describe(source)}: a segment's box rounds to {empty[0].width}x"
                f"{empty[0].height} pixels on this {im.width}x{im.height} image and whash "
                f"cannot hash an empty image (imagehash 4.3 fails too); use "
                f"method='dhash', 'ahash' or 'phash', or a larger image"
            )
        return crops


def crop_resistant_many(
    images: Iterable[ImageSource],
    *,
    method: str = "dhash",
    limit_segments: int | None = None,
    segment_threshold: int = 128,
    min_segment_size: int = 500,
    segmentation_image_size: int = 300,
    workers: int = 1,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> list[CropResistantHash]:
    """:func:`crop_resistant_hash` of many images; the segment crops of all of them are hashed
    in one batched :func:`neardup.image.hash_many` call.

    Raises:
        As :func:`crop_resistant_hash`.
    """
    params = _check_method(method)

    def work(src: ImageSource) -> list[PILImage.Image]:
        return _crops(
            src,
            method,
            limit_segments,
            segment_threshold,
            min_segment_size,
            segmentation_image_size,
            max_pixels,
        )

    crops = map_threads(work, images, workers)
    # A thin segment's box can round to zero pixels on a small image: Pillow resizes an empty
    # image to zeros, so imagehash's ahash, dhash and phash of it are all 0 bits.
    flat = [c for cs in crops for c in cs if c.width and c.height]
    hashed = iter(hash_many(flat, params=params, max_pixels=max_pixels))
    empty = ImageHash(0, params)
    return [
        CropResistantHash(tuple(next(hashed) if c.width and c.height else empty for c in cs))
        for cs in crops
    ]


def crop_resistant_hash(
    image: ImageSource,
    *,
    method: str = "dhash",
    limit_segments: int | None = None,
    segment_threshold: int = 128,
    min_segment_size: int = 500,
    segmentation_image_size: int = 300,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> CropResistantHash:
    """imagehash 4.3's ``crop_resistant_hash``, segment hash for segment hash.

    Args:
        image: A path, encoded bytes, a binary file object or a ``PIL.Image.Image``.
        method: The segment hash: ``"dhash"`` (imagehash's default), ``"ahash"``,
            ``"phash"`` or ``"whash"``, with their default sizes.
        limit_segments: Keep only this many largest segments (``None``: all).
        segment_threshold: Grey level between hills and valleys.
        min_segment_size: Segments need more pixels than this (on the segmentation image).
        segmentation_image_size: Side of the square grey copy that is segmented.
        max_pixels: Refuse images with more pixels than this.

    Returns:
        The segment hashes; compare with :meth:`CropResistantHash.matches`.

    Raises:
        DecodeError: The image cannot be decoded.
        InputTooLargeError: The image has more than ``max_pixels`` pixels.
        InputError: ``method="whash"`` and a segment's box rounds to zero pixels (a small
            image; the other methods hash such an empty crop to 0 bits, as imagehash does).
        ConfigError: An unsupported segment method.

    Examples:
        >>> from PIL import Image
        >>> img = Image.radial_gradient("L").resize((300, 200))
        >>> h = crop_resistant_hash(img)
        >>> len(h), h.matches(crop_resistant_hash(img.crop((0, 0, 240, 200))))
        (2, True)
    """
    return crop_resistant_many(
        [image],
        method=method,
        limit_segments=limit_segments,
        segment_threshold=segment_threshold,
        min_segment_size=min_segment_size,
        segmentation_image_size=segmentation_image_size,
        max_pixels=max_pixels,
    )[0]
