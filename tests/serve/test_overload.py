"""The bounded queue: past it a request is answered 503 with Retry-After at once, and the
client's retries get through once there is room again."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from neardup.serve.client import Client
from neardup.serve.config import Limits

from .serving import WAIT, start_thread_server, text


def test_overload_is_503_with_retry_after_and_nothing_is_lost(tmp_path: Path) -> None:
    # a long commit delay keeps the first request in flight while the others arrive
    limits = Limits(queue_documents=4, max_documents=4)
    run = start_thread_server(tmp_path / "o.db", limits=limits, commit_delay=3.0)
    try:
        answers: list[int] = []

        def send(i: int) -> None:
            docs = [{"id": f"{i}-{j}", "text": text(i * 10 + j)} for j in range(3)]
            r = run.http().post("/v1/check", json={"documents": docs})
            answers.append(r.status_code)

        first = threading.Thread(target=send, args=(0,))
        first.start()
        deadline = time.monotonic() + WAIT
        while run.service.inflight < 3:  # the first request holds 3 of the 4 places
            assert time.monotonic() < deadline
            time.sleep(0.01)
        r = run.http().post(
            "/v1/check", json={"documents": [{"id": "x1", "text": "a"}, {"id": "x2", "text": "b"}]}
        )
        assert r.status_code == 503
        assert r.headers["retry-after"] == "1"
        err = r.json()["error"]
        assert err["code"] == "overloaded" and "--queue-size" in err["message"]
        # reads are bounded by the same queue; health and metrics still answer
        assert run.http().get("/healthz").status_code == 200
        assert 'status="503"' in run.http().get("/metrics").text
        first.join(WAIT)
        assert answers == [200]
        # the client retries after Retry-After until there is room
        with Client(run.url, backoff=0.01, retries=20) as client:
            results = client.check([("y1", text(90)), ("y2", text(91))])
        assert [r.added for r in results] == [True, True]
        assert run.http().get("/v1/stats").json()["documents"] == 5
    finally:
        run.stop()


def test_many_concurrent_clients_all_answered(tmp_path: Path) -> None:
    limits = Limits(queue_documents=64, max_documents=16)
    run = start_thread_server(tmp_path / "c.db", limits=limits)
    try:
        added: list[int] = []
        errors: list[BaseException] = []

        def worker(w: int) -> None:
            try:
                with Client(run.url, batch_size=8, backoff=0.01, retries=50) as client:
                    docs = [(f"{w}-{i}", text(1000 * w + i)) for i in range(24)]
                    added.append(client.add(docs))
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(w,)) for w in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT)
        assert not errors and sum(added) == 8 * 24
        stats = run.http().get("/v1/stats").json()
        assert stats["documents"] == 8 * 24
        assert stats["service"]["group_commits"] <= 8 * 3  # groups formed or not: all there
    finally:
        run.stop()


def test_bytes_in_flight_are_bounded_too(tmp_path: Path) -> None:
    limits = Limits(queue_bytes=6000, max_body_bytes=6000)
    run = start_thread_server(tmp_path / "b.db", limits=limits, commit_delay=3.0)
    try:
        answers: list[int] = []
        big = {"documents": [{"id": "a", "text": text(1, 500)}]}  # about 4,000 bytes

        def send() -> None:
            answers.append(run.http().post("/v1/check", json=big).status_code)

        first = threading.Thread(target=send)
        first.start()
        deadline = time.monotonic() + WAIT
        while run.service.inflight < 1:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        r = run.http().post("/v1/check", json={"documents": [{"id": "b", "text": text(2, 500)}]})
        assert r.status_code == 503 and "bytes" in r.json()["error"]["message"]
        assert r.headers["retry-after"] == "1"
        first.join(WAIT)
        assert answers == [200]
    finally:
        run.stop()
