"""API keys: read and write scopes, 401/403, constant-time comparison, keys never logged,
loopback only without keys."""

from __future__ import annotations

import hmac
import logging
from pathlib import Path

import pytest

from neardup.errors import ConfigError
from neardup.serve.auth import ApiKeys
from neardup.serve.config import ServeConfig

from .serving import READ_KEY, WRITE_KEY, Running, text

DOC = {"documents": [{"id": "a", "text": text(1)}]}


def test_no_key_is_401_with_a_bearer_challenge(keyed: Running) -> None:
    for headers in (
        {},
        {"Authorization": "Bearer wrong-key-0123456789"},
        {"Authorization": f"Basic {READ_KEY}"},
    ):
        r = keyed.http().post("/v1/check", json=DOC, headers=headers)
        assert r.status_code == 401
        assert r.headers["www-authenticate"].startswith("Bearer")
        assert r.json()["error"]["code"] == "unauthorized"
    for path in ("/v1/stats", "/metrics", "/v1/documents/a"):
        assert keyed.http().get(path).status_code == 401
    assert keyed.http().delete("/v1/documents/a").status_code == 401
    assert keyed.http().post("/v1/query", json=DOC).status_code == 401
    # liveness and the API description need no key
    assert keyed.http().get("/healthz").status_code == 200
    assert keyed.http().get("/openapi.json").json()["components"]["securitySchemes"]


def test_read_key_reads_and_gets_403_when_it_writes(keyed: Running) -> None:
    reader = keyed.http(READ_KEY)
    for policy in ("add", "skip-if-duplicate"):
        r = reader.post("/v1/check", json={**DOC, "policy": policy})
        assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
    assert reader.delete("/v1/documents/a").status_code == 403
    assert reader.post("/v1/check", json={**DOC, "policy": "query-only"}).status_code == 200
    assert reader.post("/v1/query", json=DOC).status_code == 200
    assert reader.get("/v1/stats").json()["documents"] == 0
    assert reader.get("/metrics").status_code == 200


def test_write_key_does_everything(keyed: Running) -> None:
    writer = keyed.http(WRITE_KEY)
    assert writer.post("/v1/check", json=DOC).json()["results"][0]["added"] is True
    assert writer.get("/v1/documents/a").status_code == 200
    assert keyed.http(READ_KEY).get("/v1/documents/a").status_code == 200
    assert writer.delete("/v1/documents/a").status_code == 200
    assert writer.get("/v1/stats").json()["documents"] == 0


def test_keys_are_never_logged(keyed: Running, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    keyed.http(READ_KEY).post("/v1/check", json=DOC)
    keyed.http("x" * 30).get("/v1/stats")
    keyed.http(WRITE_KEY).post(
        "/v1/check", content=b"{", headers={"content-type": "application/json"}
    )
    assert READ_KEY not in caplog.text and WRITE_KEY not in caplog.text
    assert READ_KEY not in repr(ApiKeys.from_lines([f"{READ_KEY} read"]))


def test_every_key_is_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = ApiKeys.from_lines([f"{'k' * 20}{i} read" for i in range(5)])
    calls: list[int] = []
    real = hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        calls.append(len(a) + len(b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", counting)
    for token in ("k" * 20 + "0", "k" * 20 + "4", "short", "x" * 500):
        calls.clear()
        keys.scope_of(token)
        assert calls == [64] * 5  # every key, as fixed-size digests, match or not


def test_key_file(tmp_path: Path) -> None:
    f = tmp_path / "keys"
    f.write_text(f"# service keys\n\n{READ_KEY} read\n{WRITE_KEY} write\n", encoding="utf-8")
    keys = ApiKeys.from_file(f)
    assert keys.scope_of(READ_KEY) == "read" and keys.allows(WRITE_KEY, "read")
    for content, what in (
        (f"{READ_KEY}\n", "line 1"),
        (f"{READ_KEY} admin\n", "line 1"),
        ("short read\n", "shorter than"),
        (f"{READ_KEY} read\n{READ_KEY} write\n", "twice"),
        ("# nothing\n", "no key"),
    ):
        f.write_text(content, encoding="utf-8")
        with pytest.raises(ConfigError, match=what) as info:
            ApiKeys.from_file(f)
        assert READ_KEY not in str(info.value)
    with pytest.raises(ConfigError, match="cannot read"):
        ApiKeys.from_file(tmp_path / "missing")


def test_without_keys_only_loopback(tmp_path: Path) -> None:
    for host in ("127.0.0.1", "::1", "localhost", "127.0.0.5"):
        ServeConfig(index="x", host=host)
    for host in ("0.0.0.0", "::", "192.0.2.1", "example.com"):
        with pytest.raises(ConfigError, match="loopback only"):
            ServeConfig(index="x", host=host)
    ServeConfig(index="x", host="0.0.0.0", keys=ApiKeys.from_lines([f"{READ_KEY} read"]))
