"""[image] Perceptual image hashes: average, difference, DCT (pHash), wavelet, colour, and
Meta's PDQ (:mod:`neardup.image.pdqhashing`, 256 bits with a quality score and dihedral
variants).

Presets:

* ``"imagehash"`` (the default): the same bits as imagehash 4.3 for the same Pillow, so
  hashes stored by imagehash users stay comparable. ``str(h)`` is the hex imagehash prints.
* ``"go"``: the Go ``fingerprint`` package's 64-bit pHash, bit for bit
  (``method="phash"`` only); ``str(h)`` equals Go's ``PHashHex``.

EXIF orientation is ignored by default, as both imagehash and the Go package do: the pixels
are hashed as stored. Pass ``exif_transpose=True`` (imagehash preset) to rotate first; that
is a parameter, so such hashes only compare with others made the same way.

Pillow (and SciPy for ``phash``, PyWavelets for ``whash``) are imported on first use, not
when this package is imported. Decoding is capped at ``max_pixels`` (default: Pillow's own
limit, about 89.5 Mpixel); larger images raise :class:`~neardup.errors.InputTooLargeError`
before any pixel is decoded.
"""

from __future__ import annotations

from neardup.image.cropresistant import (
    CropResistantHash,
    crop_resistant_hash,
    crop_resistant_many,
)
from neardup.image.decode import DEFAULT_MAX_PIXELS, ImageSource
from neardup.image.hashes import hash_image, hash_many
from neardup.image.pdqhashing import pdq, pdq_codes, pdq_dihedral, pdq_many, pdq_variant_codes
from neardup.image.value import METHODS, PRESETS, ImageHash, ImageHashParams

__all__ = [
    "DEFAULT_MAX_PIXELS",
    "METHODS",
    "PRESETS",
    "CropResistantHash",
    "ImageHash",
    "ImageHashParams",
    "ImageSource",
    "ahash",
    "colorhash",
    "crop_resistant_hash",
    "crop_resistant_many",
    "dhash",
    "hash_image",
    "hash_many",
    "pdq",
    "pdq_codes",
    "pdq_dihedral",
    "pdq_many",
    "pdq_variant_codes",
    "phash",
    "whash",
]


def phash(
    image: ImageSource,
    *,
    preset: str = "imagehash",
    hash_size: int = 8,
    highfreq_factor: int = 4,
    exif_transpose: bool = False,
    jpeg_draft: bool = False,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> ImageHash:
    """DCT perceptual hash: bit set where a low-frequency DCT coefficient is above the median.

    Args:
        image: A path, encoded bytes, a binary file object or a ``PIL.Image.Image``.
        preset: ``"imagehash"`` (imagehash 4.3's ``phash``) or ``"go"`` (the Go package).
        hash_size: The hash is ``hash_size ** 2`` bits (``"go"``: 8 only).
        highfreq_factor: The DCT runs on ``hash_size * highfreq_factor`` pixels.
        exif_transpose: Apply the EXIF orientation first (``"imagehash"`` preset only).
        jpeg_draft: Decode JPEGs at reduced scale (faster; slightly different bits).
        max_pixels: Refuse images with more pixels than this.

    Returns:
        The hash; compare with :meth:`ImageHash.distance`.

    Raises:
        DecodeError: The image cannot be decoded; the message names it.
        InputTooLargeError: The image has more than ``max_pixels`` pixels.

    Examples:
        >>> from PIL import Image
        >>> img = Image.radial_gradient("L").crop((10, 40, 200, 170))
        >>> str(phash(img))
        'ee9393649393849b'
        >>> str(phash(img, preset="go"))
        'b6b74901b60929f6'
    """
    params = ImageHashParams(
        method="phash",
        preset=preset,
        hash_size=hash_size,
        highfreq_factor=highfreq_factor,
        exif_transpose=exif_transpose,
        jpeg_draft=jpeg_draft,
    )
    return hash_image(image, params, max_pixels=max_pixels)


def ahash(
    image: ImageSource,
    *,
    preset: str = "imagehash",
    hash_size: int = 8,
    exif_transpose: bool = False,
    jpeg_draft: bool = False,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> ImageHash:
    """Average hash: bit set where a pixel of the ``hash_size`` square grey image is above its mean.

    Args and Raises as :func:`phash` (only ``preset="imagehash"`` exists).

    Examples:
        >>> from PIL import Image
        >>> str(ahash(Image.linear_gradient("L")))
        '00000000ffffffff'
    """
    params = ImageHashParams(
        method="ahash",
        preset=preset,
        hash_size=hash_size,
        exif_transpose=exif_transpose,
        jpeg_draft=jpeg_draft,
    )
    return hash_image(image, params, max_pixels=max_pixels)


def dhash(
    image: ImageSource,
    *,
    preset: str = "imagehash",
    hash_size: int = 8,
    exif_transpose: bool = False,
    jpeg_draft: bool = False,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> ImageHash:
    """Difference hash: bit set where a pixel is brighter than its left neighbour.

    Args and Raises as :func:`phash` (only ``preset="imagehash"`` exists).

    Examples:
        >>> from PIL import Image
        >>> str(dhash(Image.linear_gradient("L").rotate(90)))
        'ffffffffffffffff'
    """
    params = ImageHashParams(
        method="dhash",
        preset=preset,
        hash_size=hash_size,
        exif_transpose=exif_transpose,
        jpeg_draft=jpeg_draft,
    )
    return hash_image(image, params, max_pixels=max_pixels)


def whash(
    image: ImageSource,
    *,
    preset: str = "imagehash",
    hash_size: int = 8,
    image_scale: int | None = None,
    remove_max_haar_ll: bool = True,
    exif_transpose: bool = False,
    jpeg_draft: bool = False,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> ImageHash:
    """Haar wavelet hash: bit set where a low-band coefficient is above the median.

    Args:
        image: As :func:`phash`.
        preset: Only ``"imagehash"``.
        hash_size: A power of two.
        image_scale: Resize side (a power of two), or ``None`` for imagehash's choice.
        remove_max_haar_ll: Drop the lowest Haar frequency first, as imagehash does.
        exif_transpose: As :func:`phash`.
        jpeg_draft: As :func:`phash`.
        max_pixels: As :func:`phash`.

    Returns:
        The hash.

    Examples:
        >>> from PIL import Image
        >>> str(whash(Image.linear_gradient("L")))
        '00000000ffffffff'
    """
    params = ImageHashParams(
        method="whash",
        preset=preset,
        hash_size=hash_size,
        image_scale=image_scale,
        remove_max_haar_ll=remove_max_haar_ll,
        exif_transpose=exif_transpose,
        jpeg_draft=jpeg_draft,
    )
    return hash_image(image, params, max_pixels=max_pixels)


def colorhash(
    image: ImageSource,
    *,
    preset: str = "imagehash",
    binbits: int = 3,
    exif_transpose: bool = False,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> ImageHash:
    """Colour hash: black, grey and 12 hue-bin fractions, ``binbits`` bits each (14 bins).

    Args and Raises as :func:`phash` (only ``preset="imagehash"`` exists).

    Examples:
        >>> from PIL import Image
        >>> str(colorhash(Image.new("RGB", (10, 10), (255, 0, 0))))
        '00000038000'
    """
    params = ImageHashParams(
        method="colorhash", preset=preset, binbits=binbits, exif_transpose=exif_transpose
    )
    return hash_image(image, params, max_pixels=max_pixels)
