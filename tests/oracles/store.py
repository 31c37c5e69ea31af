"""What a store file holds, read with plain ``sqlite3`` as another process sees it."""

from __future__ import annotations

import sqlite3

__all__ = ["committed_docs"]


def committed_docs(conn: sqlite3.Connection) -> int:
    """The documents the committed transactions hold (schema 4 keeps the count in ``meta``)."""
    row = conn.execute(
        "SELECT coalesce(max(CAST(value AS INTEGER)), 0) FROM meta WHERE name = 'docs'"
    ).fetchone()
    return int(row[0])
