"""The writer hands its WAL checkpoints and the costly part of its segment merges to the
housekeeping thread (``neardup.serve.housekeeper``): they run there, the WAL stays bounded,
and every document is stored and found."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from neardup.store import Store
from neardup.store.persistent import PersistentIndex

from .serving import WAIT, start_thread_server, text


def test_checkpoints_and_merges_run_on_the_housekeeper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from neardup.store import _base
    from neardup.store import sqlite as store_sqlite

    # small bounds, so that a few requests need checkpoints, tail flushes and merges
    monkeypatch.setattr(_base, "CHECKPOINT_IDLE_BYTES", 1 << 19)
    monkeypatch.setattr(_base, "CHECKPOINT_RESTART_BYTES", 2 << 20)
    monkeypatch.setattr(store_sqlite, "TAIL_SECONDS", 0.01)
    seen: dict[str, list[str]] = {"checkpoint": [], "prepare_merge": [], "apply": []}

    def counted(name: str, method: Any) -> Any:
        def wrapper(self: Store, *args: Any) -> Any:
            seen[name].append(threading.current_thread().name)
            return method(self, *args)

        return wrapper

    monkeypatch.setattr(Store, "checkpoint", counted("checkpoint", Store.checkpoint))
    monkeypatch.setattr(Store, "prepare_merge", counted("prepare_merge", Store.prepare_merge))
    monkeypatch.setattr(Store, "apply_merge", counted("apply", Store.apply_merge))
    path = tmp_path / "h.db"
    run = start_thread_server(path)
    try:
        http = run.http()
        n = 0
        deadline = time.monotonic() + WAIT
        while not seen["apply"] or n < 60:  # one document a request: small group commits
            assert time.monotonic() < deadline, f"no merge written after {n} requests: {seen}"
            docs = [{"id": f"d{n}", "text": text(n)}]
            assert http.post("/v1/check", json={"documents": docs}).status_code == 200
            n += 1
            time.sleep(0.005)  # idle moments for the writer
        wal = path.with_name(path.name + "-wal")
        assert wal.stat().st_size < 4 << 20  # started again from its beginning, not grown
        assert http.get("/v1/stats").json()["documents"] == n
        # every document is found again by its own text
        got = http.post("/v1/query", json={"documents": [{"id": "q", "text": text(7)}]}).json()
        assert "d7" in [d["id"] for d in got["results"][0]["duplicates"]]
    finally:
        run.stop()
    # most checkpoints on the housekeeper; the writer's own only to let the WAL start again
    ours = seen["checkpoint"].count("neardup-writer")
    assert seen["checkpoint"].count("neardup-housekeeper") > ours, seen["checkpoint"]
    assert set(seen["prepare_merge"]) == {"neardup-housekeeper"}
    assert set(seen["apply"]) == {"neardup-writer"}
    with PersistentIndex.open(path, readonly=True) as idx:
        report = idx.store.check()
    assert report["ok"], report["problems"]
