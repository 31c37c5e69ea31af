"""The tail: the lookup and key entries of recent small writes, one row per write, until they
become segments (private; schema version 5 on).

A write of a few documents (``neardup serve``'s group commits at a low rate) that made two new
segments of its entries paid for their encoding, their ``segs`` and ``blocks`` rows and the
merges they start, whatever its size: ~1.7 ms of CPU for a group of one document. A
*buffered* write (:meth:`neardup.store.Store.add_many` with ``buffered=True``) puts its
entries into **one** ``tail`` row instead, in the same transaction as its documents, so they
are as durable as the documents (an acknowledged document survives a SIGKILL with its
entries, and nothing has to be rebuilt when the store opens again). Once the tail holds
:data:`TAIL_DOCS` documents or is older than :data:`TAIL_SECONDS`, the writer's next idle
moment turns all of it into two segments and deletes its rows (a write that would take it past
:data:`TAIL_MAX` does it at once).

A row is ``(id, docs, lookups, keys, data, checksum)``: ``id`` is the write's first document
id (ids are never given out twice, so neither is a row id), ``docs`` its documents, ``lookups``
and ``keys`` its entry counts, ``data`` the entries (folded keys as little-endian int32, then
document ids as int64; lookup entries first, key entries after) and ``checksum`` the
``xxh3-64`` of the id and the data. Every reader keeps the rows it decoded (:class:`Tail`)
and, at each read, asks for the number of rows and the smallest id only, then reads the new
rows (rows never change, come with growing ids, and the whole tail goes at once); a cached
writer (``Store.open(cache=True)``) asks only after another connection committed.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from neardup.store._rows import id_checksum

__all__ = [
    "TAIL_DOCS",
    "TAIL_MAX",
    "TAIL_SECONDS",
    "Tail",
    "TailRow",
    "decode_row",
    "encode_row",
    "insert_row",
]

TAIL_DOCS = 512
"""Documents in the tail from which a writer's idle moment (:meth:`neardup.store.Store.
merge_step`) turns it into segments."""
TAIL_MAX = 2 * TAIL_DOCS
"""Documents the tail holds at most: a buffered write that would pass it writes the tail and
itself as segments (a writer that has no idle moment)."""
TAIL_SECONDS = 1.0
"""Seconds after which a writer's idle moment turns the tail into segments, however small."""

I64 = npt.NDArray[np.int64]
_INSERT = "INSERT INTO tail (id, docs, lookups, keys, data, checksum) VALUES (?, ?, ?, ?, ?, ?)"


@dataclass(frozen=True, slots=True)
class TailRow:
    """A decoded ``tail`` row: its lookup and key entries (folded keys signed, as
    :func:`neardup.store._lookup.fold` gives them)."""

    id: int
    docs: int
    lookup_keys: I64
    lookup_docs: I64
    key_keys: I64
    key_docs: I64


def encode_row(
    row_id: int, docs: int, lookup_keys: I64, lookup_docs: I64, key_keys: I64, key_docs: I64
) -> tuple[int, int, int, int, bytes, int]:
    """The ``tail`` row of a write's entries.

    Examples:
        >>> z = np.zeros(0, np.int64)
        >>> encode_row(32, 1, np.array([-5]), np.array([32]), z, z)[:4]
        (32, 1, 1, 0)
    """
    data = b"".join(
        (
            lookup_keys.astype("<i4").tobytes(),
            lookup_docs.astype("<i8").tobytes(),
            key_keys.astype("<i4").tobytes(),
            key_docs.astype("<i8").tobytes(),
        )
    )
    return row_id, docs, lookup_keys.size, key_keys.size, data, id_checksum(row_id, data)


def decode_row(
    row_id: object, docs: object, lookups: object, keys: object, data: object, check: object
) -> TailRow:
    """A checked ``tail`` row.

    Raises:
        ValueError: wrong types, a checksum or length that does not match.

    Examples:
        >>> z = np.zeros(0, np.int64)
        >>> r = decode_row(*encode_row(32, 1, np.array([-5]), np.array([32]), z, z))
        >>> r.lookup_keys.tolist(), r.lookup_docs.tolist(), r.key_keys.size
        ([-5], [32], 0)
    """
    if not (
        isinstance(row_id, int)
        and isinstance(docs, int)
        and isinstance(lookups, int)
        and isinstance(keys, int)
        and isinstance(check, int)
        and isinstance(data, bytes)
    ):
        raise ValueError(f"tail row {row_id!r} has the wrong SQLite types")
    if id_checksum(row_id, data) != check:
        raise ValueError(f"tail row {row_id} fails its checksum (changed, or moved)")
    if lookups < 0 or keys < 0 or len(data) != 12 * (lookups + keys):
        raise ValueError(f"tail row {row_id} holds {len(data)} bytes, not its entry counts'")
    at = 0
    out: list[I64] = []
    for count, width, dtype in ((lookups, 4, "<i4"), (lookups, 8, "<i8"), (keys, 4, "<i4")):
        out.append(np.frombuffer(data, dtype, count, at).astype(np.int64))
        at += count * width
    out.append(np.frombuffer(data, "<i8", keys, at).astype(np.int64))
    return TailRow(row_id, docs, *out)


def _merged(keys: I64, docs: I64, new_keys: I64, new_docs: I64) -> tuple[I64, I64]:
    """Sorted ``keys`` (with their ``docs``) and the new entries, sorted by key."""
    if not new_keys.size:
        return keys, docs
    order = np.argsort(new_keys, kind="stable")
    nk = new_keys[order]
    pos = np.searchsorted(keys, nk, side="right") + np.arange(nk.size)
    old = np.ones(keys.size + nk.size, np.bool_)
    old[pos] = False
    out_k = np.empty(old.size, np.int64)
    out_d = np.empty(old.size, np.int64)
    out_k[pos], out_d[pos] = nk, new_docs[order]
    out_k[old], out_d[old] = keys, docs
    return out_k, out_d


@dataclass(slots=True)
class Tail:
    """The ``tail`` rows one connection decoded, and their entries sorted by key."""

    rows: dict[int, TailRow] = field(default_factory=dict)
    docs: int = 0
    since: float | None = None  # time.monotonic() of the oldest row this connection saw
    _lo: int = -1  # the smallest and largest row id held
    _hi: int = -1
    _keys: list[I64] = field(default_factory=lambda: [np.zeros(0, np.int64)] * 4)

    def clear(self) -> None:
        """Forget every row (the tail was turned into segments, or a write rolled back)."""
        self.rows.clear()
        self.docs = 0
        self.since = None
        self._lo = self._hi = -1
        self._keys = [np.zeros(0, np.int64)] * 4

    def hold(self, row: TailRow, now: float) -> None:
        """Hold a row (read, or just written by this connection and committed)."""
        if row.id in self.rows:
            return
        self.rows[row.id] = row
        self.docs += row.docs
        self._lo = row.id if self._lo < 0 else min(self._lo, row.id)
        self._hi = max(self._hi, row.id)
        if self.since is None:
            self.since = now
        k = self._keys
        k[0], k[1] = _merged(k[0], k[1], row.lookup_keys, row.lookup_docs)
        k[2], k[3] = _merged(k[2], k[3], row.key_keys, row.key_docs)

    def sync(self, conn: sqlite3.Connection, now: float) -> None:
        """Follow the ``tail`` table of the caller's transaction: forget it all when a row
        held is gone, read the rows not held yet.

        Raises:
            ValueError: a row is damaged.
        """
        # rows come with growing ids and go all at once: the count and the id range tell
        count, lo = conn.execute("SELECT count(*), coalesce(min(id), -1) FROM tail").fetchone()
        held = len(self.rows)
        if held and (count < held or lo != self._lo):
            self.clear()
            held = 0
        if count == held:
            return
        rows = conn.execute(
            "SELECT id, docs, lookups, keys, data, checksum FROM tail WHERE id > ? ORDER BY id",
            (self._hi,),
        ).fetchall()
        for row in rows:
            self.hold(decode_row(*row), now)

    def entries(self, keys_role: bool = False) -> tuple[I64, I64]:
        """Every held lookup entry (or key entry), sorted by key: ``(keys, docs)``."""
        k = self._keys
        return (k[2], k[3]) if keys_role else (k[0], k[1])

    def search(self, keys: I64, keys_role: bool = False) -> tuple[I64, I64]:
        """The held entries whose key is one of ``keys``: ``(keys, docs)``.

        Examples:
            >>> t = Tail()
            >>> z = np.zeros(0, np.int64)
            >>> t.hold(TailRow(32, 2, np.array([5, -3, 5]), np.array([32, 32, 33]), z, z), 0.0)
            >>> [a.tolist() for a in t.search(np.array([5, 9]))]
            [[5, 5], [32, 33]]
        """
        k, d = self.entries(keys_role)
        if not k.size or not keys.size:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        q = np.unique(keys)
        lo = np.searchsorted(k, q, side="left")
        hi = np.searchsorted(k, q, side="right")
        counts = hi - lo
        total = int(counts.sum())
        if not total:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        at = np.repeat(lo - np.cumsum(counts) + counts, counts) + np.arange(total)
        return k[at], d[at]


def insert_row(conn: sqlite3.Connection, row: tuple[int, int, int, int, bytes, int]) -> None:
    """Write one ``tail`` row."""
    conn.execute(_INSERT, row)
