"""Image-hash parameters (:class:`ImageHashParams`) and the :class:`ImageHash` value type."""

from __future__ import annotations

import dataclasses
import json
import struct
from typing import ClassVar

from neardup.config import Params, check_choice, check_range
from neardup.errors import ConfigError, FormatError, IncompatibleSketchError

__all__ = ["METHODS", "PRESETS", "ImageHash", "ImageHashParams"]

#: The hash methods, in the order imagehash documents them, then Meta's PDQ (256 bits).
METHODS: tuple[str, ...] = ("ahash", "phash", "dhash", "whash", "colorhash", "pdq")
#: ``"imagehash"``: the bits of imagehash 4.3 for the same Pillow (the default);
#: ``"go"``: the Go ``fingerprint`` package's pHash, bit for bit (``method="phash"`` only).
PRESETS: tuple[str, ...] = ("imagehash", "go")

_MAGIC = b"NDIH"
_FORMAT_VERSION = 1
_HEADER = struct.Struct(">4sBHH")  # magic, format version, number of bits, params JSON length


@dataclasses.dataclass(frozen=True, slots=True)
class ImageHashParams(Params):
    """Everything that decides the bits of an image hash.

    Safety caps (``max_pixels``) do not change bits, so they are arguments of the hashing
    functions, not parameters.

    Attributes:
        method: One of :data:`METHODS`.
        preset: ``"imagehash"`` (imagehash 4.3's bits, the default) or ``"go"`` (the Go
            ``fingerprint`` pHash; ``method="phash"`` with the default sizes only).
        hash_size: Side of the bit grid (``ahash``/``phash``/``dhash``/``whash``); 2..64.
            ``whash`` needs a power of two.
        highfreq_factor: ``phash`` only: the DCT input is ``hash_size * highfreq_factor``
            pixels wide.
        image_scale: ``whash`` only: the side the image is resized to (a power of two), or
            ``None`` for imagehash's choice (the largest power of two not above the shorter
            side, at least ``hash_size``).
        remove_max_haar_ll: ``whash`` only: drop the lowest Haar frequency first. (The
            wavelet is always Haar, imagehash's default ``mode``.)
        binbits: ``colorhash`` only: bits per colour bin (1..16).
            (``pdq`` has no size parameters: always 256 bits, :mod:`neardup.image.pdqhashing`.)
        exif_transpose: Apply the EXIF orientation before hashing. Off by default, as
            imagehash and the Go package do; the ``go`` preset refuses it.
        jpeg_draft: Let libjpeg decode JPEGs at 1/2, 1/4 or 1/8 scale (faster, but the bits
            differ slightly from a full decode, so it is a parameter). Off by default.

    Examples:
        >>> ImageHashParams(method="dhash").fingerprint().startswith("image-")
        True
        >>> ImageHashParams(method="ahash", preset="go")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        neardup.errors.ConfigError: preset 'go' exists only for method='phash' ...
    """

    KIND: ClassVar[str] = "image"
    method: str = "phash"
    preset: str = "imagehash"
    hash_size: int = 8
    highfreq_factor: int = 4
    image_scale: int | None = None
    remove_max_haar_ll: bool = True
    binbits: int = 3
    exif_transpose: bool = False
    jpeg_draft: bool = False

    def __post_init__(self) -> None:
        check_choice("method", self.method, METHODS)
        check_choice("preset", self.preset, PRESETS)
        check_range("hash_size", self.hash_size, 2, 64, integer=True)
        check_range("highfreq_factor", self.highfreq_factor, 1, 16, integer=True)
        check_range("binbits", self.binbits, 1, 16, integer=True)
        defaults = ImageHashParams.__dataclass_fields__
        owners = {
            "highfreq_factor": ("phash",),
            "image_scale": ("whash",),
            "remove_max_haar_ll": ("whash",),
            "binbits": ("colorhash",),
            "hash_size": ("ahash", "phash", "dhash", "whash"),
        }
        for name, methods in owners.items():
            if self.method not in methods and getattr(self, name) != defaults[name].default:
                raise ConfigError(
                    f"{name} does not apply to method={self.method!r} (only to "
                    f"{', '.join(methods)}); leave it at its default"
                )
        if self.preset == "go":
            if self.method != "phash" or self.hash_size != 8 or self.highfreq_factor != 4:
                raise ConfigError(
                    "preset 'go' exists only for method='phash' with hash_size=8 and "
                    f"highfreq_factor=4; use preset='imagehash' for {self.method}"
                )
            if self.exif_transpose:
                raise ConfigError(
                    "preset 'go' never applies EXIF orientation (the Go package ignores it); "
                    "set exif_transpose=False or use preset='imagehash'"
                )
        if self.method == "whash":
            if self.hash_size & (self.hash_size - 1):
                raise ConfigError(
                    f"whash needs hash_size to be a power of two, got {self.hash_size}"
                )
            if self.image_scale is not None:
                check_range("image_scale", self.image_scale, 2, 2**16, integer=True)
                if self.image_scale & (self.image_scale - 1):
                    raise ConfigError(f"image_scale must be a power of two, got {self.image_scale}")
                if self.image_scale < self.hash_size:
                    raise ConfigError(
                        f"image_scale ({self.image_scale}) must be at least hash_size "
                        f"({self.hash_size})"
                    )

    @property
    def bits(self) -> int:
        """Number of bits in a hash made with these parameters.

        Examples:
            >>> ImageHashParams(method="colorhash").bits
            42
        """
        if self.method == "colorhash":
            return 14 * self.binbits
        if self.method == "pdq":
            return 256
        return self.hash_size * self.hash_size


@dataclasses.dataclass(frozen=True, slots=True)
class ImageHash:
    """An immutable image hash: its bits, as an integer, and the parameters that made it.

    ``value`` holds the bits most significant first in imagehash's order (the hash grid read
    row by row), so ``str(h)`` is the hex string imagehash prints. For the ``go`` preset the
    value is the Go ``uint64`` itself and ``str(h)`` equals ``PHashHex``.

    Attributes:
        value: The bits as a non-negative integer below ``2 ** params.bits``.
        params: The parameters that made it.

    Examples:
        >>> p = ImageHashParams(method="ahash")
        >>> a = ImageHash(0xFF00, p)
        >>> str(a)
        '000000000000ff00'
        >>> a.distance(ImageHash(0xFF0F, p))
        4
        >>> ImageHash.from_bytes(a.to_bytes()) == a
        True
    """

    value: int
    params: ImageHashParams

    def __post_init__(self) -> None:
        if not isinstance(self.value, int) or isinstance(self.value, bool):
            raise FormatError(f"an ImageHash value must be an int, got {type(self.value).__name__}")
        if not 0 <= self.value < (1 << self.params.bits):
            raise FormatError(
                f"an ImageHash value must be in [0, 2**{self.params.bits}) for "
                f"{self.params.method}, got {self.value}"
            )

    @property
    def bits(self) -> int:
        """Number of bits (``hash_size ** 2``, ``14 * binbits`` for colorhash, 256 for pdq)."""
        return self.params.bits

    @property
    def kind(self) -> str:
        """The method name (``"phash"``, ``"dhash"``, ...)."""
        return self.params.method

    def __str__(self) -> str:
        return self.to_hex()

    def __int__(self) -> int:
        return self.value

    def _check(self, other: ImageHash) -> None:
        if not isinstance(other, ImageHash):
            raise IncompatibleSketchError(
                f"an ImageHash can only be compared with an ImageHash, not {type(other).__name__}"
            )
        if other.params != self.params:
            raise IncompatibleSketchError(
                f"cannot compare image hashes made with different parameters "
                f"({self.params.fingerprint()} {self.params.canonical_json()} vs "
                f"{other.params.fingerprint()} {other.params.canonical_json()}); "
                "hash both images with the same method, preset and sizes"
            )

    def distance(self, other: ImageHash) -> int:
        """Hamming distance: the number of differing bits, in ``[0, bits]``.

        Raises:
            IncompatibleSketchError: The hashes were made with different parameters.

        Examples:
            >>> p = ImageHashParams()
            >>> ImageHash(0b1011, p).distance(ImageHash(0b0001, p))
            2
        """
        self._check(other)
        return (self.value ^ other.value).bit_count()

    def similarity(self, other: ImageHash) -> float:
        """``1 - distance / bits``, in ``[0.0, 1.0]``; 1.0 means identical bits.

        Raises:
            IncompatibleSketchError: The hashes were made with different parameters.

        Examples:
            >>> p = ImageHashParams()
            >>> ImageHash(0, p).similarity(ImageHash(0xFFFF, p))
            0.75
        """
        return 1.0 - self.distance(other) / self.bits

    def to_hex(self) -> str:
        """The bits as lowercase hex, ``ceil(bits / 4)`` digits, as imagehash prints them.

        Examples:
            >>> ImageHash(1, ImageHashParams()).to_hex()
            '0000000000000001'
        """
        return f"{self.value:0{(self.bits + 3) // 4}x}"

    @classmethod
    def from_hex(cls, text: str, params: ImageHashParams | None = None) -> ImageHash:
        """Parse :meth:`to_hex` output back, given the parameters it was made with.

        Args:
            text: Exactly ``ceil(bits / 4)`` hex digits, any case.
            params: The parameters of the hash (default: ``ImageHashParams()``).

        Raises:
            FormatError: The text is not hex of the right length for ``params``.

        Examples:
            >>> ImageHash.from_hex("00000000000000FF").value
            255
        """
        params = ImageHashParams() if params is None else params
        digits = (params.bits + 3) // 4
        if not isinstance(text, str) or len(text) != digits:
            raise FormatError(
                f"an image hash for {params.method} with {params.bits} bits needs exactly "
                f"{digits} hex digits, got {text!r}; pass the params the hash was made with"
            )
        try:
            value = int(text, 16)
        except ValueError:
            value = -1
        if value < 0 or not all(c in "0123456789abcdefABCDEF" for c in text):
            raise FormatError(f"an image hash must be hex digits only, got {text!r}")
        return cls(value, params)

    def to_bytes(self) -> bytes:
        """Serialize: header (``NDIH``, format version, bits), the params JSON, the bits.

        The bits come last, big-endian, in ``ceil(bits / 8)`` bytes.
        """
        meta = self.params.canonical_json().encode("utf-8")
        return (
            _HEADER.pack(_MAGIC, _FORMAT_VERSION, self.bits, len(meta))
            + meta
            + self.value.to_bytes((self.bits + 7) // 8, "big")
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> ImageHash:
        """Inverse of :meth:`to_bytes`.

        Raises:
            FormatError: The bytes are not an image hash of a known format version.
        """
        data = bytes(data)
        if len(data) < _HEADER.size or data[:4] != _MAGIC:
            raise FormatError(
                "these bytes are not a neardup image hash (no NDIH header); "
                "pass the output of ImageHash.to_bytes()"
            )
        _, version, bits, meta_len = _HEADER.unpack_from(data)
        if version != _FORMAT_VERSION:
            raise FormatError(
                f"image hash format version {version} is not supported (this neardup reads "
                f"version {_FORMAT_VERSION}); upgrade neardup"
            )
        meta_end = _HEADER.size + meta_len
        if len(data) != meta_end + (bits + 7) // 8:
            raise FormatError(
                f"image hash bytes have the wrong length {len(data)} for {bits} bits; "
                "the data is truncated or corrupt"
            )
        try:
            fields = json.loads(data[_HEADER.size : meta_end].decode("utf-8"))
            if fields.pop("kind") != ImageHashParams.KIND:
                raise ValueError("not image params")
            params = ImageHashParams(**fields)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            raise FormatError(
                f"the parameters stored in image hash bytes are invalid ({exc}); "
                "the data is corrupt or from an incompatible neardup"
            ) from exc
        if params.bits != bits:
            raise FormatError(
                f"image hash bytes say {bits} bits but their parameters give {params.bits}; "
                "the data is corrupt"
            )
        return cls(int.from_bytes(data[meta_end:], "big"), params)
