"""Fuzz hand-damaged stores (issue 43): the fuzzer's bytes pick edits a person or a broken
disk could make below the blob checksums (rows deleted, moved or added, counters and the
schema version changed, a byte of a B-tree page flipped), applied to a valid store.

What must hold: every open and read gives an answer or a StoreError, never another
exception; a store that opens reports the count its rows hold (``len`` equals what
``check`` finds); and ``check`` finds every edit that changed the store's content.

Run: ``python fuzz/fuzz_store_damage.py -runs=2000``.
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
from pathlib import Path

from _harness import main, scratch_dir

KIND = "simhash"
PARAMS = "simhash-0123456789abcdef"

#: Edits of the store's rows (``{k}``: a number from the fuzzer's bytes).
EDITS = (
    "DELETE FROM chunks WHERE id = (SELECT id FROM chunks ORDER BY id LIMIT 1 OFFSET {k} % 4)",
    "DELETE FROM blocks WHERE id = (SELECT id FROM blocks ORDER BY id LIMIT 1 OFFSET {k} % 9)",
    "DELETE FROM segs WHERE seg = (SELECT seg FROM segs ORDER BY seg LIMIT 1 OFFSET {k} % 4)",
    "UPDATE chunks SET id = id + 1 + {k} % 50 WHERE id = (SELECT max(id) FROM chunks)",
    "UPDATE blocks SET id = id + 1 WHERE id = (SELECT min(id) FROM blocks)",
    "UPDATE meta SET value = '{k}' WHERE name = 'docs'",
    # (lower only: a larger last id is what a compaction of the last documents leaves)
    "UPDATE meta SET value = CAST({k} % 60 AS TEXT) WHERE name = 'last_doc'",
    "UPDATE meta SET value = '{k}' WHERE name = 'stale'",
    "UPDATE meta SET value = '{k}' WHERE name = 'sketch_bytes'",
    "UPDATE meta SET value = '{k}' WHERE name = 'holes'",
    "UPDATE segs SET entries = entries + 1 + {k} % 3 WHERE seg = (SELECT min(seg) FROM segs)",
    "INSERT OR IGNORE INTO gone (doc) VALUES ({k} % 120)",
    "PRAGMA user_version = {k} % 4",
)


@functools.cache
def scratch() -> Path:
    """A private folder for the database files."""
    return scratch_dir("neardup-fuzz-damage-")


@functools.cache
def seed() -> bytes:
    """A valid store (rollback journal: the file holds everything) with a replaced and a
    removed document, compacted once (so it has empty slots) and written in two batches."""
    import numpy as np

    from neardup.store import Store

    path = scratch() / "seed.db"
    with Store.open(path, kind=KIND, params=PARAMS) as store:
        for lo in (0, 40):
            keys = [f"doc{i}" for i in range(lo, lo + 40)]
            store.add_many(keys, [k.encode() * 2 for k in keys], np.arange(120).reshape(40, 3))
        store.remove("doc3")
        store.compact()
        store.add("doc5", b"again", np.array([1, 2, 3]))
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    return path.read_bytes()


def _content(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        return [f"version {version}", *conn.iterdump()]
    finally:
        conn.close()


def _damage(path: Path, data: bytes) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        for i in range(0, min(len(data), 6) - 1, 2):
            edit = EDITS[data[i] % len(EDITS)].format(k=data[i + 1] * 7)
            with contextlib.suppress(sqlite3.Error):  # an edit a constraint refuses: none
                conn.execute(edit)
    finally:
        conn.close()
    if len(data) >= 8 and data[6] >= 200:  # and at times a byte of a page flipped
        raw = bytearray(path.read_bytes())
        raw[(data[7] * 4099) % len(raw)] ^= 1 << (data[6] % 8)
        path.write_bytes(bytes(raw))


def target(data: bytes) -> None:
    """Damage a copy of the seed store; open, read and check it."""
    import numpy as np

    from neardup.errors import StoreError
    from neardup.store import Store

    path = scratch() / "damaged.db"
    for suffix in ("-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.write_bytes(seed())
    clean = _content(path)
    _damage(path, data)
    try:
        changed = _content(path) != clean
    except sqlite3.DatabaseError:
        changed = True
    try:
        with Store.open(path, kind=KIND, params=PARAMS, readonly=True, quick_check=False) as s:
            report = s.check()
    except StoreError:
        report = None  # not openable even for a check (tampered version, malformed file)
    if changed and report is not None and report["ok"]:
        raise AssertionError(f"check found nothing after {data[:6]!r}")
    try:
        with Store.open(path, kind=KIND, params=PARAMS, readonly=True) as store:
            held = len(store)
            store.get("doc7")
            store.candidates(np.array([1, 2, 3]))
            for keys, blobs in store.iter_sketches(batch=16):
                assert len(keys) == len(blobs)
            store.stats()
    except StoreError:
        return
    if report is not None and held != report["docs"]:
        raise AssertionError(f"the store reports {held} documents, its rows hold {report['docs']}")


if __name__ == "__main__":
    main(target)
