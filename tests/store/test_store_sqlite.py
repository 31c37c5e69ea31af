"""Tests of neardup.store: persistence, params checks, migrations, crash safety, concurrency."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.errors import (
    IncompatibleSketchError,
    InputError,
    SchemaVersionError,
    StoreError,
)
from neardup.store import SCHEMA_VERSION, Store
from neardup.store.migrations import MIGRATIONS, migrate, schema_version
from neardup.store.sqlite import APPLICATION_ID

KIND = "minhash"
PARAMS = "minhash-0123456789abcdef"
HERE = Path(__file__).parent
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _open(path: Path | str, **kw: object) -> Store:
    return Store.open(path, kind=KIND, params=PARAMS, **kw)  # type: ignore[arg-type]


def _batch(
    prefix: str, n: int, n_bands: int = 4, seed: int = 0
) -> tuple[list[str], list[bytes], np.ndarray]:
    rng = np.random.default_rng(seed)
    keys = [f"{prefix}{i}" for i in range(n)]
    sketches = [f"{prefix}{i}".encode() * 3 for i in range(n)]
    lookup = rng.integers(-(2**62), 2**62, size=(n, n_bands), dtype=np.int64)
    return keys, sketches, lookup


def _schema(conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
    rows = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    return [(t, n, " ".join(s.split())) for t, n, s in rows if s]


def _run(script: str, *args: object, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


# ------------------------------------------------------------------------ persistence


def test_reopen_and_query(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    keys, sketches, lookup = _batch("a", 50)
    with _open(db) as store:
        assert store.add_many(keys, sketches, lookup) == 50
    with _open(db, readonly=True) as store:
        assert len(store) == 50
        assert store.get("a7") == sketches[7]
        assert store.get("nope") is None
        assert "a7" in store and "nope" not in store and 7 not in store
        # One shared band is enough; a value in another band is not.
        query = np.array([lookup[3, 0], 1, 2, 3])
        assert store.candidates(query) == [("a3", sketches[3])]
        shifted = np.array([1, lookup[3, 0], 2, 3])
        assert store.candidates(shifted) == []
        got = [pair for ks, bs in store.iter_sketches(batch=7) for pair in zip(ks, bs, strict=True)]
        assert got == list(zip(keys, sketches, strict=True))


def test_add_more_and_query(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    k1, s1, l1 = _batch("a", 30, seed=1)
    k2, s2, l2 = _batch("b", 30, seed=2)
    l2[5, 2] = l1[9, 2]  # b5 shares band 2 with a9
    with _open(db) as store:
        store.add_many(k1, s1, l1)
    with _open(db, create=False) as store:
        assert store.add_many(k2, s2, l2) == 30
        assert len(store) == 60
    with _open(db) as store:
        assert store.candidates(l2[5]) == [("a9", s1[9]), ("b5", s2[5])]
        assert store.candidates(l1[0]) == [("a0", s1[0])]
        assert store.stats()["lookup_rows"] == 60 * 4


def test_replace_is_the_duplicate_key_rule(tmp_path: Path) -> None:
    with _open(tmp_path / "s.db") as store:
        store.add("k", b"old", np.array([1, 2]), meta="m1")
        store.add_many(["k", "x", "k"], [b"mid", b"x", b"new"], np.array([[3, 4], [9, 9], [5, 6]]))
        assert len(store) == 2
        assert store.get("k") == b"new"
        assert store.get_meta("k") is None
        assert store.candidates(np.array([1, 2])) == []  # old lookup rows are gone
        assert store.candidates(np.array([3, 4])) == []  # superseded in-batch duplicate
        assert store.candidates(np.array([5, 0])) == [("k", b"new")]
        assert store.stats()["stale_docs"] == 1  # the old rows stay until compact()
        assert store.compact() == 2
        assert store.stats()["lookup_rows"] == 4 and store.stats()["stale_docs"] == 0
        assert store.get("k") == b"new" and len(store) == 2


def test_a_stored_key_late_in_a_batch_replaces_it_and_keeps_the_rest(tmp_path: Path) -> None:
    """A stored key late in a batch is found by its key entry and replaced; the batch's
    other documents go in as new ones."""
    keys, sketches, lookup = _batch("a", 500)
    with _open(tmp_path / "s.db") as store:
        store.add_many(keys[:3], sketches[:3], lookup[:3])
        new_keys = [*keys[3:], "a1"]  # new keys first, then a stored one
        new_sketches = [*sketches[3:], b"again"]
        assert store.add_many(new_keys, new_sketches, np.concatenate([lookup[3:], lookup[1:2]]))
        assert len(store) == 500 and store.stats()["stale_docs"] == 1
        order = [k for ks, _ in store.iter_sketches() for k in ks]
        assert order == ["a0", "a2", *keys[3:], "a1"]
        assert store.get("a1") == b"again" and store.get("a499") == sketches[499]
        assert store.candidates(lookup[1]) == [("a1", b"again")]
        assert store.candidates(lookup[250]) == [("a250", sketches[250])]


def test_removal(tmp_path: Path) -> None:
    keys, sketches, lookup = _batch("a", 10)
    with _open(tmp_path / "s.db") as store:
        store.add_many(keys, sketches, lookup)
        assert store.remove("a4") is True
        assert store.remove("a4") is False
        assert len(store) == 9 and store.get("a4") is None
        assert store.candidates(lookup[4]) == []
        assert store.compact() == 4
        assert store.stats()["lookup_rows"] == 9 * 4 and store.get("a3") == sketches[3]
        store.add("a4", b"back", lookup[4])
        assert store.candidates(lookup[4]) == [("a4", b"back")]
        # Re-added keys come after the others (insertion order of the current rows).
        assert [k for ks, _ in store.iter_sketches() for k in ks][-1] == "a4"


def test_pairs_form_and_uint64_values(tmp_path: Path) -> None:
    big = np.array([[0, 2**63 + 5], [0, 7], [3, 7]], dtype=np.uint64)
    with _open(tmp_path / "s.db") as store:
        store.add_many(["c1", "c2"], [b"1", b"2"], [big, np.zeros((0, 2), np.int64)])
        assert store.candidates(np.array([[0, 2**63 + 5]], dtype=np.uint64)) == [("c1", b"1")]
        assert store.candidates(np.array([[3, 7]])) == [("c1", b"1")]
        assert store.candidates(np.array([[1, 7]])) == []
        assert store.candidates(np.array([], dtype=np.int64)) == []
        # More query pairs than one SQL statement takes: the chunks are merged.
        wide = np.stack([np.zeros(2000, np.int64), np.arange(2000, dtype=np.int64)], axis=1)
        assert store.candidates(wide) == [("c1", b"1")]


def test_stats(tmp_path: Path) -> None:
    before = time.time()
    with _open(tmp_path / "s.db") as store:
        store.add_many(*_batch("a", 5))
        st = store.stats()
    assert st["docs"] == 5 and st["kind"] == KIND and st["params"] == PARAMS
    assert st["schema_version"] == SCHEMA_VERSION and st["readonly"] is False
    assert isinstance(st["file_size"], int) and st["file_size"] > 0
    assert isinstance(st["created"], float) and before - 1 <= st["created"] <= time.time()
    assert st["path"] == str(tmp_path / "s.db")


# ------------------------------------------------------------------ params and schema


def test_other_params_or_kind_refuse_to_mix(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with _open(db) as store:
        store.add("a", b"x", np.array([1]))
    other = "minhash-fedcba9876543210"
    with pytest.raises(IncompatibleSketchError) as info:
        Store.open(db, kind=KIND, params=other)
    message = str(info.value)
    assert PARAMS in message and other in message and "new store" in message
    with pytest.raises(IncompatibleSketchError, match="simhash"):
        Store.open(db, kind="simhash", params=PARAMS, readonly=True)
    with _open(db) as store:  # the refused opens changed nothing
        assert len(store) == 1 and store.stats()["params"] == PARAMS


def test_schema_version_too_new(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _open(db).close()
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    for readonly in (False, True):
        with pytest.raises(SchemaVersionError, match="upgrade neardup"):
            _open(db, readonly=readonly)
    assert issubclass(SchemaVersionError, StoreError)


def test_migrations_are_ordered_and_idempotent(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    try:
        assert schema_version(conn) == 0
        assert migrate(conn) == SCHEMA_VERSION
        schema = _schema(conn)
        assert migrate(conn) == 0  # nothing left to do
        for step in MIGRATIONS:  # each step re-applied on its own changes nothing
            step(conn)
        assert _schema(conn) == schema and schema_version(conn) == SCHEMA_VERSION

        calls: list[int] = []
        later = (lambda c: calls.append(2), lambda c: calls.append(3))
        assert migrate(conn, migrations=(*MIGRATIONS, *later)) == 2
        assert calls == [2, 3] and schema_version(conn) == SCHEMA_VERSION + 2
        assert migrate(conn, migrations=(*MIGRATIONS, *later)) == 0 and calls == [2, 3]
        with pytest.raises(SchemaVersionError):
            migrate(conn)
    finally:
        conn.close()


def _fixture(folder: Path, version: str) -> Path:
    """A store file made from a pinned schema fixture (``store_schema_VERSION.sql``)."""
    path = folder / f"{version}.db"
    conn = sqlite3.connect(path)
    conn.executescript((HERE / f"store_schema_{version}.sql").read_text(encoding="utf-8"))
    conn.close()
    return path


def test_v1_stores_with_documents_are_refused_clearly(tmp_path: Path) -> None:
    """Version 1 kept old sketch formats and no method configuration: rebuild, never guess."""
    old = _fixture(tmp_path, "v1")
    with pytest.raises(SchemaVersionError, match="rebuild it"):
        _open(old)
    conn = sqlite3.connect(old)  # nothing was changed
    assert conn.execute("SELECT count(*) FROM docs").fetchone()[0] == 3
    assert schema_version(conn) == 1
    conn.close()
    # an empty version-1 store is converted in place
    conn = sqlite3.connect(old)
    conn.executescript("DELETE FROM keys; DELETE FROM docs;")
    conn.close()
    with _open(old) as store:
        assert len(store) == 0 and store.stats()["schema_version"] == SCHEMA_VERSION


def _fixture_reads(store: Store) -> None:
    assert len(store) == 3 and store.get("alpha") == b"\x00\x01sketch-a"
    assert store.get_meta("alpha") == '{"n": 1}'
    assert store.config == '{"method":"minhash"}'
    assert store.candidates(np.array([10, 0])) == [
        ("alpha", b"\x00\x01sketch-a"),
        ("beta", b"\x00\x01sketch-b"),
    ]
    assert store.candidates(np.array([[5, 100]])) == [("delta", b"ctph")]
    assert store.candidates(np.array([11, 21])) == [("beta", b"\x00\x01sketch-b")]
    assert store.stats()["created"] == 1700000000.0
    assert store.stats()["lookup_rows"] == 6


def test_v2_store_is_upgraded_in_place(tmp_path: Path) -> None:
    """A schema-2 store (one row per lookup key) opens; its rows become segment blocks."""
    old = _fixture(tmp_path, "v2")
    with _open(old) as store:
        _fixture_reads(store)
        assert store.stats()["schema_version"] == SCHEMA_VERSION == 5
        store.add("gamma", b"g", np.array([10, 5]))
        assert [k for k, _ in store.candidates(np.array([10, 0]))] == ["alpha", "beta", "gamma"]
    conn = sqlite3.connect(old)
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert "keys" not in names and {"segs", "blocks"} <= names
    finally:
        conn.close()


def test_v3_store_is_upgraded_in_place(tmp_path: Path) -> None:
    """A schema-3 store (one row per document) opens; its rows become chunks, its keys get
    key entries; opened read-only it is refused with a message that says what to do."""
    old = _fixture(tmp_path, "v3")
    with pytest.raises(StoreError, match="open it once without readonly=True"):
        _open(old, readonly=True)
    with _open(old) as store:
        _fixture_reads(store)
        assert store.last_doc_id() == 3 and store.stats()["sketch_bytes"] == 24
        store.add("beta", b"b2", np.array([11, 5]))  # found by key: replaced
        assert len(store) == 3 and store.get("beta") == b"b2"
        assert [k for k, _ in store.candidates(np.array([10, 0]))] == ["alpha"]
        assert store.remove("delta") and store.get("delta") is None
    conn = sqlite3.connect(old)
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert "docs" not in names and {"chunks", "gone", "segs", "blocks"} <= names
    finally:
        conn.close()


def test_v4_store_is_upgraded_in_place(tmp_path: Path) -> None:
    """A schema-4 store (no tail) opens and gets the tail table."""
    old = _fixture(tmp_path, "v4")
    with _open(old) as store:
        _fixture_reads(store)
        assert store.stats()["schema_version"] == SCHEMA_VERSION
        assert store.check()["problems"] == []


def test_fresh_store_matches_the_v5_fixture(tmp_path: Path) -> None:
    """The schema-5 file format is pinned: a fixture store opens, and new stores equal it
    (but for SQLite's own sqlite_sequence, which a new store keeps from version 2's table,
    and the index of the chunks' slot counts that any writable open adds)."""
    old = _fixture(tmp_path, "v5")
    conn = sqlite3.connect(old)
    fixture_schema = sorted(
        [
            *_schema(conn),
            ("table", "sqlite_sequence", "CREATE TABLE sqlite_sequence(name,seq)"),
            ("index", "chunks_n", "CREATE INDEX chunks_n ON chunks (n)"),
        ],
        key=lambda row: row[1],
    )
    conn.close()
    with _open(old) as store:
        _fixture_reads(store)
    with _open(tmp_path / "new.db") as store:
        store.add("a", b"a", np.array([1]))
    conn = sqlite3.connect(tmp_path / "new.db")
    try:
        assert _schema(conn) == fixture_schema
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


# ------------------------------------------------------------------------ bad files


def test_corrupt_or_foreign_files_raise_store_error(tmp_path: Path) -> None:
    noise = tmp_path / "noise.db"
    noise.write_bytes(np.random.default_rng(3).integers(0, 256, 8192, dtype=np.uint8).tobytes())
    text = tmp_path / "notes.txt"
    text.write_text("just some text, not a database\n" * 20)
    for path in (noise, text):
        for readonly in (False, True):
            with pytest.raises(StoreError, match="not a neardup store or is damaged"):
                _open(path, readonly=readonly)
    foreign = tmp_path / "other.sqlite"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="not a neardup store"):
        _open(foreign)
    with pytest.raises(StoreError, match="is a directory"):
        _open(tmp_path)


def test_damaged_store_pages_raise_store_error(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with _open(db) as store:
        store.add_many(*_batch("a", 3000))
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(db.read_bytes())
    data[4096:] = bytes(len(data) - 4096)  # keep the header page, zero everything else
    db.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="damaged"), _open(db) as store:
        store.candidates(np.array([1, 2, 3, 4]))
        store.stats()
        len(store)


def test_missing_files(tmp_path: Path) -> None:
    missing = tmp_path / "missing.db"
    with pytest.raises(StoreError, match="does not exist"):
        _open(missing, readonly=True)
    with pytest.raises(StoreError, match="create=True"):
        _open(missing, create=False)
    assert not missing.exists()
    with pytest.raises(StoreError, match="cannot open"):
        _open(tmp_path / "no-such-dir" / "s.db")
    with pytest.raises(StoreError, match="in-memory"):
        _open(":memory:", readonly=True)
    empty = tmp_path / "empty.db"
    empty.touch()
    with pytest.raises(StoreError, match="not initialized"):
        _open(empty, readonly=True)


def test_misuse_raises_clear_errors(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with _open(db) as store:
        with pytest.raises(InputError, match="shape"):
            store.add_many(["a"], [b"x"], np.zeros((2, 3), np.int64))
        with pytest.raises(InputError, match="one of each"):
            store.add_many(["a", "b"], [b"x"], np.zeros((2, 3), np.int64))
        with pytest.raises(InputError, match="to_bytes"):
            store.add_many(["a"], ["text"], np.zeros((1, 3), np.int64))  # type: ignore[list-item]
        with pytest.raises(InputError, match="integer array"):
            store.candidates(np.array([0.5, 1.5]))
        with pytest.raises(InputError, match=r"\(m, 2\)"):
            store.candidates(np.zeros((2, 3), np.int64))
        with pytest.raises(InputError, match="one per document"):
            store.add_many(["a"], [b"x"], [np.zeros((1, 2), np.int64)] * 2)
        with pytest.raises(InputError, match="batch"):
            next(store.iter_sketches(batch=0))
        with pytest.raises(InputError, match="non-empty"):
            Store.open(db, kind="", params=PARAMS)
        assert len(store) == 0
    with _open(db, readonly=True) as store, pytest.raises(StoreError, match="read-only"):
        store.add("a", b"x", np.array([1]))
    store = _open(db)
    store.close()
    store.close()
    assert store.closed and "closed" in repr(store)
    with pytest.raises(StoreError, match="closed"):
        len(store)


def test_second_writer_waits_then_fails_clearly(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _open(db).close()
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        with _open(db, timeout=0.2) as store:
            started = time.monotonic()
            with pytest.raises(StoreError, match="busy timeout"):
                store.add("a", b"x", np.array([1]))
            assert time.monotonic() - started >= 0.15
            assert len(store) == 0  # reading is not blocked by the writer
            holder.execute("COMMIT")
            store.add("a", b"x", np.array([1]))
            assert len(store) == 1
    finally:
        holder.close()


# ---------------------------------------------------------------------- crash safety

CRASH_SCRIPT = """
    import os, signal, sys
    import numpy as np
    from neardup.store import Store

    path, marker, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = np.random.default_rng(7)
    store = Store.open(path, kind="minhash", params="minhash-0123456789abcdef")
    first = rng.integers(0, 2**62, size=(2000, 16))
    store.add_many([f"a{i}" for i in range(2000)], [b"A%d" % i for i in range(2000)], first)
    print(os.path.getsize(path + "-wal"), flush=True)
    # A small page cache makes SQLite spill uncommitted pages to the WAL early.
    store._conn.execute("PRAGMA cache_size = 5")
    seen = 0

    def trace(sql):
        global seen
        if sql.startswith(marker):
            seen += 1
            if seen == kill_at:
                print(os.path.getsize(path + "-wal"), flush=True)
                os.kill(os.getpid(), signal.SIGKILL)

    store._conn.set_trace_callback(trace)
    second = rng.integers(0, 2**62, size=(4000, 16))
    # ~400-byte sketches: 100 chunks fill more than the 5 cached pages (64 KiB each)
    store.add_many(
        [f"b{i}" for i in range(4000)], [b"B%d" % i + bytes(400) for i in range(4000)], second
    )
    print("the second batch was committed: the kill did not happen")
"""


@pytest.mark.parametrize(
    ("marker", "kill_at"),
    [
        ("SELECT name, value FROM meta", 1),  # just after BEGIN
        # in the middle of the documents (125 chunk rows: a statement of 64, then one by one)
        ("INSERT OR FAIL INTO chunks", 30),
        ("INSERT INTO meta", 1),  # late: the lookup rows' uncommitted pages are in the WAL
    ],
)
def test_sigkill_mid_transaction_keeps_exactly_the_committed_batch(
    tmp_path: Path, marker: str, kill_at: int
) -> None:
    db = tmp_path / "s.db"
    result = _run(CRASH_SCRIPT, db, marker, kill_at)
    assert result.returncode == -signal.SIGKILL, result.stdout + result.stderr
    wal_committed, wal_at_kill = map(int, result.stdout.split())
    if kill_at > 1:  # the killed transaction had written pages to the WAL: recovery drops them
        assert wal_at_kill > wal_committed
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()
    with _open(db) as store:
        assert len(store) == 2000
        assert store.stats()["lookup_rows"] == 2000 * 16
        keys = [k for ks, _ in store.iter_sketches() for k in ks]
        assert keys == [f"a{i}" for i in range(2000)]
        assert store.get("a1999") == b"A1999" and store.get("b0") is None
        # And the store resumes: the interrupted batch can be written again.
        store.add_many(*_batch("b", 100, n_bands=16))
        assert len(store) == 2100


def _header_modes(db: Path) -> tuple[int, int]:
    """The file's write and read versions (header bytes 18-19): 2, 2 in WAL mode, 1, 1 with a
    rollback journal."""
    head = db.read_bytes()[:20]
    return head[18], head[19]


def _mode(store: Store) -> str:
    return str(store._live().execute("PRAGMA journal_mode").fetchone()[0])


def test_a_bulk_load_uses_a_rollback_journal_then_wal(tmp_path: Path) -> None:
    """``bulk=True`` on a new file: a rollback journal (TRUNCATE), which a second bulk
    connection joins, until end_bulk() (or close) switches the file to WAL; other
    connections follow; a store already in WAL mode keeps it."""
    db = tmp_path / "s.db"
    with _open(db, bulk=True) as store:
        assert store.bulk and _mode(store) == "truncate"
        store.add_many(*_batch("a", 50))
        assert _header_modes(db) == (1, 1)
        with _open(db, create=False, bulk=True) as second:  # the writer thread's connection
            assert second.bulk and _mode(second) == "truncate"
            second.add_many(*_batch("b", 50))
            assert second.end_bulk() and not second.bulk
            assert _header_modes(db) == (2, 2)
            second.add_many(*_batch("c", 50))  # in WAL mode now
        assert len(store) == 150 and _mode(store) == "wal"  # it follows at its next read
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.db"]  # no journal left
    with _open(db, bulk=True) as store:  # an existing store keeps WAL
        assert not store.bulk and _mode(store) == "wal" and len(store) == 150
    other = tmp_path / "t.db"
    with _open(other, bulk=True) as store:
        store.add_many(*_batch("a", 10))
    assert _header_modes(other) == (2, 2)  # close() ended the load
    with _open(other, readonly=True) as store:
        assert store.check()["ok"] and len(store) == 10


BULK_CRASH_SCRIPT = """
    import os, signal, sys
    import numpy as np
    from neardup.store import Store

    path, kill_at = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(7)
    store = Store.open(path, kind="minhash", params="minhash-0123456789abcdef", bulk=True)
    first = rng.integers(0, 2**62, size=(2000, 16))
    store.add_many([f"a{i}" for i in range(2000)], [b"A%d" % i for i in range(2000)], first)
    print(os.path.getsize(path), flush=True)
    # A small page cache makes SQLite spill uncommitted pages into the file early.
    store._conn.execute("PRAGMA cache_size = 5")
    seen = 0

    def trace(sql):
        global seen
        if sql.startswith("INSERT OR FAIL INTO chunks"):
            seen += 1
            if seen == kill_at:
                print(os.path.getsize(path), os.path.getsize(path + "-journal"), flush=True)
                os.kill(os.getpid(), signal.SIGKILL)

    store._conn.set_trace_callback(trace)
    second = rng.integers(0, 2**62, size=(4000, 16))
    store.add_many(
        [f"b{i}" for i in range(4000)], [b"B%d" % i + bytes(400) for i in range(4000)], second
    )
    print("the second batch was committed: the kill did not happen")
"""


@pytest.mark.parametrize("kill_at", [1, 30])
def test_sigkill_mid_bulk_transaction_keeps_exactly_the_committed_batch(
    tmp_path: Path, kill_at: int
) -> None:
    """A bulk load (rollback journal) killed in the middle of a write: the next open rolls
    the write back from the journal (pages past the old end of the file are cut off), the
    committed batch is all there, the store passes its checks and is in WAL mode again."""
    db = tmp_path / "s.db"
    result = _run(BULK_CRASH_SCRIPT, db, kill_at)
    assert result.returncode == -signal.SIGKILL, result.stdout + result.stderr
    committed, *at_kill = map(int, result.stdout.split())
    size_at_kill, journal_at_kill = at_kill
    if kill_at > 1:  # the killed write had spilled pages into the file, and its undo record
        assert size_at_kill > committed and journal_at_kill > 0
    with _open(db) as store:  # rolls the write back, then switches to WAL
        assert os.path.getsize(db) == committed
        assert _header_modes(db) == (2, 2)
        assert len(store) == 2000
        assert store.stats()["lookup_rows"] == 2000 * 16
        keys = [k for ks, _ in store.iter_sketches() for k in ks]
        assert keys == [f"a{i}" for i in range(2000)]
        assert store.get("a1999") == b"A1999" and store.get("b0") is None
        report = store.check()
        assert report["ok"], report["problems"]
        store.add_many(*_batch("b", 100, n_bands=16))  # and the store resumes
        assert len(store) == 2100


def test_iteration_is_one_snapshot(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with _open(db) as reader, _open(db) as writer:
        writer.add_many(*_batch("a", 10))
        batches = reader.iter_sketches(batch=3)
        first_keys, _ = next(batches)
        writer.add_many(*_batch("b", 10))  # committed by another connection meanwhile
        assert writer.remove("a9") is True
        # While the iteration is pending, the iterating store's other reads share its snapshot.
        assert len(reader) == 10
        rest = [k for ks, _ in batches for k in ks]
        assert first_keys + rest == [f"a{i}" for i in range(10)]
        assert len(reader) == 19  # after it, they see the newest commit
        unfinished = reader.iter_sketches(batch=2)
        next(unfinished)
    del unfinished  # closing the store first, then dropping the generator, is harmless


# ----------------------------------------------------------------------- concurrency

WRITER_SCRIPT = """
    import sys, time
    from pathlib import Path
    import numpy as np
    from neardup.store import Store

    path, batches, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    ready = [Path(path + f".ready{i}") for i in range(2)]
    deadline = time.monotonic() + 30
    while not all(p.exists() for p in ready) and time.monotonic() < deadline:
        time.sleep(0.01)
    with Store.open(path, kind="minhash", params="minhash-0123456789abcdef", timeout=10) as s:
        for b in range(1, batches + 1):
            lookup = np.stack([np.full(size, b), np.arange(size) + b * size], axis=1)
            s.add_many([f"{b}-{j}" for j in range(size)], [b"x" * 64] * size, lookup)
            time.sleep(0.01)
"""

READER_SCRIPT = """
    import json, sys, time
    from pathlib import Path
    import numpy as np
    from neardup.store import Store

    path, batches, size, me, readonly = (
        sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5] == "1"
    )
    total = (batches + 1) * size
    seen, last, loops = set(), 0, 0
    with Store.open(path, kind="minhash", params="minhash-0123456789abcdef",
                    readonly=readonly, timeout=10) as s:
        Path(path + f".ready{me}").touch()
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            loops += 1
            n = len(s)
            assert n % size == 0 and n >= last, (n, last)  # whole batches, never going back
            last = n
            seen.add(n)
            b = loops % (batches + 1)
            got = s.candidates(np.array([b, -1]))
            assert len(got) in (0, size), (b, len(got))
            assert all(k.startswith(f"{b}-") for k, _ in got)
            if loops % 5 == 0:
                count = sum(len(ks) for ks, _ in s.iter_sketches(batch=37))
                assert count % size == 0 and count >= n, (count, n)
            if n == total:
                break
    print(json.dumps({"distinct": len(seen), "last": last, "loops": loops}))
"""


def test_readers_see_whole_batches_while_one_process_writes(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    batches, size = 40, 50
    with _open(db) as store:  # batch 0 exists before anyone starts
        store.add_many(
            [f"0-{j}" for j in range(size)],
            [b"x" * 64] * size,
            np.stack([np.zeros(size, np.int64), np.arange(size)], axis=1),
        )
    env = {**os.environ, "PYTHONPATH": SRC}
    args = [str(db), str(batches), str(size)]

    def spawn(script: str, *extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(script), *args, *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )

    procs = [spawn(READER_SCRIPT, "0", "1"), spawn(READER_SCRIPT, "1", "0"), spawn(WRITER_SCRIPT)]
    outputs = [p.communicate(timeout=60) for p in procs]
    for proc, (_out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert "locked" not in err
    for out, _ in outputs[:2]:
        report = json.loads(out)
        assert report["last"] == (batches + 1) * size  # the readers saw the final state
        assert report["distinct"] >= 3  # ...and intermediate ones: they ran during the writes
    with _open(db) as store:
        assert len(store) == (batches + 1) * size


# ------------------------------------------------------------------ brute-force oracle

KEYS = [f"k{i}" for i in range(6)]
small = st.integers(0, 3)
dense_batch = st.lists(
    st.tuples(st.sampled_from(KEYS), st.lists(small, min_size=3, max_size=3)), max_size=6
)
pairs_batch = st.lists(
    st.tuples(st.sampled_from(KEYS), st.lists(st.tuples(small, small), max_size=5)), max_size=6
)
operation = st.one_of(
    st.tuples(st.just("dense"), dense_batch),
    st.tuples(st.just("pairs"), pairs_batch),
    st.tuples(st.just("remove"), st.sampled_from(KEYS)),
)


@settings(max_examples=100)
@given(
    ops=st.lists(operation, max_size=8),
    query=st.one_of(
        st.lists(small, min_size=3, max_size=3).map(lambda r: np.array(r, dtype=np.int64)),
        st.lists(st.tuples(small, small), max_size=6).map(
            lambda r: np.array(r, dtype=np.int64).reshape(-1, 2)
        ),
    ),
)
def test_candidates_equal_a_brute_force_scan(ops: list[tuple[str, Any]], query: np.ndarray) -> None:
    model: dict[str, tuple[bytes, set[tuple[int, int]]]] = {}
    with _open(":memory:") as store:
        for step, (op, payload) in enumerate(ops):
            if op == "remove":
                assert store.remove(payload) == (payload in model)
                model.pop(payload, None)
                continue
            batch: list[tuple[str, list[Any]]] = payload
            keys = [k for k, _ in batch]
            sketches = [f"{k}@{step}".encode() for k in keys]
            if op == "dense":
                lookup: Any = np.array([row for _, row in batch], dtype=np.int64).reshape(-1, 3)
                rows = [{(j, v) for j, v in enumerate(row)} for _, row in batch]
            else:
                lookup = [np.array(row, dtype=np.int64).reshape(-1, 2) for _, row in batch]
                rows = [set(row) for _, row in batch]
            store.add_many(keys, sketches, lookup)
            for key, sketch, row in zip(keys, sketches, rows, strict=True):
                model.pop(key, None)  # a replaced key moves to the end, as in the store
                model[key] = (sketch, row)
        wanted = (
            {(j, int(v)) for j, v in enumerate(query)}
            if query.ndim == 1
            else {(int(b), int(v)) for b, v in query}
        )
        expected = [(k, sk) for k, (sk, row) in model.items() if row & wanted]
        assert store.candidates(query) == expected
        assert len(store) == len(model)
        store.compact()
        assert store.stats()["lookup_rows"] == sum(len(row) for _, row in model.values())


def test_segments_merge_and_answer_like_one_table(tmp_path: Path) -> None:
    """Many small batches: tiered merges keep few segments, candidates equal a brute-force
    scan of every (band, value) ever added, and replaced documents' entries are dropped."""
    import sqlite3 as sq

    from neardup.store._segments import FANOUT, read_segments

    rng = np.random.default_rng(3)
    want: dict[tuple[int, int], set[str]] = {}
    with _open(tmp_path / "s.db") as store:
        for step in range(40):
            n = int(rng.integers(1, 60))
            keys = [f"k{int(x)}" for x in rng.integers(0, 400, size=n)]
            lookup = rng.integers(0, 50, size=(n, 3))  # small values: shared buckets
            store.add_many(keys, [k.encode() for k in keys], lookup)
            last = {k: row for k, row in zip(keys, lookup.tolist(), strict=True)}
            for pairs in want.values():
                pairs.difference_update(last)  # a re-added key loses its old entries
            for k, row in last.items():
                for band, value in enumerate(row):
                    want.setdefault((band, value), set()).add(k)
            if step % 10 == 9:
                query = rng.integers(0, 50, size=3)
                got = {k for k, _ in store.candidates(query)}
                assert got == set().union(
                    *(want.get((b, int(v)), set()) for b, v in enumerate(query))
                )
        conn = sq.connect(tmp_path / "s.db")
        segments = read_segments(conn)
        conn.close()
        levels = [(s.role, s.level) for s in segments]  # lookup and key segments apart
        assert all(levels.count(level) < FANOUT for level in set(levels))
        before = store.stats()["lookup_rows"]
        dropped = store.compact()
        assert store.stats()["lookup_rows"] == before - dropped
        assert store.stats()["lookup_rows"] == sum(len(v) for v in want.values())
        query = np.array([1, 2, 3])
        got = {k for k, _ in store.candidates(query)}
        assert got == set().union(*(want.get((b, int(v)), set()) for b, v in enumerate(query)))


def test_segments_far_apart_in_ids_are_not_merged_into_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A segment stores document ids as 32-bit offsets: segments whose ids span 2**32 or more
    (ids grow by up to 32 a batch) stay apart, and lookups still find every entry."""
    import sqlite3 as sq

    from neardup.store import _segments
    from neardup.store._segments import FANOUT, compact_all, lookup, read_segments, write_segment

    everyone = lambda _conn, d: np.ones(d.size, dtype=bool)  # noqa: E731 (no chunks written)
    monkeypatch.setattr(_segments, "stored_docs", everyone)
    with _open(tmp_path / "s.db"):
        pass
    conn = sq.connect(tmp_path / "s.db")
    far = [i << 30 for i in range(2 * FANOUT)]  # FANOUT neighbours fit in one, 2 * FANOUT do not
    for base in far:
        write_segment(conn, np.array([7, 8], dtype=np.int64), np.array([base, base + 5]))
    assert len(read_segments(conn)) < len(far)  # neighbours that fit were merged
    _keys, docs = lookup(conn, np.array([7], dtype=np.int64))
    assert sorted(docs.tolist()) == far
    compact_all(conn, everyone)
    _keys, docs = lookup(conn, np.array([8], dtype=np.int64))
    assert sorted(docs.tolist()) == [b + 5 for b in far]
    conn.close()
