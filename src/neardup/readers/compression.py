"""Transparent decompression by file name: ``.gz``, ``.bz2``, ``.xz`` and ``.zst``.

gzip, bz2 and xz come from the standard library; Zstandard from the ``zstandard`` package
(a core dependency since the corpus readers: zstd is the compression of most LLM-data dumps).
Every stream is read incrementally, so a compressed file is never held in memory whole, and
a decoding failure (a truncated or corrupt file) becomes an :class:`~neardup.errors.InputError`
naming the file.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from neardup.errors import InputError

__all__ = ["CODECS", "DECODE_ERRORS", "decode_errors", "open_decompressed", "split_compression"]

#: Compression suffix -> codec name.
CODECS: dict[str, str] = {
    ".gz": "gzip",
    ".bz2": "bz2",
    ".xz": "xz",
    ".zst": "zstd",
    ".zstd": "zstd",
}


@cache
def decode_errors() -> tuple[type[BaseException], ...]:
    """What a decompressing read can raise on a truncated or corrupt file (the codec modules
    are imported on first call, not with this module: an uncompressed read never needs them)."""
    import lzma

    errors: list[type[BaseException]] = [OSError, EOFError, zlib.error, lzma.LZMAError]
    try:
        import zstandard

        errors.append(zstandard.ZstdError)
    except ImportError:  # pragma: no cover - zstandard is a core dependency
        pass
    return tuple(errors)


if TYPE_CHECKING:
    #: What a decompressing read can raise (:func:`decode_errors`, kept as a name).
    DECODE_ERRORS: tuple[type[BaseException], ...]


def __getattr__(name: str) -> tuple[type[BaseException], ...]:
    if name == "DECODE_ERRORS":  # the constant of earlier releases, now computed on first use
        return decode_errors()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def split_compression(name: str) -> tuple[str, str | None]:
    """Split a compression suffix off a file name.

    Examples:
        >>> split_compression("dump.jsonl.zst"), split_compression("a.csv")
        (('dump.jsonl', 'zstd'), ('a.csv', None))
    """
    lower = name.lower()
    for suffix, codec in CODECS.items():
        if lower.endswith(suffix):
            return name[: -len(suffix)], codec
    return name, None


class _ZstdReader(io.RawIOBase):
    """Zstandard frames, one after another, decoded incrementally; a stream that ends inside
    a frame raises (zstandard's own ``stream_reader`` returns short data there silently)."""

    def __init__(self, raw: BinaryIO) -> None:
        import zstandard

        self._raw = raw
        self._zstd = zstandard
        self._dobj = zstandard.ZstdDecompressor().decompressobj()
        self._pending = b""
        self._at = 0
        self._in_frame = False
        self._eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while self._at >= len(self._pending) and not self._eof:
            # small raw chunks bound what one decompress call can produce (a bomb's output)
            chunk = self._raw.read(1 << 13)
            if not chunk:
                self._eof = True
                if self._in_frame:
                    raise self._zstd.ZstdError("input ends inside a zstd frame")
                break
            out = []
            while chunk:
                self._in_frame = True
                out.append(self._dobj.decompress(chunk))
                if not self._dobj.eof:
                    break
                chunk = self._dobj.unused_data
                self._dobj = self._zstd.ZstdDecompressor().decompressobj()
                self._in_frame = False
            self._pending, self._at = b"".join(out), 0
        n = min(len(buffer), len(self._pending) - self._at)
        buffer[:n] = self._pending[self._at : self._at + n]
        self._at += n
        return n


@contextmanager
def open_decompressed(path: Path, codec: str | None) -> Iterator[BinaryIO]:
    """Open ``path`` for binary reading through ``codec`` (``None``: as is).

    Raises:
        InputError: the file cannot be opened.
    """
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        stream: BinaryIO
        if codec is None:
            stream = raw
        elif codec == "gzip":
            import gzip

            stream = gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[assignment]
        elif codec == "bz2":
            import bz2

            stream = bz2.BZ2File(raw, "rb")  # type: ignore[assignment]
        elif codec == "xz":
            import lzma

            stream = lzma.LZMAFile(raw, "rb")  # type: ignore[assignment]  # noqa: SIM115 - closed with raw
        else:
            stream = io.BufferedReader(_ZstdReader(raw), 1 << 20)
        yield stream
    finally:
        raw.close()
