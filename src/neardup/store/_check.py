"""Consistency of a store (private): the layout its schema version promises, the cheap test
every open runs, and the full check behind ``neardup index check``.

The blob checksums catch flipped bytes inside a row; they cannot see a row that is missing,
moved or added, a counter edited by hand, or a damaged B-tree page that hides rows. The
counters in ``meta`` must agree with the rows:

* every chunk slot is a stored document, a document in ``gone`` (replaced or removed, not
  compacted yet) or a hole (emptied by compaction), so ``docs + |gone| + holes`` equals the
  chunks' slot count (``sum(n)``), and ``|gone|`` equals the ``stale`` counter;
* every stored document has one key entry, and only stored or gone documents have one;
* no chunk lies past the last document id given out.

:func:`quick_check` tests these from aggregates (the chunk rows' small leading columns, the
segment table; no blob is read) on every open; :func:`full_check` decodes every row.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import numpy as np

from neardup.errors import SchemaVersionError, StoreError
from neardup.store._chunks import SLOTS, chunk_checksum, decode_chunk
from neardup.store._lookup import key_folds
from neardup.store._rows import damaged
from neardup.store._segments import (
    KEYS,
    LOOKUP,
    Segment,
    block_checksum,
    decode_blocks,
    read_segments,
)
from neardup.store._tail import decode_row

__all__ = ["chunk_holes", "full_check", "layout_version", "quick_check"]

#: The most problems a check lists (the count is always given).
MAX_LISTED = 20


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def layout_version(conn: sqlite3.Connection) -> int | None:
    """The schema version the store's tables are the layout of (0: no table; None: a layout
    no version has)."""
    tables = _tables(conn) - {"sqlite_sequence"}
    if not tables:
        return 0
    if {"meta", "segs", "blocks", "chunks", "gone"} <= tables and "docs" not in tables:
        return 5 if "tail" in tables else 4
    if {"meta", "docs", "segs", "blocks"} <= tables:
        return 3
    if {"meta", "docs", "keys"} <= tables:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(keys)").fetchall()]
        return 1 if "band" in columns else 2
    return None


def check_layout(conn: sqlite3.Connection, path: str, version: int) -> None:
    """Refuse a store whose recorded schema version is not the one its tables have (a header
    changed by hand or damaged): migrating it would read it as an older, emptier store.

    Raises:
        SchemaVersionError: the versions differ (the file is left as it is).
    """
    found = layout_version(conn)
    if found == version:
        return
    what = f"the tables of version {found}" if found is not None else "tables of no known version"
    fix = (
        f"if the header alone was changed, set it back with `sqlite3 FILE 'PRAGMA "
        f"user_version = {found}'`; else restore the store from a backup"
        if found is not None
        else "restore the store from a backup or rebuild it"
    )
    raise SchemaVersionError(
        f"the store {path!r} records schema version {version} but holds {what}: its header "
        f"was changed or damaged, and neardup left the file as it is; {fix}"
    )


def _int(path: str, value: object, what: str) -> int:
    try:
        return int(str(value))
    except ValueError:
        raise damaged(path, f"its {what} {value!r} is not a number") from None


def aggregates(conn: sqlite3.Connection, path: str) -> dict[str, int]:
    """The cheap aggregates the counters are tested against (no blob is read)."""
    chunks, slots, last_chunk = conn.execute(
        "SELECT count(*), coalesce(sum(n), 0), coalesce(max(id), -1) FROM chunks"
    ).fetchone()
    gone, gone_lo, gone_hi = conn.execute(
        "SELECT count(*), coalesce(min(doc), 0), coalesce(max(doc), 0) FROM gone"
    ).fetchone()
    key_entries = conn.execute(
        f"SELECT coalesce(sum(entries), 0) FROM segs WHERE role = {KEYS:d}"
    ).fetchone()[0]
    tail_keys = (  # schema 5: the buffered writes' key entries count too
        conn.execute("SELECT coalesce(sum(keys), 0) FROM tail").fetchone()[0]
        if "tail" in _tables(conn)
        else 0
    )
    out = {
        "chunks": chunks,
        "slots": slots,
        "last_chunk": last_chunk,
        "gone": gone,
        "gone_lo": gone_lo,
        "gone_hi": gone_hi,
        "key_entries": key_entries,
    }
    totals = {name: _int(path, value, f"{name} total") for name, value in out.items()}
    totals["key_entries"] += _int(path, tail_keys, "tail key entries total")
    return totals


def counter_problems(counts: dict[str, int], holes: int | None, agg: dict[str, int]) -> list[str]:
    """What the counters claim that the aggregates do not support."""
    out: list[str] = []
    for name, value in [*counts.items(), ("holes", holes or 0)]:
        if value < 0:
            out.append(f"its {name} counter is negative ({value})")
    docs, gone = counts["docs"], agg["gone"]
    if gone != counts["stale"]:
        out.append(
            f"it lists {gone} replaced or removed documents, its stale counter {counts['stale']}"
        )
    if holes is not None and docs + gone + holes != agg["slots"]:
        out.append(
            f"its counters ({docs} documents, {gone} replaced, {holes} empty slots) do not add "
            f"up to the {agg['slots']} slots of its document rows (rows deleted, added or "
            "moved, or a counter changed)"
        )
    elif holes is None and not agg["chunks"] <= docs + gone <= agg["slots"]:
        out.append(
            f"its {docs} documents do not fit its {agg['chunks']} document rows of "
            f"{agg['slots']} slots (rows deleted or added, or a counter changed)"
        )
    if agg["last_chunk"] >= 0 and agg["last_chunk"] > counts["last_doc"] // SLOTS:
        out.append(
            f"a document row (chunk {agg['last_chunk']}) lies past the last document id "
            f"{counts['last_doc']}"
        )
    if gone and (agg["gone_lo"] < 0 or agg["gone_hi"] > counts["last_doc"]):
        out.append("a replaced document id lies outside the ids given out")
    if not docs <= agg["key_entries"] <= docs + gone:
        out.append(
            f"its {agg['key_entries']} key entries do not match its {docs} documents (lookup "
            "rows deleted or added)"
        )
    return out


def quick_check(
    conn: sqlite3.Connection, path: str, counts: dict[str, int], holes: int | None
) -> None:
    """The cheap consistency test of every open (see the module).

    Raises:
        StoreError: a counter the rows do not support.
    """
    problems = counter_problems(counts, holes, aggregates(conn, path))
    if problems:
        raise damaged(path, "; ".join(problems))


def chunk_holes(conn: sqlite3.Connection, path: str, read: Callable[..., Any]) -> int:
    """Empty slots over every chunk (``read(cid, n, data, check)`` decodes a checked row)."""
    holes = 0
    for cid, n, data, check in conn.execute("SELECT id, n, data, checksum FROM chunks"):
        chunk = read(cid, n, data, check)
        holes += sum(1 for i in range(chunk.n) if not chunk.filled(i))
    return holes


class _Problems:
    def __init__(self) -> None:
        self.items: list[str] = []
        self.count = 0

    def add(self, what: str) -> None:
        self.count += 1
        if len(self.items) < MAX_LISTED:
            self.items.append(what)


def full_check(
    conn: sqlite3.Connection, path: str, counts: dict[str, int] | None, holes: int | None
) -> dict[str, Any]:
    """Check every row of the store (see ``docs/store.md``, "Checking a store").

    Returns:
        ``ok``, ``problems`` (the first :data:`MAX_LISTED`), ``problem_count``, and what was
        found: ``docs``, ``chunks``, ``segments``, ``lookup_entries``, ``key_entries``.
    """
    p = _Problems()
    try:
        for (row,) in conn.execute("PRAGMA integrity_check(100)"):
            if row != "ok":
                p.add(f"SQLite: {row}")
    except sqlite3.DatabaseError as exc:
        p.add(f"SQLite cannot check the file: {exc}")
    found: dict[str, Any] = {"docs": 0, "chunks": 0, "segments": 0}
    if counts is None:
        p.add("its counters are not readable")
    try:
        _rows(conn, path, counts, holes, p, found)
    except (sqlite3.DatabaseError, StoreError, ValueError) as exc:
        p.add(f"reading stopped: {exc}")
    return {"ok": p.count == 0, "problem_count": p.count, "problems": p.items, **found}


def _rows(
    conn: sqlite3.Connection,
    path: str,
    counts: dict[str, int] | None,
    holes: int | None,
    p: _Problems,
    found: dict[str, Any],
) -> None:
    last = counts["last_doc"] if counts is not None else None
    gone = {int(d) for (d,) in conn.execute("SELECT doc FROM gone")}
    ids: list[int] = []  # the filled slots' document ids, and their keys
    keys: list[bytes] = []
    n_holes = sketch_bytes = chunks = 0
    for cid, n, data, check in conn.execute("SELECT id, n, data, checksum FROM chunks ORDER BY id"):
        chunks += 1
        if type(cid) is not int or type(n) is not int or type(data) is not bytes:
            p.add(f"document row {cid!r} has the wrong SQLite types")
            continue
        if type(check) is not int or chunk_checksum(cid, data) != check:
            p.add(f"document row {cid} fails its checksum (changed, or moved to another id)")
            continue
        try:
            chunk = decode_chunk(cid, n, data)
            slots = [i for i in range(chunk.n) if chunk.filled(i)]
            raw = [chunk.key(i).encode("utf-8") for i in slots]
        except ValueError as exc:
            p.add(str(exc))
            continue
        n_holes += chunk.n - len(slots)
        if last is not None and chunk.first + chunk.n - 1 > last:
            p.add(f"document row {cid} lies past the last document id {last}")
        for i in slots:
            if chunk.first + i not in gone:
                sketch_bytes += len(chunk.sketch(i))
        ids.extend(chunk.first + i for i in slots)
        keys.extend(raw)
    filled = np.array(ids, dtype=np.int64)
    is_gone = np.isin(filled, np.fromiter(gone, dtype=np.int64, count=len(gone)))
    missing_gone = len(gone) - int(is_gone.sum())
    if missing_gone:
        p.add(f"{missing_gone} replaced documents have no row")
    live = int(filled.size - is_gone.sum())
    found.update(docs=live, chunks=chunks)
    if counts is not None:
        if counts["docs"] != live:
            p.add(f"its document counter says {counts['docs']}, its rows hold {live}")
        if counts["sketch_bytes"] != sketch_bytes:
            p.add(
                f"its sketch byte counter says {counts['sketch_bytes']}, its rows hold "
                f"{sketch_bytes}"
            )
        if counts["stale"] != len(gone):
            p.add(f"its stale counter says {counts['stale']}, {len(gone)} documents are listed")
    if holes is not None and holes != n_holes:
        p.add(f"its empty-slot counter says {holes}, its rows hold {n_holes}")
    folds = key_folds(keys).astype(np.int64) & 0xFFFFFFFF if keys else np.zeros(0, np.int64)
    _segments(conn, last, _Docs(filled, folds, is_gone), p, found)


class _Docs:
    """The filled slots: a table by document id of whether each is filled, live, and the
    fold of its key."""

    def __init__(self, ids: Any, folds: Any, gone: Any) -> None:
        size = int(ids.max()) + 1 if ids.size else 0
        self.filled = np.zeros(size, np.bool_)
        self.filled[ids] = True
        self.live = self.filled.copy()
        self.live[ids[gone]] = False
        self.fold = np.full(size, -1, np.int64)
        self.fold[ids] = folds
        self.keyed = np.zeros(size, np.bool_)  # live documents whose key entry was seen

    def known(self, docs: Any) -> Any:
        """Which of ``docs`` are filled slots."""
        inside = (docs >= 0) & (docs < self.filled.size)
        out = np.zeros(docs.size, np.bool_)
        out[inside] = self.filled[docs[inside]]
        return out


def _segments(
    conn: sqlite3.Connection, last: int | None, d: _Docs, p: _Problems, found: dict[str, Any]
) -> None:
    try:
        segments = read_segments(conn)
    except ValueError as exc:
        p.add(str(exc))
        return
    found["segments"] = len(segments)
    entries = {LOOKUP: 0, KEYS: 0}
    for s in segments:
        rows = conn.execute(
            "SELECT id, data, checksum FROM blocks WHERE id BETWEEN ? AND ? ORDER BY id",
            (s.seg << 32, (s.seg << 32) | 0xFFFFFFFF),
        ).fetchall()
        good: list[tuple[int, bytes]] = []
        for block_id, data, check in rows:
            if type(data) is not bytes or type(check) is not int:
                p.add(f"lookup block {block_id} has the wrong SQLite types")
            elif block_checksum(block_id, data) != check:
                p.add(f"lookup block {block_id} fails its checksum (changed, or moved)")
            elif (block_id & 0xFFFFFFFF) >> (32 - s.shift):
                p.add(f"lookup block {block_id} lies outside its segment's buckets")
            else:
                good.append((block_id, data))
        try:
            keys, docs = (
                decode_blocks(s, [b for b, _ in good], [x for _, x in good])
                if good
                else (np.zeros(0, np.uint64), np.zeros(0, np.int64))
            )
        except ValueError as exc:
            p.add(f"segment {s.seg}: {exc}")
            continue
        entries[s.role] += int(keys.size)
        _segment_problems(s, keys, docs, last, d, p)
    if "tail" in _tables(conn):
        _tail(conn, last, d, p, entries)
    found["lookup_entries"] = entries[LOOKUP]
    found["key_entries"] = entries[KEYS]
    lost = int(np.count_nonzero(d.live & ~d.keyed))
    if lost:
        p.add(f"{lost} documents have no key entry: lookup rows lost")
    blocks = conn.execute("SELECT id >> 32 FROM blocks GROUP BY id >> 32").fetchall()
    orphans = {int(r[0]) for r in blocks} - {s.seg for s in segments}
    if orphans:
        p.add(f"lookup blocks of {len(orphans)} unknown segments (e.g. {min(orphans)})")


def _tail(
    conn: sqlite3.Connection, last: int | None, d: _Docs, p: _Problems, entries: dict[int, int]
) -> None:
    """The ``tail`` rows (``_tail.py``): checked as segments of their own."""
    for row in conn.execute("SELECT id, docs, lookups, keys, data, checksum FROM tail ORDER BY id"):
        try:
            t = decode_row(*row)
        except ValueError as exc:
            p.add(str(exc))
            continue
        for role, keys, docs in (
            (LOOKUP, t.lookup_keys, t.lookup_docs),
            (KEYS, t.key_keys, t.key_docs),
        ):
            entries[role] += int(keys.size)
            unsigned = keys & 0xFFFFFFFF
            s = Segment(
                seg=t.id,
                shift=32,
                doc_lo=0,
                doc_bits=32,
                entries=int(keys.size),
                kmin=int(unsigned.min(initial=0)),
                kmax=int(unsigned.max(initial=0)),
                role=role,
            )
            _segment_problems(s, unsigned.astype(np.uint64), docs, last, d, p, what="tail row")


def _segment_problems(
    s: Segment,
    keys: Any,
    docs: Any,
    last: int | None,
    d: _Docs,
    p: _Problems,
    what: str = "segment",
) -> None:
    if keys.size != s.entries:
        p.add(
            f"{what} {s.seg} should hold {s.entries} entries, its blocks hold {keys.size} "
            "(blocks deleted or added)"
        )
    if keys.size and (int(keys.min()) < s.kmin or int(keys.max()) > s.kmax):
        p.add(f"{what} {s.seg} holds keys outside its range")
    if docs.size and last is not None and int(docs.max()) > last:
        p.add(f"{what} {s.seg} points past the last document id {last}")
    known = d.known(docs)
    dangling = np.unique(docs[~known])
    if dangling.size:
        role = "key" if s.role == KEYS else "lookup"
        p.add(
            f"{what} {s.seg} has {role} entries of {dangling.size} documents that have no "
            f"row (e.g. id {int(dangling[0])}): document rows deleted or moved"
        )
    if s.role == KEYS:
        ok = known.copy()
        ok[known] = d.fold[docs[known]] == keys[known].astype(np.int64)
        d.keyed[docs[ok]] = True
