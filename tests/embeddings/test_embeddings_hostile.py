"""Hostile responses and bad keys for the HTTP providers (issue 19), via httpx.MockTransport."""

from __future__ import annotations

import gzip
import json
import logging

import pytest

from neardup.embeddings import OpenAIProvider, RetryPolicy
from neardup.errors import ConfigError, ProviderError

httpx = pytest.importorskip("httpx")

KEY = "sk-test-SECRET-42"


def provider(handler: object, **policy: object) -> OpenAIProvider:
    return OpenAIProvider(
        api_key=KEY,
        dimension=2,
        transport=httpx.MockTransport(handler),
        retry=RetryPolicy(deadline=5.0, initial_backoff=0.001, **policy),  # type: ignore[arg-type]
        sleep=lambda s: None,
    )


def ok_json(data: list[dict[str, object]]) -> httpx.Response:
    return httpx.Response(200, json={"data": data})


def test_key_with_newline_is_stripped_and_control_chars_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["authorization"])
        return ok_json([{"index": 0, "embedding": [1.0, 0.0]}])

    for key in (KEY + "\n", KEY + "\r\n", " " + KEY):
        p = OpenAIProvider(api_key=key, dimension=2, transport=httpx.MockTransport(handler))
        assert p.embed(["a"]).shape == (1, 2)
    assert seen == [f"Bearer {KEY}"] * 3
    with pytest.raises(ConfigError, match="control character") as info:
        OpenAIProvider(api_key="sk-a\nb", transport=httpx.MockTransport(handler))
    assert "sk-a" not in str(info.value)


def test_local_protocol_error_is_not_retried(caplog: pytest.LogCaptureFixture) -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        raise httpx.LocalProtocolError(f"Illegal header value b'Bearer {KEY}\\n'")

    with caplog.at_level(logging.WARNING), pytest.raises(ConfigError) as info:
        provider(handler).embed(["a"])
    assert len(calls) == 1 and KEY not in str(info.value) and KEY not in caplog.text


def test_scrub_hides_quoted_forms_of_the_key() -> None:
    client = provider(lambda r: ok_json([]))._client
    assert KEY not in client.scrub(f"b'Bearer {KEY}' and {KEY!r}")


def test_deeply_nested_json_is_a_provider_error() -> None:
    body = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(ProviderError, match="nested too deep"):
        provider(lambda r: httpx.Response(200, content=body)).embed(["a"])


def test_response_size_cap_and_gzip_bomb() -> None:
    bomb = gzip.compress(b" " * (4 << 20))  # 4 MiB of spaces in about 4 KiB
    headers = {"content-encoding": "gzip", "content-type": "application/json"}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=bomb, headers=headers)

    with pytest.raises(ProviderError, match="max_response_bytes"):
        provider(handler, max_response_bytes=1 << 20).embed(["a"])
    with pytest.raises(ConfigError):
        RetryPolicy(max_response_bytes=0)


def test_bad_gzip_body_is_a_provider_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"not gzip at all", headers={"content-encoding": "gzip"})

    with pytest.raises(ProviderError, match="cannot be decompressed"):
        provider(handler).embed(["a"])


@pytest.mark.parametrize(
    "data",
    [
        [{"index": 0, "embedding": ["0.5", "1"]}],  # string numbers
        [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 0, "embedding": [0.0, 1.0]}],
        [{"index": 0, "embedding": []}, {"index": 1, "embedding": []}],  # zero dimensions
        [{"index": 1, "embedding": [1.0, 0.0]}, {"index": 2, "embedding": [0.0, 1.0]}],
        [{"index": True, "embedding": [1.0, 0.0]}, {"index": 0, "embedding": [0.0, 1.0]}],
        [{"index": 0, "embedding": [None, 1.0]}, {"index": 1, "embedding": [0.0, 1.0]}],
    ],
    ids=["strings", "repeated-index", "zero-dim", "index-gap", "bool-index", "null"],
)
def test_malformed_vectors_are_refused(data: list[dict[str, object]]) -> None:
    texts = ["a", "b"][: max(len(data), 1)]
    with pytest.raises(ProviderError):
        provider(lambda r: ok_json(data)).embed(texts)


def test_good_response_still_ordered_by_index() -> None:
    data = [{"index": 1, "embedding": [0.0, 1.0]}, {"index": 0, "embedding": [1, 0]}]
    out = provider(lambda r: ok_json(data)).embed(["a", "b"])
    assert out.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert json.dumps(out.tolist())
