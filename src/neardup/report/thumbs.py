"""Thumbnails of image documents for the HTML report, as ``data:`` URIs (Pillow, extra ``image``).

Images are decoded under the image hashes' pixel cap, shrunk to ``size`` pixels on the longest
side and embedded as JPEG (PNG when the image has transparency). A file that cannot be read
gets no thumbnail and a warning; without Pillow there are no thumbnails at all.
"""

from __future__ import annotations

import base64
import io
import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from neardup.errors import MissingExtraError, NeardupError
from neardup.types import DocId

if TYPE_CHECKING:
    from PIL import Image as PILImage

__all__ = ["Thumbnails"]

log = logging.getLogger("neardup.report.html")


class Thumbnails:
    """Makes (and caches) each image document's thumbnail, at most ``limit`` of them.

    Args:
        locate: The image file of a document, or ``None`` when it is not an image.
        size: Longest side in pixels.
        limit: Distinct images turned into thumbnails.
    """

    def __init__(
        self, locate: Callable[[DocId], str | os.PathLike[str] | None], *, size: int, limit: int
    ) -> None:
        self._locate = locate
        self._size = size
        self._limit = limit
        self._cache: dict[DocId, str | None] = {}
        self.missing_pillow = False
        self.skipped = 0
        self.failed: dict[DocId, str] = {}

    def is_image(self, doc: DocId) -> bool:
        """Whether ``doc`` has an image file."""
        return self._locate(doc) is not None

    def uri(self, doc: DocId) -> str | None:
        """The ``data:`` URI of ``doc``'s thumbnail; ``None`` if none can or may be made."""
        if doc in self._cache:
            return self._cache[doc]
        path = self._locate(doc)
        if path is None or self.missing_pillow:
            return None
        if len(self._cache) >= self._limit:
            self.skipped += 1
            return None
        try:
            uri: str | None = self._data_uri(path)
        except MissingExtraError:
            self.missing_pillow = True
            log.info("thumbnails skipped: Pillow is not installed (extra 'image')")
            return None
        except (NeardupError, OSError, ValueError) as exc:
            log.warning("no thumbnail for %r: %s", doc, exc)
            self.failed[doc] = str(exc)
            uri = None
        self._cache[doc] = uri
        return uri

    def _data_uri(self, path: str | os.PathLike[str]) -> str:
        from neardup._extras import require_extra

        require_extra("image", "PIL.Image")
        from neardup.image.decode import opened

        size = (self._size, self._size)
        with opened(os.fspath(path), draft=("RGB", size)) as im:
            thumb = _shrink(im, size)
        buf = io.BytesIO()
        if thumb.mode == "RGBA":
            thumb.save(buf, format="PNG", optimize=True)
            mime = "image/png"
        else:
            thumb.save(buf, format="JPEG", quality=82)
            mime = "image/jpeg"
        return f"data:{mime};base64,{base64.b64encode(buf.getvalue()).decode('ascii')}"


def _shrink(im: PILImage.Image, size: tuple[int, int]) -> PILImage.Image:
    """A small RGB (or RGBA, if the image has transparency) copy of ``im``."""
    alpha = "A" in im.getbands() or "transparency" in im.info
    thumb = im.convert("RGBA" if alpha else "RGB")
    thumb.thumbnail(size)
    return thumb
