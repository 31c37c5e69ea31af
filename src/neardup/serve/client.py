"""The Python client of ``neardup serve`` (``neardup.Client``): batching and retries over httpx.

Documents go in requests of ``batch_size``, in order. A request that gets no answer (a
connection error, a timeout) or a 429/502/503/504 is sent again, up to ``retries`` times,
after ``Retry-After`` when the service gives one, else an exponential backoff with jitter.
Retrying a check is safe: the service replaces a document by its id and does not count a
document as its own duplicate, so a retried batch gets the same answer. Any other error
raises :class:`~neardup.errors.ServiceError` with the service's message.

``import neardup.serve.client`` does not import httpx; creating a :class:`Client` does.
"""

from __future__ import annotations

import base64
import json
import random
import time
from collections.abc import Iterable, Iterator, Mapping
from itertools import islice
from types import TracebackType
from typing import TYPE_CHECKING, Literal, Self
from urllib.parse import quote

from neardup import __version__
from neardup._extras import require_extra
from neardup.errors import InputError, ServiceError
from neardup.io import Document
from neardup.serve.results import Duplicate, Result

if TYPE_CHECKING:
    import httpx

__all__ = ["Client", "ClientDocument", "Duplicate", "Result"]

ClientDocument = Document | tuple[str | int, str] | Mapping[str, object]
"""A document for the client: a :class:`~neardup.io.Document` (its text, or the bytes of
its file for image indexes), an ``(id, text)`` pair, or a mapping with ``id`` and ``text`` or
``image`` (bytes, or a base64 string)."""

CheckPolicy = Literal["add", "skip-if-duplicate", "query-only"]

_RETRY_STATUS = frozenset({429, 502, 503, 504})


def _payload(doc: ClientDocument, i: int) -> dict[str, object]:
    """The JSON form of one document."""
    if isinstance(doc, Document):
        if doc.text is not None:
            return {"id": doc.id, "text": doc.text}
        return {"id": doc.id, "image": base64.b64encode(doc.read_bytes()).decode("ascii")}
    if isinstance(doc, tuple) and len(doc) == 2:
        return {"id": doc[0], "text": doc[1]}
    if isinstance(doc, Mapping):
        out: dict[str, object] = {"id": doc.get("id")}
        if "image" in doc:
            image = doc["image"]
            out["image"] = (
                base64.b64encode(image).decode("ascii")
                if isinstance(image, bytes | bytearray | memoryview)
                else image
            )
        else:
            out["text"] = doc.get("text")
        return out
    raise InputError(
        f"document {i} is a {type(doc).__name__}; give a Document, an (id, text) pair or a "
        "mapping with 'id' and 'text' (or 'image')"
    )


def _segment(key: str) -> str:
    """A document id as one percent-encoded path segment (``.`` and ``..`` too)."""
    seg = quote(key, safe="")
    return seg.replace(".", "%2E") if set(key) <= {"."} else seg


class Client:
    """A client of a ``neardup serve`` service.

    Args:
        url: The service's base URL, e.g. ``http://127.0.0.1:8080``.
        api_key: A key of the service's key file (None: a service without keys).
        timeout: Seconds for each HTTP request.
        retries: Times a request is sent again after no answer or a 429/502/503/504.
        batch_size: Documents per request (at most the service's ``--max-documents``).
        backoff: First wait between retries, in seconds (doubled each time, with jitter).
        max_backoff: Longest wait between retries.
        transport: An httpx transport (tests, proxies); None: httpx's default.

    Raises:
        MissingExtraError: httpx is not installed (``pip install 'neardup[serve]'``).

    Examples:
        >>> with Client("http://127.0.0.1:8080") as client:  # doctest: +SKIP
        ...     client.check([("a", "the quick brown fox"), ("b", "the quick brown fox!")])
        [Result(id='a', added=True, duplicates=()), Result(id='b', added=True, ...)]
    """

    def __init__(
        self,
        url: str,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        retries: int = 5,
        batch_size: int = 256,
        backoff: float = 0.2,
        max_backoff: float = 10.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if batch_size < 1:
            raise InputError(f"batch_size must be at least 1, got {batch_size}")
        if retries < 0:
            raise InputError(f"retries must be 0 or more, got {retries}")
        mod = require_extra("serve", "httpx")
        headers = {"User-Agent": f"neardup/{__version__}"}
        if api_key is not None:
            headers["Authorization"] = f"Bearer {api_key}"
        self.url = url.rstrip("/")
        self.batch_size = batch_size
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._random = random.Random()  # jitter only: no result depends on it
        self._http: httpx.Client = mod.Client(
            base_url=self.url, headers=headers, timeout=timeout, transport=transport
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def __repr__(self) -> str:
        return f"Client({self.url!r})"  # never the key

    # -------------------------------------------------------------------------- endpoints

    def check(self, docs: Iterable[ClientDocument], *, policy: CheckPolicy = "add") -> list[Result]:
        """Check documents for near-duplicates among those stored, and add them as ``policy``
        says (``add``: always; ``skip-if-duplicate``: only those without a duplicate;
        ``query-only``: none). Documents are checked in order, each against the store as
        the ones before it left it.

        Returns:
            One :class:`Result` per document, in order.

        Raises:
            ServiceError: the service refused a batch (the message says why) or could not
                be reached after the retries; the batches before it were answered.
        """
        return list(self._results("/v1/check", docs, {"policy": policy}))

    def add(self, docs: Iterable[ClientDocument]) -> int:
        """Add documents (a stored id is replaced); return how many were added."""
        return sum(r.added for r in self._results("/v1/check", docs, {"policy": "add"}))

    def query(self, docs: Iterable[ClientDocument]) -> list[Result]:
        """The stored near-duplicates of each document (a stored document with the same id
        included); nothing is added."""
        return list(self._results("/v1/query", docs, {}))

    def get(self, doc_id: str) -> bytes | None:
        """A stored document's sketch bytes (None when it is not stored)."""
        r = self._send("GET", f"/v1/documents/{_segment(doc_id)}")
        if r.status_code == 404:
            return None
        data = self._json(r)
        if not isinstance(data, dict) or not isinstance(data.get("sketch"), str):
            raise ServiceError("the service's answer has no sketch; is it a neardup serve?")
        return base64.b64decode(data["sketch"])

    def delete(self, ids: str | Iterable[str]) -> int:
        """Remove documents by id; return how many were stored."""
        keys = [ids] if isinstance(ids, str) else list(ids)
        removed = 0
        for key in keys:
            r = self._send("DELETE", f"/v1/documents/{_segment(key)}")
            if r.status_code != 404:
                self._json(r)
                removed += 1
        return removed

    def stats(self) -> dict[str, object]:
        """The service's statistics: documents, method, threshold, parameters, store and
        service counters."""
        data = self._json(self._send("GET", "/v1/stats"))
        if not isinstance(data, dict):
            raise ServiceError("the service's statistics are not a JSON object")
        return data

    def health(self) -> bool:
        """Whether the service answers ``/healthz`` with 200 (no retries)."""
        mod = require_extra("serve", "httpx")
        try:
            return self._http.get("/healthz").status_code == 200
        except mod.HTTPError:
            return False

    # ----------------------------------------------------------------------------- helpers

    def _results(
        self, path: str, docs: Iterable[ClientDocument], extra: dict[str, object]
    ) -> Iterator[Result]:
        stream = iter(docs)
        at = 0
        while batch := list(islice(stream, self.batch_size)):
            body = {"documents": [_payload(d, at + i) for i, d in enumerate(batch)], **extra}
            data = self._json(self._send("POST", path, body))
            found = data.get("results") if isinstance(data, dict) else None
            if not isinstance(found, list) or len(found) != len(batch):
                raise ServiceError(
                    f"the service answered {path} without one result per document; is it a "
                    "neardup serve?"
                )
            for item in found:
                yield Result.from_dict(item)
            at += len(batch)

    def _send(self, method: str, path: str, body: object = None) -> httpx.Response:
        """One request, retried after no answer or a 429/502/503/504."""
        mod = require_extra("serve", "httpx")
        content = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json"} if content is not None else None
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                r = self._http.request(method, path, content=content, headers=headers)
            except mod.TransportError as exc:
                if last:
                    raise ServiceError(
                        f"{method} {self.url}{path}: no answer after {self.retries + 1} tries "
                        f"({type(exc).__name__}: {exc}); check that the service runs"
                    ) from None
                self._wait(attempt, None)
                continue
            if r.status_code in _RETRY_STATUS and not last:
                self._wait(attempt, r.headers.get("retry-after"))
                continue
            return r
        raise AssertionError("unreachable")  # pragma: no cover

    def _wait(self, attempt: int, retry_after: str | None) -> None:
        delay = min(self.max_backoff, self.backoff * 2**attempt)
        delay *= 0.5 + self._random.random()  # jitter: retries of many clients spread out
        if retry_after is not None and retry_after.strip().isdigit():
            delay = max(delay, min(self.max_backoff, float(retry_after)))
        time.sleep(delay)

    def _json(self, r: httpx.Response) -> object:
        """The answer's JSON, or ServiceError with the service's message."""
        try:
            data = r.json()
        except ValueError:
            data = None
        if r.status_code >= 400:
            err = data.get("error") if isinstance(data, dict) else None
            code = str(err.get("code", "")) if isinstance(err, dict) else ""
            message = str(err.get("message", "")) if isinstance(err, dict) else r.text[:200]
            raise ServiceError(
                f"{r.request.method} {r.request.url.path}: {r.status_code} {code}: {message}",
                status=r.status_code,
                code=code,
            )
        if data is None:
            raise ServiceError(
                f"{r.request.method} {r.request.url.path}: the answer is not JSON; is "
                f"{self.url} a neardup serve?"
            )
        return data
