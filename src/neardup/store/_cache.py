"""A bounded cache of checked, decoded segments and chunks for one connection (private).

A store's long-lived writer (``neardup serve``'s) reads the same small segments and recent
chunks at every group commit: fetching, checksumming and decoding them again cost most of a
small commit. Segments and chunks do not change once written, except when a merge rewrites a
segment under its id, or a compaction rewrites chunks; so the cache keeps what it decoded
(checked once, when read) and forgets:

- everything, when another connection committed (``PRAGMA data_version`` moved), or when a
  write transaction of this connection rolled back;
- the list of segments, when this connection writes;
- a segment whose row changed, or that this connection rewrote by a merge;
- every chunk, when this connection compacted.

Memory is bounded by :attr:`ReadCache.max_entries` segment entries (16 bytes each) and
:attr:`ReadCache.max_chunks` chunks; the least recently used go first. A store opened with
``cache=False`` (the default) has none.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.store._chunks import Chunk

__all__ = ["ReadCache"]

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


class ReadCache:
    """Decoded segments (sorted keys, documents) and chunks of one connection.

    Args:
        max_entries: Segment entries held at most (a segment larger than half of it is
            never held: it is read block by block, as without a cache).
        max_chunks: Chunks held at most.
    """

    def __init__(self, max_entries: int = 1 << 22, max_chunks: int = 4096) -> None:
        self.max_entries = max_entries
        self.max_chunks = max_chunks
        self._version: int | None = None
        self._segments: OrderedDict[int, tuple[object, U64, I64]] = OrderedDict()
        self._entries = 0
        self._chunks: OrderedDict[int, Chunk] = OrderedDict()
        self.segs: list[Any] | None = None  # the segs table's rows, until this connection writes
        # the connection's tail (``_tail.py``) follows the table: this connection's writes
        # keep it up to date, so it is read again only after another connection's commit
        self.tail_synced = False
        self.counts: dict[str, int] | None = None  # the meta counters (``_base._counters``)

    def validate(self, conn: sqlite3.Connection) -> None:
        """Forget everything if another connection committed since the last call (call it
        at the start of each read, inside its transaction)."""
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        if version != self._version:
            self.clear()
            self._version = version

    def clear(self) -> None:
        """Forget everything."""
        self.tail_synced = False
        self.counts = None
        self.segs = None
        self._segments.clear()
        self._entries = 0
        self._chunks.clear()

    # ----------------------------------------------------------------------------- segments

    def fits(self, entries: int) -> bool:
        """Whether a segment of ``entries`` may be held."""
        return 2 * entries <= self.max_entries

    def segment(self, seg: int, fields: object) -> tuple[U64, I64] | None:
        """The held entries of segment ``seg`` if its row still has these ``fields``."""
        held = self._segments.get(seg)
        if held is None:
            return None
        if held[0] != fields:
            self.forget_segments([seg])
            return None
        self._segments.move_to_end(seg)
        return held[1], held[2]

    def hold_segment(self, seg: int, fields: object, keys: U64, docs: I64) -> None:
        """Hold a segment's entries, sorted by key (as its blocks give them)."""
        self.forget_segments([seg])
        while self._segments and self._entries + keys.size > self.max_entries:
            _, (_, old, _) = self._segments.popitem(last=False)
            self._entries -= old.size
        self._segments[seg] = (fields, keys, docs)
        self._entries += keys.size

    def forget_segments(self, segs: list[int]) -> None:
        """Forget these segments (rewritten by a merge of this connection)."""
        for seg in segs:
            held = self._segments.pop(seg, None)
            if held is not None:
                self._entries -= held[1].size

    # ------------------------------------------------------------------------------- chunks

    def chunk(self, cid: int) -> Chunk | None:
        """The held chunk ``cid``."""
        held = self._chunks.get(cid)
        if held is not None:
            self._chunks.move_to_end(cid)
        return held

    def hold_chunk(self, cid: int, chunk: Chunk) -> None:
        """Hold a checked, decoded chunk."""
        self._chunks[cid] = chunk
        self._chunks.move_to_end(cid)
        while len(self._chunks) > self.max_chunks:
            self._chunks.popitem(last=False)

    def forget_chunks(self) -> None:
        """Forget every chunk (this connection rewrote some)."""
        self._chunks.clear()
