"""One saved form for the indexes without a format of their own: a header, JSON, arrays.

Layout (little-endian): 4-byte magic, u8 version, u8 0, u16 number of arrays, u64 length of
the JSON; UTF-8 JSON (the index's parameters and keys); then per array: u8 dtype code
(``u1 u4 u8 i8 f4``), u8 number of dimensions, u64 per dimension, the raw bytes. No pickle:
loading untrusted bytes runs no code.
"""

from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.errors import FormatError

__all__ = ["dump", "load"]

_DTYPES = ("<u1", "<u4", "<u8", "<i8", "<f4")
_HEAD = struct.Struct("<4sBBHQ")


def dump(magic: bytes, version: int, meta: dict[str, Any], arrays: list[npt.NDArray[Any]]) -> bytes:
    """Serialize ``meta`` (JSON-able) and ``arrays`` under ``magic`` and ``version``."""
    blob = json.dumps(meta, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    parts = [_HEAD.pack(magic, version, 0, len(arrays), len(blob)), blob]
    for arr in arrays:
        dt = np.dtype(arr.dtype)
        code = _DTYPES.index(f"<{dt.kind}{dt.itemsize}")
        parts.append(struct.pack("<BB", code, arr.ndim))
        parts.append(struct.pack(f"<{arr.ndim}Q", *arr.shape))
        parts.append(np.ascontiguousarray(arr, dtype=_DTYPES[code]).tobytes())
    return b"".join(parts)


def load(
    data: bytes, magic: bytes, version: int, name: str
) -> tuple[dict[str, Any], list[npt.NDArray[Any]]]:
    """Read :func:`dump` output; ``name`` (the class) goes into the error messages.

    Raises:
        FormatError: Not this magic, another version, or truncated / corrupt data.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise FormatError(f"{name}.from_bytes needs bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) < _HEAD.size or data[:4] != magic:
        raise FormatError(f"not a saved {name} (no {magic!r} header); pass to_bytes() output")
    _, ver, reserved, count, blen = _HEAD.unpack_from(data)
    if ver != version or reserved:
        raise FormatError(f"{name} format {ver} is not supported; upgrade neardup")
    pos = _HEAD.size
    try:
        meta = json.loads(data[pos : pos + blen].decode("utf-8"))
        pos += blen
        arrays = []
        for _ in range(count):
            code, ndim = struct.unpack_from("<BB", data, pos)
            shape = struct.unpack_from(f"<{ndim}Q", data, pos + 2)
            pos += 2 + 8 * ndim
            dtype = np.dtype(_DTYPES[code])
            size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            if pos + size > len(data):
                raise ValueError("short")
            arrays.append(
                np.frombuffer(data, dtype=dtype, count=size // dtype.itemsize, offset=pos)
                .reshape(shape)
                .copy()
            )
            pos += size
    except (UnicodeDecodeError, ValueError, IndexError, struct.error, RecursionError):
        raise FormatError(f"saved {name} is truncated or corrupt") from None
    if pos != len(data) or not isinstance(meta, dict):
        raise FormatError(f"saved {name} is truncated or corrupt")
    return meta, arrays
