"""Buffered writes: the lookup and key entries of small batches in the ``tail`` table."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from neardup.errors import StoreError
from neardup.store import Store
from neardup.store._tail import TAIL_DOCS, TAIL_MAX

KIND, PARAMS = "minhash", "minhash-tail"


def _open(path: Path, **kw: object) -> Store:
    return Store.open(path, kind=KIND, params=PARAMS, **kw)  # type: ignore[arg-type]


def _rows(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT count(*) FROM tail").fetchone()[0])
    finally:
        conn.close()


def test_buffered_writes_are_found_by_every_reader(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with _open(path, cache=True) as w, _open(path, readonly=True) as r:
        w.add_many(["a", "b"], [b"A", b"B"], np.array([[1, 2], [3, 4]]), buffered=True)
        w.add_many(["c"], [b"C"], np.array([[1, 9]]), buffered=True)
        assert _rows(path) == 2
        for s in (w, r):
            assert s.candidates(np.array([1, 0])) == [("a", b"A"), ("c", b"C")]
            assert s.get("b") == b"B" and len(s) == 3
        # a replaced key is found through its tail key entry
        w.add_many(["a"], [b"A2"], np.array([[7, 7]]), buffered=True)
        assert r.get("a") == b"A2" and len(r) == 3
        assert [k for k, _ in r.candidates(np.array([1, 0]))] == ["c"]
        assert w.remove("c") and r.get("c") is None
        assert w.check()["problems"] == [] and w.stats()["lookup_rows"] == 8
        assert w.flush_tail() and _rows(path) == 0
        assert r.get("a") == b"A2" and [k for k, _ in r.candidates(np.array([7, 0]))] == ["a"]
        assert w.check()["problems"] == []


def test_the_tail_becomes_segments_when_full_and_on_compaction(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with _open(path, cache=True) as w:
        for i in range(TAIL_DOCS + 3):
            w.add_many([f"k{i}"], [b"x"], np.array([[i, i + 1]]), buffered=True)
        assert _rows(path) == TAIL_DOCS + 3 and w.merge_step() and _rows(path) == 0
        for i in range(TAIL_DOCS + 3, TAIL_DOCS + 5 + TAIL_MAX):  # no idle moment
            w.add_many([f"k{i}"], [b"x"], np.array([[i, i + 1]]), buffered=True)
        assert _rows(path) == 1  # the write past TAIL_MAX wrote segments, the next one a row
        assert len(w) == TAIL_DOCS + 5 + TAIL_MAX and w.check()["problems"] == []
        assert [k for k, _ in w.candidates(np.array([5, 0]))] == ["k5"]
        w.add_many(["k5"], [b"y"], np.array([[1, 1]]), buffered=True)
        w.compact()
        assert _rows(path) == 0 and w.check()["problems"] == []
        assert w.candidates(np.array([5, 0])) == [] and w.get("k5") == b"y"


_KILLED = """
import os, sys, numpy as np
from neardup.store import Store
s = Store.open(sys.argv[1], kind="minhash", params="minhash-tail", cache=True,
               synchronous="normal")
for i in range(40):
    s.add_many([f"k{i}"], [b"x%d" % i], np.array([[i, 100 + i]]), buffered=True)
print("ok", flush=True)
os.kill(os.getpid(), 9)
"""


def test_a_killed_writer_leaves_its_tail_committed(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED, str(path)], env=env, capture_output=True, text=True
    )
    assert proc.returncode == -signal.SIGKILL and proc.stdout.strip() == "ok"
    with _open(path, readonly=True) as r:
        assert len(r) == 40 and r.check()["problems"] == []
        assert [k for k, _ in r.candidates(np.array([7, 0]))] == ["k7"]
        assert r.get("k39") == b"x39"
    with _open(path) as w:  # a new writer takes the tail over
        w.add_many(["k7"], [b"new"], np.array([[1, 1]]), buffered=True)
        assert len(w) == 40 and w.get("k7") == b"new" and w.flush_tail()
        assert w.check()["problems"] == []


def test_a_damaged_tail_row_is_reported_and_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with _open(path) as w:
        w.add_many(["a", "b"], [b"A", b"B"], np.array([[1, 2], [3, 4]]), buffered=True)
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE tail SET data = zeroblob(length(data))")
    conn.close()
    with _open(path, readonly=True) as r:
        report = r.check()
        assert not report["ok"] and any("tail row" in p for p in report["problems"])
        with pytest.raises(StoreError, match="damaged"):
            r.candidates(np.array([1, 0]))


def test_idle_checkpoints_wait_for_merge_step(tmp_path: Path) -> None:
    from neardup.store._base import CHECKPOINT_IDLE_BYTES

    path = tmp_path / "s.db"
    wal = tmp_path / "s.db-wal"
    with _open(path, cache=True, synchronous="normal", idle_checkpoints=True) as w:
        assert w._live().execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        w.add_many(["k"], [b"x"], np.array([[0, 1]]), buffered=True)
        # the backlog read from the -shm header is the WAL's frames (after its 32-byte header)
        assert w._wal() == (wal.stat().st_size - 32,) * 2 and w._wal()[0] > 0
        n = 1
        while not w.checkpoint_due():  # the bound is in bytes, not commits
            w.add_many([f"k{n}"], [b"x"], np.array([[n, 1]]), buffered=True)
            n += 1
        while w.merge_step():  # a checkpoint (and a tail flush, if a second passed)
            pass
        assert w._wal()[1] == 0 and len(w) == n and not w.checkpoint_due()
        size = wal.stat().st_size
        w.add_many(["again"], [b"x"], np.array([[n, 1]]), buffered=True)
        # every frame was copied back: the next commit starts the WAL from its beginning
        assert 0 < w._wal()[1] == w._wal()[0] < CHECKPOINT_IDLE_BYTES
        assert wal.stat().st_size == size
        assert w.check()["problems"] == []


def test_a_writer_without_idle_moments_bounds_its_wal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from neardup.store import _base

    monkeypatch.setattr(_base, "CHECKPOINT_MAX_BYTES", 1 << 20)
    path = tmp_path / "s.db"
    with _open(path, cache=True, synchronous="normal", idle_checkpoints=True) as w:
        for i in range(40):  # no merge_step: the writes themselves checkpoint past the bound
            w.add_many([f"k{i}"], [b"x"], np.array([[i, 1]]), buffered=True)
            assert w._wal()[0] < (1 << 20) + (1 << 19)
        assert (tmp_path / "s.db-wal").stat().st_size < 3 << 20
    with _open(path, readonly=True) as r:
        assert len(r) == 40 and r.check()["problems"] == []


def test_a_checkpoint_from_another_connection_lets_the_wal_start_again(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with _open(path, cache=True, synchronous="normal", idle_checkpoints=True) as w:
        w.add_many(["a"], [b"x"], np.array([[0, 1]]), buffered=True)
        with _open(path, synchronous="normal", idle_checkpoints=True, quick_check=False) as c:
            for i in range(3):
                w.add_many([f"k{i}"], [b"x"], np.array([[i + 1, 1]]), buffered=True)
                length = w._wal()[0]
                assert c.checkpoint()  # every frame copied, from the other connection
                assert w._wal() == (length, 0) and not w.checkpoint_due()
                w.add_many([f"j{i}"], [b"x"], np.array([[i + 9, 1]]), buffered=True)
                assert 0 < w._wal()[0] < length  # started again from its beginning
        assert len(w) == 7 and w.check()["problems"] == []
