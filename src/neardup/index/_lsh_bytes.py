"""The saved form of an :class:`~neardup.index.lsh.LSHIndex` (``to_bytes`` / ``from_bytes``).

This module knows the bytes, not the index: the index hands it a :class:`SavedLSH` and
builds itself from the one :func:`load_index` returns, so nothing here imports ``lsh.py``.

Layout (little-endian): ``b"NDLS"``, u8 version (1), u8 0, u16 0, u32 num_perm, u32 bands,
u32 rows, f64 threshold, u64 count, u64 length of the JSON; UTF-8 JSON
``{"keys": [...], "params": [scheme, params] or null}``; ``count * num_perm`` u32 slot
fingerprints; ``count`` u8 states (1 live, 2 live but empty). Only live rows are saved, in
insertion order; the band-key table is rebuilt on load.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup.errors import FormatError, InputError

__all__ = ["SavedLSH", "dump_index", "load_index"]

_MAGIC = b"NDLS"
_VERSION = 1
_HEADER = struct.Struct("<4sBBHIIIdQQ")


@dataclass(frozen=True, slots=True)
class SavedLSH:
    """What a saved index holds: its plan, and its live rows in insertion order.

    ``sig`` is the ``(len(keys), num_perm)`` slot fingerprints and ``state`` one byte per
    row (1 live, 2 live but empty); ``params`` is the sketches' ``(scheme, params)`` or None.
    """

    num_perm: int
    bands: int
    rows: int
    threshold: float
    keys: list[Hashable]
    params: tuple[str, str] | None
    sig: npt.NDArray[np.uint32]
    state: npt.NDArray[np.uint8]


def dump_index(saved: SavedLSH) -> bytes:
    """Serialize ``saved`` (see the module docstring).

    Raises:
        InputError: A key is not a str or int (only those can be saved).
    """
    keys = saved.keys
    if not all(isinstance(k, str | int) and not isinstance(k, bool) for k in keys):
        raise InputError("only str and int keys can be saved; map other keys to str first")
    meta = {"keys": keys, "params": list(saved.params) if saved.params else None}
    blob = json.dumps(meta, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    head = _HEADER.pack(
        _MAGIC, _VERSION, 0, 0, saved.num_perm, saved.bands, saved.rows, saved.threshold,
        len(keys), len(blob),
    )  # fmt: skip
    sig = np.ascontiguousarray(saved.sig, dtype="<u4").tobytes()
    return head + blob + sig + np.ascontiguousarray(saved.state, dtype=np.uint8).tobytes()


def load_index(data: bytes) -> SavedLSH:
    """Read :func:`dump_index` output back (checked, but not yet built into an index).

    Raises:
        FormatError: Malformed or truncated data, or an unknown version.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise FormatError(f"LSHIndex.from_bytes needs bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) < _HEADER.size or data[:4] != _MAGIC:
        raise FormatError("not a saved LSHIndex (no b'NDLS' header); pass to_bytes() output")
    _, version, r1, r2, num_perm, bands, rows, threshold, count, blen = _HEADER.unpack_from(data)
    if version != _VERSION or r1 or r2:
        raise FormatError(f"LSHIndex format {version} is not supported; upgrade neardup")
    pos = _HEADER.size
    try:
        meta = json.loads(data[pos : pos + blen].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise FormatError("saved LSHIndex is truncated or corrupt") from None
    pos += blen
    keys = meta.get("keys") if isinstance(meta, dict) else None
    params = meta.get("params") if isinstance(meta, dict) else None
    if (
        not isinstance(keys, list)
        or len(keys) != count
        or len(set(keys)) != count
        or not all(isinstance(k, str | int) and not isinstance(k, bool) for k in keys)
        or not (params is None or (isinstance(params, list) and len(params) == 2))
        or len(data) != pos + count * num_perm * 4 + count
    ):
        raise FormatError("saved LSHIndex is truncated or corrupt")
    sig = np.frombuffer(data, dtype="<u4", count=count * num_perm, offset=pos)
    state = np.frombuffer(data, dtype=np.uint8, count=count, offset=pos + count * num_perm * 4)
    if count and not np.isin(state, (1, 2)).all():
        raise FormatError("saved LSHIndex is truncated or corrupt")
    return SavedLSH(
        num_perm=num_perm,
        bands=bands,
        rows=rows,
        threshold=threshold,
        keys=list(keys),
        params=(str(params[0]), str(params[1])) if params else None,
        sig=sig.reshape(count, num_perm),
        state=state,
    )
