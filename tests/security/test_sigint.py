"""SIGINT stops `neardup dedup --index` with exit 130, keeping every committed batch (and
the batches gathered since the last commit: closing the index on the interrupt writes them).

The input is the child's stdin, kept open: the run is still going when the signal comes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oracles.store import committed_docs


def _count(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return committed_docs(conn)
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


#: Records written to the child's stdin before the interrupt: eight batches of 50. With
#: ``--jobs 2`` at most four batches are in flight, so at least four are committed by then.
RECORDS = 400
BATCH = 50


#: The CLI, in a child that takes SIGINT whatever it inherited: a process started with SIGINT
#: ignored (SIG_IGN survives exec, and Python then keeps it) or blocked (the mask survives
#: exec) never sees the signal, and the run went on to the end of its input (exit 0). Which a
#: test worker hands down depends on what ran in it before (a resource tracker, say).
_CHILD = """
import runpy, signal, sys
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.argv = ["neardup", *sys.argv[1:]]
runpy.run_module("neardup", run_name="__main__", alter_sys=True)
"""


def _started(db: Path) -> subprocess.Popen[bytes]:
    """The CLI run, fed :data:`RECORDS` lines on an open stdin, once it committed at least
    four batches (it then waits for more input)."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _CHILD,
            "dedup",
            "-",
            "-m",
            "simhash",
            "--index",
            str(db),
            "--batch-size",
            str(BATCH),
            # every batch committed as the run goes (the default, 2 s, would make the first
            # commit wait on the clock): the count below grows batch by batch, by construction
            "--commit-every",
            "0",
            # a fixed thread count: how many batches are in flight does not follow the machine
            "--jobs",
            "2",
            "-q",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stderr is not None
    try:
        # The input stays open: the run cannot finish, it waits for more lines, so the
        # signal always lands mid-run, however fast or loaded the machine is.
        for i in range(RECORDS):
            text = f"document {i} " + "lorem ipsum dolor " * 30
            proc.stdin.write((json.dumps({"id": f"{i:05d}", "text": text}) + "\n").encode())
        proc.stdin.flush()
        # a bound only for a broken build (nothing ever committed); a run takes seconds
        deadline = time.monotonic() + 300
        while _count(db) < 4 * BATCH and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read().decode()
        assert _count(db) >= 4 * BATCH, "no batch committed while the run waited for input"
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    return proc


def _whole_batches(db: Path) -> int:
    """The committed documents of an intact store: whole batches, none of the lines still
    being read."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        n = committed_docs(conn)
    finally:
        conn.close()
    assert 4 * BATCH <= n < RECORDS and n % BATCH == 0, n
    return n


@pytest.mark.skipif(os.name != "posix", reason="SIGINT delivery to a child is POSIX")
def test_sigint_exits_130_and_keeps_committed_batches(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    proc = _started(db)
    try:
        proc.send_signal(signal.SIGINT)
        _, raw = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:  # never leave the child running (a failed or timed-out test)
            proc.kill()
            proc.communicate()
    err = raw.decode()
    assert proc.returncode == 130, err  # the CLI caught the interrupt
    assert "Traceback" not in err
    assert "interrupted" in err
    _whole_batches(db)


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL of a child is POSIX")
def test_sigkill_keeps_what_the_writer_thread_committed(tmp_path: Path) -> None:
    """SIGKILL while the store's writer thread commits batch by batch: the store is intact
    and holds whole batches, at least those seen committed before the kill."""
    db = tmp_path / "store.db"
    proc = _started(db)
    seen = _count(db)
    proc.kill()
    proc.communicate(timeout=300)
    assert _whole_batches(db) >= seen
    from neardup.store.persistent import PersistentIndex

    with PersistentIndex.open(db) as index:
        report = index.store.check()
    assert report["ok"], report["problems"]
