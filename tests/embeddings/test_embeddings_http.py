"""Cloud providers against a real HTTP server on 127.0.0.1 that speaks each service's shapes."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

pytest.importorskip("httpx")

from neardup.embeddings import (
    CohereProvider,
    OpenAIProvider,
    RetryPolicy,
    VoyageProvider,
)
from neardup.embeddings.providers import _HttpProvider
from neardup.errors import ConfigError, ProviderError, TimeoutError

KEY = "sk-test-SECRET-7f3a9c"
DIM = 8


def vector_for(text: str) -> list[float]:
    """A deterministic vector per text, so tests can check row order."""
    codes = [ord(c) for c in text[:DIM]] + [0] * DIM
    return [float(len(text)), *map(float, codes[: DIM - 1])]


@dataclass
class FakeAPI:
    """One server for all three services: /v1/embeddings (OpenAI, Voyage) and /v1/embed (Cohere).

    ``script`` is consumed one entry per request: ``("ok",)``, ``("status", code, headers,
    body)`` or ``("hang", seconds)``; when empty, requests succeed.
    """

    script: list[tuple[object, ...]] = field(default_factory=list)
    requests: list[dict[str, object]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    base_url: str = ""
    providers: list[_HttpProvider] = field(default_factory=list)

    def track(self, provider: _HttpProvider) -> _HttpProvider:
        """Close ``provider``'s connection pool at teardown (unclosed sockets warn)."""
        self.providers.append(provider)
        return provider

    def next_action(self, record: dict[str, object]) -> tuple[object, ...]:
        with self.lock:
            self.requests.append(record)
            return self.script.pop(0) if self.script else ("ok",)


def make_handler(api: FakeAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # silence stderr
            pass

        def send_json(self, code: int, obj: object, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            record = {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
            action = api.next_action(record)
            if action[0] == "hang":
                api.stop.wait(float(action[1]))  # type: ignore[arg-type]
                self.close_connection = True
                return
            if action[0] == "status":
                _, code, headers, payload = action
                self.send_json(code, payload, headers)  # type: ignore[arg-type]
                return
            if action[0] == "raw":
                data = str(action[1]).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            if self.headers.get("Authorization") != f"Bearer {KEY}":
                # Real services echo part of a wrong key; this one echoes all of it.
                wrong = str(self.headers.get("Authorization", "")).removeprefix("Bearer ")
                self.send_json(401, {"error": {"message": f"Incorrect API key provided: {wrong}"}})
                return
            if self.path == "/v1/embeddings":
                texts = body.get("input")
                if not isinstance(texts, list) or "model" not in body:
                    self.send_json(400, {"error": {"message": "model and input are required"}})
                    return
                data = [
                    {"object": "embedding", "index": i, "embedding": vector_for(t)}
                    for i, t in enumerate(texts)
                ]
                data.reverse()  # the index field, not the position, gives the order
                self.send_json(200, {"object": "list", "data": data, "model": body["model"]})
                return
            if self.path == "/v1/embed":
                texts = body.get("texts")
                if not isinstance(texts, list) or "input_type" not in body or "model" not in body:
                    self.send_json(400, {"message": "model, texts and input_type are required"})
                    return
                self.send_json(
                    200,
                    {"id": "x", "texts": texts, "embeddings": [vector_for(t) for t in texts]},
                )
                return
            self.send_json(404, {"message": "not found"})

    return Handler


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    fake = FakeAPI()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(fake))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield fake
    finally:
        for provider in fake.providers:
            provider.close()
        fake.stop.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


FAST = RetryPolicy(initial_backoff=0.01, max_backoff=0.05, deadline=5.0, timeout=2.0)
PROVIDERS: list[type[_HttpProvider]] = [OpenAIProvider, VoyageProvider, CohereProvider]


def make(cls: type[_HttpProvider], api: FakeAPI, **kwargs: object) -> _HttpProvider:
    kwargs.setdefault("api_key", KEY)
    kwargs.setdefault("retry", FAST)
    kwargs.setdefault("dimension", DIM)
    kwargs.setdefault("seed", 1)
    return api.track(cls("test-model", base_url=api.base_url, **kwargs))  # type: ignore[arg-type]


def texts_of(body: object) -> list[str]:
    assert isinstance(body, dict)
    return body.get("input") or body["texts"]  # type: ignore[no-any-return]


def assert_no_key(caplog: pytest.LogCaptureFixture, *objects: object) -> None:
    for record in caplog.records:
        assert KEY not in record.getMessage()
        assert KEY not in str(record.args)
    for obj in objects:
        seen: BaseException | None = obj if isinstance(obj, BaseException) else None
        assert KEY not in str(obj) and KEY not in repr(obj)
        while seen is not None:  # the whole chain of causes
            assert KEY not in str(seen) and KEY not in repr(seen)
            seen = seen.__cause__ or seen.__context__


@pytest.mark.parametrize("cls", PROVIDERS)
def test_batching_and_shapes(cls: type[_HttpProvider], api: FakeAPI) -> None:
    provider = make(cls, api, batch_size=3)
    texts = [f"text number {i}" for i in range(7)]
    out = provider.embed(texts)
    assert out.dtype == np.float32 and out.shape == (7, DIM) and out.flags.c_contiguous
    np.testing.assert_array_equal(out, np.array([vector_for(t) for t in texts], np.float32))
    assert [len(texts_of(r["body"])) for r in api.requests] == [3, 3, 1]
    assert [t for r in api.requests for t in texts_of(r["body"])] == texts
    body = api.requests[0]["body"]
    assert isinstance(body, dict) and body["model"] == "test-model"
    if cls is CohereProvider:
        assert api.requests[0]["path"] == "/v1/embed" and body["input_type"] == "search_document"
    else:
        assert api.requests[0]["path"] == "/v1/embeddings" and "texts" not in body
    assert all(r["auth"] == f"Bearer {KEY}" for r in api.requests)


@pytest.mark.parametrize(
    ("cls", "n", "sizes"),
    [
        (OpenAIProvider, 2049, [2048, 1]),
        (VoyageProvider, 129, [128, 1]),
        (CohereProvider, 193, [96, 96, 1]),
    ],
)
def test_default_batch_limits(
    cls: type[_HttpProvider], n: int, sizes: list[int], api: FakeAPI
) -> None:
    out = make(cls, api).embed([f"t{i}" for i in range(n)])
    assert out.shape == (n, DIM)
    assert [len(texts_of(r["body"])) for r in api.requests] == sizes


def test_batch_size_limits_are_enforced() -> None:
    with pytest.raises(ConfigError, match="1 to 96"):
        CohereProvider(api_key=KEY, batch_size=97)
    with pytest.raises(ConfigError, match="1 to 2048"):
        OpenAIProvider(api_key=KEY, batch_size=2049)
    assert VoyageProvider(api_key=KEY, batch_size=1000).batch_size == 1000


def test_voyage_input_type(api: FakeAPI) -> None:
    make(VoyageProvider, api, input_type="query").embed(["a"])
    make(VoyageProvider, api).embed(["a"])
    assert api.requests[0]["body"]["input_type"] == "query"  # type: ignore[index]
    assert "input_type" not in api.requests[1]["body"]  # type: ignore[operator]
    with pytest.raises(ConfigError, match="input_type"):
        VoyageProvider(api_key=KEY, input_type="passage")
    with pytest.raises(ConfigError, match="input_type"):
        CohereProvider(api_key=KEY, input_type="document")


def test_cohere_v2_float_embeddings_shape(api: FakeAPI) -> None:
    api.script.append(("status", 200, {}, {"embeddings": {"float": [vector_for("hi")]}}))
    out = make(CohereProvider, api).embed(["hi"])
    np.testing.assert_array_equal(out[0], vector_for("hi"))


@pytest.mark.parametrize("cls", PROVIDERS)
def test_429_retry_after_is_honoured(
    cls: type[_HttpProvider], api: FakeAPI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    slept: list[float] = []
    api.script.append(("status", 429, {"Retry-After": "2"}, {"error": "slow down"}))
    out = make(cls, api, sleep=slept.append).embed(["alpha", "beta"])
    assert out.shape == (2, DIM)
    assert slept == [2.0]  # exactly the server's value, no jitter
    assert len(api.requests) == 2
    assert any("HTTP 429" in r.getMessage() for r in caplog.records)
    assert_no_key(caplog)


def test_429_retry_after_real_wait(api: FakeAPI) -> None:
    api.script.append(("status", 429, {"Retry-After": "1"}, {}))
    start = time.monotonic()
    make(OpenAIProvider, api).embed(["x"])
    assert time.monotonic() - start >= 0.95
    assert len(api.requests) == 2


def test_retry_after_is_capped(api: FakeAPI) -> None:
    slept: list[float] = []
    api.script.append(("status", 503, {"Retry-After": "120"}, {}))
    policy = RetryPolicy(initial_backoff=0.01, max_retry_after=0.25, deadline=5.0)
    make(OpenAIProvider, api, sleep=slept.append, retry=policy).embed(["x"])
    assert slept == [0.25]


@pytest.mark.parametrize("cls", PROVIDERS)
def test_500_then_success(
    cls: type[_HttpProvider], api: FakeAPI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    slept: list[float] = []
    api.script.append(("status", 500, {}, {"error": "boom"}))
    out = make(cls, api, sleep=slept.append).embed(["one"])
    np.testing.assert_array_equal(out[0], vector_for("one"))
    assert len(api.requests) == 2 and len(slept) == 1
    assert 0.01 * 0.7 <= slept[0] <= 0.01 * 1.3  # first backoff, ±30% jitter
    assert_no_key(caplog)


def test_exponential_backoff_with_jitter_and_cap(api: FakeAPI) -> None:
    slept: list[float] = []
    api.script.extend([("status", code, {}, {}) for code in (502, 503, 504, 408, 425, 500)])
    policy = RetryPolicy(initial_backoff=0.01, max_backoff=0.08, deadline=10.0)
    make(OpenAIProvider, api, sleep=slept.append, retry=policy).embed(["x"])
    bases = [0.01, 0.02, 0.04, 0.08, 0.08, 0.08]
    assert len(slept) == len(bases)
    for got, base in zip(slept, bases, strict=True):
        assert base * 0.7 - 1e-12 <= got <= base * 1.3 + 1e-12
    assert len({round(s / b, 9) for s, b in zip(slept, bases, strict=True)}) > 1  # jittered


def test_jitter_is_seeded(api: FakeAPI) -> None:
    runs = []
    for _ in range(2):
        slept: list[float] = []
        api.script.extend([("status", 503, {}, {})] * 3)
        make(OpenAIProvider, api, sleep=slept.append, seed=42).embed(["x"])
        runs.append(slept)
    assert runs[0] == runs[1]


@pytest.mark.parametrize("cls", PROVIDERS)
def test_hang_hits_the_deadline(
    cls: type[_HttpProvider], api: FakeAPI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    api.script.extend([("hang", 10)] * 50)
    policy = RetryPolicy(initial_backoff=0.01, deadline=0.8, timeout=0.25)
    start = time.monotonic()
    with pytest.raises(TimeoutError, match="deadline") as info:
        make(cls, api, retry=policy).embed(["x"])
    elapsed = time.monotonic() - start
    # the deadline, not the hangs (50 x 0.25 s timeouts, 10 s each unbounded): the upper bound
    # is loose, a loaded machine may run late
    assert 0.7 <= elapsed < 10
    # several timed-out attempts, then the deadline (a loaded server may not log every one)
    assert 1 <= len(api.requests) <= 5
    retries = [r for r in caplog.records if r.name == "neardup.embeddings.http"]
    assert 1 <= len(retries) <= 5 and all("ReadTimeout" in r.getMessage() for r in retries)
    assert isinstance(info.value, builtins_timeout())
    assert "ReadTimeout" in str(info.value)
    assert_no_key(caplog, info.value)


def builtins_timeout() -> type[BaseException]:
    import builtins

    return builtins.TimeoutError


def test_sleep_is_clamped_to_the_deadline(api: FakeAPI) -> None:
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        time.sleep(seconds)

    api.script.extend([("status", 429, {"Retry-After": "30"}, {})] * 5)
    policy = RetryPolicy(deadline=1.5)
    start = time.monotonic()
    with pytest.raises(TimeoutError, match=r"HTTP 429"):
        make(OpenAIProvider, api, sleep=sleep, retry=policy).embed(["x"])
    assert time.monotonic() - start < 20  # not the 30 s the server asked for (loose under load)
    assert slept and all(s <= 1.5 for s in slept) and max(slept) > 0.5
    assert len(api.requests) == 1


def test_connection_refused_is_retried_until_the_deadline(caplog: pytest.LogCaptureFixture) -> None:
    import socket

    with socket.socket() as sock:  # a port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    caplog.set_level(logging.DEBUG)
    # a deadline long enough for two refused attempts on a loaded machine
    policy = RetryPolicy(initial_backoff=0.02, deadline=1.5, timeout=0.2)
    provider = OpenAIProvider(
        api_key=KEY, base_url=f"http://127.0.0.1:{port}/v1", retry=policy, dimension=DIM
    )
    with provider, pytest.raises(TimeoutError, match="ConnectError") as info:
        provider.embed(["x"])
    assert sum("ConnectError" in r.getMessage() for r in caplog.records) >= 2
    assert_no_key(caplog, info.value)


@pytest.mark.parametrize("cls", PROVIDERS)
def test_401_fails_at_once(
    cls: type[_HttpProvider], api: FakeAPI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = KEY + "-revoked"
    slept: list[float] = []
    provider = make(cls, api, api_key=wrong, sleep=slept.append)
    with pytest.raises(ProviderError, match="HTTP 401") as info:
        provider.embed(["x"])
    assert len(api.requests) == 1 and slept == []
    message = str(info.value)
    assert "check the API key" in message and provider.env_vars[0] in message
    assert "Incorrect API key provided: ***" in message  # the echoed key is scrubbed
    assert wrong not in message and wrong not in repr(provider)
    for record in caplog.records:
        assert wrong not in record.getMessage()
    assert_no_key(caplog, info.value, provider)


@pytest.mark.parametrize(
    ("code", "hint"), [(400, "model name"), (403, "account"), (404, "base_url")]
)
def test_other_client_errors_fail_at_once(code: int, hint: str, api: FakeAPI) -> None:
    api.script.append(("status", code, {}, {"error": "nope"}))
    with pytest.raises(ProviderError, match=hint):
        make(OpenAIProvider, api).embed(["x"])
    assert len(api.requests) == 1


def test_bad_responses_are_provider_errors(api: FakeAPI) -> None:
    provider = make(OpenAIProvider, api)
    api.script.append(("raw", "<html>proxy login</html>"))
    with pytest.raises(ProviderError, match="not JSON"):
        provider.embed(["x"])
    api.script.append(("status", 200, {}, {"data": []}))
    with pytest.raises(ProviderError, match="no embeddings"):
        provider.embed(["x"])
    api.script.append(("status", 200, {}, {"data": [{"index": 0, "embedding": [1.0] * DIM}]}))
    with pytest.raises(ProviderError, match="1 embeddings for 2 texts"):
        provider.embed(["x", "y"])
    api.script.append(("status", 200, {}, {"result": []}))
    with pytest.raises(ProviderError, match="'data' list"):
        provider.embed(["x"])
    api.script.append(("status", 200, {}, {"data": [{"index": 0, "embedding": [1.0, 2.0]}]}))
    with pytest.raises(ProviderError, match="dimension 2"):
        provider.embed(["x"])


def test_unknown_model_learns_its_dimension(api: FakeAPI) -> None:
    provider = api.track(
        OpenAIProvider("my-proxy-model", api_key=KEY, base_url=api.base_url, retry=FAST)
    )
    assert provider.dimension == 1536
    assert provider.embed(["x"]).shape == (1, DIM)
    assert provider.dimension == DIM


def test_empty_input_sends_nothing(api: FakeAPI) -> None:
    out = make(CohereProvider, api).embed([])
    assert out.shape == (0, DIM) and out.dtype == np.float32
    assert api.requests == []
    with pytest.raises(ConfigError, match="sequence of str"):
        make(CohereProvider, api).embed("one text")  # type: ignore[arg-type]


def test_keys_from_the_environment(monkeypatch: pytest.MonkeyPatch, api: FakeAPI) -> None:
    for name in ("OPENAI_API_KEY", "VOYAGE_API_KEY", "CO_API_KEY", "COHERE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIProvider()
    with pytest.raises(ConfigError, match="CO_API_KEY or COHERE_API_KEY"):
        CohereProvider()
    monkeypatch.setenv("COHERE_API_KEY", KEY)
    api.track(CohereProvider(base_url=api.base_url, dimension=DIM)).embed(["x"])
    assert api.requests[-1]["auth"] == f"Bearer {KEY}"
    monkeypatch.setenv("CO_API_KEY", "other")
    assert "other" not in repr(CohereProvider())
    monkeypatch.setenv("VOYAGE_API_KEY", KEY)
    api.track(VoyageProvider(base_url=api.base_url, dimension=DIM)).embed(["x"])
    assert api.requests[-1]["auth"] == f"Bearer {KEY}"


def test_repr_and_model_id_hide_the_key() -> None:
    for cls in PROVIDERS:
        provider = cls(api_key=KEY)
        assert KEY not in repr(provider) and KEY not in str(provider)
        assert KEY not in repr(provider._client) and KEY not in repr(vars(provider))
        assert provider.model_id.startswith(cls.service.lower() + ":")


def test_bad_configuration() -> None:
    with pytest.raises(ConfigError, match="http:// or https://"):
        OpenAIProvider(api_key=KEY, base_url="ftp://example.org")
    with pytest.raises(ConfigError, match="dimension"):
        OpenAIProvider(api_key=KEY, dimension=0)
    with pytest.raises(ConfigError, match="jitter"):
        RetryPolicy(jitter=1.5)
    with pytest.raises(ConfigError, match="deadline"):
        RetryPolicy(deadline=0)
    with pytest.raises(ConfigError, match="multiplier"):
        RetryPolicy(multiplier=0.5)


def test_provider_is_a_context_manager(api: FakeAPI) -> None:
    with make(OpenAIProvider, api) as provider:
        provider.embed(["x"])
    provider.embed(["y"])  # reopens after close
    assert len(api.requests) == 2
