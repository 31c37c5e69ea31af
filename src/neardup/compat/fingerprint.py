"""The Go ``fingerprint`` package's API (seed 000), Python-shaped: thin adapters, no algorithm.

Go name -> Python name:

===================================  ======================================================
``Compute(text) uint64``             ``compute(text) -> int``          (text SimHash)
``Distance(a, b) int``               ``distance(a, b) -> int``         popcount(a ^ b)
``Similarity(a, b) float64``         ``similarity(a, b) -> float``     1 - distance / 64
``PHash(r io.Reader)``               :func:`phash`  (path, bytes or binary file object)
``PHashFromImage(img)``              :func:`phash_from_image` (a ``PIL.Image.Image``)
``PHashHex(h)``                      :func:`phash_hex`
``PHashFromHex(s)``                  :func:`phash_from_hex`
``PHashError``                       :class:`PHashError`
===================================  ======================================================

Hashes are plain ``int`` in ``[0, 2**64)``, equal to Go's ``uint64``. Where Go returns
``(0, err)``, these functions raise :class:`PHashError` (or, for the text functions, the
matching :mod:`neardup.errors` class). The pHash algorithm lives in
:mod:`neardup.image.gophash`; the text SimHash in the core sketch modules.
"""

from __future__ import annotations

import re
from functools import cache
from typing import IO, TYPE_CHECKING

from neardup.errors import DecodeError, InputError, NeardupError
from neardup.sketch.simhash import SimHasher

if TYPE_CHECKING:
    import os

    from PIL import Image as PILImage

__all__ = [
    "PHashError",
    "compute",
    "distance",
    "phash",
    "phash_from_hex",
    "phash_from_image",
    "phash_hex",
    "similarity",
]

# --------------------------------------------------------------------------------------------
# Image pHash: PHash, PHashFromImage, PHashHex, PHashFromHex, PHashError
# --------------------------------------------------------------------------------------------

#: The formats Go's ``image.Decode`` knows in the seed package (blank imports).
_GO_FORMATS = ("PNG", "JPEG", "GIF")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


class PHashError(DecodeError):
    """Go's ``PHashError``: an image could not be decoded or a hex string is not a pHash.

    A :class:`~neardup.errors.DecodeError`, so also a ``NeardupError`` and a ``ValueError``.
    """


def phash(
    source: str | os.PathLike[str] | bytes | IO[bytes], *, max_pixels: int | None = None
) -> int:
    """Go ``PHash``: decode a PNG, JPEG or GIF (first frame) and return its 64-bit pHash.

    No EXIF orientation is applied and there is no minimum size, as in Go.

    Args:
        source: A path, the encoded bytes, or a binary file object.
        max_pixels: Refuse images with more pixels than this (default: Pillow's limit).

    Returns:
        The hash, an int in ``[0, 2**64)``.

    Raises:
        PHashError: The data is not a PNG, JPEG or GIF, is truncated or corrupt, or is too
            large; the message names the source.

    Examples:
        >>> try:
        ...     phash(b"not an image")
        ... except PHashError as exc:
        ...     print("image: unknown format" in str(exc))
        True
    """
    from neardup.image.decode import DEFAULT_MAX_PIXELS, opened
    from neardup.image.gophash import go_phash_grids
    from neardup.image.hashes import _go_grid

    cap = DEFAULT_MAX_PIXELS if max_pixels is None else max_pixels
    try:
        with opened(source, max_pixels=cap, formats=_GO_FORMATS, draft=("YCbCr", None)) as im:
            grid = _go_grid(im)
    except NeardupError as exc:
        if isinstance(exc, PHashError):
            raise
        raise PHashError(str(exc)) from exc
    return int(go_phash_grids(grid[None])[0])


def phash_from_image(img: PILImage.Image) -> int:
    """Go ``PHashFromImage``: the pHash of an already decoded image.

    Pillow modes map to Go's decoded types: ``L`` -> Gray, ``RGB`` -> RGBA, ``RGBA``/``LA``/
    ``P`` -> NRGBA (premultiplied with integer division), ``I;16`` -> Gray16, ``YCbCr`` ->
    YCbCr. A 0x0 image gives 0.

    Args:
        img: A ``PIL.Image.Image``.

    Returns:
        The hash, an int in ``[0, 2**64)``.

    Examples:
        >>> from PIL import Image
        >>> phash_hex(phash_from_image(Image.new("RGBA", (64, 64))))
        '0000000000000000'
    """
    from neardup.image.gophash import go_phash_grids
    from neardup.image.hashes import _go_grid

    return int(go_phash_grids(_go_grid(img)[None])[0])


def phash_hex(h: int) -> str:
    """Go ``PHashHex``: 16 lowercase hex digits, most significant first (``%016x``).

    Raises:
        PHashError: ``h`` is not an int in ``[0, 2**64)``.

    Examples:
        >>> phash_hex(0x0F0F0F0F0F0F0F0F)
        '0f0f0f0f0f0f0f0f'
    """
    if isinstance(h, bool) or not isinstance(h, int) or not 0 <= h < 1 << 64:
        raise PHashError(f"a pHash is an int in [0, 2**64), got {h!r}")
    return f"{h:016x}"


def _check_hex_byte(byte: int) -> None:
    """Raise Go's ``InvalidByteError`` message (``%#U``) unless ``byte`` is a hex digit."""
    if chr(byte) not in _HEX_DIGITS:
        shown = f" {chr(byte)!r}" if chr(byte).isprintable() else ""
        raise PHashError(f"encoding/hex: invalid byte: U+{byte:04X}{shown}")


_NOT_HEX = re.compile(rb"[^0-9a-fA-F]")


def phash_from_hex(s: str) -> int:
    """Go ``PHashFromHex``: parse hex (any case) that decodes to exactly 8 bytes.

    Like Go's ``hex.DecodeString``, a ``0x`` prefix, spaces and odd lengths are rejected.

    Raises:
        PHashError: With Go's message: ``encoding/hex: invalid byte: U+0078 'x'``,
            ``encoding/hex: odd length hex string`` or ``phash hex must decode to 8 bytes``.

    Examples:
        >>> phash_from_hex("DeadBeefCafeBabe") == 0xDEADBEEFCAFEBABE
        True
        >>> phash_from_hex("deadbeef")
        Traceback (most recent call last):
        ...
        neardup.compat.fingerprint.PHashError: phash hex must decode to 8 bytes
    """
    if not isinstance(s, str):
        raise PHashError(f"a pHash hex must be a str, got {type(s).__name__}")
    # Go's hex.DecodeString works on bytes and reports the first invalid byte of each pair
    # before it reports an odd length; the 8-byte check comes last.
    data = s.encode("utf-8", "surrogatepass")
    # The pairs are checked left to right, then the odd last byte: that is the first invalid
    # byte in order, found here by one C-speed search (a byte loop took seconds on 10 MB).
    bad = _NOT_HEX.search(data)
    if bad is not None:
        _check_hex_byte(data[bad.start()])
    if len(data) % 2:
        raise PHashError("encoding/hex: odd length hex string")
    if len(data) != 16:
        raise PHashError("phash hex must decode to 8 bytes")
    return int(s, 16)


# --------------------------------------------------------------------------------------------
# Text SimHash: Compute, Distance, Similarity
# --------------------------------------------------------------------------------------------

_MASK64 = (1 << 64) - 1


@cache
def _go_hasher() -> SimHasher:
    return SimHasher(preset="go")


def compute(text: str) -> int:
    """Go ``Compute``: the 64-bit shingled SimHash of ``text``; 0 when it has no tokens.

    Examples:
        >>> hex(compute("hello"))
        '0xa430d84680aabd0b'
        >>> compute(""), compute(";.!")
        (0, 0)
    """
    return _go_hasher().sketch(text).value


def _check_code(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MASK64:
        raise InputError(f"{name} must be an int in [0, 2**64) (a Go uint64), got {value!r}")
    return value


def distance(a: int, b: int) -> int:
    """Go ``Distance``: the number of differing bits, ``popcount(a ^ b)`` (0..64).

    Examples:
        >>> distance(0b1011, 0b0001)
        2
    """
    return (_check_code("a", a) ^ _check_code("b", b)).bit_count()


def similarity(a: int, b: int) -> float:
    """Go ``Similarity``: ``1 - distance(a, b) / 64``; ``>= 0.85`` exactly when distance <= 9.

    Examples:
        >>> similarity(0, (1 << 9) - 1), similarity(0, (1 << 10) - 1)
        (0.859375, 0.84375)
    """
    return 1.0 - distance(a, b) / 64.0
