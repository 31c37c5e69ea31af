"""Crash safety of ``index add``: SIGKILL a process in the middle of a large add, then check
that the store is intact, holds exactly the batches committed before the kill, and that a
resumed add completes. Also: two concurrent writers serialize or fail with a StoreError."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from neardup.errors import StoreError
from neardup.io import Document
from neardup.methods import make_method
from neardup.store.persistent import PersistentIndex
from oracles.store import committed_docs

SRC = str(Path(__file__).resolve().parents[2] / "src")
N_DOCS = 3000
BATCH = 50
KILLS = 5  # a fixed number of kills (no time budget): the same work however loaded the machine

ADDER = textwrap.dedent(
    """
    import sys
    from neardup.io import Document
    from neardup.methods import make_method
    from neardup.store.persistent import PersistentIndex

    path, n, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    docs = (Document(f"d{i:05d}", f"document {i} words {i % 97} and {i * 7 % 89} more")
            for i in range(n))

    def announced(docs):
        # drawing the first document of a batch means the batch before it is committed
        for i, doc in enumerate(docs):
            if i % batch == 0:
                print("committed", i, flush=True)
            yield doc

    with PersistentIndex(path, make_method("simhash")) as index:
        index.add([next(docs) for _ in range(batch)], batch_size=batch)  # warm (numba)
        print("ready", flush=True)
        index.add(announced(docs), batch_size=batch)
    print("done", flush=True)
    """
)


def _docs(n: int) -> list[Document]:
    return [
        Document(f"d{i:05d}", f"document {i} words {i % 97} and {i * 7 % 89} more")
        for i in range(n)
    ]


def _check(path: Path) -> int:
    """Integrity check, and the stored keys must be a prefix of whole batches; return count."""
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = _stored(conn)
        keys = sorted(stored)
        doc_ids = set(_lookup_docs(conn).tolist())
        rowids = set(stored.values())
    finally:
        conn.close()
    assert len(keys) % BATCH == 0, f"partial batch: {len(keys)} documents"
    assert keys == [f"d{i:05d}" for i in range(len(keys))]
    # every document has its lookup rows; rows of replaced documents wait for compact()
    assert rowids <= doc_ids
    return len(keys)


def _stored(conn: sqlite3.Connection) -> dict[str, int]:
    """Every stored document's key and id (decoded from the chunks, less the gone ones)."""
    from neardup.store._chunks import decode_chunk

    gone = {d for (d,) in conn.execute("SELECT doc FROM gone")}
    out: dict[str, int] = {}
    for cid, n, data in conn.execute("SELECT id, n, data FROM chunks ORDER BY id"):
        for doc, key, _, _ in decode_chunk(cid, n, data).documents():
            if doc not in gone:
                assert key not in out, f"{key} stored twice"
                out[key] = doc
    return out


def _lookup_docs(conn: sqlite3.Connection) -> np.ndarray:
    """The document ids of every stored lookup entry (decoded from the segment blocks)."""
    from neardup.store._segments import _segment_entries, read_segments

    parts = [_segment_entries(conn, s)[1] for s in read_segments(conn)]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def test_sigkill_during_index_add(tmp_path: Path) -> None:
    """The kill lands after a random number of committed batches (the adder announces each),
    at a random moment of the next one, so every run kills mid-add whatever the load."""
    env = {**os.environ, "PYTHONPATH": SRC}
    rng = random.Random(11)
    counts = []
    path = tmp_path / "store.db"
    for _ in range(KILLS):
        path.unlink(missing_ok=True)
        for suffix in ("-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        proc = subprocess.Popen(
            [sys.executable, "-c", ADDER, str(path), str(N_DOCS), str(BATCH)],
            stdout=subprocess.PIPE,
            env=env,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"ready"
        for _ in range(rng.randrange(1, N_DOCS // BATCH // 2)):  # batches to let commit
            line = proc.stdout.readline()
            assert line.startswith(b"committed"), line
        time.sleep(rng.uniform(0.0, 0.02))  # somewhere in the next batch
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        proc.stdout.close()
        counts.append(_check(path))
    assert len(counts) == KILLS
    assert all(BATCH <= c < N_DOCS for c in counts), f"a kill did not land mid-add: {counts}"
    # resume: adding everything again completes and leaves each document once
    with PersistentIndex(path, make_method("simhash")) as index:
        index.add(_docs(N_DOCS), batch_size=BATCH)
        assert len(index) == N_DOCS
        index.store.compact()
    assert _check(path) == N_DOCS
    conn = sqlite3.connect(path)
    try:  # compacted: no orphan lookup rows
        live = set(_stored(conn).values())
        assert set(_lookup_docs(conn).tolist()) == live
    finally:
        conn.close()


def test_two_writers_wait_or_fail_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with PersistentIndex(path, make_method("simhash")) as index:
        index.add(_docs(10))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        from neardup.store import Store

        with PersistentIndex(path, make_method("simhash")) as index:
            params = index.store.stats()["params"]
        start = time.monotonic()
        with (
            Store.open(path, kind="simhash", params=str(params), timeout=0.5) as store,
            pytest.raises(StoreError, match="locked"),
        ):
            store.add("x", b"\0" * 8, np.array([1]))
        assert time.monotonic() - start >= 0.4  # it waited for the busy timeout first
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert _check_any(path) == 10


def _check_any(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return committed_docs(conn)
    finally:
        conn.close()
