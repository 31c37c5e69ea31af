"""neardup.Client against a real service, and its retries against a scripted transport."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import neardup
from neardup.errors import InputError, ServiceError
from neardup.io import Document
from neardup.serve.client import Client
from neardup.serve.results import Duplicate, Result

from .serving import WRITE_KEY, Running, near, text

httpx = pytest.importorskip("httpx")


def test_client_is_lazily_exported_without_httpx() -> None:
    assert neardup.Client is Client
    code = (
        "import sys, neardup\n"
        "assert 'Client' in neardup.__all__\n"
        "print(sorted(m for m in ('httpx', 'starlette', 'uvicorn') if m in sys.modules))\n"
        "neardup.Client\n"
        "print(sorted(m for m in ('httpx', 'starlette', 'uvicorn') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.split("\n")[:2] == ["[]", "[]"]


def test_every_call(served: Running) -> None:
    a = text(1)
    with Client(served.url, batch_size=2) as client:
        assert client.health()
        results = client.check(
            [
                Document("a", a),
                ("b", text(2)),
                {"id": "c", "text": near(a, 1, 5)},
                {"id": 4, "text": text(3)},
                ("e", a),
            ]
        )  # three requests of at most 2: order kept across them
        assert [r.id for r in results] == ["a", "b", "c", "4", "e"]
        assert [r.duplicates[0].id for r in results if r.duplicates] == ["a", "a"]
        assert results[4].duplicates[0] == Duplicate("a", 1.0)
        assert client.add([("f", text(6))]) == 1
        skipped = client.check([("g", a)], policy="skip-if-duplicate")
        assert skipped[0].added is False
        found = client.query([("q", a)])
        assert [d.id for d in found[0].duplicates][:2] == ["a", "e"]
        assert client.get("a") is not None and client.get("nope") is None
        assert client.delete(["a", "nope"]) == 1 and client.delete("e") == 1
        stats = client.stats()
        assert stats["documents"] == 4 and stats["method"] == "minhash"
        with pytest.raises(ServiceError) as info:
            client.check([("x", 5)])  # type: ignore[list-item]
        assert info.value.status == 400 and info.value.code == "invalid_document"
        assert "'text' must be a string" in str(info.value)
        with pytest.raises(InputError):
            client.check([3.5])  # type: ignore[list-item]


def test_keys_and_odd_ids(keyed: Running) -> None:
    with Client(keyed.url) as anonymous:
        with pytest.raises(ServiceError) as info:
            anonymous.stats()
        assert info.value.status == 401 and "Authorization: Bearer" in str(info.value)
    with Client(keyed.url, WRITE_KEY) as client:
        assert WRITE_KEY not in repr(client)
        ids = ["a/b", "..", ".", "x y?#%", "ü"]
        assert client.add([(i, text(k)) for k, i in enumerate(ids)]) == len(ids)
        for i in ids:
            assert client.get(i) is not None, i
        assert client.delete(ids) == len(ids)


def _scripted(answers: list[object]) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        assert isinstance(answer, httpx.Response)
        return answer

    return httpx.MockTransport(handle), seen


def _ok(n: int) -> httpx.Response:
    results = [{"id": str(i), "added": True, "duplicates": []} for i in range(n)]
    return httpx.Response(200, json={"results": results})


def test_retries_on_no_answer_and_busy_then_succeeds() -> None:
    busy = httpx.Response(
        503, headers={"Retry-After": "0"}, json={"error": {"code": "overloaded", "message": "busy"}}
    )
    transport, seen = _scripted([httpx.ConnectError("refused"), busy, httpx.Response(429), _ok(2)])
    with Client("http://service", transport=transport, backoff=0.001) as client:
        assert client.check([("0", "x"), ("1", "y")]) == [
            Result("0", True, ()),
            Result("1", True, ()),
        ]
    assert len(seen) == 4
    body = json.loads(seen[-1].content)
    assert body["policy"] == "add" and len(body["documents"]) == 2


def test_gives_up_after_the_retries() -> None:
    transport, seen = _scripted([httpx.ReadTimeout("slow")] * 3)
    with (
        Client("http://service", transport=transport, retries=2, backoff=0.001) as client,
        pytest.raises(ServiceError, match="no answer after 3 tries") as info,
    ):
        client.stats()
    assert info.value.status == 0 and len(seen) == 3
    busy = httpx.Response(503, json={"error": {"code": "overloaded", "message": "busy"}})
    transport, seen = _scripted([busy, busy])
    with (
        Client("http://service", transport=transport, retries=1, backoff=0.001) as client,
        pytest.raises(ServiceError, match="503 overloaded: busy"),
    ):
        client.add([("a", "b")])


def test_no_retry_on_a_client_error_and_odd_answers() -> None:
    bad = httpx.Response(413, json={"error": {"code": "too_many_documents", "message": "split"}})
    transport, seen = _scripted([bad])
    with (
        Client("http://service", transport=transport) as client,
        pytest.raises(ServiceError, match="413 too_many_documents: split"),
    ):
        client.check([("a", "b")])
    assert len(seen) == 1
    transport, _ = _scripted([httpx.Response(200, text="<html>")])
    with (
        Client("http://service", transport=transport) as client,
        pytest.raises(ServiceError, match="not JSON"),
    ):
        client.stats()
    transport, _ = _scripted([httpx.Response(200, json={"results": []})])
    with (
        Client("http://service", transport=transport) as client,
        pytest.raises(ServiceError, match="one result per document"),
    ):
        client.check([("a", "b")])
    with pytest.raises(InputError):
        Client("http://service", batch_size=0)


def test_image_documents_are_sent_base64(tmp_path: Path) -> None:
    f = tmp_path / "x.png"
    f.write_bytes(b"\x89PNG fake")
    transport, seen = _scripted([_ok(2)])
    with Client("http://service", transport=transport) as client:
        client.check([Document("f", path=f), {"id": "g", "image": b"\x00\x01"}])
    docs = json.loads(seen[0].content)["documents"]
    assert docs == [{"id": "f", "image": "iVBORyBmYWtl"}, {"id": "g", "image": "AAE="}]
