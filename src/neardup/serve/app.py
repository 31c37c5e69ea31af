"""The HTTP layer of ``neardup serve``: a Starlette application over a :class:`Service`.

Every answer is JSON (``/metrics``: Prometheus text). A request the service refuses gets a 4xx
with ``{"error": {"code": ..., "message": ...}}`` saying what to fix; an overloaded service a
503 with ``Retry-After``; an unexpected failure a 500 with the same JSON shape and no
traceback (the traceback goes to the server's log).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import gc
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

from neardup._extras import require_extra
from neardup.errors import NeardupError, StoreError
from neardup.serve.auth import ApiKeys, Scope, bearer_token
from neardup.serve.config import is_loopback
from neardup.serve.metrics import CONTENT_TYPE, Metrics
from neardup.serve.openapi import openapi
from neardup.serve.requests import Batch, RequestError, document_id, parse_documents
from neardup.serve.service import Service
from neardup.serve.trace import Tracer, current, mark

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.types import ASGIApp, Message, Receive, Send
    from starlette.types import Scope as AsgiScope

__all__ = ["create_app", "endpoint_of"]

log = logging.getLogger(__name__)

_JSON_TYPES = ("application/json",)
_PARSE_ON_LOOP = 256 * 1024  # bodies at least this large are parsed on a reader thread
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

Handler = Callable[["Request"], Awaitable["Response"]]


def endpoint_of(path: str) -> str:
    """The endpoint label of a request path (``/v1/documents/{id}`` for every document).

    Examples:
        >>> endpoint_of("/v1/documents/a%2Fb"), endpoint_of("/v1/check"), endpoint_of("/x")
        ('/v1/documents/{id}', '/v1/check', 'other')
    """
    if path.startswith("/v1/documents/"):
        return "/v1/documents/{id}"
    if path in ("/v1/check", "/v1/query", "/v1/stats", "/healthz", "/metrics", "/openapi.json"):
        return path
    return "other"


def _host_name(header: str) -> str:
    """The host of a Host header, without its port."""
    header = header.strip()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def _dumps(data: object) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def create_app(
    service: Service,
    *,
    keys: ApiKeys | None,
    version: str,
    on_ready: Callable[[], None] | None = None,
    graceful_timeout: float = 30.0,
) -> ASGIApp:
    """The ASGI application: routes, authentication, limits, metrics and the lifespan that
    starts and drains ``service``.

    Args:
        service: The service (started by the application's startup, closed by its shutdown).
        keys: API keys (None: none needed, and the Host header must be a loopback name).
        version: The neardup version (in the OpenAPI document).
        on_ready: Called once the service is ready (e.g. to print the address).
        graceful_timeout: Seconds the shutdown waits for the writer to drain.

    Raises:
        MissingExtraError: Starlette is not installed (``pip install 'neardup[serve]'``).
    """
    require_extra("serve", "starlette")
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.requests import ClientDisconnect
    from starlette.responses import Response
    from starlette.routing import Route

    limits = service.limits
    metrics = service.metrics
    schema = _dumps(
        openapi(
            method=service.method.name,
            images=service.images,
            limits=limits,
            secured=keys is not None,
            version=version,
        )
    )

    def answer(data: object, status: int = 200, headers: dict[str, str] | None = None) -> Response:
        return Response(_dumps(data), status, headers, media_type="application/json")

    def error(status: int, code: str, message: str) -> Response:
        headers = {"Retry-After": str(limits.retry_after)} if status == 503 else None
        if status == 401:
            headers = {"WWW-Authenticate": 'Bearer realm="neardup"'}
        return answer({"error": {"code": code, "message": message}}, status, headers)

    def authorize(request: Request, scope: Scope) -> None:
        """Raise the 401/403 RequestError unless the request may do ``scope``."""
        if keys is None:
            host = _host_name(request.headers.get("host", ""))
            if not is_loopback(host):
                raise RequestError(
                    403,
                    "host_not_allowed",
                    f"this service has no API keys, so it answers loopback names only (the "
                    f"Host header names {host[:100]!r}); connect to 127.0.0.1 or localhost, "
                    "or start it with --api-key-file",
                )
            return
        token = bearer_token(request.headers.get("authorization"))
        have = None if token is None else keys.scope_of(token)
        if have is None:
            raise RequestError(
                401,
                "unauthorized",
                "a valid API key is needed: send the header 'Authorization: Bearer KEY' with "
                "a key of the service's key file",
            )
        if scope == "write" and have != "write":
            raise RequestError(
                403,
                "forbidden",
                "this key has read scope and the request writes (check with policy add or "
                "skip-if-duplicate, or delete); use a write key, or policy query-only",
            )

    def guarded(handler: Handler) -> Handler:
        @functools.wraps(handler)
        async def run(request: Request) -> Response:
            try:
                return await handler(request)
            except RequestError as exc:
                return error(exc.status, exc.code, str(exc))
            except StoreError as exc:
                log.error("store error: %s", exc)
                return error(503, "store_unavailable", f"the store cannot be used now: {exc}")
            except ClientDisconnect:
                return error(400, "client_disconnected", "the client closed the connection")
            except NeardupError as exc:
                return error(400, "invalid_request", str(exc))
            except Exception:
                log.exception("unexpected error on %s %s", request.method, request.url.path)
                return error(500, "internal", "an unexpected error; the server log has details")

        return run

    async def body(request: Request) -> bytes:
        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype not in _JSON_TYPES:
            raise RequestError(
                415,
                "unsupported_media_type",
                f"send the body as JSON with 'Content-Type: application/json' (got "
                f"{ctype[:60] or 'none'!r})",
            )
        cap = limits.max_body_bytes
        too_large = RequestError(
            413,
            "body_too_large",
            f"the body is over the {cap}-byte limit (--max-body-bytes); send fewer "
            "documents per request",
        )
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > cap:
            raise too_large
        parts: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > cap:
                raise too_large
            parts.append(chunk)
        return b"".join(parts)

    async def documents(request: Request, *, policy_allowed: bool) -> tuple[Batch, int]:
        """The request's documents (a large body is parsed on a reader thread, so the
        event loop keeps answering) and its size."""
        raw = await body(request)
        if len(raw) < _PARSE_ON_LOOP:
            parsed = parse_documents(
                raw, limits, images=service.images, policy_allowed=policy_allowed
            )
        else:
            parsed = await service.in_reader(
                functools.partial(
                    parse_documents,
                    limits=limits,
                    images=service.images,
                    policy_allowed=policy_allowed,
                ),
                raw,
            )
        mark("parsed")
        return parsed, len(raw)

    @guarded
    async def check(request: Request) -> Response:
        authorize(request, "read")
        batch, size = await documents(request, policy_allowed=True)
        if batch.policy != "query-only":
            authorize(request, "write")
        with service.admitted(len(batch.docs), size):
            results = await service.check(batch)
        return answer({"results": [r.to_dict() for r in results]})

    @guarded
    async def query(request: Request) -> Response:
        authorize(request, "read")
        batch, size = await documents(request, policy_allowed=False)
        with service.admitted(len(batch.docs), size):
            results = await service.query(batch)
        return answer({"results": [r.to_dict() for r in results]})

    def path_id(request: Request) -> str:
        return document_id(request.path_params["id"], "the path's id", limits)

    def not_found(key: str, what: str) -> RequestError:
        return RequestError(404, "not_found", f"no document with id {key[:200]!r} is stored{what}")

    async def document(request: Request) -> Response:
        if request.method == "DELETE":
            return await delete_document(request)
        return await get_document(request)

    @guarded
    async def get_document(request: Request) -> Response:
        authorize(request, "read")
        key = path_id(request)
        with service.admitted(1):
            sketch = await service.get(key)
        if sketch is None:
            raise not_found(key, "")
        return answer({"id": key, "sketch": base64.b64encode(sketch).decode("ascii")})

    @guarded
    async def delete_document(request: Request) -> Response:
        authorize(request, "write")
        key = path_id(request)
        with service.admitted(1):
            found = await service.delete(key)
        if not found:
            raise not_found(key, "; nothing was deleted")
        return answer({"id": key, "deleted": True})

    @guarded
    async def stats(request: Request) -> Response:
        authorize(request, "read")
        with service.admitted(1):
            return answer(await service.stats())

    @guarded
    async def health(request: Request) -> Response:
        ok = service.healthy
        return answer({"status": "ok" if ok else "unavailable"}, 200 if ok else 503)

    @guarded
    async def show_metrics(request: Request) -> Response:
        authorize(request, "read")
        text = metrics.render(
            {
                "neardup_store_documents": service.stored,
                "neardup_queue_documents": service.inflight,
                "neardup_queue_limit_documents": limits.queue_documents,
            }
        )
        return Response(text, media_type=CONTENT_TYPE)

    @guarded
    async def show_openapi(request: Request) -> Response:
        return Response(schema, media_type="application/json")

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        code = {404: "not_found", 405: "method_not_allowed"}.get(status, "http_error")
        what = {
            404: f"no endpoint {request.url.path[:200]!r}; see /openapi.json",
            405: f"{request.method} is not allowed on {request.url.path[:200]!r}; see "
            "/openapi.json",
        }.get(status, "the request cannot be answered")
        headers = dict(exc.headers or {}) if isinstance(exc, HTTPException) else {}
        response = error(status, code, what)
        response.headers.update(headers)
        return response

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if not service.started:
            await asyncio.to_thread(service.start)
        # what start-up made (modules, the server, the store's state) lives as long as the
        # service: frozen out of the collector's way, a full collection walks only what came
        # after (a full walk of it stopped the requests for 30-45 ms here)
        gc.collect()
        gc.freeze()
        if service.tracer is not None:
            service.tracer.start()
        if on_ready is not None:
            on_ready()
        try:
            yield
        finally:
            await asyncio.to_thread(service.close, graceful_timeout)
            if service.tracer is not None:
                service.tracer.close()

    routes = [
        Route("/v1/check", check, methods=["POST"]),
        Route("/v1/query", query, methods=["POST"]),
        Route("/v1/documents/{id:path}", document, methods=["GET", "DELETE"]),
        Route("/v1/stats", stats, methods=["GET"]),
        Route("/healthz", health, methods=["GET"]),
        Route("/metrics", show_metrics, methods=["GET"]),
        Route("/openapi.json", show_openapi, methods=["GET"]),
    ]
    app = Starlette(
        routes=routes, exception_handlers={HTTPException: http_error}, lifespan=lifespan
    )
    return _Observed(app, metrics, service.tracer)


class _Observed:
    """ASGI middleware: counts every HTTP request by endpoint, method and status, with its
    latency (cheaper than Starlette's BaseHTTPMiddleware: no extra task per request), and
    its timeline when tracing."""

    def __init__(self, app: ASGIApp, metrics: Metrics, tracer: Tracer | None = None) -> None:
        self.app = app
        self.metrics = metrics
        self.tracer = tracer

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500
        rec = None if self.tracer is None else self.tracer.request(scope["headers"], scope["path"])
        token = current.set(rec)

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)
            if rec is not None and message["type"] == "http.response.body":
                rec["sent"] = time.perf_counter()

        try:
            await self.app(scope, receive, sending)
        finally:
            current.reset(token)
            method = scope["method"] if scope["method"] in _METHODS else "other"  # bounded labels
            self.metrics.request(
                endpoint_of(scope["path"]), method, status, time.perf_counter() - start
            )
