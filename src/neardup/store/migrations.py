"""Ordered, idempotent schema migrations of the SQLite store; the version lives in the database.

The schema version is SQLite's ``PRAGMA user_version`` (an integer in the file header, written
in the same transaction as the schema change it records). Migration ``i`` (1-based) brings a
database from version ``i - 1`` to version ``i``; :func:`migrate` applies the missing ones in
order, each one in the caller's transaction. Every migration is idempotent on its own
(``CREATE ... IF NOT EXISTS``), so re-running one on a database that already has it changes
nothing. A database whose version is higher than :data:`SCHEMA_VERSION` was written by a newer
neardup and is refused with :class:`~neardup.errors.SchemaVersionError`.

Changing the schema means appending a migration here, never editing a released one, and
keeping a fixture of the old version in ``tests/store/`` (see ``docs/store.md``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from neardup.errors import SchemaVersionError

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Migration", "migrate", "schema_version"]

Migration = Callable[[sqlite3.Connection], None]
"""One schema step: a function that issues idempotent DDL on a connection."""


def _v1_initial(conn: sqlite3.Connection) -> None:
    """Version 1: the meta, docs and keys tables and their indexes."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)"
    )
    conn.execute(
        "CREATE TABLE IF NOT EXISTS docs ("
        " rowid INTEGER PRIMARY KEY,"
        " key TEXT UNIQUE NOT NULL,"
        " sketch BLOB NOT NULL,"
        " added REAL NOT NULL,"
        " meta TEXT)"
    )
    # One row per (lookup band, value, document). The primary key is the (band, value)
    # lookup index, covering ``doc``; WITHOUT ROWID keeps it to one B-tree.
    conn.execute(
        "CREATE TABLE IF NOT EXISTS keys ("
        " band INTEGER NOT NULL,"
        " value INTEGER NOT NULL,"
        " doc INTEGER NOT NULL,"
        " PRIMARY KEY (band, value, doc)) WITHOUT ROWID"
    )
    # Removing or replacing a document deletes its lookup rows by document id.
    conn.execute("CREATE INDEX IF NOT EXISTS keys_doc ON keys (doc)")


def _v2_compact(conn: sqlite3.Connection) -> None:
    """Version 2: checksummed documents, 32-bit folded lookup keys, no per-document index.

    Version 1 kept the caller's ``(band, value)`` rows with an index by document; version 2
    folds each pair into one 32-bit key (``keys(k, doc)``), leaves the rows of replaced or
    removed documents behind until :meth:`~neardup.store.Store.compact` (document ids are
    never reused: ``AUTOINCREMENT``), and adds an xxh3 checksum to every document row. A
    version-1 store holds sketches in the old formats and no configuration to rebuild its
    method, so one with documents is refused (rebuild it); an empty one is converted.
    """
    conn.execute("DROP INDEX IF EXISTS keys_doc")  # version 1's; re-running step 1 recreates it
    columns = [row[1] for row in conn.execute("PRAGMA table_info(keys)").fetchall()]
    if "band" in columns:  # the version-1 layout
        if conn.execute("SELECT 1 FROM docs LIMIT 1").fetchone() is not None:
            raise SchemaVersionError(
                "the store has schema version 1 (neardup 0.1), which this neardup cannot "
                "upgrade in place: its sketches use the old formats and it does not record "
                "the method's configuration; rebuild it from the documents with "
                "`neardup index add --index NEW.db ...` (the old file was left unchanged)"
            )
        conn.execute("DROP TABLE keys")
        conn.execute("DROP TABLE docs")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS docs ("
        " rowid INTEGER PRIMARY KEY AUTOINCREMENT,"
        " key TEXT UNIQUE NOT NULL,"
        " sketch BLOB NOT NULL,"
        " checksum INTEGER NOT NULL,"
        " added INTEGER NOT NULL,"
        " meta TEXT)"
    )
    # One row per (folded lookup key, document); the primary key is the lookup index.
    conn.execute(
        "CREATE TABLE IF NOT EXISTS keys ("
        " k INTEGER NOT NULL,"
        " doc INTEGER NOT NULL,"
        " PRIMARY KEY (k, doc)) WITHOUT ROWID"
    )


def _v3_segments(conn: sqlite3.Connection) -> None:
    """Version 3: lookup keys in bit-packed segment blocks instead of one row per key.

    The ``keys`` rows of version 2 (~13 bytes each) become segments of ``blocks`` rows
    (:mod:`neardup.store._segments`, ~5 bytes an entry); the documents are unchanged. The
    rows are read in key order, a bounded number at a time, each chunk one segment.
    """
    from neardup.store._segments import MERGE_CAP, _insert, encode_segment

    conn.execute(
        "CREATE TABLE IF NOT EXISTS segs ("
        " seg INTEGER PRIMARY KEY,"
        " shift INTEGER NOT NULL,"
        " doc_lo INTEGER NOT NULL,"
        " doc_bits INTEGER NOT NULL,"
        " entries INTEGER NOT NULL,"
        " kmin INTEGER NOT NULL,"
        " kmax INTEGER NOT NULL)"
    )
    # id = seg << 32 | bucket; data = the bucket's packed entries
    conn.execute(
        "CREATE TABLE IF NOT EXISTS blocks ("
        " id INTEGER PRIMARY KEY,"
        " data BLOB NOT NULL,"
        " checksum INTEGER NOT NULL)"
    )
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "keys" not in tables:
        return
    if "role" not in [row[1] for row in conn.execute("PRAGMA table_info(segs)").fetchall()]:
        conn.execute("ALTER TABLE segs ADD COLUMN role INTEGER NOT NULL DEFAULT 0")  # v4's
    cursor = conn.execute("SELECT k, doc FROM keys ORDER BY k, doc")
    seg = 0
    while rows := cursor.fetchmany(MERGE_CAP):
        pairs = np.array(rows, dtype=np.int64)
        seg += 1
        _insert(conn, encode_segment(seg, pairs[:, 0], pairs[:, 1]))
    conn.execute("DROP TABLE keys")


def _v4_chunks(conn: sqlite3.Connection) -> None:
    """Version 4: documents packed 32 to a ``chunks`` row, found by key through the lookup
    segments; no per-document row.

    Version 3's ``docs`` table (one row and one key-index entry per document) becomes
    ``chunks`` rows (:mod:`neardup.store._chunks`; document ``d`` sits in chunk ``d // 32``,
    slot ``d % 32``, so the lookup entries keep their document ids), every document gets a
    key entry (:data:`neardup.store._lookup.KEY_BAND`) in a new segment of role 1 (a ``role``
    column in ``segs``; lookups read role 0, key searches role 1), removed and replaced
    documents are listed in ``gone`` until compaction, and the counters (last document id,
    documents, sketch bytes) move into ``meta``. The old lookup entries of documents no longer
    stored are dropped first (they would otherwise point into the new chunks' empty slots).
    """
    from neardup.store._chunks import SLOTS, encode_slots
    from neardup.store._lookup import key_folds
    from neardup.store._segments import KEYS, _insert, compact_all, encode_segment

    conn.execute(
        "CREATE TABLE IF NOT EXISTS chunks ("
        " id INTEGER PRIMARY KEY,"
        " n INTEGER NOT NULL,"
        " added INTEGER NOT NULL,"
        " data BLOB NOT NULL,"
        " checksum INTEGER NOT NULL)"
    )
    conn.execute("CREATE TABLE IF NOT EXISTS gone (doc INTEGER PRIMARY KEY)")
    if "role" not in [row[1] for row in conn.execute("PRAGMA table_info(segs)").fetchall()]:
        # 0: the callers' lookup keys; 1: the documents' key entries
        conn.execute("ALTER TABLE segs ADD COLUMN role INTEGER NOT NULL DEFAULT 0")
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "docs" not in tables:
        return

    def in_docs(c: sqlite3.Connection, docs: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        lo, hi = int(docs.min(initial=0)), int(docs.max(initial=0))
        rows = c.execute("SELECT rowid FROM docs WHERE rowid BETWEEN ? AND ?", (lo, hi))
        return np.isin(docs, np.array([r for (r,) in rows], dtype=np.int64))

    compact_all(conn, in_docs)
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'docs'").fetchone()
    last = 0 if row is None else int(row[0])
    count = size = 0
    cursor = conn.execute("SELECT rowid, key, sketch, added, meta FROM docs ORDER BY rowid")
    chunk, added = -1, 0
    slots: list[tuple[str, bytes, str | None] | None] = []
    keys: list[bytes] = []
    ids: list[int] = []
    rows = []
    holes = 0
    for rowid, key, sketch, when, meta in cursor.fetchall():
        if rowid // SLOTS != chunk:
            if slots:
                rows.append(encode_slots(chunk, slots, added))
            chunk, slots = rowid // SLOTS, []
        holes += rowid % SLOTS - len(slots)
        slots.extend([None] * (rowid % SLOTS - len(slots)))
        slots.append((key, sketch, meta))
        added = int(when)
        keys.append(key.encode("utf-8"))
        ids.append(rowid)
        count += 1
        size += len(sketch)
    if slots:
        rows.append(encode_slots(chunk, slots, added))
    conn.executemany(
        "INSERT INTO chunks (id, n, added, data, checksum) VALUES (?, ?, ?, ?, ?)", rows
    )
    if keys:
        seg = conn.execute("SELECT coalesce(max(seg), 0) + 1 FROM segs").fetchone()[0]
        ids_array = np.array(ids, dtype=np.int64)
        _insert(conn, encode_segment(int(seg), key_folds(keys), ids_array, role=KEYS))
    conn.executemany(
        "INSERT INTO meta (name, value) VALUES (?, ?) "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        [
            ("last_doc", str(last)),
            ("docs", str(count)),
            ("sketch_bytes", str(size)),
            ("stale", "0"),
            ("holes", str(holes)),
        ],
    )
    conn.execute("DROP TABLE docs")


def _v5_tail(conn: sqlite3.Connection) -> None:
    """Version 5: the ``tail`` table, where buffered small writes keep their lookup and key
    entries, one row a write, until enough of them become segments
    (:mod:`neardup.store._tail`). Nothing else changes; a version-4 store has no tail."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS tail ("
        " id INTEGER PRIMARY KEY,"
        " docs INTEGER NOT NULL,"
        " lookups INTEGER NOT NULL,"
        " keys INTEGER NOT NULL,"
        " data BLOB NOT NULL,"
        " checksum INTEGER NOT NULL)"
    )


MIGRATIONS: tuple[Migration, ...] = (
    _v1_initial,
    _v2_compact,
    _v3_segments,
    _v4_chunks,
    _v5_tail,
)
"""Every migration, in order; ``MIGRATIONS[i]`` upgrades version ``i`` to ``i + 1``."""

SCHEMA_VERSION: int = len(MIGRATIONS)
"""The schema version this neardup writes and reads."""


def schema_version(conn: sqlite3.Connection) -> int:
    """Return the schema version recorded in the database (0 for a new, empty one).

    Args:
        conn: An open connection.

    Returns:
        The value of ``PRAGMA user_version``.

    Examples:
        >>> import sqlite3
        >>> conn = sqlite3.connect(":memory:")
        >>> schema_version(conn)
        0
        >>> conn.close()
    """
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


def migrate(conn: sqlite3.Connection, *, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Apply the migrations the database lacks, in order, and record the new version.

    Call it inside a write transaction (``BEGIN IMMEDIATE``) so that the schema change and
    the version number commit together and two processes cannot migrate at once. Running it
    again is a no-op.

    Args:
        conn: An open connection, inside a write transaction.
        migrations: The ordered migrations; the default is :data:`MIGRATIONS`.

    Returns:
        The number of migrations applied.

    Raises:
        SchemaVersionError: The database's version is newer than ``len(migrations)``.

    Examples:
        >>> import sqlite3
        >>> conn = sqlite3.connect(":memory:", isolation_level=None)
        >>> _ = conn.execute("BEGIN IMMEDIATE")
        >>> migrate(conn), migrate(conn), schema_version(conn) == SCHEMA_VERSION
        (5, 0, True)
        >>> _ = conn.execute("COMMIT")
        >>> conn.close()
    """
    current = schema_version(conn)
    target = len(migrations)
    if current < 0:
        raise SchemaVersionError(
            f"the store has the impossible schema version {current}: the file header is "
            "damaged; restore the store from a backup or rebuild it"
        )
    if current > target:
        raise SchemaVersionError(
            f"the store has schema version {current} but this neardup reads up to version "
            f"{target}: it was written by a newer neardup; upgrade neardup "
            "(pip install -U neardup) to open it"
        )
    for version in range(current, target):
        migrations[version](conn)
        # PRAGMA takes no parameters; the value is an int we computed.
        conn.execute(f"PRAGMA user_version = {version + 1:d}")
    return target - current
