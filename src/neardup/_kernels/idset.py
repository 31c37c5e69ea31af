"""The numpy-side twin of ``neardup._native.idset``: a set of document ids kept as their
64-bit hashes (XXH3-64 of the UTF-8 bytes, lone surrogates written as ``surrogatepass``
does), for the duplicate-id check of a run. A hash seen twice may be two different ids (a
64-bit collision): the caller compares the strings."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise

import numpy as np
import numpy.typing as npt
import xxhash

from neardup.errors import ConfigError

__all__ = ["IdSet", "hash_ids", "hash_packed_ids"]


def _hash(item: object) -> int:
    if not isinstance(item, str):
        raise ConfigError(f"ids must be strings, got {type(item).__name__}")
    return xxhash.xxh3_64_intdigest(item.encode("utf-8", "surrogatepass"))


class IdSet:
    """The 64-bit hashes of the ids added so far."""

    __slots__ = ("_hashes",)

    def __init__(self) -> None:
        self._hashes: set[int] = set()

    def add(self, ids: Iterable[str]) -> int:
        """Add ``ids`` in order. Returns -1 when every hash was new, else the place in
        ``ids`` of the first id whose hash was seen before (in an earlier call or earlier in
        ``ids``); the ids before it are added, it and the ids after it are not."""
        seen = self._hashes
        for k, item in enumerate(ids):
            h = _hash(item)
            if h in seen:
                return k
            seen.add(h)
        return -1

    def add_hashes(self, hashes: npt.NDArray[np.uint64]) -> int:
        """Add the ids of ``hashes`` (what :func:`hash_ids` gave), as :meth:`add` adds ids."""
        seen = self._hashes
        for k, h in enumerate(np.ascontiguousarray(hashes, dtype=np.uint64).tolist()):
            if h in seen:
                return k
            seen.add(h)
        return -1

    def __len__(self) -> int:
        return len(self._hashes)


def hash_ids(ids: Iterable[str]) -> npt.NDArray[np.uint64]:
    """The 64-bit hash of each of ``ids`` (what :meth:`IdSet.add` keeps), so that the ids can
    be hashed on one thread and added on another (:meth:`IdSet.add_hashes`)."""
    return np.array([_hash(item) for item in ids], dtype=np.uint64)


def hash_packed_ids(
    buf: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]
) -> npt.NDArray[np.uint64]:
    """The hash of each id of a packed batch, id ``k`` being ``buf[offsets[k]:offsets[k + 1]]``
    (its UTF-8 bytes): what :func:`hash_ids` gives for the decoded ids, with no string made.

    Raises:
        ConfigError: ``offsets`` are not boundaries within ``buf``.
    """
    o = np.asarray(offsets, dtype=np.int64)
    if not (len(o) and o[0] >= 0 and not np.any(o[1:] < o[:-1]) and o[-1] <= len(buf)):
        raise ConfigError(
            "offsets must start at 0 or later, never decrease and end within the buffer; "
            "pass the ids' boundaries"
        )
    raw = np.asarray(buf, dtype=np.uint8).tobytes()
    bounds = o.tolist()
    return np.array(
        [xxhash.xxh3_64_intdigest(raw[a:b]) for a, b in pairwise(bounds)],
        dtype=np.uint64,
    )
