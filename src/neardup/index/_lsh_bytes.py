"""The saved form of an :class:`~neardup.index.lsh.LSHIndex` (``to_bytes`` / ``from_bytes``).

Layout (little-endian): ``b"NDLS"``, u8 version (1), u8 0, u16 0, u32 num_perm, u32 bands,
u32 rows, f64 threshold, u64 count, u64 length of the JSON; UTF-8 JSON
``{"keys": [...], "params": [scheme, params] or null}``; ``count * num_perm`` u32 slot
fingerprints; ``count`` u8 states (1 live, 2 live but empty). Only live rows are saved, in
insertion order; the band-key table is rebuilt on load.
"""

from __future__ import annotations

import json
import struct
from typing import TYPE_CHECKING

import numpy as np

from neardup.errors import ConfigError, FormatError, InputError

if TYPE_CHECKING:
    from neardup.index.lsh import LSHIndex

__all__ = ["dump_index", "load_index"]

_MAGIC = b"NDLS"
_VERSION = 1
_HEADER = struct.Struct("<4sBBHIIIdQQ")


def dump_index(index: LSHIndex) -> bytes:
    """Serialize ``index`` (see the module docstring).

    Raises:
        InputError: A key is not a str or int (only those can be saved).
    """
    live = np.flatnonzero(index._state[: index._n] != 0)
    keys = [index._keys[i] for i in live.tolist()]
    if not all(isinstance(k, str | int) and not isinstance(k, bool) for k in keys):
        raise InputError("only str and int keys can be saved; map other keys to str first")
    meta = {"keys": keys, "params": list(index._params) if index._params else None}
    blob = json.dumps(meta, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    plan = index.plan
    head = _HEADER.pack(
        _MAGIC, _VERSION, 0, 0, index.num_perm, plan.bands, plan.rows, plan.threshold,
        len(keys), len(blob),
    )  # fmt: skip
    sig = np.ascontiguousarray(index._sig[live], dtype="<u4").tobytes()
    return head + blob + sig + index._state[live].tobytes()


def load_index(cls: type[LSHIndex], data: bytes) -> LSHIndex:
    """Read :func:`dump_index` output back into an index of class ``cls``.

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
    try:
        index = cls(threshold, num_perm, bands=bands, rows=rows)
    except ConfigError as exc:
        raise FormatError(f"saved LSHIndex has bad parameters: {exc}") from None
    sig = np.frombuffer(data, dtype="<u4", count=count * num_perm, offset=pos)
    state = np.frombuffer(data, dtype=np.uint8, count=count, offset=pos + count * num_perm * 4)
    if count and not np.isin(state, (1, 2)).all():
        raise FormatError("saved LSHIndex is truncated or corrupt")
    index._params = (str(params[0]), str(params[1])) if params else None
    index._reserve(count)
    index._sig[:count] = sig.reshape(count, num_perm)
    index._state[:count] = state
    index._keys = list(keys)
    index._row = {k: i for i, k in enumerate(keys)}
    index._n = count
    index._lsh.insert_rows(np.flatnonzero(state == 1).astype(np.int64), index._sig, index._tab)
    return index
