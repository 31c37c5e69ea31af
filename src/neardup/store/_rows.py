"""The typed read path of the store: every value read from SQLite is checked (private).

SQLite stores any type in any column, so a damaged or hand-edited file can hand back an int
where a blob belongs, or a blob whose bytes were flipped. Every read goes through these
checks, which raise :class:`~neardup.errors.StoreError` (never TypeError, MemoryError or a
silently wrong answer): types first, then the row's xxh3 checksum over its key and sketch.

The write path's bulk inserts go through :func:`insert_rows` (many rows a statement).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from itertools import islice

import xxhash

from neardup.errors import InputError, StoreError

__all__ = [
    "checksum",
    "checksum_of",
    "damaged",
    "doc_row",
    "id_checksum",
    "insert_rows",
    "integer",
    "json_list",
    "text_or_none",
]


def damaged(path: str, what: str) -> StoreError:
    """The error for a store whose contents fail a check."""
    return StoreError(
        f"the store {path!r} is damaged: {what}; run `sqlite3 FILE 'PRAGMA integrity_check'`, "
        "then restore the store from a backup or rebuild it (neardup index add)"
    )


def checksum(key: str, sketch: bytes) -> int:
    """xxh3-64 of the key's UTF-8, a NUL and the sketch, as a signed 64-bit integer.

    Examples:
        >>> checksum("a", b"x") == checksum("a", b"x") != checksum("b", b"x")
        True
    """
    return checksum_of(key.encode("utf-8"), sketch)


def checksum_of(key: bytes, sketch: bytes) -> int:
    """:func:`checksum` of an already encoded key."""
    digest = xxhash.xxh3_64_intdigest(key + b"\x00" + sketch)
    return digest - (1 << 64) if digest >= 1 << 63 else digest


def id_checksum(row_id: int, data: bytes | bytearray) -> int:
    """xxh3-64 of a row id (8 bytes, little-endian) and its data, as a signed integer: the
    checksum of a lookup block and of a document chunk.

    Examples:
        >>> id_checksum(1, b"x") == id_checksum(1, b"x") != id_checksum(2, b"x")
        True
    """
    digest = xxhash.xxh3_64_intdigest(row_id.to_bytes(8, "little", signed=True) + data)
    return digest - (1 << 64) if digest >= 1 << 63 else digest


def encodable(key: str, index: int) -> None:
    """Refuse keys SQLite cannot store as UTF-8 (lone surrogates)."""
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(
            f"key {index} ({key!r}) holds a lone surrogate and is not valid UTF-8; "
            "give document ids that are valid Unicode text"
        ) from None


def doc_row(path: str, key: object, sketch: object, check: object) -> tuple[str, bytes]:
    """Check one ``(key, sketch, checksum)`` row; return the key and sketch."""
    if type(key) is not str or type(sketch) is not bytes or type(check) is not int:
        raise damaged(
            path,
            f"a document row has the SQLite types ({type(key).__name__}, "
            f"{type(sketch).__name__}, {type(check).__name__}) instead of (text, blob, integer)",
        )
    if checksum(key, sketch) != check:
        raise damaged(path, f"the sketch of {key!r} fails its checksum (flipped bytes)")
    return key, sketch


def integer(path: str, value: object, what: str) -> int:
    """Check that a value read from SQLite is an integer."""
    if type(value) is not int:
        raise damaged(path, f"{what} is a {type(value).__name__}, not an integer")
    return value


def text_or_none(path: str, value: object, what: str) -> str | None:
    """Check that a value read from SQLite is text or NULL."""
    if value is not None and type(value) is not str:
        raise damaged(path, f"{what} is a {type(value).__name__}, not text")
    return value


def json_list(values: list[int] | list[str]) -> str:
    """A JSON array for ``json_each(?)`` (one bound parameter, parsed in C by SQLite)."""
    return json.dumps(values, ensure_ascii=False)


ROWS_PER_INSERT = 64
"""Rows a statement of :func:`insert_rows` inserts (at most 5 columns: 320 parameters,
below SQLite's 999 of old builds)."""


def insert_rows(conn: sqlite3.Connection, head: str, rows: Iterable[Sequence[object]]) -> None:
    """``conn.executemany(head + "(?, ...)", rows)``, with :data:`ROWS_PER_INSERT` rows a
    statement (``INSERT ... VALUES (...), (...), ...``; the last few one by one): the same
    rows inserted in the same order. Python's ``sqlite3`` lets go of the GIL around each step
    of a statement and takes it back after; a write of ~29,000 rows (100,000 documents)
    did that ~29,000 times, and with other threads running Python each time could be a
    hand-off of the GIL (two context switches). Here it is ~450 times.

    A statement of many rows that may abort midway (a constraint) makes SQLite keep a
    statement journal, the pages it changes copied to a temporary file so that it can undo
    that statement alone (~58 MB written at 100,000 documents): ``INSERT OR FAIL`` needs
    none (a failing row stops the statement and keeps the rows before it) and the error
    still rolls back the write transaction, which every caller's is.

    Args:
        conn: The connection, in a write transaction.
        head: The statement up to ``VALUES`` included, e.g.
            ``"INSERT OR FAIL INTO blocks (id, data, checksum) VALUES "``.
        rows: The rows, all of the same width.

    Examples:
        >>> conn = sqlite3.connect(":memory:")
        >>> _ = conn.execute("CREATE TABLE t (a, b)")
        >>> insert_rows(conn, "INSERT INTO t (a, b) VALUES ", ((i, -i) for i in range(100)))
        >>> conn.execute("SELECT count(*), sum(a), min(b) FROM t").fetchone()
        (100, 4950, -99)
    """
    it = iter(rows)
    part = list(islice(it, ROWS_PER_INSERT))
    if not part:
        return
    one = "(" + ", ".join("?" * len(part[0])) + ")"
    many = head + ", ".join([one] * ROWS_PER_INSERT)
    while len(part) == ROWS_PER_INSERT:
        conn.execute(many, [value for row in part for value in row])
        part = list(islice(it, ROWS_PER_INSERT))
    if part:
        conn.executemany(head + one, part)
