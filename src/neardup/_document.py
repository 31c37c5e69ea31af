"""The Document record, and reading one file's bytes or text under a size cap.

The shared bottom of :mod:`neardup.io` and :mod:`neardup.readers`: it imports neither, so
the readers can build documents and ``io.read_inputs`` can call the readers.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neardup.errors import InputError, InputTooLargeError

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "Document",
    "decode_text",
    "read_file_bytes",
]

log = logging.getLogger("neardup.io")

#: Longest JSONL line (or CSV field) accepted, in bytes; larger ones raise InputTooLargeError.
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
#: Largest file read as one document, in bytes.
DEFAULT_MAX_FILE_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Document:
    """One input document.

    Attributes:
        id: Stable identifier (path or record id).
        text: The text (``None`` for binary inputs such as images before they are read).
        path: The file it came from, if any.
        fields: The record's fields, if any: a mapping given to ``dedup()`` keeps its other
            fields here; a reader asked to keep records (``--annotate``, ``lines``,
            ``substrings``) puts the whole record as read.
    """

    id: str
    text: str | None = None
    path: Path | None = None
    fields: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    def read_bytes(self, *, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> bytes:
        """Return the raw bytes: the file's content, or the text as UTF-8.

        Raises:
            InputError: the document has neither a path nor text, or the file cannot be read.
            InputTooLargeError: the file is over ``max_bytes``.
        """
        if self.path is not None:
            return read_file_bytes(self.path, max_bytes)
        if self.text is not None:
            return self.text.encode("utf-8", "surrogatepass")
        raise InputError(f"document {self.id!r} has no text and no path")


def read_file_bytes(path: Path, max_bytes: int) -> bytes:
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise InputTooLargeError(
                f"{path} is {size} bytes, over the {max_bytes}-byte cap; leave the file out "
                "(--exclude) or split it (from Python: raise read_inputs(max_file_bytes=...))"
            )
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc


def decode_text(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        log.warning("%s is not valid UTF-8; undecodable bytes replaced by U+FFFD", where)
        return data.decode("utf-8", "replace")
