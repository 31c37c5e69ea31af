"""Servers for the tests of neardup serve: a real uvicorn on 127.0.0.1, in a thread of the test
process (most tests) or as a ``neardup serve`` subprocess (signals, the command line).
Importing it skips the importing module when the serve extra is not installed."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

from neardup.methods import Method, make_method  # noqa: E402
from neardup.serve.app import create_app  # noqa: E402
from neardup.serve.auth import ApiKeys  # noqa: E402
from neardup.serve.config import Limits  # noqa: E402
from neardup.serve.server import bind, url_of  # noqa: E402
from neardup.serve.service import Service  # noqa: E402
from neardup.store.persistent import PersistentIndex  # noqa: E402

SRC = Path(__file__).resolve().parents[2] / "src"
WAIT = 60.0  # seconds any wait in these tests may last at most (a loaded machine is slow)

READ_KEY = "read-key-0123456789abcdef"
WRITE_KEY = "write-key-0123456789abcdef"

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
    "yankee",
    "zulu",
]


def text(seed: int, n: int = 60) -> str:
    """A deterministic text of ``n`` words (different seeds share few 5-shingles)."""
    import random

    rng = random.Random(seed)
    return " ".join(f"{rng.choice(WORDS)}{rng.randrange(50)}" for _ in range(n))


def near(base: str, changes: int, seed: int) -> str:
    """``base`` with ``changes`` words replaced (a near-duplicate when changes are few)."""
    import random

    rng = random.Random(seed)
    words = base.split()
    for _ in range(changes):
        words[rng.randrange(len(words))] = f"zz{rng.randrange(10**6)}"
    return " ".join(words)


@dataclass
class Running:
    """A service running on loopback."""

    url: str
    service: Service
    path: Path
    server: Any = None
    thread: threading.Thread | None = None
    clients: list[Any] = field(default_factory=list)

    def http(self, key: str | None = None) -> Any:
        headers = {} if key is None else {"Authorization": f"Bearer {key}"}
        client = httpx.Client(base_url=self.url, headers=headers, timeout=WAIT)
        self.clients.append(client)
        return client

    def stop(self) -> None:
        for c in self.clients:
            c.close()
        if self.server is not None and self.thread is not None:
            self.server.should_exit = True
            self.thread.join(WAIT)
            assert not self.thread.is_alive(), "the server did not stop"


def start_thread_server(
    path: Path,
    method: Method | None = None,
    *,
    keys: ApiKeys | None = None,
    limits: Limits | None = None,
    commit_delay: float = 0.0,
    readers: int = 2,
) -> Running:
    """uvicorn in a thread of this process, over a store at ``path`` (made if missing)."""
    import uvicorn

    m = method or make_method("minhash", 0.8)
    if not path.exists():
        PersistentIndex(path, m).close()
    service = Service(
        str(path), m, readers=readers, limits=limits or Limits(), commit_delay=commit_delay
    )
    app = create_app(service, keys=keys, version="test")
    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_config=None, access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    return Running(url_of(sock), service, path, server, thread)


@dataclass
class Process:
    """``neardup serve`` in a subprocess."""

    proc: subprocess.Popen[str]
    url: str
    err: list[str]
    reader: threading.Thread

    def wait(self) -> int:
        """Wait for the process to end; its exit status."""
        code = self.proc.wait(WAIT)
        self.reader.join(WAIT)
        assert self.proc.stderr is not None
        self.proc.stderr.close()
        return code

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.wait()


def start_process(args: list[str], env: dict[str, str] | None = None) -> Process:
    """Start ``python -m neardup serve ARGS --port 0`` and wait for its address on stderr."""
    full_env = {**os.environ, "PYTHONPATH": str(SRC), **(env or {})}
    proc = subprocess.Popen(
        [sys.executable, "-m", "neardup", "serve", "--port", "0", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=full_env,
        # the child restores the default SIGINT/SIGTERM handling whatever this worker has
        start_new_session=True,
    )
    assert proc.stderr is not None
    lines: list[str] = []
    found: list[str] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            m = re.search(r"listening on (http://\S+)", line)
            if m and not found:
                found.append(m.group(1))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + WAIT
    while not found:
        if proc.poll() is not None or time.monotonic() > deadline:
            Process(proc, "", lines, reader).stop(signal.SIGKILL)
            raise AssertionError("neardup serve did not start:\n" + "".join(lines))
        time.sleep(0.05)
    return Process(proc, found[0], lines, reader)
