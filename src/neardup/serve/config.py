"""The parameters of ``neardup serve``: where it listens, its limits and its writer's batching."""

from __future__ import annotations

import functools
import ipaddress
import os
from dataclasses import dataclass, field

from neardup.errors import ConfigError
from neardup.serve.auth import ApiKeys

__all__ = ["Limits", "ServeConfig", "is_loopback"]


@dataclass(frozen=True, slots=True)
class Limits:
    """What one request may carry and how much work the service holds at once.

    Attributes:
        max_body_bytes: Largest request body (413 above).
        max_documents: Most documents in one request (413 above).
        max_document_bytes: Largest document: UTF-8 bytes of a text, decoded bytes of an
            image (413 above).
        max_id_chars: Longest document id (400 above).
        queue_documents: Documents admitted and not yet answered, across all requests; a
            request that would pass it is answered 503 with ``Retry-After`` (the bounded
            queue), never held.
        queue_bytes: Bytes of request bodies admitted and not yet answered; past it, 503
            with ``Retry-After`` too (documents are bounded in number and in size).
        max_duplicates: Most duplicates listed per document (the most similar first).
        retry_after: Seconds a 503 asks the client to wait.

    Examples:
        >>> Limits(max_documents=2000, queue_documents=1024)
        Traceback (most recent call last):
        ...
        neardup.errors.ConfigError: max_documents (2000) must not exceed queue_documents (1024); ...
    """

    max_body_bytes: int = 16 * 1024 * 1024
    max_documents: int = 1024
    max_document_bytes: int = 1024 * 1024
    max_id_chars: int = 1024
    queue_documents: int = 8192
    queue_bytes: int = 256 * 1024 * 1024
    max_duplicates: int = 100
    retry_after: int = 1

    def __post_init__(self) -> None:
        for name in (
            "max_body_bytes",
            "max_documents",
            "max_document_bytes",
            "max_id_chars",
            "queue_documents",
            "queue_bytes",
            "max_duplicates",
            "retry_after",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        if self.max_documents > self.queue_documents:
            raise ConfigError(
                f"max_documents ({self.max_documents}) must not exceed queue_documents "
                f"({self.queue_documents}); a request that large could never be admitted"
            )
        if self.max_body_bytes > self.queue_bytes:
            raise ConfigError(
                f"max_body_bytes ({self.max_body_bytes}) must not exceed queue_bytes "
                f"({self.queue_bytes}); a body that large could never be admitted"
            )


@dataclass(frozen=True, slots=True)
class ServeConfig:
    """How the service runs.

    Attributes:
        index: The store file (an existing one, or one made by the caller beforehand).
        host: Address to listen on; without ``keys`` it must be a loopback address.
        port: TCP port (0: any free port, printed when the service is ready).
        keys: The API keys (None: no authentication, loopback only).
        readers: Threads that sketch documents and answer reads (each has its own
            read-only connection to the store).
        limits: Request and queue limits.
        commit_delay: Seconds the writer waits, after the first waiting document, for more
            to join its group commit (0: it takes what is waiting, as soon as it is free).
        max_group: Most documents in one group commit.
        synchronous: ``"normal"``: an acknowledged document is committed and survives a
            crash of the process (SIGKILL, OOM kill); a commit costs no fsync. ``"full"``:
            each group commit is also fsynced before its answers go, so acknowledged
            documents survive a power loss too (one fsync, ~7 ms on a VM disk, a group).
        access_log: Log a line per request (uvicorn's access log; keys are never in it).
        graceful_timeout: Seconds that SIGTERM waits for requests in flight.

    Raises:
        ConfigError: a value is out of range, or a non-loopback ``host`` without ``keys``.
    """

    index: str
    host: str = "127.0.0.1"
    port: int = 8080
    keys: ApiKeys | None = None
    readers: int = field(default_factory=lambda: max(1, min(8, os.cpu_count() or 1)))
    limits: Limits = field(default_factory=Limits)
    commit_delay: float = 0.0
    max_group: int = 4096
    synchronous: str = "normal"
    access_log: bool = False
    graceful_timeout: float = 30.0

    def __post_init__(self) -> None:
        if not isinstance(self.port, int) or not 0 <= self.port <= 65535:
            raise ConfigError(f"port must be between 0 and 65535, got {self.port!r}")
        if not isinstance(self.readers, int) or not 1 <= self.readers <= 256:
            raise ConfigError(f"readers must be between 1 and 256, got {self.readers!r}")
        if not 0 <= self.commit_delay <= 10:
            raise ConfigError(f"commit_delay must be 0 to 10 seconds, got {self.commit_delay!r}")
        if not isinstance(self.max_group, int) or self.max_group < 1:
            raise ConfigError(f"max_group must be a positive integer, got {self.max_group!r}")
        if self.synchronous not in ("normal", "full"):
            raise ConfigError(f"synchronous must be 'normal' or 'full', got {self.synchronous!r}")
        if not self.graceful_timeout > 0:
            raise ConfigError(f"graceful_timeout must be positive, got {self.graceful_timeout!r}")
        if self.keys is None and not is_loopback(self.host):
            raise ConfigError(
                f"without API keys the service listens on loopback only (127.0.0.1, ::1 or "
                f"localhost), not {self.host!r}; give --api-key-file FILE to serve on other "
                "addresses (see docs/serve.md), and put TLS in front with a reverse proxy"
            )


def is_loopback(host: str) -> bool:
    """Whether ``host`` names a loopback address (``localhost``, 127.0.0.0/8, ``::1``).

    Examples:
        >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("0.0.0.0")
        (True, True, False)
    """
    return _loopback(host.strip().strip("[]").lower())


@functools.lru_cache(maxsize=64)
def _loopback(name: str) -> bool:
    """:func:`is_loopback` of a normalized name (held: every request's Host header asks)."""
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
