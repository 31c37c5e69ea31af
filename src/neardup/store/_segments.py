"""Lookup keys kept as bit-packed blocks in immutable segments (private; schema version 3 on).

One SQLite row per ``(key, document)`` costs ~13 bytes (4-byte key, document id, record and
cell headers), 16 of them per MinHash document. Instead every write batch becomes one
**segment**: its ``(folded key, document)`` entries sorted, split into **buckets** by the
key's top bits (about :data:`BUCKET_ENTRIES` entries each, sized from the segment's entry
count), and each bucket stored as one ``blocks`` row ``(seg << 32 | bucket, data,
checksum)``. An entry keeps only what the row id does not already say: the key's low
``shift`` bits and the document's offset from the segment's first document, packed into
``ceil((shift + doc_bits) / 8)`` little-endian bytes (5 for a 100k-document batch).

A query probes, in each segment whose key range covers a key, the one bucket that key falls
in (a primary-key lookup), decodes the bucket and keeps the entries with exactly that key.
Segments merge (tiered, :data:`FANOUT` of a size class into one, up to :data:`MERGE_CAP`
entries) so that their number stays logarithmic; merging and :meth:`Store.compact` drop the
entries of replaced and removed documents. Everything happens inside the caller's SQLite
transaction, so a crash leaves the segments as the last commit wrote them.
"""

from __future__ import annotations

import functools
import math
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import numpy.typing as npt

from neardup._kernels.engine import kernels
from neardup.store._cache import ReadCache
from neardup.store._chunks import SLOTS
from neardup.store._rows import id_checksum, insert_rows, json_list

__all__ = [
    "BUCKET_ENTRIES",
    "FANOUT",
    "KEYS",
    "LOOKUP",
    "MERGE_CAP",
    "Alive",
    "PreparedMerge",
    "Segment",
    "apply_merge",
    "block_checksum",
    "decode_segment",
    "encode_segment",
    "lookup",
    "merge_step",
    "prepare_merge",
    "read_segments",
    "stored_docs",
    "write_band_segment",
    "write_segment",
]

BUCKET_ENTRIES = 64
"""The mean number of entries a bucket is sized for."""
FANOUT = 4
"""Segments of one size class that merge into one."""
DEFER_LIMIT = 2 * FANOUT
"""Segments a size class may hold when writes defer their merges (bounds the lookups)."""
MERGE_CAP = 1 << 23
"""Segments are not merged into one of more entries than this (bounds a merge's memory)."""
_LEVEL_BASE = 1024  # entries of the smallest size class
LOOKUP = 0
"""The role of a segment of the callers' lookup keys."""
KEYS = 1
"""The role of a segment of document-key entries (schema 4: finds a document by its key)."""

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
_MASK32 = np.uint64(0xFFFFFFFF)


@functools.lru_cache(maxsize=4096)
def _level(entries: int) -> int:
    """:attr:`Segment.level` of a segment of ``entries`` (held: a writer's merge checks ask
    for the level of every segment at each group commit)."""
    return max(0, int(math.log(max(1, entries) / _LEVEL_BASE, FANOUT)))


@dataclass(frozen=True, slots=True)
class Segment:
    """A row of the ``segs`` table: how its blocks are packed."""

    seg: int
    shift: int  # key bits kept per entry; the bucket is ``key >> shift``
    doc_lo: int  # entries store ``doc - doc_lo``
    doc_bits: int
    entries: int
    kmin: int  # smallest and largest key (unsigned 32-bit) in the segment
    kmax: int
    role: int = LOOKUP  # LOOKUP: the callers' keys; KEYS: the documents' key entries

    @property
    def width(self) -> int:
        """Bytes per packed entry."""
        return (self.shift + self.doc_bits + 7) // 8

    @property
    def level(self) -> int:
        """The size class: entries ``< 1024 * FANOUT**(level + 1)``."""
        return _level(self.entries)

    def valid(self) -> bool:
        """Whether the fields are in range (a damaged row is refused, never decoded)."""
        return (
            self.seg >= 1
            and 0 <= self.shift <= 32
            and 1 <= self.doc_bits <= 32
            and self.doc_lo >= 0
            and self.entries >= 0
            and 0 <= self.kmin <= self.kmax < (1 << 32)
            and self.role in (LOOKUP, KEYS)
        )


block_checksum = id_checksum
"""xxh3-64 of the row id (8 bytes, little-endian) and its data, as a signed integer."""


def block_checksums(ids: Sequence[int], datas: Sequence[bytes]) -> I64:
    """:data:`block_checksum` of every ``(id, data)``, in one XXH3 kernel call over the ids
    and data laid end to end.

    Examples:
        >>> block_checksums([1, 2], [b"x", b"yz"]).tolist() == [
        ...     block_checksum(1, b"x"), block_checksum(2, b"yz")]
        True
    """
    nb = len(ids)
    if not nb:
        return np.zeros(0, dtype=np.int64)
    heads = np.array(ids, dtype="<i8").tobytes()
    parts: list[bytes] = [b""] * (2 * nb)
    parts[0::2] = [heads[i : i + 8] for i in range(0, 8 * nb, 8)]
    parts[1::2] = datas
    buf = np.frombuffer(b"".join(parts), dtype=np.uint8)
    lens = np.fromiter(map(len, datas), dtype=np.int64, count=nb) + 8
    ends = np.cumsum(lens)
    digests = kernels("xxh3").xxh3_64_ranges(buf, ends - lens, ends, np.uint64(0))
    return np.asarray(digests, dtype=np.uint64).view(np.int64)


def _checked(rows: Sequence[tuple[object, object, object]]) -> tuple[list[int], list[bytes]]:
    """The ids and data of block rows whose types and checksums are right.

    Raises:
        ValueError: a row has the wrong SQLite types or fails its checksum.
    """
    if not rows:
        return [], []
    ids, datas, checks = (list(col) for col in zip(*rows, strict=True))
    if not (
        set(map(type, ids)) == {int}
        and set(map(type, datas)) == {bytes}
        and set(map(type, checks)) == {int}
    ):
        raise ValueError("a lookup block has the wrong SQLite types")
    bad = np.flatnonzero(block_checksums(ids, datas) != np.array(checks, dtype=np.int64))
    if bad.size:
        raise ValueError(f"lookup block {ids[int(bad[0])]} fails its checksum (flipped bytes)")
    return ids, datas


def _unsigned(keys: I64) -> U64:
    return keys.astype(np.int64, copy=False).view(np.uint64) & _MASK32


def encode_segment(
    seg: int, keys: I64, docs: I64, role: int = 0
) -> tuple[Segment, list[tuple[int, bytearray, int]]] | None:
    """Pack ``(folded key, document)`` entries into a segment's rows; None when empty.

    Duplicate entries are dropped. Returns the segment's ``segs`` fields and its ``blocks``
    rows ``(id, data, checksum)``: the sort, the packing and the checksums are one kernel
    call (``segments.encode_segment``); only the rows are made here, one per block.

    Examples:
        >>> s, rows = encode_segment(1, np.array([5, -1, 5]), np.array([3, 4, 3]))
        >>> s.entries, len(rows), [d.tolist() for d in decode_segment(s, rows)]
        (2, 1, [[5, 4294967295], [3, 4]])
    """
    if not keys.size:
        return None
    dv = np.ascontiguousarray(docs, dtype=np.int64)
    doc_lo = int(dv.min())
    doc_bits = max(1, int(dv.max()) - doc_lo).bit_length()
    if doc_bits > 32:
        raise ValueError("a lookup segment spans more than 2**32 document ids")
    kv = np.ascontiguousarray(keys, dtype=np.int64)
    shift, kmin, kmax, n, raw, ids, ends, checks = kernels("segments").encode_segment(
        kv, dv, doc_lo, doc_bits, seg, BUCKET_ENTRIES
    )
    segment = Segment(seg, shift, doc_lo, doc_bits, n, kmin, kmax, role)
    return segment, _block_rows(raw, ids, ends, checks)


def _block_rows(
    raw: npt.NDArray[np.uint8], ids: I64, ends: I64, checks: I64
) -> list[tuple[int, bytearray, int]]:
    """The ``blocks`` rows of a packed segment (the kernel's arrays)."""
    return list(_iter_block_rows(raw, ids, ends, checks))


def _iter_block_rows(
    raw: npt.NDArray[np.uint8], ids: I64, ends: I64, checks: I64
) -> Iterator[tuple[int, bytearray, int]]:
    """:func:`_block_rows` one at a time, as ``executemany`` takes them (a write that
    keeps no copy of the entries holds one row, not a second copy of the segment)."""
    data = raw.data  # (a memoryview of the kernel's bytes)
    bounds = ends.tolist()
    # bytearray, not bytes: sqlite3 binds it as it is, where a bytes parameter is first
    # offered to the adapters (two failed attribute lookups, ~3k instructions a row)
    for row_id, lo, hi, check in zip(
        ids.tolist(), [0, *bounds[:-1]], bounds, checks.tolist(), strict=True
    ):
        yield row_id, bytearray(data[lo:hi]), check


def decode_blocks(
    segment: Segment, ids: list[int], datas: Sequence[bytes | bytearray]
) -> tuple[U64, I64]:
    """Unpack blocks of one segment to (unsigned key, document) arrays.

    Raises:
        ValueError: a block's length is not a whole number of entries.
    """
    width = segment.width
    sizes = np.fromiter((len(d) for d in datas), dtype=np.int64, count=len(datas))
    if bool((sizes % width).any()) or bool((sizes == 0).any()):
        raise ValueError("a lookup block is not a whole number of entries")
    counts = sizes // width
    total = int(counts.sum())
    raw = np.frombuffer(b"".join(datas), dtype=np.uint8).reshape(total, width)
    full = np.zeros((total, 8), dtype=np.uint8)
    full[:, :width] = raw
    packed = full.view("<u8").reshape(total)
    bucket = np.repeat(np.array(ids, dtype=np.int64) & 0xFFFFFFFF, counts).astype(np.uint64)
    shift = np.uint64(segment.shift)
    low = packed >> np.uint64(segment.doc_bits)
    if segment.shift < 32:
        low &= np.uint64((1 << segment.shift) - 1)
    keys = ((bucket << shift) | low) & _MASK32
    docs = (packed & np.uint64((1 << segment.doc_bits) - 1)).astype(np.int64) + segment.doc_lo
    return keys, docs


def decode_segment(segment: Segment, rows: list[tuple[int, bytearray, int]]) -> tuple[U64, I64]:
    """Unpack a segment's rows (as :func:`encode_segment` gives them)."""
    return decode_blocks(segment, [r[0] for r in rows], [r[1] for r in rows])


def read_segments(conn: sqlite3.Connection) -> list[Segment]:
    """Every segment, oldest first (raises ValueError on a damaged row)."""
    out = []
    rows = conn.execute(
        "SELECT seg, shift, doc_lo, doc_bits, entries, kmin, kmax, role FROM segs ORDER BY seg"
    ).fetchall()
    if rows and set(map(type, chain.from_iterable(rows))) != {int}:
        raise ValueError("a segment row holds a value that is not an integer")
    for row in rows:
        segment = Segment(*row)
        if not segment.valid():
            raise ValueError(f"segment {segment.seg} has out-of-range fields")
        out.append(segment)
    return out


def write_segment(
    conn: sqlite3.Connection,
    keys: I64,
    docs: I64,
    role: int = LOOKUP,
    cache: ReadCache | None = None,
    *,
    defer_merges: bool = False,
) -> None:
    """Write entries as a new segment, then merge size classes that filled up (``cache``:
    holds the segments written, forgets the ones merged). ``defer_merges``: merge only a
    size class that holds :data:`DEFER_LIMIT` segments, and leave the others to
    :func:`merge_step` (a writer that has idle moments)."""
    encoded = encode_segment(_next_seg(conn, cache), keys, docs, role)
    _insert(conn, encoded, cache)
    _merge_full_levels(conn, cache, DEFER_LIMIT if defer_merges else FANOUT)


def write_band_segment(
    conn: sqlite3.Connection,
    values: I64,
    doc_base: int,
    role: int = LOOKUP,
    cache: ReadCache | None = None,
    *,
    defer_merges: bool = False,
) -> None:
    """:func:`write_segment` of the lookup entries of documents ``doc_base ..`` with one row
    of band values each (an ``(n, bands)`` array): the fold, the documents' numbers, the sort
    and the packing in one kernel call, no folded or document array made (the same rows as
    ``write_segment(conn, fold(...), repeat(...))``)."""
    n, bands = values.shape
    if not n * bands:
        return
    seg = _next_seg(conn, cache)
    doc_bits = max(1, n - 1).bit_length()
    if doc_bits > 32:
        raise ValueError("a lookup segment spans more than 2**32 document ids")
    shift, kmin, kmax, entries, raw, ids, ends, checks = kernels("segments").encode_band_segment(
        np.ascontiguousarray(values, dtype=np.int64),
        doc_base,
        doc_base,
        doc_bits,
        seg,
        BUCKET_ENTRIES,
    )
    segment = Segment(seg, shift, doc_base, doc_bits, entries, kmin, kmax, role)
    rows: Iterable[tuple[int, bytearray, int]]
    if cache is not None and cache.fits(entries):  # held: decoded from the rows
        rows = _block_rows(raw, ids, ends, checks)
    else:
        rows = _iter_block_rows(raw, ids, ends, checks)
    _insert(conn, (segment, rows), cache)
    _merge_full_levels(conn, cache, DEFER_LIMIT if defer_merges else FANOUT)


def _next_seg(conn: sqlite3.Connection, cache: ReadCache | None) -> int:
    held = None if cache is None else cache.segs
    if held is not None:  # the writer's list of the segs table (kept up to date)
        return max((s.seg for s in held), default=0) + 1
    row = conn.execute("SELECT max(seg) FROM segs").fetchone()
    return 1 if row[0] is None else int(row[0]) + 1


def _seg_id(s: Segment) -> int:
    return s.seg


def _insert(
    conn: sqlite3.Connection,
    encoded: tuple[Segment, Iterable[tuple[int, bytearray, int]]] | None,
    cache: ReadCache | None = None,
    decoded: tuple[U64, I64] | None = None,
) -> None:
    if encoded is None:
        return
    s, rows = encoded
    if cache is not None:
        cache.forget_segments([s.seg])
        if cache.segs is not None:  # the held segs rows follow the table (ordered by seg)
            cache.segs = sorted([x for x in cache.segs if x.seg != s.seg] + [s], key=_seg_id)
        if cache.fits(s.entries):  # its entries, sorted by key, without reading them back
            if decoded is None:
                rows = rows if isinstance(rows, list) else list(rows)
                decoded = decode_segment(s, rows)
            cache.hold_segment(s.seg, s, *decoded)
    conn.execute(
        "INSERT INTO segs (seg, shift, doc_lo, doc_bits, entries, kmin, kmax, role) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (s.seg, s.shift, s.doc_lo, s.doc_bits, s.entries, s.kmin, s.kmax, s.role),
    )
    insert_rows(conn, "INSERT OR FAIL INTO blocks (id, data, checksum) VALUES ", rows)


def _segment_entries(conn: sqlite3.Connection, s: Segment) -> tuple[U64, I64]:
    rows = conn.execute(
        "SELECT id, data, checksum FROM blocks WHERE id BETWEEN ? AND ? ORDER BY id",
        (s.seg << 32, (s.seg << 32) | 0xFFFFFFFF),
    ).fetchall()
    return decode_blocks(s, *_checked(rows))


Alive = Callable[[sqlite3.Connection, I64], npt.NDArray[np.bool_]]
"""Which of some document ids are stored (a mask); merges drop the entries of the others."""


def stored_docs(conn: sqlite3.Connection, docs: I64) -> npt.NDArray[np.bool_]:
    """The documents that are stored: their chunk exists and they are not in ``gone``.

    (A chunk's empty slots have no entries: compaction drops a removed document's entries
    before it empties its slot.)"""
    if not docs.size:
        return np.zeros(0, dtype=np.bool_)
    lo, hi = int(docs.min()), int(docs.max())
    chunks = np.array(
        [
            r
            for (r,) in conn.execute(
                "SELECT id FROM chunks WHERE id BETWEEN ? AND ?", (lo // SLOTS, hi // SLOTS)
            )
        ],
        dtype=np.int64,
    )
    gone = np.array(
        [r for (r,) in conn.execute("SELECT doc FROM gone WHERE doc BETWEEN ? AND ?", (lo, hi))],
        dtype=np.int64,
    )
    alive = np.isin(docs // SLOTS, chunks)
    if gone.size:
        alive &= ~np.isin(docs, gone)
    return alive


def merge(
    conn: sqlite3.Connection,
    group: list[Segment],
    alive: Alive | None = None,
    cache: ReadCache | None = None,
) -> int:
    """Replace ``group`` by one segment without the entries of deleted documents (``alive``:
    :func:`stored_docs` unless given); return how many entries were dropped. ``cache``:
    where the group's entries may be held; it forgets them and holds the new segment."""
    keys, docs, dropped = _merged(conn, group, alive, cache)
    encoded = encode_segment(group[-1].seg, keys, docs, group[-1].role)
    _replace(conn, group, encoded, cache)
    return dropped


def _merged(
    conn: sqlite3.Connection,
    group: Sequence[Segment],
    alive: Alive | None = None,
    cache: ReadCache | None = None,
) -> tuple[I64, I64, int]:
    """The entries of ``group`` that :func:`merge` keeps, and how many it drops."""
    parts = [
        (None if cache is None else cache.segment(s.seg, s)) or _segment_entries(conn, s)
        for s in group
    ]
    keys = np.concatenate([p[0] for p in parts]).view(np.int64)
    docs = np.concatenate([p[1] for p in parts])
    keep = (alive or stored_docs)(conn, docs)
    if keep.all():  # no copies when nothing is dropped
        return keys, docs, 0
    return keys[keep], docs[keep], int(docs.size - np.count_nonzero(keep))


def _replace(
    conn: sqlite3.Connection,
    group: Sequence[Segment],
    encoded: tuple[Segment, Iterable[tuple[int, bytearray, int]]] | None,
    cache: ReadCache | None = None,
    decoded: tuple[U64, I64] | None = None,
) -> None:
    """Delete the segments of ``group`` and insert ``encoded`` (their merge)."""
    if cache is not None:
        cache.forget_segments([s.seg for s in group])
        if cache.segs is not None:
            gone = {s.seg for s in group}
            cache.segs = [x for x in cache.segs if x.seg not in gone]
    for s in group:
        conn.execute("DELETE FROM segs WHERE seg = ?", (s.seg,))
        conn.execute(
            "DELETE FROM blocks WHERE id BETWEEN ? AND ?",
            (s.seg << 32, (s.seg << 32) | 0xFFFFFFFF),
        )
    _insert(conn, encoded, cache, decoded)


@dataclass(frozen=True, slots=True)
class PreparedMerge:
    """A merge computed on one connection's snapshot (:func:`prepare_merge`), for the
    writer to apply in a short transaction (:func:`apply_merge`)."""

    group: tuple[Segment, ...]
    encoded: tuple[Segment, list[tuple[int, bytearray, int]]] | None
    decoded: tuple[U64, I64] | None  # the new segment's entries, as a cache holds them


def prepare_merge(conn: sqlite3.Connection) -> PreparedMerge | None:
    """The next merge :func:`merge_step` would run, computed (read, filtered, encoded) in
    the caller's read transaction but not written; None when there is none. Documents
    deleted after that snapshot keep their entries in it (stale, as any merged earlier:
    lookups skip them, compaction drops them)."""
    group = _full_level(read_segments(conn))
    if group is None:
        return None
    keys, docs, _ = _merged(conn, group)
    encoded = encode_segment(group[-1].seg, keys, docs, group[-1].role)
    decoded = None if encoded is None else decode_segment(*encoded)
    return PreparedMerge(tuple(group), encoded, decoded)


def apply_merge(
    conn: sqlite3.Connection, prepared: PreparedMerge, cache: ReadCache | None = None
) -> bool:
    """Write a :func:`prepare_merge` in the caller's write transaction if its segments are
    all still there as they were (another merge or a compaction may have replaced them
    since); whether it was written."""
    held = None if cache is None else cache.segs
    current = set(read_segments(conn) if held is None else held)
    if not all(s in current for s in prepared.group):
        return False
    _replace(conn, prepared.group, prepared.encoded, cache, prepared.decoded)
    return True


def _span_fits(group: list[Segment]) -> bool:
    """Whether one segment can hold the entries of ``group``: their document ids span less
    than 2**32 (an entry stores ``doc - doc_lo`` in at most 32 bits)."""
    lo = min(s.doc_lo for s in group)
    hi = max(s.doc_lo + (1 << s.doc_bits) - 1 for s in group)
    return hi - lo < (1 << 32)


def _mergeable(level: list[Segment], at_least: int = FANOUT) -> list[Segment] | None:
    """The segments of a full size class (``at_least`` of them) to merge: all of them, or,
    when their document ids span too far for one segment, the first :data:`FANOUT`
    neighbours by id that fit."""
    if len(level) < at_least or sum(s.entries for s in level) > MERGE_CAP:
        return None
    if _span_fits(level):
        return level
    ordered = sorted(level, key=lambda s: s.doc_lo)
    windows = (ordered[i : i + FANOUT] for i in range(len(ordered) - FANOUT + 1))
    return next((w for w in windows if _span_fits(w)), None)


def _full_level(segments: Sequence[Segment], at_least: int = FANOUT) -> list[Segment] | None:
    """The first size class (by role, then level) that :func:`_mergeable` would merge."""
    by_level: dict[tuple[int, int], list[Segment]] = {}
    for s in segments:
        by_level.setdefault((s.role, s.level), []).append(s)
    return next(
        (g for g in (_mergeable(level, at_least) for _, level in sorted(by_level.items())) if g),
        None,
    )


def mergeable(segments: Sequence[Segment]) -> bool:
    """Whether :func:`merge_step` has a merge to run among these segments (the ``segs``
    rows, e.g. as a writer's cache holds them)."""
    return _full_level(segments) is not None


def _merge_full_levels(
    conn: sqlite3.Connection,
    cache: ReadCache | None,
    at_least: int = FANOUT,
    steps: int | None = None,
) -> int:
    """Merge size classes holding ``at_least`` segments (``steps``: at most that many
    merges); return how many merges ran."""
    done = 0
    while steps is None or done < steps:
        held = None if cache is None else cache.segs
        segments = read_segments(conn) if held is None else list(held)
        group = _full_level(segments, at_least)
        if group is None:
            break
        merge(conn, group, cache=cache)
        done += 1
    return done


def merge_step(conn: sqlite3.Connection, cache: ReadCache | None = None) -> bool:
    """Run one merge of a full size class, if there is one (the merges that writes with
    ``defer_merges`` left for later); return whether one ran."""
    return _merge_full_levels(conn, cache, steps=1) > 0


def compact_all(conn: sqlite3.Connection, alive: Alive = stored_docs) -> int:
    """Rewrite every segment without the entries of deleted documents (merging neighbours of
    one role up to :data:`MERGE_CAP` entries); return how many :data:`LOOKUP` entries were
    dropped."""
    dropped = 0
    segments = read_segments(conn)
    for role in (LOOKUP, KEYS):
        group: list[Segment] = []
        total = 0
        for s in (s for s in segments if s.role == role):
            if group and (total + s.entries > MERGE_CAP or not _span_fits([*group, s])):
                n = merge(conn, group, alive)
                dropped += n if role == LOOKUP else 0
                group, total = [], 0
            group.append(s)
            total += s.entries
        if group:
            n = merge(conn, group, alive)
            dropped += n if role == LOOKUP else 0
    return dropped


def _held(conn: sqlite3.Connection, s: Segment, cache: ReadCache) -> tuple[U64, I64]:
    """Segment ``s``'s entries sorted by key, from ``cache`` or read whole (and held)."""
    held = cache.segment(s.seg, s)
    if held is not None:
        return held
    keys, docs = _segment_entries(conn, s)
    if keys.size > 1 and bool((keys[1:] < keys[:-1]).any()):  # blocks come in key order
        order = np.argsort(keys, kind="stable")
        keys, docs = keys[order], docs[order]
    cache.hold_segment(s.seg, s, keys, docs)
    return keys, docs


def lookup(
    conn: sqlite3.Connection,
    keys: I64,
    segments: list[Segment] | None = None,
    cache: ReadCache | None = None,
) -> tuple[I64, I64]:
    """Every stored ``(folded key, document)`` entry whose key is in ``keys`` (signed, as
    :func:`neardup.store._lookup.fold` gives them); keys come back signed. ``segments``:
    :func:`read_segments` of the same transaction, if the caller read them already;
    ``cache``: where segments small enough are held whole (searched without SQL).

    Raises:
        ValueError: a segment or block is damaged.
    """
    if segments is None:
        segments = [s for s in read_segments(conn) if s.role == LOOKUP]
    empty = np.zeros(0, dtype=np.int64)
    if not segments or not keys.size:
        return empty, empty
    uk = np.sort(_unsigned(keys))
    uk = uk[np.concatenate(([True], uk[1:] != uk[:-1]))]
    ids: list[int] = []
    found_k: list[U64] = []
    found_d: list[I64] = []
    for s in segments:
        inside = uk[(uk >= s.kmin) & (uk <= s.kmax)]
        if inside.size and cache is not None and cache.fits(s.entries):
            k, d = _held(conn, s, cache)
            if not k.size:
                continue
            lo = np.searchsorted(k, inside, side="left")
            # most keys are absent: the right bounds only for those found (half the search)
            hit = k[np.minimum(lo, k.size - 1)] == inside
            if not hit.any():
                continue
            inside, lo = inside[hit], lo[hit]
            counts = np.searchsorted(k, inside, side="right") - lo
            total = int(counts.sum())
            if total:
                at = np.repeat(lo - np.cumsum(counts) + counts, counts) + np.arange(total)
                found_k.append(k[at])
                found_d.append(d[at])
        elif inside.size:
            buckets = (inside >> np.uint64(s.shift)).astype(np.int64)  # sorted
            buckets = buckets[np.concatenate(([True], buckets[1:] != buckets[:-1]))]
            ids.extend(((s.seg << 32) | buckets).tolist())
    by_seg: dict[int, tuple[list[int], list[bytes]]] = {}
    if ids:
        rows = conn.execute(
            "SELECT id, data, checksum FROM blocks WHERE id IN (SELECT value FROM json_each(?))",
            (json_list(ids),),
        ).fetchall()
        for block_id, data in zip(*_checked(rows), strict=True):
            got = by_seg.setdefault(block_id >> 32, ([], []))
            got[0].append(block_id)
            got[1].append(data)
    seg_of = {s.seg: s for s in segments}
    for seg, (bids, datas) in by_seg.items():
        k, d = decode_blocks(seg_of[seg], bids, datas)  # seg is one of the ids asked for
        at = np.searchsorted(uk, k)
        at[at == uk.size] = 0
        hit = uk[at] == k
        found_k.append(k[hit])
        found_d.append(d[hit])
    if not found_k:
        return empty, empty
    ku = np.concatenate(found_k)
    signed = ku.astype(np.uint32).view(np.int32).astype(np.int64)
    return signed, np.concatenate(found_d)
