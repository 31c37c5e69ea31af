"""A regular JSONL file cut into blocks that the scanning threads read themselves.

Block ``k`` holds the lines that start in bytes ``[k * size, (k + 1) * size)`` of the file;
the thread that scans it reads it (``os.pread``) and finds its lines, so the thread that
hands out the blocks never touches the bytes. Line numbers (the ids of records without one,
and every error message) are counted in block order: each block counts its lines right
after reading them, and asks how many came before it once it has decoded them.
"""

from __future__ import annotations

import os
import stat
import threading
import weakref
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from neardup.errors import InputError, InputTooLargeError

__all__ = ["FileBlocks"]

#: Bytes read beyond a block's end, in the same read, for its last line (a longer last line
#: is read on).
MARGIN = 1 << 14


class FileBlocks:
    """The blocks of one open regular file, and the count of lines that precede each block.

    The jobs that read the blocks must all run, each block's after the one before it has
    started (in order on one thread, or on threads that take them from one queue in order):
    block ``k`` waits until block ``k - 1`` has counted its lines.
    """

    def __init__(self, path: Path, fd: int, size: int, block: int, max_line: int) -> None:
        self.path = path
        self._fd = fd
        self.size = size
        self.block = block
        self.max_line = max_line
        self._counted = threading.Condition()
        self._next = 0  # blocks whose lines are counted
        self._lines = 0  # lines in those blocks
        weakref.finalize(self, os.close, fd)

    @classmethod
    def open(
        cls, path: Path, block: int | Callable[[int], int], max_line: int
    ) -> FileBlocks | None:
        """The file's blocks (of ``block`` bytes, or ``block(file size)``), or ``None`` when
        it is not a regular file (a pipe is read in order) or this platform has no positional
        reads."""
        if not hasattr(os, "pread"):  # pragma: no cover - Windows
            return None
        try:
            # looked at before opening: opening a pipe would take its writer's data
            if not stat.S_ISREG(os.stat(path).st_mode):
                return None
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
        size = os.fstat(fd).st_size
        return cls(path, fd, size, block if isinstance(block, int) else block(size), max_line)

    def __len__(self) -> int:
        return -(-self.size // self.block)

    def jobs(
        self, scan: Callable[[memoryview, Any, Any, Callable[[], int]], list[Any]]
    ) -> Iterator[Callable[[], list[Any]]]:
        """One job per block, in order: it reads the block, counts its lines, and returns
        ``scan(chunk, starts, ends, first_line)`` (the block's lines ``chunk[starts[i]:ends[i]]``,
        the first of which is line ``first_line() + 1`` of the file: ``first_line`` waits until
        the blocks before this one have counted their lines)."""
        for k in range(len(self)):
            yield partial(self._job, k, scan)

    def _job(
        self, k: int, scan: Callable[[memoryview, Any, Any, Callable[[], int]], list[Any]]
    ) -> list[Any]:
        from neardup.packed import _line_bounds

        first: list[int] = []  # the lines before this block, once counted
        lines = 0

        def first_line() -> int:
            if not first:
                first.append(self._count(k, lines))
            return first[0]

        try:
            chunk, long_line = self._read(k)
            starts, ends = _line_bounds(np.frombuffer(chunk, np.uint8), len(chunk))
            lines = len(starts)
            # the scan asks for the count once its JSON decoding is done: by then the block
            # before this one has long counted its lines
            found = scan(chunk, starts, ends, first_line) if lines else []
            if long_line:
                n = first_line() + lines + 1
                raise InputTooLargeError(
                    f"{self.path}:{n}: line longer than {self.max_line} bytes; split the record"
                )
            return found
        finally:
            first_line()  # the blocks after it wait for this count

    def _count(self, k: int, lines: int) -> int:
        """The lines before block ``k``, once every block before it has counted its own."""
        with self._counted:
            while self._next < k:
                self._counted.wait()
            first = self._lines
            self._lines += lines
            self._next = k + 1
            self._counted.notify_all()
        return first

    def _pread(self, size: int, at: int) -> bytes:
        try:
            return os.pread(self._fd, size, at)
        except OSError as exc:
            raise InputError(f"cannot read {self.path}: {exc.strerror or exc}") from exc

    def _read(self, k: int) -> tuple[memoryview, bool]:
        """Block ``k``'s whole lines, the last one ending with a newline (added at the end of
        the file when missing), and whether a line longer than ``max_line`` starts after them
        (it is not read)."""
        lo = k * self.block
        hi = min(lo + self.block, self.size)
        at = max(lo - 1, 0)  # a line starts at lo when the byte before it is a newline
        want = self.block + MARGIN + 1
        data = self._pread(want, at)
        got = len(data)
        if k == 0:
            start = 0
        else:
            nl = data.find(b"\n", 0, min(hi - at, got))
            if nl < 0:  # every byte of the block belongs to a line begun before it
                return memoryview(data)[:0], False
            start = nl + 1
        if start >= hi - at:
            return memoryview(data)[:0], False
        # the block ends after the first newline at or after its last byte
        end = data.find(b"\n", hi - 1 - at, got)
        if end >= 0:
            return memoryview(data)[start : end + 1], False
        if got < want:  # the end of the file
            return self._last(data, start)
        return self._read_on(bytearray(data), start, at, hi - 1 - at)

    def _last(self, data: bytes | bytearray, start: int) -> tuple[memoryview, bool]:
        """The lines up to the end of the file, a newline added to the last one if missing."""
        if len(data) > start and data[-1] != 0x0A:
            return memoryview(bytes(data[start:]) + b"\n"), False
        return memoryview(data)[start:], False

    def _read_on(self, buf: bytearray, start: int, at: int, since: int) -> tuple[memoryview, bool]:
        """Read on until a newline at or after ``since`` ends the block's last line."""
        # where the last line starts: after the last newline before `since`
        last = max(buf.rfind(b"\n", start, since) + 1, start)
        step = len(buf)
        while True:
            if len(buf) - last > self.max_line:
                return memoryview(buf)[start:last], True
            have = len(buf)
            more = self._pread(step, at + have)
            if not more:
                return self._last(buf, start)
            buf += more
            end = buf.find(b"\n", max(have, since))
            if end >= 0:
                return memoryview(buf)[start : end + 1], False
            step *= 2
