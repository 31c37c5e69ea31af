"""The retrying JSON-over-HTTP client shared by the cloud embedding providers.

Policy (the txtfp retry policy, with its jitter documented correctly): statuses 408, 425, 429,
500, 502, 503 and 504 and transport errors (connection failures, timeouts) are retried; any
other status fails at once. Backoff starts at ``initial_backoff`` seconds and is multiplied by
``multiplier`` per retry up to ``max_backoff``; each sleep is jittered by ``±jitter`` (a
fraction) from a :class:`random.Random` held by the client. A ``Retry-After`` header of
integer seconds lengthens the backoff (capped at ``max_retry_after``), never shortens it.
Every sleep and every request timeout is clamped to what is left of ``deadline``; when
nothing is left,
:class:`neardup.errors.TimeoutError` is raised.

The API key is sent only in the ``Authorization`` header. It never appears in ``repr``, log
records or exception messages: any text echoed from a server is scrubbed of it.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

from neardup._extras import require_extra
from neardup.errors import ConfigError, ProviderError, TimeoutError

if TYPE_CHECKING:  # pragma: no cover
    import httpx

__all__ = ["RETRY_STATUSES", "RetryPolicy", "RetryingClient"]

logger = logging.getLogger(__name__)

#: HTTP statuses that are retried; every other non-2xx status fails at once.
RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})

#: Budget below which no further attempt is made (seconds): the deadline counts as passed.
_MIN_ATTEMPT = 0.001


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retry, backoff and deadline settings of a cloud provider.

    Args:
        initial_backoff: First backoff sleep in seconds (default 0.5).
        multiplier: Factor applied to the backoff after each retry (default 2).
        max_backoff: Cap on one backoff sleep before jitter, seconds (default 30).
        jitter: Each backoff sleep is multiplied by a uniform factor in
            ``[1 - jitter, 1 + jitter]`` (default 0.3, i.e. ±30%).
        max_retry_after: Cap on a server's ``Retry-After`` seconds (default 60).
        deadline: Total wall-clock budget of one batch request, retries and sleeps included
            (default 90 s).
        timeout: Timeout of one HTTP attempt, seconds (default 30); clamped to the budget left.
        max_response_bytes: Cap on one response body after decompression (default 256 MiB);
            a larger one (or a compression bomb) fails with ProviderError, not retried.

    Raises:
        ConfigError: A value is out of range.

    Examples:
        >>> RetryPolicy().backoff(0), RetryPolicy().backoff(3), RetryPolicy().backoff(20)
        (0.5, 4.0, 30.0)
    """

    initial_backoff: float = 0.5
    multiplier: float = 2.0
    max_backoff: float = 30.0
    jitter: float = 0.3
    max_retry_after: float = 60.0
    deadline: float = 90.0
    timeout: float = 30.0
    max_response_bytes: int = 256 * 1024 * 1024

    def __post_init__(self) -> None:
        positive = {
            "initial_backoff": self.initial_backoff,
            "max_backoff": self.max_backoff,
            "deadline": self.deadline,
            "timeout": self.timeout,
        }
        for name, value in positive.items():
            if not value > 0:
                raise ConfigError(f"RetryPolicy.{name} must be > 0 seconds, got {value!r}")
        if not self.multiplier >= 1:
            raise ConfigError(f"RetryPolicy.multiplier must be >= 1, got {self.multiplier!r}")
        if not 0 <= self.jitter < 1:
            raise ConfigError(f"RetryPolicy.jitter must be in [0, 1), got {self.jitter!r}")
        if isinstance(self.max_response_bytes, bool) or not (
            isinstance(self.max_response_bytes, int) and self.max_response_bytes >= 1
        ):
            raise ConfigError(
                "RetryPolicy.max_response_bytes must be a positive integer, got "
                f"{self.max_response_bytes!r}"
            )
        if not self.max_retry_after >= 0:
            raise ConfigError(
                f"RetryPolicy.max_retry_after must be >= 0, got {self.max_retry_after!r}"
            )

    def backoff(self, retry: int) -> float:
        """The un-jittered backoff before retry number ``retry`` (0-based), in seconds."""
        return float(
            min(self.max_backoff, self.initial_backoff * self.multiplier ** min(retry, 64))
        )


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header of integer seconds, else ``None``.

    HTTP-date values are not used (the backoff applies instead).

    Examples:
        >>> parse_retry_after("7"), parse_retry_after(" 0 "), parse_retry_after("Wed, 21 Oct")
        (7.0, 0.0, None)
    """
    if value is None:
        return None
    text = value.strip()
    if not text.isdigit():
        return None
    return float(int(text))


def _httpx() -> ModuleType:
    return require_extra("embeddings", "httpx")


class RetryingClient:
    """POST JSON to one service with the retry policy; owns one ``httpx.Client``.

    Args:
        service: Human name used in logs and errors (``"OpenAI"``).
        base_url: Service root, e.g. ``https://api.openai.com/v1``.
        api_key: Sent as ``Authorization: Bearer <key>``; never logged or shown.
        key_hint: How the user supplies the key (named in 401/403 errors).
        policy: The :class:`RetryPolicy`.
        seed: Seed of the jitter generator (``None``: from the OS).
        sleep: Function that sleeps (tests pass a recorder).
        clock: Monotonic clock in seconds.
        transport: An ``httpx.BaseTransport`` for tests; ``None`` uses the network stack.
    """

    def __init__(
        self,
        service: str,
        base_url: str,
        api_key: str,
        *,
        key_hint: str,
        policy: RetryPolicy,
        seed: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        transport: object | None = None,
    ) -> None:
        if not (base_url.startswith("http://") or base_url.startswith("https://")):
            raise ConfigError(
                f"base_url must start with http:// or https://, got {base_url!r}; pass the "
                f"root of a {service}-compatible API such as https://host/v1"
            )
        self.service = service
        self.base_url = base_url.rstrip("/")
        # A key read from a file or a shell often ends in a newline: drop surrounding
        # whitespace; any other control character or space could only break the header (and
        # httpx would quote the header, key included, in its error), so refuse it here.
        api_key = api_key.strip()
        if any(c.isspace() or not c.isprintable() for c in api_key):
            raise ConfigError(
                f"the {service} API key holds a space or control character (not shown); "
                f"check how it was read ({key_hint})"
            )
        if not api_key.isascii():  # an HTTP header is ASCII: httpx would fail to encode it
            raise ConfigError(
                f"the {service} API key holds a character that is not ASCII (not shown); keys "
                f"are ASCII: check how it was read or copied ({key_hint})"
            )
        self._api_key = api_key
        self._key_hint = key_hint
        self.policy = policy
        self._rng = random.Random(seed)
        self._sleep = sleep
        self._clock = clock
        self._transport = transport
        self._client: httpx.Client | None = None

    def __repr__(self) -> str:
        return (
            f"RetryingClient(service={self.service!r}, base_url={self.base_url!r}, api_key='***')"
        )

    def scrub(self, text: str) -> str:
        """Return ``text`` with the API key (as is, or as Python would quote it) replaced by
        ``***``."""
        if not self._api_key:
            return text
        for form in (self._api_key, repr(self._api_key)[1:-1], repr(self._api_key.encode())[2:-1]):
            text = text.replace(form, "***")
        return text

    def _read_body(self, response: httpx.Response, limit: int) -> bytes:
        """The body, decompressed, refused past ``limit`` bytes (compression bombs)."""
        httpx = _httpx()
        size = 0
        chunks: list[bytes] = []
        try:
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > limit:
                    raise ProviderError(
                        f"{self.service} sent a response of more than {limit} bytes (after "
                        "decompression), over RetryPolicy(max_response_bytes=...); lower "
                        "batch_size, or raise the cap if the service is trusted"
                    )
                chunks.append(chunk)
        except httpx.DecodingError:
            raise ProviderError(
                f"{self.service} sent a body that cannot be decompressed (bad "
                f"{response.headers.get('content-encoding', 'encoding')!s} data); check "
                f"base_url {self.base_url!r} and any proxy in between"
            ) from None
        return b"".join(chunks)

    def close(self) -> None:
        """Close the underlying connection pool (the client reopens on the next request)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def _http(self) -> httpx.Client:
        if self._client is None:
            httpx = _httpx()
            self._client = httpx.Client(transport=self._transport, follow_redirects=False)
        return self._client

    def _delay(self, retry: int, retry_after: float | None) -> float:
        jitter = self._rng.uniform(-self.policy.jitter, self.policy.jitter)
        own = self.policy.backoff(retry) * (1.0 + jitter)
        if retry_after is not None:
            # the server may ask for a longer wait, never a shorter one: ``Retry-After: 0``
            # would otherwise send requests as fast as the network answers
            return max(own, min(retry_after, self.policy.max_retry_after))
        return own

    def post_json(self, path: str, body: Mapping[str, object]) -> object:
        """POST ``body`` as JSON to ``base_url + path`` and return the decoded JSON response.

        Raises:
            ProviderError: A non-retryable status (the message says what to check) or a
                response that is not JSON.
            TimeoutError: The deadline passed before a successful response.
        """
        httpx = _httpx()
        url = self.base_url + path
        payload = json.dumps(body).encode("utf-8")
        headers = {
            "Authorization": f"Bearer {self._api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        start = self._clock()
        retry = 0
        last = "no attempt"
        while True:
            remaining = self.policy.deadline - (self._clock() - start)
            if remaining <= _MIN_ATTEMPT:
                raise TimeoutError(
                    f"{self.service} embeddings request did not succeed within the "
                    f"{self.policy.deadline:g} s deadline after {retry} attempt(s) (last: "
                    f"{last}); raise RetryPolicy(deadline=...) or check the service status"
                )
            timeout = min(self.policy.timeout, remaining)
            retry_after: float | None = None
            try:
                with self._http().stream(
                    "POST", url, content=payload, headers=headers, timeout=timeout
                ) as response:
                    status = response.status_code
                    ok = 200 <= status < 300
                    limit = self.policy.max_response_bytes if ok else 64 * 1024
                    data = self._read_body(response, limit) if ok else b""
                    if not ok and status not in RETRY_STATUSES:
                        try:
                            data = self._read_body(response, limit)
                        except ProviderError:
                            data = b"(body too long)"
                    headers_in = response.headers
            except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
                raise ConfigError(
                    f"cannot send to {self.base_url!r} ({type(exc).__name__}); check base_url"
                ) from None
            except httpx.DecodingError:
                raise ProviderError(
                    f"{self.service} sent a body that cannot be decompressed; check base_url "
                    f"{self.base_url!r} and any proxy in between"
                ) from None
            except httpx.LocalProtocolError as exc:
                # Our own request is malformed: sending it again cannot help.
                raise ConfigError(
                    f"cannot send the {self.service} request ({type(exc).__name__}: the "
                    "request headers or URL hold characters HTTP does not allow); check "
                    f"base_url {self.base_url!r} and the API key ({self._key_hint})"
                ) from None
            except httpx.TransportError as exc:
                last = f"{type(exc).__name__}: {self.scrub(str(exc))}"
            else:
                if ok:
                    return self._decode_json(data, status)
                if status not in RETRY_STATUSES:
                    raise ProviderError(
                        self._fatal_message(status, data.decode("utf-8", "replace"))
                    )
                last = f"HTTP {status}"
                retry_after = parse_retry_after(headers_in.get("retry-after"))
            delay = self._delay(retry, retry_after)
            remaining = self.policy.deadline - (self._clock() - start)
            delay = max(0.0, min(delay, remaining))
            logger.warning(
                "%s embeddings: %s; retry %d in %.2f s",
                self.service,
                last,
                retry + 1,
                delay,
            )
            retry += 1
            if delay > 0:
                self._sleep(delay)

    def _decode_json(self, body: bytes, status: int) -> object:
        try:
            return json.loads(body)
        except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested too deep
            raise ProviderError(
                f"{self.service} returned HTTP {status} with a body that is not JSON, or not "
                f"usable JSON (malformed or nested too deep); check that base_url "
                f"{self.base_url!r} points at a {self.service}-compatible embeddings API"
            ) from None

    def _fatal_message(self, status: int, text: str) -> str:
        detail = self.scrub(" ".join(text.split()))[:300]
        if status in (401, 403):
            what = (
                f"check the API key ({self._key_hint}) and that it may use this model"
                if status == 401
                else "check that the API key's account or project may use this model"
            )
        elif status == 404:
            what = f"check base_url ({self.base_url!r}) and the model name"
        elif status in (400, 413, 422):
            what = "check the model name, the input_type and the text lengths"
        else:
            what = "check the request and the service status"
        return (
            f"{self.service} embeddings request failed with HTTP {status} (not retried); "
            f"{what}. Server said: {detail or '(empty body)'}"
        )
