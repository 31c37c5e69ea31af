"""Transparent decompression by file name: ``.gz``, ``.bz2``, ``.xz`` and ``.zst``.

gzip, bz2 and xz come from the standard library; Zstandard from the ``zstandard`` package
(a core dependency since the corpus readers: zstd is the compression of most LLM-data dumps).
Every stream is read incrementally, so a compressed file is never held in memory whole, and
a decoding failure (a truncated or corrupt file) becomes an :class:`~neardup.errors.InputError`
naming the file.
"""

from __future__ import annotations

import io
import sys
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

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


def decode_errors() -> tuple[type[BaseException], ...]:
    """What a decompressing read can raise on a truncated or corrupt file.

    No codec module is imported here: this is evaluated as an ``except`` clause, also while
    another exception (or a generator's close) passes, and an import there can fail and
    hide it. A codec whose module is not loaded yet has raised nothing.
    """
    errors: list[type[BaseException]] = [OSError, EOFError, zlib.error]
    lzma = sys.modules.get("lzma")
    if lzma is not None:
        errors.append(lzma.LZMAError)
    zstandard = sys.modules.get("zstandard")
    if zstandard is not None and isinstance(getattr(zstandard, "ZstdError", None), type):
        errors.append(zstandard.ZstdError)
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


#: Raw bytes read at a time, and most bytes one decompress call may produce (a bomb's output
#: stays bounded per call).
_RAW_CHUNK = 1 << 15
_OUT_CHUNK = 1 << 16


class _StreamsReader(io.RawIOBase):
    """Concatenated bz2 or xz streams, decoded incrementally. The standard library's readers
    take bytes after a complete stream that do not decode as the start of another stream for
    padding and drop them silently, which loses every record of a damaged later stream; here
    every byte must belong to a stream (xz's stream padding, NUL bytes in fours, aside),
    else the read raises."""

    def __init__(self, raw: BinaryIO, codec: str) -> None:
        self._raw = raw
        self._xz = codec == "xz"
        self._new: Callable[[], object]
        if self._xz:
            import lzma

            self._new = lzma.LZMADecompressor
            self._error: type[Exception] = lzma.LZMAError
        else:
            import bz2

            self._new = bz2.BZ2Decompressor
            self._error = OSError
        self._dec: Any = None
        self._input = b""
        self._pending = b""
        self._at = 0
        self._eof = False

    def readable(self) -> bool:
        return True

    def _next_stream(self) -> bool:
        """Start the next stream, if more bytes follow; False at the end of the file."""
        rest = self._input
        padding = 0
        while True:
            if not rest:
                rest = self._raw.read(_RAW_CHUNK)
                if not rest:
                    break
            if self._xz:
                stripped = rest.lstrip(b"\0")
                padding += len(rest) - len(stripped)
                rest = stripped
                if not rest:
                    continue
            break
        if padding % 4:
            raise self._error(f"{padding} NUL bytes between xz streams (padding comes in fours)")
        self._input = rest
        if not rest:
            return False
        self._dec = self._new()
        return True

    def _decode(self) -> bytes:
        dec = self._dec
        if dec is None or dec.eof:
            if dec is not None:
                self._input = dec.unused_data + self._input
            if not self._next_stream():
                self._eof = True
                return b""
            dec = self._dec
        if dec.needs_input:
            data = self._input or self._raw.read(_RAW_CHUNK)
            self._input = b""
            if not data:
                raise EOFError("the file ends inside a compressed stream (truncated)")
        else:
            data = b""
        return bytes(dec.decompress(data, max_length=_OUT_CHUNK))

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while self._at >= len(self._pending) and not self._eof:
            self._pending, self._at = self._decode(), 0
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
        elif codec in ("bz2", "xz"):
            stream = io.BufferedReader(_StreamsReader(raw, codec), 1 << 20)
        else:
            stream = io.BufferedReader(_ZstdReader(raw), 1 << 20)
        yield stream
    finally:
        raw.close()
