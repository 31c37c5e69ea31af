"""Argument checks the numpy twins share, raising what the native kernels raise for the same
arguments (the Python side of ``native/src/arrays.rs`` and ``native/src/errors.rs``)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["check_offsets", "check_ranges", "check_table", "check_uint8"]

I64 = npt.NDArray[np.int64]


def check_offsets(size: int, offsets: I64) -> None:
    """Check that document offsets rise within a buffer of ``size`` bytes, as the kernels
    (native and reference alike) require.

    Raises:
        ValueError: a document's range is reversed or outside the buffer (the first named).
    """
    lo, hi = offsets[:-1], offsets[1:]
    bad = np.flatnonzero((lo < 0) | (hi < lo) | (hi > size))
    if len(bad):
        d = int(bad[0])
        raise ValueError(
            f"document {d} spans bytes [{lo[d]}, {hi[d]}), not a range of the buffer of "
            f"{size} bytes; offsets must rise from 0 to at most the buffer's length"
        )


def check_ranges(size: int, starts: I64, ends: I64) -> None:
    """Check that every byte range ``[starts[i], ends[i])`` lies in a buffer of ``size`` bytes.

    Raises:
        ValueError: the arrays differ in length, or a range is reversed or outside the buffer.
    """
    if len(starts) != len(ends):
        raise ValueError(f"starts and ends differ in length ({len(starts)} and {len(ends)})")
    bad = np.flatnonzero((starts < 0) | (ends < starts) | (ends > size))
    if len(bad):
        i = int(bad[0])
        raise ValueError(
            f"byte range [{starts[i]}, {ends[i]}) is outside the buffer of {size} bytes"
        )


def check_uint8(value: int) -> int:
    """``value``, a mask of flags applied to a ``uint8`` table.

    Raises:
        OverflowError: ``value`` is not a ``uint8`` (as numpy says it).
    """
    if not 0 <= value <= 255:
        raise OverflowError(f"Python integer {value} out of bounds for uint8")
    return value


def check_table(name: str, table: npt.NDArray[np.generic]) -> None:
    """Check that ``table`` has an entry for every code point (0x110000), as the kernels
    that index it by code point require.

    Raises:
        ValueError: it has fewer.
    """
    if len(table) < 0x110000:
        raise ValueError(
            f"the {name} table has {len(table)} entries, not one per code point (0x110000); "
            "pass the table neardup._kernels builds"
        )
