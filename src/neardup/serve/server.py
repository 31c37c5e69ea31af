"""Running the service: a uvicorn server on a socket bound here, drained on SIGTERM or SIGINT.

uvicorn stops accepting on the first SIGTERM/SIGINT, waits for the requests in flight (up to
``graceful_timeout``), then runs the application's shutdown, which lets the writer commit what
is queued and closes the store. Unlike uvicorn's own runner, :func:`run` does not re-raise the
signal afterwards: a drained service returns normally, so ``neardup serve`` exits 0 on SIGTERM.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

from neardup import __version__
from neardup._extras import require_extra
from neardup.errors import ConfigError
from neardup.methods import Method
from neardup.serve.app import create_app
from neardup.serve.config import ServeConfig
from neardup.serve.service import Service
from neardup.serve.trace import tracer_from_env

__all__ = ["bind", "run"]

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: a free one).

    Raises:
        ConfigError: the address cannot be bound (in use, not local, no permission).
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host!r}: {exc}; give another --host") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; give another --port "
            "(0 picks a free one)"
        ) from None
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    """The ``http://host:port`` a bound socket serves."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def run(
    config: ServeConfig,
    method: Method,
    *,
    on_ready: Callable[[str], None] | None = None,
) -> int:
    """Serve the store of ``config.index`` until SIGTERM or SIGINT, then drain and return.

    Args:
        config: Where to listen, keys, limits, writer batching.
        method: The store's method (rebuilt from the store by the caller).
        on_ready: Called with the service's URL once it takes requests.

    Returns:
        The signal that stopped the service (0 when it stopped otherwise).

    Raises:
        MissingExtraError: uvicorn or Starlette is not installed.
        ConfigError: the address cannot be bound.
        StoreError: the store cannot be opened for writing.
    """
    require_extra("serve", "uvicorn")
    import uvicorn

    sock = bind(config.host, config.port)
    url = url_of(sock)
    service = Service(
        config.index,
        method,
        readers=config.readers,
        limits=config.limits,
        commit_delay=config.commit_delay,
        max_group=config.max_group,
        synchronous=config.synchronous,
        tracer=tracer_from_env(),  # NEARDUP_SERVE_TRACE: a debug aid
    )
    app = create_app(
        service,
        keys=config.keys,
        version=__version__,
        on_ready=None if on_ready is None else (lambda: on_ready(url)),
        graceful_timeout=config.graceful_timeout,
    )
    server = _server_class()(
        uvicorn.Config(
            app,
            lifespan="on",
            log_config=None,
            access_log=config.access_log,
            server_header=False,
            timeout_graceful_shutdown=int(max(1, config.graceful_timeout)),
            timeout_keep_alive=30,
            http=_protocol_class(),
        )
    )
    service.start()  # here, so that a store that cannot be opened is a one-line error
    try:
        server.run(sockets=[sock])
    finally:
        service.close(config.graceful_timeout)  # done by the shutdown, unless startup failed
        sock.close()
    stopped: int = server.stopped_by
    return stopped


class _OneWrite:
    """A transport that sends what one step of the event loop wrote as one ``send``: uvicorn
    writes a response's status line and headers, then its body, each at once, which cost two
    system calls (and two wake-ups of the client) per answer. Everything else is the
    transport's own."""

    def __init__(self, transport: Any, loop: Any) -> None:
        self._transport = transport
        self._loop = loop
        self._parts: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._parts:
            self._loop.call_soon(self._flush)
        self._parts.append(bytes(data))

    def _flush(self) -> None:
        parts, self._parts = self._parts, []
        if parts and not self._transport.is_closing():
            self._transport.write(b"".join(parts))

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def _protocol_class() -> Any:
    """uvicorn's HTTP protocol (httptools when installed, else h11) on a :class:`_OneWrite`
    transport."""
    import asyncio

    base: Any
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        base = HttpToolsProtocol
    except ImportError:  # httptools is optional for uvicorn
        from uvicorn.protocols.http.h11_impl import H11Protocol

        base = H11Protocol

    class Protocol(base):  # type: ignore[misc]
        def connection_made(self, transport: Any) -> None:
            super().connection_made(_OneWrite(transport, asyncio.get_running_loop()))

    return Protocol


def _server_class() -> Any:
    """uvicorn's Server that drains on SIGTERM/SIGINT without re-raising the signal after."""
    import uvicorn

    class Server(uvicorn.Server):
        stopped_by = 0

        def handle_exit(self, sig: int, frame: Any) -> None:
            self.stopped_by = self.stopped_by or sig
            super().handle_exit(sig, frame)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            before = {sig: signal.signal(sig, self.handle_exit) for sig in _SIGNALS}
            try:
                yield
            finally:
                for sig, handler in before.items():
                    signal.signal(sig, handler)

    return Server
