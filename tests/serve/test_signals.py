"""``neardup serve`` as a process: SIGTERM drains the requests in flight and exits 0; after a
SIGKILL under load and a restart, every acknowledged document is there and the store passes
its integrity check. Waits are bounded; nothing asserts a time."""

from __future__ import annotations

import signal
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.cli import main
from neardup.io import Document
from neardup.serve.client import Client
from neardup.store.persistent import PersistentIndex

from .serving import WAIT, start_process, text

httpx = pytest.importorskip("httpx")


def _stored_ids(db: Path) -> set[str]:
    with PersistentIndex.open(db, readonly=True) as idx:
        return {k for keys, _ in idx.store.iter_sketches() for k in keys}


def _queued(url: str) -> float:
    for line in httpx.get(f"{url}/metrics", timeout=WAIT).text.splitlines():
        if line.startswith("neardup_queue_documents "):
            return float(line.split()[1])
    return 0.0


def test_sigterm_drains_requests_in_flight_and_exits_0(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    # the writer waits 2 s to gather a group: the requests are in flight when SIGTERM comes
    server = start_process(["--index", str(db), "--commit-delay", "2"])
    answers: list[httpx.Response] = []

    def send(i: int) -> None:
        docs = [{"id": f"{i}-{j}", "text": text(100 * i + j)} for j in range(4)]
        answers.append(httpx.post(f"{server.url}/v1/check", json={"documents": docs}, timeout=WAIT))

    threads = [threading.Thread(target=send, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + WAIT
    while _queued(server.url) < 16:
        assert time.monotonic() < deadline, "the requests never arrived"
        time.sleep(0.05)
    server.proc.send_signal(signal.SIGTERM)
    for t in threads:
        t.join(WAIT)
    assert [r.status_code for r in answers] == [200] * 4
    assert all(res["added"] for r in answers for res in r.json()["results"])
    assert server.wait() == 0
    assert any("SIGTERM: drained" in line for line in server.err), server.err
    assert _stored_ids(db) == {f"{i}-{j}" for i in range(4) for j in range(4)}


def test_acknowledged_documents_survive_sigkill_under_load(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    server = start_process(["--index", str(db)])
    acked: list[str] = []
    stop = threading.Event()

    def load(w: int) -> None:
        with httpx.Client(base_url=server.url, timeout=WAIT) as http:
            for i in range(2000):  # bounded, whatever happens
                if stop.is_set():
                    return
                ids = [f"w{w}-{i}-{j}" for j in range(8)]
                docs = [{"id": k, "text": text(hash(k) % 10**6)} for k in ids]
                try:
                    r = http.post("/v1/check", json={"documents": docs})
                except httpx.HTTPError:
                    return  # the server is gone: this request was never acknowledged
                if r.status_code == 200:
                    acked.extend(ids)

    workers = [threading.Thread(target=load, args=(w,)) for w in range(4)]
    for t in workers:
        t.start()
    deadline = time.monotonic() + WAIT
    while len(acked) < 400 and time.monotonic() < deadline:
        time.sleep(0.02)
    server.stop(signal.SIGKILL)  # mid-load: requests are being written
    stop.set()
    for t in workers:
        t.join(WAIT)
    assert len(acked) >= 400

    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    stored = _stored_ids(db)  # every row's checksum is checked as it is read
    assert set(acked) <= stored
    # every row and entry (the tail of the buffered group commits included) checks out, and an
    # acknowledged document is found by its lookup entries, not only by its key
    r = CliRunner().invoke(main, ["index", "check", "--index", str(db)])
    assert r.exit_code == 0, r.output
    sample = acked[:: max(1, len(acked) // 20)] + acked[-8:]
    with PersistentIndex.open(db, readonly=True) as idx:
        found = idx.query([Document(k, text(hash(k) % 10**6)) for k in sample])
    assert {m.query for m in found if m.key == m.query} == set(sample)

    again = start_process(["--index", str(db)])
    try:
        with Client(again.url) as client:
            assert int(str(client.stats()["documents"])) == len(stored)
            assert all(client.get(k) is not None for k in acked[:: max(1, len(acked) // 20)])
            assert client.add([("after-restart", text(1))]) == 1
    finally:
        assert again.stop() == 0


def test_command_line_errors_are_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    db = str(tmp_path / "c.db")
    r = runner.invoke(main, ["serve", "--index", db, "--host", "0.0.0.0"])
    assert r.exit_code == 1 and "loopback only" in r.output and "--api-key-file" in r.output
    keys = tmp_path / "keys"
    keys.write_text("tooshort read\n", encoding="utf-8")
    r = runner.invoke(main, ["serve", "--index", db, "--api-key-file", str(keys)])
    assert r.exit_code == 1 and "line 1" in r.output and "tooshort" not in r.output
    PersistentIndex.open(db, method="minhash", threshold=0.8).close()
    r = runner.invoke(main, ["serve", "--index", db, "--threshold", "0.5"])
    assert r.exit_code == 1 and "contradicts" in r.output
    r = runner.invoke(main, ["serve", "--index", db, "--max-documents", "10", "--queue-size", "5"])
    assert r.exit_code == 1 and "queue" in r.output
