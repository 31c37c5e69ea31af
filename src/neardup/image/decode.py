"""Decoding images with Pillow under a pixel cap, turning every failure into a NeardupError.

Pillow is imported lazily (extra ``image``). Safety rules:

* The pixel count from the header is checked against ``max_pixels`` *before* any pixel is
  decoded, so a decompression bomb (a tiny file that claims 30000x30000 pixels) costs almost
  no memory; Pillow's own ``Image.MAX_IMAGE_PIXELS`` check (which runs inside
  ``Image.open``) also applies and is reported the same way.
* Truncated, corrupt, empty and unsupported files raise :class:`~neardup.errors.DecodeError`
  naming the file. Pillow's global ``ImageFile.LOAD_TRUNCATED_IMAGES`` is never changed.
* Files opened here are closed here; images passed in by the caller are never closed.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, TypeVar, Union

from neardup._extras import require_extra
from neardup.errors import DecodeError, InputTooLargeError, NeardupError

if TYPE_CHECKING:
    from PIL import Image as PILImage

__all__ = ["DEFAULT_MAX_PIXELS", "ImageSource", "describe", "map_threads", "opened"]

_S = TypeVar("_S")
_R = TypeVar("_R")

#: Default cap on width x height: Pillow's own default ``Image.MAX_IMAGE_PIXELS``
#: (``1024 * 1024 * 1024 // 4 // 3``, about 89.5 Mpixel, about 358 MB as RGBA).
DEFAULT_MAX_PIXELS = 1024 * 1024 * 1024 // 4 // 3

#: What the hashing functions accept: a path, the encoded bytes, a binary file object, or an
#: already decoded ``PIL.Image.Image``.
ImageSource = Union[
    str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[bytes], "PILImage.Image"
]


def describe(source: object) -> str:
    """A short name of an image source for error messages.

    Examples:
        >>> describe("photos/cat.png")
        "'photos/cat.png'"
        >>> describe(b"abc")
        '<3 bytes>'
    """
    if isinstance(source, str | os.PathLike):
        return repr(os.fspath(source))
    if isinstance(source, bytes | bytearray | memoryview):
        return f"<{len(source)} bytes>"
    name = getattr(source, "name", None)
    if isinstance(name, str):
        return repr(name)
    return f"<{type(source).__name__}>"


def _check_pixels(width: int, height: int, max_pixels: int, name: str) -> None:
    if width * height > max_pixels:
        raise InputTooLargeError(
            f"{name}: {width}x{height} = {width * height} pixels exceeds max_pixels="
            f"{max_pixels} (a possible decompression bomb); pass a larger max_pixels if the "
            "image is trusted"
        )


@contextmanager
def opened(
    source: ImageSource,
    *,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    formats: tuple[str, ...] | None = None,
    draft: tuple[str, tuple[int, int] | None] | None = None,
) -> Iterator[PILImage.Image]:
    """Yield the decoded (loaded) image of ``source``, closing any file opened here.

    Args:
        source: A path, encoded bytes, a binary file object or a ``PIL.Image.Image``.
        max_pixels: Refuse images whose header claims more pixels than this.
        formats: Pillow format names to accept (e.g. ``("PNG", "JPEG", "GIF")``), or
            ``None`` for every format Pillow can read.
        draft: ``(mode, size)`` passed to ``Image.draft`` before loading (JPEG DCT scaling).

    Raises:
        InputTooLargeError: The image has more than ``max_pixels`` pixels.
        DecodeError: The data is empty, not an image, of an unaccepted format, truncated or
            corrupt. The message names the source.
        MissingExtraError: Pillow is not installed.
    """
    image_mod = require_extra("image", "PIL.Image")
    name = describe(source)
    if isinstance(source, image_mod.Image):
        _check_pixels(source.width, source.height, max_pixels, name)
        yield source
        return
    fp: object = source
    if isinstance(source, bytes | bytearray | memoryview):
        fp = io.BytesIO(bytes(source))
    try:
        im = image_mod.open(fp, formats=list(formats) if formats else None)
    except image_mod.DecompressionBombError as exc:
        raise InputTooLargeError(
            f"{name}: Pillow refused it as a decompression bomb ({exc}); raise "
            "PIL.Image.MAX_IMAGE_PIXELS and max_pixels if the image is trusted"
        ) from exc
    except FileNotFoundError as exc:
        raise DecodeError(f"{name}: no such file; check the path") from exc
    except image_mod.UnidentifiedImageError as exc:
        accepted = ", ".join(formats) if formats else "any format Pillow supports"
        raise DecodeError(
            f"{name}: image: unknown format (empty, not an image, or not one of {accepted}); "
            "pass a PNG, JPEG or GIF file"
        ) from exc
    except NeardupError:
        raise
    except Exception as exc:  # Pillow raises many types for corrupt headers
        raise DecodeError(
            f"{name}: cannot read the image header ({type(exc).__name__}: {exc}); "
            "the file is corrupt or not an image"
        ) from exc
    with im:
        _check_pixels(im.width, im.height, max_pixels, name)
        try:
            if draft is not None:
                im.draft(draft[0], draft[1])
            im.load()
        except Exception as exc:  # truncated data: OSError, SyntaxError, zlib.error, ...
            raise DecodeError(
                f"{name}: the image data is truncated or corrupt ({type(exc).__name__}: "
                f"{exc}); re-export or re-download the file"
            ) from exc
        yield im


def map_threads(fn: Callable[[_S], _R], items: Iterable[_S], workers: int) -> list[_R]:
    """``[fn(x) for x in items]``, in ``workers`` threads when more than one (Pillow decodes
    and the native kernels run without the GIL), results in input order.

    Raises:
        ConfigError: ``workers`` is not a positive integer.
    """
    from neardup.errors import ConfigError

    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError(f"workers must be a positive integer, got {workers!r}")
    seq = list(items)
    if workers == 1 or len(seq) < 2:
        return [fn(x) for x in seq]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, seq))
