"""Numpy arrays packed into one ``bytes`` value, the unit the Spark engine shuffles.

Spark moves rows; neardup's executors work on arrays. Shuffling one row per band key or per
candidate pair costs Spark a row object, a hash and a comparison each, so the engine ships
*blobs* instead: all the keys, pairs or sketches that go from one task to one destination,
packed as consecutive arrays. A shuffle then moves a few large binary values per task, and
the receiving task unpacks them with ``np.frombuffer`` (one copy, for alignment).

The layout is private to one job (executors of the same neardup version write and read it),
so it carries no version: a header of little-endian int64 ``[count, code_0, len_0, ...]``,
then each array's bytes, padded to 8.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from neardup.errors import InputTooLargeError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "arrow_type",
    "ids_from_arrow",
    "ids_to_arrow",
    "pack",
    "take_ids",
    "take_rows",
    "unpack",
]

_DTYPES = (np.dtype("<u1"), np.dtype("<i8"), np.dtype("<u8"), np.dtype("<u4"), np.dtype("<f8"))
_CODES = {dt: code for code, dt in enumerate(_DTYPES)}
#: Largest blob: a Spark binary value is a Java byte array.
MAX_BLOB = 2**31 - 64


def pack(*arrays: npt.NDArray[Any]) -> bytes:
    """Pack 1-D arrays (uint8, int64, uint64, uint32 or float64) into one blob.

    Raises:
        InputTooLargeError: the blob would exceed Spark's 2 GiB value limit.

    Examples:
        >>> [a.tolist() for a in unpack(pack(np.array([1, 2]), np.array([7], np.uint32)))]
        [[1, 2], [7]]
    """
    header = [len(arrays)]
    parts: list[bytes] = []
    size = 8 * (1 + 2 * len(arrays))
    for arr in arrays:
        dt = arr.dtype.newbyteorder("<") if arr.dtype.byteorder == ">" else arr.dtype
        raw = np.ascontiguousarray(arr, dtype=dt).tobytes()
        header += [_CODES[np.dtype(dt)], len(arr)]
        parts.append(raw + b"\0" * (-len(raw) % 8))
        size += len(parts[-1])
    if size > MAX_BLOB:
        raise InputTooLargeError(
            f"one Spark blob needs {size} bytes, over the 2 GiB limit of a binary value; use "
            "more shuffle partitions (spark.sql.shuffle.partitions) or smaller input partitions"
        )
    return np.array(header, dtype="<i8").tobytes() + b"".join(parts)


def unpack(blob: bytes | memoryview) -> list[npt.NDArray[Any]]:
    """The arrays of a :func:`pack` blob (aligned copies)."""
    raw = np.frombuffer(blob, dtype=np.uint8)
    count = int(raw[:8].copy().view("<i8")[0])
    header = raw[: 8 * (1 + 2 * count)].copy().view("<i8")
    pos = len(header) * 8
    out: list[npt.NDArray[Any]] = []
    for k in range(count):
        dt = _DTYPES[int(header[1 + 2 * k])]
        n = int(header[2 + 2 * k])
        nbytes = n * dt.itemsize
        out.append(raw[pos : pos + nbytes].copy().view(dt))
        pos += nbytes + (-nbytes % 8)
    return out


def ids_from_arrow(ids: pa.Array | pa.ChunkedArray) -> list[npt.NDArray[Any]]:
    """Document ids as arrays for :func:`pack`: ``[int64]`` or ``[utf-8 bytes, offsets]``."""
    import pyarrow as pa

    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks()
    if pa.types.is_integer(ids.type):
        return [ids.cast(pa.int64()).to_numpy(zero_copy_only=False)]
    arr = ids.cast(pa.large_string())
    bufs = arr.buffers()
    off = np.frombuffer(bufs[1], dtype=np.int64)[arr.offset : arr.offset + len(arr) + 1]
    lo, hi = (int(off[0]), int(off[-1])) if len(off) else (0, 0)
    data = np.frombuffer(bufs[2], dtype=np.uint8)[lo:hi] if bufs[2] is not None and hi else None
    return [data if data is not None else np.zeros(0, np.uint8), off - lo]


def ids_to_arrow(parts: list[npt.NDArray[Any]]) -> pa.Array:
    """The inverse of :func:`ids_from_arrow`: an ``int64`` or ``large_string`` Arrow array."""
    import pyarrow as pa

    if len(parts) == 1:
        return pa.array(parts[0], pa.int64())
    data, off = parts
    return pa.Array.from_buffers(
        pa.large_string(), len(off) - 1, [None, pa.py_buffer(off), pa.py_buffer(data)]
    )


def take_ids(parts: list[npt.NDArray[Any]], rows: npt.NDArray[np.int64]) -> list[npt.NDArray[Any]]:
    """The ids at ``rows`` (in that order), in :func:`ids_from_arrow` form."""
    if len(parts) == 1:
        return [parts[0][rows]]
    return list(take_rows(parts[0], parts[1], rows))


def take_rows(
    data: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64], rows: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """Rows ``rows`` of a CSR byte array (``data[offsets[i]:offsets[i + 1]]`` is row ``i``):
    their bytes, concatenated, and the new offsets. Copies whole 4-byte words when every
    offset allows it (sketch bytes), else single bytes (ids).

    Examples:
        >>> d, o = take_rows(np.frombuffer(b"abcde", np.uint8), np.array([0, 2, 5]),
        ...                  np.array([1, 0]))
        >>> d.tobytes(), o.tolist()
        (b'cdeab', [0, 3, 5])
    """
    starts, ends = offsets[rows], offsets[rows + 1]
    out_offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(ends - starts, out=out_offsets[1:])
    unit = 4 if len(data) % 4 == 0 and not (offsets % 4).any() else 1
    view = data.view(np.uint32) if unit == 4 else data
    lengths = (ends - starts) // unit
    total = int(out_offsets[-1]) // unit
    first = np.zeros(len(rows), dtype=np.int64)
    np.cumsum(lengths[:-1], out=first[1:])
    index = np.repeat(starts // unit - first, lengths) + np.arange(total, dtype=np.int64)
    return np.ascontiguousarray(view[index]).view(np.uint8), out_offsets


def arrow_type(spark_type: str) -> pa.DataType:
    """The Arrow type Spark's ``mapInArrow`` expects for an id column's Spark type name.

    Examples:
        >>> str(arrow_type("string")), str(arrow_type("bigint"))
        ('string', 'int64')
    """
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "bigint": pa.int64(),
        "int": pa.int32(),
        "smallint": pa.int16(),
        "tinyint": pa.int8(),
    }
    return types[spark_type]
