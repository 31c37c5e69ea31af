"""Every endpoint of neardup serve over real HTTP: answers, order, policies, errors, limits."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest

from neardup.methods import make_method
from neardup.serve.config import Limits

from .serving import Running, near, start_thread_server, text


def check(run: Running, docs: list[dict[str, object]], **extra: object) -> list[dict[str, object]]:
    r = run.http().post("/v1/check", json={"documents": docs, **extra})
    assert r.status_code == 200, r.text
    results: list[dict[str, object]] = r.json()["results"]
    return results


def dup_ids(result: dict[str, object]) -> list[str]:
    return [d["id"] for d in result["duplicates"]]  # type: ignore[index, union-attr]


def test_check_add_reports_earlier_duplicates_in_order(served: Running) -> None:
    a = text(1)
    docs = [
        {"id": "a", "text": a},
        {"id": "b", "text": text(2)},
        {"id": "a2", "text": near(a, 1, 7)},  # duplicate of a, in the same request
    ]
    results = check(served, docs)
    assert [r["id"] for r in results] == ["a", "b", "a2"]
    assert [r["added"] for r in results] == [True, True, True]
    assert dup_ids(results[0]) == [] and dup_ids(results[1]) == []
    assert dup_ids(results[2]) == ["a"]
    sim = results[2]["duplicates"][0]["similarity"]  # type: ignore[index]
    assert 0.8 <= sim < 1.0
    # a later request sees both copies, most similar first
    later = check(served, [{"id": "a3", "text": a}], policy="query-only")
    assert later[0]["added"] is False
    assert dup_ids(later[0]) == ["a", "a2"]


def test_skip_if_duplicate_and_query_only_add_nothing_twice(served: Running) -> None:
    a = text(3)
    first = check(served, [{"id": "x", "text": a}], policy="skip-if-duplicate")
    assert first[0]["added"] is True
    again = check(
        served,
        [{"id": "y", "text": near(a, 1, 1)}, {"id": "z", "text": text(4)}],
        policy="skip-if-duplicate",
    )
    assert [r["added"] for r in again] == [False, True]
    assert dup_ids(again[0]) == ["x"]
    only = check(served, [{"id": "w", "text": text(5)}], policy="query-only")
    assert only[0] == {"id": "w", "added": False, "duplicates": []}
    stats = served.http().get("/v1/stats").json()
    assert stats["documents"] == 2  # x and z


def test_skipped_document_is_no_duplicate_of_a_later_one(served: Running) -> None:
    # y is skipped (duplicate of x), so the store never holds it: w is compared with x only
    a = text(6)
    check(served, [{"id": "x", "text": a}])
    results = check(
        served,
        [{"id": "y", "text": near(a, 1, 3)}, {"id": "w", "text": near(a, 1, 3)}],
        policy="skip-if-duplicate",
    )
    assert [r["added"] for r in results] == [False, False]
    assert dup_ids(results[1]) == ["x"]


def test_same_id_replaces_and_is_not_its_own_duplicate(served: Running) -> None:
    a = text(8)
    check(served, [{"id": 7, "text": a}])  # integer ids become strings
    again = check(served, [{"id": "7", "text": a}])
    assert again == [{"id": "7", "added": True, "duplicates": []}]
    other = check(served, [{"id": "8", "text": a}], policy="query-only")
    assert dup_ids(other[0]) == ["7"]  # one stored copy: the replaced one is gone
    q = served.http().post("/v1/query", json={"documents": [{"id": "7", "text": a}]})
    assert [d["id"] for d in q.json()["results"][0]["duplicates"]] == ["7"]  # query keeps it


def test_documents_get_and_delete(served: Running) -> None:
    check(served, [{"id": "dir/doc 1", "text": text(9)}])
    http = served.http()
    got = http.get("/v1/documents/dir%2Fdoc%201")
    assert got.status_code == 200
    assert got.json()["id"] == "dir/doc 1"
    assert base64.b64decode(got.json()["sketch"])
    assert http.get("/v1/documents/missing").status_code == 404
    gone = http.delete("/v1/documents/dir%2Fdoc%201")
    assert gone.json() == {"id": "dir/doc 1", "deleted": True}
    again = http.delete("/v1/documents/dir%2Fdoc%201")
    assert again.status_code == 404
    assert again.json()["error"]["code"] == "not_found"
    assert http.get("/v1/documents/dir%2Fdoc%201").status_code == 404


def test_stats_health_metrics_openapi(served: Running) -> None:
    check(served, [{"id": "a", "text": text(10)}, {"id": "b", "text": text(11)}])
    http = served.http()
    stats = http.get("/v1/stats").json()
    assert stats["documents"] == 2
    assert stats["method"] == "minhash" and stats["threshold"] == 0.8
    assert stats["parameters"]["num_perm"] == 128
    assert stats["store"]["bytes"] > 0
    assert stats["service"]["documents_added"] == 2
    assert http.get("/healthz").json() == {"status": "ok"}
    metrics = http.get("/metrics")
    assert metrics.headers["content-type"].startswith("text/plain; version=0.0.4")
    body = metrics.text
    assert 'neardup_requests_total{endpoint="/v1/check",method="POST",status="200"} 1' in body
    assert 'neardup_documents_total{outcome="added"} 2' in body
    assert "neardup_store_documents 2" in body
    assert 'neardup_request_duration_seconds_bucket{endpoint="/v1/check",le="+Inf"} 1' in body
    doc = http.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    assert {"/v1/check", "/v1/query", "/v1/documents/{id}", "/v1/stats"} <= set(doc["paths"])


def test_empty_documents(served: Running) -> None:
    assert check(served, []) == []
    r = served.http().post("/v1/query", json={"documents": []})
    assert r.json() == {"results": []}


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"{", 400, "invalid_json"),
        (b"[]", 400, "invalid_body"),
        (b'{"documents": {}}', 400, "invalid_body"),
        (b'{"docs": []}', 400, "invalid_body"),
        (b'{"documents": [], "policy": "maybe"}', 400, "invalid_policy"),
        (b'{"documents": [{"text": "x"}]}', 400, "invalid_id"),
        (b'{"documents": [{"id": "", "text": "x"}]}', 400, "invalid_id"),
        (b'{"documents": [{"id": true, "text": "x"}]}', 400, "invalid_id"),
        (b'{"documents": [{"id": "\\ud800", "text": "x"}]}', 400, "invalid_id"),
        (b'{"documents": [{"id": 99999999999999999999, "text": "x"}]}', 400, "invalid_id"),
        (b'{"documents": [{"id": "a", "text": 5}]}', 400, "invalid_document"),
        (b'{"documents": [{"id": "a", "image": "AAAA"}]}', 400, "invalid_document"),
        (b'{"documents": [{"id": "a", "text": "x", "extra": 1}]}', 400, "invalid_document"),
        (b'{"documents": [3]}', 400, "invalid_document"),
        (b'{"documents": [], "x": NaN}', 400, "invalid_json"),
        (b"[" * 100_000, 400, "invalid_json"),
        (b"\xff\xfe", 400, "invalid_json"),
    ],
)
def test_bad_bodies_are_4xx_json_that_say_what_to_fix(
    served: Running, body: bytes, status: int, code: str
) -> None:
    r = served.http().post("/v1/check", content=body, headers={"content-type": "application/json"})
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert err["code"] == code
    assert len(err["message"]) > 20 and "Traceback" not in r.text


def test_query_refuses_a_policy(served: Running) -> None:
    r = served.http().post("/v1/query", json={"documents": [], "policy": "add"})
    assert r.status_code == 400
    assert "/v1/check" in r.json()["error"]["message"]


def test_content_type_and_routes(served: Running) -> None:
    http = served.http()
    r = http.post("/v1/check", content=b"{}", headers={"content-type": "text/plain"})
    assert r.status_code == 415 and r.json()["error"]["code"] == "unsupported_media_type"
    assert http.get("/nowhere").json()["error"]["code"] == "not_found"
    r = http.get("/v1/check")
    assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"


def test_a_service_without_keys_answers_loopback_hosts_only(served: Running) -> None:
    # a DNS-rebinding page would send its own host name
    r = served.http().get("/v1/stats", headers={"host": "evil.example:8080"})
    assert r.status_code == 403 and r.json()["error"]["code"] == "host_not_allowed"
    assert served.http().get("/v1/stats", headers={"host": "localhost:1"}).status_code == 200


def test_size_limits_are_413(tmp_path: Path) -> None:
    limits = Limits(max_body_bytes=4000, max_documents=3, max_document_bytes=500)
    run = start_thread_server(tmp_path / "l.db", limits=limits)
    try:
        http = run.http()
        r = http.post("/v1/check", json={"documents": [{"id": "a", "text": "x" * 501}]})
        assert r.status_code == 413 and r.json()["error"]["code"] == "document_too_large"
        assert "--max-document-bytes" in r.json()["error"]["message"]
        r = http.post("/v1/check", json={"documents": [{"id": "a", "text": "é" * 300}]})
        assert r.status_code == 413  # 600 bytes of UTF-8
        docs = [{"id": str(i), "text": "x"} for i in range(4)]
        r = http.post("/v1/check", json={"documents": docs})
        assert r.status_code == 413 and r.json()["error"]["code"] == "too_many_documents"
        r = http.post("/v1/check", json={"documents": [{"id": "a", "text": "x" * 5000}]})
        assert r.status_code == 413 and r.json()["error"]["code"] == "body_too_large"

        def chunks() -> object:  # no Content-Length: the limit holds on the stream too
            for _ in range(10):
                yield b" " * 1000

        r = http.post("/v1/check", content=chunks(), headers={"content-type": "application/json"})
        assert r.status_code == 413
        r = http.post("/v1/check", json={"documents": [{"id": "a", "text": "x" * 400}]})
        assert r.status_code == 200
    finally:
        run.stop()


def _png(shade: int, size: int = 64) -> bytes:
    from PIL import Image

    img = Image.new("L", (size, size))
    img.putdata([(x * 4 + y * shade) % 256 for y in range(size) for x in range(size)])
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def test_images_as_base64(tmp_path: Path) -> None:
    pytest.importorskip("PIL")
    run = start_thread_server(tmp_path / "img.db", make_method("phash"))
    try:
        http = run.http()
        one, other = _png(3), _png(11)
        b64 = [base64.b64encode(x).decode() for x in (one, one, other)]
        docs = [{"id": f"i{i}", "image": s} for i, s in enumerate(b64)]
        results = http.post("/v1/check", json={"documents": docs}).json()["results"]
        assert [r["added"] for r in results] == [True, True, True]
        assert dup_ids(results[1]) == ["i0"] and dup_ids(results[2]) == []
        assert results[1]["duplicates"][0]["similarity"] == 1.0
        r = http.post("/v1/check", json={"documents": [{"id": "t", "text": "hello"}]})
        assert r.status_code == 400 and "image" in r.json()["error"]["message"]
        r = http.post("/v1/check", json={"documents": [{"id": "b", "image": "not base64!"}]})
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_image"
        junk = base64.b64encode(b"this is no image at all").decode()
        r = http.post("/v1/check", json={"documents": [{"id": "j", "image": junk}]})
        assert r.status_code == 400, r.text
        assert "document 0 (id 'j')" in r.json()["error"]["message"]
        schema = http.get("/openapi.json").json()["components"]["schemas"]["Document"]
        assert schema["required"] == ["id", "image"]
    finally:
        run.stop()


@pytest.mark.parametrize("method", ["simhash", "simhash-go"])
def test_every_text_method_of_the_store(tmp_path: Path, method: str) -> None:
    run = start_thread_server(tmp_path / f"{method}.db", make_method(method))
    try:
        a = text(20, 200)
        results = check(run, [{"id": "a", "text": a}, {"id": "b", "text": near(a, 1, 2)}])
        assert dup_ids(results[1]) == ["a"]
        stats = run.http().get("/v1/stats").json()
        assert stats["method"] == method and stats["documents"] == 2
    finally:
        run.stop()


def test_answers_are_json_with_unicode_ids(served: Running) -> None:
    results = check(served, [{"id": "naïve ✓", "text": text(30)}])
    assert results[0]["id"] == "naïve ✓"
    r = served.http().get("/v1/documents/na%C3%AFve%20%E2%9C%93")
    assert r.status_code == 200 and json.loads(r.content)["id"] == "naïve ✓"


def test_a_large_body_is_parsed_off_the_loop(served: Running) -> None:
    docs = [{"id": f"big{i}", "text": text(900 + i, 150)} for i in range(300)]
    assert len(json.dumps({"documents": docs})) > 256 * 1024
    results = check(served, docs)
    assert [r["id"] for r in results] == [d["id"] for d in docs]
    bad = served.http().post("/v1/check", json={"documents": [*docs, {"id": 5}]})
    assert bad.status_code == 400 and "document 300" in bad.json()["error"]["message"]


def test_a_failing_write_is_a_json_503_and_the_writer_goes_on(
    served: Running, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from neardup.errors import StoreError
    from neardup.serve.service import Service

    real = Service._commit
    failures = [StoreError("disk full; free some space"), RuntimeError("a bug")]

    def failing(self: Service, store: object, jobs: list[object]) -> object:
        if failures:
            raise failures.pop(0)
        return real(self, store, jobs)  # type: ignore[arg-type]

    monkeypatch.setattr(Service, "_commit", failing)
    for expected in ("disk full", "see the server log"):
        r = served.http().post("/v1/check", json={"documents": [{"id": "a", "text": text(1)}]})
        assert r.status_code == 503 and r.headers["retry-after"] == "1"
        assert r.json()["error"]["code"] == "store_unavailable"
        assert expected in r.json()["error"]["message"] and "Traceback" not in r.text
    assert "RuntimeError: a bug" in caplog.text  # the traceback is in the server's log
    assert check(served, [{"id": "a", "text": text(1)}])[0]["added"] is True
    assert served.http().get("/healthz").json() == {"status": "ok"}
